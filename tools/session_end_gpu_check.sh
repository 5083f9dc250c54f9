#!/bin/bash
# The whole CUDA test binary and issue 17's benchmarks in one device call (carry
# ["build-gpu/carry-me"], command "bash tools/session_end_gpu_check.sh"): every test of test_cuda
# (CUDA against the CPU references), compute-sanitizer memcheck on the smoothing splines, the
# one-pass 2-D kernel and the pyramid (small shapes), the CUDA cli tests of the B-spline
# operations, splinebench-cuda bspline with the one pass where it applies (default) and without
# (SV_ONE_PASS_2D=0), and splinebench-cuda pyramid. Logs stay on the machine except a summary;
# the JSON lands in $OUT. RACECHECK (below) adds a racecheck run.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 360 $B/test_cuda > $T/test_cuda.txt 2>&1
echo "test_cuda (all) rc=$?"
grep -E "^\[  (PASSED|FAILED)|^\[  FAILED|tests ran|bound    \]" $T/test_cuda.txt | head -40
grep -m 6 -A8 "Failure" $T/test_cuda.txt | head -60
grep -c "SKIPPED" $T/test_cuda.txt
SV_BSPLINE_SMALL=1 SV_PYRAMID_SMALL=1 SV_ONEPASS_SMALL=1 timeout 240 compute-sanitizer --tool memcheck \
  --print-limit 10 $B/test_cuda --gtest_filter='CudaBspline.DirectTransform*:CudaPrefilter.OnePass2D*:CudaPyramid.*' \
  > $T/memcheck.txt 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $T/memcheck.txt | head -3
PYTHONUNBUFFERED=1 timeout 150 python3 tests/cli/test_bspline_cuda_cli.py $B/splinetool device > $T/cli.txt 2>&1
echo "cli_bspline_cuda rc=$?"; grep -E "FAIL|passed|failures|SKIP" $T/cli.txt | head -8
for v in default per_axis; do
  SP=; [ $v = per_axis ] && SP=0
  SV_ONE_PASS_2D=$SP timeout 120 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_$v.json > $T/b_$v.md 2>/dev/null
  echo "bench bspline ($v) rc=$?"
done
timeout 150 $B/splinebench-cuda pyramid --repeats 10 --out $OUT/pyramid.json > $T/pyr.md 2> $T/pyr.err
echo "bench pyramid rc=$?"; grep -E "15257|400x300" $T/pyr.md | head -10
# RACECHECK=<gtest filter>: compute-sanitizer racecheck on those tests too (small shapes).
if [ -n "${RACECHECK:-}" ]; then
  SV_PYRAMID_SMALL=1 SV_ONEPASS_SMALL=1 SV_BSPLINE_SMALL=1 timeout ${RACECHECK_S:-240} \
    compute-sanitizer --tool racecheck --print-limit 10 $B/test_cuda --gtest_filter="$RACECHECK" \
    > $T/racecheck.txt 2>&1
  echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $T/racecheck.txt | head -3
fi
