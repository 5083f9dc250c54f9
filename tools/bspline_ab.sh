#!/bin/bash
# The filters' kernels side by side in one device call on the same card: splinebench-cuda
# bspline with SV_STENCIL_KERNEL=direct (the former default: the tile kernel, and the direct
# kernel for 2-D one-term filters) and with the default (the streamed kernel wherever it fits),
# then test_cuda's CudaBspline.* and compute-sanitizer memcheck on the streamed kernel's test.
# Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
cd "$(dirname "$0")/.."
C=build-gpu/carry-me
tar xJf $C/bins.tar.xz -C $C && tar xJf $C/rt.tar.xz -C $C || exit 1
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 150 $B/test_cuda --gtest_filter='CudaBspline.*' > $OUT/test.txt 2>&1; echo "test rc=$?"
grep -E "PASSED|FAILED|bound    \]" $OUT/test.txt | head -30
grep -m 6 -A6 "Failure" $OUT/test.txt | head -40
for v in direct stream; do
  SV_STENCIL_KERNEL=$v timeout 150 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_$v.json > $OUT/bspline_$v.md 2>/dev/null
  echo "kernel=$v rc=$?"; grep -E "indirect|Laplacian|d/dx|copy" $OUT/bspline_$v.md | head -40
done
timeout 200 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaBspline.Streamed*:CudaBspline.HostConveniences*' > $OUT/memcheck.txt 2>&1
echo "memcheck rc=$?"; tail -3 $OUT/memcheck.txt
