#!/usr/bin/env python3
"""Out-of-core rotation of a volume on the GPU (issue 15): `splinetool resample --rotate A
--axes P,Q --backend cuda --out-of-core` from a .npy file to a .npy file, against the
host-device transfer floor measured in the same run and against cupyx.scipy.ndimage.rotate on
the same volume held in GPU memory (its time and the GPU memory its memory pool peaked at).

Usage: bench_ooc_rotate.py SPLINETOOL [--sizes N,N,..] [--angle A] [--axes P,Q]
                           [--budget MIB] [--dir DIR] [--json FILE]
Each size is an N x 512 x 512 float32 volume (deterministic noise), written once to DIR. The
splinetool time is its --json "seconds" (the CUDA pass: windows up, prefilter, evaluation,
slabs down into OUT's memory map; not the header work or the page cache's write-back). Needs
numpy; cupy is optional (its columns are left out, with the reason, without it).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def floor_rates(cp, nbytes=1 << 30):
    """GB/s of cudaMemcpy up and down from pinned and from pageable host memory."""
    n = nbytes // 4
    dev = cp.empty(n, dtype=cp.float32)
    pageable = np.ones(n, dtype=np.float32)
    mem = cp.cuda.alloc_pinned_memory(nbytes)
    pinned = np.frombuffer(mem, dtype=np.float32, count=n)
    pinned[:] = 1
    rates = {}
    for name, host in (("pinned", pinned), ("pageable", pageable)):
        for direction in ("up", "down"):
            best = None
            for _ in range(3):
                cp.cuda.runtime.deviceSynchronize()
                t = time.perf_counter()
                if direction == "up":
                    dev.set(host)
                else:
                    dev.get(out=host)
                cp.cuda.runtime.deviceSynchronize()
                s = time.perf_counter() - t
                best = s if best is None else min(best, s)
            rates[name + "_" + direction] = nbytes / best / 1e9
    return rates


def cupyx_rotate(cp, volume, angle, axes):
    """Median of 3 runs of cupyx's rotate (order 3, mirror) on the volume in GPU memory, and the
    memory pool's peak in bytes (the input's own bytes included)."""
    import cupyx.scipy.ndimage as cnd
    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    x = cp.asarray(volume)
    times = []
    peak = 0
    for _ in range(3):
        cp.cuda.runtime.deviceSynchronize()
        t = time.perf_counter()
        y = cnd.rotate(x, angle, axes=axes, reshape=False, order=3, mode="mirror")
        cp.cuda.runtime.deviceSynchronize()
        times.append(time.perf_counter() - t)
        peak = max(peak, pool.total_bytes())
        del y
        pool.free_all_blocks()
    del x
    pool.free_all_blocks()
    return sorted(times)[1], peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("splinetool")
    ap.add_argument("--sizes", default="1024,8192")
    ap.add_argument("--angle", type=float, default=30.0)
    ap.add_argument("--axes", default="1,2")
    ap.add_argument("--budget", type=int, default=0, help="MiB (0: 80%% of the free memory)")
    ap.add_argument("--dir", default="/tmp/sv-ooc-rotate")
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    axes = tuple(int(a) for a in args.axes.split(","))
    try:
        import cupy as cp
        gpu = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        rates = floor_rates(cp)
    except Exception as e:  # noqa: BLE001 (any failure: no peer columns, with the reason)
        cp, gpu, rates = None, "unknown (no cupy: %s)" % e, {}
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        shape = (n, 512, 512)
        src = os.path.join(args.dir, "in_%d.npy" % n)
        dst = os.path.join(args.dir, "out_%d.npy" % n)
        if not os.path.exists(src):
            a = np.lib.format.open_memmap(src, mode="w+", dtype=np.float32, shape=shape)
            rng = np.random.default_rng(n)
            for z in range(0, n, 256):
                a[z:z + 256] = rng.random((min(256, n - z), 512, 512), dtype=np.float32)
            a.flush()
            del a
        cmd = [args.splinetool, "resample", src, dst, "--rotate", str(args.angle), "--axes",
               args.axes, "--mode", "mirror", "--backend", "cuda", "--out-of-core", "--json"]
        if args.budget:
            cmd += ["--memory-budget", str(args.budget)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("splinetool failed: %s" % r.stderr.strip())
        j = json.loads(r.stdout)
        ooc = j["out_of_core"]
        gb_in = n * 512 * 512 * 4 / 1e9
        row = {"shape": shape, "gb": gb_in, "seconds": j["seconds"], "slabs": ooc["slabs"],
               "slab_slices": ooc["slab_slices"], "halo": ooc["halo"],
               "gb_up": ooc["bytes_up"] / 1e9, "gb_down": ooc["bytes_down"] / 1e9,
               "device_gb": ooc["device_bytes"] / 1e9}
        if rates:
            row["floor_pinned"] = gb_in / rates["pinned_up"] + gb_in / rates["pinned_down"]
            row["floor_pageable"] = gb_in / rates["pageable_up"] + gb_in / rates["pageable_down"]
        # Check three slices of the result against scipy on the CPU (order 3, mirror): a rotation
        # in (1, 2) keeps each slice on its own, so a slice is the 2-D rotation of its input.
        if axes == (1, 2):
            import scipy.ndimage as ndi
            a = np.load(src, mmap_mode="r")
            b = np.load(dst, mmap_mode="r")
            worst = 0.0
            for z in (0, n // 2, n - 1):
                # The volume's interpolant at integer z is the slice's own (it interpolates).
                want = ndi.rotate(np.asarray(a[z], dtype=np.float64), args.angle,
                                  reshape=False, order=3, mode="mirror")
                worst = max(worst, float(np.abs(b[z] - want).max()))
            row["max_diff_vs_scipy_3_slices"] = worst
        if cp is not None:
            try:
                vol = np.load(src)
                row["cupyx_seconds"], row["cupyx_peak_gb"] = (
                    lambda t: (t[0], t[1] / 1e9))(cupyx_rotate(cp, vol, args.angle, axes))
                del vol
            except Exception as e:  # noqa: BLE001 (out of memory is the interesting outcome)
                row["cupyx_error"] = str(e).splitlines()[0][:120]
        rows.append(row)
        os.remove(dst)
    print("GPU: %s; floors from 1 GiB copies: %s" %
          (gpu, ", ".join("%s %.1f GB/s" % kv for kv in sorted(rates.items()))))
    print("| volume | GB | slabs x slices | up GB | time s | pinned floor s | time / floor |"
          " pageable floor s | cupyx s | cupyx peak GB | diff vs scipy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %dx%dx%d | %.1f | %d x %d | %.1f | %.2f | %s | %s | %s | %s | %s | %s |" % (
            r["shape"][2], r["shape"][1], r["shape"][0], r["gb"], r["slabs"], r["slab_slices"],
            r["gb_up"], r["seconds"],
            "%.2f" % r["floor_pinned"] if "floor_pinned" in r else "-",
            "%.2f" % (r["seconds"] / r["floor_pinned"]) if "floor_pinned" in r else "-",
            "%.2f" % r["floor_pageable"] if "floor_pageable" in r else "-",
            "%.2f" % r["cupyx_seconds"] if "cupyx_seconds" in r else r.get("cupyx_error", "-"),
            "%.1f" % r["cupyx_peak_gb"] if "cupyx_peak_gb" in r else "-",
            "%.2g" % r["max_diff_vs_scipy_3_slices"] if "max_diff_vs_scipy_3_slices" in r
            else "-"))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"gpu": gpu, "rates": rates, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
