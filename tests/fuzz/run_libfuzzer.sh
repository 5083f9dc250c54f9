#!/bin/sh
# Runs every libFuzzer target of a SPLINEVIEW_FUZZ=ON build for SECONDS each, starting from the
# seed corpus (copied into scratch folders under WORK, which keep what the fuzzer adds), and
# prints each target's final stats line and whether it found anything.
#   tests/fuzz/run_libfuzzer.sh BUILD_DIR [SECONDS=60] [WORK=/tmp/sv-libfuzzer]
set -eu
build=${1:?usage: run_libfuzzer.sh BUILD_DIR [SECONDS] [WORK]}
secs=${2:-60}
work=${3:-/tmp/sv-libfuzzer}
seeds=$(cd "$(dirname "$0")/seeds" && pwd)
bin="$build/tests/fuzz"

mkdir -p "$work"
prefixed() {  # prefixed DIR BYTE FILE...: copies each FILE into DIR with BYTE in front
  dir=$1; byte=$2; shift 2
  for f in "$@"; do { printf "$byte"; cat "$f"; } > "$dir/$(basename "$f")"; done
}
mkdir -p "$work/npy" "$work/nrrd" "$work/nifti" "$work/image" "$work/raw" "$work/tiff" \
  "$work/dicom" "$work/batch_words"
prefixed "$work/npy" '\000' "$seeds"/f32.npy "$seeds"/f64.npy "$seeds"/u8.npy "$seeds"/u16.npy
prefixed "$work/npy" '\001' "$seeds"/f32_channels.npy
prefixed "$work/nrrd" '\000' "$seeds"/*.nrrd
prefixed "$work/nrrd" '\001' "$seeds"/detached.nhdr
cp "$seeds"/*.nii "$seeds"/*.nii.gz "$work/nifti/"
# NIfTI vector images (NiftyReg control-point grids, make_vector_seeds.py) for load_nifti_vector.
cp "$seeds"/../seeds_vector/* "$work/nifti/"
for f in "$seeds"/*.png "$seeds"/*.jpg "$seeds"/*.bmp "$seeds"/*.tga "$seeds"/*.gif \
         "$seeds"/*.hdr "$seeds"/*.pgm "$seeds"/*.ppm; do cp "$f" "$work/image/"; done
{ printf '2x5x6:u16:be\n'; cat "$seeds/u16be.dat"; } > "$work/raw/u16be"
cp "$seeds"/*.tif "$work/tiff/"
cp "$seeds"/*.dcm "$work/dicom/"
cp "$seeds"/../seeds_batch/* "$work/batch_words/"
{ printf '6x5:f32:offset=16\n'; cat "$seeds/f32_offset.dat"; } > "$work/raw/f32_offset"

status=0
for t in npy nrrd nifti image raw tiff dicom batch_words; do
  log="$work/$t.log"
  rm -f "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-timeout-* "$work/$t"-oom-*
  set +e
  "$bin/fuzz_$t" "$work/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$work/$t-" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p')
  corpus=$(ls "$work/$t" | wc -l)
  found=$(ls "$work" | grep -c "^$t-" || true)
  echo "fuzz_$t: ${secs} s, ${execs:-?} executions, ${cov:-?}, corpus $corpus files, exit $rc, findings $found"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    grep -E 'ERROR|SUMMARY|==[0-9]+==' "$log" | head -5
  fi
done
exit $status
