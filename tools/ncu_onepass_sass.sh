#!/bin/bash
# Nsight Compute on the 2-D one-pass kernel (15257x3736, splinebench-cuda bspline) and the 3-D
# fused y/x pass (512x512x300, splinebench-cuda prefilter): the usual sections and the
# per-instruction SASS counts of one launch each (carry ["build-gpu/carry-me"]). Everything
# lands in $OUT/all.tgz; summarise the CSVs with tools/sass_summary.py.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section InstructionStats --section LaunchStats --section MemoryWorkloadAnalysis --section SourceCounters"
mkdir -p $T/o
run() {  # name kernel-regex command...
  local n=$1 k=$2; shift 2
  timeout 200 ncu --kernel-name regex:"$k" --launch-count 1 $S -o $T/$n "$@" > $T/o/$n.log 2>&1
  echo "$n rc=$?"
  ncu -i $T/$n.ncu-rep > $T/o/$n.txt 2>&1
  ncu -i $T/$n.ncu-rep --page source --csv --print-source sass > $T/o/${n}_sass.csv 2>/dev/null
  grep -E "Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Executed Instructions  " $T/o/$n.txt | head -12
}
run onepass single_pass_kernel $B/splinebench-cuda bspline --only 15257x3736 --no-cpu --repeats 1
run fusedxy fused_xy_kernel $B/splinebench-cuda prefilter --only 512x512x300 --repeats 1
tar czf $OUT/all.tgz -C $T/o .
