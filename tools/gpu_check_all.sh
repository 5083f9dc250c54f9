#!/bin/bash
# Every CUDA test of the tree on the GPU machine, in one device call (run by the device tool from
# the repository root) with build-gpu/carry-all carried: bins.tar.xz (stripped test_cuda and
# splinetool of build-gpu) and rt.tar.xz (their runtime libraries). Writes under $OUT:
# test_cuda.txt (all of test_cuda), memcheck.txt (compute-sanitizer on the kernels named in
# MEMCHECK, default the GRBF and B-spline operations), cli_*.txt (the CUDA cli tests).
set -u
cd "$(dirname "$0")/.."
C=build-gpu/carry-all
tar xJf $C/bins.tar.xz -C $C
tar xJf $C/rt.tar.xz -C $C
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 300 $B/test_cuda > $OUT/test_cuda.txt 2>&1
echo "test_cuda rc=$?"; grep -E "^\[  (PASSED|FAILED)|^\[  SKIPPED|tests ran" $OUT/test_cuda.txt | head -20
timeout 150 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter="${MEMCHECK:-CudaGrbf*:CudaBspline.Indirect*:CudaBspline.Derivative*}" > $OUT/memcheck.txt 2>&1
tail -2 $OUT/memcheck.txt
timeout 150 python3 tests/cli/test_bspline_cuda_cli.py $B/splinetool device > $OUT/cli_bspline.txt 2>&1
echo "cli_bspline_cuda rc=$?"; grep -E "skipped|FAIL|passed" $OUT/cli_bspline.txt | head -5
timeout 150 python3 tests/cli/test_grbf_cli.py $B/splinetool > $OUT/cli_grbf.txt 2>&1
echo "cli_grbf rc=$?"; grep -E "cuda|FAIL|passed" $OUT/cli_grbf.txt | head -5
timeout 200 python3 tests/cli/test_cuda_backend.py $B/splinetool device > $OUT/cli_cuda_backend.txt 2>&1
echo "cli_cuda_backend rc=$?"; grep -E "^Ran|^OK|FAILED|FAIL:" $OUT/cli_cuda_backend.txt | head -10
