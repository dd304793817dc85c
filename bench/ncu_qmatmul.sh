#!/bin/bash
# Nsight Compute on qmatmul_m8.tl's instances at m = 1 (gate_up's shape,
# 57344 x 8192, g128): occupancy, the issue rate, the warp stall reasons
# and every pipe's utilisation, one launch each, clocks left alone.
#   bash bench/ncu_qmatmul.sh BIN_DIR "WT:W:S ..." [N K]   (reports under $OUT)
set -u
bin=$1; cases=$2; n=${3:-57344}; k=${4:-8192}
out=${OUT:-/tmp/out}
mkdir -p "$out"
metrics=sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_executed.avg.per_cycle_active
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__waves_per_multiprocessor
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
for p in alu fma fmaheavy fmalite fp16 fp64 lsu adu cbu uniform xu tensor_op_hmma; do
  metrics+=,sm__inst_executed_pipe_$p.avg.pct_of_peak_sustained_active
done
for r in wait short_scoreboard long_scoreboard math_pipe_throttle mio_throttle barrier not_selected \
    selected dispatch_stall lg_throttle no_instruction branch_resolving misc; do
  metrics+=,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
for c in $cases; do
  IFS=: read -r wt w s <<< "$c"
  bits=$(python3 -c "import sys; sys.path.insert(0, 'python'); import tl.ops as o; print(o._bits('$wt'))")
  ch=$((128 * 64 * bits / 4096))
  timeout 120 ncu --clock-control none --kernel-name regex:qmatmul --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --metrics "$metrics" \
    "$bin/tl-run" kernels/qmatmul_m8.tl --kernel qmatmul_m8 -D K=$k -D N=$n -D W=$w -D S=$s -D SA=1 \
    -D WT=$wt --seed 1 --arg a=rand:f16:1x$k --arg b=rand:u8:$((n / 64))x$((k / 128))x${ch}x32x16 \
    --arg s=rand:f16:$((k / 128))x$n --arg c=zeros:f16:1x$n --arg m=1 --arg ws=zeros:f32:4 \
    --arg locks=zeros:u32:1 --no-vm-check > /tmp/ncu_case.txt 2>&1
  { echo "== $c"; cat /tmp/ncu_case.txt; } >> "$out/ncu.txt"
  echo "== $c"; grep -E "Duration|Achieved Occupancy|Issue Slots Busy|Waves Per SM|Block Limit|pipe_|stalled|No Eligible|Registers Per|Dynamic Shared|==ERR|error" /tmp/ncu_case.txt | head -60
done
