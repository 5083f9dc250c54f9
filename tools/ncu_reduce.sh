#!/bin/bash
# Nsight Compute's duration, grid, registers and throughput of the kernels of reduce2 by phases
# (the first launches of splinebench-cuda pyramid on 15257x3736 and 400x300x151: the FIR kernels,
# the tile kernel's pole passes, the conversion). Carry ["build-gpu/carry-me"]; text in $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
for s in 15257x3736 400x300x151; do
  timeout 200 ncu --kernel-name regex:"reduce_phases|reduce_z|tile_kernel|convert_kernel|parallel_poles|interleave" \
    --launch-count 7 --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active \
    $B/splinebench-cuda pyramid --only $s --no-cpu --repeats 1 > $OUT/ncu_$s.txt 2>&1
  echo "ncu $s rc=$?"
  grep -E "^  [a-z_]+.*\(|gpu__time|grid_size|block_size|registers|shared_mem|throughput|warps_active" $OUT/ncu_$s.txt | sed 's/  */ /g' | head -60
done
