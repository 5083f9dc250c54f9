#!/usr/bin/env python3
"""Times torch.nn.functional.interpolate on the frames of `splinebench-cuda upscale`: RGB float32
on the GPU, 1920x1080 -> 3840x2160 (scale 2), 1280x720 (3) and 960x540 (4) -> 3840x2160, modes
'bicubic' and 'bilinear' (align_corners=False: output j at input (j + 1/2) / f - 1/2, the same
grid as ours), for x of shape (1, 3, H, W) contiguous (NCHW, torch's usual layout) and in
channels_last (NHWC: interleaved like our frames). CUDA events around each call after a
warm-up; medians of --repeats runs (at least 50). Beside them, a device-to-device copy of the
output bytes in torch (the same floor splinebench-cuda reports).

Accuracy, on a small random frame (CPU, float64): torch's bicubic is Keys' cubic convolution
(a = -0.75, edges clamped), not the cubic B-spline; the RMS and largest difference between it
(and bilinear) and the exact interpolating cubic B-spline, scipy.ndimage.zoom(order=3,
mode='reflect', grid_mode=True) -- 'reflect' is scipy's half-sample symmetric extension, our
Reflect; the brief's 'mirror' would be whole-sample symmetric, which our cubic does not use --
over the whole frame and away from the edges (where the extensions differ).

Usage: bench_torch_upscale.py OUT.json [--repeats N] [--quick]
Needs torch with CUDA, numpy and scipy (all in the GPU machine's python3).
"""
import argparse
import json
import sys

import numpy as np

CASES = [
    ("1920x1080 -> 3840x2160", 1080, 1920, 2),
    ("1280x720 -> 3840x2160", 720, 1280, 3),
    ("960x540 -> 3840x2160", 540, 960, 4),
]
QUICK = [("320x180 -> 640x360", 180, 320, 2)]


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def time_cuda(torch, fn, repeats, warmup=10):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return median(times)


def accuracy(torch, F, ndi):
    """RMS / max |torch - exact cubic B-spline| on a 48x64 RGB random frame, factor 2."""
    rng = np.random.default_rng(7)
    img = rng.random((48, 64, 3))  # (H, W, C), values in [0, 1)
    f = 2
    exact = np.stack(
        [ndi.zoom(img[:, :, c], f, order=3, mode="reflect", grid_mode=True) for c in range(3)],
        axis=-1,
    )
    x = torch.from_numpy(img.transpose(2, 0, 1)[None].copy())  # (1, 3, H, W) float64, CPU
    border = 4 * f  # outputs within this many pixels of an edge are left out of "inside"
    out = {}
    for mode in ("bicubic", "bilinear"):
        y = F.interpolate(x, scale_factor=f, mode=mode, align_corners=False)
        y = y[0].numpy().transpose(1, 2, 0)
        d = y - exact
        inner = d[border:-border, border:-border]
        out[mode] = {
            "rms_vs_bspline": float(np.sqrt(np.mean(d**2))),
            "max_vs_bspline": float(np.abs(d).max()),
            "rms_vs_bspline_inside": float(np.sqrt(np.mean(inner**2))),
            "max_vs_bspline_inside": float(np.abs(inner).max()),
        }
    # Both grids are the same: at factor 1 interpolate returns the input, and so does the spline.
    same = F.interpolate(x, size=(48, 64), mode="bicubic", align_corners=False)
    out["bicubic_factor1_max_change"] = float((same - x).abs().max())
    out["frame"] = "48x64 RGB, uniform random in [0, 1), float64, factor 2"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="JSON report file")
    ap.add_argument("--repeats", type=int, default=100, help="timed runs per case (>= 50)")
    ap.add_argument("--quick", action="store_true", help="one small frame, few repeats")
    args = ap.parse_args()

    import scipy.ndimage as ndi
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("bench_torch_upscale: torch sees no CUDA device", file=sys.stderr)
        return 1
    repeats = 5 if args.quick else max(50, args.repeats)
    cases = QUICK if args.quick else CASES
    dev = torch.device("cuda")
    report = {
        "tool": "bench_torch_upscale",
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "repeats": repeats,
        "cases": [],
    }
    print(f"torch {torch.__version__} F.interpolate on {report['device']}, float32, median of "
          f"{repeats} runs\n")
    print("| frames | mode | layout | ms | x copy of the output |\n|---|---|---|---|---|")
    torch.manual_seed(1)
    for name, h, w, f in cases:
        x = torch.rand(1, 3, h, w, device=dev, dtype=torch.float32)
        xl = x.contiguous(memory_format=torch.channels_last)
        y = F.interpolate(x, scale_factor=f, mode="bicubic", align_corners=False)
        assert tuple(y.shape) == (1, 3, h * f, w * f), y.shape
        dst = torch.empty_like(y)
        copy_ms = time_cuda(torch, lambda: dst.copy_(y), repeats)
        jc = {"name": name, "in_dims": [h, w], "factor": f, "channels": 3,
              "out_bytes": y.numel() * 4, "copy_ms": copy_ms, "rows": []}
        print(f"| {name} (x{f}) | copy of the output ({y.numel() * 4 / 1e6:.1f} MB) | | "
              f"{copy_ms:.4f} | 1.00 |")
        for mode in ("bicubic", "bilinear"):
            for layout, t in (("NCHW", x), ("channels_last", xl)):
                ms = time_cuda(
                    torch,
                    lambda t=t, mode=mode: F.interpolate(
                        t, scale_factor=f, mode=mode, align_corners=False),
                    repeats)
                jc["rows"].append({"mode": mode, "layout": layout, "ms": ms,
                                   "vs_copy_of_output": ms / copy_ms})
                print(f"| | {mode} | {layout} | {ms:.4f} | {ms / copy_ms:.2f} |")
        report["cases"].append(jc)

    acc = accuracy(torch, F, ndi)
    report["accuracy"] = acc
    print("\nAgainst the exact cubic B-spline (scipy.ndimage.zoom order 3, reflect, grid_mode) on "
          f"a {acc['frame']}:")
    for mode in ("bicubic", "bilinear"):
        a = acc[mode]
        print(f"- torch {mode}: RMS {a['rms_vs_bspline']:.3e}, max {a['max_vs_bspline']:.3e}; "
              f"away from the edges RMS {a['rms_vs_bspline_inside']:.3e}, "
              f"max {a['max_vs_bspline_inside']:.3e}")
    print("- torch bicubic is a different kernel (Keys, a = -0.75): it is not the B-spline "
          "interpolant, so it differs from splinebench-cuda's cubic by about the RMS above.")

    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=2)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
