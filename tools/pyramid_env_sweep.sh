#!/bin/bash
# splinebench-cuda pyramid on 15257x3736 and 400x300x151 under each environment setting given as
# an argument ("" for none; e.g. "SV_PYRAMID_MIN_LANES=8 SV_PYRAMID_THREADS=256"), twice in turn, the
# same binary in one device call; prints the reduce2 rows, or with PYR_OP set (e.g. PYR_OP=0.71)
# only that operation's (its --op filter). Carry ["build-gpu/carry-me"].
set -u
OP=${PYR_OP:-reduce2, samples to}
FILTER=()
[ -n "${PYR_OP:-}" ] && FILTER=(--op "$PYR_OP")
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
i=0
for run in 1 2; do
  for setting in "$@"; do
    i=$((i + 1))
    for s in 15257x3736 400x300x151; do
      env $setting timeout 100 $B/splinebench-cuda pyramid --no-cpu --repeats 10 --only $s \
        "${FILTER[@]}" --out $T/p$i$s.json > $T/p$i$s.md 2>&1
      echo "[$setting] run $run $(grep -E '^\| ' $T/p$i$s.md | grep -F "$OP" | cut -c1-80)"
    done
  done
done
