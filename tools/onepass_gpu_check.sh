#!/bin/bash
# The 2-D one-pass prefilter / direct transform (issue 17), in one device call (carry
# ["build-gpu/carry-me"], command "bash tools/onepass_gpu_check.sh [ncu]"): test_cuda's
# CudaPrefilter.* and CudaBspline.Direct* (CUDA against the CPU's double), compute-sanitizer
# memcheck and racecheck on the one-pass test, and splinebench-cuda bspline with the one pass
# where it applies (the default) and without it (SV_ONE_PASS_2D=0: the per-axis passes), same
# card, same run. With "ncu": Nsight Compute on the one-pass kernels instead of the sanitizers.
# JSON in $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 200 $B/test_cuda --gtest_filter='CudaPrefilter.*:CudaBspline.Direct*' > $T/test.txt 2>&1
echo "test_cuda CudaPrefilter.* CudaBspline.Direct* rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran|bound    \]" $T/test.txt | head -20
grep -m 6 -A8 "Failure" $T/test.txt | head -60
grep -E "one pass \]" $T/test.txt | head -20
cp $T/test.txt $OUT/test.txt
for v in on off; do
  SP=; [ $v = off ] && SP=0
  SV_ONE_PASS_2D=$SP timeout 120 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_onepass_$v.json > $T/b_$v.md 2>/dev/null
  echo "bench one pass $v rc=$?"; grep -E "direct lambda 0 " $T/b_$v.md | head -8
done
[ "${1:-}" = ncu ] || SV_ONEPASS_SMALL=1 timeout 150 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaPrefilter.OnePass2D*' > $T/memcheck.txt 2>&1
echo "memcheck one pass rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $T/memcheck.txt | head -3
[ "${1:-}" = ncu ] || SV_ONEPASS_SMALL=1 timeout 200 compute-sanitizer --tool racecheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaPrefilter.OnePass2D*' > $T/racecheck.txt 2>&1
echo "racecheck one pass rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $T/racecheck.txt | head -3
if [ "${1:-}" = ncu ]; then  # Nsight Compute on the one-pass kernels (one launch each)
  SV_ONEPASS_SMALL=1 timeout 200 ncu --kernel-name regex:'single_pass|gather_sp' --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    --section MemoryWorkloadAnalysis $B/test_cuda --gtest_filter='CudaPrefilter.OnePass2D*' > $T/ncu.txt 2>&1
  echo "ncu rc=$?"
  grep -E "single_pass|gather_sp|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Stall|Warp Cycles Per Issued|L2 Hit|L1/TEX Hit|Waves Per SM" $T/ncu.txt | head -60
  cp $T/ncu.txt $OUT/ncu.txt
fi
