#!/usr/bin/env python3
"""Scaling of splineview.dask with the number of worker processes of a LocalCluster, data in a
zarr store on local disk: spline_filter of a 3-D float32 volume, zoom x2 of a smaller one and
map_coordinates at random points, each written to a zarr store (the compute included), plus
the in-memory package on the same data for reference (it uses every core itself).

usage: bench_dask.py [--workers 1,2] [--size 256] [--json out.json]
"""
import argparse
import json
import logging
import os
import shutil
import tempfile
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import splineview
import splineview.dask as svd


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    logging.getLogger("distributed.utils_perf").setLevel(logging.ERROR)
    n = args.size
    rng = np.random.default_rng(5)
    tmp = tempfile.mkdtemp()
    try:
        vol = rng.random((n, n, n), dtype=np.float32)
        small = vol[: n // 2, : n // 2, : n // 2].copy()
        src = os.path.join(tmp, "vol.zarr")
        src_small = os.path.join(tmp, "small.zarr")
        chunk = max(32, n // 2)
        da.from_array(vol, chunks=chunk).to_zarr(src)
        da.from_array(small, chunks=chunk // 2).to_zarr(src_small)
        pts = np.stack([rng.uniform(0, n - 1, 2_000_000) for _ in range(3)])
        rows = []
        mem = {
            "spline_filter": timed(lambda: splineview.spline_filter(vol, order=3,
                                                                    output=np.float32)),
            "zoom x2": timed(lambda: splineview.zoom(small, 2, order=3, mode="mirror")),
            "map_coordinates": timed(lambda: splineview.map_coordinates(vol, pts, order=3,
                                                                        mode="mirror")),
        }
        for w in [int(v) for v in args.workers.split(",")]:
            with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                              dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                    Client(cluster):
                x = da.from_zarr(src)
                xs = da.from_zarr(src_small)
                c = da.from_array(pts, chunks=(3, 250_000))
                ops = {
                    "spline_filter": lambda: svd.spline_filter(
                        x, order=3, output=np.float32).to_zarr(os.path.join(tmp, "o1.zarr"),
                                                               overwrite=True),
                    "zoom x2": lambda: svd.zoom(xs, 2, order=3, mode="mirror").to_zarr(
                        os.path.join(tmp, "o2.zarr"), overwrite=True),
                    "map_coordinates": lambda: svd.map_coordinates(
                        x, c, order=3, mode="mirror").to_zarr(os.path.join(tmp, "o3.zarr"),
                                                              overwrite=True),
                }
                for name, op in ops.items():
                    op()  # warm-up: workers import splineview, zarr metadata cached
                    t = min(timed(op) for _ in range(2))
                    rows.append(dict(op=name, workers=w, seconds=t, in_memory=mem[name]))
        cores = os.cpu_count()
        print("cores: %d, volume %d^3 float32 (zoom: %d^3), chunks %d^3" % (cores, n, n // 2,
                                                                          chunk))
        print("| operation | workers | splineview.dask s | speed-up vs 1 worker | in-memory s |")
        print("|---|---:|---:|---:|---:|")
        base = {r["op"]: r["seconds"] for r in rows if r["workers"] == rows[0]["workers"]}
        for r in rows:
            print("| %s | %d | %.2f | %.2fx | %.2f |" % (r["op"], r["workers"], r["seconds"],
                                                        base[r["op"]] / r["seconds"],
                                                        r["in_memory"]))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(cores=cores, size=n, rows=rows), f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
