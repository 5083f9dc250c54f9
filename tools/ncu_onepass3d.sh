#!/bin/bash
# Nsight Compute on the experimental one-pass 3-D prefilter (SV_ONE_PASS_3D=1) and on the default
# path's fused y/x pass and z pass, 512x512x300 (or the case ONLY names) (splinebench-cuda prefilter's warm-up launch).
# Carry ["build-gpu/carry-me"]; reports land in $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
  --section LaunchStats --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
SV_ONE_PASS_3D=1 ${ENVX:-} timeout 200 ncu --kernel-name regex:'one_pass_3d' --launch-count 1 $S \
  $B/splinebench-cuda prefilter --only ${ONLY:-512x512x300} --repeats 1 > $OUT/ncu_op3.txt 2>&1
echo "op3 rc=$?"
if [ -z "${NO_BASE:-}" ]; then
timeout 200 ncu --kernel-name regex:'fused_xy_kernel|tile_kernel' --launch-count 2 $S \
  $B/splinebench-cuda prefilter --only ${ONLY:-512x512x300} --repeats 1 > $OUT/ncu_base.txt 2>&1
echo "base rc=$?"
fi
for f in $OUT/ncu_*.txt; do
  echo "== $f"
  grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|dram__bytes|lts__t_sector_hit|L2 Hit|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issued Warp Per|Block Limit" $f | head -40
done
