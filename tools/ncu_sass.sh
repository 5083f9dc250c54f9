#!/bin/bash
# Nsight Compute's per-instruction counts (SASS, with the source lines) of one kernel, for
# finding where its instructions go (carry ["build-gpu/carry-me"]; KERNEL=regex, ONLY=size of
# splinebench-cuda bspline; or CMD=the whole splinebench-cuda command line). The CSV lands in $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 250 ncu --kernel-name regex:"${KERNEL:-single_pass_kernel}" --launch-count 1 \
  --section SourceCounters --section InstructionStats -o $T/rep \
  $B/splinebench-cuda ${CMD:-bspline --only ${ONLY:-15257x3736} --no-cpu --repeats 1} > $T/ncu.txt 2>&1
echo "ncu rc=$?"; tail -3 $T/ncu.txt
ncu -i $T/rep.ncu-rep --page source --csv --print-source sass > $OUT/sass${TAG:-}.csv 2> $T/err.txt
echo "export rc=$?"; wc -l $OUT/sass${TAG:-}.csv; head -5 $T/err.txt
