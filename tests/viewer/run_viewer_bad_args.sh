#!/bin/sh
# Bad command lines are refused before any window opens: exit status 2, one line on stderr
# naming the problem, no screenshot or report written, an existing file left untouched.
# Needs no display.
# usage: run_viewer_bad_args.sh SPLINEVIEW OUTDIR
set -u
viewer=$1 outdir=$2
mkdir -p "$outdir" || exit 1
out="$outdir/shot.png"
keep="$outdir/keep.json"

check() {  # check WHAT EXPECTED_TEXT ARGS...
  what=$1 expected=$2
  shift 2
  rm -f "$out" "$outdir/stderr.txt"
  echo "precious" >"$keep"
  "$viewer" "$@" 2>"$outdir/stderr.txt"
  rc=$?
  cat "$outdir/stderr.txt"
  if [ $rc -ne 2 ]; then echo "FAIL: $what: exit status $rc, expected 2"; exit 1; fi
  if [ -e "$out" ]; then echo "FAIL: $what wrote a screenshot"; exit 1; fi
  if [ "$(cat "$keep")" != "precious" ]; then echo "FAIL: $what changed $keep"; exit 1; fi
  if ! grep -q -- "$expected" "$outdir/stderr.txt"; then
    echo "FAIL: $what: stderr does not mention '$expected'"; exit 1
  fi
  lines=$(grep -c . "$outdir/stderr.txt")
  if [ "$lines" -ne 1 ]; then echo "FAIL: $what: expected one line on stderr, got $lines"; exit 1; fi
}

check "unknown mode" "mode" --mode slices --screenshot "$out"
check "report without screenshot" "--report needs --screenshot" --report "$keep"
check "headless without screenshot" "need --screenshot" --headless
check "bad layout" "layout" --layout quad --screenshot "$out"
check "bad method" "unknown method" --methods nearest,bicubic --screenshot "$out" --report "$keep"
check "bad size" "--size" --size 10x10 --screenshot "$out"
check "bad raw spec" "raw" --mode volume --raw 64x64:q7 --screenshot "$out" --report "$keep"
echo "ok: bad command lines refused with exit status 2 and one line each"
