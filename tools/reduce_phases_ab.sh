#!/bin/bash
# reduce2 by phases (the default: one decimating FIR, then the poles on the coarse array) against
# the plan's passes (SV_PYRAMID_REDUCE=passes), the same binary in one device call: test_cuda's
# CudaPyramid.* (the CPU references; the phases against the passes), compute-sanitizer memcheck
# and racecheck on the reduce tests (small shapes), then splinebench-cuda pyramid with each
# setting, twice in turn.
# Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
pyramid_checks 'CudaPyramid.Reduce2By*'
for run in 1 2; do
  for mode in passes phases; do
    SV_PYRAMID_REDUCE=$mode timeout 150 $B/splinebench-cuda pyramid --no-cpu --repeats 10 \
      --out $OUT/pyramid_$mode$run.json > $OUT/pyramid_$mode$run.md 2>&1
    echo "$mode rc=$?"
  done
done
for f in $OUT/pyramid_*.md; do
  echo "== $(basename $f)"; grep -E "^\| (15257|400x300)" $f | grep -E "copy|reduce2" | cut -c1-140
done
cd $OUT && tar czf all.tgz *.txt *.md *.json 2>/dev/null; ls $OUT | head
