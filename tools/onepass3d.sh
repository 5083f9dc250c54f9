#!/bin/bash
# The experimental one-pass 3-D prefilter (SV_ONE_PASS_3D=1, cuda/src/prefilter.cu) in one device
# call: its tests and the fused pass's (test_cuda), compute-sanitizer memcheck on its small-shape
# test, then splinebench-cuda prefilter on 512x512x300 (or the cases ONLY names) with the default path (fused y/x pass, then
# z) and with the one pass, interleaved, for each setting in SETTINGS (env assignments joined by
# commas, "-" for none: batch SV_ONE_PASS_3D_BATCH, lags SV_ONE_PASS_3D_LAG_Y / _LAG_Z).
# Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
timeout 240 $B/test_cuda --gtest_filter="${TESTS:-CudaPrefilter.OnePass3D*:CudaPrefilter.Fused*}" \
  > $OUT/test.txt 2>&1; echo "test rc=$?"
grep -E "^\[  PASSED|^\[  FAILED|tests ran" $OUT/test.txt | head; grep -m 4 -A8 "Failure" $OUT/test.txt | head -40
if [ -z "${NO_MEMCHECK:-}" ]; then
  timeout 200 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
    --gtest_filter='CudaPrefilter.OnePass3DEquals*:CudaPrefilter.OnePass3DApplies*' > $T/memcheck.txt 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" $T/memcheck.txt
fi
for run in 1 2; do
  for only in ${ONLY:-512x512x300}; do
  for s in ${SETTINGS:--}; do
    for on in 0 1; do
      env_args=(SV_ONE_PASS_3D=$on)
      [ "$s" != "-" ] && IFS=, read -ra extra <<< "$s" && env_args+=("${extra[@]}")
      out=$(env "${env_args[@]}" timeout 120 $B/splinebench-cuda prefilter --only "$only" \
        --repeats ${REPEATS:-20} 2>/dev/null)
      line="$(echo "$out" | grep -F "| $only" | head -1) $(echo "$out" | grep device-to-device)"
      total=$(echo "$line" | awk -F'|' '{print $5}')
      copy=$(echo "$line" | grep -oE "copy \| [0-9.]+ ms" )
      echo "run $run $only setting $s one_pass=$on total_ms=$total ($copy)" | tee -a $OUT/summary.txt
    done
  done
  done
done
