"""splinetool sample/resample --method grbf (issue 18) against an independent numpy oracle.

  oracle    the whole grid's Gaussian kernel matrix built densely in numpy (every pair of
            samples, sum_d (k_d - j_d)^2 / (2 sigma_d^2)), solved with numpy.linalg.solve, and
            s(x) = sum_k w_k exp(...) summed over every sample; 1-D, 2-D (sigma per axis, channels)
            and 3-D, float64 and float32 (--precision single).
  sample    s at random positions (inside, between samples, outside the grid) and at the samples
            (s(k) = f[k]); the JSON's condition number against numpy.linalg.cond of the dense
            matrix (2-norm).
  resample  --zoom (per axis, e.g. 1,1,2 for the axial upsampling), --shape, --shift, --rotate at
            scipy.ndimage's positions (--grid-mode true and false) against the oracle at the same
            positions; --ridge against the dense solve of the per-axis regularised Kronecker
            matrix; --grbf-blocks BxB (overlap 0) against a numpy solve per block, and the
            overlapping blocks' blend continuous across a block border.
  cuda      --backend cuda (cuda_grbf.h) against the CPU in double on the same input (resample
            --zoom and sample); without a device: exit 1 with the reason and no OUT (skipped,
            said so); --grbf-blocks with cuda refused.
  errors    --backend gl, --sigma without --method grbf, sigma
            singular in the working precision (names sigma and the condition number), bad
            --sigma, --overlap without --grbf-blocks, --mode, --degree, sample OUT not .npy; one
            line on stderr, no OUT.

Usage: test_grbf_cli.py SPLINETOOL  (needs numpy)
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import Tool, Workdir, load  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def grid_points(shape):
    return np.stack([g.ravel() for g in np.meshgrid(*[np.arange(n) for n in shape],
                                                     indexing="ij")], 1).astype(float)


def kernel(a, b, sigma):
    """exp(-sum_d (a_d - b_d)^2 / (2 sigma_d^2)) for rows of a against rows of b."""
    d = (a[:, None, :] - b[None, :, :]) / np.asarray(sigma)[None, None, :]
    return np.exp(-0.5 * (d * d).sum(-1))


def oracle(f, sigma, positions, ridge=0.0):
    """Weights by a dense solve of the whole grid; values at positions (M, rank)."""
    shape = f.shape if f.ndim == len(sigma) else f.shape[:-1]
    rank = len(shape)
    pts = grid_points(shape)
    A = kernel(pts, pts, sigma)
    if ridge:
        A = np.ones((len(pts), len(pts)))
        for d in range(rank):  # (A_0 + r I) (x) (A_1 + r I) ...: per axis
            diff = pts[:, None, d] - pts[None, :, d]
            A *= np.exp(-0.5 * (diff / sigma[d]) ** 2) + ridge * (diff == 0)
    F = f.reshape(len(pts), -1)
    w = np.linalg.solve(A, F)
    vals = kernel(np.asarray(positions, float).reshape(-1, rank), pts, sigma) @ w
    return vals, A, w


def main():
    tool = Tool(sys.argv[1])
    wd = Workdir()
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    worst = {}

    # sample: 1-D, 2-D with channels and per-axis sigma, 3-D; both precisions.
    cases = [((23,), 1, [1.0]), ((9, 12), 3, [0.8, 1.2]), ((5, 6, 7), 1, [1.0, 0.9, 1.1])]
    for shape, channels, sigma in cases:
        for prec in ("double", "single"):
            f = rng.uniform(-1, 1, shape + ((channels,) if channels > 1 else ()))
            if prec == "single":
                f = f.astype(np.float32).astype(float)
            inp = wd.save("f.npy", f.astype(np.float32) if prec == "single" else f)
            rank = len(shape)
            pos = np.concatenate([
                rng.uniform(-1.5, np.array(shape) + 0.5, (20, rank)),
                grid_points(shape)[rng.choice(int(np.prod(shape)), 10, replace=False)]])
            cp = wd.save("c.npy", pos)
            out = wd.path("o.npy")
            args = ["sample", inp, cp, out, "--method", "grbf", "--sigma",
                    ",".join(str(s) for s in sigma), "--precision", prec, "--json"]
            if channels > 1:
                args.append("--channels")
            r = tool.run(*args)
            check(r.returncode == 0, "sample %s %s: %s" % (shape, prec, r.stderr))
            if r.returncode:
                continue
            j = json.loads(r.stdout)
            got = load(out).reshape(len(pos), -1)
            ref, A, w = oracle(f, sigma, pos)
            err = np.abs(got - ref).max()
            # double: the solve's error is cond * eps-sized in the weights; the values stay
            # within a few hundred ulps of |f|; float: the same with float's epsilon.
            eps = np.finfo(np.float32 if prec == "single" else np.float64).eps
            tol = 50 * rank * eps * max(1.0, np.abs(w).max()) * (1 + 2.5 * max(sigma)) ** rank
            check(err <= tol, "sample %s %s: %.3g > %.3g" % (shape, prec, err, tol))
            worst[("sample", rank, prec)] = err
            cond = np.linalg.cond(A)
            check(abs(j["condition"] - cond) <= 1e-6 * cond,
                  "condition %s: %g vs numpy %g" % (shape, j["condition"], cond))
            check(j["method"] == "grbf" and j["scheme"] == "exact", "json method/scheme")
            # s(k) = f[k] at the grid rows.
            k = pos[20:].astype(int)
            fk = f[tuple(k.T)].reshape(10, -1)
            check(np.abs(got[20:] - fk).max() <= tol, "s(k) = f[k] %s %s" % (shape, prec))

    # resample: zoom (per axis), shape, shift, rotate, grid modes.
    f2 = rng.uniform(0, 1, (10, 13))
    inp = wd.save("f2.npy", f2)
    from_positions = {
        ("--zoom", "2"): None, ("--zoom", "0.5,3"): None, ("--shape", "7,20"): None,
        ("--shift", "0.3,-1.25"): None, ("--rotate", "17"): None}
    for (opt, val) in from_positions:
        for grid_mode in ("true", "false"):
            if opt in ("--shift", "--rotate") and grid_mode == "false":
                continue
            out = wd.path("r.npy")
            args = ["resample", inp, out, "--method", "grbf", "--sigma", "0.9", opt, val]
            if opt in ("--zoom", "--shape"):
                args += ["--grid-mode", grid_mode]
            r = tool.run(*args)
            check(r.returncode == 0, "resample %s %s: %s" % (opt, val, r.stderr))
            if r.returncode:
                continue
            got = load(out)
            if opt == "--rotate":
                a = np.deg2rad(float(val))
                c, s = np.cos(a), np.sin(a)
                cy, cx = (f2.shape[0] - 1) / 2, (f2.shape[1] - 1) / 2
                Y, X = np.mgrid[0:f2.shape[0], 0:f2.shape[1]].astype(float)
                pos = np.stack([c * (Y - cy) + s * (X - cx) + cy,
                                -s * (Y - cy) + c * (X - cx) + cx], -1).reshape(-1, 2)
            else:
                if opt == "--shift":
                    sh = [float(v) for v in val.split(",")]
                    axes = [np.arange(n) - sh[d] for d, n in enumerate(f2.shape)]
                else:
                    if opt == "--zoom":
                        z = [float(v) for v in val.split(",")]
                        z = z * 2 if len(z) == 1 else z
                        outs = [int(np.round(n * zz)) for n, zz in zip(f2.shape, z)]
                    else:
                        outs = [int(v) for v in val.split(",")]
                    axes = []
                    for n, o in zip(f2.shape, outs):
                        i = np.arange(o, dtype=float)
                        if grid_mode == "true":
                            axes.append((i + 0.5) * n / o - 0.5)
                        else:
                            axes.append(i * (n - 1) / (o - 1) if o > 1 else np.zeros(1))
                pos = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 2)
            ref, _, w = oracle(f2, [0.9, 0.9], pos)
            ref = ref.reshape(got.shape)
            err = np.abs(got - ref).max()
            check(err <= 1e-12, "resample %s %s grid-mode %s: %.3g" % (opt, val, grid_mode, err))
            worst[("resample", opt)] = max(worst.get(("resample", opt), 0), err)

    # Axial upsampling of a small volume: --zoom 1,1,2 style (here 2,1,1 on the slowest axis).
    v = rng.uniform(0, 1, (4, 6, 5))
    inp = wd.save("v.npy", v)
    out = wd.path("vz.npy")
    r = tool.run("resample", inp, out, "--method", "grbf", "--zoom", "2,1,1", "--grid-mode",
                 "false")
    check(r.returncode == 0, "axial zoom: " + r.stderr)
    if r.returncode == 0:
        got = load(out)
        check(got.shape == (8, 6, 5), "axial zoom shape %s" % (got.shape,))
        z = np.arange(8) * 3 / 7
        pos = np.stack(np.meshgrid(z, np.arange(6.0), np.arange(5.0), indexing="ij"),
                       -1).reshape(-1, 3)
        ref = oracle(v, [1.0] * 3, pos)[0].reshape(got.shape)
        err = np.abs(got - ref).max()
        check(err <= 1e-12, "axial zoom: %.3g" % err)
        worst[("resample", "axial")] = err

    # --ridge: the per-axis regularised system.
    out = wd.path("rr.npy")
    r = tool.run("resample", wd.path("f2.npy"), out, "--method", "grbf", "--sigma", "1.5",
                 "--ridge", "0.01", "--shift", "0")
    check(r.returncode == 0, "ridge: " + r.stderr)
    if r.returncode == 0:
        ref = oracle(f2, [1.5, 1.5], grid_points(f2.shape), ridge=0.01)[0].reshape(f2.shape)
        err = np.abs(load(out) - ref).max()
        check(err <= 1e-11, "ridge: %.3g" % err)
        check(np.abs(load(out) - f2).max() > 1e-4, "ridge no longer interpolates")
        worst[("resample", "ridge")] = err

    # --grbf-blocks 12x20, no overlap: every output from its tile's block, solved alone.
    fb = rng.uniform(0, 1, (24, 40))
    inp = wd.save("fb.npy", fb)
    out = wd.path("b.npy")
    r = tool.run("resample", inp, out, "--method", "grbf", "--zoom", "2", "--grbf-blocks",
                 "12x20", "--json")
    check(r.returncode == 0, "blocks: " + r.stderr)
    if r.returncode == 0:
        j = json.loads(r.stdout)
        check(j["scheme"] == "blocked" and j["blocks"] == 4, "blocks json %s" % j)
        got = load(out)
        axes = [(np.arange(2 * n) + 0.5) / 2 - 0.5 for n in fb.shape]
        ref = np.zeros_like(got)
        for by in range(2):
            for bx in range(2):
                blk = fb[12 * by:12 * by + 12, 20 * bx:20 * bx + 20]
                ys = np.nonzero((axes[0] >= 11.5) == bool(by))[0]
                xs = np.nonzero((axes[1] >= 19.5) == bool(bx))[0]
                pos = np.stack(np.meshgrid(axes[0][ys] - 12 * by, axes[1][xs] - 20 * bx,
                                           indexing="ij"), -1).reshape(-1, 2)
                ref[np.ix_(ys, xs)] = oracle(blk, [1.0, 1.0], pos)[0].reshape(len(ys), len(xs))
        err = np.abs(got - ref).max()
        check(err <= 1e-10, "blocks vs per-block numpy solve: %.3g" % err)
        worst[("resample", "blocks")] = err
        # The exact solve differs from the blocked one at the block borders (the seams: zoomed
        # columns 38-41 around x = 19.5) far more than inside the blocks (columns 4-19, at least
        # 9.5 samples from any block border; rows 4-11, away from the border at y = 11.5).
        tool.run("resample", inp, wd.path("e.npy"), "--method", "grbf", "--zoom", "2")
        seam = np.abs(load(wd.path("e.npy")) - got)
        at, inside = seam[4:12, 38:42].max(), seam[4:12, 4:20].max()
        print("seam: |blocked - exact| %.3g at the border, %.3g inside" % (at, inside))
        check(at > 10 * inside, "seams at the block border: %.3g vs interior %.3g" % (at, inside))
    # Overlapping blocks: continuous across the border (sample on both sides of it).
    pos = np.array([[3.3, 19.5 - 1e-7], [3.3, 19.5 + 1e-7]])
    cp = wd.save("cb.npy", pos)
    for k, cont in (("0", False), ("1", True)):
        bs = "12x20" if k == "0" else "14x22"
        r = tool.run("sample", inp, cp, wd.path("sb.npy"), "--method", "grbf", "--grbf-blocks", bs,
                     "--overlap", k)
        check(r.returncode == 0, "sample blocks: " + r.stderr)
        if r.returncode == 0:
            v2 = load(wd.path("sb.npy"))
            jump = abs(v2[1] - v2[0])
            check((jump < 1e-5) == cont, "overlap %s: jump %.3g" % (k, jump))

    # Refusals: one line, exit 1 or 2, no OUT.
    inp = wd.save("f2.npy", f2)

    # The CUDA backend against the CPU, both in double.
    r = tool.run("resample", inp, wd.path("gc.npy"), "--method", "grbf", "--zoom", "2",
                 "--sigma", "0.9", "--backend", "cuda")
    if r.returncode == 1 and "cannot run here" in r.stderr:
        print("cuda: skipped, no device: " + r.stderr.strip())
        check(not os.path.exists(wd.path("gc.npy")), "cuda without a device wrote OUT")
    else:
        check(r.returncode == 0, "cuda resample: exit %d (%s)" % (r.returncode, r.stderr))
        r2 = tool.run("resample", inp, wd.path("gcc.npy"), "--method", "grbf", "--zoom", "2",
                      "--sigma", "0.9")
        check(r2.returncode == 0, "cpu resample: %s" % r2.stderr)
        if r.returncode == 0 and r2.returncode == 0:
            a, b = load(wd.path("gc.npy")), load(wd.path("gcc.npy"))
            err = float(np.max(np.abs(a - b)))
            worst[("cuda", "resample")] = err
            check(err < 1e-11 * max(1.0, float(np.max(np.abs(b)))), "cuda resample: %.3g" % err)
        pts = np.array([[0.3, 1.7], [5.5, 2.25], [-1.0, 3.0], [4.0, 4.0]])
        cp = wd.save("cp.npy", pts)
        r3 = tool.run("sample", inp, cp, wd.path("sc.npy"), "--method", "grbf", "--backend",
                      "cuda")
        r4 = tool.run("sample", inp, cp, wd.path("scc.npy"), "--method", "grbf")
        check(r3.returncode == 0 and r4.returncode == 0, "cuda sample: %s %s" % (r3.stderr,
                                                                               r4.stderr))
        if r3.returncode == 0 and r4.returncode == 0:
            err = float(np.max(np.abs(load(wd.path("sc.npy")) - load(wd.path("scc.npy")))))
            worst[("cuda", "sample")] = err
            check(err < 1e-11, "cuda sample: %.3g" % err)
        r5 = tool.run("resample", inp, wd.path("gb.npy"), "--method", "grbf", "--zoom", "2",
                      "--grbf-blocks", "4", "--backend", "cuda")
        check(r5.returncode == 2 and "cpu only" in r5.stderr, "cuda blocks: %s" % r5.stderr)
    refusals = [
        (["resample", inp, "x.npy", "--method", "grbf", "--zoom", "2", "--backend", "gl"], 2,
         "gl has no GRBF"),
        (["resample", inp, "x.npy", "--zoom", "2", "--sigma", "1"], 2, "--method grbf"),
        (["resample", inp, "x.npy", "--method", "grbf", "--zoom", "2", "--sigma", "3"], 1,
         "condition number"),
        (["resample", inp, "x.npy", "--method", "grbf", "--zoom", "2", "--sigma", "1.4",
          "--precision", "single"], 1, "sigma 1.4"),
        (["resample", inp, "x.npy", "--method", "grbf", "--zoom", "2", "--sigma", "1,2,3"], 2,
         "--sigma"),
        (["resample", inp, "x.npy", "--method", "grbf", "--zoom", "2", "--sigma", "abc"], 2,
         "not a number"),
        (["resample", inp, "x.npy", "--method", "grbf", "--zoom", "2", "--overlap", "1"], 2,
         "--grbf-blocks"),
        (["resample", inp, "x.npy", "--method", "grbf", "--zoom", "2", "--mode", "mirror"], 2,
         "boundary"),
        (["resample", inp, "x.npy", "--method", "grbf"], 2, "--zoom"),
        (["sample", inp, wd.save("c2.npy", np.zeros((2, 2))), "x.npy", "--method", "grbf",
          "--degree", "5"], 2, "--sigma"),
        (["sample", inp, wd.path("c2.npy"), "x.png", "--method", "grbf"], 2, ".npy"),
        (["resample", inp, "x.npy", "--method", "grbf", "--zoom", "2", "--grbf-blocks", "4",
          "--overlap", "2"], 1, "B > 2K"),
    ]
    for args, code, text in refusals:
        args = [a if a != "x.npy" and a != "x.png" else wd.path(a) for a in args]
        r = tool.run(*args)
        out = [a for a in args if a.endswith(("x.npy", "x.png"))]
        check(r.returncode == code, "%s: exit %d, want %d (%s)" % (args[1:], r.returncode, code,
                                                                   r.stderr))
        check(text in r.stderr and r.stderr.count("\n") == 1,
              "%s: stderr %r lacks %r" % (args[1:], r.stderr, text))
        check(not any(os.path.exists(o) for o in out), "%s wrote OUT" % (args[1:],))

    for k, v in sorted(worst.items(), key=str):
        print("worst %-28s %.3g" % (" ".join(str(x) for x in k), v))
    wd.close()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all GRBF CLI checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
