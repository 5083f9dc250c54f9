#!/usr/bin/python3
"""Repeated-rotation experiment (docs/SOURCES.md section 3): rotate a 512x512 greyscale photo
by 10 degrees 36 times, each step resampling the previous result, and report the PSNR against
the original inside the centred disc of radius 0.35 N, per method, through
`splinetool resample --rotate 10 --repeat 36` (double and single precision) and through
scipy.ndimage.rotate as an independent peer. Prints a Markdown table.

usage: tools/repeated_rotation.py SPLINETOOL [IMAGE] [--no-scipy]
"""
import json
import subprocess
import sys
import tempfile
import time

import numpy as np

# Not a published figure: scipy.ndimage on another 512x512 greyscale photograph (not in this
# repository), supplied with the project's brief; the prefilter paper's Figure 5 shows images
# only (docs/SOURCES.md section 3).
OTHER_PHOTO_SCIPY = {"nearest": 19.8, "linear": 23.4, "cubic-unfiltered": 21.8, "cubic": 31.4,
             "quintic": 33.9, "septic": None}
SCIPY = {"nearest": (0, True), "linear": (1, True), "cubic-unfiltered": (3, False),
         "cubic": (3, True), "quintic": (5, True), "septic": None}


# The stored values of the 8-bit photograph run from 0 to 255; PSNR (splinetool's peak is the
# type's full scale) is the same in either unit, the max-abs columns are given in [0, 1].
FULL_SCALE = 255.0


def splinetool_psnr(tool, image, method, precision):
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([tool, "resample", image, f"{d}/out.npy", "--rotate", "10",
                              "--repeat", "36", "--method", method, "--precision", precision,
                              "--json"], check=True, capture_output=True, text=True).stdout
        # splinetool keeps an 8-bit image's stored values (0..255); the table is in [0, 1].
        result = np.load(f"{d}/out.npy").astype(np.float64) / FULL_SCALE
    r = json.loads(out)
    return r["psnr_db"], r["seconds"], result


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    tool = args[0]
    image = args[1] if len(args) > 1 else "assets/ascent.png"
    use_scipy = "--no-scipy" not in sys.argv
    a = None
    if use_scipy:
        import scipy.ndimage as nd
        with tempfile.TemporaryDirectory() as d:
            # Let splinetool decode the image (zoom by 1 with nearest is the identity).
            subprocess.run([tool, "resample", image, f"{d}/a.npy", "--zoom", "1",
                            "--method", "nearest"], check=True)
            a = np.load(f"{d}/a.npy") / FULL_SCALE  # in [0, 1], as the table
        n = a.shape[0]
        yy, xx = np.mgrid[: a.shape[0], : a.shape[1]]
        c0, c1 = (a.shape[0] - 1) / 2, (a.shape[1] - 1) / 2
        mask = (yy - c0) ** 2 + (xx - c1) ** 2 <= (0.35 * min(a.shape)) ** 2

    rows = []
    for method in ["nearest", "linear", "cubic-unfiltered", "cubic", "quintic", "septic"]:
        d_psnr, d_sec, d_img = splinetool_psnr(tool, image, method, "double")
        s_psnr, _, s_img = splinetool_psnr(tool, image, method, "single")
        single_vs_double = np.max(np.abs(s_img - d_img))
        sp, diff = "", "n/a"
        if use_scipy and SCIPY[method] is not None:
            order, pf = SCIPY[method]
            b = a.copy()
            t0 = time.perf_counter()
            for _ in range(36):
                b = nd.rotate(b, 10, reshape=False, order=order, mode="reflect", prefilter=pf)
            mse = np.mean((b[mask] - a[mask]) ** 2)
            sp = f"{10 * np.log10(1 / mse):.3f}"
            diff = f"{np.max(np.abs(b - d_img)):.1e}"
        pub = OTHER_PHOTO_SCIPY[method]
        rows.append(f"| {method} | {d_psnr:.3f} | {s_psnr:.3f} | {sp or 'n/a'} | "
                    f"{pub if pub is not None else 'n/a'} | {diff} | {single_vs_double:.1e} |"
                    f" {d_sec:.2f} |")
    print("| method | splinetool double (dB) | splinetool single (dB) | scipy.ndimage (dB) |"
          " scipy, another photograph (dB) | max abs splinetool double - scipy | max abs single - double |"
          " splinetool seconds (36 steps, double) |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
