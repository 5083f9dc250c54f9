#!/bin/bash
# The streamed filter kernel at this code against a baseline binary (bin/splinebench-cuda-base
# in the carried pack, run with the environment given as $1, e.g. SV_STENCIL_KERNEL=stream), in
# one device call on the same card: test_cuda's CudaBspline.* (the CPU references, and the
# streamed kernel bit for bit against the tile kernel), splinebench-cuda bspline with each binary
# (indirect, Laplacian, d/dx of the thesis's sizes), compute-sanitizer memcheck on the streamed
# filters' tests (small shapes). Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 200 $B/test_cuda --gtest_filter='CudaBspline.*' > $OUT/test.txt 2>&1; echo "test rc=$?"
grep -E "PASSED|FAILED|bound    \]" $OUT/test.txt | head -30
grep -m 6 -A6 "Failure" $OUT/test.txt | head -40
for run in 1 2; do
  env ${1:-SV_NONE=1} timeout 150 $B/splinebench-cuda-base bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_base$run.json > $OUT/bspline_base$run.md 2>&1
  echo "base rc=$?"
  timeout 150 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_new$run.json > $OUT/bspline_new$run.md 2>&1
  echo "new rc=$?"
done
SV_BSPLINE_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaBspline.StreamedKernel*:CudaBspline.Streamed*' > $OUT/memcheck.txt 2>&1
echo "memcheck rc=$?"; tail -3 $OUT/memcheck.txt
