#!/bin/sh
# Runs the viewer once under Xvfb with several views (--layout pair|grid|wipe, --methods) and
# checks the screenshot with check_screenshots --layout. Exits 77 (ctest SKIP_RETURN_CODE)
# with the reason when xvfb-run is not installed.
# usage: run_viewer_layout.sh SPLINEVIEW CHECKER IMAGE OUTDIR LAYOUT METHODS ZOOM WIDTH HEIGHT
#                             PANEL_WIDTH [X,Y]
#   IMAGE: a file, or noise:WxH for a fresh random grey image of that size (written to OUTDIR)
#   METHODS: comma-separated, in layout order (wipe: left,right)
set -u
viewer=$1 checker=$2 image=$3 outdir=$4 layout=$5 methods=$6 zoom=$7 width=$8 height=$9
panel=${10} center=${11:-}

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
out="$outdir/out_$layout.png"
rm -f "$out"
if [ -n "$center" ]; then set -- --center "$center"; else set --; fi
xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" "$image" --mode zoom --layout "$layout" \
  --methods "$methods" --zoom "$zoom" --size "${width}x${height}" --screenshot "$out" "$@"
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: splineview --layout $layout exited with status $rc"
  exit 1
fi
if [ ! -s "$out" ]; then
  echo "FAIL: splineview --layout $layout exited 0 but wrote no $out"
  exit 1
fi
if [ -n "$center" ]; then set -- "$center"; else set --; fi
exec "$checker" --layout "$layout" "$methods" "$image" "$out" "$zoom" "$width" "$height" \
  "$panel" "$@"
