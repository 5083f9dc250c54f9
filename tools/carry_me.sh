# Sourced by the device scripts that carry build-gpu/carry-me (bins.tar.xz: stripped test_cuda,
# splinetool and splinebench-cuda of build-gpu; rt.tar.xz: their runtime libraries; repack with
# the build's binaries before a call: tools/pack_carry_me.sh [baseline binaries]): unpacks them,
# goes to the repository root and sets B (the binaries), LD_LIBRARY_PATH and T (a folder for
# logs that stay on the machine: the device tool brings back only a few files), and prints the
# GPU.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
C=build-gpu/carry-me
tar xJf $C/bins.tar.xz -C $C && tar xJf $C/rt.tar.xz -C $C || exit 1
export LD_LIBRARY_PATH=$PWD/$C/rt
B=$PWD/$C/bin
T=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
