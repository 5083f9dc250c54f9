#!/usr/bin/env bash
# Packs this machine's Debian Python 3.11 with the stack splineview.dask runs on in CI (numpy,
# dask, distributed, zarr and their dependencies, from Debian's packages) and splineview's
# package built here, into one archive, so that tools/bench_dask.py can run on a machine whose
# own Python lacks that stack (the GPU machine: Python 3.12, numpy 2.5, no dask, no network).
# Only the interpreter, its standard library, the listed packages and the non-glibc shared
# libraries they load travel; the other machine's glibc (2.36 or newer) runs them.
#   tools/pack_debian_python.sh BUILD_DIR OUT.tar.xz     (BUILD_DIR holds python/splineview)
# On the other machine:
#   mkdir /tmp/debpy && tar -xJf OUT.tar.xz -C /tmp/debpy
#   /tmp/debpy/run python3.11 tools/bench_dask.py ...
set -euo pipefail
build=${1:?usage: pack_debian_python.sh BUILD_DIR OUT.tar.xz}
out=${2:?usage: pack_debian_python.sh BUILD_DIR OUT.tar.xz}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
core=$(ls "$build"/python/splineview/_core.cpython-311-*.so 2>/dev/null | head -1)
[ -n "$core" ] || { echo "pack_debian_python: no _core module for Python 3.11 under $build/python/splineview" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root/usr/bin" "$root/usr/lib/python3/dist-packages/splineview" "$root/lib"
cp /usr/bin/python3.11 "$root/usr/bin/"
# The standard library without its tests, GUI toolkits and build configuration.
tar -C /usr/lib -cf - --exclude=__pycache__ --exclude=test --exclude=tests --exclude=idlelib \
  --exclude=tkinter --exclude=turtledemo --exclude=ensurepip --exclude=lib2to3 \
  --exclude=pydoc_data --exclude='config-3.11*' --exclude='_tkinter*' python3.11 |
  tar -C "$root/usr/lib" -xf -
pkgs="numpy dask distributed zarr numcodecs yaml _yaml msgpack psutil tornado tblib zict toolz tlz
  cloudpickle partd locket fsspec sortedcontainers click jinja2 markupsafe packaging urllib3
  heapdict.py asciitree fasteners entrypoints.py certifi six.py typing_extensions.py dateutil"
# shellcheck disable=SC2086
(cd /usr/lib/python3/dist-packages && tar -cf - --exclude=__pycache__ --exclude=tests \
  --exclude=test $pkgs) | tar -C "$root/usr/lib/python3/dist-packages" -xf -
cp "$src"/python/splineview/*.py "$core" "$root/usr/lib/python3/dist-packages/splineview/"
# Every shared library the interpreter and the extension modules load, except glibc's own and
# the C++ runtime (the other machine's newer libstdc++ and libgcc_s serve both).
find "$root" -name '*.so*' -type f -print0 | xargs -0 ldd "$root/usr/bin/python3.11" 2>/dev/null |
  awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libpthread|libdl|librt|libutil|libresolv|libcrypt|libnsl|libstdc\+\+|libgcc_s)\.so|/ld-linux' |
  while read -r lib; do cp -L "$lib" "$root/lib/"; done
cat > "$stage/root/run" <<'RUN'
#!/bin/sh
# Runs a program of the packed Debian Python (argv: python3.11 ARGS...) with its own
# standard library, packages and shared libraries, whatever the machine's own Python is.
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONHOME="$here/usr" PYTHONNOUSERSITE=1 LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
prog=$1; shift
exec "$here/usr/bin/$prog" "$@"
RUN
chmod +x "$stage/root/run"
tar -C "$root" -cJf "$out" .
echo "$out: $(du -h "$out" | cut -f1) ($(du -sh "$root" | cut -f1) unpacked)"
