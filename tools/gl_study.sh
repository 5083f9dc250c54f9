#!/usr/bin/env bash
# gl_study.sh: the whole GL accuracy and speed study (splinebench accuracy, table1, probe,
# rotation, speed) from an existing build, writing one JSON report per subcommand plus the
# Markdown tables (study.md) and logs under OUT_DIR. Builds nothing.
#
# Usage: tools/gl_study.sh BUILD_DIR OUT_DIR [--quick]
#   BUILD_DIR  a configured and built tree holding app/bench/splinebench (and app/splinetool/
#              splinetool, whose `info --json` records the machine)
#   --quick    for software renderers (Mesa llvmpipe): `speed` runs with --quick (480x270 ->
#              960x540 and 64^3 -> 256^2, 10 repeats); the other subcommands keep their full
#              sizes, which take under 20 s each on llvmpipe with 2 cores
# On the GPU machine:  source .gpu/setup.sh && tools/gl_study.sh build-dev "$OUT"
# (under 5 minutes on an H100). Exit status: 0 when every subcommand succeeded.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR [--quick]" >&2
  exit 2
fi
build=$1
out=$2
shift 2
quick=()
for a in "$@"; do
  case "$a" in
    --quick) quick=(--quick) ;;
    *) echo "$0: unknown option '$a'" >&2; exit 2 ;;
  esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench="$build/app/bench/splinebench"
tool="$build/app/splinetool/splinetool"
if [ ! -x "$bench" ]; then
  echo "$0: no splinebench at $bench (build the target splinebench first)" >&2
  exit 2
fi
mkdir -p "$out"
md="$out/study.md"
: > "$md"

{
  echo "# GL study ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo
  echo "host: $(uname -n), $(nproc) CPU threads; build: $build; speed: ${quick[*]:-full size}"
  echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
} | tee -a "$md"
if [ -x "$tool" ]; then
  "$tool" info --json > "$out/info.json" 2> "$out/info.log" || true
  "$tool" info 2>/dev/null | sed -n '/^GL:/p' | tee -a "$md"
fi

failed=()
for sub in probe table1 accuracy rotation speed; do
  start=$(date +%s)
  echo "== splinebench $sub" >&2
  extra=()
  [ "$sub" = speed ] && extra=("${quick[@]}")
  if "$bench" "$sub" --out "$out/$sub.json" --assets "$root/assets" "${extra[@]}" \
      > "$out/$sub.md" 2> "$out/$sub.log"; then
    status=ok
  else
    status="FAILED ($(tail -n 1 "$out/$sub.log"))"
    failed+=("$sub")
  fi
  secs=$(( $(date +%s) - start ))
  { cat "$out/$sub.md"; echo; echo "($sub: $status, ${secs} s)"; } | tee -a "$md"
done

echo
if [ ${#failed[@]} -gt 0 ]; then
  echo "gl_study: failed: ${failed[*]}; reports under $out" >&2
  exit 1
fi
echo "gl_study: all subcommands done; reports under $out" >&2
