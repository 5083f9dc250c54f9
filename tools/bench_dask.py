#!/usr/bin/env python3
"""Scaling of splineview.dask with the number of worker processes of a LocalCluster, data in a
zarr store on local disk: spline_filter of a 3-D float32 volume, zoom x2 of a smaller one and
map_coordinates at random points, each written to a zarr store (the compute included), plus
the in-memory package on the same data for reference (it uses every core itself).

usage: bench_dask.py [--workers 1,2] [--size 256] [--chunk C] [--repeats 2] [--json out.json]
                     [--scheduler distributed|processes] [--store zarr|npy]
--scheduler processes (dask's multiprocessing pool) and --store npy (.npy files read and written
through memory maps) are for machines without distributed or zarr.
"""
import argparse
import json
import logging
import os
import shutil
import tempfile
import time

import contextlib

import dask
import dask.array as da
import numpy as np

import splineview
import splineview.dask as svd


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


class NpyTarget:
    """A .npy file written block by block through a memory map opened in the writing process
    (pickles as its path, so multiprocessing workers write to the file itself)."""

    def __init__(self, path, shape, dtype):
        self.path = path
        np.lib.format.open_memmap(path, mode="w+", shape=shape, dtype=dtype).flush()

    def __setitem__(self, key, value):
        m = np.load(self.path, mmap_mode="r+")
        m[key] = value
        m.flush()


class Store:
    def __init__(self, tmp, kind):
        self.tmp, self.kind = tmp, kind

    def put(self, name, a, chunk):
        path = os.path.join(self.tmp, name + "." + self.kind)
        if self.kind == "zarr":
            da.from_array(a, chunks=chunk).to_zarr(path)
        else:
            np.save(path, a)
        return path

    def get(self, path, chunk):
        if self.kind == "zarr":
            return da.from_zarr(path)
        return da.from_array(np.load(path, mmap_mode="r"), chunks=chunk)

    def write(self, x, name):
        path = os.path.join(self.tmp, name + "." + self.kind)
        if self.kind == "zarr":
            x.to_zarr(path, overwrite=True)
        else:
            da.store(x, NpyTarget(path, x.shape, x.dtype), lock=False)


@contextlib.contextmanager
def scheduler(kind, workers):
    if kind == "distributed":
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                Client(cluster):
            yield
    else:
        with dask.config.set(scheduler="processes", num_workers=workers):
            yield


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--chunk", type=int, default=0, help="chunk edge (default: size / 2)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--scheduler", default="distributed", choices=["distributed", "processes"])
    ap.add_argument("--store", default="zarr", choices=["zarr", "npy"])
    ap.add_argument("--repeats", type=int, default=2, help="timed runs after the warm-up (best)")
    args = ap.parse_args()
    logging.getLogger("distributed.utils_perf").setLevel(logging.ERROR)
    n = args.size
    rng = np.random.default_rng(5)
    tmp = tempfile.mkdtemp()
    try:
        vol = rng.random((n, n, n), dtype=np.float32)
        small = vol[: n // 2, : n // 2, : n // 2].copy()
        chunk = args.chunk or max(32, n // 2)
        store = Store(tmp, args.store)
        src = store.put("vol", vol, chunk)
        src_small = store.put("small", small, chunk // 2)
        # Points sorted along the slowest axis: each block of coordinates covers a slab (as a
        # deformation field's chunks do), so each reads only its window of coefficients.
        pts = np.stack([rng.uniform(0, n - 1, 2_000_000) for _ in range(3)])
        pts = pts[:, np.argsort(pts[0])]
        rows = []
        mem = {
            "spline_filter": timed(lambda: splineview.spline_filter(vol, order=3,
                                                                    output=np.float32)),
            "zoom x2": timed(lambda: splineview.zoom(small, 2, order=3, mode="mirror")),
            "map_coordinates": timed(lambda: splineview.map_coordinates(vol, pts, order=3,
                                                                        mode="mirror")),
        }
        for w in [int(v) for v in args.workers.split(",")]:
            with scheduler(args.scheduler, w):
                x = store.get(src, chunk)
                xs = store.get(src_small, chunk // 2)
                c = da.from_array(pts, chunks=(3, 250_000))
                ops = {
                    "spline_filter": lambda: store.write(
                        svd.spline_filter(x, order=3, output=np.float32), "o1"),
                    "zoom x2": lambda: store.write(svd.zoom(xs, 2, order=3, mode="mirror"),
                                                   "o2"),
                    "map_coordinates": lambda: store.write(
                        svd.map_coordinates(x, c, order=3, mode="mirror"), "o3"),
                }
                tasks = {
                    "spline_filter": svd.spline_filter(x, order=3, output=np.float32),
                    "zoom x2": svd.zoom(xs, 2, order=3, mode="mirror"),
                    "map_coordinates": svd.map_coordinates(x, c, order=3, mode="mirror"),
                }
                tasks = {k: len(v.__dask_graph__()) for k, v in tasks.items()}
                for name, op in ops.items():
                    op()  # warm-up: workers import splineview, metadata cached
                    t = min(timed(op) for _ in range(args.repeats))
                    rows.append(dict(op=name, workers=w, seconds=t, in_memory=mem[name],
                                     tasks=tasks[name]))
        cores = os.cpu_count()
        print("cores: %d, volume %d^3 float32 (zoom: %d^3), chunks %d^3, %s scheduler, %s "
              "store" % (cores, n, n // 2, chunk, args.scheduler, args.store))
        print("| operation | workers | splineview.dask s | speed-up vs %d worker(s) | in-memory s "
              "| graph tasks |" % rows[0]["workers"])
        print("|---|---:|---:|---:|---:|---:|")
        base = {r["op"]: r["seconds"] for r in rows if r["workers"] == rows[0]["workers"]}
        for r in rows:
            print("| %s | %d | %.2f | %.2fx | %.2f | %d |" % (
                r["op"], r["workers"], r["seconds"], base[r["op"]] / r["seconds"], r["in_memory"],
                r["tasks"]))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(cores=cores, size=n, rows=rows), f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
