#!/usr/bin/python3
"""GRBF interpolation experiments on the CPU (issue 18), driving splinetool; prints markdown.

The experiments of "GRBF interpolation of 2-D and 3-D medical images with CUDA" (Chen et al.)
redone with the exact separable solve (`--method grbf`) beside the published scheme
(`--grbf-blocks`, dense column-pivoting Gauss-Jordan inverses) and the cubic and quintic
B-splines:

  1. the paper's 2-D table: a 60x60 crop of a real photograph (assets/ascent.png), zoom 0.5, 2,
     4, 8 at the paper's positions (output pixel i at i / z), solve and resampling times, MSE by
     the paper's definition (the original pixels against the output pixels that sit on them);
  2. 120x120: the exact solve, four 60x60 blocks (seams) and four 62x62 blocks with one sample of
     overlap (stitched), zoom 2, their distance to the exact result at and away from the block
     borders; the picture docs/images/grbf_seams.png;
  3. the sigma sweep on the 60x60 crop (zoom 2): the condition number beside the MSE of the
     published scheme (float), the exact solve in float and in double;
  4. the axial upsampling of the bundled MRI (assets/mri_t1_head.nrrd, 62x128x128, 3 mm slices):
     every 2nd (3rd) slice kept, upsampled x2 (x3) along the slices, compared with the held-out
     slices, GRBF beside the cubic and quintic B-splines;
  5. down-then-up PSNR on real images (every 2nd pixel kept, interpolated back), and the CPU cost
     per output sample.

Usage: tools/grbf_experiments.py SPLINETOOL [--quick] [--figure docs/images/grbf_seams.png]
(numpy, PIL and matplotlib from Debian's python3; run from the source folder). Timings are wall
clock of splinetool's own JSON (seconds_solve, seconds_evaluate, seconds), default threads.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = None
TMP = None


def run(*args, check=True):
    r = subprocess.run([TOOL] + [str(a) for a in args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("splinetool %s: %s" % (" ".join(map(str, args)), r.stderr))
    return r


def run_json(*args):
    return json.loads(run(*args, "--json").stdout)


def tmp(name):
    return os.path.join(TMP, name)


def save(name, a):
    p = tmp(name)
    np.save(p, a)
    return p


def ascent():
    return np.asarray(Image.open(os.path.join(ROOT, "assets", "ascent.png"))).astype(float)


def mse(a, b):
    return float(np.mean((np.asarray(a, float) - np.asarray(b, float)) ** 2))


def psnr(a, b, peak=255.0):
    m = mse(a, b)
    return float("inf") if m == 0 else 10 * np.log10(peak * peak / m)


def paper_positions(shape, z):
    """Output pixel (i, j) in 0..z n - 1 sits at (i / z, j / z) (the paper's inverse mapping)."""
    axes = [np.arange(int(round(n * z))) / z for n in shape]
    g = np.meshgrid(*axes, indexing="ij")
    return np.stack([x.ravel() for x in g], 1), [len(a) for a in axes], axes


def paper_mse(out, f, axes):
    """The paper's MSE: the original pixels against the output pixels that sit on them."""
    on = [np.nonzero(np.abs(a - np.round(a)) < 1e-9)[0] for a in axes]
    src = [np.round(axes[d][on[d]]).astype(int) for d in range(len(axes))]
    return mse(out[np.ix_(*on)], f[np.ix_(*src)])


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


def sample(f, pos, *extra):
    fp, cp, op = save("f.npy", f), save("c.npy", pos), tmp("o.npy")
    j = run_json("sample", fp, cp, op, "--method", "grbf", *extra)
    return np.load(op), j


# ---------------------------------------------------------------------------------------------
def exp_table(crop, quick):
    rows = []
    zooms = [0.5, 2, 4, 8]
    dense_solve = None
    for z in zooms:
        pos, shape, axes = paper_positions(crop.shape, z)
        row = ["%g" % z, "%dx%d" % tuple(shape)]
        for prec in ("double", "single"):
            out, j = sample(crop, pos, "--precision", prec)
            out = out.reshape(shape)
            row += ["%.2e" % j["seconds_solve"], "%.2e" % j["seconds_evaluate"],
                    "%.2e" % paper_mse(out, crop, axes)]
        if not quick:  # the published scheme: one 60x60 block, a dense 3600 x 3600 inverse
            out, j = sample(crop, pos, "--grbf-blocks", "60", "--precision", "single")
            out = out.reshape(shape)
            dense_solve = j["seconds_solve"]
            row += ["%.3g" % j["seconds_solve"], "%.2e" % j["seconds_evaluate"],
                    "%.2e" % paper_mse(out, crop, axes)]
        else:
            row += ["-", "-", "-"]
        rows.append(row)
    return table(["zoom", "output", "exact double: solve s", "resample s", "MSE",
                  "exact float: solve s", "resample s", "MSE",
                  "paper's dense GE (float): solve s", "resample s", "MSE"], rows), dense_solve


# ---------------------------------------------------------------------------------------------
def exp_seams(img120, figure, quick):
    fp = save("f120.npy", img120)
    res = {}
    for name, extra in (("exact (double)", []), ("exact (float)", ["--precision", "single"]),
                        ("4 blocks 60x60 (float)", ["--grbf-blocks", "60", "--precision",
                                                    "single"]),
                        ("4 blocks 62x62, overlap 1, stitched (float)",
                         ["--grbf-blocks", "62", "--overlap", "1", "--precision", "single"])):
        if quick and "blocks" in name:
            continue
        op = tmp("s.npy")
        j = run_json("resample", fp, op, "--method", "grbf", "--zoom", "2", *extra)
        res[name] = (np.load(op).astype(float), j)
    ref = res["exact (double)"][0]
    # Zoom 2 with --grid-mode true: output i at (i + 1/2)/2 - 1/2; the block border x = 59.5
    # falls between outputs 119 and 120. Border band: outputs 118..121 on either axis.
    band = np.zeros(ref.shape, bool)
    band[118:122, :] = True
    band[:, 118:122] = True
    rows = []
    for name, (out, j) in res.items():
        d = np.abs(out - ref)
        rows.append([name, "%.3g" % j["seconds_solve"], "%.3g" % j["seconds_evaluate"],
                     "%.3g" % d[band].max(), "%.3g" % np.sqrt(np.mean(d[band] ** 2)),
                     "%.3g" % d[~band].max(), "%.3g" % mse(out, ref)])
    if figure and not quick:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        blocked = res["4 blocks 60x60 (float)"][0]
        stitched = res["4 blocks 62x62, overlap 1, stitched (float)"][0]
        fig, ax = plt.subplots(1, 4, figsize=(12, 3.5))
        fig.subplots_adjust(left=0.01, right=0.93, bottom=0.02, top=0.84, wspace=0.05)
        ax[0].imshow(ref, cmap="gray", vmin=0, vmax=255)
        ax[0].set_title("exact GRBF, zoom 2", fontsize=9)
        ax[1].imshow(blocked, cmap="gray", vmin=0, vmax=255)
        ax[1].set_title("four 60x60 blocks (as published)", fontsize=9)
        vmax = np.abs(blocked - ref).max()
        for k, (img, t) in enumerate(((blocked, "|60x60 blocks - exact|"),
                                      (stitched, "|62x62 stitched - exact|"))):
            im = ax[2 + k].imshow(np.abs(img - ref), cmap="magma", vmin=0, vmax=vmax)
            ax[2 + k].set_title(t + ", max %.1f" % np.abs(img - ref).max(), fontsize=9)
        cax = fig.add_axes([0.94, 0.1, 0.012, 0.7])
        fig.colorbar(im, cax=cax, label="grey levels")
        for a in ax:
            a.set_xticks([])
            a.set_yticks([])
        fig.suptitle("ascent.png rows 150-269, columns 200-319 (120x120 -> 240x240), sigma 1; "
                     "block borders on the middle lines", fontsize=10)
        fig.savefig(figure, dpi=80)
        plt.close(fig)
    return table(["scheme", "solve s", "resample s", "max |diff| at the borders",
                  "RMS at the borders", "max |diff| elsewhere", "MSE vs exact double"], rows)


# ---------------------------------------------------------------------------------------------
def exp_sigma(crop, quick):
    pos, shape, axes = paper_positions(crop.shape, 2)
    fp, cp = save("fs.npy", crop), save("cs.npy", pos)
    # down-then-up on the same crop: every 2nd pixel of a 59x59 crop, back to 59x59.
    c59 = crop[:59, :59]
    d30 = save("d30.npy", c59[::2, ::2])
    sigmas = [0.6, 0.8, 1.0, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 2.0]
    if quick:
        sigmas = [0.8, 1.0, 1.6]
    rows = []
    for s in sigmas:
        row = ["%.1f" % s]
        cond = None
        for prec in ("single", "double"):
            r = run("sample", fp, cp, tmp("o.npy"), "--method", "grbf", "--sigma", s,
                    "--precision", prec, "--json", check=False)
            if r.returncode == 0:
                j = json.loads(r.stdout)
                cond = j["condition"]
                out = np.load(tmp("o.npy")).reshape(shape)
                row.append("%.2e" % paper_mse(out, crop, axes))
            else:
                m = re.search(r"condition number ([0-9.e+-]+|inf)", r.stderr)
                cond = float(m.group(1)) if m else float("nan")
                row.append("refused")
        row.insert(1, "%.3g" % cond)
        r = run("resample", d30, tmp("u.npy"), "--method", "grbf", "--sigma", s, "--shape",
                "59,59", "--grid-mode", "false", check=False)
        row.append("%.2f" % psnr(np.load(tmp("u.npy")), c59) if r.returncode == 0 else "refused")
        if not quick:
            out, j = sample(crop, pos, "--grbf-blocks", "60", "--precision", "single", "--sigma",
                            s)
            row.insert(2, "%.2e" % paper_mse(out.reshape(shape), crop, axes))
        else:
            row.insert(2, "-")
        rows.append(row)
    return table(["sigma", "condition (2-norm)", "paper's dense GE, float: MSE",
                  "exact float: MSE", "exact double: MSE", "down-up PSNR dB (double)"], rows)


# ---------------------------------------------------------------------------------------------
def exp_mri():
    vol = np.asarray(run_load(os.path.join(ROOT, "assets", "mri_t1_head.nrrd")), float)
    rows = []
    for k in (2, 3):
        n = vol.shape[0]
        m = (n - 1) // k + 1
        full = vol[:(m - 1) * k + 1]
        kept = full[::k]
        held = np.ones(full.shape[0], bool)
        held[::k] = False
        kp = save("kept.npy", kept)
        shape = "%d,%d,%d" % full.shape
        for name, args in (("GRBF sigma 1 (double)", ["--method", "grbf"]),
                           ("GRBF sigma 1 (float)", ["--method", "grbf", "--precision",
                                                     "single"]),
                           ("GRBF sigma 0.8,1,1", ["--method", "grbf", "--sigma", "0.8,1,1"]),
                           ("cubic B-spline", ["--method", "cubic", "--mode", "mirror"]),
                           ("quintic B-spline", ["--method", "quintic", "--mode", "mirror"])):
            op = tmp("up.npy")
            j = run_json("resample", kp, op, "--shape", shape, "--grid-mode", "false", *args)
            up = np.load(op)
            e = up[held] - full[held]
            rows.append(["x%d" % k, "%d -> %d" % (kept.shape[0], full.shape[0]), name,
                         "%.2f" % np.sqrt(np.mean(e ** 2)), "%.2f" % psnr(up[held], full[held]),
                         "%.3g" % j["seconds"]])
    return table(["axial", "slices", "method", "RMS on held-out slices", "PSNR dB", "seconds"],
                 rows)


def run_load(path):
    p = tmp("vol.npy")
    run("prefilter", path, p, "--degree", "1")  # degree 1 leaves the samples unchanged
    return np.load(p)


# ---------------------------------------------------------------------------------------------
def exp_downup():
    imgs = []
    a = ascent()
    imgs.append(("ascent 511x511", a[:511, :511], False))
    coffee = np.asarray(Image.open(os.path.join(ROOT, "assets", "coffee.png"))).astype(float)
    imgs.append(("coffee 399x599 RGB", coffee[:399, :599], True))
    rows = []
    for name, img, ch in imgs:
        small = img[::2, ::2]
        sp = save("small.npy", small)
        shape = "%d,%d" % img.shape[:2]
        outputs = img.shape[0] * img.shape[1]
        for mname, args in (("GRBF sigma 1 (double)", ["--method", "grbf"]),
                            ("GRBF sigma 1 (float)", ["--method", "grbf", "--precision",
                                                      "single"]),
                            ("GRBF sigma 1.2 (double)", ["--method", "grbf", "--sigma", "1.2"]),
                            ("cubic B-spline", ["--method", "cubic", "--mode", "mirror"]),
                            ("quintic B-spline", ["--method", "quintic", "--mode", "mirror"])):
            op = tmp("u.npy")
            extra = ["--channels"] if ch else []
            j = run_json("resample", sp, op, "--shape", shape, "--grid-mode", "false", *args,
                         *extra)
            up = np.load(op)
            solve = j.get("seconds_solve")
            rows.append([name, mname, "%.2f" % psnr(up, img),
                         "%.3g" % solve if solve is not None else "-",
                         "%.3g" % j["seconds"],
                         "%.0f" % (j["seconds"] / outputs * 1e9)])
    return table(["image (down x2 by every 2nd pixel, back up)", "method", "PSNR dB",
                  "solve s", "total s", "ns per output sample"], rows)


def main():
    global TOOL, TMP
    ap = argparse.ArgumentParser()
    ap.add_argument("splinetool")
    ap.add_argument("--quick", action="store_true", help="skip the dense (published) solves")
    ap.add_argument("--figure", default=None)
    args = ap.parse_args()
    TOOL = os.path.abspath(args.splinetool)
    with tempfile.TemporaryDirectory(prefix="grbf-exp-") as d:
        TMP = d
        a = ascent()
        crop = a[200:260, 220:280]
        print("# GRBF experiments (%s, %d cores)\n" % (platform.node(), os.cpu_count()))
        print("## 1. The paper's 2-D table: ascent.png rows 200-259, columns 220-279, sigma 1\n")
        t, dense = exp_table(crop, args.quick)
        print(t + "\n")
        print("## 2. 120x120: blocks, seams, stitching (ascent rows 150-269, columns 200-319, "
              "zoom 2)\n")
        print(exp_seams(a[150:270, 200:320], args.figure, args.quick) + "\n")
        print("## 3. sigma sweep (the 60x60 crop, zoom 2)\n")
        print(exp_sigma(crop, args.quick) + "\n")
        print("## 4. Axial upsampling of assets/mri_t1_head.nrrd (62x128x128)\n")
        print(exp_mri() + "\n")
        print("## 5. Down-then-up on real images\n")
        print(exp_downup() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
