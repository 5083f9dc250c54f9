#!/bin/bash
# Nsight Compute on the pyramid's fused pass kernel (tile_kernel), the baseline binary
# (bin/splinebench-cuda-base) against this code: the first COUNT launches (default 2: reduce2's
# passes along x and y of 15257x3736) with their time, warp instructions, registers, shared
# memory and occupancy. SASS=1 also writes the new binary's per-instruction CSV to $OUT.
# Carry ["build-gpu/carry-me"].
set -u
source "$(dirname "$0")/carry_me.sh"
M=gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_dynamic,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,smsp__cycles_active.avg,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
for bin in splinebench-cuda-base splinebench-cuda; do
  timeout 200 ncu --kernel-name regex:tile_kernel --launch-count ${COUNT:-2} --metrics $M --csv \
    $B/$bin pyramid --no-cpu --repeats 1 > $T/$bin.csv 2> $T/$bin.err
  echo "== $bin rc=$?"
  python3 - "$T/$bin.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; i = {h: k for k, h in enumerate(hdr)}
for r in rows[1:]:
    if r[i["Metric Name"]].startswith("launch__") or True:
        print(r[i["ID"]], r[i["Metric Name"]], r[i["Metric Value"]])
PY
done
if [ "${SASS:-0}" = 1 ]; then
  timeout 200 ncu --kernel-name regex:tile_kernel --launch-count 1 --section SourceCounters \
    -o $T/rep $B/splinebench-cuda pyramid --no-cpu --repeats 1 > $T/ncu.txt 2>&1
  ncu -i $T/rep.ncu-rep --page source --csv --print-source sass > $OUT/sass_pyr.csv 2> /dev/null
  echo "sass rc=$?"
  timeout 200 ncu --kernel-name regex:tile_kernel --launch-count 1 --section SourceCounters \
    -o $T/repb $B/splinebench-cuda-base pyramid --no-cpu --repeats 1 > $T/ncub.txt 2>&1
  ncu -i $T/repb.ncu-rep --page source --csv --print-source sass > $OUT/sass_pyr_base.csv 2> /dev/null
  echo "sass base rc=$?"
fi
