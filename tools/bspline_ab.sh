#!/bin/bash
# The filters' kernels side by side in one device call on the same card: splinebench-cuda
# bspline with SV_STENCIL_KERNEL=direct (the former default: the tile kernel, and the direct
# kernel for 2-D one-term filters), with SV_STREAM_REGISTERS=1 (the streamed kernel holding the
# next plane in registers) and with the default (the streamed kernel, planes by cp.async),
# then test_cuda's CudaBspline.* and compute-sanitizer memcheck on the streamed kernel's test.
# Carry ["build-gpu/carry-me"]; outputs under $OUT.
set -u
cd "$(dirname "$0")/.."
C=build-gpu/carry-me
tar xJf $C/bins.tar.xz -C $C && tar xJf $C/rt.tar.xz -C $C || exit 1
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 150 $B/test_cuda --gtest_filter='CudaBspline.*' > $OUT/test.txt 2>&1; echo "test rc=$?"
grep -E "PASSED|FAILED|bound    \]" $OUT/test.txt | head -30
grep -m 6 -A6 "Failure" $OUT/test.txt | head -40
# name kernel registers stages waves
while read -r name kern reg st wv; do
  SV_STENCIL_KERNEL=$kern SV_STREAM_REGISTERS=$reg SV_STREAM_STAGES=$st SV_STREAM_WAVES=$wv \
    timeout 150 $B/splinebench-cuda bspline --no-cpu --repeats 20 \
    --out $OUT/bspline_$name.json > $OUT/bspline_$name.md 2>/dev/null
  echo "$name rc=$?"; grep -E "indirect|Laplacian|d/dx" $OUT/bspline_$name.md | awk -F'|' '{printf "%s:%s%s ", $4, $5, $6} END {print ""}'
done <<'LIST'
direct direct 0 4 2
registers stream 1 4 2
stages3 stream 0 3 2
stages4 stream 0 4 2
stages6 stream 0 6 2
waves1 stream 0 4 1
waves4 stream 0 4 4
LIST
timeout 200 compute-sanitizer --tool memcheck --print-limit 10 $B/test_cuda \
  --gtest_filter='CudaBspline.Streamed*:CudaBspline.HostConveniences*' > $OUT/memcheck.txt 2>&1
echo "memcheck rc=$?"; tail -3 $OUT/memcheck.txt
