#!/bin/bash
# expand2 by phases (the default) against the plan's passes (SV_PYRAMID_EXPAND=passes), the same
# binary in one device call: test_cuda's CudaPyramid.* (the CPU references; the phases against
# the passes), compute-sanitizer memcheck and racecheck on the expand tests (small shapes), then
# splinebench-cuda pyramid with and without the switch, twice in turn. Carry
# ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 240 $B/test_cuda --gtest_filter='CudaPyramid.*' > $OUT/test.txt 2>&1; echo "test rc=$?"
grep -E "PASSED|FAILED|cuda pyramid \]" $OUT/test.txt | head -30
grep -m 6 -A8 "Failure" $OUT/test.txt | head -50
for tool in memcheck racecheck; do
  SV_PYRAMID_SMALL=1 timeout 120 compute-sanitizer --tool $tool --print-limit 10 $B/test_cuda \
    --gtest_filter='CudaPyramid.Expand*' > $OUT/$tool.txt 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $OUT/$tool.txt | head -3
done
for run in 1 2; do
  SV_PYRAMID_EXPAND=passes timeout 150 $B/splinebench-cuda pyramid --no-cpu --repeats 10 \
    --out $OUT/pyramid_passes$run.json > $OUT/pyramid_passes$run.md 2>&1
  echo "passes rc=$?"
  timeout 150 $B/splinebench-cuda pyramid --no-cpu --repeats 10 \
    --out $OUT/pyramid_phases$run.json > $OUT/pyramid_phases$run.md 2>&1
  echo "phases rc=$?"
done
for f in $OUT/pyramid_passes1.md $OUT/pyramid_phases1.md $OUT/pyramid_passes2.md $OUT/pyramid_phases2.md; do
  echo "== $(basename $f)"; grep -E "^\| (15257|400x300)" $f | cut -c1-120
done
