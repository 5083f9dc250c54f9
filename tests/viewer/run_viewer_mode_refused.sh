#!/bin/sh
# The modes not implemented yet (--mode rotate, --mode volume) must be refused before any
# window opens: exit status 2, one line on stderr naming the mode, no screenshot written.
# Needs no display.
# usage: run_viewer_mode_refused.sh SPLINEVIEW OUTDIR
set -u
viewer=$1 outdir=$2
mkdir -p "$outdir" || exit 1
for mode in rotate volume; do
  out="$outdir/refused_$mode.png"
  rm -f "$out" "$outdir/stderr.txt"
  "$viewer" --mode "$mode" --screenshot "$out" 2>"$outdir/stderr.txt"
  rc=$?
  cat "$outdir/stderr.txt"
  if [ $rc -ne 2 ]; then echo "FAIL: --mode $mode: exit status $rc, expected 2"; exit 1; fi
  if [ -e "$out" ]; then echo "FAIL: --mode $mode wrote a screenshot"; exit 1; fi
  if ! grep -q "mode $mode is not available" "$outdir/stderr.txt"; then
    echo "FAIL: --mode $mode: stderr does not say the mode is not available"; exit 1
  fi
  lines=$(grep -c . "$outdir/stderr.txt")
  if [ "$lines" -ne 1 ]; then echo "FAIL: expected one line on stderr, got $lines"; exit 1; fi
done
echo "ok: --mode rotate and --mode volume refused with exit status 2 and one line each"
