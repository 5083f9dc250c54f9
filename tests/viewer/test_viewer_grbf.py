#!/usr/bin/env python3
"""The viewer's GRBF views (--methods ... grbf, --sigma; issue 18) against an independent numpy
oracle, through the viewer's --screenshot and --report (under Xvfb, started by the caller).

Oracle: the Gaussian RBF interpolant of the float32 samples in double, from a dense solve of the
whole grid's kernel matrix A[i][j] = prod_d exp(-(i_d - j_d)^2 / (2 sigma^2)) (numpy.linalg.solve,
no Kronecker structure, no truncation), then the direct sum s(p) = sum_k w[k] prod_d
exp(-(p_d - k_d)^2 / (2 sigma^2)) over every sample at the view's pixel positions (the report's
grid, rounded to float32 as the views' positions are), mapped through the display window (grey =
value for [0, 1] data) and compared with the screenshot's pixels.

Cases:
  1. zoom mode, a 20 x 26 image (smooth pattern plus noise), pair layout precise | grbf, sigma
     0.85: the grbf view's pixels match the oracle; the report's condition number is numpy's
     (2-norm condition of the dense matrix); the readout at sample positions (--probe) gives f[k]
     (the GRBF interpolates); the overlay's max error of the grbf view lies within the derived
     float bound (the float evaluation, and the float solve's residual through the Lebesgue
     function of the GRBF interpolant, computed here from numpy's per-axis inverses; see
     overlay_bound).
  2. volume mode, a 9 x 11 x 13 volume, every view grbf, sigma 0.8: the axial and sagittal
     views' pixels match the oracle (3-D dense solve); the overlay's figures within the bound.
  3. a refused sigma (1.6: singular in float): the report and the view say why (sigma and the
     condition number), and the view shows no image (its pixels are the empty background).
  4. bad --sigma values exit with status 2.

usage: test_viewer_grbf.py SPLINEVIEW OUTDIR
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from viewer_png import png_rgb  # noqa: E402

U = 2.0 ** -24
SIZE = "1100x760"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s exited %d: %s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout + r.stderr


# ---- the oracle -------------------------------------------------------------------------------

def gauss(t, sigma):
    return np.exp(-t * t / (2.0 * sigma * sigma))


def dense_weights(f, sigma):
    """The weights of the whole grid from one dense solve (C order), and the matrix."""
    shape = f.shape
    idx = np.array(list(np.ndindex(*shape)), np.float64)  # (N, rank)
    a = np.ones((len(idx), len(idx)))
    for d in range(len(shape)):
        a *= gauss(idx[:, d][:, None] - idx[:, d][None, :], sigma)
    w = np.linalg.solve(a, f.astype(np.float64).ravel())
    return w.reshape(shape), a


def grbf_eval(w, pos, sigma):
    """s at positions pos (M, rank), array order, the sum over every sample."""
    rank = w.ndim
    g = [gauss(pos[:, d][:, None] - np.arange(w.shape[d])[None, :], sigma) for d in range(rank)]
    if rank == 2:
        return np.einsum("my,yx,mx->m", g[0], w, g[1], optimize=True)
    t = np.einsum("zyx,mx->mzy", w, g[2], optimize=True)
    t = np.einsum("mzy,my->mz", t, g[1], optimize=True)
    return np.einsum("mz,mz->m", t, g[0], optimize=True)


def grid_positions(grid, rank):
    rows, cols = grid["rows"], grid["cols"]
    r = np.arange(rows, dtype=np.float64)[:, None]
    cc = np.arange(cols, dtype=np.float64)[None, :]
    pos = [((grid["origin"][d] + r * grid["step_row"][d]) + cc * grid["step_col"][d])
           .astype(np.float32).astype(np.float64) for d in range(rank)]
    return np.stack(pos, axis=-1)  # (rows, cols, rank)


def lebesgue(view, shape, sigma):
    """max over the view's measured pixels (inside the data) of sum_k |L_k(x)|, L_k the cardinal
    functions of the GRBF interpolant (L(x) = A^-1 g(x)). A and g(x) are Kronecker products of
    per-axis factors, so L(x) is too and the sum is the product of the axes' sums, each from
    numpy's inverse of that axis's Gaussian matrix."""
    rank = len(shape)
    pos = grid_positions(view["grid"], rank).reshape(-1, rank)
    n = np.array(shape, np.float64)
    pos = pos[np.all((pos >= -0.5) & (pos <= n - 0.5), axis=1)]
    total = np.ones(len(pos))
    for d in range(rank):
        k = np.arange(shape[d], dtype=np.float64)
        inv = np.linalg.inv(gauss(k[:, None] - k[None, :], sigma))
        total *= np.abs(gauss(pos[:, d][:, None] - k[None, :], sigma) @ inv).sum(axis=1)
    return float(total.max())


def overlay_bound(g, view, shape):
    """The overlay's error bound for a grbf view, |s_float - s_double| at its pixels:
     - the float evaluation of the float weights (tests/gl/test_grbf_fetch.cpp's derivation:
       u W prod S (1 + 11 rank + sum_d n_d), the box edge term, the truncation bound);
     - the float solve: s_f - s_d = g(x)^T A^-1 r = sum_k L_k(x) r_k with the residual
       r = A w_f - f, so |s_f - s_d| <= Lambda max|r| (Lambda: lebesgue()). The solve runs axis
       by axis, each line solve backward stable with a perturbation of at most c u ||A_d||
       (Cholesky's gamma_(b+1) |L||L^T| for a band of b <= 13 entries, the factor rounded to
       float, the two triangular solves: c = 16 covers them), so |r| <= rank c u W prod S."""
    sigma = np.array(g["sigma_per_axis"], np.float64)
    radius = np.array(g["radius"], np.float64)
    rank = len(sigma)
    s = 1.0 + np.sqrt(2 * np.pi) * sigma
    prod_s = float(np.prod(s))
    w = g["max_abs_weight"]
    taps = float(np.sum(np.floor(2 * radius) + 1))
    edge = sum(gauss(radius[d], sigma[d]) * prod_s / s[d] for d in range(rank))
    evaluation = U * w * prod_s * (1 + 11 * rank + taps) + w * edge + g["truncation_bound"]
    lam = lebesgue(view, shape, float(sigma[0]))
    solve = lam * rank * 16 * U * w * prod_s
    return evaluation + solve, lam


def check_view_pixels(label, img, view, w, sigma, shape, low=0.0, scale=1.0, tol=1.5,
                      min_share=0.99, rows_part=(0.22, 0.8)):
    x0, y0, wd, ht = [int(round(v)) for v in view["rect"]]
    rank = len(shape)
    pos = grid_positions(view["grid"], rank)
    rows = np.arange(int(rows_part[0] * ht), int(rows_part[1] * ht))
    cols = np.arange(int(0.05 * wd), int(0.95 * wd))
    p = pos[rows][:, cols].reshape(-1, rank)
    pix = img[y0 + rows][:, x0 + cols].reshape(-1, 3).astype(np.float64)
    n = np.array(shape, np.float64)
    inside = np.all((p >= -0.5) & (p <= n - 0.5), axis=1)
    if inside.sum() < 500:
        fail("%s: only %d pixels to check" % (label, inside.sum()))
    s = grbf_eval(w, p[inside], sigma)
    want = np.clip((s - low) * scale, 0, 1) * 255
    err = np.abs(pix[inside] - want[:, None]).max(axis=1)
    share = float(np.mean(err <= tol))
    print("%s: %d pixels, %.2f%% within %g levels of the oracle, median %.2f" %
          (label, inside.sum(), 100 * share, tol, np.median(err)))
    if share < min_share or np.median(err) > 1.0:
        fail("%s: only %.2f%% of the pixels match the oracle" % (label, 100 * share))


# ---- the cases --------------------------------------------------------------------------------

def image(h, w, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    f = 0.5 + 0.25 * np.sin(x / 2.7) * np.cos(y / 3.4) + 0.08 * rng.standard_normal((h, w))
    return np.clip(f, 0.05, 0.95).astype(np.float32)


def case_zoom(viewer, outdir, seed):
    h, w = 20, 26
    f = image(h, w, seed)
    path = os.path.join(outdir, "grbf_image.npy")
    np.save(path, f)
    sigma = 0.85
    shot, rep = os.path.join(outdir, "zoom.png"), os.path.join(outdir, "zoom.json")
    probes = [(3, 4), (17, 11), (0, 0), (25, 19)]
    cmd = [viewer, path, "--mode", "zoom", "--headless", "--screenshot", shot, "--report", rep,
           "--size", SIZE, "--layout", "pair", "--methods", "precise,grbf", "--sigma", str(sigma)]
    for x, y in probes:
        cmd += ["--probe", "%d,%d" % (x, y)]
    run(cmd)
    report = json.load(open(rep))
    img = png_rgb(shot)
    views = report["views"]
    if [v["method"] for v in views] != ["precise", "grbf"] or views[1].get("sigma") != sigma:
        fail("zoom: views %s" % [(v["method"], v.get("sigma")) for v in views])
    g = report.get("grbf", {})
    if g.get("state") != "solved" or g.get("sigma") != sigma:
        fail("zoom: report grbf %s" % g)
    wts, a = dense_weights(f, sigma)
    cond = np.linalg.cond(a)
    print("zoom: condition %.6g (report) vs %.6g (numpy, dense), radius %s" %
          (g["condition"], cond, g["radius"]))
    if abs(g["condition"] - cond) > 1e-6 * cond:
        fail("zoom: condition number %g, numpy's %g" % (g["condition"], cond))
    check_view_pixels("zoom grbf sigma %g" % sigma, img, views[1], wts, sigma, (h, w))
    # The GRBF interpolates: the readout at a sample is the sample.
    for (x, y), r in zip(probes, report["readout"]):
        got = r["values"]["grbf"][0]
        if abs(got - float(f[y, x])) > 1e-9:
            fail("zoom: s(%d, %d) = %.12g, f = %.12g" % (x, y, got, float(f[y, x])))
    print("zoom: s(k) = f[k] at %d probes within 1e-9" % len(probes))
    acc = views[1]["accuracy"]
    bound, lam = overlay_bound(g, views[1], (h, w))
    print("zoom: grbf overlay max %.3g, rms %.3g, derived bound %.3g (Lebesgue %.3g, %d points)"
          % (acc["max_abs"], acc["rms"], bound, lam, acc["points"]))
    if acc["reference"] != "same-method" or acc["points"] < 10000:
        fail("zoom: overlay %s" % acc)
    if not 0 < acc["max_abs"] <= bound:
        fail("zoom: overlay max %g outside (0, %g]" % (acc["max_abs"], bound))
    # The oracle at the measured positions agrees with the overlay's reference to the float
    # solve: the view (a float pipeline) is within the bound of the oracle too.
    return f


def write_nrrd(path, values):
    z, y, x = values.shape
    header = ("NRRD0004\ntype: float\ndimension: 3\nsizes: %d %d %d\nspacings: 1 1 1\n"
              "endian: little\nencoding: raw\n\n" % (x, y, z))
    with open(path, "wb") as fh:
        fh.write(header.encode("ascii"))
        fh.write(values.astype("<f4").tobytes())


def case_volume(viewer, outdir, seed):
    shape = (9, 11, 13)
    rng = np.random.default_rng(seed + 1)
    z, y, x = np.mgrid[0:shape[0], 0:shape[1], 0:shape[2]].astype(np.float64)
    f = 0.5 + 0.2 * np.sin(x / 2.1) * np.cos(y / 2.9) * np.cos(z / 2.3)
    f += 0.06 * rng.standard_normal(shape)
    f = np.clip(f, 0.05, 0.95).astype(np.float32)
    path = os.path.join(outdir, "grbf_volume.nrrd")
    write_nrrd(path, f)
    sigma = 0.8
    shot, rep = os.path.join(outdir, "volume.png"), os.path.join(outdir, "volume.json")
    run([viewer, path, "--mode", "volume", "--headless", "--screenshot", shot, "--report", rep,
         "--size", SIZE, "--methods", "grbf,grbf,grbf,grbf", "--sigma", str(sigma),
         "--window", "1", "--level", "0.5"])
    report = json.load(open(rep))
    img = png_rgb(shot)
    g = report.get("grbf", {})
    if g.get("state") != "solved":
        fail("volume: report grbf %s" % g)
    wts, a = dense_weights(f, sigma)
    cond = np.linalg.cond(a)
    if abs(g["condition"] - cond) > 1e-6 * cond:
        fail("volume: condition number %g, numpy's %g" % (g["condition"], cond))
    views = report["views"]
    for v in views:
        if v["method"] != "grbf" or v.get("sigma") != sigma:
            fail("volume: view %s shows %s sigma %s" % (v["plane"], v["method"], v.get("sigma")))
        acc = v["accuracy"]
        bound, lam = overlay_bound(g, v, shape)
        print("volume %s: overlay max %.3g, rms %.3g, bound %.3g (Lebesgue %.3g, %d points)" %
              (v["plane"], acc["max_abs"], acc["rms"], bound, lam, acc["points"]))
        if not 0 < acc["max_abs"] <= bound or acc["points"] < 1000:
            fail("volume %s: overlay %s (bound %g)" % (v["plane"], acc, bound))
    # The crosshair lines cross the views: most pixels, not all, are the image.
    for v in views[:3]:
        check_view_pixels("volume %s grbf sigma %g" % (v["plane"], sigma), img, v, wts, sigma,
                          shape, low=0.0, scale=1.0, tol=1.5, min_share=0.95)


def case_refused(viewer, outdir, f):
    path = os.path.join(outdir, "grbf_image.npy")
    shot, rep = os.path.join(outdir, "refused.png"), os.path.join(outdir, "refused.json")
    run([viewer, path, "--mode", "zoom", "--headless", "--screenshot", shot, "--report", rep,
         "--size", SIZE, "--layout", "pair", "--methods", "precise,grbf", "--sigma", "1.6"])
    report = json.load(open(rep))
    g = report.get("grbf", {})
    problem = report["views"][1].get("grbf_problem", "")
    print("refused: %s" % problem)
    if g.get("state") != "refused" or "singular in float" not in g.get("error", ""):
        fail("refused: report grbf %s" % g)
    if "sigma 1.6" not in problem or "condition number" not in problem:
        fail("refused: the view's problem does not name sigma and the condition number: %s" %
             problem)
    if "accuracy" in report["views"][1]:
        fail("refused: figures reported for a view that shows nothing")
    # No image: the pane's middle is one flat background colour (the precise pane is not).
    img = png_rgb(shot).astype(np.float64)
    for i, v in enumerate(report["views"]):
        x0, y0, wd, ht = [int(round(t)) for t in v["rect"]]
        mid = img[y0 + ht // 3:y0 + 2 * ht // 3, x0 + wd // 4:x0 + 3 * wd // 4]
        spread = float(mid.reshape(-1, 3).std(axis=0).max())  # per colour channel
        print("refused: view %d (%s) pixel spread %.2f" % (i + 1, v["method"], spread))
        if i == 1 and spread > 0.5:
            fail("refused: the grbf view shows something (spread %.2f)" % spread)
        if i == 0 and spread < 5:
            fail("refused: the precise view shows no image (spread %.2f)" % spread)


def case_bad_sigma(viewer, outdir):
    path = os.path.join(outdir, "grbf_image.npy")
    for bad in ["0", "-1", "65", "nan", "abc"]:
        r = subprocess.run([viewer, path, "--mode", "zoom", "--headless", "--screenshot",
                            os.path.join(outdir, "bad.png"), "--sigma", bad],
                           capture_output=True, text=True)
        if r.returncode != 2 or "sigma" not in r.stderr:
            fail("--sigma %s: exit %d, stderr %s" % (bad, r.returncode, r.stderr))
    print("bad --sigma: exit 2 with a message for 0, -1, 65, nan, abc")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    viewer, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed %d" % seed)
    f = case_zoom(viewer, outdir, seed)
    case_refused(viewer, outdir, f)
    case_bad_sigma(viewer, outdir)
    case_volume(viewer, outdir, seed)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
