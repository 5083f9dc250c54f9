#!/usr/bin/env python3
"""Times the peers of the CUDA prefilter on the same sizes as `splinebench-cuda prefilter`:
cupyx.scipy.ndimage.spline_filter1d on the GPU and scipy.ndimage.spline_filter1d on the CPU
(order 3, float32 output, mode 'reflect' = our reflect, the spatial axes only: channels are not
filtered). Each axis is timed separately and the whole filter in total; medians.

Usage: cuda_peers.py [--quick] [--only PREFIX] [--repeats N] [--cpu-repeats N] [--out FILE.json]
Needs numpy and scipy; cupy is optional (its rows are left out, with the reason, without it).
"""
import argparse
import json
import sys
import time

import numpy as np
import scipy
import scipy.ndimage as ndi

CASES = [
    ("32^3 float", (32, 32, 32), 1),
    ("256^3 float", (256, 256, 256), 1),
    ("512x512x300 float", (300, 512, 512), 1),
    ("400x300x151 float", (151, 300, 400), 1),
    ("1024x1024x128 float", (128, 1024, 1024), 1),
    ("160x120 RGB", (120, 160), 3),
    ("1024x1024 RGB", (1024, 1024), 3),
    ("1920x1080 RGBA", (1080, 1920), 4),
    ("3840x2160 RGBA", (2160, 3840), 4),
]
QUICK = [CASES[0], ("64^3 float", (64, 64, 64), 1), CASES[5]]


def shape_of(dims, channels):
    return tuple(dims) + ((channels,) if channels > 1 else ())


def time_cupy(cp, cnd, x, axes, repeats):
    out = {}
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def run(ax_list):
        y = x
        for a in ax_list:
            y = cnd.spline_filter1d(y, order=3, axis=a, output=cp.float32, mode="reflect")
        return y

    run(axes)  # warm-up (kernel compilation)
    cp.cuda.Device().synchronize()
    for key, ax_list in [(f"axis{a}", [a]) for a in axes] + [("total", axes)]:
        ts = []
        for _ in range(repeats):
            start.record()
            run(ax_list)
            stop.record()
            stop.synchronize()
            ts.append(cp.cuda.get_elapsed_time(start, stop))
        out[key] = float(np.median(ts))
    return out


def time_scipy(x, axes, repeats):
    out = {}
    for key, ax_list in [(f"axis{a}", [a]) for a in axes] + [("total", axes)]:
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            y = x
            for a in ax_list:
                y = ndi.spline_filter1d(y, order=3, axis=a, output=np.float32, mode="reflect")
            ts.append((time.perf_counter() - t0) * 1e3)
        out[key] = float(np.median(ts))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--cpu-repeats", type=int, default=3)
    ap.add_argument("--out", default="cuda-peers.json")
    ap.add_argument("--only", default="", help="only the cases whose name starts with this")
    args = ap.parse_args()

    try:
        import cupy as cp
        import cupyx.scipy.ndimage as cnd

        gpu = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        cupy_version = cp.__version__
        why_no_cupy = ""
    except Exception as e:  # no cupy or no device: the scipy rows still come
        cp = cnd = None
        gpu, cupy_version, why_no_cupy = "", "", f"cupy unavailable: {e}"
        print(why_no_cupy, file=sys.stderr)

    rng = np.random.default_rng(1)
    report = {"gpu": gpu, "cupy": cupy_version, "scipy": scipy.__version__,
              "numpy": np.__version__, "why_no_cupy": why_no_cupy, "cases": []}
    print("| data | peer | per axis ms | total ms |\n|---|---|---|---|")
    for name, dims, ch in (QUICK if args.quick else CASES):
        if not name.startswith(args.only):
            continue
        print(f"peers: {name}", file=sys.stderr)
        host = rng.random(shape_of(dims, ch), dtype=np.float32)
        axes = list(range(len(dims)))
        case = {"name": name, "dims": list(dims), "channels": ch}
        if cp is not None:
            case["cupyx"] = time_cupy(cp, cnd, cp.asarray(host), axes,
                                      3 if args.quick else args.repeats)
        case["scipy"] = time_scipy(host, axes, 1 if args.quick else args.cpu_repeats)
        report["cases"].append(case)
        for peer in ("cupyx", "scipy"):
            if peer in case:
                t = case[peer]
                per = " / ".join(f"{t[f'axis{a}']:.3f}" for a in axes)
                print(f"| {name} | {peer} | {per} | {t['total']:.3f} |")
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
