#!/bin/bash
# Issue 17's CUDA pyramid on the GPU machine, in one call (the `run` tool: carry
# ["build-gpu/carry-pyramid"], command "bash tools/pyramid_gpu_run.sh"). build-gpu/carry-pyramid
# holds bins.tar.xz (stripped test_cuda, splinetool and splinebench-cuda of build-gpu, sm_90) and
# rt.tar.xz (their runtime .so files); make it here with "bash tools/pyramid_gpu_run.sh pack".
# On the GPU: test_cuda's CudaPyramid.* (CUDA against the CPU), splinebench-cuda pyramid (with
# the copy floor of the same run; again with SV_PYRAMID_FUSED=0, the separate kernels, and with
# tighter bounds on the fused kernel's blocks, PYRAMID_VARIANTS="KB THREADS ..."),
# cli_bspline_cuda's reduce/expand cases (splinetool --backend cuda against cpu),
# compute-sanitizer memcheck on CudaPyramid.* (SV_PYRAMID_SMALL=1; the host-only test left out).
# Full logs and the JSON land in $OUT (8 files, what the run tool returns); a short summary is
# printed.
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
timeout 150 $B/test_cuda --gtest_filter='CudaPyramid*' > $OUT/test_pyramid.txt 2>&1
echo "test_cuda CudaPyramid rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|cuda pyramid \]|SKIPPED|tests ran" $OUT/test_pyramid.txt | head -30
grep -m 8 -A8 "Failure" $OUT/test_pyramid.txt | head -70
timeout 90 $B/splinebench-cuda pyramid --repeats 10 --out $OUT/pyramid.json > $OUT/pyramid.md 2> $OUT/variants.md
echo "splinebench-cuda pyramid rc=$?"; tail -3 $OUT/variants.md; cat $OUT/pyramid.md
# The separate kernels (SV_PYRAMID_FUSED=0, the design before the fused pass kernel), and the
# fused kernel with tighter bounds on a block's shared memory (KB) and threads than its defaults
# (200, 512), GPU only, into variants.md.
SV_PYRAMID_FUSED=0 timeout 60 $B/splinebench-cuda pyramid --repeats 10 --no-cpu --out $OUT/separate_kernels.json > $OUT/separate.md 2>&1
echo "same, SV_PYRAMID_FUSED=0 (separate kernels) rc=$?"; grep "^| [0-9]" $OUT/separate.md
for v in ${PYRAMID_VARIANTS:-"200 64" "200 128" "200 256" "48 512" "96 512"}; do
  set -- $v
  echo "## SV_PYRAMID_TILE_KB=$1 SV_PYRAMID_THREADS=$2" >> $OUT/variants.md
  SV_PYRAMID_TILE_KB=$1 SV_PYRAMID_THREADS=$2 timeout 40 $B/splinebench-cuda pyramid --repeats 5 --no-cpu \
    --out /tmp/v.json >> $OUT/variants.md 2>&1
  echo "tile $1 KB, $2 threads rc=$?"; grep "^| [0-9]" $OUT/variants.md | tail -10 | cut -d'|' -f2,4,5,7
done
PYTHONUNBUFFERED=1 timeout 90 python3 tests/cli/test_bspline_cuda_cli.py $B/splinetool device pyramid > $OUT/cli.txt 2>&1
echo "cli_bspline_cuda (pyramid) rc=$?"; grep -E "FAIL|measured|passed|failures|SKIP" $OUT/cli.txt | head -20
SV_PYRAMID_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaPyramid.*:-CudaPyramid.FusedTiles*' > $OUT/memcheck.txt 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.txt | head -5
