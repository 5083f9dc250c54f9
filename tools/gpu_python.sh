#!/usr/bin/env bash
# Builds the Python package with its CUDA module on the GPU machine (package-only: no viewer or
# loader libraries needed there) for that machine's python3, then runs the GPU tests and the
# benchmark against cupyx. Run from the repository root on the GPU machine:
#   tools/gpu_python.sh [test|bench|memcheck|bspline|all]   (results under $OUT when set)
# build: only the build. bspline: issue 17's functions on CuPy arrays only (tests/python/test_bspline_ops_gpu.py and
# tools/bench_bspline_ops_gpu.py); test, memcheck and all run that test file too.
set -euo pipefail
what=${1:-all}
out=${OUT:-/tmp/sv-gpu-out}
mkdir -p "$out"
build=${SV_PKG_BUILD:-/tmp/sv-pkg}  # another folder for another source tree (e.g. a snapshot)
py=$(command -v python3)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPLINEVIEW_PACKAGE_ONLY=ON \
    -DSPLINEVIEW_BUILD_TESTS=OFF -DPython3_EXECUTABLE="$py" \
    -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)" > "$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; exit 1; }
fi
start=$(date +%s)
cmake --build "$build" -j"$(nproc)" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "build (incremental): $(( $(date +%s) - start )) s"
export PYTHONPATH="$build/python:$PWD/tests/python"
# Pure-Python packages carried from this project's Debian machine (dask, distributed and their
# pure-Python dependencies) where the GPU machine's Python lacks them: see docs/BENCHMARKS.md.
# Debian's dask 2022.12 predates numpy 2: tools/numpy2_dask_shim restores the few numpy names
# it still uses (aliases only), for the dask-on-CuPy check.
if [ -d .pydeps ]; then
  export PYTHONPATH="$PWD/tools/numpy2_dask_shim:$PYTHONPATH:$PWD/.pydeps"
fi
status=0
if [ "$what" = test ] || [ "$what" = all ]; then
  "$py" tests/python/test_gpu.py 2>&1 | tee "$out/test_gpu.txt" | tail -40
fi
if [ "$what" = test ] || [ "$what" = bspline ] || [ "$what" = all ]; then
  "$py" tests/python/test_bspline_ops_gpu.py 2>&1 | tee "$out/test_bspline_ops_gpu.txt" |
    tail -30 || status=1
fi
if [ "$what" = memcheck ] || [ "$what" = all ]; then
  SPLINEVIEW_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --print-limit 20 \
    "$py" tests/python/test_gpu.py > "$out/memcheck.txt" 2>&1 || true
  tail -8 "$out/memcheck.txt"
  SPLINEVIEW_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --print-limit 20 \
    "$py" tests/python/test_bspline_ops_gpu.py > "$out/memcheck_bspline.txt" 2>&1 || true
  tail -8 "$out/memcheck_bspline.txt"
fi
if [ "$what" = bspline ]; then
  "$py" tools/bench_bspline_ops_gpu.py --json "$out/bench_bspline_ops_gpu.json" |
    tee "$out/bench_bspline_ops_gpu.txt" || status=1
fi
if [ "$what" = dask ]; then
  sched=distributed
  "$py" -c "import distributed" 2>/dev/null || sched=processes
  "$py" tools/bench_dask.py --workers 1,2,4,8,16 --size 384 --chunk 96 --scheduler "$sched" \
    --store npy --json "$out/bench_dask.json" 2>&1 | tee "$out/bench_dask.txt" | tail -20
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  "$py" tools/bench_python_gpu.py --json "$out/bench_python_gpu.json" | tee "$out/bench.txt"
fi
exit $status
