#!/usr/bin/env python3
"""The splineview Python package against scipy.ndimage (the oracle, Debian's python3-scipy):
spline_filter1d, spline_filter and map_coordinates for every boundary mode, orders 0-5, 1-3
dimensions, random shapes and random coordinates inside and outside the domain (several
periods out), cval, prefilter on and off; orders 6-7 (beyond scipy) against an independent
double-precision oracle (the interpolation conditions solved as a linear system in numpy);
output dtypes and in-place outputs as scipy gives them; complex data; scipy's errors for bad
arguments.

Tolerance: 1e-12 absolute on data in [0, 1]. Where scipy itself is inexact the comparison is
made with an exact oracle instead (docs/ACCURACY.md, "Boundary modes and scipy"):
- 'reflect'/'grid-mirror' (and 'nearest', which filters like them): scipy's causal start value
  is approximate on lines shorter than about 20 samples (measured: 3e-10 at 8 samples, order 3;
  8e-7 at order 5), so the scipy comparison uses lines of 20 samples or more, and short lines
  are checked against the linear-system oracle in 1-D;
- 'nearest' and 'grid-constant' with prefilter=True: scipy pads 12 samples before filtering,
  which truncates the coefficients' tail (|z|^12: 1e-7 at order 3, 4e-5 at order 5); the oracle
  is scipy's own algorithm with 48 samples of padding (np.pad, spline_filter 'mirror' on the
  long padded lines, map_coordinates prefilter=False), and scipy's direct difference is printed.

usage: test_scipy_api.py            (PYTHONPATH must reach the built package; exit 77 = skip)
"""
import sys
import threading
import time

import numpy as np

try:
    import scipy
    import scipy.ndimage as ndi
except ImportError:
    print("SKIP: scipy is not installed (Debian: python3-scipy)")
    sys.exit(77)

import splineview

from scipy_oracle import FAILURES, MODES, TOL, check, maxdiff, padded_oracle  # noqa: E402



def random_shape(rng, rank, mode="mirror", order=3):
    """Random extents; 20 or more per axis where scipy's 'reflect' start value needs them."""
    if order >= 2 and mode in ("reflect", "grid-mirror", "nearest"):
        lo, hi = 20, 24 if rank == 3 else 40
    else:
        lo, hi = 7, 14 if rank == 3 else 24
    return tuple(int(rng.integers(lo, hi)) for _ in range(rank))


def test_spline_filter(rng):
    worst = 0.0
    n = 0
    for mode in MODES:
        for order in range(0, 6):
            for rank in (1, 2, 3):
                shape = random_shape(rng, rank, mode, order)
                a = rng.random(shape)
                got = splineview.spline_filter(a, order=order, mode=mode)
                # scipy's spline_filter refuses orders 0 and 1 (its spline_filter1d returns the
                # data); ours returns the data for both, the coefficients of those splines.
                want = ndi.spline_filter(a, order=order, mode=mode) if order > 1 else a
                d = maxdiff(got, want)
                worst = max(worst, d)
                n += 1
                check(d <= TOL, "spline_filter %s order %d shape %s: %.3g" % (mode, order, shape, d))
                axis = int(rng.integers(-rank, rank))
                got1 = splineview.spline_filter1d(a, order=order, axis=axis, mode=mode)
                want1 = ndi.spline_filter1d(a, order=order, axis=axis, mode=mode)
                d1 = maxdiff(got1, want1)
                check(d1 <= TOL, "spline_filter1d %s order %d axis %d shape %s: %.3g"
                      % (mode, order, axis, shape, d1))
                worst = max(worst, d1)
    print("spline_filter / spline_filter1d: %d cases x 2, worst |ours - scipy| %.2e" % (n, worst))


def random_coords(rng, shape, m, spread):
    """(d, m) coordinates: most within [-spread*(n-1), (1+spread)*(n-1)], some exact integers
    and half-integers (the nearest-neighbour ties), some exactly on the edges."""
    cols = []
    for n in shape:
        span = max(n - 1, 1)
        c = rng.uniform(-spread * span - 1, (1 + spread) * span + 1, m)
        k = m // 8
        c[:k] = rng.integers(-2 * n, 3 * n, k)
        c[k:2 * k] = rng.integers(-2 * n, 3 * n, k) + 0.5
        c[2 * k] = 0.0
        c[2 * k + 1] = n - 1.0
        cols.append(c)
    return np.array(cols)


def test_map_coordinates(rng):
    worst = {}
    scipy_direct = {}
    n = 0
    for mode in MODES:
        for order in range(0, 6):
            for rank in (1, 2, 3):
                for prefilter in (True, False):
                    shape = random_shape(rng, rank, mode, order)
                    a = rng.random(shape)
                    coords = random_coords(rng, shape, 400, spread=2.5)
                    cval = float(rng.uniform(-1, 2))
                    got = splineview.map_coordinates(a, coords, order=order, mode=mode,
                                                     cval=cval, prefilter=prefilter)
                    want = ndi.map_coordinates(a, coords, order=order, mode=mode, cval=cval,
                                               prefilter=prefilter)
                    if prefilter and order >= 2 and mode in ("nearest", "grid-constant"):
                        scipy_direct[mode] = max(scipy_direct.get(mode, 0.0), maxdiff(got, want))
                        want = padded_oracle(a, coords, order, mode, cval)
                    d = maxdiff(got, want)
                    n += 1
                    worst[mode] = max(worst.get(mode, 0.0), d)
                    if not d <= TOL:
                        bad = np.argmax(np.abs(got - want))
                        check(False, "map_coordinates %s order %d shape %s prefilter %s cval %g: "
                              "%.3g at %s (ours %r, scipy %r)"
                              % (mode, order, shape, prefilter, cval, d,
                                 coords[:, bad].tolist(), got.flat[bad], want.flat[bad]))
    print("map_coordinates: %d cases of 400 points; worst per mode: %s"
          % (n, ", ".join("%s %.1e" % (k, v) for k, v in worst.items())))
    print("  (scipy's own 12-sample padding, direct difference: %s)"
          % ", ".join("%s %.1e" % (k, v) for k, v in scipy_direct.items()))


def bspline(x, n):
    """The centred B-spline of degree n at x (numpy), by the Cox-de Boor recursion."""
    x = np.asarray(x, dtype=np.float64)
    if n == 0:
        return ((x >= -0.5) & (x < 0.5)).astype(np.float64)
    return ((x + (n + 1) / 2) * bspline(x + 0.5, n - 1)
            + ((n + 1) / 2 - x) * bspline(x - 0.5, n - 1)) / n


def oracle_1d_mirror(f, order, x):
    """Independent oracle for 'mirror' in 1-D: the coefficients c (extended whole-sample
    symmetrically) that interpolate f, from a dense linear system over the extension, then
    s(x) = sum_k c[ext(k)] beta(x - k)."""
    n = len(f)
    p = 2 * n - 2 if n > 1 else 1

    def ext(k):
        if n == 1:
            return 0
        r = k % p
        return r if r < n else p - r

    half = order // 2 + 1
    A = np.zeros((n, n))
    for i in range(n):
        for k in range(i - half - 1, i + half + 2):
            A[i, ext(k)] += bspline(i - k, order)
    c = np.linalg.solve(A, f)
    out = np.zeros(len(x))
    for j, xj in enumerate(x):
        k0 = int(np.floor(xj)) - half - 1
        for k in range(k0, k0 + 2 * half + 3):
            out[j] += c[ext(k)] * bspline(xj - k, order)
    return out


def test_high_orders_and_short_lines(rng):
    """Orders 6-7 (scipy stops at 5) and lines of 1-6 samples, against the linear-system
    oracle, 'mirror', positions inside [0, n-1]."""
    worst = 0.0
    for order in range(2, 8):
        for n in list(range(1, 7)) + [9, 13]:
            f = rng.random(n)
            x = rng.uniform(0, n - 1, 50) if n > 1 else np.zeros(50)
            got = splineview.map_coordinates(f, x[None, :], order=order, mode="mirror")
            want = oracle_1d_mirror(f, order, x)
            d = maxdiff(got, want)
            worst = max(worst, d)
            check(d <= 1e-10, "order %d, %d samples, mirror vs the linear system: %.3g"
                  % (order, n, d))
    print("orders 2-7, lines of 1-13 samples vs the linear-system oracle: worst %.2e" % worst)


def test_outputs_and_errors(rng):
    a = (rng.random((9, 11)) * 200).astype(np.uint8)
    coords = random_coords(rng, a.shape, 300, spread=0.2)
    got = splineview.map_coordinates(a, coords, order=3, mode="mirror")
    want = ndi.map_coordinates(a, coords, order=3, mode="mirror")
    check(got.dtype == want.dtype == np.uint8, "uint8 input -> dtype %s (scipy %s)"
          % (got.dtype, want.dtype))
    # scipy rounds half away from zero; out-of-range values are undefined in scipy (C casts) and
    # clipped here, so compare where scipy's float result is in range.
    f = ndi.map_coordinates(a.astype(np.float64), coords, order=3, mode="mirror")
    inside = (f > -0.5) & (f < 255.5)
    check(np.array_equal(got[inside], want[inside]), "uint8 rounding differs from scipy's")
    out = np.empty(coords.shape[1:], dtype=np.float32)
    r = splineview.map_coordinates(a, coords, output=out, order=3, mode="mirror")
    check(r is None, "output array: the call must return None, as scipy's")
    ours = splineview.map_coordinates(a.astype(np.float64), coords, order=3, mode="mirror")
    check(maxdiff(out, ours.astype(np.float32)) == 0, "float32 output array filled with the result")
    check(maxdiff(ours, f) <= 1e-9, "the float64 result differs from scipy's by %.3g"
          % maxdiff(ours, f))
    r2 = splineview.spline_filter(a, output=np.float32)
    check(r2.dtype == np.float32, "spline_filter output=float32 -> %s" % r2.dtype)
    for bad, kind in ((lambda: splineview.map_coordinates(a, coords, mode="bogus"), RuntimeError),
                      (lambda: splineview.map_coordinates(a, coords[:1]), RuntimeError),
                      (lambda: splineview.spline_filter(a, order=8), RuntimeError),
                      (lambda: splineview.spline_filter1d(a, axis=2), ValueError)):
        try:
            bad()
            check(False, "a bad argument was accepted (expected %s)" % kind.__name__)
        except kind:
            pass
    print("outputs and errors: uint8 rounding as scipy, output arrays, dtypes, bad arguments")


def test_complex(rng):
    """Complex data as scipy takes it: real and imaginary parts separately, cval too."""
    a = rng.random((23, 21)) + 1j * rng.random((23, 21))
    coords = random_coords(rng, a.shape, 300, spread=0.5)
    cval = 0.3 - 0.7j
    for mode in ("mirror", "constant", "grid-wrap"):
        got = splineview.map_coordinates(a, coords, order=3, mode=mode, cval=cval)
        want = ndi.map_coordinates(a, coords, order=3, mode=mode, cval=cval)
        check(got.dtype == want.dtype == np.complex128, "complex dtype %s" % got.dtype)
        check(maxdiff(got.real, want.real) <= TOL and maxdiff(got.imag, want.imag) <= TOL,
              "complex map_coordinates %s: %.3g" % (mode, np.abs(got - want).max()))
    out = np.empty(coords.shape[1:], dtype=np.complex64)
    check(splineview.map_coordinates(a, coords, output=out, mode="mirror") is None,
          "complex output array: returns None")
    try:
        splineview.map_coordinates(a, coords, output=np.empty(coords.shape[1:]))
        check(False, "a real output array for complex input was accepted (scipy refuses it)")
    except RuntimeError:
        pass
    z = splineview.zoom(a.astype(np.complex64), 1.5, order=3, mode="mirror")
    zw = ndi.zoom(a.astype(np.complex64), 1.5, order=3, mode="mirror")
    check(z.dtype == zw.dtype == np.complex64 and np.abs(z - zw).max() <= 1e-5,
          "complex64 zoom: dtype %s, %.3g" % (z.dtype, np.abs(z - zw).max()))
    print("complex: map_coordinates (3 modes, complex cval), output arrays, complex64 zoom")


def test_derivative(rng):
    """map_coordinates(..., derivative=axis): against central differences of scipy's own
    interpolant (step 1e-5 samples: truncation about 1e-10 times the third derivative, rounding
    about 1e-11), every mode, orders 1-5, 1-3 D, positions inside the domain away from the
    ends; 'constant' gives 0 outside; orders 6-7 against central differences of ours."""
    worst = 0.0
    h = 1e-5
    for mode in MODES:
        for order in range(1, 8):
            for rank in (1, 2, 3):
                shape = random_shape(rng, rank, mode, min(order, 5))
                a = rng.random(shape)
                m = 60
                coords = np.stack([rng.uniform(1.0, n - 2.0, m) for n in shape])
                # Order 1's slope jumps at the samples: keep the differences off them.
                frac = coords - np.floor(coords)
                coords = np.floor(coords) + np.clip(frac, 0.01, 0.99)
                axis = int(rng.integers(-rank, rank))
                got = splineview.map_coordinates(a, coords, order=order, mode=mode,
                                                 derivative=axis)
                step = np.zeros((rank, 1))
                step[axis] = h
                f = (ndi.map_coordinates if order <= 5 else splineview.map_coordinates)
                if 2 <= order <= 5 and mode in ("nearest", "grid-constant"):
                    f = lambda x, c, **k: padded_oracle(x, c, k["order"], k["mode"], 0.0)  # noqa
                fd = (f(a, coords + step, order=order, mode=mode) -
                      f(a, coords - step, order=order, mode=mode)) / (2 * h)
                d = maxdiff(got, fd)
                worst = max(worst, d)
                tol = 1e-7
                check(d <= tol, "derivative %s order %d %d-D axis %d: %.3g from finite "
                      "differences" % (mode, order, rank, axis, d))
    a = rng.random((12, 13))
    out = splineview.map_coordinates(a, np.array([[-3.0, 20.0], [4.0, 5.0]]), order=3,
                                     mode="constant", cval=7.0, derivative=0)
    check(np.all(out == 0), "derivative outside 'constant' is 0, got %s" % out)
    for bad, exc in ((2, ValueError), (-3, ValueError), (1.0, TypeError), (True, TypeError)):
        try:
            splineview.map_coordinates(a, np.zeros((2, 3)), derivative=bad)
            check(False, "derivative=%r accepted" % (bad,))
        except exc:
            pass
    try:
        splineview.map_coordinates(a, np.zeros((2, 3)), order=0, derivative=0)
        check(False, "order 0 derivative accepted")
    except ValueError:
        pass
    print("derivative: worst %.3g against central differences" % worst)


def test_gil_released(rng):
    """Another Python thread runs while a long call works (the GIL is released)."""
    a = rng.random((256, 256))
    coords = rng.uniform(0, 255, (2, 1500000))
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    t0 = time.perf_counter()
    splineview.map_coordinates(a, coords, order=3, mode="mirror")
    t1 = time.perf_counter()
    stop.set()
    t.join()
    during = [x for x in ticks if t0 < x < t1]
    # With the GIL held for the whole call no tick could happen inside it.
    check(len(during) >= 3 or t1 - t0 < 0.02,
          "GIL: %d ticks of another thread during a %.3f s call" % (len(during), t1 - t0))
    print("GIL released: %d ticks of another thread during a %.2f s call" % (len(during), t1 - t0))


def test_out_of_core_refusals(rng):
    """The out-of-core functions refuse what they cannot take before touching a device, with
    the argument named; without a device they say so (RuntimeError with the reason). On the
    GPU machine tests/python/test_gpu.py checks their results."""
    a = rng.random((20, 8, 9)).astype(np.float32)
    rot = np.eye(3)
    for fn, args in ((splineview.spline_filter_out_of_core, ()),
                     (splineview.zoom_out_of_core, (2,)),
                     (splineview.affine_transform_out_of_core, (rot,)),
                     (splineview.rotate_out_of_core, (30,))):
        for bad, word in ((a.astype(np.float64), "float64"), (a[:, ::2], "strided"),
                          ([[1.0]], "NumPy")):
            try:
                fn(bad, *args)
                check(False, "%s accepted a %s input" % (fn.__name__, word))
            except (TypeError, ValueError) as e:
                check(word in str(e), "%s: the message %r does not name %s"
                      % (fn.__name__, str(e), word))
    try:
        splineview.zoom_out_of_core(a, 2, np.empty((3, 3, 3), np.float32))
        check(False, "zoom_out_of_core accepted an output of the wrong shape")
    except ValueError as e:
        check("shape" in str(e), "wrong output shape: %r" % str(e))
    try:
        splineview.zoom_out_of_core(a, 2, np.empty((40, 16, 18), np.float64))
        check(False, "zoom_out_of_core accepted a float64 output")
    except ValueError as e:
        check("float32" in str(e), "float64 output: %r" % str(e))
    try:
        splineview.affine_transform_out_of_core(a, [1.0, 2.0, 1.0])
        check(False, "affine_transform_out_of_core accepted a 1-D matrix")
    except ValueError as e:
        check("square matrix" in str(e), "1-D matrix: %r" % str(e))
    try:
        splineview.affine_transform_out_of_core(a, np.ones((3, 2)))
        check(False, "affine_transform_out_of_core accepted a 3 x 2 matrix")
    except RuntimeError as e:
        check("columns" in str(e), "3 x 2 matrix: %r" % str(e))
    try:
        splineview.rotate_out_of_core(a, 30, output=np.empty((20, 8, 9), np.float32))
        check(False, "rotate_out_of_core accepted an output of the wrong shape (reshape)")
    except ValueError as e:
        check("shape" in str(e), "rotate output shape: %r" % str(e))
    try:
        splineview.rotate_out_of_core(a, 30, axes=(0, 3))
        check(False, "rotate_out_of_core accepted axes (0, 3)")
    except ValueError as e:
        check("rotation plane" in str(e), "rotate axes: %r" % str(e))
    ok, why = splineview._gpu.gpu_available()
    if not ok:
        for fn, args in ((splineview.spline_filter_out_of_core, ()),
                         (splineview.zoom_out_of_core, (2,)),
                         (splineview.affine_transform_out_of_core, (rot,)),
                         (splineview.rotate_out_of_core, (30,))):
            try:
                fn(a.copy(), *args)
                check(False, "%s ran without a CUDA device" % fn.__name__)
            except RuntimeError as e:
                check("CUDA device" in str(e) and why in str(e),
                      "%s without a device: %r" % (fn.__name__, str(e)))
    print("out-of-core refusals: checked (device: %s)" % ("yes" if ok else why))


def main():
    print("scipy %s, numpy %s, splineview %s" % (scipy.__version__, np.__version__,
                                                  splineview.__version__))
    rng = np.random.default_rng(20261126)
    test_spline_filter(rng)
    test_map_coordinates(rng)
    test_high_orders_and_short_lines(rng)
    test_outputs_and_errors(rng)
    test_complex(rng)
    test_derivative(rng)
    test_gil_released(rng)
    test_out_of_core_refusals(rng)
    if FAILURES:
        print("%d failures" % len(FAILURES))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
