#!/bin/bash
# The ray-cast 3-D view's benchmark (splineview-raycast-bench, app/viewer/raycast_bench.cpp) on the
# GPU machine: the bundled MRI at 3840 x 2160, zoomed in 6 wheel notches and at the fitted view,
# every mode (MIP, isosurface, DVR) and method (cubic precise, cubic otf, trilinear, cubic
# unfiltered; each with and without empty-space skipping, "precise without skipping" is the
# bench's gpu_ms_no_skipping), plus each exact skipping refinement switched off for the A/B
# (every mode without the precise cubic's per-sample check, --no-fine-bounds; the MIP without
# the first visit, --no-first-visit, and without both). JSON and the printed tables go under
# $OUT (docs/results/raycast/ is where they belong once read).
#
# Before the benchmark it runs test_raycast (tests/viewer/test_raycast.cpp: the skipping changes
# no bit in any mode, method or variant, the grids hold the spline, the oracles) five times, each
# with fresh random volumes, on the GPU.
#
# Here (this machine), after Release builds of the bench and of the test:
#   flock /tmp/sv-build.lock cmake --build build-rel -j2 --target splineview-raycast-bench
#   cmake -S . -B build-rctest -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPLINEVIEW_CUDA=OFF \
#     -DSPLINEVIEW_FFMPEG=OFF -DSPLINEVIEW_PYTHON_PACKAGE=OFF     # once
#   flock /tmp/sv-build.lock cmake --build build-rctest -j2 --target test_raycast
#   ../shared/tools/gpu-pack          # once: .gpu/ (EGL/GL loaders, setup.sh)
#   tools/raycast_gpu_run.sh pack     # build-rel/rc_carry: both stripped, the bench's .so files
# There (the device tool, one call, about 2-4 minutes):
#   command: source .gpu/setup.sh && tools/raycast_gpu_run.sh
#   carry:   [".gpu", "build-rel/rc_carry"]
# Optional arguments there: the list of cases (test zoom6 fitted ab 1080; default all of them).
# RC_SIZE (default 3840x2160) and RC_FRAMES (default 40) change the 4K cases' size and frame
# count, for a dry run here: OUT=/tmp/rc RC_SIZE=192x108 RC_FRAMES=1 tools/raycast_gpu_run.sh
set -u
cd "$(dirname "$0")/.."
C=build-rel/rc_carry

if [ "${1:-}" = pack ]; then
  set -e
  B=build-rel/app/viewer/splineview-raycast-bench
  [ -x "$B" ] || { echo "build $B first" >&2; exit 1; }
  rm -rf "$C"
  mkdir -p "$C/rt"
  strip -o "$C/splineview-raycast-bench" "$B"
  T=build-rctest/tests/viewer/test_raycast
  if [ -x "$T" ]; then strip -o "$C/test_raycast" "$T"; else echo "no $T: the test will not run"; fi
  # Every shared library the bench needs except the C/C++ runtime the GPU machine has.
  ldd "$B" | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$C/rt/"; done
  git rev-parse --short HEAD > "$C/commit"
  git status --short -- shaders/raycast*.comp app/viewer/raycast_*.cpp app/viewer/raycast_*.h \
    >> "$C/commit"
  du -sh "$C"
  exit 0
fi

if [ ! -x "$C/splineview-raycast-bench" ]; then
  echo "no $C: run tools/raycast_gpu_run.sh pack here" >&2
  exit 1
fi
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/splineview-raycast-bench
V=$PWD/assets/mri_t1_head.nrrd
OUT=${OUT:-/tmp/raycast_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
echo "bench built from: $(tr '\n' ' ' < "$C/commit")" | tee -a "$OUT/gpu.txt"
nproc >> "$OUT/gpu.txt"
cases=${*:-test zoom6 fitted ab 1080}
S=${RC_SIZE:-3840x2160}
run() {  # name, then bench arguments
  local name=$1
  shift
  echo "== $name: $*"
  timeout 300 "$B" "$V" --frames "${RC_FRAMES:-40}" --out "$OUT/$name.json" "$@" > "$OUT/$name.txt" 2>&1
  echo "rc=$?"
  cat "$OUT/$name.txt"
}
for c in $cases; do
  case $c in
    test)
      if [ -x "$C/test_raycast" ]; then
        timeout 120 "$C/test_raycast" --gtest_repeat=5 > "$OUT/test_raycast.txt" 2>&1
        echo "test_raycast rc=$?"
        grep -E "^GL:|FAILED|Failure|Which is|variant:|skipping changed" "$OUT/test_raycast.txt" |
          sort | uniq -c | head -30
        grep -E "samples fetched|Bezier" "$OUT/test_raycast.txt" | head -20
      fi
      ;;
    zoom6) run 4k_zoom6 --size "$S" --zoom 6 ;;
    fitted) run 4k --size "$S" ;;
    ab)
      run 4k_zoom6_no_fine --size "$S" --zoom 6 --no-fine-bounds
      run 4k_zoom6_mip_no_first --size "$S" --zoom 6 --modes mip --no-first-visit
      run 4k_zoom6_mip_cells_only --size "$S" --zoom 6 --modes mip --no-fine-bounds \
        --no-first-visit
      ;;
    1080) run 1080 --size 1920x1080 ;;
    *) echo "unknown case $c (test zoom6 fitted ab 1080)" ;;
  esac
done
# The short table last: every case's median ms (skip / no skip), fps, samples per ray, changed.
/usr/bin/env python3 - "$OUT" << 'EOF'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    d = json.load(open(f))
    print(os.path.basename(f), d["gl"].split(",")[0], d["size"], "zoom",
          d["camera"]["zoom_notches"], d.get("skipping", {}))
    for c in d["cases"]:
        s = c.get("mip_samples_per_ray")
        it = c.get("mip_iterations_per_ray") or float("nan")
        extra = "" if s is None else " samples/ray %.1f iterations %.1f" % (s, it)
        print("  %-4s %-16s %8.2f ms (%6.1f fps)  no skip %8.2f  changed %d%s" % (
            c["mode"], c["method"], c["gpu_ms_median"], c["fps"], c["gpu_ms_no_skipping"],
            c["pixels_changed_by_skipping"], extra))
EOF
