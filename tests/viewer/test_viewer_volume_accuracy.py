#!/usr/bin/env python3
"""The volume mode's accuracy overlay equals what splinetool reports for the same volume, method
and view.

Runs `splineview VOLUME --mode volume --screenshot --report` with several methods per view (all
cases in one `splineview --batch` process, each case's splinetool runs in one `splinetool
batch`); for every slice view in the report, rebuilds the view's voxel
positions from the reported grid (origin + r * step_row + c * step_col in double, in the
viewer's order, rounded once to float32, only positions inside the volume: the same 3-D
arithmetic as test_viewer_accuracy.py does in 2-D), runs `splinetool sample` on the same volume
file with the same method on the gl backend and on the cpu backend in double, and `splinetool
compare` on the two. The overlay's RMS, max and sum of squares must equal splinetool's to 1e-12
(relative). Also checks properties of the figures: the precise fetch is at least as accurate as
the on-the-fly one in every view (RMS and max), nearest reproduces float samples exactly, the
heat map's largest error is the reported max, each grid has its view's size.

Volumes: the bundled MRI (uint8, 2 x 2 x 3 mm) with the default views, and a fresh random
float32 volume with odd anisotropic spacing written here as NRRD (all its borders in view).

usage: test_viewer_volume_accuracy.py SPLINEVIEW SPLINETOOL VOLUME OUTDIR
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_viewer_accuracy import reference_args  # noqa: E402
from viewer_batch import run_batch, tool_batch  # noqa: E402
from viewer_png import png_rgb  # noqa: E402


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def grid_positions(grid, dims):
    """The float32 positions (z, y, x) of a view's pixels inside the volume, in pixel order."""
    rows, cols = grid["rows"], grid["cols"]
    r = np.arange(rows, dtype=np.float64)[:, None]
    c = np.arange(cols, dtype=np.float64)[None, :]
    pos = []
    for d in range(3):
        # origin + r * step_row + c * step_col, evaluated left to right in double.
        q = (grid["origin"][d] + r * grid["step_row"][d]) + c * grid["step_col"][d]
        pos.append(q.astype(np.float32))
    p = np.stack(pos, axis=-1).reshape(-1, 3)
    n = np.array(dims, np.float64)
    inside = np.all((p.astype(np.float64) >= -0.5) & (p.astype(np.float64) <= n - 0.5), axis=1)
    return p[inside]


def render_cases(viewer, outdir, cases):
    """The cases' screenshots and reports, (name, volume, method arguments, size) each, in one
    viewer process (--batch)."""
    jobs = []
    for name, volume, method_args, size in cases:
        shot = os.path.join(outdir, name + ".png")
        report = os.path.join(outdir, name + ".json")
        for p in (shot, report):
            if os.path.exists(p):
                os.remove(p)
        jobs.append([volume, "--mode", "volume", "--size", size, "--heat-map", "--screenshot",
                     shot, "--report", report] + method_args)
    r = run_batch(viewer, jobs, os.path.join(outdir, "jobs.txt"))
    if r.returncode != 0:
        fail("splineview --batch exited %d: %s%s" % (r.returncode, r.stdout, r.stderr))


def check_case(tool, volume, outdir, name):
    """A rendered case's views against splinetool (its runs in one splinetool batch)."""
    shot = os.path.join(outdir, name + ".png")
    report = os.path.join(outdir, name + ".json")
    rep = json.load(open(report))
    if rep.get("accuracy") != "measured":
        fail("%s: accuracy %r, expected measured" % (name, rep.get("accuracy")))
    dims = rep["dims_zyx"]
    figures = {}
    commands = []
    for v in rep["views"]:
        plane, method = v["plane"], v["method"]
        if "accuracy" not in v or "grid" not in v:
            fail("%s: the %s view has no accuracy figures" % (name, plane))
        acc, grid = v["accuracy"], v["grid"]
        if [grid["cols"], grid["rows"]] != [int(v["rect"][2]), int(v["rect"][3])]:
            fail("%s %s: grid %dx%d, view rect %r" % (name, plane, grid["cols"], grid["rows"],
                                                      v["rect"]))
        pos = grid_positions(grid, dims)
        if len(pos) != acc["points"]:
            fail("%s %s: %d positions inside the volume from the grid, the viewer measured %d"
                 % (name, plane, len(pos), acc["points"]))
        if len(pos) < 1000:
            fail("%s %s: only %d pixels show the volume" % (name, plane, len(pos)))
        coords = os.path.join(outdir, "%s_%s_coords.npy" % (name, plane))
        np.save(coords, pos)
        gl_out = os.path.join(outdir, "%s_%s_gl.npy" % (name, plane))
        ref_out = os.path.join(outdir, "%s_%s_ref.npy" % (name, plane))
        commands += [["sample", volume, coords, gl_out, "--backend", "gl", "--fetch", method],
                     ["sample", volume, coords, ref_out, "--backend", "cpu", "--precision",
                      "double"] + reference_args(method),
                     ["compare", gl_out, ref_out, "--json"]]
    try:
        outputs = tool_batch(tool, commands, os.path.join(outdir, name + "_splinetool.txt"))
    except RuntimeError as e:
        fail(str(e))
    for i, v in enumerate(rep["views"]):
        plane, method = v["plane"], v["method"]
        acc = v["accuracy"]
        cmp = json.loads(outputs[3 * i + 2])
        for key, theirs_key in (("rms", "rms"), ("max_abs", "max_abs"), ("sse", "sse"),
                                ("sum_sq", "sse")):
            ours, theirs = acc[key], cmp[theirs_key]
            if abs(ours - theirs) > 1e-12 * max(abs(theirs), 1e-300):
                fail("%s %s (%s): overlay %s %.17g, splinetool %.17g"
                     % (name, plane, method, key, ours, theirs))
        if acc["count"] != cmp["count"] or acc["count"] != acc["points"]:
            fail("%s %s: count %d, splinetool %d, points %d"
                 % (name, plane, acc["count"], cmp["count"], acc["points"]))
        # The heat map holds each point's error in float: its largest is the max, rounded.
        if abs(acc["error_max"] - acc["max_abs"]) > 2.0 ** -23 * acc["max_abs"]:
            fail("%s %s: heat map max %.9g, max error %.9g"
                 % (name, plane, acc["error_max"], acc["max_abs"]))
        figures[plane] = (method, acc)
        print("%-10s %-8s %-16s points %6d  rms %.3e  max %.3e  sum sq %.3e  (= splinetool)"
              % (name, plane, method, acc["points"], acc["rms"], acc["max_abs"], acc["sse"]))
    img = png_rgb(shot)
    if img[:, 360:, :].std() < 5:
        fail(name + ": the screenshot's views are nearly uniform")
    return rep, figures


def write_nrrd(path, values, spacing_zyx):
    """A float32 NRRD (raw, little endian) with per-axis spacing; axes listed fastest first."""
    z, y, x = values.shape
    header = ("NRRD0004\ntype: float\ndimension: 3\nsizes: %d %d %d\nspacings: %r %r %r\n"
              "endian: little\nencoding: raw\n\n"
              % (x, y, z, spacing_zyx[2], spacing_zyx[1], spacing_zyx[0]))
    with open(path, "wb") as f:
        f.write(header.encode("ascii"))
        f.write(values.astype("<f4").tobytes())


def compare_precise_otf(name, precise, otf):
    for plane in precise:
        p, o = precise[plane][1], otf[plane][1]
        if precise[plane][0] != "precise" or otf[plane][0] != "otf":
            fail("%s %s: methods %s and %s" % (name, plane, precise[plane][0], otf[plane][0]))
        if p["points"] != o["points"]:
            fail("%s %s: the two runs measured different pixels" % (name, plane))
        # How much better depends on the hardware's filter weights (8-bit on most GPUs, finer
        # on llvmpipe); never worse.
        if not (p["max_abs"] <= o["max_abs"] and p["rms"] < o["rms"]):
            fail("%s %s: precise (rms %.3g, max %.3g) is not better than otf (rms %.3g, max %.3g)"
                 % (name, plane, p["rms"], p["max_abs"], o["rms"], o["max_abs"]))


def main():
    if len(sys.argv) != 5:
        fail(__doc__)
    viewer, tool, mri, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)

    # A fresh random float volume with odd anisotropic spacing, all borders in view.
    rng = np.random.default_rng()
    seed = int(rng.integers(1 << 31))
    rng = np.random.default_rng(seed)
    print("random volume: seed %d" % seed)
    shape = (int(rng.integers(9, 16)), int(rng.integers(12, 24)), int(rng.integers(12, 24)))
    values = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    spacing = (round(float(rng.uniform(1.5, 3.0)), 3), round(float(rng.uniform(0.6, 1.2)), 3),
               round(float(rng.uniform(0.8, 1.4)), 3))
    noise = os.path.join(outdir, "noise.nrrd")
    write_nrrd(noise, values, spacing)
    # Every case's views in one viewer process.
    render_cases(viewer, outdir, [
        ("mri_precise", mri, ["--method", "precise"], "1000x640"),
        ("mri_otf", mri, ["--method", "otf"], "1000x640"),
        ("mri_mixed", mri, ["--methods", "nearest,linear,cubic-unfiltered,lut"], "1000x640"),
        ("noise_precise", noise, ["--method", "precise"], "900x700"),
        ("noise_otf", noise, ["--method", "otf"], "900x700"),
        ("noise_mixed", noise, ["--methods", "lut,nearest,linear,cubic-unfiltered"], "900x700")])

    # The bundled MRI head, default views: every method in some view, precise and otf in all.
    _, precise = check_case(tool, mri, outdir, "mri_precise")
    rep, otf = check_case(tool, mri, outdir, "mri_otf")
    compare_precise_otf("mri", precise, otf)
    _, other = check_case(tool, mri, outdir, "mri_mixed")
    if other["axial"][1]["max_abs"] != 0.0:
        fail("mri nearest: max error %.3g, but 8-bit samples are exact in float"
             % other["axial"][1]["max_abs"])
    print("mri default views: precise rms %s" % ", ".join(
        "%s %.2e" % (k, v[1]["rms"]) for k, v in precise.items()))

    # The random volume.
    _, n_precise = check_case(tool, noise, outdir, "noise_precise")
    _, n_otf = check_case(tool, noise, outdir, "noise_otf")
    compare_precise_otf("noise", n_precise, n_otf)
    _, n_mixed = check_case(tool, noise, outdir, "noise_mixed")
    if n_mixed["coronal"][1]["max_abs"] != 0.0:
        fail("noise nearest: max error %.3g, float samples must be reproduced exactly"
             % n_mixed["coronal"][1]["max_abs"])
    print("PASS: the volume overlay's figures equal splinetool's for every view")


if __name__ == "__main__":
    main()
