#!/usr/bin/env python3
"""TIFF through splinetool against tifffile (Debian's python3-tifffile) as the oracle.

tifffile writes (every sample type; strips and tiles; none, LZW, Deflate, PackBits; BigTIFF;
multi-page; ImageJ stacks with spacing and resolution; RGB, separate planes) and splinetool
reads: `splinetool compare in.tif ref.npy --json` against numpy's array saved as float64 must
give max_abs 0 (stored values are the values), and `splinetool info` reports the dtype, shape
and spacing. splinetool writes (resample --zoom 1 --method nearest, prefilter --degree 1) and
tifffile reads back the values, the page count, the ImageJ description and the resolution.

Usage: test_tiff_oracle.py PATH/TO/splinetool [unittest args]. Skips when tifffile is missing.
"""
import json
import sys
import unittest

import numpy as np

from cli_util import Tool, Workdir

try:
    import tifffile
except ImportError:  # pragma: no cover
    tifffile = None

TOOL = None  # set in __main__

DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64",
          "float16", "uint64", "int64"]


def values(shape, dtype, seed):
    """Deterministic values spanning the type's range (exact in double)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = rng.normal(0, 100, shape)
        return a.astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -2 ** 52), min(info.max, 2 ** 52)
    a = rng.integers(lo, hi, size=shape, dtype=np.int64 if dt.kind == "i" or dt.itemsize < 8
                     else np.uint64, endpoint=True)
    a = a.astype(dt)
    a.flat[0] = lo
    a.flat[-1] = hi
    return a


@unittest.skipIf(tifffile is None, "tifffile (python3-tifffile) is not installed")
class TiffOracle(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()

    def tearDown(self):
        self.w.close()

    def info(self, path):
        return json.loads(TOOL.ok("info", path, "--json").stdout)

    def same(self, tif, ref, channels=False):
        """splinetool compare TIF against ref (numpy, saved as float64 .npy): max_abs 0."""
        npy = self.w.save("ref.npy", np.asarray(ref, dtype=np.float64))
        args = ["compare", tif, npy, "--json"]
        if channels:
            args.append("--channels")
        j = json.loads(TOOL.ok(*args).stdout)
        self.assertEqual(j["max_abs"], 0.0, "%s: %s" % (tif, j))
        self.assertIs(j["identical"], True)

    def test_every_dtype_strips_and_tiles(self):
        n = 0
        for dtype in DTYPES:
            for kw in ({}, {"tile": (16, 16)}, {"rowsperstrip": 3}):
                a = values((20, 37), dtype, n)
                p = self.w.path("t%d.tif" % n)
                tifffile.imwrite(p, a, **kw)
                n += 1
                with self.subTest(dtype=dtype, kw=kw):
                    self.same(p, a)
                    info = self.info(p)
                    self.assertEqual(info["dtype"], dtype, info)

    def test_compressions_predictors_bigtiff(self):
        a16 = values((5, 33, 21), "uint16", 1)
        af = values((5, 33, 21), "float32", 2)
        n = 0
        for comp in (None, "lzw", "zlib", "packbits", "zstd", "lzma"):
            for a in (a16, af):
                for big in (False, True):
                    for tile in (None, (16, 16)):
                        kw = {"bigtiff": big}
                        if comp:
                            kw["compression"] = comp
                        if comp in ("lzw", "zlib", "zstd") and a.dtype.kind != "f":
                            kw["predictor"] = True
                        if tile:
                            kw["tile"] = tile
                        p = self.w.path("c%d.tif" % n)
                        n += 1
                        try:
                            tifffile.imwrite(p, a, **kw)
                        except (ValueError, ImportError, KeyError):
                            if comp in ("lzw", "packbits", "zstd"):
                                continue  # needs the imagecodecs package (test_pillow covers)
                            raise
                        with self.subTest(comp=comp, dtype=str(a.dtype), big=big, tile=tile):
                            self.same(p, a)
                            self.assertEqual(self.info(p)["shape"], list(a.shape))

    def test_pillow_lzw_packbits(self):
        """tifffile encodes LZW and PackBits only with the imagecodecs package (not in Debian
        12); Pillow (python3-pil, libtiff underneath) writes them."""
        try:
            from PIL import Image
        except ImportError:
            self.skipTest("Pillow is not installed")
        for comp in ("tiff_lzw", "packbits", "tiff_adobe_deflate", None):
            for a in (values((19, 23), "uint8", 20), values((19, 23, 3), "uint8", 21),
                      values((19, 23), "uint16", 22)):
                p = self.w.path("pil.tif")
                im = Image.fromarray(a) if a.dtype != np.uint16 else Image.fromarray(a, "I;16")
                im.save(p, compression=comp)
                with self.subTest(comp=comp, shape=a.shape, dtype=str(a.dtype)):
                    self.same(p, a, channels=a.ndim == 3)
                    if comp != "tiff_lzw":  # tifffile decodes LZW only with imagecodecs
                        np.testing.assert_array_equal(tifffile.imread(p), a)

    def test_rgb_and_separate_planes(self):
        rgb = values((12, 17, 3), "uint8", 3)
        p = self.w.path("rgb.tif")
        tifffile.imwrite(p, rgb, photometric="rgb")
        self.same(p, rgb, channels=True)
        rgba16 = values((12, 17, 4), "uint16", 4)
        tifffile.imwrite(p, rgba16, photometric="rgb", extrasamples=["unassalpha"])
        self.same(p, rgba16, channels=True)
        planar = values((3, 12, 17), "uint16", 5)  # samples first: separate planes
        tifffile.imwrite(p, planar, photometric="rgb", planarconfig="separate",
                         compression="zlib")
        self.same(p, np.moveaxis(planar, 0, -1), channels=True)
        stack = values((4, 12, 17, 3), "uint8", 6)
        tifffile.imwrite(p, stack, photometric="rgb")
        self.same(p, stack, channels=True)

    def test_multipage_and_imagej_spacing(self):
        vol = values((5, 14, 11), "uint16", 7)
        p = self.w.path("pages.tif")
        for i in range(vol.shape[0]):
            tifffile.imwrite(p, vol[i], append=i > 0)
        self.same(p, vol)
        # ImageJ stack with micron units: spacing in mm (z, y, x).
        q = self.w.path("ij.tif")
        tifffile.imwrite(q, vol, imagej=True, resolution=(1 / 0.25, 1 / 0.5),
                         metadata={"spacing": 2.0, "unit": "um", "axes": "ZYX"})
        self.same(q, vol)
        info = self.info(q)
        np.testing.assert_allclose(info["spacing"], [2.0e-3, 0.5e-3, 0.25e-3], rtol=1e-6)
        # Resolution in centimetres (no ImageJ): x, y in mm, z 1.
        r = self.w.path("cm.tif")
        tifffile.imwrite(r, vol, resolution=(40, 20), resolutionunit="CENTIMETER")
        np.testing.assert_allclose(self.info(r)["spacing"], [1, 0.5, 0.25], rtol=1e-6)
        # ImageJ hyperstack with 2 channels: the channel axis.
        hs = values((3, 2, 9, 8), "float32", 8)  # Z C Y X
        s = self.w.path("hs.tif")
        tifffile.imwrite(s, hs, imagej=True, metadata={"axes": "ZCYX"})
        self.same(s, np.moveaxis(hs, 1, -1), channels=True)
        # Frames: refused with a clear message.
        t = self.w.path("frames.tif")
        tifffile.imwrite(t, values((2, 3, 9, 8), "uint8", 9), imagej=True,
                         metadata={"axes": "TZYX"})
        r = TOOL.run("info", t)
        self.assertEqual(r.returncode, 1)
        self.assertIn("2 frames", r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)

    def test_splinetool_writes_tifffile_reads(self):
        vol = np.random.default_rng(10).random((4, 9, 13))
        src = self.w.path("vol.nrrd")
        # A source with spacing: NRRD written by splinetool itself from a .npy is spacing 1, so
        # write a tiny NRRD header by hand.
        raw = vol.astype("<f8").tobytes()
        with open(src, "wb") as f:
            f.write(b"NRRD0004\ntype: double\ndimension: 3\nsizes: 13 9 4\nendian: little\n"
                    b"encoding: raw\nspacings: 0.5 0.25 3\n\n" + raw)
        out = self.w.path("out.tif")
        TOOL.ok("resample", src, out, "--zoom", 1, "--method", "nearest")
        with tifffile.TiffFile(out) as tf:
            self.assertEqual(len(tf.pages), 4)
            got = tf.asarray()
            self.assertTrue(tf.is_imagej)
            ij = tf.imagej_metadata
            self.assertEqual(ij["slices"], 4)
            self.assertEqual(ij["unit"], "mm")
            self.assertAlmostEqual(ij["spacing"], 3.0)
            xres = tf.pages[0].tags["XResolution"].value
            self.assertAlmostEqual(xres[0] / xres[1], 2.0, places=5)
            yres = tf.pages[0].tags["YResolution"].value
            self.assertAlmostEqual(yres[0] / yres[1], 4.0, places=5)
        self.assertEqual(got.dtype, np.float64)
        np.testing.assert_array_equal(got, vol)
        # Single precision and 2-D RGB from a .npy, through prefilter --degree 1 (identity).
        img = np.random.default_rng(11).random((10, 12, 3)).astype(np.float32)
        p = self.w.save("img.npy", img)
        out2 = self.w.path("img.tiff")
        TOOL.ok("prefilter", p, out2, "--channels", "--degree", 1, "--precision", "single")
        with tifffile.TiffFile(out2) as tf:
            self.assertEqual(len(tf.pages), 1)
            self.assertEqual(tf.pages[0].photometric, tifffile.PHOTOMETRIC.RGB)
            got = tf.asarray()
        self.assertEqual(got.dtype, np.float32)
        np.testing.assert_array_equal(got, img)
        # And back through splinetool.
        self.same(out2, img, channels=True)

    def test_refusals_are_one_line(self):
        a = values((30, 40), "uint16", 12)
        p = self.w.path("a.tif")
        tifffile.imwrite(p, a, compression="zlib")
        with open(p, "rb") as f:
            data = f.read()
        for cut in (8, 64, len(data) // 2, len(data) - 1):
            q = self.w.write_bytes("cut.tif", data[:cut])
            r = TOOL.run("info", q)
            self.assertNotEqual(r.returncode, 0, cut)
            lines = r.stderr.splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertTrue(lines[0].startswith("splinetool: " + q), lines[0])
        # Pages of different sizes.
        d = self.w.path("differ.tif")
        tifffile.imwrite(d, a)
        tifffile.imwrite(d, a[:10], append=True)
        r = TOOL.run("info", d)
        self.assertEqual(r.returncode, 1)
        self.assertIn("TIFF pages differ", r.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_tiff_oracle.py PATH/TO/splinetool [unittest args]")
    TOOL = Tool(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
