#!/bin/sh
# Set up, build and run TL's main job: the low-bit matmul of the Tilus
# paper (f16 activations x int6 weights, kernels/matmul_f16_i6.tl) at several
# shapes, checked against a NumPy reference on the CPU virtual machine. On
# a machine with a CUDA GPU the kernel is also lowered, compiled to PTX, run
# on the GPU against the VM and timed (tl-run).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== the kernel, compiled: tl-opt | lower-tl-to-simt | tl-llc -mcpu=sm_90a"
"$build/bin/tl-opt" "$root/kernels/matmul_f16_i6.tl" \
  --pass-pipeline=lower-tl-to-simt,canonicalize,cse -o "$tmp/k.tl"
"$build/bin/tl-llc" -mcpu=sm_90a --time "$tmp/k.tl" -o "$tmp/k.ptx"
echo "   $(grep -c 'mma.sync' "$tmp/k.ptx") mma.sync in the PTX ($(wc -l < "$tmp/k.ptx") lines)"

for m in 16 64 128; do
  python3 "$root/scripts/matmul_i6.py" gen "$tmp/mm" "$m" "$m"
  start=$(date +%s%N)
  "$build/bin/tl-run" --vm "$root/kernels/matmul_f16_i6.tl" \
    --arg a="$tmp/mm.a.npy" --arg b="$tmp/mm.b.npy" \
    --arg c=zeros:f16:"${m}x1024" --arg m="$m" --save c="$tmp/mm.c.npy"
  end=$(date +%s%N)
  python3 "$root/scripts/matmul_i6.py" check "$tmp/mm" "$m"
  echo "== VM: f16[$m,1024] x i6[1024,1024] -> f16[$m,1024]: matches the reference" \
       "bit for bit, $(( (end - start) / 1000000 )) ms"
done

if [ -e /dev/nvidiactl ]; then
  for m in 64 1024 4096; do
    echo "== GPU: f16[$m,1024] x i6[1024,1024], lowered, compiled and run on the device"
    check=""
    [ "$m" -gt 1024 ] && check=--no-vm-check   # the VM takes seconds there
    "$build/bin/tl-run" "$root/kernels/matmul_f16_i6.tl" --seed "$m" \
      --arg a=rand:f16:"${m}x1024" --arg b=rand:u8:64x128x96 \
      --arg c=zeros:f16:"${m}x1024" --arg m="$m" --bench \
      --flops $((2 * m * 1024 * 1024)) $check
  done
else
  echo "== no GPU here: on a CUDA machine the same command also runs the kernel" \
       "on the GPU (tl-run without --vm) and times it"
fi
