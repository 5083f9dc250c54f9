#!/bin/bash
# Issue 17 on the GPU machine, in one call (the `run` tool: carry ["build-gpu/carry-me"], command
# "bash tools/bspline_gpu_run.sh [tests|bench|all]"): unpacks the stripped binaries that
# build-gpu/carry-me/bins.tar.xz and rt.tar.xz hold (test_cuda, splinetool, splinebench-cuda
# built here for sm_90, their runtime .so files), then
#   tests: test_cuda's CudaBspline.* (against the CPU double versions), compute-sanitizer
#          memcheck on a subset of them, cli_bspline_cuda (splinetool --backend cuda vs cpu);
#   bench: splinebench-cuda bspline (the thesis's sizes) and tools/bspline_peers.py (cupyx).
# Full logs and JSON land in $OUT; a short summary is printed last.
set -u
what=${1:-all}
cd "$(dirname "$0")/.."
C=build-gpu/carry-me
tar xJf $C/bins.tar.xz -C $C && tar xJf $C/rt.tar.xz -C $C || exit 1
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout 120 $B/test_cuda --gtest_filter='CudaBspline.*' > $OUT/test_bspline.txt 2>&1
  echo "test_cuda CudaBspline rc=$?"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|bound    \]|SKIPPED" $OUT/test_bspline.txt | head -40
  grep -m 12 -B2 -A6 "Failure" $OUT/test_bspline.txt | head -60
  timeout 90 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
    --gtest_filter='CudaBspline.HostConveniences*:CudaBspline.Refusals*:CudaBspline.IndirectAfter*:CudaBspline.DirectTransformLambdaZero*' \
    > $OUT/memcheck.txt 2>&1
  echo "memcheck rc=$?"; tail -3 $OUT/memcheck.txt
  PYTHONUNBUFFERED=1 timeout 100 python3 tests/cli/test_bspline_cuda_cli.py $B/splinetool device > $OUT/cli.txt 2>&1
  echo "cli_bspline_cuda rc=$?"; grep -E "FAIL|measured|passed|failures|SKIP" $OUT/cli.txt | head -30
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout 180 $B/splinebench-cuda bspline --out $OUT/bspline.json > $OUT/bspline.md 2> $OUT/bspline.err
  echo "splinebench-cuda bspline rc=$?"; tail -3 $OUT/bspline.err
  timeout 90 python3 tools/bspline_peers.py --out $OUT/peers.json > $OUT/peers.md 2>&1
  echo "bspline_peers rc=$?"
  cat $OUT/bspline.md $OUT/peers.md
fi
if [ "$what" = tests ] || [ "$what" = all ]; then
  SV_BSPLINE_SMALL=1 timeout 100 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
    --gtest_filter='CudaBspline.GradientHessian*:CudaBspline.DirectTransformSmoothing*' \
    > $OUT/memcheck2.txt 2>&1
  echo "memcheck2 rc=$?"; tail -3 $OUT/memcheck2.txt
fi
