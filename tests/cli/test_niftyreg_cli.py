"""splinetool ffd and warp with NiftyReg control-point grids (issue 16 part 1), nibabel writing.

nibabel (Debian's python3-nibabel) writes every input: the reference images and the grids,
laid out as NiftyReg's reg_f3d writes its -cpp output (a 5-D vector image (M_x, M_y, M_z, 1, R)
of world positions, intent 'vector' named NREG_TRANS with intent_p1 = 2, the grid's affine the
reference's scaled by the spacing with its origin one spacing before voxel 0). The positions
come from a known world map p(w) = B w + e; cubic B-splines reproduce linear maps, so

  ffd      the field of `ffd GRID OUT --reference REF --double` must equal the voxel
           displacement L^-1 (B w + e - w), w = A x, at every voxel of REF (solved here with
           numpy) within 1e-9 voxel: an oblique, flipped, anisotropic 3-D reference (NIfTI-1,
           .nii and .nii.gz, float32 and float64 positions, NIfTI-2), a rotated 2-D one, and the
           bundled MRI (NRRD in LPS space: a reference in another format and world convention);
  warp     the MRI warped by a grid of a constant world translation equals scipy.ndimage.shift
           by the voxel shift L^-1 t (away from the borders, 1e-4 of the range, as cli_ffd);
  errors   no --reference (exit 2), a --spacing that conflicts (exit 2; a matching one is
           accepted), a spacing of 4.17 voxels, rotated grid axes, two components for a 3-D
           reference, a velocity grid, warp --reference with a .npy grid (exit 2), MOVING not on
           the reference's grid (exit 1); one line on stderr, no OUT.

Usage: test_niftyreg_cli.py SPLINETOOL  (exit 77 without nibabel or scipy)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import Tool, Workdir  # noqa: E402

try:
    import nibabel as nib
    import scipy.ndimage as ndi
except ImportError as e:  # pragma: no cover
    print("nibabel or scipy not available (%s): skipping" % e)
    sys.exit(77)

ASSET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets",
                     "mri_t1_head.nrrd")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def rotation(ax, ay, az):
    cx, sx, cy, sy, cz, sz = np.cos(ax), np.sin(ax), np.cos(ay), np.sin(ay), np.cos(az), np.sin(az)
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rz @ ry @ rx


def save_reference(wd, name, shape_ijk, affine):
    """A reference image (its values do not matter); returns its affine as nibabel reads it
    back (float32 in the header), the one both splinetool and the expectation use."""
    p = wd.path(name)
    nib.save(nib.Nifti1Image(np.ones(shape_ijk, np.float32), affine), p)
    return p, nib.load(p).affine


def grid_affine(A, delta, r):
    """The grid's affine as reg_f3d sets it: A scaled by delta, origin at voxel -delta."""
    S = np.eye(4)
    for a in range(r):
        S[a, a] = delta[a]
        S[a, 3] = -delta[a]
    return A @ S


def positions(A, delta, M, B, e):
    """World positions (M_x, M_y, M_z, 1, R) of the control points under p(w) = B w + e."""
    r = len(delta)
    q = np.stack(np.meshgrid(*[np.arange(m) for m in M], indexing="ij"), -1).astype(float)
    x = (q - 1.0) * np.array(delta, float)
    w = x @ A[:r, :r].T + A[:r, 3]
    P = w @ B.T + e
    if r == 2:
        P = P[:, :, None, :]
    return P[:, :, :, None, :]


def save_grid(wd, name, A, delta, M, B, e, dtype=np.float64, cls=None, intent_p1=2.0,
              affine=None, data=None):
    r = len(delta)
    P = positions(A, delta, M, B, e).astype(dtype) if data is None else data
    img = (cls or nib.Nifti1Image)(P, grid_affine(A, delta, r) if affine is None else affine)
    img.header.set_intent("vector", (), name="NREG_TRANS")
    img.header["intent_p1"] = intent_p1
    img.header["descrip"] = b"Control point position from NiftyReg (reg_f3d)"
    p = wd.path(name)
    nib.save(img, p)
    return p


def expected_field(A, shape_ijk, B, e):
    """u(x) = L^-1 (B w + e - w), w = A x, at every voxel, in array order (z, y, x) with the
    components (z, y, x) as splinetool writes them."""
    r = len(shape_ijk)
    q = np.stack(np.meshgrid(*[np.arange(n) for n in shape_ijk], indexing="ij"), -1).astype(float)
    L = A[:r, :r]
    w = q @ L.T + A[:r, 3]
    y = w @ B.T + e - w
    u = np.linalg.solve(L, y.reshape(-1, r).T).T.reshape(q.shape)
    return np.ascontiguousarray(np.transpose(u, tuple(range(r))[::-1] + (r,))[..., ::-1])


def min_extents(shape_ijk, delta):
    # NiftyReg's: ceil(N * voxel / spacing + 3) = ceil(N / delta) + 3.
    return tuple(-(-n // d) + 3 for n, d in zip(shape_ijk, delta))


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


def oblique(rng):
    """A 3-D reference: rotated, k flipped, voxels 0.8 x 1.3 x 2.5 mm; a map near identity."""
    L = rotation(0.3, -0.2, 0.5) @ np.diag([0.8, 1.3, -2.5])
    A = np.eye(4)
    A[:3, :3], A[:3, 3] = L, (-40.3, 12.7, 30.1)
    B = np.eye(3) + rng.uniform(-0.03, 0.03, (3, 3))
    e = np.array([1.5, -2.25, 0.75])
    return A, B, e


def test_ffd(tool, wd, rng):
    shape_ijk, delta = (13, 11, 9), (3, 2, 4)
    A0, B, e = oblique(rng)
    ref, A = save_reference(wd, "ref.nii", shape_ijk, A0)
    M = min_extents(shape_ijk, delta)
    want = expected_field(A, shape_ijk, B, e)
    cases = [("cpp.nii", {}), ("cpp.nii.gz", {}), ("cpp2.nii", {"cls": nib.Nifti2Image}),
             ("cpp_f32.nii", {"dtype": np.float32})]
    for name, kw in cases:
        g = save_grid(wd, name, A, delta, M, B, e, **kw)
        out = wd.path(name + ".npy")
        tool.ok("ffd", g, out, "--reference", ref, "--double")
        u = np.load(out)
        err = np.max(np.abs(u - want)) if u.shape == want.shape else np.inf
        # float32 positions: |P| 2^-24 per component through L^-1 (rows <= 1/0.8 mm long).
        bound = 1e-9 if "dtype" not in kw else \
            np.abs(positions(A, delta, M, B, e)).max() * 2.0 ** -24 * np.sqrt(3) / 0.8
        check(err <= bound, "ffd %s: the known field within %.3g voxel, got %.3g" %
              (name, bound, err))
        print("ffd %s (oblique 3-D): max |u - expected| = %.3g voxel" % (name, err))

    # A matching --spacing (array order) is accepted; --json reports the file's spacing.
    r = tool.ok("ffd", wd.path("cpp.nii"), wd.path("s.npy"), "--reference", ref,
                "--spacing", "4,2,3", "--json")
    check('"spacing": [\n    4,\n    2,\n    3\n  ]' in r.stdout, "ffd --json spacing: %s" %
          r.stdout)

    # 2-D: a reference rotated by 30 degrees in world x-y, its j axis flipped.
    t = np.deg2rad(30)
    A2 = np.eye(4)
    A2[:2, :2] = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) @ np.diag([0.7, -1.1])
    A2[:2, 3] = (5.5, -7.0)
    ref2, A2 = save_reference(wd, "ref2.nii", (14, 10), A2)
    d2 = (5, 3)
    B2, e2 = np.array([[1.02, -0.015], [0.01, 0.98]]), np.array([-0.8, 1.25])
    g2 = save_grid(wd, "cpp2d.nii", A2, d2, min_extents((14, 10), d2), B2, e2)
    tool.ok("ffd", g2, wd.path("f2.npy"), "--reference", ref2, "--double")
    u2 = np.load(wd.path("f2.npy"))
    want2 = expected_field(A2, (14, 10), B2, e2)
    err = np.max(np.abs(u2 - want2)) if u2.shape == want2.shape else np.inf
    check(err <= 1e-9, "ffd 2-D: the known field, %.3g" % err)
    print("ffd cpp2d.nii (rotated 2-D): max |u - expected| = %.3g voxel" % err)
    return ref, A, M, B, e


def mri_affine_ras():
    """The bundled MRI's voxel-to-world affine in RAS+ from its NRRD header (LPS+ space)."""
    head = open(ASSET, "rb").read().split(b"\n\n", 1)[0].decode()
    fields = dict(line.split(": ", 1) for line in head.splitlines()[1:] if ": " in line)
    dirs = [[float(v) for v in d.strip("()").split(",")]
            for d in fields["space directions"].split()]
    origin = [float(v) for v in fields["space origin"].strip("()").split(",")]
    A = np.eye(4)
    A[:3, :3] = np.array(dirs).T
    A[:3, 3] = origin
    A[:2, :] *= -1  # LPS -> RAS
    A[3, 3] = 1
    sizes = tuple(int(s) for s in fields["sizes"].split())
    return A, sizes


def read_mri():
    import gzip
    raw = open(ASSET, "rb").read()
    _, _, data = raw.partition(b"\n\n")
    A, sizes = mri_affine_ras()
    return np.frombuffer(gzip.decompress(data), np.uint8).reshape(sizes[::-1]).astype(float)


def test_warp(tool, wd):
    A, sizes = mri_affine_ras()
    img = read_mri()
    span = img.max() - img.min()
    delta = (5, 5, 5)
    M = min_extents(sizes, delta)
    t = np.array([1.5, -3.0, 4.0])  # a world translation, mm
    g = save_grid(wd, "mri_cpp.nii.gz", A, delta, M, np.eye(3), t)
    u_ijk = np.linalg.solve(A[:3, :3], t)
    u = u_ijk[::-1]  # array order (z, y, x)
    tool.ok("ffd", g, wd.path("mri_f.npy"), "--reference", ASSET, "--double")
    f = np.load(wd.path("mri_f.npy"))
    err = np.max(np.abs(f - u))
    check(f.shape == img.shape + (3,) and err <= 1e-9,
          "ffd with the NRRD MRI as reference: the constant voxel shift %s, %.3g" % (u, err))
    print("ffd mri_cpp.nii.gz (NRRD LPS reference): shift %s voxels, max error %.3g" % (u, err))

    out = wd.path("mri_w.npy")
    tool.ok("warp", ASSET, g, out, "--reference", ASSET)
    w = np.load(out)
    inner = (slice(6, -6), slice(6, -6), slice(6, -6))
    ref = ndi.shift(img, -u, order=3, mode="reflect")
    err = np.max(np.abs(w[inner] - ref[inner]))
    check(err <= 1e-4 * span, "warp with the NiftyReg grid: scipy.ndimage.shift by %s within "
          "1e-4 of the range, %.3g" % (-u, err))
    print("warp mri by the NiftyReg grid: %.3g of the range from scipy.ndimage.shift" % (err / span))
    return g


def test_errors(tool, wd, ref, A, M, B, e, mri_grid):
    g = wd.path("cpp.nii")
    outs = ["e.npy"]
    r = tool.run("ffd", g, wd.path("e.npy"), "--shape", "9,11,13")
    one_line_error(r, 2, "no --reference", wd, outs, ["--reference", "cpp.nii"])
    r = tool.run("warp", ref, g, wd.path("e.npy"))
    one_line_error(r, 2, "warp without --reference", wd, outs, ["--reference"])
    r = tool.run("ffd", g, wd.path("e.npy"), "--reference", ref, "--spacing", "4")
    one_line_error(r, 2, "conflicting --spacing", wd, outs, ["--spacing 4 conflicts", "4,2,3"])

    # 5 mm spacing on 1.2 mm voxels along x.
    shape_ijk = (13, 11, 9)
    A12 = np.diag([1.2, 1.0, 2.0, 1.0])
    ref12, A12 = save_reference(wd, "ref12.nii", shape_ijk, A12)
    aff = grid_affine(A12, (3, 2, 4), 3)
    aff[:3, 0] *= (5.0 / 1.2) / 3.0
    bad = save_grid(wd, "ratio.nii", A12, (3, 2, 4), M, np.eye(3), np.zeros(3), affine=aff)
    r = tool.run("ffd", bad, wd.path("e.npy"), "--reference", ref12)
    one_line_error(r, 1, "spacing ratio", wd, outs,
                   ["ratio.nii", "spacing along x (i, dim[1]) is 4.1666", "whole number"])

    # Grid axes rotated by 90 degrees about k.
    aff = grid_affine(A, (3, 2, 4), 3)
    aff[:3, [0, 1]] = aff[:3, [1, 0]] * np.array([3.0 / 2.0, -2.0 / 3.0])
    rot = save_grid(wd, "rot.nii", A, (3, 2, 4), M, B, e, affine=aff)
    r = tool.run("ffd", rot, wd.path("e.npy"), "--reference", ref)
    one_line_error(r, 1, "rotated grid", wd, outs, ["orientation mismatch"])

    # Two components for a 3-D reference; a velocity grid.
    P = positions(A, (3, 2, 4), M, B, e)[..., :2]
    two = save_grid(wd, "two.nii", A, (3, 2, 4), M, B, e, data=P)
    r = tool.run("ffd", two, wd.path("e.npy"), "--reference", ref)
    one_line_error(r, 1, "dim[5] = 2", wd, outs, ["has 2 components (dim[5])"])
    vel = save_grid(wd, "vel.nii", A, (3, 2, 4), M, B, e, intent_p1=5.0)
    r = tool.run("ffd", vel, wd.path("e.npy"), "--reference", ref)
    one_line_error(r, 1, "velocity grid", wd, outs, ["stationary velocity grid"])

    # warp: --reference with the project's own grid; MOVING off the reference's grid.
    npy = wd.save("own.npy", np.zeros((7, 7, 7, 3)))
    r = tool.run("warp", ref, npy, wd.path("e.npy"), "--spacing", "3", "--reference", ref)
    one_line_error(r, 2, "warp --reference with a .npy grid", wd, outs, ["--reference"])
    r = tool.run("warp", ref, mri_grid, wd.path("e.npy"), "--reference", ASSET)
    one_line_error(r, 1, "MOVING not on the reference", wd, outs,
                   ["MOVING", "resample MOVING onto the reference first"])
    moved = wd.path("moved.nii")
    aff = A.copy()
    aff[:3, 3] += 0.5 * aff[:3, 0]
    nib.save(nib.Nifti1Image(np.ones((13, 11, 9), np.float32), aff), moved)
    r = tool.run("warp", moved, g, wd.path("e.npy"), "--reference", ref)
    one_line_error(r, 1, "MOVING shifted by half a voxel", wd, outs,
                   ["does not lie on the voxel grid", "0.5"])


def main():
    tool = Tool(sys.argv[1])
    wd = Workdir()
    rng = np.random.default_rng(16)
    try:
        ref, A, M, B, e = test_ffd(tool, wd, rng)
        mri_grid = test_warp(tool, wd)
        test_errors(tool, wd, ref, A, M, B, e, mri_grid)
    finally:
        wd.close()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all NiftyReg grid checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
