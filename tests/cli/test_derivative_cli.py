"""splinetool derivative, gradient, gradient-magnitude, laplacian and hessian (issue 17 part 1)
against numpy and scipy.

  numpy   a reimplementation of the coefficient-domain filter: scipy.ndimage.spline_filter for
          the coefficients (its prefilter is ours, docs/ACCURACY.md), then per axis the FIR
          beta_n^(m)(j - k) at the integers, written here from the truncated-power form of the
          B-spline, on the coefficients padded by numpy's own modes (symmetric = reflect,
          reflect = mirror, wrap = grid-wrap); degrees 2..5, random multi-indices, 1-3 D: within
          1e-11 of the data scale in double, 2e-5 in single.
  scipy   scipy.interpolate.make_interp_spline on the integer grid (knots at the samples, odd
          degrees 3, 5, 7) with periodic boundary conditions (our grid-wrap) and with the odd
          derivatives 1, 3, .. zero at both ends (the whole-sample symmetric spline: our mirror;
          the two coincide by uniqueness of the interpolating spline), BSpline.derivative(m) at
          the samples; tensor products by applying it along each axis in turn. Within 1e-9.
  exact   the Laplacian of x^2 + 3 y^2 is 8 and its Hessian diag(2, 6), 0 off the diagonal,
          away from the borders (a cubic reproduces quadratics).
  sums    laplacian = the sum of the derivative outputs 2e_a; gradient-magnitude = the root of
          the sum of squared gradient components; hessian[..., i, j] = derivative e_i + e_j and
          symmetric; channels filtered one by one; the MRI's NRRD geometry kept.
  errors  order above the degree, wrong order count, bad order text, degree too low for the
          Laplacian/Hessian, OUT format, OUT = IN (--backend cuda: test_bspline_cuda_cli.py),
          non-finite input: one line on stderr, exit 1 or 2, no OUT.

Usage: test_derivative_cli.py SPLINETOOL  (needs numpy and scipy; exit 77 without scipy)
"""
import json
import os
import sys
from math import comb, factorial

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import Tool, Workdir  # noqa: E402

try:
    from scipy.interpolate import make_interp_spline
except ImportError:  # pragma: no cover
    print("scipy not available: skipping")
    sys.exit(77)

ASSET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets",
                     "mri_t1_head.nrrd")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def dbeta(n, m, x):
    """d^m/dx^m beta_n(x) by the truncated powers (right-hand limit at the knots)."""
    x = np.asarray(x, dtype=float)
    half = (n + 1) / 2.0
    s = np.zeros_like(x)
    for i in range(n + 2):
        u = x + half - i
        if n == m:
            term = (u >= 0).astype(float)
        else:
            term = np.where(u > 0, u, 0.0) ** (n - m)
        s += (-1) ** i * comb(n + 1, i) * term
    s /= factorial(n - m)
    return np.where((x >= -half) & (x < half), s, 0.0)


NUMPY_PAD = {"reflect": "symmetric", "mirror": "reflect", "grid-wrap": "wrap"}


def extend(k, length, mode):
    """The sample index the extension holds at k, walked step by step."""
    if mode == "grid-wrap":
        return k % length
    if length == 1:
        return 0
    while k < 0 or k >= length:
        if k < 0:
            k = -1 - k if mode == "reflect" else -k
        if k >= length:
            k = 2 * length - 1 - k if mode == "reflect" else 2 * length - 2 - k
    return k


def coefficients(f, n, mode):
    """The interpolating coefficients by a dense solve per axis: f[j] = sum_k c[ext(k)]
    beta_n(j - k) (the prefilter's extension of the coefficients)."""
    c = f.astype(float)
    if n < 2:
        return c
    r = (n + 2) // 2 + 1
    for axis in range(f.ndim):
        length = f.shape[axis]
        mat = np.zeros((length, length))
        for j in range(length):
            for k in range(j - r, j + r + 1):
                mat[j, extend(k, length, mode)] += float(dbeta(n, 0, float(j - k)))
        moved = np.moveaxis(c, axis, 0)
        c = np.moveaxis(np.linalg.solve(mat, moved.reshape(length, -1)).reshape(moved.shape),
                        0, axis)
    return c


def numpy_derivative(f, order, n, mode):
    r = (n + 2) // 2 + 1
    out = coefficients(f, n, mode)
    for axis, m in enumerate(order):
        # out[j] = sum_k c[k] dbeta(n, m, j - k), k over j - r .. j + r
        offsets = np.arange(-r, r + 1)
        taps = dbeta(n, m, -offsets.astype(float))  # weight of c[j + o]
        width = [(0, 0)] * out.ndim
        width[axis] = (r, r)
        p = np.pad(out, width, mode=NUMPY_PAD[mode])
        acc = np.zeros_like(out)
        length = out.shape[axis]
        for o, w in zip(offsets, taps):
            if w == 0:
                continue
            sl = [slice(None)] * out.ndim
            sl[axis] = slice(r + o, r + o + length)
            acc += w * p[tuple(sl)]
        out = acc
    return out


def scipy_derivative(f, order, n, mode):
    out = f.astype(float)
    for axis, m in enumerate(order):
        length = out.shape[axis]
        x = np.arange(length, dtype=float)
        moved = np.moveaxis(out, axis, 0)
        if mode == "grid-wrap":
            xp = np.arange(length + 1, dtype=float)
            yp = np.concatenate([moved, moved[:1]], axis=0)
            spl = make_interp_spline(xp, yp, k=n, bc_type="periodic", axis=0)
        else:  # mirror: odd derivatives vanish at both ends
            conds = [(d, np.zeros(moved.shape[1:])) for d in range(1, n, 2)]
            spl = make_interp_spline(x, moved, k=n, bc_type=(conds, conds), axis=0)
        out = np.moveaxis(spl.derivative(m)(x) if m else spl(x), 0, axis)
    return out


def main():
    tool = Tool(sys.argv[1])
    w = Workdir()
    rng = np.random.default_rng()
    seed = int(rng.integers(1 << 31))
    print("seed", seed)
    rng = np.random.default_rng(seed)

    # ---- numpy reimplementation -----------------------------------------------------------------
    worst = {"double": 0.0, "single": 0.0}
    for case in range(24):
        rank = 1 + case % 3
        shape = tuple(int(v) for v in rng.integers(4, 14 if rank < 3 else 8, size=rank))
        n = int(rng.integers(2, 6))
        mode = ["reflect", "mirror", "grid-wrap"][case % 3]
        order = [int(v) for v in rng.integers(0, n + 1, size=rank)]
        f = rng.uniform(-1, 1, size=shape)
        inp = w.save("in%d.npy" % case, f)
        want = numpy_derivative(f, order, n, mode)
        for precision, tol in (("double", 1e-11), ("single", 2e-5)):
            out = w.path("d%d_%s.npy" % (case, precision))
            tool.ok("derivative", inp, out, "--order", ",".join(map(str, order)), "--degree", n,
                    "--mode", mode, "--precision", precision)
            got = np.load(out)
            check(got.dtype == (np.float64 if precision == "double" else np.float32),
                  "derivative %s dtype %s" % (precision, got.dtype))
            scale = max(1.0, np.abs(want).max())
            err = np.abs(got - want).max() / scale
            worst[precision] = max(worst[precision], err)
            check(err <= tol, "numpy: %s shape %s degree %d %s order %s: %.3g > %.3g" %
                  (precision, shape, n, mode, order, err, tol))
    print("numpy reimplementation: worst relative error double %.3g, single %.3g" %
          (worst["double"], worst["single"]))

    # ---- scipy.interpolate ----------------------------------------------------------------------
    worst_scipy = 0.0
    for case in range(18):
        rank = 1 + case % 2
        n = [3, 5, 7][case % 3]
        mode = ["grid-wrap", "mirror"][(case // 3) % 2]
        shape = tuple(int(v) for v in rng.integers(n + 3, 20, size=rank))
        order = [int(v) for v in rng.integers(0, n, size=rank)]
        f = rng.uniform(-1, 1, size=shape)
        inp = w.save("s%d.npy" % case, f)
        out = w.path("s%d_out.npy" % case)
        tool.ok("derivative", inp, out, "--order", ",".join(map(str, order)), "--degree", n,
                "--mode", mode)
        want = scipy_derivative(f, order, n, mode)
        err = np.abs(np.load(out) - want).max() / max(1.0, np.abs(want).max())
        worst_scipy = max(worst_scipy, err)
        check(err <= 1e-9, "scipy: shape %s degree %d %s order %s: %.3g" %
              (shape, n, mode, order, err))
    print("scipy make_interp_spline: worst relative error %.3g" % worst_scipy)

    # ---- exact on a quadratic -------------------------------------------------------------------
    y, x = np.mgrid[0:80, 0:100].astype(float)
    q = w.save("q.npy", (x - 50) ** 2 / 10 + 3 * (y - 40) ** 2 / 10)
    tool.ok("laplacian", q, w.path("ql.npy"), "--mode", "mirror")
    tool.ok("hessian", q, w.path("qh.npy"), "--mode", "mirror")
    ql, qh = np.load(w.path("ql.npy")), np.load(w.path("qh.npy"))
    inner = (slice(35, 45), slice(40, 60))  # 35 samples from the borders: 0.268^35 ~ 1e-20
    check(np.abs(ql[inner] - 0.8).max() < 1e-9, "laplacian of (x^2 + 3 y^2)/10 is 0.8: %.3g" %
          np.abs(ql[inner] - 0.8).max())
    check(qh.shape == (80, 100, 2, 2), "hessian shape %s" % (qh.shape,))
    want_h = np.array([[0.6, 0.0], [0.0, 0.2]])
    check(np.abs(qh[inner] - want_h).max() < 1e-9, "hessian of the quadratic: %.3g" %
          np.abs(qh[inner] - want_h).max())

    # ---- sums and components --------------------------------------------------------------------
    v = rng.uniform(0, 1, size=(7, 9, 11))
    vp = w.save("v.npy", v)
    for cmd in ("laplacian", "gradient-magnitude", "gradient", "hessian"):
        tool.ok(cmd, vp, w.path(cmd + ".npy"), "--degree", 4, "--mode", "reflect")
    parts = {}
    for o in ([1, 0, 0], [0, 1, 0], [0, 0, 1], [2, 0, 0], [0, 2, 0], [0, 0, 2], [1, 1, 0],
              [1, 0, 1], [0, 1, 1]):
        name = "p" + "".join(map(str, o)) + ".npy"
        tool.ok("derivative", vp, w.path(name), "--order", ",".join(map(str, o)), "--degree", 4)
        parts[tuple(o)] = np.load(w.path(name))
    lap = np.load(w.path("laplacian.npy"))
    check(np.abs(lap - parts[(2, 0, 0)] - parts[(0, 2, 0)] - parts[(0, 0, 2)]).max() < 1e-12,
          "laplacian = sum of second derivatives")
    grad = np.load(w.path("gradient.npy"))
    check(grad.shape == (7, 9, 11, 3), "gradient shape %s" % (grad.shape,))
    for a, o in enumerate(([1, 0, 0], [0, 1, 0], [0, 0, 1])):
        check(np.array_equal(grad[..., a], parts[tuple(o)]), "gradient component %d" % a)
    mag = np.load(w.path("gradient-magnitude.npy"))
    check(np.abs(mag - np.sqrt((grad ** 2).sum(-1))).max() < 1e-12, "gradient magnitude")
    hes = np.load(w.path("hessian.npy"))
    check(hes.shape == (7, 9, 11, 3, 3), "hessian shape %s" % (hes.shape,))
    check(np.array_equal(hes, np.swapaxes(hes, -1, -2)), "hessian symmetric")
    for i in range(3):
        for j in range(3):
            o = [0, 0, 0]
            o[i] += 1
            o[j] += 1
            check(np.array_equal(hes[..., i, j], parts[tuple(o)]), "hessian (%d, %d)" % (i, j))

    # channels one by one
    rgb = rng.uniform(0, 1, size=(12, 13, 3))
    tool.ok("derivative", w.save("rgb.npy", rgb), w.path("rgbd.npy"), "--order", "0,1",
            "--channels")
    got = np.load(w.path("rgbd.npy"))
    for ch in range(3):
        want = numpy_derivative(rgb[..., ch], [0, 1], 3, "reflect")
        check(np.abs(got[..., ch] - want).max() < 1e-11, "channel %d" % ch)

    # the MRI: NRRD in and out, geometry kept, --json
    r = tool.ok("laplacian", ASSET, w.path("mri_lap.nrrd"), "--precision", "single", "--json")
    rep = json.loads(r.stdout)
    for key in ("seconds", "seconds_load", "seconds_save", "shape", "out_shape", "min", "max"):
        check(key in rep, "--json has %s" % key)
    check(rep["command"] == "laplacian" and rep["dtype"] == "float32", "--json command/dtype")
    with open(ASSET, "rb") as fh:
        head_in = fh.read(2000).split(b"\n\n")[0].decode("latin-1")
    with open(w.path("mri_lap.nrrd"), "rb") as fh:
        head_out = fh.read(2000).split(b"\n\n")[0].decode("latin-1")
    for field in ("space directions", "space origin", "sizes"):
        line_in = [ln for ln in head_in.splitlines() if ln.startswith(field)]
        line_out = [ln for ln in head_out.splitlines() if ln.startswith(field)]
        check(line_in == line_out, "NRRD %s kept: %s vs %s" % (field, line_in, line_out))

    # ---- refusals -------------------------------------------------------------------------------
    a = w.save("a.npy", rng.uniform(size=(10, 12)))
    bad = np.ones((5, 6))
    bad[2, 3] = np.nan
    nanp = w.save("nan.npy", bad)
    cases = [
        (["derivative", a, "OUT.npy", "--order", "4,0"], 2, "above --degree 3"),
        (["derivative", a, "OUT.npy", "--order", "1"], 2, "give one per axis"),
        (["derivative", a, "OUT.npy", "--order", "1,a"], 2, "whole number"),
        (["derivative", a, "OUT.npy", "--order", "9,0"], 2, "above the largest degree"),
        (["laplacian", a, "OUT.npy", "--degree", "1"], 2, "second derivatives"),
        (["hessian", a, "OUT.nrrd"], 2, "must end in .npy"),
        (["gradient", a, "OUT.nii"], 2, "must end in"),
        (["derivative", a, "OUT.png", "--order", "1,0"], 2, "no PNG"),
        (["derivative", a, a, "--order", "1,0"], 2, "same file as IN"),
        (["laplacian", nanp, "OUT.npy"], 1, "NaN"),
        (["hessian", w.save("c.npy", rng.uniform(size=(5, 6, 2))), "OUT.npy", "--channels"], 1,
         "channels"),
    ]
    for args, code, text in cases:
        args = [w.path(x) if isinstance(x, str) and x.startswith("OUT") else x for x in args]
        before = w.listing()
        r = tool.run(*args)
        check(r.returncode == code, "%s: exit %d, want %d (%s)" % (args[0], r.returncode, code,
                                                                  r.stderr.strip()))
        check(text in r.stderr, "%s: message %r lacks %r" % (args[0], r.stderr.strip(), text))
        check(r.stderr.count("\n") == 1, "%s: one line on stderr" % args[0])
        check(w.listing() == before, "%s: no OUT written" % args[0])

    if failures:
        print("%d failures" % len(failures))
        return 1
    print("all derivative CLI checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
