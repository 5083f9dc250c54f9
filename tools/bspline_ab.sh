#!/bin/bash
# The filters' kernels side by side in one device call on the same card: splinebench-cuda
# bspline with SV_STENCIL_KERNEL=direct (the former default: the tile kernel, and the direct
# kernel for 2-D one-term filters), the default (the streamed kernel, planes by cp.async) and
# the variants the list names (environment switches of cuda/src/bspline_ops.cu); test_cuda's
# CudaBspline.* (also under SV_STREAM_ROWS=1 and SV_PAIR_FOUR_PASS=1) and compute-sanitizer
# memcheck on the streamed kernel's test and the smoothing splines.
# Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 150 $B/test_cuda --gtest_filter='CudaBspline.*' > $OUT/test.txt 2>&1; echo "test rc=$?"
grep -E "PASSED|FAILED|bound    \]" $OUT/test.txt | head -30
grep -m 6 -A6 "Failure" $OUT/test.txt | head -40
SV_PAIR_FOUR_PASS=1 timeout 100 $B/test_cuda --gtest_filter='CudaBspline.DirectTransformSmoothing*' \
  > $T/test_four_pass.txt 2>&1; echo "test four-pass rc=$?"; grep -E "PASSED|FAILED" $T/test_four_pass.txt
SV_STREAM_ROWS=1 timeout 150 $B/test_cuda --gtest_filter='CudaBspline.Streamed*:CudaBspline.Gradient*' \
  > $T/test_rows1.txt 2>&1; echo "test rows1 rc=$?"; grep -E "PASSED|FAILED" $T/test_rows1.txt
# name kernel registers rows(1: one row a thread in 3-D) waves pair-four-pass
while read -r name kern reg st wv fp; do
  SV_PAIR_FOUR_PASS=$fp SV_STENCIL_KERNEL=$kern SV_STREAM_REGISTERS=$reg SV_STREAM_ROWS=$st SV_STREAM_WAVES=$wv \
    timeout 150 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_$name.json > $T/bspline_$name.md 2>/dev/null
  echo "$name rc=$?"; grep -E "indirect|Laplacian|d/dx|complex" $T/bspline_$name.md | awk -F'|' '{printf "%s:%s%s ", $4, $5, $6} END {print ""}'
done <<'LIST'
direct direct 0 0 4 1
default stream 0 0 4 0
rows1 stream 0 1 4 0
LIST
timeout 200 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaBspline.Streamed*:CudaBspline.HostConveniences*' > $OUT/memcheck.txt 2>&1
echo "memcheck rc=$?"; tail -3 $OUT/memcheck.txt
SV_BSPLINE_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaBspline.DirectTransformSmoothing*' > $T/memcheck2.txt 2>&1
echo "memcheck (smoothing, small shapes) rc=$?"; tail -3 $T/memcheck2.txt
