#!/usr/bin/env python3
"""Issue 17's B-spline functions of the Python package on device arrays (CuPy, and torch CUDA
tensors where torch is there): spline_derivative, spline_gradient, spline_gradient_magnitude,
spline_laplace, spline_hessian, smoothing_spline_filter, indirect_transform, reduce2 and expand2
run on the GPU (splineview._cuda over cuda_bspline.h and cuda_pyramid.h) and are compared with
the package's CPU path on the same data (double precision; itself checked against dense numpy
oracles, scipy and the splinetool commands by test_bspline_ops.py).

What is asserted:
- the result is a CuPy array on the input's device, of the CPU path's shape and dtype (float64
  by default; float32 with output=np.float32 or a float32 output array);
- its values lie within a bound derived from the operation (as tests/cuda/test_cuda_bspline.cpp
  derives it; eps of the working dtype): the direct transform 16 R P eps L^R max|f| (P poles,
  L the l1 norm of one axis's filter), the indirect transform 9 R eps max|c|, a derivative
  filter terms (16 R P eps + R (n + 2) eps) L^R 2^|alpha| max|f| (no prefilter term from
  coefficients). In float64 these are 1e-14..1e-12 of the data; the worst share of the bound
  and the worst float64 difference are printed;
- every scipy mode, cval (grid-constant), degrees 1-7 (per-axis degrees for the transforms),
  lambda 0 and > 0 (real and complex poles), prefilter True/False, 1-3 dimensions, tiny and
  larger extents (the tiled and streamed kernels), strided and integer input;
- `output`: a device array of the working dtype is written by the kernels (None returned, the
  same memory), other dtypes are rounded/cast as the CPU path does, in-place use works; a
  NumPy output array and a wrong shape are refused;
- refusals: every error of the CPU path with the same type and message on device input;
- reduce2 (coefficients and samples) and expand2 (cuda_pyramid.h), float64 as on the CPU, every
  pyramid mode, degrees 0-7, prefilter True/False, within passes 1e-12 max|in| prod G (as
  tests/cuda/test_cuda_pyramid.cpp derives it: G the axes' max-norm gains, measured on the CPU);
- a non-blocking stream: the work is ordered on it.

Skips (exit 77, reason printed) without the CUDA module or a CUDA device, or without CuPy.
usage: test_bspline_ops_gpu.py        (PYTHONPATH must reach the built package)
"""
import os
import sys

import numpy as np

import splineview
from splineview import _gpu

ok, why = _gpu.gpu_available()
if not ok:
    print("SKIP: the GPU path cannot run here: " + why)
    sys.exit(77)
try:
    import cupy
except ImportError:
    print("SKIP: CuPy is not installed (the GPU path is tested through CuPy arrays)")
    sys.exit(77)
try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except ImportError:
    torch = None

MODES = ["reflect", "grid-mirror", "mirror", "grid-wrap", "wrap", "nearest", "constant",
         "grid-constant"]
FAILURES = []
SHARE = {}  # worst error / bound per operation
WORST64 = {}  # worst float64 difference per operation
QUICK = bool(os.environ.get("SPLINEVIEW_GPU_TEST_QUICK"))
EPS = {np.dtype(np.float32): float(np.finfo(np.float32).eps),
       np.dtype(np.float64): float(np.finfo(np.float64).eps)}


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def host(x):
    if isinstance(x, cupy.ndarray):
        return cupy.asnumpy(x)
    return x.cpu().numpy()


def within(got, want, bound, op, what):
    """|got - want| <= bound everywhere (NaN fails); records the share of the bound."""
    h = host(got)
    g = np.asarray(h, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    if g.shape != w.shape:
        check(False, "%s: shape %s, expected %s" % (what, g.shape, w.shape))
        return
    err = float(np.max(np.abs(g - w))) if g.size else 0.0
    if not np.isfinite(err):
        check(False, "%s: non-finite values" % what)
        return
    SHARE[op] = max(SHARE.get(op, 0.0), err / bound if bound > 0 else (0.0 if err == 0 else 1e9))
    if h.dtype == np.float64:
        WORST64[op] = max(WORST64.get(op, 0.0), err)
    check(err <= bound, "%s: differs by %.3g, bound %.3g" % (what, err, bound))


def is_result(got, shape, dtype, x):
    return (isinstance(got, cupy.ndarray) and got.shape == tuple(shape) and
            got.dtype == dtype and got.device.id == x.device.id)


# ---- the bounds (as tests/cuda/test_cuda_bspline.cpp derives them) --------------------------
_L1 = {}


def direct_l1(degree, lam):
    """The l1 norm of the direct transform's impulse response on one axis (periodic, long)."""
    key = (degree, lam)
    if key not in _L1:
        line = np.zeros(4001)
        line[2000] = 1.0
        _L1[key] = float(np.abs(splineview.smoothing_spline_filter(line, lam, degree,
                                                                   "grid-wrap")).sum())
    return _L1[key]


def poles(degree, lam):
    return max(1, (degree + 1) // 2 if lam > 0 else degree // 2)


def direct_bound(eps, degrees, lam, maxf):
    R = len(degrees)
    P = max(poles(n, lam) for n in degrees)
    L = float(np.prod([direct_l1(n, lam) for n in degrees]))
    return 16 * R * P * eps * L * maxf


def filter_bound(eps, degree, R, order_sum, terms, coefficients, maxf):
    L = 1.0 if coefficients else direct_l1(degree, 0.0)
    P = max(1, degree // 2)
    coef = 0.0 if coefficients else 16 * R * P * eps
    fir = R * (degree + 2) * eps
    return terms * (coef + fir) * L ** R * 2.0 ** order_sum * maxf


def rounding_bound(eps, degree, R, order_sum, terms, maxf):
    """What rounding float64 input to float32 (eps/2 of max|f| per sample) can become through a
    filter: the samples-to-result map has l1 norm at most terms L^R 2^|alpha|."""
    return terms * direct_l1(degree, 0.0) ** R * 2.0 ** order_sum * eps / 2 * maxf


def random_shape(rng, rank):
    if rank == 1:
        return (int(rng.choice([1, 2, 5, int(rng.integers(3, 60))])),)
    if rank == 2:
        return tuple(int(rng.choice([1, 2, int(rng.integers(3, 30))])) for _ in range(2))
    return tuple(int(rng.choice([1, 3, int(rng.integers(4, 14))])) for _ in range(3))


# ---- derivative filters ----------------------------------------------------------------------
def run_filters(f, mode, degree, prefilter, cval, rng, label):
    """Every filter of `f` (float32 or float64 host data) on the device vs the CPU path."""
    x = cupy.asarray(f)
    dt = np.dtype(f.dtype)
    eps = EPS[dt]
    R = f.ndim
    out = None if dt == np.float64 else np.float32
    maxf = max(float(np.abs(f).max()), abs(cval) if mode == "grid-constant" else 0.0)
    kw = dict(degree=degree, mode=mode, prefilter=prefilter, cval=cval)
    coefficients = not prefilter
    name = "%s %s n=%d %s%s %s" % (label, mode, degree, "x".join(map(str, f.shape)),
                                   "" if prefilter else " coefficients", dt.name)
    order = [int(rng.integers(0, degree + 1)) for _ in range(R)]
    want = splineview.spline_derivative(f, order if R > 1 else order[0], **kw)
    got = splineview.spline_derivative(x, order if R > 1 else order[0], output=out, **kw)
    check(is_result(got, f.shape, dt, x), "derivative %s: type/shape/dtype/device" % name)
    within(got, want, filter_bound(eps, degree, R, sum(order), 1, coefficients, maxf),
           "derivative", "derivative %s order %s" % (name, order))
    if degree >= 1:
        want = splineview.spline_gradient(f, **kw)
        got = splineview.spline_gradient(x, output=out, **kw)
        check(is_result(got, (R,) + f.shape, dt, x), "gradient %s: type/shape" % name)
        within(got, want, filter_bound(eps, degree, R, 1, 1, coefficients, maxf), "gradient",
               "gradient " + name)
        want = splineview.spline_gradient_magnitude(f, **kw)
        got = splineview.spline_gradient_magnitude(x, output=out, **kw)
        check(is_result(got, f.shape, dt, x), "gradient_magnitude %s: type/shape" % name)
        within(got, want, filter_bound(eps, degree, R, 1, R, coefficients, maxf),
               "gradient_magnitude", "gradient_magnitude " + name)
    if degree >= 2:
        want = splineview.spline_laplace(f, **kw)
        got = splineview.spline_laplace(x, output=out, **kw)
        check(is_result(got, f.shape, dt, x), "laplace %s: type/shape" % name)
        within(got, want, filter_bound(eps, degree, R, 2, R, coefficients, maxf), "laplace",
               "laplace " + name)
        want = splineview.spline_hessian(f, **kw)
        got = splineview.spline_hessian(x, output=out, **kw)
        check(is_result(got, (R, R) + f.shape, dt, x), "hessian %s: type/shape" % name)
        within(got, want, filter_bound(eps, degree, R, 2, 1, coefficients, maxf), "hessian",
               "hessian " + name)
        g = host(got)
        check(all(np.array_equal(g[i, j], g[j, i]) for i in range(R) for j in range(R)),
              "hessian %s: not symmetric" % name)


def test_filters(rng):
    count = 0
    for mode in MODES:
        for rank in (1, 2, 3):
            for degree in sorted(set([int(rng.integers(1, 4)), int(rng.integers(2, 8))])):
                shape = random_shape(rng, rank)
                base = rng.uniform(-1, 1, shape)
                for prefilter in (True, False):
                    for dt in (np.float64, np.float32):
                        run_filters(base.astype(dt), mode, degree, prefilter, 0.375, rng,
                                    "small")
                        count += 1
    # Larger arrays: the tiled / streamed kernels and their tile seams.
    big = [(45, 150, 170), (300, 1000), (5000,)]
    if QUICK:
        big = [(20, 70, 90), (100, 300)]
    for shape in big:
        base = rng.uniform(-1, 1, shape)
        for dt in (np.float64, np.float32):
            run_filters(base.astype(dt), "mirror", 3, True, 0.0, rng, "large")
            run_filters(base.astype(dt), "grid-constant", 5, True, 0.5, rng, "large")
            count += 2
    print("derivative filters: %d cases (each: derivative, gradient, magnitude, Laplacian, "
          "Hessian)" % count)


# ---- the direct and indirect transforms ------------------------------------------------------
def test_transforms(rng):
    count = 0
    lams = [0.0, 0.5, 3.0, 60.0]
    for mode in MODES:
        for rank in (1, 2, 3):
            shape = random_shape(rng, rank)
            base = rng.uniform(-1, 1, shape)
            for lam in lams:
                if lam > 0:
                    degrees = [int(rng.choice([1, 3, 5, 7])) for _ in range(rank)]
                else:
                    degrees = [int(rng.integers(0, 8)) for _ in range(rank)]
                for dt in (np.float64, np.float32):
                    f = base.astype(dt)
                    x = cupy.asarray(f)
                    out = None if dt == np.float64 else np.float32
                    deg = degrees if rank > 1 else degrees[0]
                    want = splineview.smoothing_spline_filter(f, lam, deg, mode)
                    got = splineview.smoothing_spline_filter(x, lam, deg, mode, output=out)
                    name = "%s lam=%g n=%s %s %s" % (mode, lam, degrees,
                                                     "x".join(map(str, shape)),
                                                     np.dtype(dt).name)
                    check(is_result(got, shape, dt, x), "direct %s: type/shape" % name)
                    within(got, want, direct_bound(EPS[np.dtype(dt)], degrees, lam,
                                                   float(np.abs(f).max())),
                           "direct_transform", "smoothing_spline_filter " + name)
                    c = base.astype(dt)
                    want = splineview.indirect_transform(c, deg, mode)
                    got = splineview.indirect_transform(cupy.asarray(c), deg, mode, output=out)
                    check(is_result(got, shape, dt, x), "indirect %s: type/shape" % name)
                    within(got, want, 9 * rank * EPS[np.dtype(dt)] * float(np.abs(c).max()),
                           "indirect_transform", "indirect_transform " + name)
                    count += 2
    # Long lines and a larger volume: the tiled passes and their chunks.
    for shape in ([(3, 5000), (40, 130, 150)] if not QUICK else [(3, 2000)]):
        base = rng.uniform(-1, 1, shape)
        for lam in (0.0, 2.0):
            for dt in (np.float64, np.float32):
                f = base.astype(dt)
                got = splineview.smoothing_spline_filter(cupy.asarray(f), lam, 3, "mirror",
                                                         output=dt)
                within(got, splineview.smoothing_spline_filter(f, lam, 3, "mirror"),
                       direct_bound(EPS[np.dtype(dt)], [3] * len(shape), lam,
                                    float(np.abs(f).max())),
                       "direct_transform", "long %s lam=%g %s" % (shape, lam, np.dtype(dt).name))
                count += 1
    print("direct/indirect transforms: %d cases" % count)


# ---- output, dtypes, strides, streams ------------------------------------------------------
def test_outputs(rng):
    f = rng.uniform(-1, 1, (24, 31, 19))
    x = cupy.asarray(f)
    lap = splineview.spline_laplace(f)
    bound = filter_bound(EPS[np.dtype(np.float64)], 3, 3, 2, 3, False, 1.0)
    # A float64 device output is written by the kernels themselves (None returned).
    out = cupy.full(f.shape, np.nan)
    ptr = out.data.ptr
    check(splineview.spline_laplace(x, output=out) is None and out.data.ptr == ptr,
          "output array: None returned, the same memory")
    within(out, lap, bound, "laplace", "output array float64")
    # A float32 output array: float32 working precision.
    out32 = cupy.full(f.shape, np.nan, dtype=cupy.float32)
    check(splineview.spline_laplace(x, output=out32) is None, "float32 output array: None")
    e32 = EPS[np.dtype(np.float32)]
    within(out32, lap, filter_bound(e32, 3, 3, 2, 3, False, 1.0) +
           rounding_bound(e32, 3, 3, 2, 3, 1.0), "laplace",
           "output array float32 from float64 input")
    # Gradient and Hessian into given arrays (components along the first axes).
    g = cupy.full((3,) + f.shape, np.nan)
    check(splineview.spline_gradient(x, output=g) is None, "gradient output array: None")
    within(g, splineview.spline_gradient(f), filter_bound(EPS[np.dtype(np.float64)], 3, 3, 1,
                                                          1, False, 1.0),
           "gradient", "gradient output array")
    h = cupy.full((3, 3) + f.shape, np.nan)
    check(splineview.spline_hessian(x, output=h) is None, "hessian output array: None")
    within(h, splineview.spline_hessian(f), filter_bound(EPS[np.dtype(np.float64)], 3, 3, 2, 1,
                                                         False, 1.0),
           "hessian", "hessian output array")
    # A strided (non-contiguous) output array: filled through a copy.
    wide = cupy.full((24, 62, 19), np.nan)
    view = wide[:, ::2]
    check(splineview.spline_laplace(x, output=view) is None, "strided output: None")
    within(view, lap, bound, "laplace", "strided output array")
    # Integer outputs: rounded half away from zero and clipped as the CPU path does.
    u = (rng.random((30, 40)) * 200).astype(np.uint8)
    for dt in (np.uint8, np.int16):
        got = splineview.spline_derivative(cupy.asarray(u), (0, 1), output=dt)
        want = splineview.spline_derivative(u, (0, 1), output=dt)
        check(got.dtype == dt and int(np.max(np.abs(host(got).astype(int) -
                                                    want.astype(int)))) <= 1,
              "integer output %s (ties may round apart by 1)" % np.dtype(dt).name)
    # Integer input: converted as the CPU path converts it.
    got = splineview.spline_gradient_magnitude(cupy.asarray(u))
    check(got.dtype == np.float64, "uint8 input gives float64")
    within(got, splineview.spline_gradient_magnitude(u),
           filter_bound(EPS[np.dtype(np.float64)], 3, 2, 1, 2, False, 255.0),
           "gradient_magnitude", "uint8 input")
    # Strided input (a transposed view).
    t = x.transpose(2, 0, 1)
    within(splineview.spline_laplace(t), splineview.spline_laplace(np.ascontiguousarray(
        f.transpose(2, 0, 1))), bound, "laplace", "transposed input")
    # In place: the input as its own output (the transform reads it first).
    c = cupy.asarray(f)
    check(splineview.smoothing_spline_filter(c, 1.0, output=c) is None, "in place: None")
    within(c, splineview.smoothing_spline_filter(f, 1.0),
           direct_bound(EPS[np.dtype(np.float64)], [3, 3, 3], 1.0, 1.0), "direct_transform",
           "smoothing_spline_filter in place")
    d = cupy.asarray(f)
    check(splineview.indirect_transform(d, 3, output=d) is None, "indirect in place: None")
    within(d, splineview.indirect_transform(f, 3), 27 * EPS[np.dtype(np.float64)],
           "indirect_transform", "indirect_transform in place")
    # The input is left as it was.
    x0 = x.copy()
    splineview.spline_hessian(x, output=np.float32)
    check(bool(cupy.array_equal(x, x0)), "the input is unchanged")
    # A non-blocking stream: the work is ordered on it.
    s = cupy.cuda.Stream(non_blocking=True)
    big = rng.uniform(-1, 1, (64, 300, 200)).astype(np.float32)
    with s:
        xb = cupy.asarray(big)
        r1 = splineview.spline_laplace(xb, output=np.float32)
        r2 = splineview.smoothing_spline_filter(xb, 2.0, output=np.float32)
        r3 = splineview.spline_gradient(xb, output=np.float32)
    s.synchronize()
    within(r1, splineview.spline_laplace(big), filter_bound(e32, 3, 3, 2, 3, False, 1.0),
           "laplace", "non-default stream laplace")
    within(r2, splineview.smoothing_spline_filter(big, 2.0),
           direct_bound(e32, [3, 3, 3], 2.0, 1.0), "direct_transform",
           "non-default stream smoothing")
    within(r3, splineview.spline_gradient(big), filter_bound(e32, 3, 3, 1, 1, False, 1.0),
           "gradient", "non-default stream gradient")
    print("outputs, dtypes, strides, in place, streams: checked")


# ---- refusals ----------------------------------------------------------------------------------
def outcome(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e), str(e)
    return None, ""


def test_refusals(rng):
    f = rng.random((6, 7))
    x = cupy.asarray(f)
    sv = splineview
    cases = [
        ("order above the degree", lambda a: sv.spline_derivative(a, (4, 0), 3)),
        ("wrong count of orders", lambda a: sv.spline_derivative(a, (1, 0, 0))),
        ("a plain int order for 2-D input", lambda a: sv.spline_derivative(a, 1)),
        ("a float order", lambda a: sv.spline_derivative(a, (1.5, 0))),
        ("a negative order", lambda a: sv.spline_derivative(a, (-1, 0))),
        ("degree 8", lambda a: sv.spline_derivative(a, (1, 0), 8)),
        ("a bad mode", lambda a: sv.spline_derivative(a, (1, 0), mode="bogus")),
        ("laplacian degree 1", lambda a: sv.spline_laplace(a, 1)),
        ("hessian degree 1", lambda a: sv.spline_hessian(a, 1)),
        ("gradient degree 0", lambda a: sv.spline_gradient(a, 0)),
        ("magnitude degree 0", lambda a: sv.spline_gradient_magnitude(a, 0)),
        ("even degree with lam > 0", lambda a: sv.smoothing_spline_filter(a, 0.5, 2)),
        ("even per-axis degree", lambda a: sv.smoothing_spline_filter(a, 0.5, (3, 4))),
        ("negative lam", lambda a: sv.smoothing_spline_filter(a, -1.0)),
        ("lam NaN", lambda a: sv.smoothing_spline_filter(a, float("nan"))),
        ("lam a string", lambda a: sv.smoothing_spline_filter(a, "1")),
        ("wrong count of degrees", lambda a: sv.smoothing_spline_filter(a, 0.5, (3, 3, 3))),
        ("indirect: wrong count of degrees", lambda a: sv.indirect_transform(a, (3,))),
        ("indirect: degree 9", lambda a: sv.indirect_transform(a, 9)),
    ]
    for what, fn in cases:
        want = outcome(lambda: fn(f))
        got = outcome(lambda: fn(x))
        check(want[0] is not None, "%s: the CPU path does not refuse it" % what)
        check(got == want, "%s: device %s(%s), CPU %s(%s)" % (
            what, got[0] and got[0].__name__, got[1], want[0] and want[0].__name__, want[1]))
    # Input shapes and dtypes.
    for what, h in [("4-D input", np.zeros((2, 2, 2, 2))), ("complex input", f.astype(complex)),
                    ("empty axis", np.zeros((0, 4)))]:
        order = (0,) * h.ndim
        want = outcome(lambda: sv.spline_derivative(h, order))
        got = outcome(lambda: sv.spline_derivative(cupy.asarray(h), order))
        check(want[0] is not None and got == want, "%s: device %s(%s), CPU %s(%s)" % (
            what, got[0] and got[0].__name__, got[1], want[0] and want[0].__name__, want[1]))
    # Output arrays.
    t, m = outcome(lambda: sv.spline_laplace(x, output=np.empty(f.shape)))
    check(t is TypeError and "NumPy" in m, "NumPy output for device input: %s(%s)" % (t, m))
    t, m = outcome(lambda: sv.spline_laplace(x, output=cupy.empty((6, 8))))
    want = outcome(lambda: sv.spline_laplace(f, output=np.empty((6, 8))))
    check(t is RuntimeError and (t, m) == want, "wrong output shape: %s(%s) vs %s" % (t, m, want))
    t, m = outcome(lambda: sv.spline_gradient(x, output=cupy.empty(f.shape)))
    check(t is RuntimeError and "shape" in m, "gradient output of the input's shape: %s" % m)
    # The pyramid's refusals.
    z7, z33 = np.zeros(7), np.zeros((3, 3))
    for what, fn, h in [
            ("reduce2 mode nearest", lambda a: sv.reduce2(a, 3, "nearest"), f),
            ("reduce2 periodic odd N", lambda a: sv.reduce2(a, 3, "grid-wrap"), z7),
            ("reduce2 degree 8", lambda a: sv.reduce2(a, 8), f),
            ("expand2 shape mismatch", lambda a: sv.expand2(a, (6, 9)), z33),
            ("expand2 wrong rank", lambda a: sv.expand2(a, (6,)), z33),
            ("expand2 empty shape axis", lambda a: sv.expand2(a, (6, 0)), z33),
            ("expand2 mode constant", lambda a: sv.expand2(a, (6, 6), 3, "constant"), z33)]:
        want = outcome(lambda: fn(h))
        got = outcome(lambda: fn(cupy.asarray(h)))
        check(want[0] is not None and got == want, "%s: device %s(%s), CPU %s(%s)" % (
            what, got[0] and got[0].__name__, got[1], want[0] and want[0].__name__, want[1]))
    print("refusals: checked")


# ---- the pyramid (cuda_pyramid.h) ----------------------------------------------------------
_GAIN = {}


def reduce_gain(n, degree, mode, prefilter):
    """The max-norm gain of reduce2 on one axis of n samples (as tests/cuda/test_cuda_pyramid.cpp
    measures it): the largest l1 norm of a row of the operator, from unit impulses on the CPU."""
    key = (n, degree, mode, prefilter)
    if key not in _GAIN:
        rows = None
        for k in range(n):
            e = np.zeros(n)
            e[k] = 1.0
            c = np.abs(splineview.reduce2(e, degree, mode, prefilter, coefficients=True))
            rows = c if rows is None else rows + c
        _GAIN[key] = float(rows.max())
    return _GAIN[key]


def test_pyramid(rng):
    """reduce2 and expand2 on the device against the CPU path. Both run the same plan in double
    and differ only by double rounding: |GPU - CPU| <= passes 1e-12 max|in| prod G (G the axis
    gains; the coarse samples' and expand2's passes have G = 1)."""
    count = 0
    for mode in ("mirror", "reflect", "grid-mirror", "grid-wrap"):
        for rank in (1, 2, 3):
            for degree in sorted(set([int(rng.integers(0, 4)), int(rng.integers(3, 8))])):
                shape = [int(rng.integers(1, 40 if rank < 3 else 14)) for _ in range(rank)]
                if mode == "grid-wrap":
                    shape = [n + n % 2 for n in shape]
                shape = tuple(shape)
                base = rng.uniform(-1, 1, shape)
                for prefilter in (True, False):
                    for dt in (np.float64, np.float32):
                        f = base.astype(dt)
                        x = cupy.asarray(f)
                        name = "%s n=%d %s%s %s" % (mode, degree, "x".join(map(str, shape)),
                                                    "" if prefilter else " coefficients",
                                                    np.dtype(dt).name)
                        gain = float(np.prod([reduce_gain(n, degree, mode, prefilter)
                                              for n in shape]))
                        maxf = float(np.abs(f).max())
                        coef = splineview.reduce2(f, degree, mode, prefilter, coefficients=True)
                        got = splineview.reduce2(x, degree, mode, prefilter, coefficients=True)
                        check(is_result(got, coef.shape, np.float64, x),
                              "reduce2 %s: type/shape/dtype" % name)
                        within(got, coef, rank * 1e-12 * maxf * gain, "reduce2",
                               "reduce2 coefficients " + name)
                        want = splineview.reduce2(f, degree, mode, prefilter)
                        got = splineview.reduce2(x, degree, mode, prefilter)
                        within(got, want, 2 * rank * 1e-12 * maxf * gain, "reduce2",
                               "reduce2 samples " + name)
                        c = cupy.asarray(coef)
                        want = splineview.expand2(coef, shape, degree, mode)
                        got = splineview.expand2(c, shape, degree, mode)
                        check(is_result(got, shape, np.float64, c),
                              "expand2 %s: type/shape/dtype" % name)
                        within(got, want, rank * 1e-12 * float(np.abs(coef).max()), "expand2",
                               "expand2 " + name)
                        count += 3
    print("pyramid: %d cases" % count)


def test_torch(rng):
    if torch is None:
        print("torch: not installed or no CUDA in it; skipped")
        return
    f = rng.uniform(-1, 1, (20, 21, 22))
    for dt in (torch.float64, torch.float32):
        t = torch.as_tensor(f, device="cuda").to(dt)
        got = splineview.spline_gradient(t)
        check(isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == torch.float64 and
              tuple(got.shape) == (3,) + f.shape, "torch gradient: type/dtype/shape")
        ref = splineview.spline_gradient(t.cpu().numpy())
        bound = filter_bound(EPS[np.dtype(np.float64)], 3, 3, 1, 1, False, 1.0)
        within(got, ref, bound, "gradient", "torch gradient")
        out = torch.empty((3, 3) + f.shape, dtype=torch.float32, device="cuda")
        check(splineview.spline_hessian(t, output=out) is None, "torch hessian output: None")
        within(out, splineview.spline_hessian(t.cpu().numpy()),
               filter_bound(EPS[np.dtype(np.float32)], 3, 3, 2, 1, False, 1.0) +
               rounding_bound(EPS[np.dtype(np.float32)], 3, 3, 2, 1, 1.0), "hessian",
               "torch hessian float32 output")
    print("torch: checked")


def main():
    rng = np.random.default_rng(20261127)
    print("device: %s" % cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    test_filters(rng)
    test_transforms(rng)
    test_outputs(rng)
    test_refusals(rng)
    test_pyramid(rng)
    if not QUICK:
        test_torch(rng)
    for op in sorted(SHARE):
        print("worst error / derived bound %-20s %.3g   (float64 worst difference %.3g)"
              % (op, SHARE[op], WORST64.get(op, 0.0)))
    if FAILURES:
        print("%d failures" % len(FAILURES))
        return 1
    print("all GPU B-spline checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
