#!/bin/sh
# Runs the viewer under Xvfb twice (nearest and prefiltered cubic, same image, zoom and size),
# then checks the two screenshots with check_screenshots. Exits 77 (ctest SKIP_RETURN_CODE)
# with the reason when xvfb-run is not installed.
# usage: run_viewer_screenshots.sh SPLINEVIEW CHECKER IMAGE OUTDIR ZOOM WIDTH HEIGHT PANEL_WIDTH [X,Y]
#   IMAGE: a file, or noise:WxH for a fresh random grey image of that size (written to OUTDIR)
#   X,Y: image position at the centre of the view (--center); default: the image centre
set -u
viewer=$1 checker=$2 image=$3 outdir=$4 zoom=$5 width=$6 height=$7 panel=$8 center=${9:-}

if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run not found; install the Debian packages xvfb and xauth to run the viewer test"
  exit 77
fi
mkdir -p "$outdir" || exit 1
case "$image" in
  noise:*)
    size=${image#noise:}
    image="$outdir/noise.png"
    "$checker" --make-noise "$image" "${size%x*}" "${size#*x}" || exit 1
    ;;
esac
for method in nearest cubic; do
  out="$outdir/out_$method.png"
  rm -f "$out"
  if [ -n "$center" ]; then set -- --center "$center"; else set --; fi
  xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" "$image" --method "$method" --zoom "$zoom" \
    --size "${width}x${height}" --screenshot "$out" "$@"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: splineview --method $method exited with status $rc"
    exit 1
  fi
  if [ ! -s "$out" ]; then
    echo "FAIL: splineview --method $method exited 0 but wrote no $out"
    exit 1
  fi
done
if [ -n "$center" ]; then set -- "$center"; else set --; fi
exec "$checker" "$image" "$outdir/out_nearest.png" "$outdir/out_cubic.png" "$zoom" "$width" \
  "$height" "$panel" "$@"
