#!/bin/bash
# splinebench-cuda bspline under environment variants (VARIANTS: space-separated, each a
# comma-separated list of VAR=value, "-" for the defaults), twice in turn, on SIZES (default:
# the largest 2-D and 3-D), in one device call; prints "variant run size operation ms" lines
# (OPS: a grep pattern of the operations, default all). Carry ["build-gpu/carry-me"].
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
for run in 1 2; do
  for v in ${VARIANTS:--}; do
    for only in ${SIZES:-15257x3736 400x300x151}; do
      env $( [ "$v" = - ] || echo "${v//,/ }" ) timeout 100 $B/splinebench-cuda bspline \
        --no-cpu --repeats 20 --only $only > $T/x.md 2>&1 || echo "$v $only failed"
      awk -F'|' -v v="$v" -v r=$run -v s=$only '/^\|/ && $5 ~ /[0-9]/ {gsub(/ +$/,"",$4); print v, r, s, $4 ":", $5}' $T/x.md \
        | grep -E "${OPS:-.}" >> $OUT/sweep.txt
    done
  done
done
sort -s -k3,3 -k4 $OUT/sweep.txt
