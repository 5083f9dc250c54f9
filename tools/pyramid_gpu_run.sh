#!/bin/bash
# Issue 17's CUDA pyramid on the GPU machine, in one call (the `run` tool: carry
# ["build-gpu/carry-pyramid"], command "bash tools/pyramid_gpu_run.sh"). build-gpu/carry-pyramid
# holds bins.tar.xz (stripped test_cuda, splinetool and splinebench-cuda of build-gpu, sm_90) and
# rt.tar.xz (their runtime .so files); make it here with "bash tools/pyramid_gpu_run.sh pack".
# On the GPU: test_cuda's CudaPyramid.* (CUDA against the CPU), splinebench-cuda pyramid (with
# the copy floor of the same run; again with SV_PYRAMID_ONE_SEGMENT=1, whole lines per thread), cli_bspline_cuda's reduce/expand cases (splinetool --backend
# cuda against cpu), compute-sanitizer memcheck on CudaPyramid.* (SV_PYRAMID_SMALL=1). Full logs
# and the JSON land in $OUT; a short summary is printed.
set -u
cd "$(dirname "$0")/.."
C=build-gpu/carry-pyramid
if [ "${1:-}" = pack ]; then
  rm -rf $C && mkdir -p $C/bin && mkdir -p $C/rt
  cp build-gpu/tests/cuda/test_cuda build-gpu/app/splinetool/splinetool \
    build-gpu/app/bench_cuda/splinebench-cuda $C/bin/ && strip $C/bin/*
  tar cJf $C/bins.tar.xz -C $C bin && rm -rf $C/bin
  cp build-gpu/carry-me/rt.tar.xz $C/ 2>/dev/null || tar cJf $C/rt.tar.xz -C build-gpu/carry rt
  rmdir $C/rt
  du -sh $C
  exit 0
fi
tar xJf $C/bins.tar.xz -C $C && tar xJf $C/rt.tar.xz -C $C || exit 1
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc
timeout 120 $B/test_cuda --gtest_filter='CudaPyramid*' > $OUT/test_pyramid.txt 2>&1
echo "test_cuda CudaPyramid rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|cuda pyramid \]|SKIPPED|tests ran" $OUT/test_pyramid.txt | head -30
grep -m 8 -A8 "Failure" $OUT/test_pyramid.txt | head -70
timeout 90 $B/splinebench-cuda pyramid --repeats 10 --out $OUT/pyramid.json > $OUT/pyramid.md 2> $OUT/pyramid.err
echo "splinebench-cuda pyramid rc=$?"; tail -3 $OUT/pyramid.err; cat $OUT/pyramid.md
SV_PYRAMID_ONE_SEGMENT=1 timeout 60 $B/splinebench-cuda pyramid --repeats 10 --no-cpu --out $OUT/pyramid_whole_lines.json > $OUT/pyramid_whole_lines.md 2>&1
echo "same, SV_PYRAMID_ONE_SEGMENT=1 (a thread per whole line) rc=$?"; grep -v "^$" $OUT/pyramid_whole_lines.md | tail -10
PYTHONUNBUFFERED=1 timeout 90 python3 tests/cli/test_bspline_cuda_cli.py $B/splinetool device pyramid > $OUT/cli.txt 2>&1
echo "cli_bspline_cuda (pyramid) rc=$?"; grep -E "FAIL|measured|passed|failures|SKIP" $OUT/cli.txt | head -20
SV_PYRAMID_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaPyramid.*' > $OUT/memcheck.txt 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.txt | head -5
