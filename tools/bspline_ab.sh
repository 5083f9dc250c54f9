#!/bin/bash
# The stencil's tile load, batched (default) against a row at a time (SV_STENCIL_ONE_ROW=1), in
# one device call on the same card: splinebench-cuda bspline twice, then test_cuda's CudaBspline
# with the batched load. Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
cd "$(dirname "$0")/.."
C=build-gpu/carry-me
tar xJf $C/bins.tar.xz -C $C && tar xJf $C/rt.tar.xz -C $C || exit 1
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in 1 0; do
  SV_STENCIL_ONE_ROW=$v timeout 150 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_one_row_$v.json > $OUT/bspline_one_row_$v.md 2>/dev/null
  echo "one_row=$v rc=$?"; grep -E "indirect|Laplacian|d/dx|copy ms|^\| [0-9]" $OUT/bspline_one_row_$v.md | grep -E "indirect|Laplacian|d/dx" | head -24
done
timeout 100 $B/test_cuda --gtest_filter='CudaBspline.*' > $OUT/test.txt 2>&1; echo "test rc=$?"; grep -E "PASSED|FAILED" $OUT/test.txt | head -3
