#!/usr/bin/env python3
"""The viewer's accuracy overlay equals what splinetool reports for the same data, method and
view.

Runs `splineview IMAGE --mode zoom --screenshot --report` for several layouts, zooms and angles
(all in one `splineview --batch` process); for every view in the report, rebuilds the view's pixel
positions from the reported grid (double arithmetic in the viewer's order, rounded once to
float32, only positions inside the image), runs `splinetool sample` with the same method on
the gl backend and the cpu backend in double, and `splinetool compare` on the two. The RMS, max
and sum of squares must equal the overlay's to 1e-12 (relative): same positions, same shader,
same reference, same metric code. A case's splinetool runs go through one `splinetool batch`
(each line a separate run, its outputs byte for byte those of a run of its own). Also checks properties of the figures themselves (precise
beats the hardware-weight flavours; nearest is exact to the float rounding of the samples) and
that the screenshot is not blank.

usage: test_viewer_accuracy.py SPLINEVIEW SPLINETOOL IMAGE OUTDIR
"""
import json
import os
import subprocess
import sys

import numpy as np

from viewer_batch import run_batch, tool_batch
from viewer_png import png_rgb


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def grid_positions(grid, height, width):
    rows, cols = grid["rows"], grid["cols"]
    r = np.arange(rows, dtype=np.float64)[:, None]
    c = np.arange(cols, dtype=np.float64)[None, :]
    pos = []
    for d in range(2):
        # origin + r * step_row + c * step_col, evaluated left to right in double.
        q = (grid["origin"][d] + r * grid["step_row"][d]) + c * grid["step_col"][d]
        pos.append(q.astype(np.float32))
    p = np.stack(pos, axis=-1).reshape(-1, 2)
    n = np.array([height, width], np.float64)
    inside = np.all((p.astype(np.float64) >= -0.5) & (p.astype(np.float64) <= n - 0.5), axis=1)
    return p[inside]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s exited %d: %s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


def reference_args(method):
    if method == "nearest":
        return ["--degree", "0"]
    if method == "linear":
        return ["--degree", "1"]
    if method == "cubic-unfiltered":
        return ["--degree", "3", "--no-prefilter"]
    return ["--degree", "3"]


def unit_image(tool, image, outdir):
    """The image as the viewer works on it: its 8-bit values / 255, float64, as a .npy with a
    channel axis (splinetool reads the PNG's stored values 0..255; the overlay's figures are in
    [0, 1])."""
    values = os.path.join(outdir, "image_values.npy")
    run([tool, "resample", image, values, "--zoom", "1", "--method", "nearest"])
    a = np.load(values).astype(np.float64) / 255.0
    if a.ndim == 2:
        a = a[..., None]
    unit = os.path.join(outdir, "image_unit.npy")
    np.save(unit, a)
    return unit


# The cases: name, layout, methods, zoom, angle, centre.
CASES = [("grid", "grid", "nearest,lut,otf,precise", 6, 0, None),
         ("rotated_pair", "pair", "precise,linear", 2.5, 33, "40,30"),
         ("wipe", "wipe", "cubic-unfiltered,lut", 0.7, -10, None)]


def render_cases(viewer, image, outdir):
    """Every case's screenshot and report, in one viewer process (--batch)."""
    jobs = []
    for name, layout, methods, zoom, angle, center in CASES:
        shot = os.path.join(outdir, name + ".png")
        report = os.path.join(outdir, name + ".json")
        for p in (shot, report):
            if os.path.exists(p):
                os.remove(p)
        args = [image, "--mode", "zoom", "--layout", layout, "--methods", methods, "--zoom",
                str(zoom), "--angle", str(angle), "--size", "1000x640", "--screenshot", shot,
                "--report", report]
        jobs.append(args + (["--center", center] if center else []))
    r = run_batch(viewer, jobs, os.path.join(outdir, "jobs.txt"))
    if r.returncode != 0:
        fail("splineview --batch exited %d: %s%s" % (r.returncode, r.stdout, r.stderr))


def check_case(tool, unit, outdir, name, methods):
    """The case's views against splinetool, whose runs (sample gl, sample cpu double, compare;
    for every view) go through one splinetool batch process."""
    shot = os.path.join(outdir, name + ".png")
    report = os.path.join(outdir, name + ".json")
    rep = json.load(open(report))
    h, w, ch = rep["height"], rep["width"], rep["channels"]
    views = rep["views"]
    if len(views) != len(methods.split(",")):
        fail("%s: %d views in the report, expected %d" % (name, len(views), len(methods.split(","))))
    figures = {}
    commands = []
    for i, v in enumerate(views):
        if "accuracy" not in v:
            fail("%s: view %d has no accuracy figures" % (name, i + 1))
        acc = v["accuracy"]
        pos = grid_positions(v["grid"], h, w)
        if len(pos) != acc["points"]:
            fail("%s view %d: %d positions inside the image from the grid, the viewer measured %d"
                 % (name, i + 1, len(pos), acc["points"]))
        coords = os.path.join(outdir, "%s_%d_coords.npy" % (name, i))
        np.save(coords, pos[:, :])
        gl_out = os.path.join(outdir, "%s_%d_gl.npy" % (name, i))
        ref_out = os.path.join(outdir, "%s_%d_ref.npy" % (name, i))
        commands += [["sample", unit, coords, gl_out, "--channels", "--backend", "gl", "--fetch",
                      v["method"]],
                     ["sample", unit, coords, ref_out, "--channels", "--backend", "cpu",
                      "--precision", "double"] + reference_args(v["method"]),
                     ["compare", gl_out, ref_out, "--json"]]
    try:
        outputs = tool_batch(tool, commands, os.path.join(outdir, name + "_splinetool.txt"))
    except RuntimeError as e:
        fail(str(e))
    for i, v in enumerate(views):
        acc = v["accuracy"]
        cmp = json.loads(outputs[3 * i + 2])
        for key in ("rms", "max_abs", "sse"):
            ours, theirs = acc[key], cmp[key]
            if abs(ours - theirs) > 1e-12 * max(abs(theirs), 1e-300):
                fail("%s view %d (%s): overlay %s %.17g, splinetool %.17g"
                     % (name, i + 1, v["method"], key, ours, theirs))
        if acc["count"] != cmp["count"] or acc["count"] != acc["points"] * ch:
            fail("%s view %d: count %d, splinetool %d" % (name, i + 1, acc["count"], cmp["count"]))
        figures[v["method"]] = acc
        print("%s view %d %-16s points %7d  rms %.3e  max %.3e  (= splinetool)"
              % (name, i + 1, v["method"], acc["points"], acc["rms"], acc["max_abs"]))
    img = png_rgb(shot)
    if img.std() < 5:
        fail(name + ": the screenshot is nearly uniform")
    return figures


def main():
    if len(sys.argv) != 5:
        fail(__doc__)
    viewer, tool, image, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    render_cases(viewer, image, outdir)
    # The image as the viewer works on it, written once for every view's splinetool runs.
    unit = unit_image(tool, image, outdir)
    f = check_case(tool, unit, outdir, "grid", CASES[0][2])
    # 8-bit samples in float: nearest differs from the exact values by their rounding only.
    if not f["nearest"]["max_abs"] < 2.0 ** -24:
        fail("nearest max %.3g exceeds float rounding of the samples" % f["nearest"]["max_abs"])
    for flavour in ("lut", "otf"):
        if not f["precise"]["rms"] * 4 < f[flavour]["rms"]:
            fail("precise RMS %.3g is not well below %s's %.3g"
                 % (f["precise"]["rms"], flavour, f[flavour]["rms"]))
    check_case(tool, unit, outdir, "rotated_pair", CASES[1][2])
    check_case(tool, unit, outdir, "wipe", CASES[2][2])
    print("PASS: the overlay's figures equal splinetool's for every view")


if __name__ == "__main__":
    main()
