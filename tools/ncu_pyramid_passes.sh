#!/bin/bash
# Nsight Compute on the pyramid's fused pass kernel for one size (ONLY, default 400x300x151):
# the first COUNT tile_kernel launches (default 3: reduce2's passes) of BIN (default
# splinebench-cuda; also bin/splinebench-cuda-base with BASE=1), their time, instructions,
# issue activity, occupancy and the launch shape. SASS=1: the per-instruction CSV of launch
# SASS_LAUNCH (default 0) to $OUT/sass_pass$TAG.csv. Carry ["build-gpu/carry-me"].
set -u
source "$(dirname "$0")/carry_me.sh"
M=gpu__time_duration.sum,smsp__inst_executed.sum,launch__block_size,launch__grid_size,launch__shared_mem_per_block_dynamic,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,dram__bytes.sum
bins=${BIN:-splinebench-cuda}; [ "${BASE:-0}" = 1 ] && bins="splinebench-cuda-base $bins"
for bin in $bins; do
  timeout 200 ncu --kernel-name regex:tile_kernel --launch-count ${COUNT:-3} --metrics $M --csv \
    $B/$bin pyramid --no-cpu --repeats 1 --only ${ONLY:-400x300x151} > $T/$bin.csv 2> $T/$bin.err
  echo "== $bin rc=$?"; tail -2 $T/$bin.err
  python3 - "$T/$bin.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; i = {h: k for k, h in enumerate(hdr)}
cur = None
for r in rows[1:]:
    if r[i["ID"]] != cur:
        cur = r[i["ID"]]; print("launch", cur, r[i["Kernel Name"]][:60])
    print("   ", r[i["Metric Name"]], r[i["Metric Value"]])
PY
done
if [ "${SASS:-0}" = 1 ]; then
  timeout 200 ncu --kernel-name regex:tile_kernel --launch-skip ${SASS_LAUNCH:-0} --launch-count 1 \
    --section SourceCounters -o $T/rep $B/${BIN:-splinebench-cuda} pyramid --no-cpu --repeats 1 \
    --only ${ONLY:-400x300x151} > $T/ncu.txt 2>&1
  ncu -i $T/rep.ncu-rep --page source --csv --print-source sass > $OUT/sass_pass${TAG:-}.csv 2> /dev/null
  echo "sass rc=$?"
fi
