#!/bin/bash
# The 2-D one pass's variants by environment (VARIANTS: space-separated, each a comma-separated
# list of VAR=value, "-" for the defaults) against a baseline binary
# (bin/splinebench-cuda-0base in the carried pack), twice in turn, in one device call:
# splinebench-cuda bspline on SIZES; test_cuda's one-pass tests under every variant (and
# compute-sanitizer memcheck, small shapes, unless SKIP_SANITIZERS=1). Carry
# ["build-gpu/carry-me"]; tables in $OUT/ab.md.
set -u
source "$(dirname "$0")/carry_me.sh"  # B, T, LD_LIBRARY_PATH; prints the GPU
for v in ${VARIANTS:--}; do
  env $( [ "$v" = - ] || echo "${v//,/ }" ) timeout 200 $B/test_cuda \
    --gtest_filter="${TESTS:-CudaPrefilter.OnePass*:CudaBspline.DirectTransform*}" > $T/t.txt 2>&1
  echo "test [$v] rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/t.txt | tr '\n' ' ')"
  grep -m 3 -A6 "Failure" $T/t.txt | head -20
  [ "${SKIP_SANITIZERS:-0}" = 1 ] && continue
  env $( [ "$v" = - ] || echo "${v//,/ }" ) SV_ONEPASS_SMALL=1 timeout 200 compute-sanitizer \
    --tool memcheck --print-limit 5 $B/test_cuda --gtest_filter='CudaPrefilter.OnePass*' > $T/m.txt 2>&1
  echo "memcheck [$v] rc=$? $(grep -E 'ERROR SUMMARY' $T/m.txt)"
done
for run in 1 2; do
  for v in base ${VARIANTS:--}; do
    b=$B/splinebench-cuda; [ $v = base ] && b=$B/splinebench-cuda-0base
    for only in ${SIZES:-7629x1868 15257x3736}; do
      env $( [ "$v" = - ] || [ "$v" = base ] || echo "${v//,/ }" ) timeout 100 $b bspline \
        --no-cpu --repeats 20 --only $only > $T/x.md 2>&1 || echo "$v $only failed"
      grep -E "direct lambda|^\| [0-9]" $T/x.md | sed "s/^/[$v run $run] /" >> $OUT/ab.md
    done
  done
done
cat $OUT/ab.md | grep -E "direct lambda" | cut -c1-120
