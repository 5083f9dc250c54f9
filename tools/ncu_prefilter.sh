#!/bin/bash
# Nsight Compute on the direct transform's kernels (carry ["build-gpu/carry-me"]): the 2-D
# one-pass kernel on 15257x3736 and the 3-D fused y/x pass and z pass on 400x300x151, from
# splinebench-cuda bspline (one launch each). Reports land in $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section InstructionStats --section LaunchStats --section MemoryWorkloadAnalysis --section SourceCounters"
timeout 250 ncu --kernel-name regex:'single_pass_kernel|gather_sp' --launch-count 2 $S \
  $B/splinebench-cuda bspline --only 15257x3736 --no-cpu --repeats 1 > $OUT/ncu_onepass.txt 2>&1
echo "onepass rc=$?"
timeout 250 ncu --kernel-name regex:'fused_xy_kernel|tile_kernel' --launch-count 2 $S \
  $B/splinebench-cuda bspline --only 400x300x151 --no-cpu --repeats 1 > $OUT/ncu_3d.txt 2>&1
echo "3d rc=$?"
for f in $OUT/ncu_*.txt; do
  grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issued Warp Per|Executed Instructions  " $f | head -40
done
