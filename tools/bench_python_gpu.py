#!/usr/bin/env python3
"""The package's GPU path against cupyx.scipy.ndimage, side by side in one run on one GPU:
spline_filter, map_coordinates (with and without the prefilter) and zoom x2, order 3, for 2-D
and 3-D float32 and float64 CuPy arrays, plus a device-to-device copy of the input (the memory
bandwidth floor of a pass) and, for the 2-D float64 case, scipy.ndimage on the host's cores.

Timing: CUDA events on the current stream around the whole call (Python, allocation, kernels),
2 warm-up calls, the median of `--repeat`. Each case also reports the largest difference
between the two GPU results. Writes a Markdown table to stdout and JSON to --json.

usage: bench_python_gpu.py [--repeat 9] [--json out.json] [--quick]
"""
import argparse
import json
import time

import cupy
import cupyx.scipy.ndimage as cndi
import numpy as np

import splineview


def gpu_ms(fn, repeat):
    for _ in range(2):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    times = []
    for _ in range(repeat):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def maxdiff(a, b):
    return float(cupy.max(cupy.abs(a.astype(cupy.float64) - b.astype(cupy.float64))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    args = ap.parse_args()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    gpu = props["name"].decode()
    shapes = [(2048, 2048), (4096, 4096), (256, 256, 256), (512, 512, 300)]
    if args.quick:
        shapes = [(256, 256), (64, 64, 64)]
    rng = np.random.default_rng(1)
    rows = []
    for shape in shapes:
        host = rng.random(shape)
        for dtype in (np.float32, np.float64):
            a = cupy.asarray(host.astype(dtype))
            n = a.size
            coords = cupy.asarray(
                np.stack([rng.uniform(0, s - 1, n) for s in shape]).astype(dtype))
            coef = splineview.spline_filter(a, order=3, mode="mirror", output=dtype)
            cases = [
                ("copy (floor)", lambda: a.copy(), None),
                ("spline_filter",
                 lambda: splineview.spline_filter(a, order=3, mode="mirror", output=dtype),
                 lambda: cndi.spline_filter(a, order=3, mode="mirror", output=dtype)),
                ("map_coordinates",
                 lambda: splineview.map_coordinates(a, coords, order=3, mode="mirror"),
                 lambda: cndi.map_coordinates(a, coords, order=3, mode="mirror")),
                ("map_coordinates, prefilter=False",
                 lambda: splineview.map_coordinates(coef, coords, order=3, mode="mirror",
                                                    prefilter=False),
                 lambda: cndi.map_coordinates(coef, coords, order=3, mode="mirror",
                                              prefilter=False)),
                ("zoom x2",
                 lambda: splineview.zoom(a, 2, order=3, mode="mirror"),
                 lambda: cndi.zoom(a, 2, order=3, mode="mirror")),
            ]
            floor = None
            for name, ours, theirs in cases:
                t_ours = gpu_ms(ours, args.repeat)
                if theirs is None:
                    floor = t_ours
                    rows.append(dict(shape=shape, dtype=np.dtype(dtype).name, op=name,
                                     ours_ms=t_ours))
                    continue
                t_theirs = gpu_ms(theirs, args.repeat)
                diff = maxdiff(ours(), theirs())
                rows.append(dict(shape=shape, dtype=np.dtype(dtype).name, op=name,
                                 ours_ms=t_ours, cupyx_ms=t_theirs,
                                 speedup=t_theirs / t_ours, floor_ratio=t_ours / floor,
                                 max_diff=diff))
            del a, coords, coef
            cupy.get_default_memory_pool().free_all_blocks()
    # scipy on the host for one 2-D case (context: what a CPU user waits).
    import scipy.ndimage as ndi
    host = rng.random((2048, 2048))
    t0 = time.perf_counter()
    ndi.zoom(host, 2, order=3, mode="mirror")
    t_scipy = (time.perf_counter() - t0) * 1e3
    a = cupy.asarray(host)
    t_ours = gpu_ms(lambda: splineview.zoom(a, 2, order=3, mode="mirror"), args.repeat)
    scipy_row = dict(shape=(2048, 2048), dtype="float64", op="zoom x2 (scipy on the host)",
                     scipy_ms=t_scipy, ours_ms=t_ours, speedup=t_scipy / t_ours)

    print("GPU: %s" % gpu)
    print("| shape | dtype | operation | splineview ms | cupyx ms | cupyx / ours | "
          "ours / copy | max diff |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        shape = "x".join(map(str, r["shape"]))
        if "cupyx_ms" not in r:
            print("| %s | %s | %s | %.3f | | | 1 | |" % (shape, r["dtype"], r["op"], r["ours_ms"]))
            continue
        print("| %s | %s | %s | %.3f | %.3f | %.1fx | %.1f | %.1e |"
              % (shape, r["dtype"], r["op"], r["ours_ms"], r["cupyx_ms"], r["speedup"],
                 r["floor_ratio"], r["max_diff"]))
    print("scipy.ndimage.zoom x2 2048^2 float64 on the host: %.0f ms; splineview on the GPU "
          "%.2f ms (%.0fx)" % (scipy_row["scipy_ms"], scipy_row["ours_ms"], scipy_row["speedup"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(gpu=gpu, rows=rows, scipy=scipy_row), f, indent=1)


if __name__ == "__main__":
    main()
