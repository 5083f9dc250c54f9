#!/usr/bin/env python3
"""Contract tests of `splinetool --backend cuda` (the prefilter and reconstruction kernels).

Usage: test_cuda_backend.py PATH/TO/splinetool contract|device [unittest args]

contract (runs everywhere, CI included): with no CUDA device visible (CUDA_VISIBLE_DEVICES=""
  hides those of a GPU machine), every `--backend cuda` command exits 1 with exactly one line
  naming --backend cuda and the reason `splinetool info` gives, before it reads IN, and OUT is
  neither created nor changed (a pre-existing OUT stays byte-identical); fetch and format names
  that cuda does not have are refused the same way; info still reports the reason.
device (skips, exit 77, "SKIP: reason", where `splinetool info` lists no CUDA device): against
  --backend cpu, with the bounds
    prefilter                     16 float ulp of max |coefficient| (cpu single and cpu double)
    sample precise                2e-6 of the data range against the cpu double reference
    sample cubic                  + d * 2^-8 of the coefficient range (d = spatial rank)
    sample linear                 + d * 2^-8 of the sample range
      (the texture unit's filter weights have 8 fraction bits on NVIDIA)
    sample nearest                identical except at rounding ties (< 1 % of the positions)
    resample (zoom, rotate)       the same per method, plus d * 2^-24 * max |position| times the
                                  value range for the float rounding of the positions (the
                                  spline's slope is at most the range of what it interpolates)
  and prints the measured errors; refusals that need a device (precision, degree, derivative,
  methods) fail with one line and OUT untouched; JSON reports fetch, format (null) and gpu_ms.
  --out-of-core from file to file (OutOfCoreMapped): .npy of several dtypes (float32 used in
  place, float64, big-endian int16, uint8, float16, Fortran order), raw NRRD (.nrrd, .nhdr),
  NIfTI-1 (scaled int16, float32), --raw data, uncompressed TIFF stacks (uint16, big-endian
  float32) and a .nii.gz and a deflated TIFF (read into memory, one line says so)
  into .npy, .nrrd and .nii outputs, against --backend cpu in double: prefilter within 16 float
  ulp of max |coefficient|, resample within 2e-6 of max |data|; OUT keeps IN's geometry, --json
  says whether IN was mapped, no temporary is left; OUT formats that cannot be written in place
  are refused (exit 2).
The contract part also checks that --out-of-core refuses without a device before it maps IN or
creates anything, and that `info FILE --check-mapped` reads the same files through the map
exactly as the loaders do (that runs here, on the CPU).
"""
import gzip
import json
import os
import struct
import sys
import unittest

import numpy as np

from cli_util import Tool, Workdir, load

TOOL = None  # set in main()
NO_DEVICE = {"CUDA_VISIBLE_DEVICES": ""}  # the CUDA runtime then sees no device
MEASURED = []  # (what, value) lines printed at the end

PRECISE_RELATIVE = 2e-6  # of the data range, against the cpu double reference
HARDWARE = 2.0 ** -8  # per spatial axis, of the texture's value range
PREFILTER_ULP = 16
# The cpu options that compute the spline each cuda fetch evaluates: the double reference, but
# nearest against the same float samples (it returns them unchanged).
CPU_EQUIVALENT = {"precise": [], "cubic": [], "linear": ["--degree", 1],
                  "nearest": ["--degree", 0, "--precision", "single"]}


def rng(seed):
    return np.random.default_rng(seed)


def float32_positions(generator, shape, m, lo=-2.0, hi_offset=2.0):
    """m positions uniform in [lo, N - 1 + hi_offset] per axis, exactly representable in float32
    (the kernels take float32; the CPU then evaluates at the very same points)."""
    cols = [generator.uniform(lo, n - 1 + hi_offset, m) for n in shape]
    p = np.stack(cols, axis=-1).astype(np.float32)
    return p[:, 0] if len(shape) == 1 else p


def span(a):
    return float(np.max(a) - np.min(a))


class Base(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()

    def tearDown(self):
        self.w.close()

    def check_fails(self, args, out, message, env=None, status=1):
        """Runs `args` without OUT and with a pre-existing OUT: exit status `status`, one stderr line
        'splinetool: ...' containing each of `message` (a string or a list), no file created,
        changed or removed. Returns that line."""
        messages = [message] if isinstance(message, str) else list(message)
        sentinel = b"pre-existing output, must stay byte-identical\n"
        for existing in ([False, True] if out else [False]):
            if out and os.path.exists(out):
                os.remove(out)
            if existing:
                with open(out, "wb") as fh:
                    fh.write(sentinel)
            before = self.w.listing()
            r = TOOL.run(*args, env=env)
            what = " ".join(str(a) for a in args)
            self.assertEqual(r.returncode, status, "%s: %r" % (what, r.stderr))
            lines = r.stderr.splitlines()
            self.assertEqual(len(lines), 1, "%s: stderr %r" % (what, r.stderr))
            self.assertTrue(lines[0].startswith("splinetool: "), lines[0])
            for m in messages:
                self.assertIn(m, lines[0], what)
            self.assertEqual(r.stdout, "", what)
            self.assertEqual(self.w.listing(), before, "%s: files changed" % what)
            if existing:
                with open(out, "rb") as fh:
                    self.assertEqual(fh.read(), sentinel, what)
            if os.environ.get("SPLINETOOL_SHOW_ERRORS"):
                print("   ", lines[0])
        return lines[0]


# ----------------------------------------------------------------------------------------------
# volume files written byte by byte (numpy only), for the --out-of-core file-to-file path

NIFTI_CODES = {np.dtype(np.uint8): 2, np.dtype(np.int16): 4, np.dtype(np.float32): 16,
               np.dtype(np.uint16): 512, np.dtype(np.float64): 64}
NRRD_TYPES = {np.dtype(np.uint8): "uchar", np.dtype(np.int16): "short",
              np.dtype(np.uint16): "ushort", np.dtype(np.float32): "float",
              np.dtype(np.float64): "double"}
# An oriented affine (RAS+, i j k = x y z index columns) for the NIfTI and NRRD inputs.
AFFINE = [[0.0, 0.5, 0.0, 10.0], [-0.75, 0.0, 0.1, -20.0], [0.0, 0.0, 2.5, 30.0]]


def nifti_bytes(a, slope=0.0, inter=0.0, big_endian=False):
    """A NIfTI-1 single file of `a` (array order z, y, x) with the sform AFFINE, scl_slope and
    scl_inter."""
    e = ">" if big_endian else "<"
    h = bytearray(352)
    dims = list(reversed(a.shape))
    struct.pack_into(e + "i", h, 0, 348)
    struct.pack_into(e + "8h", h, 40, len(dims), *(dims + [1] * (7 - len(dims))))
    struct.pack_into(e + "hh", h, 70, NIFTI_CODES[a.dtype], 8 * a.dtype.itemsize)
    struct.pack_into(e + "8f", h, 76, 1.0, 0.75, 0.5, 2.5, 1, 1, 1, 1)
    struct.pack_into(e + "3f", h, 108, 352.0, slope, inter)
    h[123] = 2  # mm
    struct.pack_into(e + "h", h, 254, 1)  # sform_code
    struct.pack_into(e + "12f", h, 280, *(AFFINE[0] + AFFINE[1] + AFFINE[2]))
    h[344:348] = b"n+1\0"
    return bytes(h) + a.astype(a.dtype.newbyteorder(e)).tobytes()


def nrrd_header(a, big_endian=False, data_file=None):
    """A NRRD header for `a` with raw data and the space of AFFINE (written in LPS)."""
    dirs = " ".join("(%r,%r,%r)" % (-AFFINE[0][c], -AFFINE[1][c], AFFINE[2][c])
                    for c in range(a.ndim))
    text = ("NRRD0004\ntype: %s\ndimension: %d\nsizes: %s\nendian: %s\nencoding: raw\n"
            "space: left-posterior-superior\nspace directions: %s\nspace origin: (%r,%r,%r)\n" %
            (NRRD_TYPES[a.dtype], a.ndim, " ".join(str(n) for n in reversed(a.shape)),
             "big" if big_endian else "little", dirs, -AFFINE[0][3], -AFFINE[1][3],
             AFFINE[2][3]))
    return (text + ("data file: %s\n" % data_file if data_file else "\n")).encode()


def out_of_core_inputs(w, shape=(150, 40, 50), seed=21):
    """(name, path, extra arguments, mapped, native float32) for every kind of input the
    file-to-file path takes, written into Workdir `w`."""
    g = rng(seed)
    f = g.random(shape) - 0.25
    i16 = (g.random(shape) * 2000 - 1000).astype(np.int16)
    u8 = (g.random(shape) * 255).astype(np.uint8)
    u16 = (g.random(shape) * 60000).astype(np.uint16)
    cases = [
        ("f32.npy", w.save("f32.npy", f.astype("<f4")), [], True, True),
        ("f64.npy", w.save("f64.npy", f), [], True, False),
        ("i16be.npy", w.save("i16be.npy", i16.astype(">i2")), [], True, False),
        ("u8.npy", w.save("u8.npy", u8), [], True, False),
        ("f16.npy", w.save("f16.npy", f.astype("<f2")), [], True, False),
        ("f32_fortran.npy", w.save("f32_fortran.npy", np.asfortranarray(f.astype("<f4"))), [],
         True, False),
        ("i16be.nrrd", w.write_bytes("i16be.nrrd", nrrd_header(i16, True) +
                                     i16.astype(">i2").tobytes()), [], True, False),
        ("f32.nrrd", w.write_bytes("f32.nrrd", nrrd_header(f.astype("<f4")) +
                                   f.astype("<f4").tobytes()), [], True, None),
        ("u16.nhdr", w.write_bytes("u16.nhdr", nrrd_header(u16, data_file="u16.raw")), [], True,
         False),
        ("i16_scaled.nii", w.write_bytes("i16_scaled.nii", nifti_bytes(i16, 0.5, 100.0)), [],
         True, False),
        ("f32_be.nii", w.write_bytes("f32_be.nii", nifti_bytes(f.astype(np.float32), 0, 0,
                                                               True)), [], True, False),
        ("f32.nii.gz", w.write_bytes("f32.nii.gz", gzip.compress(
            nifti_bytes(f.astype(np.float32)))), [], False, False),
        ("u16be.dat", w.write_bytes("u16be.dat", u16.astype(">u2").tobytes()),
         ["--raw", "%dx%dx%d:u16:be" % shape], True, False),
    ]
    w.write_bytes("u16.raw", u16.astype("<u2").tobytes())
    try:  # TIFF stacks as Fiji and tifffile write them (Debian: python3-tifffile)
        import tifffile
    except ImportError:
        return cases
    tifffile.imwrite(w.path("u16.tif"), u16, photometric="minisblack")
    tifffile.imwrite(w.path("f32_be.tif"), f.astype(">f4"), byteorder=">",
                     photometric="minisblack")
    tifffile.imwrite(w.path("u16_zlib.tif"), u16, photometric="minisblack", compression="zlib")
    cases += [("u16.tif", w.path("u16.tif"), [], True, False),
              ("f32_be.tif", w.path("f32_be.tif"), [], True, False),
              ("u16_zlib.tif", w.path("u16_zlib.tif"), [], False, False)]
    return cases


def no_temporaries(test, w):
    left = [n for n in w.listing() if ".tmp-" in n]
    test.assertEqual(left, [], "temporaries left behind")


# ----------------------------------------------------------------------------------------------
# contract: no device


class NoDevice(Base):
    @classmethod
    def setUpClass(cls):
        j = json.loads(ok_env(NO_DEVICE, "info", "--json").stdout)
        cls.info = j
        cls.reason = j["cuda_none_reason"]

    def setUp(self):
        super().setUp()
        self.f2 = self.w.save("f2.npy", rng(1).random((6, 7)))
        self.f3 = self.w.save("f3.npy", rng(2).random((4, 5, 6)))
        self.p2 = self.w.save("p2.npy", rng(3).uniform(0, 5, (4, 2)).astype(np.float32))

    def test_info_reports_why(self):
        self.assertEqual(self.info["cuda_devices"], [], "CUDA_VISIBLE_DEVICES='' hides devices")
        self.assertTrue(self.reason)
        self.assertIn("cuda", self.info["backends"])
        self.assertEqual(self.info["backends"]["cuda"], self.info["cuda_compiled"])
        r = ok_env(NO_DEVICE, "info")
        self.assertIn("CUDA devices: none (%s)" % self.reason, r.stdout)

    def test_every_command_refuses_and_writes_nothing(self):
        w = self.w
        out, png, nrrd = w.path("out.npy"), w.path("out.png"), w.path("out.nrrd")
        cases = [
            (["prefilter", self.f2, out], out),
            (["prefilter", self.f3, nrrd, "--degree", 5, "--boundary", "mirror"], nrrd),
            (["prefilter", self.f2, out, "--precision", "single"], out),
            (["prefilter", self.f3, out, "--out-of-core", "--memory-budget", 64], out),
            (["resample", self.f3, out, "--zoom", 2, "--out-of-core"], out),
            (["sample", self.f2, self.p2, out], out),
            (["sample", self.f2, self.p2, out, "--fetch", "cubic", "--boundary", "periodic"], out),
            (["sample", self.f2, self.p2, out, "--fetch", "linear"], out),
            (["sample", self.f2, self.p2, out, "--fetch", "nearest", "--no-prefilter"], out),
            (["resample", self.f2, out, "--zoom", 2], out),
            (["resample", self.f3, nrrd, "--zoom", 0.5, "--method", "linear"], nrrd),
            (["resample", self.f2, png, "--rotate", 10, "--repeat", 3], png),
            (["resample", self.f2, out, "--rotate", 360, "--fetch", "cubic"], out),
            (["compare", self.f2, self.f2], None),
            (["info"], None),
        ]
        expected = "splinetool: --backend cuda cannot run here: %s; use --backend cpu" % self.reason
        for args, target in cases:
            line = self.check_fails(args + ["--backend", "cuda"], target,
                                    ["--backend cuda", self.reason], env=NO_DEVICE)
            self.assertEqual(line, expected)

    def test_out_of_core_options(self):
        out = self.w.path("out.npy")
        self.check_fails(["prefilter", self.f3, out, "--out-of-core"], out,
                         ["--out-of-core", "--backend cuda"], status=2)
        self.check_fails(["prefilter", self.f3, out, "--memory-budget", 64], out,
                         ["--memory-budget", "--out-of-core"], status=2)
        self.check_fails(["resample", self.f3, out, "--zoom", 2, "--out-of-core"], out,
                         ["--out-of-core", "--backend cuda"], status=2)
        self.check_fails(["resample", self.f3, out, "--zoom", 2, "--memory-budget", 8], out,
                         ["--memory-budget", "--out-of-core"], status=2)

    def test_out_of_core_refuses_before_mapping_or_writing(self):
        # Mapped and unmapped inputs, every output format: the CUDA sentence first, nothing
        # mapped, converted or created (no temporary), OUT untouched.
        w = self.w
        inputs = {n: (p, extra) for n, p, extra, _, _ in out_of_core_inputs(w, (6, 5, 4))}
        expected = "splinetool: --backend cuda cannot run here: %s; use --backend cpu" % self.reason
        for name in ("f32.npy", "i16_scaled.nii", "f32.nii.gz", "u16.nhdr", "u16be.dat"):
            path, extra = inputs[name]
            for out in ("o.npy", "o.nrrd", "o.nii", "o.tif"):
                target = w.path(out)
                for args in (["prefilter", path, target], ["resample", path, target, "--zoom", 2]):
                    line = self.check_fails(args + extra + ["--backend", "cuda", "--out-of-core"],
                                            target, self.reason, env=NO_DEVICE)
                    self.assertEqual(line, expected)
        no_temporaries(self, w)

    def test_info_check_mapped(self):
        # What --out-of-core maps reads exactly as the loaders read it (shape, dtype, geometry,
        # every value); compressed data is reported as read into memory.
        for name, path, extra, mapped, _ in out_of_core_inputs(self.w, (7, 6, 5)):
            j = json.loads(TOOL.ok("info", path, "--check-mapped", "--json", *extra).stdout)
            self.assertEqual(j["mapped"], mapped, name)
            self.assertEqual(j["mapped_checked"], mapped, name)
            if mapped:
                self.assertIsNone(j["not_mapped_reason"], name)
                self.assertIn("at byte", j["mapped_storage"], name)
            else:
                self.assertIn("compressed", j["not_mapped_reason"], name)
            r = TOOL.ok("info", path, *extra)
            self.assertIn("--out-of-core: " + ("mapped" if mapped else "read into memory"),
                          r.stdout, name)

    def test_refuses_before_reading_or_checking_anything(self):
        # The device is asked for first: a missing IN, a bad OUT extension or an impossible
        # combination all get the CUDA sentence, so no work precedes it.
        w = self.w
        missing = w.path("missing.npy")
        for args, target in [
                (["prefilter", missing, w.path("out.npy")], w.path("out.npy")),
                (["sample", self.f2, missing, w.path("out.npy")], w.path("out.npy")),
                (["sample", self.f2, self.p2, w.path("out.txt")], w.path("out.txt")),
                (["resample", missing, w.path("out.npy"), "--zoom", 2], w.path("out.npy")),
                (["resample", self.f3, w.path("out.npy"), "--rotate", 10], w.path("out.npy")),
                (["sample", self.f2, self.p2, w.path("out.npy"), "--precision", "double"],
                 w.path("out.npy")),
                (["resample", self.f2, w.path("out.npy"), "--zoom", 2, "--method", "septic"],
                 w.path("out.npy"))]:
            self.check_fails(args + ["--backend", "cuda"], target, self.reason, env=NO_DEVICE)

    def test_option_names_are_checked_per_backend(self):
        # Command-line errors: exit status 2 (issue 12).
        out = self.w.path("out.npy")
        for fetch in ("otf", "lut", "cubic-unfiltered"):
            self.check_fails(["sample", self.f2, self.p2, out, "--backend", "cuda", "--fetch",
                              fetch], out, "is not a fetch of --backend cuda", env=NO_DEVICE,
                             status=2)
        self.check_fails(["sample", self.f2, self.p2, out, "--backend", "cuda", "--format",
                          "r16f"], out, "needs --backend gl", env=NO_DEVICE, status=2)
        self.check_fails(["sample", self.f2, self.p2, out, "--fetch", "cubic"], out,
                         "needs --backend gl or cuda", status=2)
        self.check_fails(["sample", self.f2, self.p2, out, "--backend", "gl", "--fetch", "cubic"],
                         out, ["cubic", "gl"], status=2)

    def test_help_names_the_cuda_backend(self):
        for cmd in ("sample", "resample"):
            r = TOOL.ok(cmd, "--help")
            self.assertIn("cuda", r.stdout)
            self.assertIn("precise", r.stdout)


# ----------------------------------------------------------------------------------------------
# device


class DeviceBase(Base):
    def cuda(self, *args):
        return TOOL.ok(*(list(args) + ["--backend", "cuda"]))

    def coefficients(self, data_path, boundary, channels, degree=3):
        """The cpu double coefficients of a file (for the texture value range)."""
        c = self.w.path("coefficients.npy")
        TOOL.ok("prefilter", data_path, c, "--boundary", boundary, "--degree", degree,
                *(["--channels"] if channels else []))
        return load(c)


class Prefilter(DeviceBase):
    SHAPES = [((40,), False, 1.0), ((23, 31), False, 1.0), ((9, 11, 13), False, 1.0),
              ((12, 10, 3), True, 1.0), ((17, 19), False, 250.0), ((1,), False, 1.0),
              ((2, 300), False, 1.0)]

    def test_agrees_with_cpu(self):
        worst_single, worst_double, seed = 0.0, 0.0, 10
        cases = [(3, s) for s in self.SHAPES]
        cases += [(n, self.SHAPES[n % len(self.SHAPES)]) for n in (2, 4, 5, 6, 7)]
        for degree, (shape, channels, scale) in cases:
            for boundary in ("reflect", "mirror", "periodic"):
                seed += 1
                data = rng(seed).random(shape) * scale - 0.25 * scale
                f = self.w.save("f.npy", data)
                common = ["--degree", degree, "--boundary", boundary] + (
                    ["--channels"] if channels else [])
                self.cuda("prefilter", f, self.w.path("g.npy"), *common)
                TOOL.ok("prefilter", f, self.w.path("s.npy"), "--precision", "single", *common)
                TOOL.ok("prefilter", f, self.w.path("d.npy"), *common)
                g, s, d = (load(self.w.path(n)) for n in ("g.npy", "s.npy", "d.npy"))
                self.assertEqual((g.shape, g.dtype), (s.shape, s.dtype))
                ulp = float(np.spacing(np.float32(np.abs(d).max())))
                e_single = float(np.abs(g.astype(float) - s).max()) / ulp
                e_double = float(np.abs(g.astype(float) - d).max()) / ulp
                what = "degree %d %s %s" % (degree, boundary, shape)
                self.assertLessEqual(e_single, PREFILTER_ULP, what)
                self.assertLessEqual(e_double, PREFILTER_ULP, what)
                worst_single, worst_double = max(worst_single, e_single), max(worst_double,
                                                                                e_double)
        MEASURED.append(("prefilter vs cpu single: max |error| in ulp of max |c|", worst_single))
        MEASURED.append(("prefilter vs cpu double: max |error| in ulp of max |c|", worst_double))

    def test_out_of_core_agrees_with_in_memory(self):
        """--out-of-core with a budget that forces slabs: the halo's bound (below float
        precision) plus float rounding of the in-memory result; progress lines on stderr."""
        data = rng(7).random((150, 40, 50))
        f = self.w.save("f.npy", data)
        for boundary in ("mirror", "reflect", "periodic"):
            self.cuda("prefilter", f, self.w.path("g.npy"), "--boundary", boundary)
            r = self.cuda("prefilter", f, self.w.path("o.npy"), "--boundary", boundary,
                          "--out-of-core", "--memory-budget", 2, "--json")
            j = json.loads(r.stdout)
            self.assertGreater(j["out_of_core"]["slabs"], 2, boundary)
            self.assertIn("slices (100%)", r.stderr)
            g, o = load(self.w.path("g.npy")), load(self.w.path("o.npy"))
            ulp = float(np.spacing(np.float32(np.abs(g).max())))
            e = float(np.abs(g.astype(float) - o).max()) / ulp
            self.assertLessEqual(e, PREFILTER_ULP, boundary)
            MEASURED.append(("prefilter --out-of-core vs in memory (%s): max |error| in ulp"
                             % boundary, e))

    def test_degrees_0_and_1_are_the_identity(self):
        data = rng(5).random((5, 7))
        f = self.w.save("f.npy", data)
        for n in (0, 1):
            self.cuda("prefilter", f, self.w.path("c.npy"), "--degree", n)
            np.testing.assert_array_equal(load(self.w.path("c.npy")), data.astype(np.float32))

    def test_json(self):
        f = self.w.save("f.npy", rng(6).random((8, 9)))
        j = json.loads(self.cuda("prefilter", f, self.w.path("c.npy"), "--json").stdout)
        self.assertEqual((j["backend"], j["precision"], j["fetch"], j["format"]),
                         ("cuda", "single", None, None))
        self.assertGreaterEqual(j["gpu_ms"], 0.0)
        self.assertLessEqual(j["gpu_ms"], j["seconds"] * 1e3 + 1.0)


class Sample(DeviceBase):
    CASES = [((40,), False, 1.0), ((23, 31), False, 1.0), ((9, 11, 13), False, 1.0),
             ((12, 10, 3), True, 1.0), ((17, 19), False, 250.0)]

    def run_case(self, shape, channels, scale, fetch, boundary, seed, extra=()):
        g = rng(seed)
        data = g.random(shape) * scale - 0.25 * scale
        spatial = shape[:-1] if channels else shape
        f = self.w.save("f.npy", data)
        p = self.w.save("p.npy", float32_positions(g, spatial, 400))
        common = ["--boundary", boundary] + (["--channels"] if channels else []) + list(extra)
        out = self.w.path("g.npy")
        self.cuda("sample", f, p, out, "--fetch", fetch, *common)
        got = load(out)
        TOOL.ok("sample", f, p, self.w.path("c.npy"), *(CPU_EQUIVALENT[fetch] + common))
        want = load(self.w.path("c.npy"))
        self.assertEqual((got.shape, got.dtype), (want.shape, want.dtype))
        if fetch == "cubic":
            texture = span(self.coefficients(f, boundary, channels))
        else:
            texture = span(data)
        return got, want, span(data), texture, len(spatial)

    def test_fetches_agree_with_cpu(self):
        seed = 100
        for fetch in ("precise", "cubic", "linear"):
            worst, worst_ratio = 0.0, 0.0
            for boundary in ("reflect", "mirror", "periodic"):
                for shape, channels, scale in self.CASES:
                    seed += 1
                    got, want, data_span, tex_span, rank = self.run_case(
                        shape, channels, scale, fetch, boundary, seed)
                    err = float(np.abs(got - want).max())
                    hardware = 0.0 if fetch == "precise" else rank * HARDWARE * tex_span
                    limit = PRECISE_RELATIVE * data_span + hardware
                    worst = max(worst, err / data_span)
                    worst_ratio = max(worst_ratio, err / limit)
                    self.assertLessEqual(err, limit, "%s %s %s: %.3g of the data range" %
                                         (fetch, boundary, shape, err / data_span))
            MEASURED.append(("sample %s vs cpu double: max |error| / data range" % fetch, worst))
            MEASURED.append(("sample %s vs cpu double: max |error| / bound" % fetch, worst_ratio))

    def test_nearest_agrees_except_at_ties(self):
        seed = 200
        for boundary in ("reflect", "mirror", "periodic"):
            for shape, channels, scale in self.CASES[:4]:
                seed += 1
                got, want = self.run_case(shape, channels, scale, "nearest", boundary, seed)[:2]
                self.assertLess(np.mean(got != want), 0.01, "nearest %s %s" % (boundary, shape))

    def test_unfiltered_cubic(self):
        # --no-prefilter evaluates the cubic B-spline on IN as coefficients (cpu: --degree 3
        # --no-prefilter).
        data = rng(250).random((15, 18))
        f = self.w.save("f.npy", data)
        p = self.w.save("p.npy", float32_positions(rng(251), data.shape, 400))
        TOOL.ok("sample", f, p, self.w.path("c.npy"), "--no-prefilter")
        want = load(self.w.path("c.npy"))
        for fetch in ("precise", "cubic"):
            j = json.loads(self.cuda("sample", f, p, self.w.path("g.npy"), "--fetch", fetch,
                                     "--no-prefilter", "--json").stdout)
            self.assertEqual((j["prefilter"], j["degree"]), (False, 3))
            err = float(np.abs(load(self.w.path("g.npy")) - want).max())
            limit = PRECISE_RELATIVE + (0 if fetch == "precise" else 2 * HARDWARE)
            MEASURED.append(("sample %s --no-prefilter vs cpu: max |error| (data in [0, 1])"
                             % fetch, err))
            self.assertLessEqual(err, limit, fetch)

    def test_samples_are_interpolated(self):
        data = rng(500).random((13, 17))
        grid = np.stack(np.meshgrid(np.arange(13.0), np.arange(17.0), indexing="ij"),
                        axis=-1).reshape(-1, 2).astype(np.float32)
        f, p = self.w.save("f.npy", data), self.w.save("p.npy", grid)
        self.cuda("sample", f, p, self.w.path("v.npy"))
        err = float(np.abs(load(self.w.path("v.npy")) - data.reshape(-1)).max())
        MEASURED.append(("precise at the sample positions: max |s(k) - f[k]|", err))
        self.assertLessEqual(err, PRECISE_RELATIVE)

    def test_shapes_dtypes_and_json(self):
        for shape, channels in [((9,), False), ((6, 7), False), ((4, 5, 6), False),
                                ((6, 7, 2), True), ((3, 4, 5, 4), True)]:
            spatial = shape[:-1] if channels else shape
            f = self.w.save("f.npy", rng(1).random(shape))
            ch = ["--channels"] if channels else []
            coord_sets = [float32_positions(rng(2), spatial, 11)]
            if len(spatial) == 1:
                coord_sets.append(coord_sets[0].reshape(-1, 1))
            for coords in coord_sets:
                p = self.w.save("p.npy", coords)
                self.cuda("sample", f, p, self.w.path("g.npy"), *ch)
                got = load(self.w.path("g.npy"))
                TOOL.ok("sample", f, p, self.w.path("c.npy"), *ch)
                want = load(self.w.path("c.npy"))
                self.assertEqual((got.shape, got.dtype), (want.shape, want.dtype), shape)
        f = self.w.save("f.npy", rng(5).random((8, 9)))
        p = self.w.save("p.npy", float32_positions(rng(6), (8, 9), 20))
        r = self.cuda("sample", f, p, self.w.path("v.npy"))
        self.assertEqual((r.stdout, r.stderr), ("", ""), "silent without --json")
        j = json.loads(self.cuda("sample", f, p, self.w.path("v.npy"), "--json").stdout)
        self.assertEqual((j["backend"], j["fetch"], j["format"], j["precision"], j["degree"],
                          j["prefilter"]), ("cuda", "precise", None, "single", 3, True))
        self.assertGreaterEqual(j["gpu_ms"], 0.0)
        self.assertLessEqual(j["gpu_ms"], j["seconds"] * 1e3 + 1.0)
        j = json.loads(self.cuda("sample", f, p, self.w.path("v.npy"), "--fetch", "linear",
                                 "--json").stdout)
        self.assertEqual((j["fetch"], j["degree"], j["prefilter"]), ("linear", 1, False))


class Resample(DeviceBase):
    def bound(self, method, fetch, rank, data, data_path, channels, max_position, boundary):
        data_span = span(data)
        if method == "nearest":
            return None
        if method == "cubic":
            tex_span = span(self.coefficients(data_path, boundary, channels))
        else:
            tex_span = data_span
        hardware = rank * HARDWARE * tex_span if fetch in ("cubic", "linear") else 0.0
        positions = rank * tex_span * 2.0 ** -24 * max_position
        return PRECISE_RELATIVE * data_span + hardware + positions

    def test_zoom_agrees_with_cpu(self):
        worst = {}
        for shape, factor, channels, boundary in [((10, 14), 1.5, False, "reflect"),
                                                  ((4, 5, 6), 2, False, "mirror"),
                                                  ((10, 14, 3), 0.5, True, "periodic"),
                                                  ((9,), 3, False, "mirror"),
                                                  ((16, 12), 1, False, "reflect"),
                                                  ((40, 33), 2.5, False, "reflect")]:
            data = rng(3).random(shape)
            x = self.w.save("x.npy", data)
            ch = ["--channels"] if channels else []
            rank = len(shape) - (1 if channels else 0)
            for method, fetch in [("cubic", "precise"), ("cubic", "cubic"), ("linear", "linear"),
                                  ("cubic-unfiltered", "precise"), ("cubic-unfiltered", "cubic"),
                                  ("nearest", "nearest")]:
                args = ["--zoom", factor, "--method", method, "--boundary", boundary] + ch
                flavour = ["--fetch", fetch] if method.startswith("cubic") else []
                j = json.loads(self.cuda("resample", x, self.w.path("g.npy"), "--json",
                                         *(args + flavour)).stdout)
                self.assertEqual((j["fetch"], j["format"]), (fetch, None))
                # the GPU point-samples a zoom below 1: so does the CPU with --point-sample
                TOOL.ok("resample", x, self.w.path("c.npy"), "--point-sample", *args)
                TOOL.ok("resample", x, self.w.path("s.npy"), "--precision", "single",
                        "--point-sample", *args)
                g, c = load(self.w.path("g.npy")), load(self.w.path("c.npy"))
                s = load(self.w.path("s.npy"))
                self.assertEqual((g.shape, g.dtype), (s.shape, s.dtype), (shape, method))
                key = "%s/%s" % (method, fetch)
                err = float(np.abs(g.astype(float) - c).max())
                limit = self.bound(method, fetch, rank, data, x, channels, max(shape) + 1.0,
                                   boundary)
                if limit is None:
                    self.assertLess(np.mean(g != s), 0.02, (shape, factor, key))
                    continue
                worst[key] = max(worst.get(key, 0.0), err)
                self.assertLessEqual(err, limit, (shape, factor, key, boundary))
        for key, v in sorted(worst.items()):
            MEASURED.append(("resample --zoom %s vs cpu double, max |error| (data in [0, 1])"
                             % key, v))

    def test_rotation_and_repeat(self):
        x = self.w.save("x.npy", rng(4).random((21, 17)))
        for boundary in ("reflect", "mirror", "periodic"):
            for fetch in ("precise", "cubic"):
                args = ["--rotate", 10, "--fetch", fetch, "--boundary", boundary]
                self.cuda("resample", x, self.w.path("k.npy"), "--repeat", 3, *args)
                prev = x
                for k in range(3):
                    nxt = self.w.path("step%d.npy" % k)
                    self.cuda("resample", prev, nxt, *args)
                    prev = nxt
                np.testing.assert_array_equal(load(self.w.path("k.npy")), load(prev), fetch)
                TOOL.ok("resample", x, self.w.path("c.npy"), "--rotate", 10, "--repeat", 3,
                        "--boundary", boundary)
                err = float(np.abs(load(self.w.path("k.npy")).astype(float) -
                                   load(self.w.path("c.npy"))).max())
                MEASURED.append(("resample --rotate 10 --repeat 3 %s %s vs cpu double, max "
                                 "|error|" % (fetch, boundary), err))
                # Three steps, each within the one-step bound of what it resamples.
                limit = 3 * self.bound("cubic", fetch, 2, load(x), x, False, 2 * 21.0, boundary)
                self.assertLessEqual(err, limit, (fetch, boundary))

    def test_photograph(self):
        # The bundled 512 x 512 photograph, one rotation step: the realistic size, where the
        # float rounding of positions near 512 shows.
        ascent = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets",
                              "ascent.png")
        tex_span = span(self.coefficients(ascent, "reflect", False))
        data_span = span(self.coefficients(ascent, "reflect", False, degree=0))  # the samples
        for fetch in ("precise", "cubic"):
            j = json.loads(self.cuda("resample", ascent, self.w.path("g.npy"), "--rotate", 10,
                                     "--fetch", fetch, "--json").stdout)
            TOOL.ok("resample", ascent, self.w.path("c.npy"), "--rotate", 10)
            err = float(np.abs(load(self.w.path("g.npy")).astype(float) -
                               load(self.w.path("c.npy"))).max())
            MEASURED.append(("resample ascent.png --rotate 10 %s vs cpu double, max |error|"
                             % fetch, err))
            MEASURED.append(("resample ascent.png --rotate 10 %s: gpu_ms" % fetch, j["gpu_ms"]))
            # Rotated positions reach 512 / sqrt(2) beyond the centre: below 1024.
            limit = (PRECISE_RELATIVE * data_span + 2 * tex_span * 2.0 ** -24 * 1024 +
                     (2 * HARDWARE * tex_span if fetch == "cubic" else 0.0))
            self.assertLessEqual(err, limit, fetch)


class OutOfCoreResample(DeviceBase):
    def test_agrees_with_cpu_in_slabs(self):
        """--out-of-core --zoom/--shape/--shift with a budget that forces slabs, every mode,
        degrees 1, 3 and 5, against --backend cpu in double: float coefficients (the halo's
        bound is below float precision), 2e-6 of the data range."""
        data = rng(11).random((400, 33, 27))
        f = self.w.save("f.npy", data)
        worst = 0.0
        for mode in ("reflect", "grid-mirror", "mirror", "grid-wrap", "wrap", "nearest",
                     "constant", "grid-constant"):
            for degree, op in ((3, ["--zoom", "1.7,0.8,1.2"]), (5, ["--shape", "90,40,20"]),
                               (1, ["--shift", "2.5,-1.25,0.5"])):
                common = ["--degree", degree, "--mode", mode, "--cval", 0.5] + op
                # nearest and grid-constant pad every axis by their interpolant's tail (35
                # samples per side at order 3): a bigger window per slice.
                budget = 16 if mode in ("nearest", "grid-constant") and degree > 1 else 2
                r = self.cuda("resample", f, self.w.path("g.npy"), *common, "--out-of-core",
                              "--memory-budget", budget, "--json")
                j = json.loads(r.stdout)
                self.assertGreater(j["out_of_core"]["slabs"], 1, mode)
                TOOL.ok("resample", f, self.w.path("c.npy"), "--point-sample", *common)
                g, c = load(self.w.path("g.npy")), load(self.w.path("c.npy"))
                self.assertEqual(g.shape, c.shape)
                e = float(np.abs(g.astype(float) - c).max())
                self.assertLessEqual(e, 2e-6, "%s degree %d %s" % (mode, degree, op))
                worst = max(worst, e)
        MEASURED.append(("resample --out-of-core vs cpu double: max |error| (data in [0, 1])",
                         worst))

    def test_rotate_agrees_with_cpu_in_slabs(self):
        """--out-of-core --rotate in every plane of a volume (with and without --reshape), with
        a budget that forces slabs, against --backend cpu in double (scipy.ndimage.rotate's
        semantics: test_cli checks the CPU against scipy) and, once, against scipy itself."""
        data = rng(14).random((400, 40, 40))
        f = self.w.save("f.npy", data)
        worst = 0.0
        for axes, mode, degree, reshape in (("1,2", "reflect", 3, False),
                                            ("0,2", "constant", 3, True),
                                            ("0,1", "grid-wrap", 1, False),
                                            ("1,2", "nearest", 5, True),
                                            ("0,2", "mirror", 0, False),
                                            ("0,1", "grid-constant", 3, True)):
            common = ["--rotate", 23, "--axes", axes, "--degree", degree, "--mode", mode,
                      "--cval", 0.5] + (["--reshape"] if reshape else [])
            budget = 16 if mode in ("nearest", "grid-constant") and degree > 1 else 1
            r = self.cuda("resample", f, self.w.path("g.npy"), *common, "--out-of-core",
                          "--memory-budget", budget, "--json")
            j = json.loads(r.stdout)
            self.assertGreater(j["out_of_core"]["slabs"], 1, common)
            TOOL.ok("resample", f, self.w.path("c.npy"), *common)
            g, c = load(self.w.path("g.npy")), load(self.w.path("c.npy"))
            self.assertEqual(g.shape, c.shape, common)
            e = float(np.abs(g.astype(float) - c).max())
            if degree == 0:  # the same samples, rounded to float32 (positions bit for bit)
                self.assertTrue(np.array_equal(g, c.astype(np.float32)), common)
            self.assertLessEqual(e, 2e-6, common)
            worst = max(worst, e)
        try:
            from scipy import ndimage
        except ImportError:
            ndimage = None
        if ndimage is not None:
            want = ndimage.rotate(data.astype(np.float32).astype(float), 23, axes=(0, 2),
                                  reshape=True, order=3, mode="constant", cval=0.5)
            self.cuda("resample", f, self.w.path("g.npy"), "--rotate", 23, "--axes", "0,2",
                      "--reshape", "--degree", 3, "--mode", "constant", "--cval", 0.5,
                      "--out-of-core", "--memory-budget", 1)
            g = load(self.w.path("g.npy"))
            self.assertEqual(g.shape, want.shape)
            self.assertLessEqual(float(np.abs(g.astype(float) - want).max()), 2e-6)
        MEASURED.append(("resample --out-of-core --rotate vs cpu double: max |error| (data in "
                         "[0, 1])", worst))

    def test_refusals(self):
        f = self.w.save("f.npy", rng(12).random((20, 21)))
        out = self.w.path("o.npy")
        self.check_fails(["resample", f, out, "--rotate", 10, "--repeat", 2, "--backend", "cuda",
                          "--out-of-core"], out, ["--out-of-core", "--repeat"], status=2)
        tilt = self.w.save("tilt.npy", rng(15).random((300, 128, 128)))
        self.check_fails(["resample", tilt, out, "--rotate", 60, "--axes", "0,2", "--backend",
                          "cuda", "--out-of-core", "--memory-budget", 1], out,
                         ["needs input slices", "budget of 1048576 bytes"], status=1)
        big = self.w.save("big.npy", rng(13).random((50, 200, 200)))
        self.check_fails(["resample", big, out, "--zoom", 2, "--mode", "nearest", "--backend",
                          "cuda", "--out-of-core", "--memory-budget", 1], out,
                         ["budget of 1048576 bytes", "raise the budget"], status=1)


class OutOfCoreMapped(DeviceBase):
    """--out-of-core from file to file: IN mapped (or read into memory where it cannot be),
    OUT written in place."""

    def as_array(self, path, extra=()):
        """A file's values as the loaders give them (prefilter --degree 1 is the identity, in
        double)."""
        out = self.w.path("as_array.npy")
        TOOL.ok("prefilter", path, out, "--degree", 1, *extra)
        return load(out)

    def affine(self, path, extra=()):
        return np.array(json.loads(TOOL.ok("info", path, "--json", *extra).stdout)["affine"])

    def test_prefilter_every_input_into_every_output(self):
        worst = 0.0
        outs = ("o.npy", "o.nrrd", "o.nii")
        for k, (name, path, extra, mapped, _) in enumerate(out_of_core_inputs(self.w)):
            out = self.w.path(outs[k % 3])
            boundary = ("mirror", "reflect", "periodic")[k % 3]
            r = self.cuda("prefilter", path, out, "--boundary", boundary, "--out-of-core",
                          "--memory-budget", 2, "--json", *extra)
            j = json.loads(r.stdout)
            self.assertEqual(j["out_of_core"]["input_mapped"], mapped, name)
            self.assertGreater(j["out_of_core"]["slabs"], 2, name)
            if mapped:
                self.assertFalse(j["out_of_core"]["work_file"], name)
            else:
                self.assertIn("reading it into memory instead", r.stderr, name)
            TOOL.ok("prefilter", path, self.w.path("c.npy"), "--boundary", boundary, *extra)
            want = load(self.w.path("c.npy"))
            got = self.as_array(out)
            self.assertEqual(got.shape, want.shape, name)
            ulp = float(np.spacing(np.float32(np.abs(want).max())))
            e = float(np.abs(got - want).max()) / ulp
            self.assertLessEqual(e, PREFILTER_ULP, name)
            worst = max(worst, e)
            if not out.endswith(".npy") and not name.endswith(".npy") and \
                    not name.endswith(".dat"):
                # OUT keeps IN's geometry (NIfTI-1 holds it as float32).
                np.testing.assert_allclose(self.affine(out), self.affine(path, extra),
                                           rtol=0, atol=1e-5, err_msg=name)
            no_temporaries(self, self.w)
        MEASURED.append(("prefilter --out-of-core file to file vs cpu double: max |error| in ulp "
                         "of max |c|", worst))

    def test_resample_every_input(self):
        worst = 0.0
        outs = ("o.nii", "o.npy", "o.nrrd")
        for k, (name, path, extra, mapped, native) in enumerate(out_of_core_inputs(self.w)):
            out = self.w.path(outs[k % 3])
            mode = ("mirror", "nearest", "grid-wrap")[k % 3]
            common = ["--degree", 3, "--mode", mode, "--zoom", "1.7,0.8,1.2"] + extra
            # nearest pads every axis by its interpolant's tail: a bigger window per slice.
            budget = 16 if mode == "nearest" else 2
            r = self.cuda("resample", path, out, *common, "--out-of-core", "--memory-budget",
                          budget, "--json")
            j = json.loads(r.stdout)
            self.assertEqual(j["out_of_core"]["input_mapped"], mapped, name)
            self.assertGreater(j["out_of_core"]["slabs"], 1, name)
            if mapped and native is not None:
                # float32 in this machine's byte order is used in place; the rest is converted
                # into a work file beside OUT first.
                self.assertEqual(j["out_of_core"]["work_file"], not native, name)
            TOOL.ok("resample", path, self.w.path("c.npy"), "--point-sample", *common)
            want = load(self.w.path("c.npy"))
            got = self.as_array(out)
            self.assertEqual(got.shape, want.shape, name)
            scale = float(np.abs(self.as_array(path, extra)).max())
            e = float(np.abs(got - want).max()) / scale
            self.assertLessEqual(e, 2e-6, name)
            worst = max(worst, e)
            no_temporaries(self, self.w)
        MEASURED.append(("resample --out-of-core file to file vs cpu double: max |error| / "
                         "max |data|", worst))

    def test_refusals_leave_nothing(self):
        w = self.w
        f = w.save("f.npy", rng(22).random((20, 21, 22)))
        for out, message in (("o.tif", ".npy, .nrrd or .nii"), ("o.nii.gz", "gzip"),
                             ("o.nhdr", ".nhdr")):
            for cmd in (["prefilter", f, w.path(out)], ["resample", f, w.path(out), "--zoom", 2]):
                self.check_fails(cmd + ["--backend", "cuda", "--out-of-core"], w.path(out),
                                 ["--out-of-core", message], status=2)
        bad = np.ones((20, 21, 22))
        bad[3, 4, 5] = np.nan
        nan = w.save("nan.npy", bad)
        for out in ("o.npy", "o.nrrd", "o.nii"):
            self.check_fails(["prefilter", nan, w.path(out), "--backend", "cuda",
                              "--out-of-core"], w.path(out), ["nan.npy", "NaN at [3, 4, 5]"])
            self.check_fails(["resample", nan, w.path(out), "--zoom", 2, "--backend", "cuda",
                              "--out-of-core"], w.path(out), ["nan.npy", "NaN at [3, 4, 5]"])
        # Several slabs converted on several threads: the first non-finite value in file order
        # is the one named, whichever thread found which.
        two = np.ones((60, 400, 400))
        two[55, 1, 2] = np.inf
        two[3, 4, 5] = np.nan
        two_path = w.save("two.npy", two)
        self.check_fails(["prefilter", two_path, w.path("o.npy"), "--backend", "cuda",
                          "--out-of-core", "--threads", 4], w.path("o.npy"),
                         ["two.npy", "NaN at [3, 4, 5]"])
        rgb = w.write_bytes("rgb.nrrd", b"NRRD0004\ntype: float\ndimension: 3\nsizes: 3 5 4\n"
                            b"kinds: RGB-color domain domain\nendian: little\nencoding: raw\n\n" +
                            np.zeros(60, "<f4").tobytes())
        self.check_fails(["resample", rgb, w.path("o.npy"), "--zoom", 2, "--backend", "cuda",
                          "--out-of-core"], w.path("o.npy"), ["one channel", "rgb.nrrd"])
        c2 = w.save("c2.npy", np.zeros((10, 12, 2)))
        self.check_fails(["prefilter", c2, w.path("o.nii"), "--channels", "--backend", "cuda",
                          "--out-of-core"], w.path("o.nii"), "one channel")
        no_temporaries(self, w)


class Refusals(DeviceBase):
    def test_what_cuda_cannot_do(self):
        w = self.w
        f2 = w.save("f2.npy", rng(16).random((6, 7)))
        p2 = w.save("p2.npy", float32_positions(rng(18), (6, 7), 4))
        p3 = w.save("p3.npy", float32_positions(rng(18), (4, 5, 6), 4))
        big = w.save("big.npy", np.array([[0.0, 2.0 ** 31]], dtype=np.float64))
        out = w.path("out.npy")
        cases = [
            (["prefilter", f2, out, "--precision", "double"], "single precision"),
            (["sample", f2, p2, out, "--precision", "double"], "single precision"),
            (["sample", f2, p2, out, "--degree", 5], "--degree 3"),
            (["sample", f2, p2, out, "--fetch", "precise", "--degree", 2], "--degree 3"),
            (["sample", f2, p2, out, "--fetch", "linear", "--degree", 3], "degree 1"),
            (["sample", f2, p2, out, "--derivative", 0], "no derivatives"),
            (["sample", f2, p3, out], "shape"),
            (["sample", f2, big, out], "2^30"),
            (["resample", f2, out, "--zoom", 2, "--method", "quintic"], "degree 0, 1 and 3"),
            (["resample", f2, out, "--zoom", 2, "--method", "septic"], "degree 0, 1 and 3"),
            (["resample", f2, out, "--zoom", 2, "--fetch", "linear"], "--method linear"),
            (["resample", f2, out, "--zoom", 2, "--method", "linear", "--fetch", "cubic"],
             "--method cubic or cubic-unfiltered only"),
            (["resample", f2, out, "--zoom", 2, "--precision", "double"], "single precision"),
        ]
        for args, message in cases:
            # Option combinations the backend cannot take are command-line errors (exit 2);
            # what depends on the files (the coordinates' shape and range) fails with 1.
            status = 1 if message in ("shape", "2^30") else 2
            self.check_fails(args + ["--backend", "cuda"], out, message, status=status)


def ok_env(env, *args):
    """TOOL.ok with `env` set on top of this process's environment."""
    r = TOOL.run(*args, env=env)
    if r.returncode != 0:
        raise AssertionError("splinetool %s failed (%d): %s" %
                             (" ".join(str(a) for a in args), r.returncode, r.stderr))
    return r


def main():
    global TOOL
    if len(sys.argv) < 3 or sys.argv[2] not in ("contract", "device"):
        sys.exit("usage: test_cuda_backend.py PATH/TO/splinetool contract|device [unittest args]")
    TOOL = Tool(sys.argv[1])
    part = sys.argv[2]
    if part == "contract":
        print("with CUDA_VISIBLE_DEVICES='': %s" %
              json.loads(ok_env(NO_DEVICE, "info", "--json").stdout)["cuda_none_reason"])
        classes = [NoDevice]
    else:
        info = json.loads(TOOL.ok("info", "--json").stdout)
        if not info["cuda_devices"]:
            print("SKIP: no CUDA device: %s" % info["cuda_none_reason"])
            sys.exit(77)
        for d in info["cuda_devices"]:
            print("CUDA device %d: %s (compute capability %s)" %
                  (d["index"], d["name"], d["compute_capability"]))
        classes = [Prefilter, Sample, Resample, OutOfCoreResample, OutOfCoreMapped, Refusals]
    loader = unittest.TestLoader()
    names = sys.argv[3:]
    if names:
        suite = loader.loadTestsFromNames(names, sys.modules[__name__])
    else:
        suite = unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in classes)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    print("\nmeasured:")
    for what, value in MEASURED:
        print("  %-84s %.3g" % (what, value))
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
