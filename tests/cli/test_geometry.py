#!/usr/bin/env python3
"""Geometry of NIfTI and NRRD files against nibabel (Debian's python3-nibabel): what
`splinetool info FILE --json` reports (dims, dtype, spacing, the RAS+ affine, the orientation
code of nibabel.aff2axcodes) and what the writers keep.

Usage: test_geometry.py PATH/TO/splinetool     (exit 77, a skip, when nibabel is missing)

The index-to-world affine maps (i, j, k) = (x, y, z) index, nibabel's voxel order, to RAS+ mm;
splinetool's arrays are (z, y, x), so nibabel's data is transposed for value comparisons.
"""
import json
import os
import sys
import unittest

import numpy as np

from cli_util import Tool, Workdir, load

try:
    import nibabel as nib
    from nibabel.orientations import aff2axcodes
except ImportError:
    print("python3-nibabel is not installed: skipping the geometry oracle")
    sys.exit(77)

TOOL = None  # set in __main__
F32 = 2e-6  # NIfTI-1 stores the affine in float32: relative agreement to this


def zyx(a):
    """nibabel (x, y, z) data -> our (z, y, x) array order."""
    return np.ascontiguousarray(np.transpose(a, tuple(range(a.ndim))[::-1]))


def rot(axis, deg):
    t = np.radians(deg)
    c, s = np.cos(t), np.sin(t)
    m = np.eye(3)
    a, b = [(1, 2), (0, 2), (0, 1)][axis]
    m[a, a], m[a, b], m[b, a], m[b, b] = c, -s, s, c
    return m


def affine(directions, zooms, origin):
    a = np.eye(4)
    a[:3, :3] = np.asarray(directions) @ np.diag(zooms)
    a[:3, 3] = origin
    return a


# Direction matrices (columns = where i, j, k point in RAS) of common acquisitions.
ORIENTATIONS = {
    "RAS": np.eye(3),
    "LAS": np.diag([-1.0, 1, 1]),  # the usual EPI/FSL storage
    "LPS": np.diag([-1.0, -1, 1]),  # DICOM-like
    "sagittal PIR": np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], float),
    "coronal LIA": np.array([[-1, 0, 0], [0, 0, 1], [0, -1, 0]], float),
    "oblique": rot(0, 20) @ rot(2, -35) @ np.diag([-1.0, 1, 1]),
}


class Base(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()

    def tearDown(self):
        self.w.close()

    def info(self, path, *extra):
        r = TOOL.run("info", path, "--json", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def assert_affine(self, got, want, rel=F32):
        got, want = np.asarray(got, float), np.asarray(want, float)
        scale = max(1.0, np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=0, atol=rel * scale)


class NiftiRead(Base):
    def test_every_orientation_and_transform_code_matches_nibabel(self):
        rng = np.random.default_rng(3)
        data = rng.standard_normal((6, 5, 4)).astype(np.float32)  # (x, y, z)
        for name, d in ORIENTATIONS.items():
            a = affine(d, [0.9, 1.1, 2.5], [-40.5, 12.25, 30.0])
            for codes in [(1, 1), (0, 1), (2, 0), (1, 0), (4, 2)]:
                with self.subTest(orientation=name, codes=codes):
                    img = nib.Nifti1Image(data, None)
                    img.header.set_qform(a, code=codes[0])
                    img.header.set_sform(a, code=codes[1])
                    p = self.w.path("o.nii.gz")
                    nib.save(img, p)
                    back = nib.load(p)
                    j = self.info(p)
                    self.assertTrue(j["oriented"])
                    self.assertEqual(j["orientation_source"], "sform" if codes[1] else "qform")
                    # The affine nibabel was given, to float32 precision. (nibabel's own
                    # qform reading loses up to 1e-3 when the rotation is near 180 degrees,
                    # quaternion a ~ 0; we follow the NIfTI reference library, which then
                    # takes a = 0 and renormalises (b, c, d).)
                    self.assert_affine(j["affine"], a)
                    self.assert_affine(j["affine"], back.affine, rel=1e-3)
                    self.assertEqual(j["orientation"], "".join(aff2axcodes(back.affine)))
                    self.assertEqual(j["dims"], [4, 5, 6])
                    np.testing.assert_allclose(j["spacing"], [2.5, 1.1, 0.9], rtol=F32)

    def test_sform_wins_over_a_different_qform(self):
        data = np.zeros((3, 4, 5), np.int16)
        q = affine(np.eye(3), [1, 1, 1], [0, 0, 0])
        s = affine(ORIENTATIONS["sagittal PIR"], [2, 2, 2], [5, 6, 7])
        img = nib.Nifti1Image(data, None)
        img.header.set_qform(q, code=1)
        img.header.set_sform(s, code=2)
        p = self.w.path("both.nii")
        nib.save(img, p)
        j = self.info(p)
        self.assert_affine(j["affine"], s)
        self.assertEqual(j["orientation"], "PIR")
        self.assertEqual(j["orientation"], "".join(aff2axcodes(nib.load(p).affine)))

    def test_no_transform_is_not_oriented(self):
        img = nib.Nifti1Image(np.ones((4, 3, 2), np.uint8), None)
        img.header.set_zooms((0.5, 0.75, 3.0))
        img.header.set_qform(None, code=0)
        img.header.set_sform(None, code=0)
        p = self.w.path("none.nii")
        nib.save(img, p)
        h = nib.load(p).header
        self.assertEqual((int(h["qform_code"]), int(h["sform_code"])), (0, 0))
        j = self.info(p)
        self.assertFalse(j["oriented"])
        self.assertIsNone(j["orientation"])
        self.assertIsNone(j["orientation_source"])
        self.assert_affine(j["affine"], np.diag([0.5, 0.75, 3.0, 1.0]))
        np.testing.assert_allclose(j["spacing"], [3.0, 0.75, 0.5])

    def test_spatial_units_become_millimetres(self):
        data = np.zeros((3, 3, 3), np.float32)
        a = affine(np.eye(3), [5, 5, 20], [100, 200, 300])  # microns
        img = nib.Nifti1Image(data, a)
        img.header.set_xyzt_units("micron")
        p = self.w.path("um.nii")
        nib.save(img, p)
        j = self.info(p)
        self.assert_affine(j["affine"], np.diag([0.001, 0.001, 0.001, 1]) @ a)
        np.testing.assert_allclose(j["spacing"], [0.02, 0.005, 0.005], rtol=F32)

    def test_nifti2_reads_geometry_and_values(self):
        rng = np.random.default_rng(4)
        data = rng.integers(-1000, 3000, (7, 6, 5)).astype(np.int16)
        a = affine(ORIENTATIONS["oblique"], [0.7, 0.8, 3.0], [1.5, -2.5, 3.5])
        p = self.w.path("n2.nii")
        nib.save(nib.Nifti2Image(data, a), p)
        self.assertEqual(nib.load(p).header.sizeof_hdr, 540)
        j = self.info(p)
        self.assert_affine(j["affine"], nib.load(p).affine, rel=1e-12)
        self.assertEqual(j["orientation"], "".join(aff2axcodes(a)))
        ref = self.w.save("ref.npy", zyx(np.asarray(nib.load(p).dataobj)).astype(np.float64))
        r = TOOL.run("compare", p, ref, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["max_abs"], 0)

    def test_4d_needs_a_volume_index(self):
        rng = np.random.default_rng(5)
        data = rng.standard_normal((4, 3, 2, 5)).astype(np.float32)
        p = self.w.path("t.nii.gz")
        nib.save(nib.Nifti1Image(data, np.eye(4)), p)
        r = TOOL.run("info", p, "--json")
        self.assertEqual(r.returncode, 1)
        self.assertIn("4-D with 5 volumes", r.stderr)
        self.assertIn("--volume", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1)
        for v in (0, 3, 4):
            ref = self.w.save("v.npy", zyx(data[..., v]).astype(np.float64))
            r = TOOL.run("compare", p, ref, "--volume", v, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(json.loads(r.stdout)["max_abs"], 0, v)
        r = TOOL.run("info", p, "--volume", 5)
        self.assertEqual(r.returncode, 1)
        self.assertIn("volume index 5 is out of range: the file holds 5 volumes", r.stderr)
        # A cut-off last volume is an error even when an earlier one is asked for.
        raw = self.w.path("t.nii")
        nib.save(nib.Nifti1Image(data, np.eye(4)), raw)
        with open(raw, "rb") as f:
            b = f.read()
        cut = self.w.write_bytes("cut.nii", b[:-8])
        r = TOOL.run("info", cut, "--volume", 0)
        self.assertEqual(r.returncode, 1)
        self.assertIn("truncated", r.stderr)


class Writers(Base):
    def volume(self, name, orientation="oblique"):
        rng = np.random.default_rng(6)
        data = rng.standard_normal((9, 8, 7)).astype(np.float32)
        a = affine(ORIENTATIONS[orientation], [0.9, 1.2, 2.0], [-50.0, 20.0, 10.0])
        p = self.w.path(name)
        nib.save(nib.Nifti1Image(data, a), p)
        return p, nib.load(p).affine

    def test_nifti_out_keeps_the_affine(self):
        for orientation in ORIENTATIONS:
            with self.subTest(orientation=orientation):
                src, a = self.volume("in.nii", orientation)
                out = self.w.path("out.nii.gz")
                TOOL.ok("prefilter", src, out)
                img = nib.load(out)
                self.assert_affine(img.affine, a)
                self.assertEqual(int(img.header["sform_code"]), 1)
                self.assertEqual(int(img.header["qform_code"]), 1)
                # nibabel's qform reading: see the note on quaternion a ~ 0 above.
                self.assert_affine(img.get_qform(), a, rel=1e-3)
                self.assertEqual("".join(aff2axcodes(img.affine)), self.info(src)["orientation"])

    def test_sheared_affine_goes_into_the_sform_only(self):
        data = np.zeros((3, 4, 5), np.float32)
        a = np.array([[1.0, 0.4, 0, 1], [0, 1, 0.3, 2], [0, 0, 2, 3], [0, 0, 0, 1]])
        src = self.w.path("shear.nii")
        img = nib.Nifti1Image(data, None)
        img.header.set_sform(a, code=1)
        nib.save(img, src)
        out = self.w.path("shear_out.nii")
        TOOL.ok("prefilter", src, out)
        back = nib.load(out)
        self.assert_affine(back.affine, a)
        self.assertEqual(int(back.header["qform_code"]), 0)

    def test_zoom_moves_the_grid_not_the_object(self):
        src, a = self.volume("z.nii")
        out = self.w.path("z2.nii")
        TOOL.ok("resample", src, out, "--zoom", 2)
        b = nib.load(out).affine
        # Output index q sits at input index (q + 1/2) / 2 - 1/2 on every axis.
        s = np.eye(4)
        s[:3, :3] *= 0.5
        s[:3, 3] = 0.25 - 0.5
        self.assert_affine(b, a @ s)
        self.assertEqual(nib.load(out).shape, (18, 16, 14))
        # The outer corner of the first voxel is the same point in the world.
        np.testing.assert_allclose(b @ [-0.5, -0.5, -0.5, 1], a @ [-0.5, -0.5, -0.5, 1],
                                   atol=1e-4)

    def test_nrrd_round_trip_in_lps(self):
        src, a = self.volume("n.nii", "sagittal PIR")
        out = self.w.path("n.nrrd")
        TOOL.ok("prefilter", src, out)
        with open(out, "rb") as f:
            head = f.read(2000).split(b"\n\n")[0].decode()
        self.assertIn("space: left-posterior-superior", head)
        # LPS is RAS with x and y negated: check the header's first direction by hand.
        line = [l for l in head.split("\n") if l.startswith("space directions:")][0]
        first = [float(v) for v in line.split("(")[1].split(")")[0].split(",")]
        np.testing.assert_allclose(first, [-a[0, 0], -a[1, 0], a[2, 0]], atol=1e-5)
        j = self.info(out)
        self.assert_affine(j["affine"], a)
        self.assertEqual(j["orientation"], "PIR")
        self.assertEqual(j["orientation_source"], "nrrd space left-posterior-superior")

    def test_hand_written_nrrd_spaces(self):
        body = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        for space, flip in [("RAS", [1, 1, 1]), ("left-posterior-superior", [-1, -1, 1]),
                            ("left-anterior-superior", [-1, 1, 1])]:
            with self.subTest(space=space):
                hdr = ("NRRD0004\ntype: float\ndimension: 3\nsizes: 4 3 2\nendian: little\n"
                       "encoding: raw\nspace: %s\nspace directions: (0,2,0) (0,0,3) (1.5,0,0)\n"
                       "space origin: (10,20,30)\n\n" % space)
                p = self.w.write_bytes("h.nrrd", hdr.encode() + body.tobytes())
                j = self.info(p)
                f = np.array(flip, float)
                want = np.eye(4)
                want[:3, 0] = f * [0, 2, 0]
                want[:3, 1] = f * [0, 0, 3]
                want[:3, 2] = f * [1.5, 0, 0]
                want[:3, 3] = f * [10, 20, 30]
                self.assert_affine(j["affine"], want, rel=0)
                self.assertEqual(j["orientation"], "".join(aff2axcodes(want)))
        # A space that is not a patient frame keeps spacing but states no orientation.
        hdr = ("NRRD0004\ntype: float\ndimension: 3\nsizes: 4 3 2\nendian: little\n"
               "encoding: raw\nspace: scanner-xyz\nspace directions: (2,0,0) (0,3,0) (0,0,4)\n\n")
        j = self.info(self.w.write_bytes("s.nrrd", hdr.encode() + body.tobytes()))
        self.assertFalse(j["oriented"])
        self.assertEqual(j["spacing"], [4, 3, 2])


class SameAnatomy(Base):
    """One volume stored in many axis orders and flips, each with the matching affine: every
    voxel value must land on the same world point, whatever the storage."""

    def test_storage_order_does_not_move_anatomy(self):
        rng = np.random.default_rng(7)
        base = rng.permutation(4 * 5 * 6).reshape(4, 5, 6).astype(np.float32)  # distinct values
        a0 = affine(ORIENTATIONS["RAS"], [1.0, 1.5, 2.0], [-3, -4, -5])
        points = None
        for perm in [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)]:
            for flips in [(), (0,), (1, 2), (0, 1, 2)]:
                # Storage: flip then permute the index axes; the affine follows.
                d, a = base, a0.copy()
                for ax in flips:
                    n = d.shape[ax]
                    d = np.flip(d, ax)
                    f = np.eye(4)
                    f[ax, ax], f[ax, 3] = -1, n - 1
                    a = a @ f
                d = np.transpose(d, perm)
                p_ = np.eye(4)
                p_[:3, :3] = np.eye(3)[:, perm]
                a = a @ p_
                path = self.w.path("s.nii")
                nib.save(nib.Nifti1Image(np.ascontiguousarray(d), a), path)
                j = self.info(path)
                self.assertEqual(j["orientation"], "".join(aff2axcodes(a)))
                A = np.asarray(j["affine"])
                # Values as splinetool reads them (prefilter degree 1 copies the samples).
                out = self.w.path("dump.npy")
                TOOL.ok("prefilter", path, out, "--degree", 1, "--precision", "double")
                v = load(out)  # (z, y, x) = index (k, j, i)
                k, jj, i = np.meshgrid(*[np.arange(n) for n in v.shape], indexing="ij")
                ijk1 = np.stack([i.ravel(), jj.ravel(), k.ravel(), np.ones(i.size)])
                world = (A @ ijk1)[:3].T
                order = np.argsort(v.ravel())
                here = np.round(world[order], 6)
                if points is None:
                    points = here
                else:
                    np.testing.assert_allclose(here, points, atol=1e-5)


if __name__ == "__main__":
    TOOL = Tool(sys.argv.pop(1))
    unittest.main(verbosity=2)
