#!/usr/bin/env python3
"""splineview's geometric transforms (zoom, shift, affine_transform, rotate) against
scipy.ndimage 1.10 (the oracle, Debian's python3-scipy): every boundary mode, orders 0-5, 1-3
dimensions, random shapes, per-axis zoom factors below and above 1 with both grid_mode
conventions, shifts, every matrix form of affine_transform (1-D diagonal, (ndim, ndim),
(ndim, ndim + 1), homogeneous (ndim + 1, ndim + 1), diagonal, non-square output), random angles,
axes and reshape for rotate, random cval; orders 6-7 (beyond scipy) and the separable paths
against splineview.map_coordinates at the same positions; output dtypes, output arrays, errors.

Tolerance 1e-12 absolute on data in [0, 1]. Where scipy itself is inexact (docs/ACCURACY.md,
"Boundary modes and scipy") the comparison is with an exact oracle, as in test_scipy_api.py:
lines of 20 samples or more for 'reflect'/'grid-mirror'/'nearest' (scipy's causal start value);
for 'nearest' and 'grid-constant' with prefilter, scipy's own algorithm with 48 samples of
padding instead of its 12, at the positions scipy computes (replicated here with its arithmetic);
scipy's direct difference is printed.

usage: test_transforms.py            (PYTHONPATH must reach the built package; exit 77 = skip)
"""
import itertools
import sys
import warnings

import numpy as np

try:
    import scipy
    import scipy.ndimage as ndi
    import scipy.special
except ImportError:
    print("SKIP: scipy is not installed (Debian: python3-scipy)")
    sys.exit(77)

import splineview
from splineview import _core

from scipy_oracle import FAILURES, MODES, TOL, check, maxdiff, padded_oracle  # noqa: E402

WORST = {}
SCIPY_DIRECT = {}


def random_shape(rng, rank, mode, order):
    if order >= 2 and mode in ("reflect", "grid-mirror", "nearest"):
        lo, hi = 20, 24 if rank == 3 else 36
    else:
        lo, hi = 5, 13 if rank == 3 else 24
    return tuple(int(rng.integers(lo, hi)) for _ in range(rank))


def grid_coords(axes):
    """(d, n0, n1, ...) coordinates of the outer product of per-axis positions."""
    return np.array(np.meshgrid(*axes, indexing="ij"))


# scipy's positions, with its arithmetic (scipy/ndimage/_interpolation.py and its C code).
def zoom_axes(shape, out_shape, grid_mode):
    axes = []
    for n, m in zip(shape, out_shape):
        num, div = (n, m) if grid_mode else (n - 1, m - 1)
        z = num / div if div != 0 else 1.0
        i = np.arange(m, dtype=np.float64)
        axes.append(((i + 0.5) * z) - 0.5 if grid_mode else i * z)
    return axes


def affine_coords(matrix, offset, out_shape):
    o = np.indices(out_shape, dtype=np.float64)
    coords = []
    for h in range(matrix.shape[0]):
        t = np.zeros(out_shape)
        for l in range(len(out_shape)):
            t = t + o[l] * matrix[h, l]
        coords.append(t + offset[h])
    return np.array(coords)


def compare(name, mode, order, prefilter, got, want, exact_coords, a, cval):
    """got vs scipy; for scipy's padded modes vs the exact oracle at exact_coords()."""
    if prefilter and order >= 2 and mode in ("nearest", "grid-constant"):
        SCIPY_DIRECT[mode] = max(SCIPY_DIRECT.get(mode, 0.0), maxdiff(got, want))
        want = exact_coords()
    d = maxdiff(got, want)
    key = name.split()[0]
    WORST[key] = max(WORST.get(key, 0.0), d)
    if not d <= TOL:
        check(False, "%s %s order %d prefilter %s shape %s cval %g: %.3g"
              % (name, mode, order, prefilter, a.shape, cval, d))


def test_zoom_shift(rng):
    n = 0
    for mode, order, rank in itertools.product(MODES, range(6), (1, 2, 3)):
        shape = random_shape(rng, rank, mode, order)
        a = rng.random(shape)
        cval = float(rng.uniform(-1, 2))
        prefilter = bool(rng.integers(0, 4) > 0)
        for grid_mode in (False, True):
            if rng.integers(0, 2):
                zoom = [float(rng.choice([rng.uniform(0.3, 0.95), rng.uniform(1.05, 2.6)]))
                        for _ in range(rank)]
            else:
                zoom = float(rng.uniform(0.4, 2.4))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = splineview.zoom(a, zoom, order=order, mode=mode, cval=cval,
                                      prefilter=prefilter, grid_mode=grid_mode)
                want = ndi.zoom(a, zoom, order=order, mode=mode, cval=cval, prefilter=prefilter,
                                grid_mode=grid_mode)
            axes = zoom_axes(a.shape, want.shape, grid_mode)
            compare("zoom grid_mode=%s zoom=%s" % (grid_mode, zoom), mode, order, prefilter,
                    got, want, lambda: padded_oracle(a, grid_coords(axes), order, mode, cval),
                    a, cval)
            # The separable path equals the point path (map_coordinates) at the same positions.
            mc = splineview.map_coordinates(a, grid_coords(axes), order=order, mode=mode,
                                            cval=cval, prefilter=prefilter)
            d = maxdiff(got, mc)
            WORST["separable-vs-points"] = max(WORST.get("separable-vs-points", 0.0), d)
            check(d <= 1e-13, "zoom %s order %d: separable vs map_coordinates %.3g"
                  % (mode, order, d))
            n += 1
        s = [float(rng.uniform(-6, 6)) for _ in range(rank)]
        if rng.integers(0, 3) == 0:
            s = [float(rng.integers(-4, 5)) for _ in range(rank)]  # whole samples
        got = splineview.shift(a, s, order=order, mode=mode, cval=cval, prefilter=prefilter)
        want = ndi.shift(a, s, order=order, mode=mode, cval=cval, prefilter=prefilter)
        axes = [np.arange(m, dtype=np.float64) + (-v) for m, v in zip(a.shape, s)]
        compare("shift", mode, order, prefilter, got, want,
                lambda: padded_oracle(a, grid_coords(axes), order, mode, cval), a, cval)
        n += 1
    print("zoom / shift: %d cases" % n)


def random_matrix(rng, rank, kind):
    """(matrix argument, offset argument, effective matrix, effective offset, output_shape)."""
    m = rng.uniform(-1.3, 1.3, (rank, rank)) + np.eye(rank) * rng.uniform(0.3, 1.0)
    off = rng.uniform(-4, 4, rank)
    if kind == "diagonal":
        m = np.diag(rng.uniform(-1.5, 1.5, rank))
    if kind == "1d":
        d = rng.uniform(0.4, 1.6, rank) * rng.choice([-1, 1], rank)
        return d, off, None, off, None
    if kind == "n,n+1":
        full = np.hstack([m, off[:, None]])
        return full, 123.0, m, off, None
    if kind == "homogeneous":
        full = np.eye(rank + 1)
        full[:rank, :rank] = m
        full[:rank, rank] = off
        return full, 0.0, m, off, None
    return m, off, m, off, None


def test_affine(rng):
    n = 0
    kinds = ["n,n", "diagonal", "1d", "n,n+1", "homogeneous"]
    for mode, order, rank in itertools.product(MODES, range(6), (1, 2, 3)):
        shape = random_shape(rng, rank, mode, order)
        a = rng.random(shape)
        cval = float(rng.uniform(-1, 2))
        prefilter = bool(rng.integers(0, 4) > 0)
        kind = kinds[n % len(kinds)]
        arg, off_arg, m, off, _ = random_matrix(rng, rank, kind)
        out_shape = tuple(int(rng.integers(4, 26)) for _ in range(rank))
        if kind == "1d":
            out_shape = shape
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = splineview.affine_transform(a, arg, off_arg, output_shape=out_shape,
                                              order=order, mode=mode, cval=cval,
                                              prefilter=prefilter)
            want = ndi.affine_transform(a, arg, off_arg, output_shape=out_shape, order=order,
                                        mode=mode, cval=cval, prefilter=prefilter)
        if kind == "1d":
            axes = [(np.arange(k, dtype=np.float64) + o / z) * z
                    for k, z, o in zip(out_shape, arg, off)]
            coords = lambda: grid_coords(axes)  # noqa: E731
        else:
            coords = lambda: affine_coords(m, off, out_shape)  # noqa: E731
        compare("affine_transform %s" % kind, mode, order, prefilter, got, want,
                lambda: padded_oracle(a, coords(), order, mode, cval), a, cval)
        n += 1
    # A matrix with another output rank (3-D input, 2-D output: a (3, 2) matrix).
    a = rng.random((9, 10, 11))
    m = rng.uniform(-1, 1, (3, 2))
    got = splineview.affine_transform(a, m, [1.0, -2.0, 0.5], output_shape=(12, 13), order=3,
                                      mode="mirror")
    want = ndi.affine_transform(a, m, [1.0, -2.0, 0.5], output_shape=(12, 13), order=3,
                                mode="mirror")
    compare("affine_transform 3x2", "mirror", 3, True, got, want, None, a, 0.0)
    print("affine_transform: %d cases (matrix forms %s) and a 3-D -> 2-D map" % (n, kinds))


def rotate_oracle(a, angle, axes, reshape, order, mode, cval):
    """scipy's rotate with the exact padded oracle per plane."""
    axes = sorted(ax % a.ndim for ax in axes)
    c, s = scipy.special.cosdg(angle), scipy.special.sindg(angle)
    rot = np.array([[c, s], [-s, c]])
    img_shape = np.asarray(a.shape)
    in_plane = img_shape[axes]
    if reshape:
        iy, ix = in_plane
        b = rot @ [[0, 0, iy, iy], [0, ix, 0, ix]]
        out_plane = (np.ptp(b, axis=1) + 0.5).astype(int)
    else:
        out_plane = in_plane
    offset = (in_plane - 1) / 2 - rot @ ((out_plane - 1) / 2)
    out_shape = img_shape.copy()
    out_shape[axes] = out_plane
    out = np.zeros(tuple(out_shape))
    coords = affine_coords(rot, offset, tuple(out_plane))
    for idx in itertools.product(*[[slice(None)] if ax in axes else range(img_shape[ax])
                                   for ax in range(a.ndim)]):
        out[idx] = padded_oracle(a[idx], coords, order, mode, cval)
    return out


def test_rotate(rng):
    n = 0
    for mode, order, rank in itertools.product(MODES, range(6), (2, 3)):
        shape = random_shape(rng, rank, mode, order)
        a = rng.random(shape)
        cval = float(rng.uniform(-1, 2))
        prefilter = bool(rng.integers(0, 4) > 0)
        angle = float(rng.choice([rng.uniform(-400, 400), rng.integers(-4, 5) * 90.0,
                                  rng.integers(-8, 9) * 45.0]))
        axes = tuple(int(x) for x in rng.choice(rank, 2, replace=False))
        if rng.integers(0, 2):
            axes = tuple(x - rank for x in axes)
        reshape = bool(rng.integers(0, 2))
        got = splineview.rotate(a, angle, axes=axes, reshape=reshape, order=order, mode=mode,
                                cval=cval, prefilter=prefilter)
        want = ndi.rotate(a, angle, axes=axes, reshape=reshape, order=order, mode=mode,
                          cval=cval, prefilter=prefilter)
        compare("rotate angle %g axes %s reshape %s" % (angle, axes, reshape), mode, order,
                prefilter, got, want,
                lambda: rotate_oracle(a, angle, axes, reshape, order, mode, cval), a, cval)
        n += 1
    # cosdg / sindg bit for bit as scipy.special's (they decide order-0 ties).
    angles = list(rng.uniform(-1000, 1000, 20000)) + list(np.arange(-720, 720.5, 0.5))
    bad = [x for x in angles if _core.cosdg(x) != scipy.special.cosdg(x)
           or _core.sindg(x) != scipy.special.sindg(x)]
    check(not bad, "cosdg/sindg differ from scipy.special at %d angles, e.g. %r"
          % (len(bad), bad[:3]))
    print("rotate: %d cases; cosdg/sindg equal scipy.special's at %d angles" % (n, len(angles)))


def test_high_orders(rng):
    """Orders 6-7 (scipy stops at 5): the separable and blockwise paths equal
    splineview.map_coordinates at the same positions."""
    worst = 0.0
    for order, mode in itertools.product((6, 7), ("mirror", "reflect", "grid-constant", "wrap")):
        a = rng.random((14, 17, 9))
        axes = zoom_axes(a.shape, (20, 11, 13), True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 'wrap' with grid_mode warns, as in scipy
            got = splineview.zoom(a, (20 / 14, 11 / 17, 13 / 9), order=order, mode=mode,
                                  cval=0.5, grid_mode=True)
        want = splineview.map_coordinates(a, grid_coords(axes), order=order, mode=mode, cval=0.5)
        worst = max(worst, maxdiff(got, want))
        m = rng.uniform(-1, 1, (3, 3))
        got = splineview.affine_transform(a, m, [2.0, 1.0, -1.0], output_shape=(7, 8, 9),
                                          order=order, mode=mode, cval=0.5)
        want = splineview.map_coordinates(a, affine_coords(m, [2.0, 1.0, -1.0], (7, 8, 9)),
                                          order=order, mode=mode, cval=0.5)
        worst = max(worst, maxdiff(got, want))
    check(worst <= 1e-13, "orders 6-7: transforms vs map_coordinates %.3g" % worst)
    print("orders 6-7: zoom and affine_transform vs map_coordinates: worst %.2e" % worst)


def test_outputs_and_errors(rng):
    a = (rng.random((13, 11)) * 200).astype(np.uint8)
    got = splineview.zoom(a, 1.7, order=3, mode="mirror")
    want = ndi.zoom(a, 1.7, order=3, mode="mirror")
    f = ndi.zoom(a.astype(np.float64), 1.7, order=3, mode="mirror")
    inside = (f > -0.5) & (f < 255.5)
    check(got.dtype == np.uint8 and np.array_equal(got[inside], want[inside]),
          "zoom uint8 output differs from scipy's")
    out = np.empty((13, 11), dtype=np.float32)
    check(splineview.rotate(a, 33, reshape=False, output=out, mode="nearest") is None,
          "rotate with an output array must return None")
    ref = ndi.rotate(a.astype(np.float64), 33, reshape=False, mode="nearest")
    check(maxdiff(out, ref) < 1e-3, "rotate into a float32 array: %.3g" % maxdiff(out, ref))
    r = splineview.shift(a, 0.5, output=np.float64)
    check(r.dtype == np.float64, "shift output=float64 -> %s" % r.dtype)
    # Integer shifts with 'mirror' reproduce the shifted samples exactly (order 3 and 5).
    x = rng.random((31, 29))
    for order in (3, 5):
        s = splineview.shift(x, (3, -2), order=order, mode="mirror")
        check(maxdiff(s[3:, :-2], x[:-3, 2:]) < 1e-14, "integer shift, order %d" % order)
    # Empty output (scipy returns an empty array) and the warnings scipy gives.
    e = splineview.zoom(np.ones((3, 4)), 0.1)
    check(e.shape == ndi.zoom(np.ones((3, 4)), 0.1).shape, "zoom to an empty shape")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        splineview.zoom(np.ones((5, 5)), 2, grid_mode=True, mode="constant")
        splineview.affine_transform(np.ones((5, 5)), [1.0, 2.0])
    check(len(w) == 2, "grid_mode with 'constant' and a 1-D matrix each warn, as scipy")
    for bad, kind in ((lambda: splineview.zoom(np.ones((2, 2, 2, 2)), 2), ValueError),
                      (lambda: splineview.rotate(np.ones((2, 2, 2, 2)), 10), ValueError),
                      (lambda: splineview.rotate(np.ones(5), 10), ValueError),
                      (lambda: splineview.rotate(np.ones((5, 5)), 10, axes=(0, 2)), ValueError),
                      (lambda: splineview.zoom(np.ones((5, 5)), (1, 2, 3)), RuntimeError),
                      (lambda: splineview.affine_transform(np.ones((5, 5)), np.ones((3, 2))),
                       RuntimeError),
                      (lambda: splineview.affine_transform(np.ones((5, 5)), np.ones((3, 3))),
                       ValueError),
                      (lambda: splineview.shift(np.ones((5, 5)), 1, mode="bogus"),
                       RuntimeError)):
        try:
            bad()
            check(False, "a bad argument was accepted (expected %s)" % kind.__name__)
        except kind:
            pass
    print("outputs and errors: dtypes, output arrays, integer shifts, empty output, warnings, "
          "bad arguments")


def test_thread_count_variables():
    """The CPU functions' default thread count (threads.h) follows SPLINEVIEW_NUM_THREADS, else
    OMP_NUM_THREADS, else the cores; malformed values are ignored. Fresh processes: the count is
    read once per process."""
    import os
    import subprocess
    cores = os.cpu_count()
    cases = [({"SPLINEVIEW_NUM_THREADS": "3"}, 3), ({"OMP_NUM_THREADS": "2,1"}, 2),
             ({"SPLINEVIEW_NUM_THREADS": "5", "OMP_NUM_THREADS": "2"}, 5),
             ({"SPLINEVIEW_NUM_THREADS": "many", "OMP_NUM_THREADS": "0"}, cores), ({}, cores)]
    for extra, want in cases:
        env = {k: v for k, v in os.environ.items()
               if k not in ("SPLINEVIEW_NUM_THREADS", "OMP_NUM_THREADS")}
        env.update(extra)
        out = subprocess.run([sys.executable, "-c", "from splineview import _core; "
                              "print(_core.default_thread_count())"], env=env,
                             capture_output=True, text=True)
        got = int(out.stdout) if out.returncode == 0 and out.stdout.strip().isdigit() else None
        check(got == want, "default_thread_count with %r: %r (stderr %r), expected %d"
              % (extra, got, out.stderr[-200:], want))


def main():
    print("scipy %s, numpy %s, splineview %s" % (scipy.__version__, np.__version__,
                                                  splineview.__version__))
    rng = np.random.default_rng(20261126)
    test_zoom_shift(rng)
    test_affine(rng)
    test_rotate(rng)
    test_high_orders(rng)
    test_outputs_and_errors(rng)
    test_thread_count_variables()
    print("worst |ours - oracle| per transform: %s"
          % ", ".join("%s %.1e" % (k, v) for k, v in sorted(WORST.items())))
    print("  (scipy's own 12-sample padding, direct difference: %s)"
          % ", ".join("%s %.1e" % (k, v) for k, v in sorted(SCIPY_DIRECT.items())))
    if FAILURES:
        print("%d failures" % len(FAILURES))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
