#!/bin/bash
# Nsight Compute's duration, grid, registers and throughputs of the kernels of one operation of
# splinebench-cuda pyramid (its --op filter: the copy, then the operation's first call) on
# 15257x3736 and 400x300x151. $1: the operation's name or part of it (e.g. 0.71); $2: the number
# of kernel launches to profile (default 8). Carry ["build-gpu/carry-me"]; text in $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
for s in 15257x3736 400x300x151; do
  timeout 200 ncu --launch-count "${2:-8}" \
    --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
    $B/splinebench-cuda pyramid --only $s --op "$1" --no-cpu --repeats 1 > $OUT/ncu_$s.txt 2>&1
  echo "ncu $s rc=$?"
  grep -E "^  [a-zA-Z_].*\(|gpu__time|grid_size|block_size|registers|shared_mem|throughput|warps_active|inst_executed" \
    $OUT/ncu_$s.txt | sed 's/  */ /g' | head -80
done
