#!/bin/bash
# Issue 17's CUDA code at the end of a session, in one device call (carry ["build-gpu/carry-me"],
# command "bash tools/issue17_gpu_check.sh"): test_cuda's CudaBspline.* and CudaPyramid.*,
# compute-sanitizer memcheck on the streamed filters (full sizes), the smoothing splines and the
# pyramid (small shapes), splinetool --backend cuda against the CPU (cli_bspline_cuda, pyramid
# included), and splinebench-cuda bspline. A summary is printed; the benchmark JSON lands in
# $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 200 $B/test_cuda --gtest_filter='CudaBspline.*:CudaPyramid.*' > $T/test.txt 2>&1
echo "test_cuda CudaBspline+CudaPyramid rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|bound    \]|cuda pyramid \]|tests ran" $T/test.txt | head -40
grep -m 6 -A8 "Failure" $T/test.txt | head -50
cp $T/test.txt $OUT/test.txt
timeout 60 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaBspline.Streamed*' > $T/m1.txt 2>&1
echo "memcheck streamed rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $T/m1.txt | head -3
SV_BSPLINE_SMALL=1 SV_PYRAMID_SMALL=1 timeout 150 compute-sanitizer --tool memcheck --print-limit 10 \
  $B/test_cuda --gtest_filter='CudaBspline.DirectTransformSmoothing*:CudaBspline.GradientHessian*:CudaPyramid.*' \
  > $T/m2.txt 2>&1
echo "memcheck smoothing/filters/pyramid (small) rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $T/m2.txt | head -3
cat $T/m1.txt $T/m2.txt > $OUT/memcheck.txt
PYTHONUNBUFFERED=1 timeout 150 python3 tests/cli/test_bspline_cuda_cli.py $B/splinetool device > $T/cli.txt 2>&1
echo "cli_bspline_cuda rc=$?"; grep -E "FAIL|passed|failures|SKIP" $T/cli.txt | head -12
for v in default; do
  timeout 100 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_$v.json > $T/b.md 2>/dev/null
  echo "bench $v rc=$?"; grep -E "indirect|Laplacian|d/dx|complex" $T/b.md |
    awk -F'|' '{printf "%s:%s%s ", $4, $5, $6} END {print ""}'
done
