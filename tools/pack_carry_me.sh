#!/bin/bash
# Packs build-gpu/carry-me for the device scripts (tools/carry_me.sh unpacks it there): bins.tar.xz
# with stripped test_cuda, splinetool and splinebench-cuda of build-gpu (plus any extra binaries
# given as arguments, e.g. a baseline splinebench-cuda-base, copied under their own names), and
# rt.tar.xz with the runtime libraries they link beyond the C library (the GPU machine is bare).
set -euo pipefail
cd "$(dirname "$0")/.."
C=build-gpu/carry-me
rm -rf "$C/bin" "$C/rt"
mkdir -p "$C/bin" "$C/rt"
# NO_TOOL=1 leaves splinetool out (the pack and the working tree must stay under the device's
# 64 MiB together).
TOOL=build-gpu/app/splinetool/splinetool
[ "${NO_TOOL:-0}" = 1 ] && TOOL=
for b in build-gpu/tests/cuda/test_cuda $TOOL build-gpu/app/bench_cuda/splinebench-cuda "$@"; do
  strip -o "$C/bin/$(basename "$b")" "$b"
done
for lib in $(ldd "$C"/bin/* | awk '/=> \// {print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libgcc_s.so.*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
    *) cp -L "$lib" "$C/rt/" ;;
  esac
done
tar cJf "$C/bins.tar.xz" -C "$C" bin
tar cJf "$C/rt.tar.xz" -C "$C" rt
rm -rf "$C/bin" "$C/rt"
ls -la "$C"
