# Sourced by the device scripts that carry build-gpu/carry-me (bins.tar.xz: stripped test_cuda,
# splinetool and splinebench-cuda of build-gpu; rt.tar.xz: their runtime libraries; repack with
# the build's binaries before a call: tools/pack_carry_me.sh [baseline binaries]): unpacks them,
# goes to the repository root and sets B (the binaries), LD_LIBRARY_PATH and T (a folder for
# logs that stay on the machine: the device tool brings back only a few files), and prints the
# GPU.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
C=build-gpu/carry-me
tar xJf $C/bins.tar.xz -C $C && tar xJf $C/rt.tar.xz -C $C || exit 1
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
T=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

# The pyramid scripts' checks: test_cuda's CudaPyramid.* (the CPU references), its summary lines
# and first failures, then compute-sanitizer memcheck and racecheck on the tests matching $1
# (small shapes, SV_PYRAMID_SMALL=1; skipped with SKIP_SANITIZERS=1), outputs under $OUT.
# $2: the tests' time limit in seconds (default 240).
pyramid_checks() {
  timeout "${2:-240}" $B/test_cuda --gtest_filter='CudaPyramid.*' > $OUT/test.txt 2>&1
  echo "test rc=$?"
  grep -E "PASSED|FAILED|cuda pyramid \]" $OUT/test.txt | head -30
  grep -m 6 -A8 "Failure" $OUT/test.txt | head -50
  [ "${SKIP_SANITIZERS:-0}" = 1 ] && return
  local tool
  for tool in memcheck racecheck; do
    SV_PYRAMID_SMALL=1 timeout 150 compute-sanitizer --tool $tool --print-limit 10 $B/test_cuda \
      --gtest_filter="$1" > $OUT/$tool.txt 2>&1
    echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $OUT/$tool.txt | head -3
  done
}
