#!/bin/bash
# splinebench-cuda pyramid (and the base binary, bin/splinebench-cuda-base) under several
# environments in one device call: VARIANTS="ENV1 ENV2 ..." (SV_NONE=1 for none; commas inside a
# variant separate several variables). RACE=1 first runs compute-sanitizer racecheck on
# CudaPyramid.* (small shapes) and prints its first hazards. Carry ["build-gpu/carry-me"].
set -u
source "$(dirname "$0")/carry_me.sh"
if [ "${RACE:-0}" = 1 ]; then
  SV_PYRAMID_SMALL=1 timeout 150 compute-sanitizer --tool racecheck --print-limit 4 $B/test_cuda \
    --gtest_filter="${RACE_FILTER:-CudaPyramid.*}" > $OUT/racecheck.txt 2>&1
  echo "racecheck rc=$?"; grep -E "SUMMARY|PASSED|FAILED" $OUT/racecheck.txt | head -3
  grep -m 4 -A12 "Error\|Warning" $OUT/racecheck.txt | head -60
fi
for v in ${VARIANTS:-SV_NONE=1}; do
  for bin in ${BINS:-splinebench-cuda-base splinebench-cuda}; do
    env ${v//,/ } timeout 150 $B/$bin pyramid --no-cpu --repeats 10 > $T/p.md 2>&1
    echo "== $bin $v rc=$?"; grep -E "^\| (15257|400x300)" $T/p.md | grep -v copy | cut -d'|' -f2,4,5
  done
done
