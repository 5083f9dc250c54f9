#!/bin/bash
# Nsight Compute's speed-of-light, occupancy, launch and warp-state sections for expand2's phase
# kernels: the plane kernel on 15257x3736 and the volume kernel on 400x300x151 (first launch of
# each in splinebench-cuda pyramid). Carry ["build-gpu/carry-me"]; the reports' text in $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
for s in 15257x3736 400x300x151; do
  timeout 200 ncu --kernel-name regex:"expand_phases" --launch-count 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis $B/splinebench-cuda pyramid --only $s --no-cpu --repeats 1 \
    > $OUT/ncu_$s.txt 2>&1
  echo "ncu $s rc=$?"
  grep -E "Duration|Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Stall|Warp Cycles Per Issued|Dynamic Shared|Static Shared|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth" $OUT/ncu_$s.txt | head -40
done
