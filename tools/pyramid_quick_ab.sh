#!/bin/bash
# A short pyramid check for a small change (carry ["build-gpu/carry-me"], with a baseline
# bin/splinebench-cuda-base): test_cuda's CudaPyramid.*, memcheck on ReduceFloat (small shapes),
# then splinebench-cuda pyramid --op reduce with each binary, twice in turn; GPU ms printed.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 200 $B/test_cuda --gtest_filter='CudaPyramid.*' > $T/t.txt 2>&1; echo "test rc=$?"
grep -E "^\[  (PASSED|FAILED)|float reduce|double reduce" $T/t.txt | head; grep -m 3 -A6 Failure $T/t.txt | head -20
SV_PYRAMID_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --print-limit 5 $B/test_cuda \
  --gtest_filter='CudaPyramid.ReduceFloat*' > $T/m.txt 2>&1
echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $T/m.txt)"
for r in 1 2; do for b in splinebench-cuda-base splinebench-cuda; do
  timeout 100 $B/$b pyramid --no-cpu --repeats 10 --op reduce > $T/p.md 2>&1
  echo "$b run $r: $(grep -E '^\| (15257|400)' $T/p.md | grep reduce | awk -F'|' '{print $2 $4 $5}' | tr -s ' ' | tr '\n' ';')"
done; done
