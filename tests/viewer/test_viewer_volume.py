#!/usr/bin/env python3
"""The volume mode renders the bundled MRI head (or a given volume) in four slice views whose
content is checked: not blank, the report names the volume's dims and spacing, nearest and
the prefiltered cubic show the same anatomy (strongly correlated) but differ in detail, a
volume over --texture-budget is shown as its overview (the report says so, with the halved
dims and doubled spacing, and the picture shows the same anatomy), and a bad file fails with
exit status 1, one line, and nothing written.

usage: test_viewer_volume.py SPLINEVIEW VOLUME OUTDIR
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from viewer_png import png_rgb  # noqa: E402


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def render(viewer, volume, outdir, method, extra=(), tag=""):
    shot = os.path.join(outdir, "volume_%s%s.png" % (method, tag))
    report = os.path.join(outdir, "volume_%s%s.json" % (method, tag))
    for p in (shot, report):
        if os.path.exists(p):
            os.remove(p)
    r = subprocess.run([viewer, volume, "--mode", "volume", "--method", method, "--size",
                        "900x600", "--screenshot", shot, "--report", report] + list(extra),
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("splineview --mode volume --method %s exited %d: %s" % (method, r.returncode,
                                                                     r.stderr))
    return png_rgb(shot).astype(np.float64), json.load(open(report))


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    viewer, volume, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    near, rep = render(viewer, volume, outdir, "nearest")
    cubic, rep_c = render(viewer, volume, outdir, "precise")
    if rep["mode"] != "volume":
        fail("report mode %r" % rep["mode"])
    dims = rep.get("dims_zyx")
    if dims != [62, 128, 128]:
        fail("dims %r, expected the bundled MRI's [62, 128, 128]" % dims)
    if [round(s, 6) for s in rep.get("spacing_mm_zyx", [])] != [3.0, 2.0, 2.0]:
        fail("spacing %r, expected [3, 2, 2]" % rep.get("spacing_mm_zyx"))
    panel = 360
    a, b = near[:, panel:, :].mean(axis=2), cubic[:, panel:, :].mean(axis=2)
    if a.std() < 10 or b.std() < 10:
        fail("the slice views are nearly uniform (std %.1f, %.1f)" % (a.std(), b.std()))
    corr = np.corrcoef(a.ravel(), b.ravel())[0, 1]
    diff = np.abs(a - b)
    print("nearest vs precise cubic: correlation %.4f, mean |diff| %.2f grey levels, %.1f%% of "
          "pixels differ by more than 8" % (corr, diff.mean(), 100 * (diff > 8).mean()))
    if corr < 0.9:
        fail("nearest and cubic do not show the same anatomy (correlation %.3f)" % corr)
    if (diff > 8).mean() < 0.01:
        fail("the cubic views do not differ from nearest anywhere: the method is not applied")
    # Over a 2 MiB texture budget (the MRI's textures take 7.8 MiB): the overview at 1/2.
    over, rep_o = render(viewer, volume, outdir, "precise", ["--texture-budget", "2"], "_overview")
    if rep_o.get("overview_level") != 1 or rep_o.get("full_dims") != [62, 128, 128]:
        fail("--texture-budget 2: overview_level %r, full_dims %r (expected 1, [62, 128, 128])"
             % (rep_o.get("overview_level"), rep_o.get("full_dims")))
    if rep_o.get("dims_zyx") != [31, 64, 64]:
        fail("overview dims %r, expected [31, 64, 64]" % rep_o.get("dims_zyx"))
    if [round(s, 6) for s in rep_o.get("spacing_mm_zyx", [])] != [6.0, 4.0, 4.0]:
        fail("overview spacing %r, expected [6, 4, 4]" % rep_o.get("spacing_mm_zyx"))
    if "overview" not in rep_o.get("overview", ""):
        fail("the report gives no overview note: %r" % rep_o.get("overview"))
    if rep.get("overview_level") != 0 or "overview" in rep:
        fail("the full-resolution report claims an overview")
    # The crosshair in the file's voxels: the overview's index mapped back lands on the same
    # point (the crosshair starts at the volume's centre in both).
    fv = rep_o.get("crosshair", {}).get("file_voxel_zyx")
    full_c = rep.get("crosshair", {}).get("voxel_zyx")
    if fv is None or full_c is None or max(abs(a - b) for a, b in zip(fv, full_c)) > 0.51:
        fail("overview crosshair in file voxels %r, full-resolution crosshair %r" % (fv, full_c))
    c = over[:, panel:, :].mean(axis=2)
    corr_o = np.corrcoef(b.ravel(), c.ravel())[0, 1]
    print("overview vs full resolution (precise cubic): correlation %.4f" % corr_o)
    if corr_o < 0.9:
        fail("the overview does not show the same anatomy in the same place (correlation %.3f)"
             % corr_o)
    bad = os.path.join(outdir, "bad.nrrd")
    with open(bad, "wb") as f:
        f.write(b"NRRD0004\ntype: float\ndimension: 3\nsizes: 64 64 64\nendian: little\nencoding: raw\n\n" +
                b"\0" * 100)
    shot = os.path.join(outdir, "bad.png")
    if os.path.exists(shot):
        os.remove(shot)
    r = subprocess.run([viewer, bad, "--mode", "volume", "--screenshot", shot],
                       capture_output=True, text=True)
    if r.returncode != 1 or os.path.exists(shot):
        fail("a truncated volume: exit %d (expected 1), screenshot written: %s"
             % (r.returncode, os.path.exists(shot)))
    if "bad.nrrd" not in r.stderr:
        fail("the error does not name the file: %r" % r.stderr)
    print("bad file refused: " + r.stderr.strip().splitlines()[0])
    print("PASS: the volume mode's slices render and differ by method as they must")


if __name__ == "__main__":
    main()
