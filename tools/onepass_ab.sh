#!/bin/bash
# The 2-D one-pass direct transform at this code against a baseline binary
# (bin/splinebench-cuda-0base in the carried pack) in one device call: test_cuda's one-pass and
# direct-transform tests, compute-sanitizer memcheck on the one-pass test (small shapes), and
# splinebench-cuda bspline on the 2-D sizes (SIZES) with each binary, twice, interleaved, and
# splinebench-cuda prefilter on the case PREFILTER names, if any.
# Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 200 $B/test_cuda --gtest_filter="${TESTS:-CudaPrefilter.OnePass*:CudaBspline.DirectTransform*}" \
  > $OUT/test.txt 2>&1; echo "test rc=$?"
grep -E "PASSED|FAILED" $OUT/test.txt | head; grep -m 4 -A6 "Failure" $OUT/test.txt | head -30
SV_ONEPASS_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaPrefilter.OnePass*' > $T/memcheck.txt 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" $T/memcheck.txt
for run in 1 2; do
  for b in $B/splinebench-cuda-0base $B/splinebench-cuda; do
    n=$(basename $b)
    for only in ${SIZES:-3815x934 7629x1868 15257x3736}; do
      timeout 100 $b bspline --no-cpu --repeats 20 --only $only > $T/x.md 2>&1 || echo "$n $only failed"
      grep -E "^\| [0-9]|direct" $T/x.md >> $OUT/${n}_$run.md
    done
    [ -n "${PREFILTER:-}" ] && timeout 100 $b prefilter --only $PREFILTER --repeats 20 2>&1 \
      | grep -E "^\| " >> $OUT/${n}_$run.md
  done
done
ls $OUT
