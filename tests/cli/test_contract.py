#!/usr/bin/env python3
"""Contract tests of splinetool: what scripts, benchmarks and users rely on.

Usage: test_contract.py PATH/TO/splinetool
Checks output dtypes and shapes, that --repeat K equals K chained single steps, that linear
sampling without prefilter equals NumPy's linear interpolation, that the prefiltered spline
interpolates the samples (s(k) = f[k]) through the command line, derivatives against finite
differences, compare/info output, and that every kind of bad input fails with exactly one line
"splinetool: ..." on stderr, a non-zero status, and no created or changed OUT.
"""
import json
import os
import sys
import unittest

import numpy as np

from cli_util import Tool, Workdir, load

TOOL = None  # set in __main__


def rng(seed):
    return np.random.default_rng(seed)


class Base(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()

    def tearDown(self):
        self.w.close()

    def assertSilentSuccess(self, *args):
        r = TOOL.ok(*args)
        self.assertEqual(r.stdout, "", "prints nothing on success without --json")
        self.assertEqual(r.stderr, "")
        return r


class PrefilterContract(Base):
    def test_dtype_follows_precision_and_shape_is_kept(self):
        for shape in [(13,), (7, 9), (4, 5, 6)]:
            x = self.w.save("x.npy", rng(1).random(shape))
            for precision, dtype in [("single", np.float32), ("double", np.float64)]:
                out = self.w.path("c_%s.npy" % precision)
                self.assertSilentSuccess("prefilter", x, out, "--precision", precision)
                c = load(out)
                self.assertEqual(c.dtype, dtype, (shape, precision))
                self.assertEqual(c.shape, shape)
            self.assertSilentSuccess("prefilter", x, self.w.path("d.npy"))
            self.assertEqual(load(self.w.path("d.npy")).dtype, np.float64, "default is double")

    def test_channels_keep_the_trailing_axis(self):
        x = self.w.save("x.npy", rng(2).random((6, 8, 3)))
        for precision, dtype in [("single", np.float32), ("double", np.float64)]:
            out = self.w.path("c.npy")
            self.assertSilentSuccess("prefilter", x, out, "--channels", "--precision", precision)
            c = load(out)
            self.assertEqual((c.shape, c.dtype), ((6, 8, 3), dtype))
        # Channels are filtered independently: each equals the prefilter of that channel alone.
        TOOL.ok("prefilter", x, self.w.path("all.npy"), "--channels")
        full = load(self.w.path("all.npy"))
        for ch in range(3):
            one = self.w.save("one.npy", load(x)[:, :, ch])
            TOOL.ok("prefilter", one, self.w.path("one_c.npy"))
            np.testing.assert_allclose(full[:, :, ch], load(self.w.path("one_c.npy")),
                                       rtol=0, atol=1e-14)
        # Without --channels the same file is a 3-D volume: the output differs.
        TOOL.ok("prefilter", x, self.w.path("vol.npy"))
        self.assertGreater(np.abs(load(self.w.path("vol.npy")) - full).max(), 1e-3)

    def test_degrees_0_and_1_are_the_identity(self):
        data = rng(3).random((5, 7))
        x = self.w.save("x.npy", data)
        for n in (0, 1):
            TOOL.ok("prefilter", x, self.w.path("c.npy"), "--degree", n)
            np.testing.assert_array_equal(load(self.w.path("c.npy")), data)

    def test_nrrd_output_matches_npy(self):
        x = self.w.save("x.npy", rng(4).random((5, 6, 7)))
        for precision in ("single", "double"):
            TOOL.ok("prefilter", x, self.w.path("c.nrrd"), "--precision", precision)
            TOOL.ok("prefilter", x, self.w.path("c.npy"), "--precision", precision)
            r = TOOL.ok("compare", self.w.path("c.nrrd"), self.w.path("c.npy"), "--json")
            self.assertEqual(json.loads(r.stdout)["max_abs"], 0.0)


class SampleContract(Base):
    def test_output_shapes(self):
        x2 = self.w.save("x2.npy", rng(5).random((6, 7)))
        xc = self.w.save("xc.npy", rng(6).random((6, 7, 3)))
        x1 = self.w.save("x1.npy", rng(7).random(9))
        c2 = self.w.save("c2.npy", rng(8).uniform(-1, 7, (11, 2)))
        out = self.w.path("v.npy")
        self.assertSilentSuccess("sample", x2, c2, out)
        self.assertEqual((load(out).shape, load(out).dtype), ((11,), np.float64))
        self.assertSilentSuccess("sample", xc, c2, out, "--channels")
        self.assertEqual((load(out).shape, load(out).dtype), ((11, 3), np.float64))
        for precision in ("single", "double"):
            TOOL.ok("sample", xc, c2, out, "--channels", "--precision", precision)
            self.assertEqual(load(out).dtype, np.float64, "sample output is always float64")
        for coords in (rng(9).uniform(0, 8, 5), rng(9).uniform(0, 8, (5, 1))):
            for dt in (np.float32, np.float64):
                c1 = self.w.save("c1.npy", coords.astype(dt))
                TOOL.ok("sample", x1, c1, out)
                self.assertEqual(load(out).shape, (5,))

    def test_linear_without_prefilter_equals_numpy_interpolation(self):
        f1 = rng(10).random(12)
        t = np.array([0.0, 0.25, 3.5, 7.9, 10.999, 11.0])
        TOOL.ok("sample", self.w.save("f.npy", f1), self.w.save("t.npy", t), self.w.path("v.npy"),
                "--no-prefilter", "--degree", 1)
        np.testing.assert_allclose(load(self.w.path("v.npy")), np.interp(t, np.arange(12), f1),
                                   rtol=0, atol=1e-14)
        f2 = rng(11).random((5, 8))
        p = np.array([[0.0, 0.0], [1.5, 2.25], [3.75, 6.5], [4.0, 7.0], [2.2, 0.1]])
        TOOL.ok("sample", self.w.save("f2.npy", f2), self.w.save("p.npy", p),
                self.w.path("v2.npy"), "--no-prefilter", "--degree", 1)
        y0 = np.minimum(np.floor(p[:, 0]).astype(int), 3)
        x0 = np.minimum(np.floor(p[:, 1]).astype(int), 6)
        a, b = p[:, 0] - y0, p[:, 1] - x0
        ref = ((1 - a) * (1 - b) * f2[y0, x0] + (1 - a) * b * f2[y0, x0 + 1] +
               a * (1 - b) * f2[y0 + 1, x0] + a * b * f2[y0 + 1, x0 + 1])
        np.testing.assert_allclose(load(self.w.path("v2.npy")), ref, rtol=0, atol=1e-14)

    def test_the_spline_interpolates_the_samples(self):
        # s(k) = f[k] at every sample position, every degree and boundary, double precision;
        # every run through one `splinetool batch` process (each exactly as a separate run).
        commands, cases = [], []
        for k, (shape, channels) in enumerate([((17,), False), ((8, 11), False),
                                               ((5, 6, 7), False), ((6, 9, 3), True)]):
            f = rng(12).random(shape)
            spatial = shape[:-1] if channels else shape
            grid = np.stack(np.meshgrid(*[np.arange(n, dtype=float) for n in spatial],
                                        indexing="ij"), axis=-1).reshape(-1, len(spatial))
            x, p = self.w.save("f%d.npy" % k, f), self.w.save("p%d.npy" % k, grid)
            expect = f.reshape(len(grid), -1) if channels else f.reshape(-1)
            for n in range(0, 8):
                for mode in ("reflect", "mirror", "periodic"):
                    v = self.w.path("v%d_%d_%s.npy" % (k, n, mode))
                    args = ["sample", x, p, v, "--degree", n, "--boundary", mode]
                    commands.append(args + (["--channels"] if channels else []))
                    cases.append((v, expect, shape, n, mode))
        TOOL.ok_all(commands)
        for v, expect, shape, n, mode in cases:
            err = np.abs(load(v) - expect).max()
            self.assertLessEqual(err, 1e-12, (shape, n, mode))

    def test_single_precision_is_close_to_double(self):
        f = self.w.save("f.npy", rng(13).random((9, 10)))
        p = self.w.save("p.npy", rng(14).uniform(-2, 11, (50, 2)))
        TOOL.ok("sample", f, p, self.w.path("d.npy"))
        TOOL.ok("sample", f, p, self.w.path("s.npy"), "--precision", "single")
        d, s = load(self.w.path("d.npy")), load(self.w.path("s.npy"))
        self.assertLess(np.abs(d - s).max(), 1e-5)
        self.assertGreater(np.abs(d - s).max(), 0.0, "single really computes in float")

    def test_derivative_matches_finite_differences(self):
        f = self.w.save("f.npy", rng(15).random((9, 10)))
        p = rng(16).uniform(0.5, 8.5, (20, 2))
        h = 1e-5
        for axis in (0, 1):
            e = np.zeros(2)
            e[axis] = h
            TOOL.ok("sample", f, self.w.save("p.npy", p), self.w.path("d.npy"), "--derivative", axis)
            TOOL.ok("sample", f, self.w.save("pp.npy", p + e), self.w.path("vp.npy"))
            TOOL.ok("sample", f, self.w.save("pm.npy", p - e), self.w.path("vm.npy"))
            fd = (load(self.w.path("vp.npy")) - load(self.w.path("vm.npy"))) / (2 * h)
            np.testing.assert_allclose(load(self.w.path("d.npy")), fd, rtol=0, atol=1e-6)


class ResampleContract(Base):
    def test_zoom_shapes(self):
        for shape, factor, expect, extra in [((10, 14), 1.5, (15, 21), []),
                                             ((4, 5, 6), 2, (8, 10, 12), []),
                                             ((10, 14, 3), 0.5, (5, 7, 3), ["--channels"]),
                                             ((9,), 3, (27,), [])]:
            x = self.w.save("x.npy", rng(17).random(shape))
            for precision, dtype in [("single", np.float32), ("double", np.float64)]:
                out = self.w.path("z.npy")
                self.assertSilentSuccess("resample", x, out, "--zoom", factor, "--precision",
                                         precision, *extra)
                z = load(out)
                self.assertEqual((z.shape, z.dtype), (expect, dtype), (shape, factor))

    def test_repeat_equals_chained_single_steps(self):
        x = self.w.save("x.npy", rng(18).random((21, 17)))
        for precision in ("single", "double"):
            for method in ("linear", "cubic", "quintic"):
                common = ["--method", method, "--precision", precision]
                TOOL.ok("resample", x, self.w.path("k.npy"), "--rotate", 10, "--repeat", 3, *common)
                prev = x
                for k in range(3):
                    nxt = self.w.path("step%d.npy" % k)
                    TOOL.ok("resample", prev, nxt, "--rotate", 10, *common)
                    prev = nxt
                np.testing.assert_array_equal(load(self.w.path("k.npy")), load(prev),
                                              (precision, method))

    def test_json_report(self):
        x = self.w.save("x.npy", rng(19).random((32, 32)))
        r = TOOL.ok("resample", x, self.w.path("r.npy"), "--rotate", 30, "--json")
        j = json.loads(r.stdout)
        self.assertEqual((j["command"], j["method"], j["steps"], j["shape"]),
                         ("resample", "cubic", 1, [32, 32]))
        self.assertGreaterEqual(j["seconds"], 0)
        self.assertNotIn("psnr_db", j, "no metrics unless the rotation closes or asked")
        r = TOOL.ok("resample", x, self.w.path("r.npy"), "--rotate", 90, "--repeat", 4,
                    "--method", "linear", "--json")
        j = json.loads(r.stdout)
        self.assertEqual(j["steps"], 4)
        for key in ("psnr_db", "rms", "max_abs"):
            self.assertIn(key, j)
        self.assertEqual(j["compared_with"], "input")
        # The metrics are those of `compare` inside the disc of radius 0.35 * min(H, W).
        c = json.loads(TOOL.ok("compare", self.w.path("r.npy"), x, "--disc", 0.35,
                               "--json").stdout)
        self.assertEqual((c["max_abs"], c["rms"], c["count"]), (j["max_abs"], j["rms"], j["count"]))
        # --compare-original without --json prints the metrics as lines.
        r = TOOL.ok("resample", x, self.w.path("r.npy"), "--rotate", 30, "--compare-original")
        self.assertIn("psnr_db", r.stdout)
        r = TOOL.ok("resample", x, self.w.path("r2.npy"), "--zoom", 1, "--reference", x, "--json")
        self.assertEqual(json.loads(r.stdout)["compared_with"], "reference")

    def test_png_output_and_input(self):
        # Values in 0..255: a PNG stores them as they are (8 bits, rounded).
        x = self.w.save("x.npy", 10 + 235 * rng(20).random((12, 16, 3)))
        png = self.w.path("z.png")
        # Linear: no overshoot, so nothing is clipped and nothing is said.
        self.assertSilentSuccess("resample", x, png, "--zoom", 2, "--channels", "--method",
                                 "linear")
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        TOOL.ok("resample", png, self.w.path("back.npy"), "--zoom", 0.5)
        self.assertEqual(load(self.w.path("back.npy")).shape, (12, 16, 3))

    def test_16_bit_png_stays_16_bit(self):
        import struct
        import zlib
        h, w = 5, 7
        px = (np.arange(h * w, dtype=np.uint32).reshape(h, w) * 1871 % 65536).astype(">u2")

        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data +
                    struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
        raw = b"".join(b"\0" + px[y].tobytes() for y in range(h))
        png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 0, 0, 0, 0))
               + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
        src = self.w.write_bytes("g16.png", png)
        out = self.w.path("o16.png")
        TOOL.ok("resample", src, out, "--zoom", 1, "--method", "nearest")
        with open(out, "rb") as f:
            self.assertEqual(f.read(25)[24], 16)  # IHDR bit depth
        TOOL.ok("resample", out, self.w.path("v.npy"), "--zoom", 1, "--method", "nearest")
        np.testing.assert_array_equal(load(self.w.path("v.npy")), px.astype(float))

    def test_png_and_npy_of_the_same_pixels_are_identical(self):
        import struct
        import zlib
        h, w = 6, 9
        px = (np.arange(h * w).reshape(h, w) * 37 % 256).astype(np.uint8)

        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data +
                    struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
        raw = b"".join(b"\0" + px[y].tobytes() for y in range(h))
        png = self.w.write_bytes("p.png", b"\x89PNG\r\n\x1a\n" + chunk(
            b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) + chunk(
            b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
        npy = self.w.save("p_u8.npy", px)
        r = TOOL.ok("compare", png, npy, "--json")
        j = json.loads(r.stdout)
        self.assertEqual(j["max_abs"], 0)
        self.assertTrue(j["identical"])
        self.assertEqual(j["peak"], 255)
        # Resampled to PNG: same values as the .npy resampled to .npy, rounded, no scaling.
        TOOL.ok("resample", png, self.w.path("a.png"), "--zoom", 2, "--method", "linear")
        TOOL.ok("resample", npy, self.w.path("b.npy"), "--zoom", 2, "--method", "linear")
        # Cubic overshoots 0..255: the clipped values are counted and said.
        r = TOOL.run("resample", png, self.w.path("c.png"), "--zoom", 2, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["png_dtype"], "uint8")
        self.assertGreater(j["clipped"], 0)
        self.assertIn("outside [0, 255] and are clipped", r.stderr)
        r = TOOL.ok("compare", self.w.path("a.png"), self.w.path("b.npy"), "--json")
        self.assertLessEqual(json.loads(r.stdout)["max_abs"], 0.5 + 1e-9)
        # Float data within [0, 1] written to PNG: a warning that it is not scaled.
        f = self.w.save("f.npy", rng(3).random((4, 5)))
        r = TOOL.run("resample", f, self.w.path("f.png"), "--zoom", 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("within [0, 1]", r.stderr)
        # 16-bit data clipped at 65535: counted.
        big = self.w.save("big.npy", np.array([[0.0, 70000.0], [300.0, 5.0]]))
        r = TOOL.run("resample", big, self.w.path("big.png"), "--zoom", 1, "--method", "nearest",
                     "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual((j["png_dtype"], j["clipped"]), ("uint16", 1))
        self.assertIn("1 of 4 values lie outside [0, 65535]", r.stderr)

    def test_rotation_by_zero_is_the_identity(self):
        data = rng(21).random((9, 12))
        x = self.w.save("x.npy", data)
        TOOL.ok("resample", x, self.w.path("r.npy"), "--rotate", 0, "--method", "septic")
        np.testing.assert_allclose(load(self.w.path("r.npy")), data, rtol=0, atol=1e-12)


class CompareAndInfo(Base):
    def test_compare_metrics(self):
        a = rng(22).random((10, 10))
        pa, pb = self.w.save("a.npy", a), self.w.save("b.npy", a + 0.1)
        j = json.loads(TOOL.ok("compare", pa, pb, "--json").stdout)
        self.assertAlmostEqual(j["max_abs"], 0.1, places=12)
        self.assertAlmostEqual(j["rms"], 0.1, places=12)
        self.assertAlmostEqual(j["sse"], 1.0, places=10)
        self.assertAlmostEqual(j["psnr_db"], 20.0, places=9)
        self.assertEqual(j["count"], 100)
        self.assertEqual((j["identical"], j["nonfinite_a"], j["nonfinite_b"],
                          j["nonfinite_mismatch"]), (False, 0, 0, 0))
        j = json.loads(TOOL.ok("compare", pa, pa, "--json").stdout)
        self.assertEqual((j["max_abs"], j["psnr_db"], j["identical"]), (0.0, None, True),
                         "identical: PSNR null")
        # Finite data: the five figures and the verdict (the non-finite lines only with NaN/inf:
        # test_hardening.py).
        lines = TOOL.ok("compare", pa, pb).stdout.splitlines()
        self.assertEqual([l.split()[0] for l in lines],
                         ["max_abs", "rms", "sse", "psnr_db", "count", "identical"])
        self.assertEqual(lines[-1], "identical no")

    def test_info(self):
        r = TOOL.ok("info")
        self.assertIn("CUDA compiled:", r.stdout)
        j = json.loads(TOOL.ok("info", "--json").stdout)
        self.assertIsInstance(j["cuda_compiled"], bool)
        self.assertIsInstance(j["cuda_devices"], list)
        self.assertTrue(j["backends"]["cpu"])
        if not j["cuda_devices"]:
            self.assertTrue(j["cuda_none_reason"])
        # The GL backend: compiled in or not, and whether a context can be created here.
        g = j["gl"]
        self.assertIsInstance(g["compiled"], bool)
        self.assertEqual(j["backends"]["gl"], g["compiled"])
        if g["works"]:
            self.assertTrue(g["description"])
            self.assertIn(g["platform"], ("surfaceless", "device"))
            self.assertIn("GL: " + g["description"], r.stdout)
        else:
            self.assertTrue(g["none_reason"])
            self.assertIn("GL: none (", r.stdout)

    def test_help_exits_zero(self):
        r = TOOL.run("--help")
        self.assertEqual(r.returncode, 0)
        for cmd in ("prefilter", "sample", "resample", "compare", "info"):
            self.assertIn(cmd, r.stdout)
        for cmd, word in [("prefilter", "--degree"), ("sample", "COORDS"), ("sample", "--fetch"),
                          ("sample", "--format"), ("resample", "--repeat"),
                          ("resample", "--fetch"), ("compare", "--disc"), ("info", "--json")]:
            r = TOOL.run(cmd, "--help")
            self.assertEqual(r.returncode, 0, cmd)
            self.assertIn(word, r.stdout, cmd)


class Failures(Base):
    """Every failure: non-zero status, one stderr line 'splinetool: ...', OUT untouched."""

    def setUp(self):
        super().setUp()
        w = self.w
        self.f2 = w.save("f2.npy", rng(30).random((6, 7)))
        self.f3 = w.save("f3.npy", rng(31).random((4, 5, 6)))
        self.p2 = w.save("p2.npy", rng(32).uniform(0, 5, (4, 2)))
        self.p3 = w.save("p3.npy", rng(33).uniform(0, 5, (4, 3)))

    def check_fails(self, args, out=None, message=None):
        """Runs args (OUT is `out`, a path in the work dir, or None) twice: without OUT and with
        a pre-existing OUT; checks status, the single stderr line and the files."""
        for existing in ([False, True] if out else [False]):
            sentinel = b"pre-existing output, must stay byte-identical\n"
            if out and os.path.exists(out):
                os.remove(out)
            if existing:
                with open(out, "wb") as f:
                    f.write(sentinel)
            before = self.w.listing()
            r = TOOL.run(*args)
            if os.environ.get("SPLINETOOL_SHOW_ERRORS"):
                print("   ", r.stderr.strip())
            what = " ".join(str(a) for a in args)
            self.assertNotEqual(r.returncode, 0, what)
            lines = r.stderr.splitlines()
            self.assertEqual(len(lines), 1, "%s: stderr %r" % (what, r.stderr))
            self.assertTrue(lines[0].startswith("splinetool: "), "%s: %r" % (what, lines[0]))
            if message:
                self.assertIn(message, lines[0], what)
            self.assertEqual(self.w.listing(), before, "%s: files changed" % what)
            if out and existing:
                with open(out, "rb") as f:
                    self.assertEqual(f.read(), sentinel, what)
        return r

    def test_bad_inputs(self):
        w = self.w
        out = w.path("out.npy")
        corrupt = w.write_bytes("corrupt.npy", b"\x93NUMPY this is not an array header at all")
        garbage = w.write_bytes("garbage.npy", os.urandom(64))
        with open(self.f2, "rb") as f:
            good = f.read()
        truncated = w.write_bytes("truncated.npy", good[:len(good) - 40])
        # int64 loads, except a value a double cannot hold exactly (2^53 + 1)
        int64 = w.save("int64.npy", np.array([[0, 1], [2, 2**53 + 1]], dtype=np.int64))
        cplx = w.save("complex.npy", np.zeros((3, 4), dtype=np.complex128))
        zero = w.save("zero.npy", np.zeros((0, 5)))
        zero_coords = w.save("zero_coords.npy", np.zeros((0, 2)))
        int_coords = w.save("int_coords.npy", np.zeros((3, 2), dtype=np.uint8))
        nan_coords = w.save("nan_coords.npy", np.array([[1.0, np.nan]]))
        deep = w.save("deep.npy", np.zeros((2, 2, 2, 2)))
        five = w.save("five.npy", np.zeros((3, 4, 5)))
        cases = [
            (["prefilter", w.path("missing.npy"), out], None),
            (["prefilter", corrupt, out], None),
            (["prefilter", garbage, out], None),
            (["prefilter", truncated, out], None),
            (["prefilter", int64, out], None),
            (["prefilter", cplx, out], None),
            (["prefilter", zero, out], None),
            (["prefilter", deep, out], None),
            (["prefilter", five, out, "--channels"], None),
            (["prefilter", self.f2, out, "--degree", 8], None),
            (["prefilter", self.f2, out, "--degree", -1], None),
            (["prefilter", self.f2, out, "--degree", "three"], None),
            (["prefilter", self.f2, out, "--boundary", "wrap"], None),
            (["prefilter", self.f2, out, "--precision", "half"], None),
            (["prefilter", self.f2, out, "--frobnicate"], None),
            (["prefilter", self.f2, out, "--degree"], None),
            (["prefilter", self.f2, w.path("out.txt")], None),
            (["sample", self.f2, self.p3, out], "shape"),
            (["sample", self.f3, self.p2, out], "shape"),
            (["sample", self.f2, w.path("missing_coords.npy"), out], None),
            (["sample", self.f2, corrupt, out], None),
            (["sample", self.f2, zero_coords, out], None),
            (["sample", self.f2, int_coords, out], "float"),
            (["sample", self.f2, nan_coords, out], None),
            (["sample", self.f2, self.p2, out, "--derivative", 2], "derivative"),
            (["sample", self.f2, self.p2, out, "--degree", 0, "--derivative", 0], None),
            (["sample", zero, self.p2, out], None),
            (["sample", self.f2, self.p2, out, "--degree", 9], None),
            (["sample", self.f2, self.p2], None),
            (["sample", self.f2, self.p2, w.path("out.png")], None),
            (["resample", w.save("line.npy", rng(32).random(9)), out, "--rotate", 10],
             "2-D or 3-D"),
            (["resample", self.f2, out], "--zoom"),
            (["resample", self.f2, out, "--zoom", 2, "--rotate", 10], None),
            (["resample", self.f2, out, "--zoom", 0], None),
            (["resample", self.f2, out, "--zoom", "fast"], None),
            (["resample", self.f2, out, "--rotate", 10, "--repeat", 0], None),
            (["resample", self.f2, out, "--rotate", 10, "--method", "lanczos"], None),
            (["resample", self.f2, out, "--zoom", 2, "--reference", self.f3], None),
            (["resample", self.f2, out, "--zoom", 2, "--compare-original"], None),
            (["resample", self.f3, w.path("out.png"), "--zoom", 2], None),
            (["resample", garbage, out, "--zoom", 2], None),
        ]
        for args, message in cases:
            target = next((a for a in args if isinstance(a, str) and
                           os.path.basename(a).startswith("out.")), None)
            self.check_fails(args, target, message)

    def test_unknown_backend(self):
        # --backend cuda without a device is test_cuda_backend.py's (cli_cuda_contract).
        out = self.w.path("out.npy")
        self.check_fails(["prefilter", self.f2, out, "--backend", "vulkan"], out)

    def test_gl_options_need_the_gl_backend(self):
        # --fetch and --format choose how the shaders fetch: refused on cpu, before any work.
        out = self.w.path("out.npy")
        for args in (["sample", self.f2, self.p2, out, "--fetch", "otf"],
                     ["sample", self.f2, self.p2, out, "--format", "r16f"],
                     ["resample", self.f2, out, "--zoom", 2, "--fetch", "precise"]):
            self.check_fails(args, out, "needs --backend gl")
        for args in (["sample", self.f2, self.p2, out, "--backend", "gl", "--fetch", "cubic"],
                     ["sample", self.f2, self.p2, out, "--backend", "gl", "--format", "rgba8"]):
            self.check_fails(args, out)

    def test_gl_refusals_before_any_gl_work(self):
        # Combinations the gl backend cannot do fail with one line whether or not this machine
        # has GL: they are checked before a context is created. (Without the GL layer in the
        # build every one of them says that instead.)
        gl_built = json.loads(TOOL.ok("info", "--json").stdout)["gl"]["compiled"]
        out = self.w.path("out.npy")
        cases = [
            (["prefilter", self.f2, out, "--backend", "gl"], "does not prefilter on the GPU"),
            (["sample", self.f2, self.p2, out, "--backend", "gl", "--precision", "double"],
             "single precision"),
            (["sample", self.f2, self.p2, out, "--backend", "gl", "--degree", 5],
             "--degree 3"),
            (["sample", self.f2, self.p2, out, "--backend", "gl", "--fetch", "precise",
              "--degree", 2], "--degree 3"),
            (["sample", self.f2, self.p2, out, "--backend", "gl", "--fetch", "linear",
              "--degree", 3], "degree 1"),
            (["sample", self.f2, self.p2, out, "--backend", "gl", "--fetch", "lut",
              "--derivative", 0], "no derivative"),
            (["sample", self.f2, self.p2, out, "--backend", "gl", "--fetch", "linear",
              "--derivative", 1], "no derivative"),
            (["sample", self.f2, self.p2, out, "--backend", "gl", "--fetch", "nearest",
              "--derivative", 1], "no derivative"),
            (["resample", self.f2, out, "--zoom", 2, "--backend", "gl", "--method", "quintic"],
             "cubic B-splines only"),
            (["resample", self.f2, out, "--zoom", 2, "--backend", "gl", "--method", "septic"],
             "cubic B-splines only"),
            (["resample", self.f2, out, "--zoom", 2, "--backend", "gl", "--fetch", "linear"],
             "--method linear"),
            (["resample", self.f2, out, "--zoom", 2, "--backend", "gl", "--method", "linear",
              "--fetch", "otf"], "--method cubic only"),
            (["resample", self.f2, out, "--zoom", 2, "--backend", "gl", "--precision",
              "double"], "single precision"),
        ]
        for args, message in cases:
            if not gl_built and args[0] != "prefilter":
                message = "not built"
            self.check_fails(args, out, message)

    def test_gl_without_a_context_fails_with_one_line(self):
        # No EGL vendor library: the context cannot be created. The command fails with the
        # context's own reason on one line, and info reports it.
        if not json.loads(TOOL.ok("info", "--json").stdout)["gl"]["compiled"]:
            self.skipTest("splinetool built without the GL layer")
        no_gl = {"__EGL_VENDOR_LIBRARY_FILENAMES": self.w.path("no_such_vendor.json")}
        out = self.w.path("out.npy")
        for args in (["sample", self.f2, self.p2, out, "--backend", "gl"],
                     ["resample", self.f2, out, "--zoom", 2, "--backend", "gl"]):
            before = self.w.listing()
            r = TOOL.run(*args, env=no_gl)
            self.assertEqual(r.returncode, 1, r.stderr)
            lines = r.stderr.splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertTrue(lines[0].startswith("splinetool: --backend gl: no OpenGL 4.5 "
                                                "context: "), lines[0])
            self.assertEqual(self.w.listing(), before)
        j = json.loads(TOOL.run("info", "--json", env=no_gl).stdout)
        self.assertFalse(j["gl"]["works"])
        self.assertTrue(j["gl"]["none_reason"])

    def test_command_line_errors(self):
        for args in ([], ["frobnicate"], ["--frobnicate"], ["prefilter"],
                     ["compare", self.f2], ["compare", self.f2, self.f3],
                     ["compare", self.f3, self.f3, "--disc", 0.3], ["info", "extra"]):
            self.check_fails(args)
        r = self.check_fails(["prefilter", self.f2, self.w.path("out.npy"), "--frobnicate"])
        self.assertIn("--frobnicate", r.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_contract.py PATH/TO/splinetool [unittest args]")
    TOOL = Tool(sys.argv[1], leak_every=1)  # every run leak-checked: error paths
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
