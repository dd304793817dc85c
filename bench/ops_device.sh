#!/bin/bash
# One device run of the user's path (bench/ops.py): every tuning candidate
# of qmatmul_m8.tl checked against float64, then the 70B layer and every
# weight type through tl.ops with the defaults and after tune_matmul, with
# cuBLAS f16, tinygemm int4 and Marlin in the same run.
#   bash bench/ops_device.sh CARRY_DIR [bench/ops.py flags]   (logs under $OUT)
# CARRY_DIR holds libtl.so.gz (a static build: docs/testing.md) and
# marlin/ (../shared/peers/marlin).
set -u
carry=$1; shift
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/tlbin
gunzip -c "$carry/libtl.so.gz" > /tmp/tlbin/libtl.so
export TL_LIBRARY=/tmp/tlbin/libtl.so TL_KERNELS=$PWD/kernels PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$out/device.txt"
marlin=""
if [ -d "$carry/marlin" ]; then
  mkdir -p /tmp/marlin && cp "$carry"/marlin/* /tmp/marlin/
  (cd /tmp/marlin && python3 -c "
from torch.utils.cpp_extension import load
load(name='marlin_cuda', sources=['marlin_cuda.cpp', 'marlin_cuda_kernel.cu'],
     extra_cuda_cflags=['-O3', '-gencode=arch=compute_90,code=sm_90'], build_directory='/tmp/marlin')" \
     > "$out/marlin_build.txt" 2>&1 && echo "marlin built") &
  marlin_pid=$!
fi
python3 bench/ops.py --check 2>&1 | tee "$out/check.txt" | grep -E "FAIL|checks:"
if [ -n "${marlin_pid:-}" ]; then wait $marlin_pid; ls /tmp/marlin/marlin_cuda*.so >/dev/null 2>&1 && marlin="--marlin /tmp/marlin"; fi
python3 bench/ops.py $marlin "$@" 2>&1 | tee "$out/ops.txt"
python3 bench/ops.py --no-layer --tune-types --types u1,u2,i4,u8,f4e2m1,f8e4m3 --m 1 2>&1 | tee "$out/ops_tuned_types.txt"
