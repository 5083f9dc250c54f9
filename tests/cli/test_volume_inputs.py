#!/usr/bin/env python3
"""splinetool with volume inputs: NIfTI-1 files (.nii, .nii.gz) and headerless raw data (--raw).

Usage: test_volume_inputs.py PATH/TO/splinetool
NIfTI files are written here byte by byte (numpy only; the NIfTI-1 header offsets are spelled
out), so this runs without nibabel; the nibabel oracle lives in tests/io.
"""
import gzip
import os
import struct
import sys
import unittest

import numpy as np

from cli_util import Tool, Workdir, load

TOOL = None  # set in __main__

DT = {np.dtype(np.uint8): 2, np.dtype(np.int16): 4, np.dtype(np.float32): 16,
      np.dtype(np.uint16): 512, np.dtype(np.float64): 64}


def nifti_bytes(a, spacing, big_endian=False):
    """NIfTI-1 single file holding `a` (array order (z, y, x)); spacing in array order."""
    e = ">" if big_endian else "<"
    h = bytearray(352)
    dims = list(reversed(a.shape))  # file order: x first
    struct.pack_into(e + "i", h, 0, 348)
    struct.pack_into(e + "8h", h, 40, len(dims), *(dims + [1] * (7 - len(dims))))
    struct.pack_into(e + "hh", h, 70, DT[a.dtype], 8 * a.dtype.itemsize)
    pix = [1.0] + list(reversed(spacing)) + [1.0] * (7 - len(spacing))
    struct.pack_into(e + "8f", h, 76, *pix)
    struct.pack_into(e + "f", h, 108, 352.0)
    h[344:348] = b"n+1\0"
    return bytes(h) + a.astype(a.dtype.newbyteorder(e)).tobytes()


class Base(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()

    def tearDown(self):
        self.w.close()

    def assertFails(self, args, part, status=1):
        r = TOOL.run(*args)
        self.assertEqual(r.returncode, status, r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertTrue(r.stderr.startswith("splinetool: "), r.stderr)
        self.assertIn(part, r.stderr)
        return r


class Nifti(Base):
    def test_nii_and_gz_inputs_equal_the_npy(self):
        rng = np.random.default_rng(1)
        for dtype in [np.uint8, np.int16, np.uint16, np.float32, np.float64]:
            a = (rng.random((4, 5, 6)) * 200).astype(dtype)
            ref = self.w.save("a.npy", a.astype(np.float64))
            for name, be in [("a.nii", False), ("b.nii.gz", True)]:
                data = nifti_bytes(a, (2.0, 1.0, 0.5), big_endian=be)
                if name.endswith(".gz"):
                    data = gzip.compress(data)
                p = self.w.write_bytes(name, data)
                r = TOOL.ok("compare", p, ref, "--json")
                self.assertIn('"max_abs":0.0', r.stdout.replace(" ", ""), (dtype, name))
                out = self.w.path("c.npy")
                TOOL.ok("prefilter", p, out)
                TOOL.ok("prefilter", ref, self.w.path("c_ref.npy"))
                np.testing.assert_array_equal(load(out), load(self.w.path("c_ref.npy")))

    def test_bad_nifti_is_one_line_naming_the_file(self):
        a = np.zeros((2, 3), np.float32)
        p = self.w.write_bytes("t.nii", nifti_bytes(a, (1, 1))[:-3])
        out = self.w.path("o.npy")
        r = self.assertFails(["prefilter", p, out], p + ": truncated")
        self.assertFalse(os.path.exists(out))
        h = bytearray(nifti_bytes(a, (1, 1)))
        struct.pack_into("<h", h, 70, 32)  # complex64
        p = self.w.write_bytes("c.nii", bytes(h))
        self.assertFails(["compare", p, p], "datatype code 32 (complex64)")


class Raw(Base):
    def test_raw_input_with_spec(self):
        rng = np.random.default_rng(2)
        a = rng.integers(0, 65536, (3, 4, 5)).astype(">u2")
        p = self.w.write_bytes("v.raw", b"x" * 7 + a.tobytes())
        ref = self.w.save("v.npy", a.astype(np.float64))
        r = TOOL.ok("compare", p, ref, "--raw", "3x4x5:u16:be:offset=7:spacing=2x1x1", "--json")
        self.assertIn('"max_abs":0.0', r.stdout.replace(" ", ""))
        out = self.w.path("z.npy")
        TOOL.ok("resample", p, out, "--zoom", 2, "--raw", "3x4x5:u16:be:offset=7")
        self.assertEqual(load(out).shape, (6, 8, 10))
        # channels: the last dim of the spec
        c = rng.random((4, 5, 3)).astype("<f4")
        pc = self.w.write_bytes("c.bin", c.tobytes())
        TOOL.ok("prefilter", pc, self.w.path("cc.npy"), "--raw", "4x5x3:f32", "--channels")
        self.assertEqual(load(self.w.path("cc.npy")).shape, (4, 5, 3))

    def test_size_mismatch_and_bad_specs(self):
        p = self.w.write_bytes("v.raw", bytes(100))
        out = self.w.path("o.npy")
        self.assertFails(["prefilter", p, out, "--raw", "5x5x5:u8"],
                         "the file holds 100 bytes, the raw spec needs 125")
        self.assertFalse(os.path.exists(out))
        self.assertFails(["prefilter", p, out, "--raw", "5x5:u32"], "unknown type 'u32'", 2)
        self.assertFails(["prefilter", p, out, "--raw", "5x5"], "needs at least dims", 2)
        # without --raw an unknown extension is still an error
        self.assertFails(["prefilter", p, out], "unsupported file extension '.raw'")


class Slices(Base):
    """A folder or a glob of 2-D slices is one volume, in natural order (s2 before s10)."""

    def test_folder_and_glob_in_natural_order(self):
        import json
        rng = np.random.default_rng(12)
        vol = rng.integers(0, 60000, (12, 5, 6)).astype(np.uint16)
        os.mkdir(self.w.path("stack"))
        for z in rng.permutation(12):  # written out of order
            np.save(self.w.path("stack/img%d.npy" % z), vol[z])
        with open(self.w.path("stack/notes.txt"), "w") as f:
            f.write("skipped: not a slice format")
        ref = self.w.save("ref.npy", vol.astype(np.float64))
        for src in (self.w.path("stack"), self.w.path("stack/img*.npy")):
            r = TOOL.run("compare", src, ref, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout)
            self.assertEqual(j["max_abs"], 0, src)
        r = TOOL.run("info", self.w.path("stack"), "--json")
        self.assertEqual(json.loads(r.stdout)["dims"], [12, 5, 6])
        np.save(self.w.path("stack/img12.npy"), vol[0, :4])
        r = TOOL.run("info", self.w.path("stack"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("slice 12", r.stderr)
        self.assertIn("img12.npy", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1)


if __name__ == "__main__":
    TOOL = Tool(sys.argv.pop(1))
    unittest.main(verbosity=2)
