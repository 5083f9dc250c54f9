#!/usr/bin/env python3
"""Times the peers of `splinebench-cuda bspline` on the same sizes (the thesis "Scalable GPU
acceleration of b-spline signal processing operations", 2-D 1908x467 .. 15257x3736, 3-D
51x39x20 .. 400x300x151), float32, cubic, mode 'mirror':
  cupyx.scipy.ndimage.spline_filter        the direct transform with lambda 0
  cupyx.scipy.ndimage.map_coordinates      interpolation at one random position per sample
                                           (order 3, prefilter=False: coefficients given)
  cupyx.scipy.ndimage.correlate1d x R      the indirect transform as R FIR passes [1,4,1]/6
  a device-to-device copy                  the floor, in the same run
cupyx has no B-spline Laplacian or smoothing spline. CUDA events, medians.

Usage: bspline_peers.py [--quick] [--repeats N] [--out FILE.json]
"""
import argparse
import json
import sys

import numpy as np

CASES = [("1908x467", (467, 1908)), ("3815x934", (934, 3815)), ("7629x1868", (1868, 7629)),
         ("15257x3736", (3736, 15257)), ("51x39x20", (20, 39, 51)), ("101x76x39", (39, 76, 101)),
         ("201x151x76", (76, 151, 201)), ("400x300x151", (151, 300, 400))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    try:
        import cupy as cp
        import cupyx.scipy.ndimage as cnd
    except Exception as e:  # noqa: BLE001 - report why and stop
        print("cupy not available: %s" % e)
        return 0
    cases = [CASES[0], CASES[4]] if args.quick else CASES
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print("cupyx %s on %s, float32, cubic, mirror; ms, median of %d\n" % (cp.__version__, dev,
                                                                        args.repeats))
    print("| size | copy ms | cupyx spline_filter ms | map_coordinates ms | indirect "
          "(correlate1d) ms |\n|---|---|---|---|---|")
    rows = []
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def timed(f):
        f()
        cp.cuda.Device().synchronize()
        ts = []
        for _ in range(args.repeats):
            start.record()
            f()
            stop.record()
            stop.synchronize()
            ts.append(cp.cuda.get_elapsed_time(start, stop))
        return float(np.median(ts))

    for name, shape in cases:
        rng = np.random.default_rng(1)
        x = cp.asarray(rng.uniform(size=shape).astype(np.float32))
        y = cp.empty_like(x)
        n = x.size
        coords = cp.asarray(np.stack([rng.uniform(0, s - 1, size=n).astype(np.float32)
                                      for s in shape]))
        k = cp.asarray(np.array([1, 4, 1], np.float32) / 6)

        def indirect():
            z = x
            for a in range(len(shape)):
                z = cnd.correlate1d(z, k, axis=a, mode="mirror")
            return z

        r = {"name": name, "shape": shape,
             "copy_ms": timed(lambda: cp.copyto(y, x)),
             "spline_filter_ms": timed(lambda: cnd.spline_filter(x, order=3, output=cp.float32,
                                                                 mode="mirror")),
             "map_coordinates_ms": timed(lambda: cnd.map_coordinates(
                 x, coords, order=3, mode="mirror", prefilter=False, output=cp.float32)),
             "indirect_correlate1d_ms": timed(indirect)}
        rows.append(r)
        print("| %s | %.3f | %.3f | %.3f | %.3f |" % (name, r["copy_ms"], r["spline_filter_ms"],
                                                      r["map_coordinates_ms"],
                                                      r["indirect_correlate1d_ms"]))
        sys.stdout.flush()
        del x, y, coords
        cp.get_default_memory_pool().free_all_blocks()
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": dev, "cupy": cp.__version__, "cases": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
