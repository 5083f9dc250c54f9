#!/bin/bash
# splinebench-cuda bspline of every binary bin/splinebench-cuda* in the carried pack, twice each,
# interleaved, on the sizes named (default: the largest 2-D and 3-D), for A/B measurements of
# kernel variants built from one source in one device call on the same card.
# Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
for run in 1 2; do
  for b in $B/splinebench-cuda*; do
    n=$(basename $b)
    for only in ${SIZES:-15257x3736 400x300x151}; do
      timeout 100 $b bspline --no-cpu --repeats 20 --only $only > $T/x.md 2>&1 || echo "$n $only failed"
      grep -E "^\| [0-9]|indirect|Laplacian|d/dx|practical" $T/x.md >> $OUT/${n}_$run.md
    done
  done
done
ls $OUT
