#!/bin/sh
# A file that cannot be loaded, in --screenshot mode: the viewer must exit non-zero, print
# one line on stderr naming the file, and write no screenshot. Exits 77 (skip) without xvfb-run.
# usage: run_viewer_bad_file.sh SPLINEVIEW OUTDIR
set -u
viewer=$1 outdir=$2
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run not found; install the Debian packages xvfb and xauth to run the viewer test"
  exit 77
fi
mkdir -p "$outdir" || exit 1
missing="$outdir/no_such_image.png"
out="$outdir/bad_file_screenshot.png"
rm -f "$out" "$outdir/stderr.txt"
# Only the viewer's stderr is captured: xvfb-run may add its own lines (e.g. a clean-up race
# between parallel tests), which say nothing about the viewer.
xvfb-run -a -s "-screen 0 1280x800x24" sh -c '"$1" "$2" --screenshot "$3" 2>"$4"' sh \
  "$viewer" "$missing" "$out" "$outdir/stderr.txt"
rc=$?
cat "$outdir/stderr.txt"
if [ $rc -eq 0 ]; then echo "FAIL: exit status 0 for a missing file"; exit 1; fi
if [ -e "$out" ]; then echo "FAIL: a screenshot was written although loading failed"; exit 1; fi
if ! grep -q "no_such_image.png" "$outdir/stderr.txt"; then
  echo "FAIL: stderr does not name the file"; exit 1
fi
lines=$(grep -c . "$outdir/stderr.txt")
if [ "$lines" -ne 1 ]; then echo "FAIL: expected one line on stderr, got $lines"; exit 1; fi
echo "ok: exit status $rc, one line on stderr naming the file"
