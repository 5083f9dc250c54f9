#!/usr/bin/env python3
"""splineview.dask: the chunked results equal the in-memory package's (itself checked against
scipy) within the derived bound (docs/DESIGN.md "Halos") plus rounding, for spline_filter, zoom,
shift and map_coordinates, every mode, orders 0-5 and 7, 1-3 D (order 5 of the transforms in
1-2 D), chunks smaller than the halo and chunks cut at every axis, on dask's threaded
scheduler; the bound itself is checked with halos far below the default (the error stays
under chunk_bound * range). Then on a dask.distributed LocalCluster of two worker processes,
data in a zarr store: spline_filter in two modes and two orders, the transforms with cval at
orders 0 and 3, 1-3 D, in fewer chunks (the graphs pickle, travel and give the same results
there), a result written to zarr and read back, one CPU thread in each worker.

The whole matrix runs in process because a cluster's every message costs milliseconds in the
sanitizer build (msgpack's 1 MiB packing buffer is a fresh mapping under AddressSanitizer): the
results of a graph do not depend on the scheduler that runs it, and the whole matrix on the
cluster took over 15 minutes there. For the same reason the cluster has two workers, not
three (two processes already make data travel between workers; on the two cores of CI a third
only added messages and contention: 55 -> 43 s), and the zarr round trip is cut into 2 x 2 x 3
chunks of 16 (its cost is the task count: 3 x 3 x 4 chunks made 1,508 tasks, 12 s; chunks stay
smaller than the halo and cut every axis).

Skips (exit 77, reason printed) without dask, distributed or zarr (Debian: python3-dask,
python3-distributed, python3-zarr).
usage: test_dask.py            (PYTHONPATH must reach the built package)
"""
import logging
import os
import sys
import tempfile
import warnings

import numpy as np

try:
    import dask
    import dask.array as da
    import zarr  # noqa: F401
    from distributed import Client, LocalCluster
except ImportError as e:
    print("SKIP: %s (Debian: python3-dask python3-distributed python3-zarr)" % e)
    sys.exit(77)

import splineview
import splineview.dask as svd

from scipy_oracle import FAILURES, MODES, check, maxdiff  # noqa: E402

WORKERS = 2  # worker processes of the LocalCluster (more than one: data travels between them)
ROUNDING = 1e-13  # on data in [0, 1]: a few ulp of the filter's gain G^d (G = 3 at order 3)


def allowed(order, ndim, halo):
    """The bound on data in [0, 1] (range 1; cval inside it) plus rounding."""
    return svd.chunk_bound(order, ndim, halo) + ROUNDING * (3 ** ndim) if order >= 2 else \
        ROUNDING


def random_chunks(rng, shape, parts=4):
    """Chunks of n / parts to n samples an axis (so at most about parts chunks an axis)."""
    return tuple(int(rng.integers(max(2, n // parts), n + 1)) for n in shape)


def test_spline_filter(rng, modes=MODES, orders=(2, 3, 4, 5, 7), parts=4, extras=True):
    worst = 0.0
    for mode in modes:
        for order in orders:
            for ndim in (1, 2, 3):
                shape = tuple(int(rng.integers(30, 70 if ndim < 3 else 40)) for _ in range(ndim))
                a = rng.random(shape)
                x = da.from_array(a, chunks=random_chunks(rng, shape, parts))
                got = svd.spline_filter(x, order=order, mode=mode).compute()
                want = splineview.spline_filter(a, order=order, mode=mode)
                d = maxdiff(got, want)
                worst = max(worst, d)
                h = svd.halo(order, ndim)
                check(d <= allowed(order, ndim, h), "spline_filter %s order %d %d-D chunks %s: "
                      "%.3g" % (mode, order, ndim, x.chunks, d))
    print("spline_filter (%d modes, orders %s): worst %.3g" % (len(modes), orders, worst))
    if not extras:
        return
    # Small halos: the error is then far above rounding, and must stay within the bound.
    a = rng.random((200,))
    x = da.from_array(a, chunks=40)
    for order in (3, 5):
        for mode in ("mirror", "grid-wrap", "reflect"):
            want = splineview.spline_filter(a, order=order, mode=mode)
            for tol in (1e-2, 1e-4, 1e-7):
                h = svd.halo(order, 1, tolerance=tol)
                got = svd.spline_filter(x, order=order, mode=mode, tolerance=tol).compute()
                d = maxdiff(got, want)
                check(d <= svd.chunk_bound(order, 1, h) + ROUNDING,
                      "spline_filter halo %d (tolerance %g) order %d %s: %.3g > bound %.3g"
                      % (h, tol, order, mode, d, svd.chunk_bound(order, 1, h)))
                check(d > 0, "halo %d gives an error (the test can see one)" % h)
    # float32 output computes in float32.
    x32 = da.from_array(rng.random((64, 80)).astype(np.float32), chunks=(20, 30))
    got = svd.spline_filter(x32, order=3, output=np.float32)
    check(got.dtype == np.float32, "float32 output dtype")
    d = maxdiff(got.compute(), splineview.spline_filter(x32.compute(), order=3))
    check(d < 1e-5, "float32 spline_filter: %.3g" % d)


def test_transforms(rng, modes=MODES, orders=(0, 1, 3, 5), parts=4):
    worst = 0.0
    for mode in modes:
        for order in orders:
            # Order 5 in 1-D and 2-D only: its halo (about 45 samples a side) makes every 3-D
            # task a block of about 100^3 samples, a minute of the sanitizer build for what
            # order 3 in 3-D and order 5 in 2-D already cover (halos wider than the array).
            for ndim in (1, 2, 3) if order < 5 else (1, 2):
                shape = tuple(int(rng.integers(20, 50 if ndim < 3 else 26)) for _ in range(ndim))
                a = rng.random(shape)
                x = da.from_array(a, chunks=random_chunks(rng, shape, parts))
                factors = [float(rng.uniform(0.5, 2.2)) for _ in range(ndim)]
                shifts = [float(rng.uniform(-5, 5)) for _ in range(ndim)]
                coords = np.stack([rng.uniform(-2.5 * n, 3.5 * n, 700) for n in shape])
                coords[:, :100] = np.round(coords[:, :100] * 2) / 2  # ties for order 0
                cases = [
                    ("zoom", lambda m: m.zoom(x if m is svd else a, factors, order=order,
                                              mode=mode, cval=0.4)),
                    ("zoom grid_mode", lambda m: m.zoom(x if m is svd else a, factors,
                                                       order=order, mode=mode, cval=0.4,
                                                       grid_mode=True)),
                    ("shift", lambda m: m.shift(x if m is svd else a, shifts, order=order,
                                                mode=mode, cval=0.4)),
                    ("map_coordinates", lambda m: m.map_coordinates(
                        x if m is svd else a,
                        da.from_array(coords, chunks=(ndim, 250)) if m is svd else coords,
                        order=order, mode=mode, cval=0.4)),
                ]
                for name, op in cases:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        got = op(svd)
                        want = op(splineview)
                    check(isinstance(got, da.Array), name + ": a dask array")
                    got = got.compute()
                    what = "%s %s order %d %d-D" % (name, mode, order, ndim)
                    check(got.shape == want.shape and got.dtype == want.dtype,
                          what + ": shape/dtype %s %s vs %s %s"
                          % (got.shape, got.dtype, want.shape, want.dtype))
                    d = maxdiff(got, want)
                    worst = max(worst, d)
                    # Order 0 picks samples: bit for bit. Order 1 sums two products whose
                    # rounding may differ by an ulp between the window and the whole array (the
                    # evaluator takes a different branch near a window's edge).
                    if order == 0:
                        check(np.array_equal(got, want), what + ": not bit for bit")
                    check(d <= allowed(order, ndim, svd.halo(order, ndim)),
                          what + ": %.3g" % d)
    print("zoom/shift/map_coordinates (%d modes, orders %s): worst %.3g"
          % (len(modes), orders, worst))


def test_zarr_roundtrip(rng, client):
    with tempfile.TemporaryDirectory() as tmp:
        a = rng.random((24, 32, 40)).astype(np.float32)
        src = os.path.join(tmp, "in.zarr")
        da.from_array(a, chunks=(16, 16, 16)).to_zarr(src)
        x = da.from_zarr(src)
        out = os.path.join(tmp, "out.zarr")
        svd.zoom(x, 2, order=3, mode="mirror").to_zarr(out, compute=True)
        got = da.from_zarr(out).compute()
        want = splineview.zoom(a, 2, order=3, mode="mirror")
        d = maxdiff(got, want)
        check(got.dtype == np.float32 and got.shape == want.shape and d < 1e-6,
              "zarr zoom round trip: %.3g" % d)
        coef = os.path.join(tmp, "coef.zarr")
        svd.spline_filter(x, order=3, mode="mirror").to_zarr(coef, compute=True)
        d = maxdiff(da.from_zarr(coef).compute(), splineview.spline_filter(a, order=3))
        check(d <= allowed(3, 3, svd.halo(3, 3)), "zarr spline_filter: %.3g" % d)
        workers = len(client.scheduler_info()["workers"])
        print("zarr: zoom and spline_filter through %d worker processes, checked" % workers)


def test_worker_threads(client):
    """A LocalCluster's worker processes start with OMP_NUM_THREADS=1 (distributed's nanny), so
    splineview's CPU functions use one thread per task there, not all cores per worker."""
    def worker_count():
        from splineview import _core
        return _core.default_thread_count()
    client.wait_for_workers(WORKERS, timeout=120)
    counts = client.run(worker_count)
    check(len(counts) == WORKERS and set(counts.values()) == {1},
          "worker thread counts %r (expected 1 in each of %d workers)" % (counts, WORKERS))


def test_errors():
    x = da.zeros((4, 5, 6, 7), chunks=2)
    for fn, args in ((svd.spline_filter, ()), (svd.zoom, (2,))):
        try:
            fn(x, *args)
            check(False, "%s accepted a 4-D array" % fn.__name__)
        except ValueError:
            pass
    try:
        svd.spline_filter(da.zeros((10,)), mode="bogus")
        check(False, "bad mode accepted")
    except RuntimeError:
        pass
    try:
        svd.zoom(da.zeros((10,)), 2, output=np.zeros(20))
        check(False, "an output array accepted")
    except TypeError:
        pass


def main():
    rng = np.random.default_rng(1126)
    # distributed's "garbage collections took x% CPU time" chatter is not ours.
    logging.getLogger("distributed.utils_perf").setLevel(logging.ERROR)
    with dask.config.set(scheduler="threads"):
        test_spline_filter(rng)
        test_transforms(rng)
    with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        # Every function's graph runs on the cluster's worker processes.
        with dask.config.set(scheduler=client.get):
            test_spline_filter(rng, ("mirror", "grid-constant"), (3, 5), parts=2, extras=False)
            test_transforms(rng, ("grid-constant",), (0, 3), parts=2)
            test_zarr_roundtrip(rng, client)
            test_worker_threads(client)
            test_errors()
    if FAILURES:
        print("%d failures" % len(FAILURES))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
