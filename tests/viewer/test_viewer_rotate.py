#!/usr/bin/env python3
"""The repeated-rotation mode's PSNR figures equal splinetool's for the same image, method,
angle and number of steps, and behave as the experiment says they must.

Runs `splineview IMAGE --mode rotate --cpu-prefilter --screenshot --report` (under Xvfb,
started by the caller) and, for every method, `splinetool resample UNIT --rotate DEG --repeat
K --backend gl --fetch F --disc 0.35 --reference UNIT` (UNIT: the image's values in [0, 1])
for K = 3, half and the full turn, each run continuing from the previous run's float32 result
(3, 15 and 18 more steps: the same steps bit for bit as --repeat K from UNIT, each computed
once), all of them in one `splinetool batch` process. The viewer prefilters each step on the
CPU in float and renders through the same GLSL fetch as splinetool's gl backend, so the PSNR
and RMS must agree to 1e-9 relative. The second curve (against the original turned once by
k x angle) is checked against an independent oracle:
the same splinetool step images measured in Python against scipy.ndimage.map_coordinates (cubic,
mode 'reflect', double) of the original at the rotated positions, inside the same disc. Also:
after the full turn the prefiltered cubic (lut, and precise from a second run of the same
experiment in the same --batch process) beats linear, which beats nearest (docs/SOURCES.md
section 3); every step's figures are present and finite; the screenshot is not blank.

usage: test_viewer_rotate.py SPLINEVIEW SPLINETOOL IMAGE OUTDIR
"""
import json

import numpy as np
from scipy import ndimage as ndi
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from viewer_batch import run_batch, tool_batch  # noqa: E402

CLI_METHOD = {"nearest": "nearest", "linear": "linear", "cubic-unfiltered": "cubic-unfiltered",
              "lut": "cubic", "otf": "cubic", "precise": "cubic"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s exited %d: %s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


def rotated_reference(orig, degrees):
    """The original turned once by `degrees` (sv::rotate's mapping), cubic B-spline in double."""
    turns = degrees / 360.0
    if abs(turns - round(turns)) < 1e-12:
        return orig
    h, w = orig.shape[:2]
    cy, cx = (h - 1) / 2.0, (w - 1) / 2.0
    th = np.deg2rad(degrees)
    c, s = np.cos(th), np.sin(th)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    dy, dx = y - cy, x - cx
    coords = [dx * s + dy * c + cy, dx * c - dy * s + cx]
    chans = [ndi.map_coordinates(orig[..., ch], coords, order=3, mode="reflect", prefilter=True,
                                 output=np.float64) for ch in range(orig.shape[2])]
    return np.stack(chans, axis=-1)


def disc(h, w, fraction):
    cy, cx = (h - 1) / 2.0, (w - 1) / 2.0
    r = fraction * min(h, w)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    return (y - cy) ** 2 + (x - cx) ** 2 <= r * r


def psnr_in_disc(a, b, mask):
    d = (a.astype(np.float64) - b)[mask]
    mse = np.mean(d * d)
    return 10.0 * np.log10(1.0 / mse)


def main():
    if len(sys.argv) != 5:
        fail(__doc__)
    viewer, tool, image, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    step, steps = 10.0, 36
    methods = ["nearest", "linear", "cubic-unfiltered", "lut"]
    shot, report = os.path.join(outdir, "rotate.png"), os.path.join(outdir, "rotate.json")
    # The precise cubic's run of the same experiment, for the ranking below.
    shot_p, report_p = (os.path.join(outdir, "rotate_precise.png"),
                        os.path.join(outdir, "rotate_precise.json"))
    for p in (shot, report, shot_p, report_p):
        if os.path.exists(p):
            os.remove(p)
    common = [image, "--mode", "rotate", "--cpu-prefilter", "--step-angle", str(step), "--steps",
              str(steps), "--size", "1100x700"]
    r = run_batch(viewer, [common + ["--methods", ",".join(methods), "--screenshot", shot,
                                     "--report", report],
                           common + ["--methods", "precise", "--screenshot", shot_p, "--report",
                                     report_p]], os.path.join(outdir, "jobs.txt"))
    if r.returncode != 0:
        fail("splineview --batch exited %d: %s%s" % (r.returncode, r.stdout, r.stderr))
    rep = json.load(open(report))
    if rep["prefilter"] != "cpu":
        fail("the viewer did not prefilter on the CPU: %s" % rep["prefilter"])
    if rep["steps_done"] != steps:
        fail("steps_done %d, expected %d" % (rep["steps_done"], steps))
    # The image as the viewer works on it: its 8-bit values / 255 (splinetool reads the PNG's
    # stored values 0..255), given to splinetool as a float64 .npy with a channel axis.
    orig_npy = os.path.join(outdir, "original.npy")
    run([tool, "resample", image, orig_npy, "--zoom", "1", "--method", "nearest"])
    orig = np.load(orig_npy).astype(np.float64) / 255.0
    if orig.ndim == 2:
        orig = orig[..., None]
    unit = os.path.join(outdir, "original_unit.npy")
    np.save(unit, orig)
    mask = disc(orig.shape[0], orig.shape[1], 0.35)
    # Each method's splinetool runs continue from the previous one's result (k - previous more
    # steps, measured against the original): the same steps bit for bit as --repeat k from the
    # original, each step computed once. All in one splinetool batch process, in this order.
    ks = (3, steps // 2, steps)
    commands = []
    for m in rep["methods"]:
        name = m["method"]
        previous, source = 0, unit
        for k in ks:
            out = os.path.join(outdir, "%s_%d.npy" % (name, k))
            commands.append(["resample", source, out, "--channels", "--rotate", str(step),
                             "--repeat", str(k - previous), "--method", CLI_METHOD[name],
                             "--backend", "gl"]
                            + (["--fetch", name] if CLI_METHOD[name] == "cubic" else [])
                            + ["--disc", "0.35", "--reference", unit, "--json"])
            previous, source = k, out
    try:
        outputs = iter(tool_batch(tool, commands, os.path.join(outdir, "splinetool.txt")))
    except RuntimeError as e:
        fail(str(e))
    psnr_full = {}
    for m in rep["methods"]:
        name = m["method"]
        if len(m["psnr_db"]) != steps or len(m["rms"]) != steps:
            fail("%s: %d PSNR values for %d steps" % (name, len(m["psnr_db"]), steps))
        if len(m["psnr_rotated_db"]) != steps:
            fail("%s: %d rotated-reference PSNR values for %d steps"
                 % (name, len(m["psnr_rotated_db"]), steps))
        for k in ks:
            out = os.path.join(outdir, "%s_%d.npy" % (name, k))
            j = json.loads(next(outputs))
            ours_psnr, ours_rms = m["psnr_db"][k - 1], m["rms"][k - 1]
            if ours_psnr is None or abs(ours_psnr - j["psnr_db"]) > 1e-9 * abs(j["psnr_db"]):
                fail("%s step %d: viewer PSNR %r dB, splinetool %.12f dB"
                     % (name, k, ours_psnr, j["psnr_db"]))
            if abs(ours_rms - j["rms"]) > 1e-9 * j["rms"]:
                fail("%s step %d: viewer RMS %.12g, splinetool %.12g" % (name, k, ours_rms, j["rms"]))
            print("%-16s step %2d: PSNR %.4f dB, RMS %.6g (= splinetool)" % (name, k, ours_psnr,
                                                                           ours_rms))
            img = np.load(out)
            if img.ndim == 2:
                img = img[..., None]
            oracle = psnr_in_disc(img, rotated_reference(orig, step * k), mask)
            ours_rot = m["psnr_rotated_db"][k - 1]
            if ours_rot is None or abs(ours_rot - oracle) > 1e-6 * abs(oracle):
                fail("%s step %d: viewer PSNR against the exact rotation %r dB, scipy oracle "
                     "%.12f dB" % (name, k, ours_rot, oracle))
            print("%-16s step %2d: PSNR against the exact rotation %.4f dB (= scipy oracle)"
                  % (name, k, ours_rot))
            if k != steps and not ours_rot > ours_psnr + 3:
                fail("%s step %d: against the exact rotation (%.2f dB) should be far above "
                     "against the unrotated original (%.2f dB)" % (name, k, ours_rot, ours_psnr))
        psnr_full[name] = m["psnr_db"][-1]
        if m["psnr_rotated_db"][-1] != m["psnr_db"][-1]:
            fail("%s: at the full turn both references are the original, got %r and %r dB"
                 % (name, m["psnr_rotated_db"][-1], m["psnr_db"][-1]))
    if not psnr_full["lut"] > psnr_full["linear"] > psnr_full["nearest"]:
        fail("after the full turn expected lut > linear > nearest, got %r" % psnr_full)
    if not psnr_full["lut"] > psnr_full["cubic-unfiltered"]:
        fail("after the full turn the prefiltered cubic should beat the unfiltered one: %r"
             % psnr_full)
    # The precise flavour of the prefiltered cubic ranks the same on the photograph.
    rep_p = json.load(open(report_p))
    if rep_p["prefilter"] != "cpu" or rep_p["steps_done"] != steps:
        fail("precise run: prefilter %r, %r steps" % (rep_p["prefilter"], rep_p["steps_done"]))
    precise = rep_p["methods"][0]
    if precise["method"] != "precise" or len(precise["psnr_db"]) != steps:
        fail("precise run: %r, %d PSNR values" % (precise["method"], len(precise["psnr_db"])))
    if not precise["psnr_db"][-1] > psnr_full["linear"]:
        fail("after the full turn expected precise > linear, got %r and %r"
             % (precise["psnr_db"][-1], psnr_full["linear"]))
    print("after the full turn: precise %.4f, lut %.4f, linear %.4f, nearest %.4f dB"
          % (precise["psnr_db"][-1], psnr_full["lut"], psnr_full["linear"], psnr_full["nearest"]))
    if os.path.getsize(shot) < 20000:
        fail("the screenshot is suspiciously small (%d bytes)" % os.path.getsize(shot))
    print("PASS: the rotate mode's PSNR curves equal splinetool's")


if __name__ == "__main__":
    main()
