#!/bin/sh
# A stand-in for cuobjdump, for tl-run's TL_CUOBJDUMP: run as
#     fake-cuobjdump.sh CANNED.sass -sass FILE
# it prints CANNED.sass when FILE holds the cubin of the stand-in driver
# (test/gpu/fake_cuda.c: the bytes FAKECUBIN), and otherwise fails as
# cuobjdump does on a file that is no cubin.
canned=$1
if [ "$2" != -sass ] || [ "$(cat "$3" 2>/dev/null)" != FAKECUBIN ]; then
  echo "cuobjdump fatal   : the file '$3' is not a cubin" >&2
  exit 1
fi
cat "$canned"
