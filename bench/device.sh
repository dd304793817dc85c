#!/bin/bash
# One device run: the GPU checks (gpu_test, test/gpu/tl-run.test, both under
# compute-sanitizer memcheck, racecheck on tl-run.test) and the benchmarks
# of docs/performance.md (the quantised matmul's with its peers, bench/qmatmul.py;
# the decode attention's, test/gpu/decode_attn.test and bench/decode_attn.py),
# from a carried source snapshot and binaries.
#   bash bench/device.sh CARRY_DIR      (logs under $OUT)
set -u
carry=$1
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/tl && cd /tmp/tl
tar -xzf "$carry/src.tar.gz" && tar -xzf "$carry/bins.tar.gz"
export PATH=/tmp/tl/bin:/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/device.txt"
echo "== gpu_test" | tee "$out/summary.txt"
./test/unit/gpu_test > "$out/gpu_test.txt" 2>&1; echo "gpu_test exit $?" | tee -a "$out/summary.txt"
tail -2 "$out/gpu_test.txt" | tee -a "$out/summary.txt"
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 ./test/unit/gpu_test > "$out/gpu_test_memcheck.txt" 2>&1
echo "gpu_test memcheck exit $?: $(grep -c 'ERROR SUMMARY: 0 errors' "$out/gpu_test_memcheck.txt") clean summaries" | tee -a "$out/summary.txt"
echo "== tl-run.test" | tee -a "$out/summary.txt"
python3 scripts/gpu-lit.py --bin bin test/gpu/tl-run.test > "$out/lit.txt" 2>&1
tail -1 "$out/lit.txt" | tee -a "$out/summary.txt"; grep "^FAIL" "$out/lit.txt" | tee -a "$out/summary.txt"
timeout 420 python3 scripts/gpu-lit.py --bin bin --wrap 'compute-sanitizer --tool memcheck --error-exitcode 9' test/gpu/tl-run.test > "$out/lit_memcheck.txt" 2>&1
echo "memcheck: $(tail -1 "$out/lit_memcheck.txt")" | tee -a "$out/summary.txt"; grep "^FAIL" "$out/lit_memcheck.txt" | head -5 | tee -a "$out/summary.txt"
timeout 420 python3 scripts/gpu-lit.py --bin bin --wrap 'compute-sanitizer --tool racecheck --error-exitcode 9' test/gpu/tl-run.test > "$out/lit_racecheck.txt" 2>&1
echo "racecheck: $(tail -1 "$out/lit_racecheck.txt")" | tee -a "$out/summary.txt"; grep "^FAIL" "$out/lit_racecheck.txt" | head -5 | tee -a "$out/summary.txt"
echo "== decode_attn.test" | tee -a "$out/summary.txt"
python3 scripts/gpu-lit.py --bin bin test/gpu/decode_attn.test > "$out/lit_decode_attn.txt" 2>&1
tail -1 "$out/lit_decode_attn.txt" | tee -a "$out/summary.txt"; grep "^FAIL" "$out/lit_decode_attn.txt" | tee -a "$out/summary.txt"
echo "== bench" | tee -a "$out/summary.txt"
{
for m in 16 64 256 4096; do
  for k in kernels/matmul_f16_i6.tl bench/matmul_f16_i6_k64.tl bench/matmul_f16_i6_k128.tl bench/matmul_f16_i6_splitk.tl; do
    tl-run $k --seed 1 --arg a=rand:f16:${m}x1024 --arg b=rand:u8:64x128x96 --arg c=zeros:f16:${m}x1024 --arg m=$m --bench --no-vm-check --flops $((2*m*1024*1024)) | grep bench
  done
  for bm in 16 64; do
    tl-run kernels/matmul_f16_u4.tl -D BM=$bm --seed 1 --arg a=rand:f16:${m}x1024 --arg b=rand:u8:64x128x64 --arg s=rand:f16:8x1024 --arg c=zeros:f16:${m}x1024 --arg m=$m --bench --no-vm-check --flops $((2*m*1024*1024)) | grep bench | sed "s/^/BM=$bm /"
  done
done
tl-run kernels/vector_add.tl --seed 1 --arg x=rand:f32:16777216 --arg y=rand:f32:16777216 --arg z=zeros:f32:16777216 --arg n=16777216 --bench --no-vm-check | grep bench
tl-run kernels/softmax.tl -D N=1024 --seed 1 --arg x=rand:f32:4096x1024 --arg y=zeros:f32:4096x1024 --arg m=4096 --bench --no-vm-check | grep bench
python3 bench/peers.py
} > "$out/bench.txt" 2>&1
echo "== quantised matmul (bench/qmatmul.py)" | tee -a "$out/summary.txt"
timeout 420 python3 bench/qmatmul.py --bin bin > "$out/qmatmul.txt" 2>&1
sed -n '/== summary/,$p' "$out/qmatmul.txt" | tee -a "$out/summary.txt"
echo "== decode attention (bench/decode_attn.py)" | tee -a "$out/summary.txt"
timeout 900 python3 bench/decode_attn.py --bin bin > "$out/decode_attn.txt" 2>&1
sed -n '/== summary/,$p' "$out/decode_attn.txt" | tee -a "$out/summary.txt"
cat "$out/bench.txt" | tee -a "$out/summary.txt"
