#!/usr/bin/env python3
"""The package's GPU path (splineview._gpu over splineview._cuda) on CuPy arrays and torch
tensors, against scipy.ndimage on the host, the package's exact CPU path (itself checked
against scipy by test_scipy_api.py and test_transforms.py) and cupyx.scipy.ndimage.

What is asserted:
- the result is an array of the input's library on the input's device, of scipy's dtype;
- float64 data: within 1e-12 of the CPU path and of scipy (where scipy is exact: lines of 20
  samples or more for 'reflect'-like modes, the 200-sample padded oracle for 'nearest' and
  'grid-constant'), for every mode, orders 0-5 (6-7 against the CPU path), 1-3 dimensions,
  positions inside and several periods outside, integer and half-integer positions; order 0
  bit for bit (ties go where scipy sends them);
- float32 data: within 1e-5 of scipy's float64 result relative to the data range (float32
  coefficients, as cupyx);
- zoom (both grid modes, per-axis factors), shift, affine_transform (general, 1-D diagonal,
  homogeneous, output_shape), rotate 2-D and 3-D, spline_filter/spline_filter1d with float32 and
  float64 outputs; integer outputs rounded as scipy; output arrays filled in place; complex
  input; a non-default stream; NaN coordinates give NaN; long lines (the tiled prefilter's
  chunked passes);
- cupyx.scipy.ndimage agrees with the same results (1e-10 on float64 where cupyx is exact).

Skips (exit 77, reason printed) without scipy, CuPy, the CUDA module or a CUDA device.
usage: test_gpu.py            (PYTHONPATH must reach the built package)
"""
import os
import sys
import warnings

import numpy as np

try:
    import scipy.ndimage as ndi
except ImportError:
    print("SKIP: scipy is not installed")
    sys.exit(77)

import splineview
from splineview import _gpu

ok, why = _gpu.gpu_available()
if not ok:
    print("SKIP: the GPU path cannot run here: " + why)
    sys.exit(77)
try:
    import cupy
    import cupyx.scipy.ndimage as cndi
except ImportError:
    print("SKIP: CuPy is not installed (the GPU path is tested through CuPy arrays)")
    sys.exit(77)
try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except ImportError:
    torch = None

from scipy_oracle import FAILURES, MODES, check, maxdiff, padded_oracle  # noqa: E402
from test_scipy_api import random_shape  # noqa: E402

TOL64 = 1e-12
TOL32 = 1e-5


def host(x):
    if isinstance(x, cupy.ndarray):
        return cupy.asnumpy(x)
    return x.cpu().numpy()


def scipy_oracle(a, coords, order, mode, cval):
    if order >= 2 and mode in ("nearest", "grid-constant"):
        return padded_oracle(a, coords, order, mode, cval)
    return ndi.map_coordinates(a, coords, order=order, mode=mode, cval=cval)


def random_coords(rng, shape, m):
    """Positions inside, outside (up to 2.5 extents beyond), integers and half-integers."""
    c = np.empty((len(shape), m))
    for d, n in enumerate(shape):
        x = rng.uniform(-2.5 * n, 3.5 * n, m)
        x[: m // 4] = rng.uniform(0, n - 1, m // 4)
        x[m // 4: m // 2] = np.round(rng.uniform(-n, 2 * n, m // 2 - m // 4) * 2) / 2
        c[d] = x
    return c


def test_map_coordinates(rng):
    worst = {"f8": 0.0, "f4": 0.0}
    count = 0
    for mode in MODES:
        for order in range(8):
            for rank in (1, 2, 3):
                shape = random_shape(rng, rank, mode, min(order, 5))
                a = rng.random(shape)
                coords = random_coords(rng, shape, 400)
                cval = 0.25
                cpu = splineview.map_coordinates(a, coords, order=order, mode=mode, cval=cval)
                want = scipy_oracle(a, coords, order, mode, cval) if order <= 5 else cpu
                for dt in (np.float64, np.float32):
                    got = splineview.map_coordinates(cupy.asarray(a.astype(dt)),
                                                     cupy.asarray(coords), order=order,
                                                     mode=mode, cval=cval)
                    what = "map_coordinates %s order %d %d-D %s" % (mode, order, rank,
                                                                    np.dtype(dt).name)
                    check(isinstance(got, cupy.ndarray) and got.dtype == dt and
                          got.shape == coords.shape[1:], what + ": type/dtype/shape")
                    g = host(got)
                    if dt == np.float64:
                        d = max(maxdiff(g, cpu), maxdiff(g, want))
                        worst["f8"] = max(worst["f8"], d)
                        if order == 0:
                            check(np.array_equal(g, cpu) and np.array_equal(g, want),
                                  what + ": order 0 not bit for bit")
                        check(d <= TOL64, what + ": differs by %.3g" % d)
                    else:
                        d = maxdiff(g, want)
                        worst["f4"] = max(worst["f4"], d)
                        check(d <= TOL32, what + ": differs by %.3g" % d)
                    count += 1
    print("map_coordinates: %d cases, worst float64 %.3g, float32 %.3g"
          % (count, worst["f8"], worst["f4"]))


def test_derivative(rng):
    """map_coordinates(..., derivative=axis) on the device against the CPU path (itself checked
    against finite differences of scipy in test_scipy_api.py)."""
    worst = 0.0
    for mode in MODES:
        for order in range(1, 8):
            for rank in (1, 2, 3):
                shape = random_shape(rng, rank, mode, min(order, 5))
                a = rng.random(shape)
                coords = random_coords(rng, shape, 300)
                axis = int(rng.integers(0, rank))
                cpu = splineview.map_coordinates(a, coords, order=order, mode=mode, cval=0.5,
                                                 derivative=axis)
                got = splineview.map_coordinates(cupy.asarray(a), cupy.asarray(coords),
                                                 order=order, mode=mode, cval=0.5,
                                                 derivative=axis)
                d = maxdiff(host(got), cpu)
                worst = max(worst, d)
                check(d <= TOL64 * 10, "derivative %s order %d %d-D axis %d: %.3g"
                      % (mode, order, rank, axis, d))
    print("derivative: worst float64 %.3g against the CPU path" % worst)


def test_filters(rng):
    worst = 0.0
    for mode in MODES:
        for order in range(2, 8):
            for rank in (1, 2, 3):
                shape = random_shape(rng, rank, mode, min(order, 5))
                a = rng.random(shape)
                cpu = splineview.spline_filter(a, order=order, mode=mode)
                got = splineview.spline_filter(cupy.asarray(a), order=order, mode=mode)
                what = "spline_filter %s order %d %d-D" % (mode, order, rank)
                check(got.dtype == np.float64, what + ": dtype")
                d = maxdiff(host(got), cpu)
                if order <= 5:
                    d = max(d, maxdiff(host(got), ndi.spline_filter(a, order=order, mode=mode)))
                worst = max(worst, d)
                check(d <= TOL64, what + ": differs by %.3g" % d)
                got32 = splineview.spline_filter(cupy.asarray(a.astype(np.float32)),
                                                 order=order, mode=mode, output=np.float32)
                check(got32.dtype == np.float32, what + " float32: dtype")
                d32 = maxdiff(host(got32), cpu) / max(1.0, float(np.max(np.abs(cpu))))
                check(d32 <= TOL32, what + " float32: differs by %.3g" % d32)
                axis = int(rng.integers(-rank, rank))
                got1 = splineview.spline_filter1d(cupy.asarray(a), order=order, axis=axis,
                                                  mode=mode)
                d1 = maxdiff(host(got1), splineview.spline_filter1d(a, order=order, axis=axis,
                                                                    mode=mode))
                check(d1 <= TOL64, what + " 1d axis %d: differs by %.3g" % (axis, d1))
                got1 = splineview.spline_filter1d(cupy.asarray(a.astype(np.float32)),
                                                  order=order, axis=axis, mode=mode,
                                                  output=np.float32)
                d1 = maxdiff(host(got1), splineview.spline_filter1d(a, order=order, axis=axis,
                                                                    mode=mode))
                check(got1.dtype == np.float32 and d1 <= TOL32 * 3,
                      what + " 1d axis %d float32: differs by %.3g" % (axis, d1))
    print("spline_filter: worst float64 %.3g" % worst)


def test_segmented(rng):
    """Few long float64 lines take the segmented recursions (warm-ups of the horizon, exact
    starts at the line ends): every mode, degrees 2-7, against the CPU path."""
    worst = 0.0
    for shape, axis in (((4000,), 0), ((2, 3001), 1), ((2900, 3), 0)):
        a = rng.random(shape)
        for mode in MODES:
            for order in range(2, 8):
                got = splineview.spline_filter1d(cupy.asarray(a), order=order, axis=axis,
                                                 mode=mode)
                want = splineview.spline_filter1d(a, order=order, axis=axis, mode=mode)
                d = maxdiff(host(got), want) / max(1.0, float(np.abs(want).max()))
                worst = max(worst, d)
                check(d <= TOL64, "segmented %s %s order %d axis %d: %.3g"
                      % (shape, mode, order, axis, d))
    print("segmented float64 prefilter: worst %.3g" % worst)


def test_transforms(rng):
    worst = 0.0
    for mode in MODES:
        for order in (0, 1, 2, 3, 5):
            for rank in (1, 2, 3):
                shape = random_shape(rng, rank, mode, order)
                a = rng.random(shape)
                ga = cupy.asarray(a)
                cases = []
                factors = [float(rng.uniform(0.6, 2.2)) for _ in range(rank)]
                for grid_mode in (False, True):
                    cases.append(("zoom grid_mode=%s" % grid_mode,
                                  lambda f, x: f.zoom(x, factors, order=order, mode=mode,
                                                      cval=0.5, grid_mode=grid_mode)))
                shifts = [float(rng.uniform(-4, 4)) for _ in range(rank)]
                cases.append(("shift", lambda f, x: f.shift(x, shifts, order=order, mode=mode,
                                                            cval=0.5)))
                m = np.eye(rank) + rng.uniform(-0.3, 0.3, (rank, rank))
                off = rng.uniform(-3, 3, rank)
                oshape = tuple(int(n) + 3 for n in shape)
                cases.append(("affine", lambda f, x: f.affine_transform(
                    x, m, off, output_shape=oshape, order=order, mode=mode, cval=0.5)))
                homog = np.eye(rank + 1)
                homog[:rank, :rank] = m
                homog[:rank, rank] = off
                cases.append(("affine homogeneous", lambda f, x: f.affine_transform(
                    x, homog, order=order, mode=mode, cval=0.5)))
                diag = rng.uniform(0.5, 1.5, rank)
                cases.append(("affine 1-D matrix", lambda f, x: f.affine_transform(
                    x, diag, off, order=order, mode=mode, cval=0.5)))
                if rank >= 2:
                    angle = float(rng.uniform(-180, 180))
                    axes = (0, rank - 1)
                    cases.append(("rotate %s" % (axes,), lambda f, x: f.rotate(
                        x, angle, axes=axes, order=order, mode=mode, cval=0.5)))
                for name, op in cases:
                    import warnings
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        cpu = op(splineview, a)
                        got = op(splineview, ga)
                    what = "%s %s order %d %d-D" % (name, mode, order, rank)
                    check(isinstance(got, cupy.ndarray) and got.shape == cpu.shape and
                          got.dtype == cpu.dtype, what + ": type/shape/dtype")
                    d = maxdiff(host(got), cpu)
                    worst = max(worst, d)
                    if order == 0 and not name.startswith("rotate"):
                        check(np.array_equal(host(got), cpu), what + ": order 0 not bit for bit")
                    check(d <= TOL64, what + ": differs from the CPU path by %.3g" % d)
    # scipy itself on a few (the CPU path is checked against scipy in full elsewhere).
    a = rng.random((40, 33))
    for grid_mode, mode in ((False, "mirror"), (True, "grid-wrap"), (False, "constant")):
        want = ndi.zoom(a, (1.7, 0.8), order=3, mode=mode, grid_mode=grid_mode)
        got = splineview.zoom(cupy.asarray(a), (1.7, 0.8), order=3, mode=mode,
                              grid_mode=grid_mode)
        d = maxdiff(host(got), want)
        check(d <= TOL64, "zoom vs scipy %s: %.3g" % (mode, d))
    v = rng.random((20, 21, 22))
    want = ndi.rotate(v, 33.0, axes=(2, 0), order=3)
    got = splineview.rotate(cupy.asarray(v), 33.0, axes=(2, 0), order=3)
    d = maxdiff(host(got), want)
    check(d <= TOL64, "3-D rotate vs scipy: %.3g" % d)
    print("transforms: worst float64 %.3g against the CPU path" % worst)


def test_semantics(rng):
    a = rng.random((30, 31)) * 200
    ga = cupy.asarray(a)
    # Integer output rounded half away from zero and clipped, as the CPU path (and scipy).
    got = splineview.zoom(ga, 1.5, order=3, output=np.uint8)
    want = splineview.zoom(a, 1.5, order=3, output=np.uint8)
    check(got.dtype == np.uint8 and np.array_equal(host(got), want), "uint8 output")
    u8 = (a).astype(np.uint8)
    got = splineview.shift(cupy.asarray(u8), (0.5, -1.25), order=3, mode="nearest")
    want = ndi.shift(u8, (0.5, -1.25), order=3, mode="nearest")
    check(got.dtype == np.uint8 and int(np.max(np.abs(host(got).astype(int) - want))) <= 1,
          "uint8 input keeps its dtype and matches scipy within 1")
    # Output array filled in place (None returned).
    out = cupy.full((45, 46), -1.0, dtype=cupy.float32)
    r = splineview.zoom(ga, 1.5, order=3, output=out)
    check(r is None and maxdiff(host(out), splineview.zoom(a, 1.5, order=3)) < 1e-3,
          "output array filled in place")
    # Complex input.
    z = rng.random((20, 24)) + 1j * rng.random((20, 24))
    got = splineview.zoom(cupy.asarray(z), 1.3, order=3, mode="mirror")
    want = ndi.zoom(z, 1.3, order=3, mode="mirror")
    check(got.dtype == np.complex128 and maxdiff(host(got).real, want.real) < TOL64 and
          maxdiff(host(got).imag, want.imag) < TOL64, "complex input")
    # A non-default stream: the work is ordered on it.
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        big = cupy.asarray(rng.random((600, 700)).astype(np.float32))
        r1 = splineview.spline_filter(big, order=3, output=np.float32)
        r2 = splineview.zoom(big, 1.7, order=3, mode="mirror")
    s.synchronize()
    check(maxdiff(host(r1), splineview.spline_filter(host(big), order=3)) < 1e-3 and
          maxdiff(host(r2), splineview.zoom(host(big), 1.7, order=3, mode="mirror")) < 1e-4,
          "non-default stream")
    # NaN and huge coordinates give NaN (the CPU path raises).
    c = cupy.asarray(np.array([[1.0, np.nan, 1e300, 2.0], [1.0, 2.0, 3.0, np.inf]]))
    r = host(splineview.map_coordinates(ga, c, order=3))
    check(np.isfinite(r[0]) and np.isnan(r[1]) and np.isnan(r[2]) and np.isnan(r[3]),
          "non-finite coordinates give NaN: %s" % r)
    # Long lines: the tiled prefilter's chunked passes, float32 and float64.
    long = rng.random((3, 5000))
    for dt, tol in ((np.float32, 1e-5), (np.float64, TOL64)):
        got = splineview.spline_filter(cupy.asarray(long.astype(dt)), order=3, output=dt)
        d = maxdiff(host(got), splineview.spline_filter(long, order=3))
        check(d <= tol * 3, "long lines %s: %.3g" % (np.dtype(dt).name, d))
    # A device matrix and host coordinates are accepted.
    m = cupy.asarray(np.array([[0.9, 0.1], [-0.1, 0.9]]))
    got = splineview.affine_transform(ga, m, order=3)
    want = splineview.affine_transform(a, host(m), order=3)
    check(maxdiff(host(got), want) <= TOL64 * 200, "device matrix")
    got = splineview.map_coordinates(ga, np.array([[1.5, 2.5], [3.5, 4.25]]), order=3)
    check(isinstance(got, cupy.ndarray), "host coordinates with a device input")
    print("semantics: checked")


def test_torch(rng):
    if torch is None:
        print("torch: not installed or no CUDA in it; skipped")
        return
    a = rng.random((25, 26, 27))
    for dt in (torch.float64, torch.float32):
        t = torch.as_tensor(a, device="cuda").to(dt)
        got = splineview.zoom(t, (1.5, 0.7, 1.2), order=3, mode="grid-mirror", grid_mode=True)
        want = ndi.zoom(a, (1.5, 0.7, 1.2), order=3, mode="grid-mirror", grid_mode=True)
        check(isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == dt,
              "torch zoom: type")
        tol = TOL64 if dt == torch.float64 else TOL32
        check(maxdiff(got.cpu().numpy(), want) <= tol, "torch zoom %s" % dt)
        c = torch.as_tensor(random_coords(rng, a.shape, 500), device="cuda")
        got = splineview.map_coordinates(t, c, order=3, mode="mirror")
        want = ndi.map_coordinates(a, c.cpu().numpy(), order=3, mode="mirror")
        check(maxdiff(got.cpu().numpy(), want) <= tol, "torch map_coordinates %s" % dt)
        got = splineview.spline_filter(t, order=3, mode="mirror")
        check(got.dtype == torch.float64 and
              maxdiff(got.cpu().numpy(), ndi.spline_filter(a, order=3)) <= max(tol, TOL64) * 10,
              "torch spline_filter %s" % dt)
    g = torch.ones((5, 5), device="cuda", requires_grad=True)
    check(splineview.zoom(g, 2.0, order=1).shape == (10, 10), "torch tensor requiring grad")
    print("torch: checked")


def test_dask_cupy(rng):
    """splineview.dask on a dask array of CuPy chunks: every block runs on the GPU."""
    try:
        import dask
        import dask.array as da
        import splineview.dask as svd
    except ImportError:
        print("dask on CuPy: dask is not installed here; skipped")
        return
    a = rng.random((70, 64, 58))
    x = da.from_array(cupy.asarray(a), chunks=(30, 40, 29), asarray=False)
    with dask.config.set(scheduler="synchronous"):
        for name, got, want in (
                ("spline_filter", svd.spline_filter(x, order=3, mode="mirror"),
                 splineview.spline_filter(a, order=3, mode="mirror")),
                ("zoom", svd.zoom(x, 1.5, order=3, mode="reflect"),
                 splineview.zoom(a, 1.5, order=3, mode="reflect"))):
            r = got.compute()
            check(isinstance(r, cupy.ndarray), "dask on CuPy %s: CuPy result" % name)
            d = maxdiff(host(r), want)
            check(d <= 1e-12, "dask on CuPy %s: %.3g" % (name, d))
    print("dask on CuPy: checked")


def test_out_of_core(rng):
    """spline_filter_out_of_core on an np.memmap of a float32 .npy file, in slabs forced by a
    small budget: within float rounding of the in-memory result (the halo's bound is below)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vol.npy")
        a = rng.random((300, 60, 70)).astype(np.float32)
        np.save(path, a)
        m = np.load(path, mmap_mode="r+")
        for mode in ("mirror", "reflect", "grid-wrap"):
            m[...] = a
            st = splineview.spline_filter_out_of_core(m, order=3, mode=mode,
                                                      memory_budget=4 << 20)
            m.flush()
            want = splineview.spline_filter(a, order=3, mode=mode)
            got = np.load(path)
            d = maxdiff(got, want) / float(np.abs(want).max())
            check(st["slabs"] > 2 and d < 1e-6,
                  "out of core %s: %d slabs, relative difference %.3g" % (mode, st["slabs"], d))
        for bad in (a.astype(np.float64), a[:, ::2], cupy.asarray(a)):
            try:
                splineview.spline_filter_out_of_core(bad)
                check(False, "spline_filter_out_of_core accepted %s" % type(bad))
            except (TypeError, ValueError):
                pass
    print("out of core (memmap): checked")


def test_zoom_out_of_core(rng):
    """zoom_out_of_core from an np.memmap of a float32 .npy (read-only) into an np.memmap output
    file, in slabs of at most 64 output slices, pageable and page-locked: within float rounding of
    the in-memory zoom in double, for several modes, orders and both grid modes."""
    import tempfile
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.npy")
        a = rng.random((600, 20, 16)).astype(np.float32)
        np.save(src, a)
        m = np.load(src, mmap_mode="r")
        cases = 0
        for mode in ("mirror", "reflect", "constant", "grid-constant", "nearest", "grid-wrap",
                     "wrap"):
            for order in (0, 1, 3, 5):
                for grid_mode in (False, True):
                    factors = (1.7, 0.8, 1.0)
                    with warnings.catch_warnings():  # scipy's grid_mode advice, expected here
                        warnings.simplefilter("ignore")
                        want = splineview.zoom(a.astype(np.float64), factors, order=order,
                                               mode=mode, cval=0.25, grid_mode=grid_mode)
                    # Every other case page-locked: plain arrays (a memory map of a file
                    # cannot be locked); the others from and to memory-mapped files.
                    pinned = cases % 2 == 1
                    out_path = os.path.join(tmp, "out.npy")
                    out = np.empty(want.shape, np.float32) if pinned else \
                        np.lib.format.open_memmap(out_path, mode="w+", dtype=np.float32,
                                                  shape=want.shape)
                    st = {}
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        got = splineview.zoom_out_of_core(
                            np.array(m) if pinned else m, factors, out, order=order,
                            mode=mode, cval=0.25, grid_mode=grid_mode, slab_slices=64,
                            pinned=pinned, stats=st)
                    check(got is out, "zoom_out_of_core did not write into the given output")
                    if pinned:
                        result = out
                    else:
                        out.flush()
                        result = np.load(out_path)
                    d = maxdiff(result, want)
                    worst = max(worst, d)
                    check(st["slabs"] > 2 and d < 2e-5,
                          "zoom out of core %s order %d grid_mode %s pinned %s: %d slabs, "
                          "difference %.3g" % (mode, order, grid_mode, pinned, st["slabs"], d))
                    del out, got
                    cases += 1
        try:
            splineview.zoom_out_of_core(m, 2, pinned=True)
            check(False, "zoom_out_of_core(pinned=True) accepted a memory map")
        except ValueError as e:
            check("memory map" in str(e), "pinned memory map: %r" % str(e))
        for bad, why in ((a.astype(np.float64), "float64"), (a[:, ::2], "strided")):
            try:
                splineview.zoom_out_of_core(bad, 2)
                check(False, "zoom_out_of_core accepted a %s input" % why)
            except ValueError:
                pass
        try:
            splineview.zoom_out_of_core(a, 2, np.empty((3, 3, 3), np.float32))
            check(False, "zoom_out_of_core accepted an output of the wrong shape")
        except ValueError:
            pass
    print("zoom out of core (memmap, %d cases): worst difference %.3g" % (cases, worst))


def test_affine_out_of_core(rng):
    """rotate_out_of_core in every plane of a volume (reshape on and off) and
    affine_transform_out_of_core with a shear, from an np.memmap of a .npy into an np.memmap
    output (every other case page-locked plain arrays), in slabs of at most 16 output slices:
    within float rounding of the in-memory transforms in double; order 0 the same samples."""
    import tempfile
    worst = 0.0
    cases = 0
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.npy")
        a = rng.random((90, 24, 20)).astype(np.float32)
        np.save(src, a)
        m = np.load(src, mmap_mode="r")
        shear = np.array([[0.9, 0.2, 0.0], [-0.1, 1.0, 0.05], [0.0, 0.0, 1.1]])
        jobs = []
        for axes in ((1, 2), (0, 2), (0, 1)):
            for reshape in (False, True):
                jobs.append(("rotate %s reshape %s" % (axes, reshape),
                             lambda x, p=axes, r=reshape, **k: splineview.rotate(
                                 x, 23, axes=p, reshape=r, **k),
                             lambda x, out, p=axes, r=reshape, **k: splineview.rotate_out_of_core(
                                 x, 23, axes=p, reshape=r, output=out, **k)))
        jobs.append(("shear", lambda x, **k: splineview.affine_transform(
                         x, shear, (-3.5, 2.0, 1.25), output_shape=(100, 24, 20), **k),
                     lambda x, out, **k: splineview.affine_transform_out_of_core(
                         x, shear, (-3.5, 2.0, 1.25), output_shape=(100, 24, 20), output=out,
                         **k)))
        for name, in_memory, out_of_core in jobs:
            for mode, order in (("mirror", 3), ("constant", 1), ("grid-wrap", 5),
                                ("nearest", 3), ("reflect", 0), ("grid-constant", 3)):
                want = in_memory(a.astype(np.float64), order=order, mode=mode, cval=0.25)
                pinned = cases % 2 == 1
                out_path = os.path.join(tmp, "out.npy")
                out = np.empty(want.shape, np.float32) if pinned else \
                    np.lib.format.open_memmap(out_path, mode="w+", dtype=np.float32,
                                              shape=want.shape)
                st = {}
                got = out_of_core(np.array(m) if pinned else m, out, order=order, mode=mode,
                                  cval=0.25, slab_slices=16, pinned=pinned, stats=st)
                check(got is out, "%s did not write into the given output" % name)
                if pinned:
                    result = out
                else:
                    out.flush()
                    result = np.load(out_path)
                d = maxdiff(result, want)
                worst = max(worst, d)
                same = order != 0 or np.array_equal(result, want.astype(np.float32))
                check(st["slabs"] > 2 and d < 2e-5 and same,
                      "%s %s order %d pinned %s: %d slabs, difference %.3g%s" % (
                          name, mode, order, pinned, st["slabs"], d,
                          "" if same else ", order 0 picked other samples"))
                del out, got
                cases += 1
    print("affine/rotate out of core (memmap, %d cases): worst difference %.3g" % (cases, worst))


def test_cupyx(rng):
    """cupyx.scipy.ndimage on the same inputs: the two GPU implementations agree."""
    worst = 0.0
    for mode in ("mirror", "grid-wrap", "constant", "wrap", "reflect"):
        for order in (1, 3):
            a = rng.random((24, 25, 26))
            ga = cupy.asarray(a)
            c = cupy.asarray(random_coords(rng, a.shape, 2000))
            pairs = [
                (splineview.map_coordinates(ga, c, order=order, mode=mode),
                 cndi.map_coordinates(ga, c, order=order, mode=mode)),
                (splineview.zoom(ga, 1.6, order=order, mode=mode),
                 cndi.zoom(ga, 1.6, order=order, mode=mode)),
            ]
            if order > 1:
                pairs.append((splineview.spline_filter(ga, order=order, mode=mode),
                              cndi.spline_filter(ga, order=order, mode=mode)))
            for ours, theirs in pairs:
                d = maxdiff(host(ours), host(theirs))
                worst = max(worst, d)
                check(d <= 1e-10, "cupyx %s order %d: differs by %.3g" % (mode, order, d))
    print("cupyx: worst difference %.3g" % worst)


def main():
    rng = np.random.default_rng(20261126)
    print("device: %s" % cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    test_map_coordinates(rng)
    test_derivative(rng)
    test_filters(rng)
    test_segmented(rng)
    test_transforms(rng)
    test_semantics(rng)
    test_out_of_core(rng)
    test_zoom_out_of_core(rng)
    test_affine_out_of_core(rng)
    # SPLINEVIEW_GPU_TEST_QUICK=1 (under compute-sanitizer): only splineview's own kernels.
    if not os.environ.get("SPLINEVIEW_GPU_TEST_QUICK"):
        test_torch(rng)
        test_dask_cupy(rng)
        test_cupyx(rng)
    if FAILURES:
        print("%d failures" % len(FAILURES))
        return 1
    print("all GPU checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
