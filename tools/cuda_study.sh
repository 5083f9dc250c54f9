#!/bin/sh
# The CUDA benchmark study in one go, for a machine with a CUDA device (see docs/BENCHMARKS.md):
#   tools/cuda_study.sh BIN_DIR OUT_DIR [--quick]
# BIN_DIR holds splinebench-cuda; OUT_DIR receives the JSON reports and the Markdown tables
# (prefilter.md, reconstruct.md, peers.md). The peers need python3 with numpy and scipy (and cupy
# for the GPU peer).
set -eu
bin=$1
out=$2
quick=${3:-}
mkdir -p "$out"
here=$(dirname "$0")
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpu.csv" 2>/dev/null || true
"$bin/splinebench-cuda" prefilter $quick --out "$out/prefilter.json" | tee "$out/prefilter.md"
"$bin/splinebench-cuda" reconstruct $quick --out "$out/reconstruct.json" | tee "$out/reconstruct.md"
python3 "$here/cuda_peers.py" $quick --out "$out/peers.json" | tee "$out/peers.md"
