#!/bin/bash
# splinebench-cuda pyramid on 15257x3736 and 400x300x151 under each environment setting given as
# an argument ("" for none; e.g. "SV_PYRAMID_MIN_LANES=8 SV_PYRAMID_THREADS=256"), twice in turn, the
# same binary in one device call; prints the copy and reduce2 rows. Carry ["build-gpu/carry-me"].
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
i=0
for run in 1 2; do
  for setting in "$@"; do
    i=$((i + 1))
    for s in 15257x3736 400x300x151; do
      env $setting timeout 100 $B/splinebench-cuda pyramid --no-cpu --repeats 10 --only $s \
        --out $T/p$i$s.json > $T/p$i$s.md 2>&1
      echo "[$setting] run $run $(grep -E '^\| ' $T/p$i$s.md | grep -E 'reduce2, samples to' | cut -c1-80)"
    done
  done
done
