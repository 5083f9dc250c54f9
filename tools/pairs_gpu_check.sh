#!/bin/bash
# Conjugate pole pairs in the prefilter's tiles (issue 17), in one device call (carry
# ["build-gpu/carry-me"], command "bash tools/pairs_gpu_check.sh"): test_cuda's direct-transform
# tests (CUDA against the CPU's double), compute-sanitizer memcheck and racecheck on the tiled
# pairs (small shapes), and splinebench-cuda bspline with the pairs in the tiles (default) and in
# the line kernels (SV_PAIR_LINES=1), same card, same run. The JSON of both lands in $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 250 $B/test_cuda --gtest_filter='CudaBspline.Direct*:CudaPrefilter.*' > $T/test.txt 2>&1
echo "test_cuda CudaBspline.Direct* CudaPrefilter.* rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran" $T/test.txt | head -20
grep -m 6 -A8 "Failure" $T/test.txt | head -60
grep -E "worst|of the bound" $T/test.txt | head -20
for tool in memcheck racecheck; do
  SV_BSPLINE_SMALL=1 timeout 120 compute-sanitizer --tool $tool --print-limit 10 $B/test_cuda \
    --gtest_filter='CudaBspline.DirectTransformPairsInTiles' > $T/$tool.txt 2>&1
  echo "$tool (pairs in tiles, small shapes) rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $T/$tool.txt | head -3
done
for v in tiles lines; do
  L=0; [ $v = lines ] && L=1
  SV_PAIR_LINES=$L timeout 120 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_pairs_$v.json > $T/b_$v.md 2>/dev/null
  echo "bench pairs in $v rc=$?"; grep -E "x151|x76" $T/b_$v.md | head -4
  grep -A3 "400x300x151" $T/b_$v.md | grep -E "lambda 0.0|lambda 0.5" | head -3
done
