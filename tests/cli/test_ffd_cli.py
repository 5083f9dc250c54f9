"""splinetool ffd and warp (issue 16 part 3) against numpy and scipy.

  ffd     the dense field of random control grids (2-D and 3-D, several spacings, --shape and
          --reference) against a numpy reimplementation of the convention (cubic B-spline
          beta3, control point j at (j - 1) * delta, tensor product) at every voxel: float32
          within 1e-5, --double within 1e-12; --jacobian against the analytic numpy Jacobian
          (1e-5) and against central finite differences of the field (interior, 2e-2).
  warp    the bundled MRI (assets/mri_t1_head.nrrd) with a zero grid equals the input and keeps
          its NRRD header fields (space, directions, origin, sizes, kinds); a constant shift
          grid (0, 2, -3) equals scipy.ndimage.shift(order=3) within 1e-4 of the range away from
          the borders for several modes; channels; --json (det J figures, folded count);
          --backend cuda against the CPU within a derived float bound (skipped, with the
          reason, without a CUDA device; its refusals are checked either way).
  errors  grid too small (names the axis, the count and the minimum), wrong component count,
          non-finite values, rank mismatch (exit 1); --spacing missing or < 1, --shape with
          --reference (exit 2); always one line on stderr and no OUT.

Usage: test_ffd_cli.py SPLINETOOL  (needs numpy and scipy; exit 77 without scipy)
"""
import gzip
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import Tool, Workdir  # noqa: E402

try:
    import scipy.ndimage as ndi
except ImportError:  # pragma: no cover
    print("scipy not available: skipping")
    sys.exit(77)

ASSET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets",
                     "mri_t1_head.nrrd")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def beta3(t):
    a = np.abs(t)
    return np.where(a < 1, 2.0 / 3.0 - a * a + a ** 3 / 2.0,
                    np.where(a < 2, (2.0 - a) ** 3 / 6.0, 0.0))


def dbeta3(t):
    a = np.abs(t)
    return np.where(a < 1, -2.0 * t + 1.5 * t * a,
                    np.where(a < 2, -np.sign(t) * (2.0 - a) ** 2 / 2.0, 0.0))


def weights(n, m, delta, deriv=False):
    """W[x, j] = beta3(x / delta - j + 1) (or its derivative in voxel units), x < n, j < m."""
    t = np.arange(n)[:, None] / delta - np.arange(m)[None, :] + 1.0
    return dbeta3(t) / delta if deriv else beta3(t)


def field_numpy(grid, delta, shape, deriv_axis=None):
    """u (or du/dx_deriv_axis) at every voxel, shape (N..., R). The tensor product one axis at
    a time (optimize=True): without it einsum loops over every voxel and control point at once,
    78 s for the 62x128x128 field of --reference, against 0.1 s (the same sums, to 2e-15)."""
    r = len(shape)
    ws = [weights(shape[a], grid.shape[a], delta[a], deriv_axis == a) for a in range(r)]
    if r == 3:
        return np.einsum("zi,yj,xk,ijkc->zyxc", ws[0], ws[1], ws[2], grid, optimize=True)
    return np.einsum("yi,xj,ijc->yxc", ws[0], ws[1], grid, optimize=True)


def det_numpy(grid, delta, shape):
    r = len(shape)
    d = [field_numpy(grid, delta, shape, b) for b in range(r)]  # d[b][..., a] = du_a/dx_b
    J = np.stack([np.stack([d[b][..., a] + (a == b) for b in range(r)], -1) for a in range(r)], -2)
    return np.linalg.det(J)


def min_points(shape, delta):
    return tuple((n - 1) // d + 4 for n, d in zip(shape, delta))


def read_nrrd(path):
    """(header dict, values) of an NRRD with gzip or raw encoding, attached data."""
    raw = open(path, "rb").read()
    head, _, data = raw.partition(b"\n\n")
    fields = {}
    for line in head.decode().splitlines()[1:]:
        if line.startswith("#") or ":" not in line:
            continue
        k, _, v = line.partition(":")
        fields[k.strip()] = v.strip().lstrip("=").strip()
    if fields.get("encoding") == "gzip":
        data = gzip.decompress(data)
    types = {"uchar": "u1", "unsigned char": "u1", "double": "f8", "float": "f4",
             "short": "i2", "ushort": "u2"}
    dt = np.dtype(types[fields["type"]]).newbyteorder("<")
    sizes = [int(s) for s in fields["sizes"].split()]
    return fields, np.frombuffer(data, dt).reshape(sizes[::-1])


def one_line_error(r, code, what, wd, out_names, needles=()):
    lines = r.stderr.strip().splitlines()
    check(r.returncode == code, "%s: exit %d, expected %d (%s)" % (what, r.returncode, code,
                                                                   r.stderr.strip()))
    check(len(lines) == 1 and lines[0].startswith("splinetool: "),
          "%s: one line on stderr, got %r" % (what, r.stderr))
    for n in needles:
        check(n in r.stderr, "%s: message names %r: %s" % (what, n, r.stderr.strip()))
    for o in out_names:
        check(not os.path.exists(wd.path(o)), "%s: %s was created" % (what, o))


def test_ffd(tool, wd, rng):
    cases = [((20, 31), (4, 5)), ((37, 23), (3, 3)), ((13, 17, 19), (4, 5, 3)),
             ((9, 22, 15), (2, 6, 7))]
    for k, (shape, delta) in enumerate(cases):
        m = tuple(p + (k % 2) for p in min_points(shape, delta))
        grid = rng.uniform(-3, 3, m + (len(shape),))
        g = wd.save("grid%d.npy" % k, grid)
        sp = ",".join(str(d) for d in delta)
        tool.ok("ffd", g, wd.path("f%d.npy" % k), "--shape", ",".join(map(str, shape)),
                "--spacing", sp, "--jacobian", wd.path("j%d.npy" % k))
        ref = field_numpy(grid, delta, shape)
        f = np.load(wd.path("f%d.npy" % k))
        check(f.dtype == np.float32 and f.shape == shape + (len(shape),),
              "ffd case %d: float32 of shape %s, got %s %s" % (k, shape, f.dtype, f.shape))
        err32 = err = np.max(np.abs(f - ref))
        check(err <= 1e-5, "ffd case %d: float32 field within 1e-5 of numpy, %.3g" % (k, err))
        j = np.load(wd.path("j%d.npy" % k))
        dref = det_numpy(grid, delta, shape)
        jerr = np.max(np.abs(j - dref))
        check(jerr <= 1e-5, "ffd case %d: det J within 1e-5 of numpy's, %.3g" % (k, jerr))
        tool.ok("ffd", g, wd.path("d%d.npy" % k), "--shape", ",".join(map(str, shape)),
                "--spacing", sp, "--double", "--jacobian", wd.path("jd%d.npy" % k))
        fd = np.load(wd.path("d%d.npy" % k))
        err = np.max(np.abs(fd - ref))
        check(fd.dtype == np.float64 and err <= 1e-12,
              "ffd case %d: --double within 1e-12, %s %.3g" % (k, fd.dtype, err))
        jd = np.load(wd.path("jd%d.npy" % k))
        check(np.max(np.abs(jd - dref)) <= 1e-10, "ffd case %d: --double det J" % k)
        print("ffd %s delta %s: float32 field %.2e, det J %.2e" % (shape, delta, err32, jerr))

    # --jacobian against central finite differences of the (double) field, inside (edges are
    # one-sided). A central difference is off by h^2 |u'''| / 6 per entry, and
    # |u'''| <= 8 max|c| / delta^3 (beta3''' is +-1, +-3 on its four tiles), so a smooth grid
    # (max|c| 0.5, spacing 5..7) keeps that below 0.006 per entry; det J has 6 products of three
    # entries, so it is off by at most 6 e (1 + g + e)^2 with g the largest gradient entry.
    shape, delta, amp = (31, 40, 36), (5, 6, 7), 0.5
    grid = rng.uniform(-amp, amp, min_points(shape, delta) + (3,))
    g = wd.save("smooth.npy", grid)
    tool.ok("ffd", g, wd.path("fs.npy"), "--shape", ",".join(map(str, shape)), "--spacing",
            "5,6,7", "--double", "--jacobian", wd.path("js.npy"))
    fd, jd = np.load(wd.path("fs.npy")), np.load(wd.path("js.npy"))
    grads = [np.gradient(fd[..., a]) for a in range(3)]  # grads[a][b] = du_a/dx_b
    J = np.stack([np.stack([grads[a][b] + (a == b) for b in range(3)], -1) for a in range(3)], -2)
    inner = (slice(1, -1),) * 3
    ferr = np.max(np.abs(np.linalg.det(J)[inner] - jd[inner]))
    e = 8 * amp / min(delta) ** 3 / 6
    gmax = max(np.max(np.abs(gr)) for ga in grads for gr in ga)
    bound = 6 * e * (1 + gmax + e) ** 2
    check(ferr <= bound, "ffd --jacobian within %.3g of finite differences, %.3g" % (bound, ferr))
    print("ffd --jacobian against finite differences: %.3g (bound %.3g)" % (ferr, bound))

    # --spacing D for every axis, and --reference (shape and geometry from the image).
    shape = (62, 128, 128)
    grid = rng.uniform(-2, 2, min_points(shape, (8, 8, 8)) + (3,))
    g = wd.save("gref.npy", grid)
    r = tool.ok("ffd", g, wd.path("fref.nrrd"), "--reference", ASSET, "--spacing", "8",
                "--json")
    rep = json.loads(r.stdout)
    check(rep["shape"] == list(shape) and rep["spacing"] == [8, 8, 8],
          "ffd --reference: shape and spacing in JSON, %s" % rep)
    hdr, vals = read_nrrd(wd.path("fref.nrrd"))
    ahdr, _ = read_nrrd(ASSET)
    # The component axis comes first in NRRD, with direction "none".
    hdr["space directions"] = hdr.get("space directions", "").replace("none ", "", 1)
    for key in ("space", "space directions", "space origin"):
        check(hdr.get(key) == ahdr.get(key),
              "ffd --reference keeps %s: %r vs %r" % (key, hdr.get(key), ahdr.get(key)))
    err = np.max(np.abs(vals - field_numpy(grid, (8, 8, 8), shape)))
    check(vals.shape == shape + (3,) and err <= 1e-5,
          "ffd --reference .nrrd: the field, %s %.3g" % (vals.shape, err))


def test_warp(tool, wd, rng):
    ahdr, img = read_nrrd(ASSET)
    img = img.astype(np.float64)
    shape = img.shape
    span = img.max() - img.min()
    zero = wd.save("zero.npy", np.zeros(min_points(shape, (6, 6, 6)) + (3,)))
    r = tool.ok("warp", ASSET, zero, wd.path("w0.nrrd"), "--spacing", "6", "--json")
    hdr, w0 = read_nrrd(wd.path("w0.nrrd"))
    err = np.max(np.abs(w0 - img))
    check(err <= 1e-9 * span, "warp zero grid: the input, %.3g" % err)
    for key in ("dimension", "sizes", "space", "space directions", "space origin", "kinds"):
        check(hdr.get(key) == ahdr.get(key),
              "warp keeps the header's %s: %r vs %r" % (key, hdr.get(key), ahdr.get(key)))
    rep = json.loads(r.stdout)
    check(rep["det_jacobian_min"] == 1.0 and rep["det_jacobian_max"] == 1.0 and
          rep["folded"] == 0 and rep["seconds"] > 0 and rep["voxels"] == img.size,
          "warp --json of the zero grid: %s" % rep)
    print("warp zero grid: max |out - in| %.3g (range %g), %.2f s" % (err, span, rep["seconds"]))

    # A constant shift (0, 2, -3): scipy.ndimage.shift by (0, -2, 3) (output i takes i - s).
    const = np.zeros(min_points(shape, (5, 5, 5)) + (3,))
    const[..., 1], const[..., 2] = 2.0, -3.0
    cg = wd.save("const.npy", const)
    inner = (slice(None), slice(6, -6), slice(6, -6))
    for ours, theirs in (("reflect", "reflect"), ("mirror", "mirror"), ("nearest", "nearest"),
                         ("constant", "constant")):
        out = wd.path("ws_%s.npy" % ours)
        tool.ok("warp", ASSET, cg, out, "--spacing", "5", "--mode", ours, "--precision",
                "single")
        w = np.load(out)
        ref = ndi.shift(img, (0, -2, 3), order=3, mode=theirs)
        err = np.max(np.abs(w[inner] - ref[inner]))
        check(w.dtype == np.float32 and err <= 1e-4 * span,
              "warp shift (%s): scipy.ndimage.shift within 1e-4 of the range, %.3g" % (ours, err))
        print("warp constant shift, mode %s: %.3g of the range" % (ours, err / span))
    out = wd.path("ws_lin.npy")
    tool.ok("warp", ASSET, cg, out, "--spacing", "5", "--method", "linear")
    err = np.max(np.abs(np.load(out)[inner] - ndi.shift(img, (0, -2, 3), order=1)[inner]))
    check(err <= 1e-9 * span, "warp shift (linear): scipy order 1, %.3g" % err)

    # A smooth random grid: --jacobian equals ffd's, and the JSON counts its folds.
    grid = rng.uniform(-4, 4, min_points(shape, (6, 6, 6)) + (3,))
    g = wd.save("rand.npy", grid)
    r = tool.ok("warp", ASSET, g, wd.path("wr.npy"), "--spacing", "6", "--jacobian",
                wd.path("wr_j.npy"), "--json")
    rep = json.loads(r.stdout)
    jd = np.load(wd.path("wr_j.npy"))
    check(jd.shape == shape and rep["folded"] == int(np.sum(jd <= 0)) and
          abs(rep["det_jacobian_min"] - jd.min()) < 1e-12,
          "warp --jacobian and --json agree: %s" % {k: rep[k] for k in
                                                    ("folded", "det_jacobian_min")})

    # 2-D with channels: a zero grid gives the input back, channel axis kept.
    rgb = rng.uniform(0, 1, (21, 34, 3))
    m = wd.save("rgb.npy", rgb)
    z2 = wd.save("zero2.npy", np.zeros(min_points((21, 34), (4, 4)) + (2,)))
    tool.ok("warp", m, z2, wd.path("rgb_w.npy"), "--spacing", "4", "--channels")
    w = np.load(wd.path("rgb_w.npy"))
    check(w.shape == rgb.shape and np.max(np.abs(w - rgb)) <= 1e-14,
          "warp 2-D with channels: the input, %s" % (w.shape,))


def cuda_devices(tool):
    """(devices, reason): what `splinetool info --json` says about CUDA."""
    j = json.loads(tool.ok("info", "--json").stdout)
    return j.get("cuda_devices", []), j.get("cuda_none_reason", "")


def test_warp_cuda(tool, wd, rng):
    """--backend cuda against --backend cpu (double) on the MRI head with a random grid, within
    sum_a D_a du + 8.5 eps max|c| (D_a: the largest difference of neighbouring coefficients along
    a; du: the field kernel's bound, 8.5 eps max|grid| for tile-fma, + 6/256 max|grid| for the
    texture; 8.5 eps: the CUDA prefilter's 8 ulp and the float32 output). Without a device: one
    clear line, exit 1, no OUT (the rest is skipped, with the reason)."""
    _, img = read_nrrd(ASSET)
    img = img.astype(np.float32).astype(np.float64)
    grid = rng.uniform(-3, 3, min_points(img.shape, (5, 6, 7)) + (3,)).astype(np.float32)
    g = wd.save("cuda_grid.npy", grid)
    for bad, code, needle in ((["--precision", "double"], 2, "single precision"),
                              (["--kernel", "bogus"], 2, "--kernel")):
        r = tool.run("warp", ASSET, g, wd.path("wc_bad.npy"), "--spacing", "5,6,7", "--backend",
                     "cuda", *bad)
        one_line_error(r, code, "warp --backend cuda %s" % " ".join(bad), wd, ["wc_bad.npy"],
                       [needle])
    devices, reason = cuda_devices(tool)
    if not devices:
        r = tool.run("warp", ASSET, g, wd.path("wc.npy"), "--spacing", "5,6,7", "--backend",
                     "cuda")
        one_line_error(r, 1, "warp --backend cuda without a device", wd, ["wc.npy"], ["CUDA"])
        print("SKIP: warp --backend cuda against the CPU: no CUDA device (%s)" % reason)
        return
    ref_path = wd.path("wc_cpu.npy")
    tool.ok("warp", ASSET, g, ref_path, "--spacing", "5,6,7", "--precision", "double")
    ref = np.load(ref_path)
    coef = ndi.spline_filter(img, order=3, mode="grid-mirror")
    D = [max(np.max(np.abs(np.diff(coef, axis=a))),
             np.max(np.abs(np.take(coef, 0, axis=a) - np.take(coef, -1, axis=a))))
         for a in range(3)]
    eps = float(np.finfo(np.float32).eps)
    maxg = float(np.max(np.abs(grid)))
    for kernel, extra in (("tile-fma", 0.0), ("per-voxel", 0.0), ("texture", 6.0 / 256)):
        out = wd.path("wc_%s.npy" % kernel)
        r = tool.ok("warp", ASSET, g, out, "--spacing", "5,6,7", "--backend", "cuda", "--kernel",
                    kernel, "--json")
        rep = json.loads(r.stdout)
        w = np.load(out)
        du = 8.5 * eps * maxg + extra * maxg
        bound = sum(D) * du + 8.5 * eps * np.max(np.abs(coef))
        err = np.max(np.abs(w.astype(np.float64) - ref))
        check(w.dtype == np.float32 and w.shape == img.shape and rep["backend"] == "cuda" and
              rep["kernel"] == kernel and rep["precision"] == "single",
              "warp --backend cuda --kernel %s: float32 of the input's shape, JSON %s" %
              (kernel, {k: rep.get(k) for k in ("backend", "kernel", "precision")}))
        check(err <= bound, "warp --backend cuda --kernel %s within %.3g of the CPU, got %.3g" %
              (kernel, bound, err))
        print("warp --backend cuda --kernel %s: max |cuda - cpu| %.3g (bound %.3g), %.3f s" %
              (kernel, err, bound, rep["seconds"]))


def test_errors(tool, wd):
    small = wd.save("small.npy", np.zeros((12, 16, 16, 3)))
    two = wd.save("two.npy", np.zeros((16, 30, 30, 2)))
    bad = np.zeros((16, 30, 30, 3))
    bad[3, 4, 5, 1] = np.nan
    nan = wd.save("nan.npy", bad)
    flat = wd.save("flat.npy", np.zeros((20, 30, 2)))
    ok = wd.save("ok.npy", np.zeros((16, 30, 30, 3)))
    cases = [
        (["warp", ASSET, small, "o.nrrd", "--spacing", "5"], 1, "grid too small",
         ["axis z", "12 control points", "at least 16"]),
        (["ffd", small, "o.npy", "--shape", "40,60,60", "--spacing", "4"], 1, "ffd grid too small",
         ["axis z", "12 control points", "at least 13"]),
        (["warp", ASSET, two, "o.nrrd", "--spacing", "5"], 1, "components",
         ["3 displacement components", "got 2"]),
        (["warp", ASSET, nan, "o.nrrd", "--spacing", "5"], 1, "non-finite",
         ["non-finite", "(3, 4, 5)"]),
        (["warp", ASSET, flat, "o.nrrd", "--spacing", "5"], 1, "rank mismatch", ["2-D", "3-D"]),
        (["warp", ASSET, ok, "o.nrrd"], 2, "spacing missing", ["--spacing"]),
        (["warp", ASSET, ok, "o.nrrd", "--spacing", "0"], 2, "spacing 0", ["--spacing"]),
        (["ffd", ok, "o.npy", "--shape", "62,128,128", "--spacing", "5,5"], 2, "spacing count",
         ["--spacing"]),
        (["ffd", ok, "o.npy", "--shape", "62,128,128", "--reference", ASSET, "--spacing", "5"], 2,
         "shape and reference", []),
        (["ffd", ok, "o.nii", "--shape", "62,128,128", "--spacing", "5"], 2, "field as NIfTI",
         ["OUT must end in"]),
        (["warp", ASSET, ok, ok, "--spacing", "5"], 2, "OUT is GRID", ["same file"]),
    ]
    for args, code, what, needles in cases:
        args = [wd.path(a) if a in ("o.nrrd", "o.npy", "o.nii") else a for a in args]
        r = tool.run(*args)
        one_line_error(r, code, what, wd, ["o.nrrd", "o.npy", "o.nii"], needles)
    check(os.path.exists(ok) and np.load(ok).shape == (16, 30, 30, 3), "GRID left as it was")


def main():
    tool = Tool(sys.argv[1])
    wd = Workdir()
    rng = np.random.default_rng()
    try:
        test_ffd(tool, wd, rng)
        test_warp(tool, wd, rng)
        test_warp_cuda(tool, wd, rng)
        test_errors(tool, wd)
    finally:
        wd.close()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all ffd/warp CLI checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
