#!/usr/bin/env python3
"""The viewer's video mode end to end (under Xvfb or headless EGL, started by the caller).

1. Pair layout, prefiltered cubic (left) against nearest (right), window fitted: the report
   names the stream (size, frame rate, codec) and at least one frame shown; the screenshot's two
   views show the same frame (their block means agree) but differ in detail, as the cubic must
   from nearest at a zoom above 1, and neither is blank.
2. Long playback: the clip looped for several minutes of frames (--measure, every frame shows the
   next decoded frame) at a reduced decode size; the frames shown exceed the clip's length (it
   looped), nothing was dropped, and the resident memory grows by less than 8 MiB over the
   second half of the run (64 MiB from frame 500; GPU memory by less than 16 MiB, where CUDA
   is used).
3. A damaged file (the clip cut in half) and a file that is not a video end the screenshot run
   with an error naming the file, not a crash.

usage: test_viewer_video.py SPLINEVIEW CLIP OUTDIR [FRAMES]
"""
import json
import os
import subprocess
import sys

import numpy as np

from viewer_png import png_rgb


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, expect_ok=True):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    if expect_ok and r.returncode != 0:
        fail("%s exited %d: %s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r


def block_means(img, k=8):
    h, w = img.shape[0] // k * k, img.shape[1] // k * k
    return img[:h, :w].reshape(h // k, k, w // k, k, 3).mean(axis=(1, 3))


def main():
    if len(sys.argv) not in (4, 5):
        fail(__doc__)
    viewer, clip, outdir = sys.argv[1:4]
    frames = int(sys.argv[4]) if len(sys.argv) == 5 else 6000
    os.makedirs(outdir, exist_ok=True)

    # 1. Content of the two views.
    shot, rep = os.path.join(outdir, "pair.png"), os.path.join(outdir, "pair.json")
    run([viewer, clip, "--mode", "video", "--layout", "pair", "--method", "otf", "--compare",
         "nearest", "--decode-size", "320x180", "--size", "1400x500", "--screenshot", shot,
         "--report", rep])
    j = json.load(open(rep))
    if j["frames_shown"] < 1:
        fail("no frame shown: %r" % j)
    s = j["stream"]
    if not (s["width"] > 0 and s["height"] > 0 and s["fps"] > 0 and s["codec"]):
        fail("stream description incomplete: %r" % s)
    if j["methods"] != ["otf", "nearest"]:
        fail("views %r, expected otf and nearest" % j["methods"])
    if j["zoom"] <= 1.5:
        fail("the fitted zoom %.2f is too small to tell cubic from nearest" % j["zoom"])
    img = png_rgb(shot)
    panel = 360  # the side panel's width at UI scale 1
    area = img[:, panel:]
    half = (area.shape[1] - 4) // 2
    left, right = area[:, :half], area[:, half + 4:half + 4 + half]
    # The views' image region: rows where the left view is not the checkerboard background.
    rows = np.where(left.std(axis=(1, 2)) > 1)[0]
    if len(rows) < 50:
        fail("the left view looks blank")
    a, b = left.astype(float), right.astype(float)
    detail = np.abs(a - b).mean()
    ma, mb = block_means(a), block_means(b)
    coarse = np.abs(ma - mb).mean()
    corr = np.corrcoef(ma.ravel(), mb.ravel())[0, 1]
    print("pair: mean |cubic - nearest| %.2f levels per pixel, %.2f on 8x8 block means, "
          "block correlation %.4f" % (detail, coarse, corr))
    if not corr > 0.97:
        fail("the two views do not show the same frame (block correlation %.4f)" % corr)
    if not detail > 1.5 * coarse or not detail > 1.0:
        fail("cubic and nearest do not differ in detail (%.2f vs %.2f on block means)"
             % (detail, coarse))

    # 2. Long playback: memory stays flat.
    rep2 = os.path.join(outdir, "long.json")
    run([viewer, clip, "--mode", "video", "--headless", "--decode-size", "192x108", "--size",
         "256x144", "--screenshot", os.path.join(outdir, "long.png"), "--report", rep2,
         "--measure", str(frames)])
    j = json.load(open(rep2))
    m = j["memory"]
    clip_frames = j["stream"]["frames"]
    print("long playback: %d frames shown (clip %d frames), dropped %d decode / %d display, "
          "RSS %s KiB at frame 500 -> %s KiB at the end, GPU %s -> %s bytes"
          % (j["frames_shown"], clip_frames, j["dropped_decode"], j["dropped_display"],
             m["rss_kib_500"], m["rss_kib_last"], m["gpu_bytes_500"], m["gpu_bytes_last"]))
    if j["frames_shown"] < frames or j["frames_shown"] <= 2 * clip_frames:
        fail("expected at least %d frames and several loops of the clip" % frames)
    if j["dropped_decode"] or j["dropped_display"]:
        fail("frames were dropped in a throughput run")
    # Flat = no growth once warmed up. The allocators (ASan's above all, in the sanitizer build)
    # and the GL driver settle over the first few thousand frames, so compare the second half of
    # the run: a leak of even 3 KiB per frame would add more than 8 MiB there.
    every = m["rss_kib_every_1000"]
    if m["rss_kib_500"] is None or len(every) < frames // 1000:
        fail("no memory figures in the report: %r" % m)
    half = every[len(every) // 2 - 1]
    print("RSS every 1000 frames: %s KiB" % every)
    if every[-1] - half > 8 * 1024:
        fail("resident memory grew by %d KiB over the second half of the run"
             % (every[-1] - half))
    if every[-1] - m["rss_kib_500"] > 64 * 1024:
        fail("resident memory grew by %d KiB from frame 500" % (every[-1] - m["rss_kib_500"]))
    if m["gpu_bytes_500"] is not None and m["gpu_bytes_last"] - m["gpu_bytes_500"] > 16 << 20:
        fail("GPU memory grew by %d bytes" % (m["gpu_bytes_last"] - m["gpu_bytes_500"]))

    # 3. Damaged inputs.
    cut = os.path.join(outdir, "cut.mp4")
    data = open(clip, "rb").read()
    open(cut, "wb").write(data[:len(data) // 2])
    text = os.path.join(outdir, "notes.mp4")
    open(text, "w").write("not a video\n" * 100)
    for bad in (cut, text):
        r = run([viewer, bad, "--mode", "video", "--no-loop", "--headless", "--size", "256x144",
                 "--screenshot", os.path.join(outdir, "bad.png"), "--measure", "400"],
                expect_ok=False)
        if r.returncode == 0 or r.returncode < 0:
            fail("%s: exit status %d, expected an error exit" % (bad, r.returncode))
        if os.path.basename(bad) not in r.stderr:
            fail("%s: the error does not name the file: %r" % (bad, r.stderr))
        print("%s: exit %d, %s" % (os.path.basename(bad), r.returncode, r.stderr.strip()[-160:]))
    print("PASS: video mode content, flat memory over %d frames, damaged files refused" % frames)


if __name__ == "__main__":
    main()
