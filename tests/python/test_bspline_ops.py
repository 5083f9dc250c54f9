#!/usr/bin/env python3
"""splineview's B-spline signal processing functions (issue 17 part 4: spline_derivative,
spline_gradient, spline_gradient_magnitude, spline_laplace, spline_hessian,
smoothing_spline_filter, indirect_transform, reduce2, expand2) against independent oracles:

- a dense numpy oracle: the interpolating spline's coefficients by a dense solve of the sampled
  B-spline matrix of the extended signal (mirror, reflect, grid-wrap), and its derivatives at the
  grid from the closed form beta_n(x) = sum_i (-1)^i C(n+1, i) (x + (n+1)/2 - i)_+^n / n! and
  d^m beta_n(x) = sum_i (-1)^i C(m, i) beta_{n-m}(x + m/2 - i), per axis (tensor product);
- the cubic identities: d/dx at grid point j = (c[j+1] - c[j-1]) / 2 and d2/dx2 = c[j+1] - 2c[j]
  + c[j-1] for c = scipy.ndimage.spline_filter's coefficients (mirror: c[-1] = c[1]);
- lambda = 0 against scipy.ndimage.spline_filter; the smoothing spline against a dense solve of
  the penalised normal equations (B^T B + lam R) c = B^T f on periodic signals, with
  R[k, l] = (-1)^r beta_{2n+1}^(2r)(k - l) (the integral of beta_n^(r)(x - k) beta_n^(r)(x - l)),
  and on mirror signals through their periodic extension of period 2N - 2;
- the indirect transform against the dense sample matrix; reduce2/expand2: expand2 then reduce2
  returns the coarse coefficients (the coarse space is a subspace for odd degrees with 'mirror');
- the splinetool commands (derivative, gradient, gradient-magnitude, laplacian, hessian, smooth,
  indirect, reduce, expand) on the same data, when the tool's path is given;
- refusals with clear messages, output dtypes and arrays, and threads calling at once.

usage: test_bspline_ops.py [SPLINETOOL]   (PYTHONPATH must reach the built package; 77 = skip)
"""
import os
import subprocess
import sys
import tempfile
import threading
from math import comb, factorial

import numpy as np

try:
    import scipy.ndimage as ndi
except ImportError:
    print("SKIP: scipy is not installed (Debian: python3-scipy)")
    sys.exit(77)

import splineview

FAILURES = []
WORST = {}
TOL = 1e-12


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def close(got, want, what, tol=TOL):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        check(False, "%s: shape %s, expected %s" % (what, got.shape, want.shape))
        return
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got - want).max()) / scale
    key = what.split(":")[0]
    WORST[key] = max(WORST.get(key, 0.0), err)
    check(err <= tol, "%s: worst relative error %.3g > %.3g" % (what, err, tol))


# ---- the dense oracle -----------------------------------------------------------------------
def beta(n, x):
    """The centred B-spline of degree n >= 1 (closed form, float64)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in range(n + 2):
        t = x + (n + 1) / 2.0 - i
        out += (-1) ** i * comb(n + 1, i) * np.where(t > 0, t, 0.0) ** n
    return out / factorial(n)


def dbeta(n, m, x):
    """d^m/dx^m beta_n (m <= n - 1: continuous, no knot convention needed)."""
    out = np.zeros_like(np.asarray(x, dtype=np.float64))
    for i in range(m + 1):
        out += (-1) ** i * comb(m, i) * beta(n - m, x + m / 2.0 - i)
    return out


def extended(N, mode):
    """Index k of the extended signal -> index in 0..N-1, for |k| up to a few periods."""
    def at(k):
        if mode == "grid-wrap":
            return k % N
        if mode == "mirror":
            if N == 1:
                return 0
            p = 2 * N - 2
            k %= p
            return k if k < N else p - k
        p = 2 * N  # reflect (grid-mirror)
        k %= p
        return k if k < N else p - 1 - k
    return at


def kernel_matrix(N, n, mode, fn):
    """M[j, k] = sum over the extended signal's indices q mapping to k of fn(j - q)."""
    at = extended(N, mode)
    M = np.zeros((N, N))
    reach = n + 2
    for j in range(N):
        for q in range(j - reach, j + reach + 1):
            M[j, at(q)] += fn(np.array(float(j - q)))
    return M


def along(mat, f, axis):
    return np.moveaxis(np.tensordot(mat, np.moveaxis(f, axis, 0), axes=(1, 0)), 0, axis)


def oracle_derivative(f, order, n, mode):
    """The m-th derivatives of the interpolating spline at the grid, per axis."""
    out = f.astype(np.float64)
    for axis, m in enumerate(order):
        N = f.shape[axis]
        A = kernel_matrix(N, n, mode, lambda x: beta(n, x))
        D = kernel_matrix(N, n, mode, lambda x: dbeta(n, m, x))
        out = along(D @ np.linalg.inv(A), out, axis)
    return out


def test_derivatives_dense(rng):
    cases = [((17,), 3, (1,)), ((17,), 3, (2,)), ((23,), 5, (3,)), ((19,), 4, (1,)),
             ((13, 11), 3, (1, 0)), ((13, 11), 3, (1, 1)), ((12, 10), 2, (0, 1)),
             ((9, 8, 7), 3, (1, 0, 1)), ((9, 8, 7), 5, (0, 2, 1))]
    for shape, n, order in cases:
        f = rng.random(shape)
        for mode in ("mirror", "reflect", "grid-wrap"):
            want = oracle_derivative(f, order, n, mode)
            got = splineview.spline_derivative(f, order if len(order) > 1 else order[0], n, mode)
            close(got, want, "derivative vs dense oracle: %s degree %d order %s %s"
                  % (shape, n, order, mode), 1e-11)
            if mode == "mirror" and n >= 2:
                c = ndi.spline_filter(f, n, mode="mirror")
                got = splineview.spline_derivative(c, order, n, mode, prefilter=False)
                close(got, want, "derivative prefilter=False: %s degree %d %s" % (shape, n, order),
                      1e-11)


def test_cubic_identities(rng):
    f = rng.random((14, 16))

    def centred(c, axis):  # (c[j+1] - c[j-1]) / 2 and c[j+1] - 2 c[j] + c[j-1], mirror ends
        cp = np.moveaxis(np.pad(np.moveaxis(c, axis, 0), [(1, 1)] + [(0, 0)] * (c.ndim - 1),
                                mode="reflect"), 0, axis)  # numpy 'reflect' = scipy 'mirror'
        hi = np.take(cp, np.arange(2, c.shape[axis] + 2), axis=axis)
        lo = np.take(cp, np.arange(0, c.shape[axis]), axis=axis)
        return (hi - lo) / 2, hi - 2 * c + lo

    # The derivative along one axis: the coefficients along that axis only (the spline along
    # the other axes passes through the samples), then the centred differences.
    c0 = ndi.spline_filter1d(f, 3, axis=0, mode="mirror")
    c1 = ndi.spline_filter1d(f, 3, axis=1, mode="mirror")
    d0, dd0 = centred(c0, 0)
    d1, dd1 = centred(c1, 1)
    close(splineview.spline_derivative(f, (1, 0)), d0, "cubic identity: d/dx0")
    close(splineview.spline_derivative(f, (0, 1)), d1, "cubic identity: d/dx1")
    close(splineview.spline_derivative(f, (2, 0)), dd0, "cubic identity: d2/dx0^2")
    close(splineview.spline_laplace(f), dd0 + dd1, "cubic identity: laplacian")
    g = splineview.spline_gradient(f)
    close(g, np.stack([d0, d1]), "cubic identity: gradient")
    close(splineview.spline_gradient_magnitude(f), np.hypot(d0, d1),
          "cubic identity: gradient magnitude")
    # d2/dx0 dx1: the centred differences along both axes of the 2-D coefficients
    d01 = centred(centred(ndi.spline_filter(f, 3, mode="mirror"), 1)[0], 0)[0]
    H = splineview.spline_hessian(f)
    close(H, np.array([[dd0, d01], [d01, dd1]]), "cubic identity: hessian")
    # the first derivative at the grid equals map_coordinates(..., derivative=axis)
    x = np.mgrid[0:14, 0:16].astype(np.float64)
    for axis in (0, 1):
        close(splineview.map_coordinates(f, x, order=3, mode="mirror", derivative=axis),
              g[axis], "gradient vs map_coordinates(derivative=%d)" % axis)


def test_quantities_consistent(rng):
    f = rng.random((8, 9, 10))
    for mode in ("mirror", "nearest", "grid-constant", "wrap", "constant"):
        g = splineview.spline_gradient(f, 3, mode, cval=0.3)
        H = splineview.spline_hessian(f, 3, mode, cval=0.3)
        for k in range(3):
            order = [0, 0, 0]
            order[k] = 1
            close(g[k], splineview.spline_derivative(f, order, 3, mode, cval=0.3),
                  "consistency: gradient component %d %s" % (k, mode))
            for j in range(3):
                order = [0, 0, 0]
                order[k] += 1
                order[j] += 1
                close(H[k, j], splineview.spline_derivative(f, order, 3, mode, cval=0.3),
                      "consistency: hessian [%d, %d] %s" % (k, j, mode))
        close(splineview.spline_laplace(f, 3, mode, cval=0.3), np.trace(H),
              "consistency: laplacian = trace(hessian) %s" % mode)
        close(splineview.spline_gradient_magnitude(f, 3, mode, cval=0.3),
              np.sqrt((g ** 2).sum(axis=0)), "consistency: gradient magnitude %s" % mode)


def test_lambda_zero(rng):
    for shape in ((40,), (31, 22), (9, 10, 11)):
        f = rng.random(shape)
        for n in (2, 3, 4, 5):
            for mode in ("mirror", "grid-wrap", "reflect"):
                if mode == "reflect" and min(shape) < 22:
                    continue  # scipy's reflect start value is inexact on short lines
                want = ndi.spline_filter(f, n, mode=mode)
                got = splineview.smoothing_spline_filter(f, 0.0, n, mode)
                close(got, want, "lambda 0 vs scipy spline_filter: %s degree %d %s"
                      % (shape, n, mode))


def periodic_smoothing(f, n, lam):
    """Dense solve of (B^T B + lam R) c = B^T f, B and R circulant of period N."""
    N = f.shape[0]
    r = (n + 1) // 2
    B = kernel_matrix(N, n, "grid-wrap", lambda x: beta(n, x))
    R = kernel_matrix(N, 2 * n + 1, "grid-wrap",
                      lambda x: (-1) ** r * dbeta(2 * n + 1, 2 * r, x))
    return np.linalg.solve(B.T @ B + lam * R, B.T @ f)


def test_smoothing_dense(rng):
    for N, n, lam in ((16, 3, 0.5), (21, 1, 2.0), (18, 5, 0.05), (24, 3, 30.0), (15, 7, 1.0)):
        f = rng.random(N)
        want = periodic_smoothing(f, n, lam)
        close(splineview.smoothing_spline_filter(f, lam, n, "grid-wrap"), want,
              "smoothing vs dense normal equations: periodic N=%d degree %d lam %g" % (N, n, lam))
        # mirror: the periodic problem of the whole-sample symmetric extension (period 2N - 2)
        ext = np.concatenate([f, f[-2:0:-1]])
        want = periodic_smoothing(ext, n, lam)[:N]
        close(splineview.smoothing_spline_filter(f, lam, n, "mirror"), want,
              "smoothing vs dense normal equations: mirror N=%d degree %d lam %g" % (N, n, lam))
    # 2-D: the tensor product of the 1-D filters, per-axis degrees
    f = rng.random((12, 14))
    c = splineview.smoothing_spline_filter(f, 0.7, (3, 1), "grid-wrap")
    want = np.stack([periodic_smoothing(row, 1, 0.7) for row in f])
    want = np.stack([periodic_smoothing(col, 3, 0.7) for col in want.T]).T
    close(c, want, "smoothing vs dense normal equations: 2-D degrees (3, 1)")
    # the smoothed samples
    s = splineview.indirect_transform(c, (3, 1), "grid-wrap")
    B0 = kernel_matrix(12, 3, "grid-wrap", lambda x: beta(3, x))
    B1 = kernel_matrix(14, 1, "grid-wrap", lambda x: beta(1, x))
    close(s, B0 @ want @ B1.T, "smoothed samples (indirect of the smoothing coefficients)")


def test_indirect(rng):
    for shape, degrees in (((19,), 3), ((11, 13), (3, 2)), ((7, 8, 9), (5, 3, 4)), ((10,), 0)):
        c = rng.random(shape)
        degs = [degrees] * len(shape) if isinstance(degrees, int) else list(degrees)
        for mode in ("mirror", "reflect", "grid-wrap"):
            want = c
            for axis, n in enumerate(degs):
                if n == 0:
                    continue  # beta_0 sampled at the integers is the identity
                want = along(kernel_matrix(shape[axis], n, mode, lambda x, n=n: beta(n, x)),
                             want, axis)
            close(splineview.indirect_transform(c, degrees, mode), want,
                  "indirect vs dense sample matrix: %s degrees %s %s" % (shape, degrees, mode))
        f = rng.random(shape)
        if min(degs) >= 2:
            back = splineview.indirect_transform(ndi.spline_filter(f, degs[0], mode="mirror"),
                                                 degs[0], "mirror")
            close(back, f, "indirect inverts spline_filter: %s" % (shape,))


def test_pyramid(rng):
    for shape in ((21,), (17, 14), (9, 12, 11)):
        for n in (1, 3, 5):
            d = rng.random(tuple((s + 1) // 2 for s in shape))
            fine = splineview.expand2(d, shape, n, "mirror")
            back = splineview.reduce2(fine, n, "mirror", coefficients=True)
            close(back, d, "pyramid: reduce2(expand2(d)) = d, %s degree %d mirror" % (shape, n),
                  1e-10)
        f = np.full(shape, 0.625)
        close(splineview.reduce2(f, 3, "reflect"), np.full(tuple((s + 1) // 2 for s in shape),
                                                           0.625),
              "pyramid: a constant stays constant, %s" % (shape,))


def run_tool(tool, args):
    p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "splinetool %s: exit %d %s" % (args[0], p.returncode,
                                                            p.stderr.strip()))


def test_against_splinetool(tool, rng):
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "in.npy")
        out = os.path.join(tmp, "out.npy")

        def tool_result(args):
            if os.path.exists(out):
                os.remove(out)
            run_tool(tool, args)
            return np.load(out) if os.path.exists(out) else np.full(1, np.nan)

        for shape in ((33,), (20, 17), (9, 11, 10)):
            f = rng.random(shape)
            np.save(inp, f)
            R = len(shape)
            for mode in ("mirror", "reflect", "grid-wrap", "nearest", "grid-constant"):
                common = ["--mode", mode, "--cval", "0.25"]
                for n in (2, 3, 5):
                    order = [1] + [0] * (R - 1) if R == 1 or n < 3 else [1, 2] + [0] * (R - 2)
                    want = tool_result(["derivative", inp, out, "--degree", str(n), "--order",
                                        ",".join(map(str, order))] + common)
                    got = splineview.spline_derivative(f, order, n, mode, cval=0.25)
                    close(got, want, "vs splinetool derivative: %s degree %d %s" % (shape, n, mode))
                want = tool_result(["gradient", inp, out] + common)
                close(np.moveaxis(splineview.spline_gradient(f, 3, mode, cval=0.25), 0, -1),
                      want.reshape(shape + (R,)), "vs splinetool gradient: %s %s" % (shape, mode))
                want = tool_result(["gradient-magnitude", inp, out] + common)
                close(splineview.spline_gradient_magnitude(f, 3, mode, cval=0.25), want,
                      "vs splinetool gradient-magnitude: %s %s" % (shape, mode))
                want = tool_result(["laplacian", inp, out, "--degree", "4"] + common)
                close(splineview.spline_laplace(f, 4, mode, cval=0.25), want,
                      "vs splinetool laplacian: %s %s" % (shape, mode))
                want = tool_result(["hessian", inp, out] + common)
                H = splineview.spline_hessian(f, 3, mode, cval=0.25)
                close(np.moveaxis(np.moveaxis(H, 0, -1), 0, -1), want.reshape(shape + (R, R)),
                      "vs splinetool hessian: %s %s" % (shape, mode))
            for mode in ("mirror", "reflect", "grid-wrap"):
                deg = ",".join(["3", "1", "5"][:R])
                degs = [3, 1, 5][:R]
                want = tool_result(["smooth", inp, out, "--lambda", "0.8", "--degree", deg,
                                    "--mode", mode, "--coefficients"])
                c = splineview.smoothing_spline_filter(f, 0.8, degs, mode)
                close(c, want, "vs splinetool smooth: %s %s" % (shape, mode))
                np.save(inp, c)
                want = tool_result(["indirect", inp, out, "--degree", deg, "--mode", mode])
                close(splineview.indirect_transform(c, degs, mode), want,
                      "vs splinetool indirect: %s %s" % (shape, mode))
                np.save(inp, f)
                if mode == "grid-wrap" and any(s % 2 for s in shape):
                    continue  # the periodic pyramid needs even N
                want = tool_result(["reduce", inp, out, "--mode", mode])
                close(splineview.reduce2(f, 3, mode), want, "vs splinetool reduce: %s %s"
                      % (shape, mode))
                d = tool_result(["reduce", inp, out, "--mode", mode, "--coefficients"])
                close(splineview.reduce2(f, 3, mode, coefficients=True), d,
                      "vs splinetool reduce --coefficients: %s %s" % (shape, mode))
                coarse = os.path.join(tmp, "coarse.npy")
                np.save(coarse, d)
                want = tool_result(["expand", coarse, out, "--mode", mode, "--shape",
                                    ",".join(map(str, shape))])
                close(splineview.expand2(d, shape, 3, mode), want,
                      "vs splinetool expand: %s %s" % (shape, mode))


def refused(fn, exc, words, what):
    try:
        fn()
    except exc as e:
        msg = str(e)
        check(all(w in msg for w in words), "%s: message %r lacks %s" % (what, msg, words))
        return
    except Exception as e:  # noqa: BLE001 - any other exception is a failure
        check(False, "%s: raised %s(%s), expected %s" % (what, type(e).__name__, e, exc.__name__))
        return
    check(False, "%s: not refused" % what)


def test_refusals():
    f = np.random.default_rng(1).random((6, 7))
    sv = splineview
    refused(lambda: sv.spline_derivative(f, (4, 0), 3), ValueError, ["order 4", "degree 3"],
            "order above the degree")
    refused(lambda: sv.spline_derivative(f, (1, 0, 0)), RuntimeError, ["one entry per axis", "3"],
            "wrong count of orders")
    refused(lambda: sv.spline_derivative(f, 1), RuntimeError, ["one entry per axis"],
            "a plain int order for 2-D input")
    refused(lambda: sv.spline_derivative(f, (1.5, 0)), TypeError, ["int"], "a float order")
    refused(lambda: sv.spline_derivative(f, (-1, 0)), ValueError, ["-1"], "a negative order")
    refused(lambda: sv.spline_derivative(f, (1, 0), 8), RuntimeError, ["8"], "degree 8")
    refused(lambda: sv.spline_derivative(f, (1, 0), mode="bogus"), RuntimeError,
            ["boundary mode", "bogus"], "a bad mode")
    refused(lambda: sv.spline_laplace(f, 1), ValueError, ["degree >= 2"], "laplacian degree 1")
    refused(lambda: sv.spline_hessian(f, 1), ValueError, ["degree >= 2"], "hessian degree 1")
    refused(lambda: sv.spline_gradient(f, 0), ValueError, ["degree >= 1"], "gradient degree 0")
    refused(lambda: sv.spline_derivative(np.zeros((2, 2, 2, 2)), (0, 0, 0, 1)), ValueError,
            ["4 dimensions"], "4-D input")
    refused(lambda: sv.spline_derivative(f.astype(complex), (1, 0)), TypeError, ["complex"],
            "complex input")
    refused(lambda: sv.smoothing_spline_filter(f, 0.5, 2), ValueError, ["odd degree", "got 2"],
            "even degree with lam > 0")
    refused(lambda: sv.smoothing_spline_filter(f, 0.5, (3, 4)), ValueError, ["odd degree"],
            "even per-axis degree with lam > 0")
    refused(lambda: sv.smoothing_spline_filter(f, -1.0), ValueError, [">= 0"], "negative lam")
    refused(lambda: sv.smoothing_spline_filter(f, float("nan")), ValueError, ["finite"],
            "lam NaN")
    refused(lambda: sv.smoothing_spline_filter(f, 0.5, (3, 3, 3)), RuntimeError,
            ["one entry per axis"], "wrong count of degrees")
    refused(lambda: sv.indirect_transform(f, (3,)), RuntimeError, ["one entry per axis"],
            "indirect: wrong count of degrees")
    refused(lambda: sv.reduce2(f, 3, "nearest"), ValueError, ["nearest", "pyramid"],
            "reduce2 mode nearest")
    refused(lambda: sv.reduce2(np.zeros(7), 3, "grid-wrap"), ValueError, ["periodic", "7"],
            "reduce2 periodic odd N")
    refused(lambda: sv.expand2(np.zeros((3, 3)), (6, 9)), ValueError, ["coefficients axis 1"],
            "expand2 shape mismatch")
    refused(lambda: sv.expand2(np.zeros((3, 3)), (6,)), ValueError, ["shape has 1 axes"],
            "expand2 wrong rank")


def test_outputs_and_threads(rng):
    f = (rng.random((30, 40)) * 100).astype(np.uint8)
    want = splineview.spline_laplace(f.astype(np.float64))
    got = splineview.spline_laplace(f)
    check(got.dtype == np.float64, "integer input gives float64 (got %s)" % got.dtype)
    close(got, want, "uint8 input")
    got32 = splineview.spline_laplace(f, output=np.float32)
    check(got32.dtype == np.float32, "output=np.float32 dtype")
    close(got32, want.astype(np.float32), "output=np.float32 values", 1e-6)
    buf = np.empty((2, 30, 40))
    check(splineview.spline_gradient(f, output=buf) is None, "output array: returns None")
    close(buf, splineview.spline_gradient(f.astype(np.float64)), "output array: filled")
    # four threads at once (the GIL is released) give the serial results
    arrays = [rng.random((60, 70)) for _ in range(4)]
    serial = [splineview.spline_hessian(a) for a in arrays]
    results = [None] * 4

    def work(i):
        results[i] = splineview.spline_hessian(arrays[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        check(results[i] is not None and np.array_equal(results[i], serial[i]),
              "thread %d: the same bits as the serial call" % i)


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else None
    rng = np.random.default_rng(20251126)
    test_derivatives_dense(rng)
    test_cubic_identities(rng)
    test_quantities_consistent(rng)
    test_lambda_zero(rng)
    test_smoothing_dense(rng)
    test_indirect(rng)
    test_pyramid(rng)
    test_refusals()
    test_outputs_and_threads(rng)
    if tool and os.path.exists(tool):
        test_against_splinetool(tool, rng)
    else:
        print("NOTE: no splinetool given: the comparison with the commands is not run")
    for key in sorted(WORST):
        print("worst %-48s %.3g" % (key, WORST[key]))
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
