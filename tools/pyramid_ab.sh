#!/bin/bash
# The pyramid's fused pass kernel at this code against a baseline binary (bin/splinebench-cuda-base
# in the carried pack; tools/pack_carry_me.sh BASE), in one device call on the same card:
# test_cuda's CudaPyramid.* (the CPU references on every degree, mode and grid), compute-sanitizer
# memcheck and racecheck on them (small shapes), then splinebench-cuda pyramid with each binary,
# twice in turn (extra environment for both: $1, e.g. SV_PYRAMID_THREADS=256). Carry
# ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
pyramid_checks 'CudaPyramid.*' 200
for run in 1 2; do
  env ${1:-SV_NONE=1} timeout 150 $B/splinebench-cuda-base pyramid --no-cpu --repeats 10 \
    --out $OUT/pyramid_base$run.json > $OUT/pyramid_base$run.md 2>&1
  echo "base rc=$?"
  env ${1:-SV_NONE=1} timeout 150 $B/splinebench-cuda pyramid --no-cpu --repeats 10 \
    --out $OUT/pyramid_new$run.json > $OUT/pyramid_new$run.md 2>&1
  echo "new rc=$?"
done
for f in $OUT/pyramid_base1.md $OUT/pyramid_new1.md $OUT/pyramid_base2.md $OUT/pyramid_new2.md; do
  echo "== $(basename $f)"; grep -E "^\| (15257|400x300)" $f | cut -c1-110
done
