#!/bin/sh
# Runs a test program on a fresh Xvfb display. Exits 77 (ctest SKIP_RETURN_CODE) with the
# reason when xvfb-run is not installed; otherwise passes the program's exit status through.
# usage: run_under_xvfb.sh PROGRAM [ARGS...]
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run not found; install the Debian packages xvfb and xauth to run GL tests"
  exit 77
fi
exec xvfb-run -a -s "-screen 0 1280x800x24" "$@"
