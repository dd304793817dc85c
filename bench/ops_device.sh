#!/bin/bash
# One device run of the user's path (bench/ops.py), after the GPU tests of
# test/gpu/tl-run.test: every tuning candidate of qmatmul_m8.tl checked
# against float64, the 70B layer and every weight type through tl.ops with
# the defaults and after tune_matmul (cuBLAS f16, tinygemm int4 and Marlin
# in the same run), and tl-run --bench's SASS line for gate_up's instances.
#   bash bench/ops_device.sh CARRY_DIR [bench/ops.py flags]   (logs under $OUT)
# CARRY_DIR holds tl.tar.gz (bin/tl-run, tl-opt, tl-dtype and lib/libtl.so
# of a static build: docs/testing.md) and marlin/ (../shared/peers/marlin).
set -u
carry=$1; shift
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/tl && tar -xzf "$carry/tl.tar.gz" -C /tmp/tl
export TL_LIBRARY=/tmp/tl/lib/libtl.so TL_KERNELS=$PWD/kernels TL_BIN=/tmp/tl/bin PYTHONUNBUFFERED=1
export PATH=/tmp/tl/bin:/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$out/device.txt"
if [ -d "$carry/marlin" ]; then
  mkdir -p /tmp/marlin && cp "$carry"/marlin/* /tmp/marlin/
  (cd /tmp/marlin && python3 -c "
from torch.utils.cpp_extension import load
load(name='marlin_cuda', sources=['marlin_cuda.cpp', 'marlin_cuda_kernel.cu'],
     extra_cuda_cflags=['-O3', '-gencode=arch=compute_90,code=sm_90'], build_directory='/tmp/marlin')" \
     > "$out/marlin_build.txt" 2>&1 && echo "marlin built") &
  marlin_pid=$!
fi
timeout 300 python3 scripts/gpu-lit.py --bin /tmp/tl/bin test/gpu/tl-run.test > "$out/lit.txt" 2>&1
tail -1 "$out/lit.txt"; grep "^FAIL" "$out/lit.txt"
python3 bench/ops.py --check 2>&1 | tee "$out/check.txt" | grep -E "FAIL|checks:"
marlin=""
if [ -n "${marlin_pid:-}" ]; then wait $marlin_pid; ls /tmp/marlin/marlin_cuda*.so >/dev/null 2>&1 && marlin="--marlin /tmp/marlin"; fi
python3 bench/ops.py $marlin "$@" 2>&1 | tee "$out/ops.txt" | grep -E "layer|type"
python3 bench/ops.py --no-layer --tune-types --types u1,u2,u3,f8e4m3 --m 1 2>&1 | tee "$out/ops_tuned_types.txt" | grep type
# The SASS line of gate_up's m = 1 instance of each type (the loop moves W G BN bits / 8 bytes a block).
for wt in u1 u2 u3 i4 u6 u8 f4e2m1 f8e4m3; do
  bits=$(python3 -c "import sys; sys.path.insert(0, 'python'); import tl.ops as o; print(o._bits('$wt'))")
  ch=$((128 * 64 * bits / 4096))
  tl-run kernels/qmatmul_m8.tl --kernel qmatmul_m8 -D K=8192 -D N=57344 -D W=4 -D S=4 -D SA=1 -D WT=$wt --seed 1 \
    --arg a=rand:f16:1x8192 --arg b=rand:u8:896x64x${ch}x32x16 --arg s=rand:f16:64x57344 --arg c=zeros:f16:1x57344 \
    --arg m=1 --arg ws=zeros:f32:4 --arg locks=zeros:u32:1 --no-vm-check --loop-bytes $((4 * 128 * 64 * bits / 8)) 2>&1 | grep -E "bench|resources|sass" | sed "s/^/$wt /"
done 2>&1 | tee "$out/sass.txt"
