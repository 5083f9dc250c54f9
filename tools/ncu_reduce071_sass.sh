#!/bin/bash
# Nsight Compute's SASS counts of reduce by 0.71's two tile-kernel passes (15257x3736: the x
# pass, the first launch, and the y pass, the second) from splinebench-cuda pyramid (carry
# ["build-gpu/carry-me"]); CSVs and the section reports in $OUT/all.tgz (tools/sass_summary.py).
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
mkdir -p $T/o
for skip in 0 1; do
  timeout 200 ncu --kernel-name regex:tile_kernel --launch-skip $skip --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats \
    --section SourceCounters --section InstructionStats -o $T/r$skip \
    $B/splinebench-cuda pyramid --only 15257x3736 --op 0.71 --no-cpu --repeats 1 > $T/o/log$skip.txt 2>&1
  echo "launch $skip rc=$?"
  ncu -i $T/r$skip.ncu-rep > $T/o/r$skip.txt 2>&1
  ncu -i $T/r$skip.ncu-rep --page source --csv --print-source sass > $T/o/r${skip}_sass.csv 2>/dev/null
  grep -E "^  [a-z].*\(|Duration|Executed Instructions  |Registers Per|Block Size|Grid Size|Issued Warp" $T/o/r$skip.txt | head -10
done
tar czf $OUT/all.tgz -C $T/o .
