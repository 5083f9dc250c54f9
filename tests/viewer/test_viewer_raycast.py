#!/usr/bin/env python3
"""The volume mode's ray-cast 3-D view (--view3d) end to end, headless:
  - MIP of a fresh random smooth volume written here (.npy, spacing 1): for 300 random pixels of
    each pane, the screenshot's grey equals a ray march written here with numpy and scipy
    (rays from the reported camera, the box [-1/2, N - 1/2], segment midpoints of the reported
    step, values by scipy.ndimage.map_coordinates: order 1 for trilinear, order 3 with
    mode 'reflect' for the prefiltered cubic), through the reported window, within 2 grey
    levels (float rounding and 8-bit hardware filter weights stay far below one level on
    a smooth volume);
  - the isosurface of the bundled Marschner-Lobb volume: three panes (precise, otf, linear)
    with their accuracy in the report (float vs double: depth within 1e-3 mm and normals
    within 0.5 degree on a float-weight renderer, 0.2 mm / 5 degrees allowed for 8-bit filter
    hardware), precise and otf look alike and trilinear differs from both;
  - the same isosurface against the Marschner-Lobb function itself (--reference truth): the
    cubic panes' depth and normal errors are smaller than trilinear's;
  - DVR with a preset: the report names the transfer function and every pane is measured;
  - refusals: --view3d, --tf, --view3d-methods, --ray-step, --view3d-angles with bad values exit
    with status 2 and one line naming the option.

usage: test_viewer_raycast.py SPLINEVIEW OUTDIR
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
from scipy import ndimage

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from viewer_batch import run_cases  # noqa: E402
from viewer_png import png_rgb  # noqa: E402


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def job(args, outdir, tag, size="1140x420"):
    """The viewer arguments of a screenshot run (its old files removed); the checks yield them
    (run_cases: all checks' runs in one viewer process) and read the files with result()."""
    shot = os.path.join(outdir, tag + ".png")
    report = os.path.join(outdir, tag + ".json")
    for p in (shot, report):
        if os.path.exists(p):
            os.remove(p)
    return ["--mode", "volume", "--headless", "--size", size, "--screenshot", shot, "--report",
            report] + args


def result(outdir, tag):
    return (png_rgb(os.path.join(outdir, tag + ".png")),
            json.load(open(os.path.join(outdir, tag + ".json"))))


def skip_without_gl(r):
    if r.returncode == 77 or "no headless GL" in r.stderr:
        print("skipped: " + r.stderr.strip())
        sys.exit(77)


def camera_basis(cam):
    yaw, pitch = math.radians(cam["yaw_deg"]), math.radians(cam["pitch_deg"])
    eye_dir = np.array([math.sin(yaw) * math.cos(pitch), math.cos(yaw) * math.cos(pitch),
                        math.sin(pitch)])
    target = np.array(cam["target_ras"], float)
    eye = target + cam["distance_mm"] * eye_dir
    fwd = -eye_dir / np.linalg.norm(eye_dir)
    right = np.cross(fwd, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    return eye, fwd, right, up


def mip_numpy(volume, coeffs, order, cam, w, h, step, pixels):
    """MIP of pane pixels (x, y up from the bottom) for an unoriented volume of spacing 1 mm:
    world = index (x, y, z) = (i, j, k)."""
    eye, fwd, right, up = camera_basis(cam)
    s = 2.0 * math.tan(math.radians(cam["fov_deg"]) / 2.0) / min(w, h)
    n = np.array([volume.shape[2], volume.shape[1], volume.shape[0]], float)
    out = []
    for x, y in pixels:
        d = fwd + (x + 0.5 - w / 2.0) * s * right + (y + 0.5 - h / 2.0) * s * up
        d = d / np.linalg.norm(d)
        with np.errstate(divide="ignore"):
            ta, tb = (-0.5 - eye) / d, (n - 0.5 - eye) / d
        t0 = max(0.0, np.max(np.minimum(ta, tb)))
        t1 = np.min(np.maximum(ta, tb))
        if not t0 + 0.5 < t1:  # misses, or grazes a corner of the box (float decides)
            out.append(None)
            continue
        k = np.arange(int(math.ceil((t1 - t0) / step)))
        a = t0 + k * step
        t = 0.5 * (a + np.minimum(a + step, t1))
        p = eye[None, :] + t[:, None] * d[None, :]
        coords = np.stack([p[:, 2], p[:, 1], p[:, 0]])  # array order z, y, x
        data = coeffs if order == 3 else volume
        v = ndimage.map_coordinates(data, coords, order=order, mode="reflect", prefilter=False)
        out.append(float(v.max()))
    return out


def check_mip(viewer, outdir):
    rng = np.random.default_rng()
    seed = int(rng.integers(1 << 31))
    rng = np.random.default_rng(seed)
    shape = (20, 28, 24)
    z, y, x = np.meshgrid(*[np.arange(m, dtype=float) for m in shape], indexing="ij")
    vol = np.zeros(shape)
    for _ in range(6):
        c = rng.uniform(0, 1, 3) * np.array(shape)
        sigma = rng.uniform(2.5, 4.0)
        vol += rng.uniform(0.3, 1.0) * np.exp(-((z - c[0]) ** 2 + (y - c[1]) ** 2 +
                                                 (x - c[2]) ** 2) / (2 * sigma ** 2))
    path = os.path.join(outdir, "blobs.npy")
    np.save(path, vol.astype(np.float32))
    vol32 = vol.astype(np.float32).astype(float)
    coeffs = ndimage.spline_filter(vol32, order=3, mode="reflect")
    yield job([path, "--view3d", "mip", "--view3d-angles", "35,25", "--ray-step", "0.4",
               "--no-accuracy"], outdir, "mip")
    img, rep = result(outdir, "mip")
    v3 = rep["view3d"]
    if not v3["active"] or v3["mode"] != "mip" or len(v3["panes"]) != 3:
        fail("MIP report: %s" % json.dumps(v3))
    low = rep["level"] - rep["window"] / 2.0
    worst = 0
    for pane in v3["panes"]:
        x0, y0, w, h = (int(round(v)) for v in pane["rect"])
        order = 1 if pane["method"] == "linear" else 3
        # Away from the labels at the top and the hint line at the bottom.
        pixels = [(int(a), int(b))
                  for a, b in zip(rng.integers(0, w, 300), rng.integers(40, h - 80, 300))]
        want = mip_numpy(vol32, coeffs, order, v3["camera"], w, h, v3["step_voxels"], pixels)
        compared = 0
        for (px, py), m in zip(pixels, want):
            if m is None:
                continue
            grey = min(max((m - low) / rep["window"], 0.0), 1.0) * 255.0
            got = img[y0 + h - 1 - py, x0 + px, 0]
            worst = max(worst, abs(got - grey))
            if abs(got - grey) > 2.0:
                fail("MIP %s pixel (%d, %d): screenshot %d, numpy march %.2f (seed %d)" %
                     (pane["method"], px, py, got, grey, seed))
            compared += 1
        if compared < 60:
            fail("MIP %s: only %d of 300 pixels see the volume" % (pane["method"], compared))
    print("MIP: 900 pixels of three panes within %.2f grey levels of the numpy march (seed %d)" %
          (worst, seed))


def check_iso(viewer, outdir):
    yield job(["marschner-lobb", "--view3d", "iso", "--iso", "0.5", "--view3d-angles", "20,55"],
              outdir, "iso")
    img, rep = result(outdir, "iso")
    v3 = rep["view3d"]
    methods = [p["method"] for p in v3["panes"]]
    if methods != ["precise", "otf", "linear"]:
        fail("iso panes: %s" % methods)
    float_weights = "llvmpipe" in rep.get("gl", "")
    for p in v3["panes"]:
        a = p.get("accuracy")
        if not a or a["rays"] < 100:
            fail("iso pane %s not measured: %s" % (p["method"], json.dumps(p)))
        depth, angle = (1e-3, 0.5) if float_weights or p["method"] == "precise" else (0.2, 5.0)
        if a["max"] > depth or a["normal_max_deg"] > angle:
            fail("iso pane %s: depth %.3g mm, normal %.3g deg over %.3g / %.3g" %
                 (p["method"], a["max"], a["normal_max_deg"], depth, angle))
    crops = []
    for p in v3["panes"]:
        x0, y0, w, h = (int(round(v)) for v in p["rect"])
        crops.append(img[y0 + 70:y0 + h - 40, x0:x0 + w].astype(float))  # without the labels
    w = min(c.shape[1] for c in crops)
    d_otf = np.abs(crops[0][:, :w] - crops[1][:, :w]).mean()
    d_lin = np.abs(crops[0][:, :w] - crops[2][:, :w]).mean()
    print("iso: mean |precise - otf| %.3f, |precise - trilinear| %.3f grey levels" % (d_otf, d_lin))
    if not d_lin > 4 * max(d_otf, 0.05):
        fail("trilinear's isosurface should differ from the cubic's far more than otf's does")


def check_truth(viewer, outdir):
    yield job(["marschner-lobb", "--view3d", "iso", "--iso", "0.5", "--view3d-angles", "20,55",
               "--reference", "truth"], outdir, "truth")
    _, rep = result(outdir, "truth")
    v3 = rep["view3d"]
    if v3.get("accuracy_reference") != "truth":
        fail("--reference truth: %s" % json.dumps(v3))
    acc = {p["method"]: p.get("accuracy") for p in v3["panes"]}
    if not all(acc.values()):
        fail("truth: a pane was not measured: %s" % json.dumps(v3["panes"]))
    for cubic in ("precise", "otf"):
        if not (acc[cubic]["rms"] < acc["linear"]["rms"] and
                acc[cubic]["normal_rms_deg"] < acc["linear"]["normal_rms_deg"]):
            fail("against the Marschner-Lobb function the %s cubic should beat trilinear: %s" %
                 (cubic, json.dumps(acc)))
    print("truth: depth RMS %.3g / %.3g mm, normal RMS %.3g / %.3g deg (precise / trilinear)" %
          (acc["precise"]["rms"], acc["linear"]["rms"], acc["precise"]["normal_rms_deg"],
           acc["linear"]["normal_rms_deg"]))


def check_dvr(viewer, outdir):
    yield job(["--view3d", "dvr", "--tf", "CT bone", "--opacity", "0.1", "--view3d-methods",
               "precise,linear"], outdir, "dvr")
    _, rep = result(outdir, "dvr")
    v3 = rep["view3d"]
    tf = v3.get("transfer_function", {})
    if tf.get("preset") != "CT bone" or abs(tf.get("opacity_per_mm", 0) - 0.1) > 1e-6:
        fail("DVR report: %s" % json.dumps(v3))
    if [p["method"] for p in v3["panes"]] != ["precise", "linear"]:
        fail("DVR panes: %s" % json.dumps(v3["panes"]))
    for p in v3["panes"]:
        if "accuracy" not in p or p["accuracy"]["max"] > 1e-2:
            fail("DVR pane %s: %s" % (p["method"], json.dumps(p)))
    print("DVR: CT bone preset, two panes measured")


def check_refusals(viewer):
    cases = [(["--view3d", "xray"], "--view3d"), (["--tf", "rainbow"], "rainbow"),
             (["--view3d", "iso", "--view3d-methods", "nearest"], "--view3d-methods"),
             (["--ray-step", "5"], "--ray-step"), (["--view3d-angles", "a,b"], "--view3d-angles")]
    for args, word in cases:
        r = subprocess.run([viewer, "--mode", "volume"] + args, capture_output=True, text=True,
                           timeout=60)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or word not in lines[0]:
            fail("%s: exit %d, stderr %r" % (" ".join(args), r.returncode, r.stderr))
    print("refusals: %d bad option values exit 2 with one line" % len(cases))


def main():
    viewer, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    check_refusals(viewer)
    try:
        run_cases(viewer, [check(viewer, outdir) for check in (check_mip, check_iso, check_truth,
                                                               check_dvr)],
                  outdir, skip_if=skip_without_gl)
    except RuntimeError as e:
        fail(str(e))
    print("PASS")


if __name__ == "__main__":
    main()
