#!/bin/bash
# expand2 by phases (the default: one pass for 1-3 D) against the plan's passes
# (SV_PYRAMID_EXPAND=passes) and, for volumes, the plane kernel then the z pass
# (SV_PYRAMID_EXPAND=planes), the same binary in one device call: test_cuda's CudaPyramid.* (the
# CPU references; the phases against the passes), compute-sanitizer memcheck and racecheck on
# the expand tests (small shapes), then splinebench-cuda pyramid with each setting, twice in
# turn, and the volume kernel's chunk of fine planes (SV_PYRAMID_EXPAND_CZ) 8, 16 and 32.
# Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
pyramid_checks 'CudaPyramid.Expand*'
for run in 1 2; do
  for mode in passes planes phases; do
    SV_PYRAMID_EXPAND=$mode timeout 150 $B/splinebench-cuda pyramid --no-cpu --repeats 10 \
      --out $OUT/pyramid_$mode$run.json > $OUT/pyramid_$mode$run.md 2>&1
    echo "$mode rc=$?"
  done
done
for cz in 8 32; do
  SV_PYRAMID_EXPAND_CZ=$cz timeout 150 $B/splinebench-cuda pyramid --no-cpu --repeats 10 \
    --only 400x300x151 --out $OUT/pyramid_cz$cz.json > $OUT/pyramid_cz$cz.md 2>&1
  echo "cz $cz rc=$?"
done
for f in $OUT/pyramid_*.md; do
  echo "== $(basename $f)"; grep -E "^\| (15257|400x300)" $f | grep -E "copy|expand2" | cut -c1-120
done
