#!/bin/bash
# The GRBF checks and benchmark on the GPU machine (run by the device tool from the repository
# root) with build-gpu/carry-grbf carried: bins.tar.xz (stripped test_cuda, splinebench-cuda,
# splinetool) and rt.tar.xz (their runtime libraries). Writes under $OUT.
# Usage: tools/grbf_gpu_run.sh [all|test|bench]; BENCH_ARGS passes options to the benchmark.
set -u
cd "$(dirname "$0")/.."
C=build-gpu/carry-grbf
tar xJf $C/bins.tar.xz -C $C
tar xJf $C/rt.tar.xz -C $C
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
what=${1:-all}
if [ "$what" = all ] || [ "$what" = test ]; then
  timeout 200 $B/test_cuda --gtest_filter='CudaGrbf*' > $OUT/test_grbf.txt 2>&1
  echo "test rc=$?"; grep -E "^\[  (PASSED|FAILED)|OK \]|FAILED|worst|Failure|Expected|Which|bound" $OUT/test_grbf.txt | head -40
  timeout 200 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
    --gtest_filter='CudaGrbf*' > $OUT/memcheck_grbf.txt 2>&1; tail -2 $OUT/memcheck_grbf.txt
fi
if [ "$what" = all ] || [ "$what" = test ]; then
  timeout 120 python3 tests/cli/test_grbf_cli.py $B/splinetool > $OUT/cli_grbf.txt 2>&1
  echo "cli_grbf rc=$?"; grep -E "cuda|FAIL|passed" $OUT/cli_grbf.txt | head -10
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  nproc
  timeout 400 $B/splinebench-cuda grbf --json $OUT/grbf.json ${BENCH_ARGS:-} > $OUT/grbf.md 2>$OUT/grbf.err
  echo "bench rc=$?"; cat $OUT/grbf.md; tail -3 $OUT/grbf.err
fi
