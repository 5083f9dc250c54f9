#!/usr/bin/env python3
"""Issue 17's Python functions on CuPy arrays, timed in one run on one GPU: spline_laplace (and a
few of its siblings, and reduce2) on the thesis's largest volume, 400x300x151 float32 ("Scalable GPU
acceleration of b-spline signal processing operations", Karantza), mode 'mirror', cubic:

- splineview on the CuPy array, float32 working precision (output=cupy.float32) and the default
  float64 result;
- the same call on the NumPy array (the CPU path, double, every core of the host);
- a cupyx.scipy.ndimage peer of the cubic Laplacian: spline_filter (float32), then per axis the
  second difference [1, -2, 1] along it and the sampled cubic [1, 4, 1] / 6 along the others
  (correlate1d, mode 'mirror'), summed: the same quantity (d2/dx2 of the cubic at the knots is
  c[j-1] - 2c[j] + c[j+1]), in 1 + R^2 passes;
- a device-to-device copy of the input (one pass over memory: the floor).

Timing: CUDA events on the current stream around the whole Python call, 2 warm-up calls,
median of --repeat; the host path by wall clock (median of 3). Max differences: against the CPU
path's double result. Writes a Markdown table to stdout and JSON to --json.

usage: bench_bspline_ops_gpu.py [--repeat 9] [--json out.json]
"""
import argparse
import json
import os
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


def host_ms(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def cupyx_laplace(x):
    c = cndi.spline_filter(x, order=3, mode="mirror", output=cupy.float32)
    d2 = cupy.asarray([1.0, -2.0, 1.0], dtype=cupy.float32)
    b3 = cupy.asarray([1.0, 4.0, 1.0], dtype=cupy.float32) / 6
    acc = None
    for a in range(x.ndim):
        t = cndi.correlate1d(c, d2, axis=a, mode="mirror")
        for b in range(x.ndim):
            if b != a:
                t = cndi.correlate1d(t, b3, axis=b, mode="mirror")
        acc = t if acc is None else acc + t
    return acc


def maxdiff(a, b):
    return float(np.max(np.abs(cupy.asnumpy(a).astype(np.float64) - b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    shape = (151, 300, 400)
    rng = np.random.default_rng(1)
    h = rng.random(shape).astype(np.float32)
    x = cupy.asarray(h)
    sv = splineview
    f32 = cupy.float32
    rows = []
    cases = [
        ("copy (floor)", lambda: x.copy(), None),
        ("spline_laplace float32", lambda: sv.spline_laplace(x, output=f32), sv.spline_laplace),
        ("spline_laplace float64 (default)", lambda: sv.spline_laplace(x), sv.spline_laplace),
        ("cupyx peer Laplacian (spline_filter + 9 correlate1d)", lambda: cupyx_laplace(x),
         sv.spline_laplace),
        ("spline_gradient float32", lambda: sv.spline_gradient(x, output=f32),
         sv.spline_gradient),
        ("spline_hessian float32", lambda: sv.spline_hessian(x, output=f32), sv.spline_hessian),
        ("smoothing_spline_filter lam=2 float32",
         lambda: sv.smoothing_spline_filter(x, 2.0, output=f32),
         lambda a: sv.smoothing_spline_filter(a, 2.0)),
        ("indirect_transform float32", lambda: sv.indirect_transform(x, output=f32),
         sv.indirect_transform),
        ("reduce2 (float64, as the CPU path)", lambda: sv.reduce2(x), sv.reduce2),
    ]
    host_cache = {}
    for name, fn, ref in cases:
        ms = gpu_ms(fn, args.repeat)
        row = {"case": name, "shape": "400x300x151", "gpu": gpu, "ms": ms}
        if ref is not None:
            if ref not in host_cache:
                want = ref(h)
                host_cache[ref] = (want, host_ms(lambda: ref(h)))
            want, cpu = host_cache[ref]
            row["max_diff_vs_cpu_double"] = maxdiff(fn(), want)
            row["cpu_ms"] = cpu
        rows.append(row)
    floor = rows[0]["ms"]
    threads = os.environ.get("SPLINEVIEW_NUM_THREADS") or str(os.cpu_count())
    print("%s, 400x300x151 float32 CuPy input, cubic, mirror; ms (CUDA events, median of %d); "
          "CPU path: the same call on the NumPy array, double, %s threads, median of 3\n"
          % (gpu, args.repeat, threads))
    print("| operation | GPU ms | / copy | CPU path ms | CPU / GPU | max diff vs CPU double |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        cpu = r.get("cpu_ms")
        print("| %s | %.3f | %.1f | %s | %s | %s |" % (
            r["case"], r["ms"], r["ms"] / floor, "%.1f" % cpu if cpu else "",
            "%.0fx" % (cpu / r["ms"]) if cpu else "",
            "%.2g" % r["max_diff_vs_cpu_double"] if "max_diff_vs_cpu_double" in r else ""))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
