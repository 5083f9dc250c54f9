#!/usr/bin/env python3
"""The zoom and rotate modes' display window and raw readout (issue 13 item 4), headless (EGL).

A fresh 12-bit image stored in a 16-bit PNG (values in 0..4095 of 0..65535: a ramp, random rows,
one 0, one 4095 and one 2048 pixel) is shown with the nearest method, so that every screenshot
pixel of the view shows one stored value, and the view's pixel grid comes from the report.

1. Auto window (the default): the report's window is the 0.1st..99.9th percentile order
   statistics computed here with numpy on the file, its source "auto"; every view pixel is
   round(255 clamp((stored - lo) / (hi - lo))) within one grey level, so the 12-bit image is not
   black (shown over 0..65535 it would be below grey 17).
2. --window 4095 --level 2047.5 (raw units: black 0, white 4095): source "user", lo 0, hi 4095;
   the 4095 pixel is white (255), the 2048 pixel mid grey (127 or 128), every pixel as the
   formula says. A narrow window (1500..2500) clamps on both sides as the formula says.
3. The readout (--probe X,Y) is in raw units: the nearest pixel's stored value equals the file's;
   nearest equals it; precise cubic interpolates it; linear between two pixels is their mean and
   bilinear at a fractional position; the unfiltered cubic at a pixel is the [1 4 1]/6 smoothing
   of the stored values; outside the image the pixel is null. The readout does not change with
   the window.
4. The accuracy figures (four methods, grid layout) are identical under the auto window and a
   user window: they are computed on the data, not on windowed pixels.
5. Rotate mode: the same window in the report; the readout of each method at the last step equals
   `splinetool resample FILE --rotate A --repeat K --backend gl` on the file's raw values at that
   pixel; a window of 0..65535 darkens the views (every pixel of the view centres at most grey
   17) where the auto window shows bright pixels; the readout does not change with the window.

usage: test_viewer_window.py SPLINEVIEW SPLINETOOL OUTDIR
"""
import json
import os
import struct
import subprocess
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from viewer_batch import run_batch  # noqa: E402
from viewer_png import png_rgb  # noqa: E402

H, W = 48, 80
ZOOM = 6


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        fail("%s exited %d: %s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r


def write_png16(path, a):
    a = np.asarray(a, dtype=">u2")
    h, w = a.shape
    raw = b"".join(b"\x00" + a[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def read_png16(path):
    """The stored values of a 16-bit grey PNG written with filter 0 (as write_png16 does)."""
    data = open(path, "rb").read()
    pos, idat = 8, b""
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 16 and colour == 0
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 2 * w)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].copy().view(">u2").astype(np.float64).reshape(h, w)


def make_image(rng):
    img = np.empty((H, W), np.float64)
    img[:16] = np.round(1000 + np.arange(W) / (W - 1) * 2000)[None, :]
    img[16:] = rng.integers(1000, 3001, size=(H - 16, W))
    img[30, 40] = 4095  # the brightest pixel: white in 0..4095
    img[31, 40] = 0
    img[32, 40] = 2048  # mid grey in 0..4095
    return img


def viewer_runs(viewer, image, outdir, extras):
    """The runs {tag: extra arguments} in one viewer process (--batch, headless):
    {tag: (screenshot pixels, report)}."""
    jobs, outputs = [], {}
    for tag, extra in extras.items():
        shot, report = os.path.join(outdir, tag + ".png"), os.path.join(outdir, tag + ".json")
        for p in (shot, report):
            if os.path.exists(p):
                os.remove(p)
        jobs.append([image, "--headless", "--size", "1200x760", "--screenshot", shot, "--report",
                     report] + extra)
        outputs[tag] = (shot, report)
    r = run_batch(viewer, jobs, os.path.join(outdir, "jobs.txt"))
    if r.returncode != 0:
        fail("splineview --batch exited %d: %s%s" % (r.returncode, r.stdout, r.stderr))
    results = {}
    for tag, (shot, report) in outputs.items():
        with open(report) as f:
            results[tag] = (png_rgb(shot), json.load(f))
    return results


def view_pixels(shot, view, stored):
    """(screenshot grey, stored value) of every pixel of the view that shows one sample clearly
    (nearest method; positions within 0.01 of a sample border and the label rows skipped)."""
    g, (x0, y0, _, _) = view["grid"], view["rect"]
    rows, cols = g["rows"], g["cols"]
    r, c = np.mgrid[0:rows, 0:cols].astype(np.float64)
    py = g["origin"][0] + r * g["step_row"][0] + c * g["step_col"][0]
    px = g["origin"][1] + r * g["step_row"][1] + c * g["step_col"][1]
    iy, ix = np.floor(py + 0.5), np.floor(px + 0.5)
    ok = (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W) & (r >= 40)
    ok &= (np.abs(py + 0.5 - iy) > 0.01) & (np.abs(px + 0.5 - ix) > 0.01)
    ok &= (np.abs(py - iy + 0.5) > 0.01) & (np.abs(px - ix + 0.5) > 0.01)
    patch = shot[int(y0):int(y0) + rows, int(x0):int(x0) + cols]
    if not (patch[..., 0] == patch[..., 1]).all() or not (patch[..., 1] == patch[..., 2]).all():
        fail("the grey image's view is not grey")
    grey = patch[..., 0][ok]
    values = stored[iy[ok].astype(int), ix[ok].astype(int)]
    if grey.size < 1000:
        fail("only %d view pixels to check" % grey.size)
    return grey, values, ok, iy, ix, patch[..., 0]


def check_window_pixels(shot, view, stored, lo, hi, what):
    grey, values, ok, iy, ix, patch = view_pixels(shot, view, stored)
    want = 255.0 * np.clip((values - lo) / (hi - lo), 0.0, 1.0)
    err = np.abs(grey - want)
    if err.max() > 1.0:
        i = int(np.argmax(err))
        fail("%s: a view pixel of stored value %g shows grey %d, the window %g..%g says %.2f"
             % (what, values[i], grey[i], lo, hi, want[i]))
    return patch, ok, iy, ix


def grey_of_pixel(patch, ok, iy, ix, y, x):
    sel = ok & (iy == y) & (ix == x)
    if not sel.any():
        fail("pixel (%d, %d) is not in view" % (x, y))
    return set(int(v) for v in patch[sel])


def check_readout(entries, stored, what):
    tol = 1e-5 * 4095  # float textures of normalised values, mapped back
    for e in entries:
        x, y = e["position"]
        if not (-0.5 <= x <= W - 0.5 and -0.5 <= y <= H - 0.5):
            if e.get("pixel") is not None:
                fail("%s: probe %r outside the image has pixel %r" % (what, e["position"], e["pixel"]))
            continue
        px, py = int(np.floor(x + 0.5)), int(np.floor(y + 0.5))
        if e["pixel"] != [px, py]:
            fail("%s: probe %r: pixel %r, expected %r" % (what, e["position"], e["pixel"], [px, py]))
        if abs(e["stored"][0] - stored[py, px]) > 1e-9:
            fail("%s: probe %r: stored %r, the file holds %g" % (what, e["position"], e["stored"],
                                                                 stored[py, px]))
        v = {k: val[0] for k, val in e["values"].items()}
        if abs(v["nearest"] - stored[py, px]) > tol:
            fail("%s: nearest at %r reads %r, the file holds %g" % (what, e["position"],
                                                                  v["nearest"], stored[py, px]))
        if x == int(x) and y == int(y):
            xi, yi = int(x), int(y)
            if abs(v["precise"] - stored[yi, xi]) > 10 * tol:
                fail("%s: precise cubic at a sample reads %r, the sample is %g (interpolates)"
                     % (what, v["precise"], stored[yi, xi]))
            k = np.array([1.0, 4.0, 1.0]) / 6.0
            smooth = k @ stored[yi - 1:yi + 2, xi - 1:xi + 2] @ k
            if abs(v["cubic-unfiltered"] - smooth) > tol:
                fail("%s: unfiltered cubic at (%d, %d) reads %r, [1 4 1]/6 gives %g"
                     % (what, xi, yi, v["cubic-unfiltered"], smooth))
        else:
            x0, y0 = int(np.floor(x)), int(np.floor(y))
            fx, fy = x - x0, y - y0
            s = stored
            bil = ((1 - fy) * ((1 - fx) * s[y0, x0] + fx * s[y0, x0 + 1]) +
                   fy * ((1 - fx) * s[y0 + 1, x0] + fx * s[y0 + 1, x0 + 1]))
            if abs(v["linear"] - bil) > tol:
                fail("%s: linear at %r reads %r, bilinear of the file gives %g"
                     % (what, e["position"], v["linear"], bil))


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    viewer, tool, outdir = (os.path.abspath(p) for p in sys.argv[1:4])
    os.makedirs(outdir, exist_ok=True)
    probe = subprocess.run([viewer, "--mode", "video", "synthetic:64x48", "--headless", "--size",
                            "128x96", "--screenshot", os.path.join(outdir, "probe.png")],
                           capture_output=True, text=True)
    if probe.returncode != 0 and ("EGL" in probe.stderr or "context" in probe.stderr):
        print("SKIP: no headless GL context: " + probe.stderr.strip())
        sys.exit(77)

    rng = np.random.default_rng()
    image = os.path.join(outdir, "twelve_bit.png")
    write_png16(image, make_image(rng))
    stored = read_png16(image)  # the file's stored values, as numpy reads them
    n = stored.size
    srt = np.sort(stored.ravel())
    auto_lo, auto_hi = srt[n // 1000], srt[n - 1 - n // 1000]

    # Probes: fresh interior sample positions, between-pixel and fractional positions, outside.
    probes = []
    for _ in range(4):
        probes.append((int(rng.integers(2, W - 2)), int(rng.integers(2, H - 2))))
    for _ in range(3):
        probes.append((float(rng.integers(1, W - 2)) + 0.5, float(rng.integers(1, H - 2))))
        probes.append((float(rng.uniform(1, W - 2)), float(rng.uniform(1, H - 2))))
    probes.append((-3.0, 5.0))
    probe_args = []
    for p in probes:
        probe_args += ["--probe", "%r,%r" % (float(p[0]), float(p[1]))]
    base = ["--method", "nearest", "--zoom", str(ZOOM)] + probe_args
    grid = ["--layout", "grid", "--methods", "nearest,linear,otf,precise", "--zoom", "3.3",
            "--angle", "17"]
    angle, steps = 30, 2
    rot = ["--mode", "rotate", "--cpu-prefilter", "--methods", "nearest,linear,precise",
           "--step-angle", str(angle), "--steps", str(steps)]
    pixels = [(int(rng.integers(12, W - 12)), int(rng.integers(12, H - 12))) for _ in range(4)]
    rot_probes = []
    for p in pixels:
        rot_probes += ["--probe", "%d,%d" % p]
    # Every run's screenshot and report, in one viewer process.
    runs = viewer_runs(viewer, image, outdir, {
        "auto": base,
        "user": base + ["--window", "4095", "--level", "2047.5"],
        "narrow": base + ["--window", "1000", "--level", "2000"],
        "acc_auto": grid,
        "acc_user": grid + ["--window", "900", "--level", "1800"],
        "rot_auto": rot + rot_probes,
        "rot_dark": rot + rot_probes + ["--window", "65535", "--level", "32767.5"]})

    # 1. The automatic window.
    shot, rep = runs["auto"]
    dw = rep["display_window"]
    if dw["source"] != "auto" or dw["units"] != "raw":
        fail("default window: %r" % dw)
    if abs(dw["lo"] - auto_lo) > 1e-6 or abs(dw["hi"] - auto_hi) > 1e-6:
        fail("auto window %g..%g, the 0.1st..99.9th percentiles are %g..%g"
             % (dw["lo"], dw["hi"], auto_lo, auto_hi))
    if dw["type_range"] != [0, 65535] or dw["data_range"] != [stored.min(), stored.max()]:
        fail("type/data range %r %r" % (dw["type_range"], dw["data_range"]))
    patch, ok, _, _ = check_window_pixels(shot, rep["views"][0], stored, auto_lo, auto_hi, "auto")
    if patch[ok].mean() < 64 or patch[ok].max() < 250:
        fail("auto window: the 12-bit image looks dark (mean grey %.1f)" % patch[ok].mean())
    check_readout(rep["readout"], stored, "auto window")
    print("auto window %g..%g (percentiles); view pixels match; readout in raw units"
          % (auto_lo, auto_hi))

    # 2. A user window over the 12-bit range, and a narrow one.
    shot, rep_user = runs["user"]
    dw = rep_user["display_window"]
    if dw["source"] != "user" or abs(dw["lo"]) > 1e-9 or abs(dw["hi"] - 4095) > 1e-9:
        fail("--window 4095 --level 2047.5: %r" % dw)
    patch, ok, iy, ix = check_window_pixels(shot, rep_user["views"][0], stored, 0, 4095, "0..4095")
    white = grey_of_pixel(patch, ok, iy, ix, 30, 40)
    mid = grey_of_pixel(patch, ok, iy, ix, 32, 40)
    black = grey_of_pixel(patch, ok, iy, ix, 31, 40)
    if white != {255} or not mid <= {127, 128} or black != {0}:
        fail("0..4095: 4095 shows %r, 2048 %r, 0 %r" % (white, mid, black))
    if rep_user["readout"] != rep["readout"]:
        fail("the readout changed with the window")
    shot, rep_narrow = runs["narrow"]
    patch, ok, _, _ = check_window_pixels(shot, rep_narrow["views"][0], stored, 1500, 2500,
                                          "1500..2500")
    if not ((patch[ok] == 0).any() and (patch[ok] == 255).any()):
        fail("the narrow window clamps nothing")
    print("user windows 0..4095 (4095 white, 2048 grey %s, 0 black) and 1500..2500: view pixels "
          "match; readout unchanged" % sorted(mid))

    # 4. Accuracy figures do not depend on the window.
    _, a = runs["acc_auto"]
    _, b = runs["acc_user"]
    for va, vb in zip(a["views"], b["views"]):
        if "accuracy" not in va or va["accuracy"] != vb["accuracy"]:
            fail("%s: accuracy %r under the auto window, %r under 1350..2250"
                 % (va["method"], va.get("accuracy"), vb.get("accuracy")))
    if a["accuracy_units"]["raw_per_unit"] != auto_hi - auto_lo:
        fail("accuracy units: %r" % a["accuracy_units"])
    print("accuracy figures identical under both windows (%s)" %
          ", ".join("%s RMS %.3g" % (v["method"], v["accuracy"]["rms"]) for v in a["views"]))

    # 5. Rotate mode.
    shot_auto, ra = runs["rot_auto"]
    shot_dark, rb = runs["rot_dark"]
    if ra["display_window"]["source"] != "auto" or rb["display_window"]["source"] != "user":
        fail("rotate: windows %r / %r" % (ra["display_window"], rb["display_window"]))
    if ra["readout"] != rb["readout"]:
        fail("rotate: the readout changed with the window")
    for name, fetch, method in (("nearest", None, "nearest"), ("linear", None, "linear"),
                                ("precise", "precise", "cubic")):
        out = os.path.join(outdir, "rot_%s.npy" % name)
        run([tool, "resample", image, out, "--rotate", str(angle), "--repeat", str(steps),
             "--method", method, "--backend", "gl"] + (["--fetch", fetch] if fetch else []))
        ref = np.load(out).astype(np.float64).reshape(H, W)
        for e in ra["readout"]:
            x, y = e["pixel"]
            got = e["values"][name][0]
            if e["step"] != steps or abs(got - ref[y, x]) > 1e-4 * 4095:
                fail("rotate %s step %d at (%d, %d): viewer reads %r, splinetool %g"
                     % (name, e["step"], x, y, got, ref[y, x]))
            if abs(e["stored"][0] - stored[y, x]) > 1e-9:
                fail("rotate: stored %r at (%d, %d), the file holds %g" % (e["stored"], x, y,
                                                                         stored[y, x]))
    for m in ra["methods"]:
        x0, y0, w, h = m["rect"]
        box = (slice(int(y0 + 0.4 * h), int(y0 + 0.6 * h)),
               slice(int(x0 + 0.4 * w), int(x0 + 0.6 * w)))
        bright, dark = shot_auto[box].max(), shot_dark[box].max()
        if bright < 200 or dark > int(np.ceil(255 * 4095 / 65535)) + 1:
            fail("rotate %s: view centre max grey %d (auto), %d (0..65535)"
                 % (m["method"], bright, dark))
    print("rotate: readout = splinetool resample on the raw file; window 0..65535 darkens the views")
    print("PASS: display window and raw readout in the zoom and rotate modes")


if __name__ == "__main__":
    main()
