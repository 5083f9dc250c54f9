"""splinetool register (issue 16: the FFD registration as a command, as NiftyReg's reg_f3d).

  ssd       a synthetic 2-D image and a copy warped by a known smooth grid (splinetool warp):
            register --metric ssd brings the RMS difference down by over 80%, without folding;
            --warped equals `warp MOVING OUT` of the grid it wrote (the same evaluation), and the
            JSON's rms_after is that image's RMS difference from FIXED (numpy).
  nmi       the same with MOVING's contrast inverted: --metric nmi recovers the alignment (the
            inverted warped image within 30% of the original RMS), where --metric ssd cannot
            (its result at least twice as far).
  niftyreg  OUT as .nii.gz (a NiftyReg control-point grid for FIXED): `ffd` of it with
            --reference FIXED gives the field of the .npy grid of the same run within float32
            rounding of the positions.
  cuda      with a CUDA device: --backend cuda (tile-fma, per-voxel) recovers the same warp;
            without one it refuses (exit 1, naming CUDA) and says SKIP.
  errors    shapes that differ, several channels (exit 1, naming the file); OUT of another
            format, an unknown --metric, --bins out of range (exit 2); always one line on
            stderr and no OUT.

Usage: test_register_cli.py SPLINETOOL  (needs numpy)
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import Tool, Workdir, load  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def synthetic(n=96):
    """Smooth blobs and a soft-edged square in [0, 1]: structure at several scales."""
    y, x = np.mgrid[0:n, 0:n] / (n - 1.0)
    img = np.zeros((n, n))
    for cy, cx, s, a in ((0.3, 0.3, 0.08, 1.0), (0.7, 0.35, 0.12, 0.7), (0.45, 0.75, 0.06, 0.9),
                         (0.8, 0.8, 0.1, 0.5)):
        img += a * np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (2 * s * s))
    square = 1 / (1 + np.exp(-60 * (0.12 - np.maximum(np.abs(y - 0.5), np.abs(x - 0.55)))))
    img += 0.6 * square
    return (img - img.min()) / (img.max() - img.min())


def rms(a, b):
    return float(np.sqrt(np.mean((np.asarray(a, float) - np.asarray(b, float)) ** 2)))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test_register_cli.py SPLINETOOL")
    tool = Tool(sys.argv[1])
    w = Workdir()
    try:
        n, spacing = 96, 8
        fixed = synthetic(n)
        f = w.save("fixed.npy", fixed)
        # A known smooth deformation: a grid of displacements up to 3 voxels (a few control points
        # per axis, smooth random values), MOVING = FIXED warped by it.
        m = (n - 1) // spacing + 4
        rng = np.random.default_rng(16)
        grid = np.zeros((m, m, 2))
        coarse = rng.uniform(-3, 3, (4, 4, 2))
        for c in range(2):
            yy = np.linspace(0, 3, m)
            # bilinear upsampling of the 4x4 values: smooth at the grid's scale
            iy = np.clip(yy.astype(int), 0, 2)
            fy = yy - iy
            rows = coarse[iy, :, c] * (1 - fy)[:, None] + coarse[iy + 1, :, c] * fy[:, None]
            grid[:, :, c] = rows[:, iy] * (1 - fy)[None, :] + rows[:, iy + 1] * fy[None, :]
        g = w.save("true_grid.npy", grid)
        mov = w.path("moving.npy")
        tool.ok("warp", f, g, mov, "--spacing", spacing)
        moving = load(mov)

        # ---- ssd ----
        out, warped = w.path("grid.npy"), w.path("warped.npy")
        r = tool.ok("register", f, mov, out, "--metric", "ssd", "--spacing", spacing, "--levels",
                    2, "--warped", warped, "--json")
        j = json.loads(r.stdout)
        before, after = rms(moving, fixed), rms(load(warped), fixed)
        print("ssd: rms %.4f -> %.4f (%d iterations, %.2f s), det J %.3f..%.3f"
              % (before, after, j["iterations"], j["seconds"], j["det_jacobian_min"],
                 j["det_jacobian_max"]))
        check(after < 0.2 * before, "ssd: rms %.4f -> %.4f, not down by 80%%" % (before, after))
        check(j["folded"] == 0, "ssd: %d folded voxels" % j["folded"])
        check(abs(j["rms_before"] - before) < 1e-9 and abs(j["rms_after"] - after) < 1e-9,
              "ssd: the JSON's rms figures (%r, %r) are not the files' (%r, %r)"
              % (j["rms_before"], j["rms_after"], before, after))
        check(load(out).shape == (m, m, 2), "ssd: grid shape %s" % (load(out).shape,))
        again = w.path("again.npy")
        tool.ok("warp", mov, out, again, "--spacing", spacing)
        check(np.abs(load(again) - load(warped)).max() < 1e-12,
              "ssd: --warped differs from warp MOVING OUT")

        # ---- nmi, inverted contrast ----
        inv = w.save("inverted.npy", 1.0 - moving)
        res = {}
        for metric in ("nmi", "ssd"):
            wi = w.path("warped_%s.npy" % metric)
            tool.ok("register", f, inv, w.path("g_%s.npy" % metric), "--metric", metric,
                    "--spacing", spacing, "--levels", 2, "--warped", wi)
            res[metric] = rms(1.0 - load(wi), fixed)
        print("inverted MOVING: nmi rms %.4f, ssd rms %.4f (before %.4f)"
              % (res["nmi"], res["ssd"], before))
        check(res["nmi"] < 0.3 * before, "nmi on the inverted image: rms %.4f of %.4f"
              % (res["nmi"], before))
        check(res["ssd"] > 2 * res["nmi"], "ssd matched nmi on the inverted image (%.4f vs %.4f)"
              % (res["ssd"], res["nmi"]))

        # ---- NiftyReg output ----
        cpp = w.path("cpp.nii.gz")
        tool.ok("register", f, mov, cpp, "--metric", "ssd", "--spacing", spacing, "--levels", 2)
        f1, f2 = w.path("field_cpp.npy"), w.path("field_npy.npy")
        tool.ok("ffd", cpp, f1, "--reference", f)
        tool.ok("ffd", out, f2, "--shape", "%d,%d" % (n, n), "--spacing", spacing)
        d = float(np.abs(load(f1).astype(float) - load(f2).astype(float)).max())
        print("NiftyReg grid: field within %.3g voxel of the .npy grid's" % d)
        check(d < 1e-4, "NiftyReg output: the field differs by %.3g voxel" % d)

        # ---- errors ----
        def fails(args, status, words, out_path):
            if os.path.exists(out_path):
                os.remove(out_path)
            p = tool.run(*args)
            lines = [x for x in p.stderr.splitlines() if x.strip()]
            check(p.returncode == status, "%s: exit %d, expected %d (%s)"
                  % (args, p.returncode, status, p.stderr.strip()))
            check(len(lines) == 1 and lines[0].startswith("splinetool: "),
                  "%s: stderr %r is not one line" % (args, p.stderr))
            for word in words:
                check(word in p.stderr, "%s: %r does not say %r" % (args, p.stderr, word))
            check(not os.path.exists(out_path), "%s: OUT was written" % (args,))

        o = w.path("o.npy")
        small = w.save("small.npy", fixed[:64, :80])
        fails(["register", f, small, o], 1, ["small.npy", "differ in shape"], o)
        coffee = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets",
                              "coffee.png")
        fails(["register", f, coffee, o], 1, ["coffee.png", "3 channels"], o)
        fails(["register", f, mov, w.path("o.png")], 2, ["OUT", ".npy"], w.path("o.png"))
        fails(["register", f, mov, o, "--metric", "cc"], 2, ["--metric"], o)
        fails(["register", f, mov, o, "--bins", 4], 2, ["--bins"], o)
        info = json.loads(tool.ok("info", "--json").stdout)
        if not info.get("cuda_devices"):
            fails(["register", f, mov, o, "--backend", "cuda"], 1, ["CUDA"], o)
            print("SKIP --backend cuda: no CUDA device (%s)" % info.get("cuda_none_reason"))
        else:
            # The GPU objective (float) with each precise field kernel: the same recovery.
            for kernel in ("tile-fma", "per-voxel"):
                wg = w.path("warped_cuda.npy")
                r = tool.ok("register", f, mov, w.path("g_cuda.npy"), "--metric", "ssd",
                            "--spacing", spacing, "--levels", 2, "--backend", "cuda",
                            "--kernel", kernel, "--warped", wg, "--json")
                after_gpu = rms(load(wg), fixed)
                print("cuda %s: rms %.4f -> %.4f in %.2f s" % (kernel, before, after_gpu,
                                                              json.loads(r.stdout)["seconds"]))
                check(after_gpu < 0.2 * before, "cuda %s: rms %.4f -> %.4f" % (kernel, before,
                                                                               after_gpu))
    finally:
        w.close()
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("all register checks passed")


if __name__ == "__main__":
    main()
