#!/usr/bin/env python3
"""The video mode's display window and readout (issue 13 item 4), on the built-in synthetic
source, whose frames are computed here independently (SyntheticSource in video_mode.cpp: a zone
plate drifting by whole pixels, R, G, B differing).

1. Default: the report's window is 0..255, "auto"; an explicit full-scale window (--window 255
   --level 127.5) renders the views pixel for pixel as the default does (the automatic window is
   the identity: today's look), for the prefiltered cubic (overshoot clamped as before) and
   nearest side by side.
2. --window 128 --level 64 with nearest: every frame pixel on screen is min(255, v * 255 / 128)
   of the default's v (exactly, to one level of rounding), so each pixel >= 128 renders white,
   the view is brighter on average, and the area outside the frame (checkerboard) is unchanged.
3. Readout (--probe X,Y): the frame index, the nearest pixel and its stored RGB equal the
   synthetic frame's pixel computed here; nearest = stored, linear halfway = the mean of the two
   neighbours, the prefiltered cubic at a pixel centre = the stored value, the unfiltered cubic
   at a pixel centre = the [1 4 1]/6 smoothing; readouts do not depend on the window; a probe
   outside the frame has no pixel.

usage: test_viewer_video_window.py SPLINEVIEW OUTDIR
"""
import json
import os
import subprocess
import sys

import numpy as np

from viewer_png import png_rgb

W, H = 64, 48
SOURCE = "synthetic:%dx%d" % (W, H)
SIZE = "900x500"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        fail("%s exited %d: %s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r


def synthetic_frame(k):
    """Frame k of synthetic:WxH as SyntheticSource makes it (float32 arithmetic as in C++)."""
    margin = 256
    bw, bh = W + margin, H + margin
    y, x = np.mgrid[0:bh, 0:bw].astype(np.float64)
    cy, cx = (bh - 1) / 2.0, (bw - 1) / 2.0
    kk = np.pi * 0.45 / (min(bh, bw) / 2.0)
    v = (0.5 + 0.5 * np.cos(kk * ((y - cy) ** 2 + (x - cx) ** 2))).astype(np.float32)
    f32 = np.float32

    def q(a):
        return np.floor(255.0 * np.clip(a, f32(0), f32(1)).astype(np.float64) + 0.5)

    r = q(v)
    g = q(f32(0.85) * v + (f32(0.1) * x.astype(np.float32)) / f32(bw))
    b = q(f32(0.7) * v + (f32(0.2) * y.astype(np.float32)) / f32(bh))
    base = np.stack([r, g, b], axis=-1)
    ox, oy = k * 13 // 8 % margin, k % margin
    return base[oy:oy + H, ox:ox + W]


def shot(viewer, outdir, name, extra):
    png, rep = os.path.join(outdir, name + ".png"), os.path.join(outdir, name + ".json")
    run([viewer, SOURCE, "--mode", "video", "--paused", "--size", SIZE, "--screenshot", png,
         "--report", rep] + extra)
    return png_rgb(png).astype(np.int64), json.load(open(rep))


def view_box(j, i=0):
    x, y, w, h = j["views"][i]["rect"]
    return int(x), int(y), int(x + w), int(y + h)


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    viewer, outdir = sys.argv[1:3]
    os.makedirs(outdir, exist_ok=True)

    # 1. The automatic window is the identity.
    pair = ["--layout", "pair", "--method", "otf", "--compare", "nearest"]
    a, ja = shot(viewer, outdir, "default", pair)
    b, jb = shot(viewer, outdir, "full_scale", pair + ["--window", "255", "--level", "127.5"])
    w = ja["display_window"]
    if (w["lo"], w["hi"], w["source"], w["auto"]) != (0.0, 255.0, "auto", [0.0, 255.0]):
        fail("default display window %r, expected 0..255 auto" % w)
    if w["type_range"] != [0.0, 255.0] or w["data_scale"] != {"offset": 0.0, "scale": 255.0}:
        fail("default display window's ranges %r" % w)
    if jb["display_window"]["source"] != "user" or (jb["display_window"]["lo"],
                                                    jb["display_window"]["hi"]) != (0.0, 255.0):
        fail("--window 255 --level 127.5 gave %r" % jb["display_window"])
    if ja["last_frame_index"] != jb["last_frame_index"]:
        fail("the two runs show different frames")
    x0 = view_box(ja, 0)[0]
    # The status line at the foot of the views (clock, frame, measured display rate, drops)
    # shows the display rate each run measured, which differs between two runs on a loaded
    # machine (0.8 against 0.9 fps once): its band is left out, as in the check below.
    keep = np.ones(a.shape[:2], dtype=bool)
    for i in range(len(ja["views"])):
        vx0, vy0, vx1, vy1 = view_box(ja, i)
        keep[max(vy1 - 60, 0):vy1, vx0:vx1] = False
    diff = np.abs(a - b).max(axis=-1)[:, x0:][keep[:, x0:]]
    print("identity: views of the default and of --window 255 --level 127.5 differ in %d "
          "values (max %d)" % ((diff > 0).sum(), diff.max()))
    if diff.max() != 0:
        fail("the automatic window is not the full-scale identity on screen")

    # 2. A user window: 0..128.
    d, jd = shot(viewer, outdir, "nearest", ["--method", "nearest"])
    u, ju = shot(viewer, outdir, "window_128_64",
                 ["--method", "nearest", "--window", "128", "--level", "64"])
    wu = ju["display_window"]
    if (wu["lo"], wu["hi"], wu["source"]) != (0.0, 128.0, "user"):
        fail("--window 128 --level 64 gave %r" % wu)
    fx0, fy0, fx1, fy1 = ju["views"][0]["frame_rect"]
    vx0, vy0, vx1, vy1 = view_box(ju)
    # The frame's pixels on screen, away from its edges and the view's text labels.
    top, bottom = max(int(np.ceil(fy0)) + 2, vy0 + 45), min(int(fy1) - 2, vy1 - 60)
    left, right = max(int(np.ceil(fx0)) + 2, vx0), min(int(fx1) - 2, vx1)
    if bottom - top < 100 or right - left < 100:
        fail("the frame's on-screen area is too small: %r" % ju["views"])
    dv, uv = d[top:bottom, left:right], u[top:bottom, left:right]
    expected = np.minimum(255, np.floor(dv * 255.0 / 128.0 + 0.5))
    dev = np.abs(expected - uv)
    bright = dv >= 128
    print("window 0..128: %d frame values on screen, %d of them >= 128, max |shown - "
          "min(255, v * 255/128)| = %d; mean %.1f -> %.1f"
          % (dv.size, bright.sum(), dev.max(), d[vy0:vy1, vx0:vx1].mean(),
             u[vy0:vy1, vx0:vx1].mean()))
    if bright.sum() < 1000 or (~bright).sum() < 1000:
        fail("the test frame should have values on both sides of 128")
    if not (uv[bright] == 255).all():
        fail("%d values >= 128 are not white under the window 0..128"
             % (uv[bright] != 255).sum())
    if dev.max() > 1:
        fail("the windowed view is not min(255, v * 255 / 128) of the default (off by %d)"
             % dev.max())
    if not u[vy0:vy1, vx0:vx1].mean() > d[vy0:vy1, vx0:vx1].mean() + 10:
        fail("the window 0..128 does not brighten the view")
    # Outside the frame (the checkerboard above and below it) nothing changes.
    if int(np.floor(fy0)) - 2 > vy0 + 40:
        band = slice(vy0 + 40, int(np.floor(fy0)) - 2)
        if not (d[band, vx0:vx1] == u[band, vx0:vx1]).all():
            fail("the window changed the background outside the frame")

    # 3. Readout.
    probes = ["0,0", "10,20", "63,47", "31,7", "10.5,20", "40,30", "-3,5"]
    args = ["--layout", "grid", "--method", "otf"]
    for p in probes:
        args += ["--probe", p]
    _, j1 = shot(viewer, outdir, "readout", args)
    _, j2 = shot(viewer, outdir, "readout_window", args + ["--window", "40", "--level", "200"])
    r1, r2 = j1["readout"], j2["readout"]
    if len(r1) != len(probes):
        fail("%d readout entries for %d probes" % (len(r1), len(probes)))
    if r1 != r2:
        fail("the readout depends on the display window")
    for p, r in zip(probes, r1):
        x, y = (float(t) for t in p.split(","))
        if r["position"] != [x, y] or r["units"] != "8-bit":
            fail("readout %r for probe %s" % (r, p))
        if x < -0.5:
            if r["pixel"] is not None:
                fail("probe %s outside the frame has a pixel: %r" % (p, r))
            continue
        frame = synthetic_frame(r["frame"])
        px, py = int(np.floor(x + 0.5)), int(np.floor(y + 0.5))
        stored = frame[py, px]
        print("probe %s: frame %d pixel %r stored %r, computed %r, otf %s"
              % (p, r["frame"], r["pixel"], r["stored"], stored.astype(int).tolist(),
                 ["%.3f" % v for v in r["values"]["otf"]]))
        if r["pixel"] != [px, py]:
            fail("probe %s: pixel %r, expected %r" % (p, r["pixel"], [px, py]))
        if r["stored"] != stored.astype(int).tolist():
            fail("probe %s: stored RGB %r, the synthetic frame has %r"
                 % (p, r["stored"], stored.tolist()))
        if r["shown"] != ["otf", "linear", "nearest", "cubic-unfiltered"]:
            fail("shown views %r" % r["shown"])
        v = {k: np.array(r["values"][k]) for k in r["values"]}
        if not np.array_equal(v["nearest"], stored):
            fail("probe %s: nearest %r != stored" % (p, v["nearest"]))
        if x == int(x):
            for m in ("otf", "lut", "precise", "linear"):
                if np.abs(v[m] - stored).max() > 1e-6:
                    fail("probe %s: %s %r, an interpolating method must give the stored %r"
                         % (p, m, v[m], stored))
            if 0 < px < W - 1 and 0 < py < H - 1:
                f = frame.astype(np.float64)
                k = np.array([1.0, 4.0, 1.0]) / 6.0
                smooth = sum(k[i] * k[jj] * f[py - 1 + i, px - 1 + jj]
                             for i in range(3) for jj in range(3))
                if np.abs(v["cubic-unfiltered"] - smooth).max() > 1e-6:
                    fail("probe %s: unfiltered cubic %r, expected [1 4 1]/6 smoothing %r"
                         % (p, v["cubic-unfiltered"], smooth))
        else:
            x0_ = int(np.floor(x))
            mean = (frame[py, x0_] + frame[py, x0_ + 1]) / 2.0
            if np.abs(v["linear"] - mean).max() > 1e-9:
                fail("probe %s: linear %r, expected %r" % (p, v["linear"], mean))
    print("PASS")


if __name__ == "__main__":
    main()
