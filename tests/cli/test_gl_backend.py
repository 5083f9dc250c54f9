#!/usr/bin/env python3
"""Contract tests of `splinetool --backend gl` (the GLSL fetches in a headless EGL context).

Usage: test_gl_backend.py PATH/TO/splinetool [unittest args]
Skips (exit 77, "SKIP: reason") when splinetool has no GL layer or no GL context can be created.
Checks that sample through every fetch flavour agrees with --backend cpu on the same float
coefficients at the same (float32) positions, within stated bounds:
  precise                       1e-6 of the data range (point fetches, fma blends: float rounding)
  otf, cubic-unfiltered, linear d * 2^-8 of the texture's value range (the coefficients for otf,
                                the samples otherwise), d the spatial rank: hardware filtering
                                computes each of the d lerp weights with 8 fraction bits on NVIDIA
  lut                           d * 2^-7 of the coefficient range (the same plus the 128-texel
                                half-float weight table)
  nearest                       identical except at rounding ties (< 1 % of the positions)
(each plus 1e-6 of the data range for float rounding) and prints the measured errors (Mesa's
llvmpipe filters in float and stays far below them); derivatives likewise; output shapes and dtypes equal those of
--backend cpu --precision single; resample (zoom, rotate, --repeat) agrees with the CPU; JSON
reports fetch, format and gpu_ms; texture formats (r16f, r16) and their refusals; errors are one
line with OUT untouched.
"""
import json
import os
import sys
import unittest

import numpy as np

from cli_util import Tool, Workdir, load

TOOL = None  # set in __main__

# Bound = RELATIVE[f] * data range + rank * HARDWARE[f] * texture value range (see above).
RELATIVE = {"precise": 1e-6, "otf": 1e-6, "cubic-unfiltered": 1e-6, "linear": 1e-6, "lut": 1e-6}
HARDWARE = {"precise": 0.0, "otf": 2.0 ** -8, "cubic-unfiltered": 2.0 ** -8, "linear": 2.0 ** -8,
            "lut": 2.0 ** -7}
PREFILTERED = ("lut", "otf", "precise")
# The CPU options that compute the same spline as each flavour (on the same float data).
CPU_EQUIVALENT = {"precise": [], "otf": [], "lut": [],
                  "cubic-unfiltered": ["--degree", 3, "--no-prefilter"],
                  "linear": ["--degree", 1], "nearest": ["--degree", 0]}
MEASURED = []  # (what, value) lines printed at the end


def rng(seed):
    return np.random.default_rng(seed)


def value_span(tool_workdir, data_path, data, fetch, boundary, channels):
    """max - min of what the texture holds for `fetch`: the float coefficients (computed by the
    cpu backend with the same boundary) for the prefiltered flavours, else the samples."""
    if fetch not in PREFILTERED:
        return float(data.max() - data.min())
    c = tool_workdir.path("coefficients.npy")
    TOOL.ok("prefilter", data_path, c, "--precision", "single", "--boundary", boundary,
            *(["--channels"] if channels else []))
    coeffs = load(c)
    return float(coeffs.max() - coeffs.min())


def bound(fetch, rank, data_span, texture_span):
    return RELATIVE[fetch] * data_span + rank * HARDWARE[fetch] * texture_span


def float32_positions(generator, shape, m, lo=-2.0, hi_offset=2.0):
    """m positions uniform in [lo, N - 1 + hi_offset] per axis, exactly representable in float32
    (the GPU receives float32; the CPU then evaluates at the very same points)."""
    cols = [generator.uniform(lo, n - 1 + hi_offset, m) for n in shape]
    p = np.stack(cols, axis=-1).astype(np.float32)
    return p[:, 0] if len(shape) == 1 else p


class Base(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()

    def tearDown(self):
        self.w.close()

    def sample(self, data_path, coords_path, name, *args):
        out = self.w.path(name)
        TOOL.ok("sample", data_path, coords_path, out, *args)
        return load(out)


class SampleAgreesWithCpu(Base):
    CASES = [((40,), False, 1.0), ((23, 31), False, 1.0), ((9, 11, 13), False, 1.0),
             ((12, 10, 3), True, 1.0), ((17, 19), False, 250.0)]

    def run_cases(self, cases):
        """Each case (shape, channels, scale, fetch, boundary, seed, extra): random data and
        float32 positions from `seed`, sampled with --backend gl --fetch FETCH and with the CPU
        equivalent in single precision (and, for the prefiltered flavours, the CPU's float
        coefficients for the texture's value range), all through one `splinetool batch`
        process (the GL commands share its context). Returns (gl, cpu, data range, texture
        value range, rank) a case."""
        commands, done = [], []
        for k, (shape, channels, scale, fetch, boundary, seed, extra) in enumerate(cases):
            g = rng(seed)
            data = g.random(shape) * scale - 0.25 * scale
            spatial = shape[:-1] if channels else shape
            coords = float32_positions(g, spatial, 400)
            f, p = self.w.save("f%d.npy" % k, data), self.w.save("p%d.npy" % k, coords)
            ch = ["--channels"] if channels else []
            common = ["--boundary", boundary] + ch + list(extra)
            gl, cpu, coef = (self.w.path("%s%d.npy" % (n, k)) for n in ("gl", "cpu", "coef"))
            commands += [["sample", f, p, gl, "--backend", "gl", "--fetch", fetch, *common],
                         ["sample", f, p, cpu, "--precision", "single",
                          *(CPU_EQUIVALENT[fetch] + common)]]
            if fetch in PREFILTERED:  # value_span's coefficients
                commands.append(["prefilter", f, coef, "--precision", "single", "--boundary",
                                 boundary, *ch])
            done.append((fetch, data, gl, cpu, coef, len(spatial)))
        TOOL.ok_all(commands)
        results = []
        for fetch, data, gl, cpu, coef, rank in done:
            got, want = load(gl), load(cpu)
            self.assertEqual((got.shape, got.dtype), (want.shape, want.dtype))
            span = float(data.max() - data.min())
            if fetch == "nearest":
                tex_span = 0
            elif fetch in PREFILTERED:
                c = load(coef)
                tex_span = float(c.max() - c.min())
            else:
                tex_span = span
            results.append((got, want, span, tex_span, rank))
        return results

    def test_flavours_agree_with_cpu_on_the_same_coefficients(self):
        seed = 100
        cases = []
        for fetch in ("precise", "otf", "lut", "cubic-unfiltered", "linear"):
            for boundary in ("reflect", "mirror", "periodic"):
                for shape, channels, scale in self.CASES:
                    seed += 1
                    cases.append((shape, channels, scale, fetch, boundary, seed, ()))
        results = iter(self.run_cases(cases))
        for fetch in ("precise", "otf", "lut", "cubic-unfiltered", "linear"):
            worst, worst_ratio = 0.0, 0.0
            for boundary in ("reflect", "mirror", "periodic"):
                for shape, channels, scale in self.CASES:
                    got, want, span, tex_span, rank = next(results)
                    err = np.abs(got - want).max()
                    limit = bound(fetch, rank, span, tex_span)
                    worst = max(worst, err / span)
                    worst_ratio = max(worst_ratio, err / limit)
                    self.assertLessEqual(err, limit, "%s %s %s: %.3g of the data range" %
                                         (fetch, boundary, shape, err / span))
            MEASURED.append(("sample %s vs cpu single: max |error| / data range" % fetch, worst))
            MEASURED.append(("sample %s vs cpu single: max |error| / bound" % fetch, worst_ratio))

    def test_nearest_agrees_except_at_ties(self):
        seed = 200
        cases = []
        for boundary in ("reflect", "mirror", "periodic"):
            for shape, channels, scale in self.CASES:
                seed += 1
                cases.append((shape, channels, scale, "nearest", boundary, seed, ()))
        for (shape, _, _, _, boundary, _, _), (got, want, _, _, _) in zip(
                cases, self.run_cases(cases)):
            differ = np.mean(got != want)
            self.assertLess(differ, 0.01, "nearest %s %s" % (boundary, shape))

    def test_precise_against_double_precision(self):
        # Against the all-double CPU path the float prefilter's own rounding adds to the GPU's.
        worst = 0.0
        for i, (shape, channels, scale) in enumerate(self.CASES):
            g = rng(300 + i)
            data = g.random(shape) * scale
            spatial = shape[:-1] if channels else shape
            f = self.w.save("f.npy", data)
            p = self.w.save("p.npy", float32_positions(g, spatial, 400))
            ch = ["--channels"] if channels else []
            got = self.sample(f, p, "gl.npy", "--backend", "gl", "--fetch", "precise", *ch)
            want = self.sample(f, p, "cpu.npy", *ch)
            worst = max(worst, np.abs(got - want).max() / (data.max() - data.min()))
        MEASURED.append(("sample precise vs cpu double, max |error| / data range (bound 4e-6)",
                         worst))
        self.assertLessEqual(worst, 4e-6)

    def test_derivatives_agree_with_cpu(self):
        seed = 400
        # Bounds: precise 1e-5 of the data range; the hardware-filtered ones d * 2^-7 of the
        # texture's value range (the derivative blends differences of filtered fetches).
        cases = []
        for fetch in ("precise", "otf", "cubic-unfiltered"):
            for shape, channels, scale in self.CASES[:4]:
                spatial = shape[:-1] if channels else shape
                for axis in range(len(spatial)):
                    seed += 1
                    cases.append((shape, channels, scale, fetch, "reflect", seed,
                                  ["--derivative", axis]))
        results = iter(self.run_cases(cases))
        for fetch in ("precise", "otf", "cubic-unfiltered"):
            worst, worst_ratio = 0.0, 0.0
            for shape, channels, scale in self.CASES[:4]:
                spatial = shape[:-1] if channels else shape
                for axis in range(len(spatial)):
                    got, want, span, tex_span, rank = next(results)
                    err = np.abs(got - want).max()
                    limit = 1e-5 * span + 2 * rank * HARDWARE[fetch] * tex_span
                    worst = max(worst, err / span)
                    worst_ratio = max(worst_ratio, err / limit)
                    self.assertLessEqual(err, limit, (fetch, shape, axis))
            MEASURED.append(("derivative %s vs cpu single: max |error| / data range" % fetch,
                             worst))
            MEASURED.append(("derivative %s vs cpu single: max |error| / bound" % fetch,
                             worst_ratio))

    def test_samples_are_interpolated(self):
        # The prefiltered flavours reproduce the samples at the sample positions.
        data = rng(500).random((13, 17))
        grid = np.stack(np.meshgrid(np.arange(13.0), np.arange(17.0), indexing="ij"),
                        axis=-1).reshape(-1, 2).astype(np.float32)
        f, p = self.w.save("f.npy", data), self.w.save("p.npy", grid)
        for fetch in PREFILTERED:
            v = self.sample(f, p, "v.npy", "--backend", "gl", "--fetch", fetch)
            err = np.abs(v - data.reshape(-1)).max()
            MEASURED.append(("%s at the sample positions: max |s(k) - f[k]|" % fetch, err))
            limit = bound(fetch, 2, 1.0, value_span(self.w, f, data, fetch, "reflect", False))
            # Plus the float prefilter's own rounding (a few ulp of the coefficients).
            self.assertLessEqual(err, limit + 2e-6, fetch)


class ShapesAndReports(Base):
    def test_sample_shapes_and_dtypes_equal_cpu(self):
        commands, pairs = [], []
        for shape, channels in [((9,), False), ((6, 7), False), ((4, 5, 6), False),
                                ((6, 7, 3), True), ((3, 4, 5, 2), True)]:
            spatial = shape[:-1] if channels else shape
            f = self.w.save("f%d.npy" % len(pairs), rng(1).random(shape))
            ch = ["--channels"] if channels else []
            coord_sets = [float32_positions(rng(2), spatial, 11)]
            if len(spatial) == 1:
                coord_sets.append(coord_sets[0].reshape(-1, 1))
            for coords in coord_sets:
                p = self.w.save("p%d.npy" % len(pairs), coords)
                for fetch in ("nearest", "linear", "cubic-unfiltered", "lut", "otf", "precise"):
                    g, c = (self.w.path("%s%d.npy" % (n, len(pairs))) for n in "gc")
                    commands += [["sample", f, p, g, "--backend", "gl", "--fetch", fetch, *ch],
                                 ["sample", f, p, c, *ch]]
                    pairs.append((g, c, shape, fetch))
        TOOL.ok_all(commands)  # one batch process; the GL commands share its context
        for g, c, shape, fetch in pairs:
            got, want = load(g), load(c)
            self.assertEqual((got.shape, got.dtype), (want.shape, want.dtype), (shape, fetch))

    def test_resample_shapes_dtypes_and_values_equal_cpu(self):
        worst = {}
        commands, cases = [], []
        for shape, factor, extra in [((10, 14), 1.5, []), ((4, 5, 6), 2, []),
                                     ((10, 14, 3), 0.5, ["--channels"]), ((9,), 3, []),
                                     ((16, 12), 1, []),
                                     # N x F on a half: 2.5 -> 2 and 3.5 -> 4 on every backend
                                     ((5, 7), 0.5, [])]:
            k = len(cases)
            x = self.w.save("x%d.npy" % k, rng(3).random(shape))
            for method, fetch in [("cubic", "precise"), ("cubic", "otf"), ("cubic", "lut"),
                                  ("linear", None), ("cubic-unfiltered", None)]:
                k = len(cases)
                g, c, coef = (self.w.path("%s%d.npy" % (n, k)) for n in ("g", "c", "coef"))
                gl_args = ["--backend", "gl", "--method", method] + (
                    ["--fetch", fetch] if fetch else [])
                commands.append(["resample", x, g, "--zoom", factor, *(gl_args + extra)])
                # the GL backend point-samples: so does the CPU with --point-sample
                commands.append(["resample", x, c, "--zoom", factor, "--method", method,
                                 "--precision", "single", "--point-sample", *extra])
                key = fetch or method
                if key in PREFILTERED:  # value_span's coefficients
                    commands.append(["prefilter", x, coef, "--precision", "single",
                                     "--boundary", "reflect", *extra])
                cases.append((x, g, c, coef, shape, factor, extra, key))
        TOOL.ok_all(commands)  # one batch process; the GL commands share its context
        for x, g_path, c_path, coef, shape, factor, extra, key in cases:
            g, c = load(g_path), load(c_path)
            self.assertEqual((g.shape, g.dtype), (c.shape, c.dtype), (shape, factor, key))
            err = np.abs(g.astype(float) - c).max()
            worst[key] = max(worst.get(key, 0.0), err)
            data = load(x)
            rank = len(shape) - (1 if extra else 0)
            if key in PREFILTERED:
                co = load(coef)
                tex_span = float(co.max() - co.min())
            else:
                tex_span = float(data.max() - data.min())
            limit = bound(key, rank, 1.0, tex_span)
            self.assertLessEqual(err, limit, (shape, factor, key))
        for key, v in worst.items():
            MEASURED.append(("resample --zoom %s vs cpu single, max |error|" % key, v))

    def test_rotation_and_repeat(self):
        x = self.w.save("x.npy", rng(4).random((21, 17)))
        for fetch in ("precise", "otf"):
            args = ["--rotate", 10, "--backend", "gl", "--fetch", fetch]
            TOOL.ok("resample", x, self.w.path("k.npy"), "--repeat", 3, *args)
            prev = x
            for k in range(3):
                nxt = self.w.path("step%d.npy" % k)
                TOOL.ok("resample", prev, nxt, *args)
                prev = nxt
            np.testing.assert_array_equal(load(self.w.path("k.npy")), load(prev), fetch)
            TOOL.ok("resample", x, self.w.path("c.npy"), "--rotate", 10, "--repeat", 3,
                    "--precision", "single")
            err = np.abs(load(self.w.path("k.npy")).astype(float) - load(self.w.path("c.npy"))).max()
            MEASURED.append(("resample --rotate 10 --repeat 3 %s vs cpu single, max |error|"
                             % fetch, err))
            # Three steps, each within the one-step bound of the coefficients it resamples.
            limit = 3 * bound(fetch, 2, 1.0, value_span(self.w, x, load(x), fetch, "reflect", False))
            self.assertLessEqual(err, limit, fetch)

    def check_gpu_ms(self, j):
        # The timer-query time of the passes, or null on a software renderer (Mesa llvmpipe's
        # timer results are not the draws' time) or when the driver's timer gave an implausible
        # value (longer than the call it timed).
        if j["gpu_ms"] is None:
            MEASURED.append(("%s: GL timer not used here (gpu_ms null)" % j["command"], 0.0))
        else:
            self.assertGreaterEqual(j["gpu_ms"], 0.0)
            self.assertLessEqual(j["gpu_ms"], j["seconds"] * 1e3 + 1.0)

    def test_json_reports_fetch_format_and_gpu_time(self):
        f = self.w.save("f.npy", rng(5).random((8, 9)))
        p = self.w.save("p.npy", float32_positions(rng(6), (8, 9), 20))
        j = json.loads(TOOL.ok("sample", f, p, self.w.path("v.npy"), "--backend", "gl",
                               "--json").stdout)
        self.assertEqual((j["backend"], j["fetch"], j["format"], j["precision"], j["degree"],
                          j["prefilter"]), ("gl", "otf", "r32f", "single", 3, True))
        self.check_gpu_ms(j)
        j = json.loads(TOOL.ok("sample", f, p, self.w.path("v.npy"), "--backend", "gl",
                               "--fetch", "linear", "--format", "r16f", "--json").stdout)
        self.assertEqual((j["fetch"], j["format"], j["degree"], j["prefilter"]),
                         ("linear", "r16f", 1, False))
        j = json.loads(TOOL.ok("resample", f, self.w.path("r.npy"), "--zoom", 2, "--backend",
                               "gl", "--method", "nearest", "--json").stdout)
        self.assertEqual((j["backend"], j["method"], j["fetch"], j["format"]),
                         ("gl", "nearest", "nearest", "r32f"))
        self.check_gpu_ms(j)
        j = json.loads(TOOL.ok("sample", f, p, self.w.path("v.npy"), "--json").stdout)
        self.assertEqual((j["backend"], j["fetch"], j["format"], j["gpu_ms"]),
                         ("cpu", None, None, None))

    def test_silent_without_json(self):
        f = self.w.save("f.npy", rng(7).random((8, 9)))
        p = self.w.save("p.npy", float32_positions(rng(8), (8, 9), 20))
        r = TOOL.ok("sample", f, p, self.w.path("v.npy"), "--backend", "gl")
        self.assertEqual((r.stdout, r.stderr), ("", ""))


class Formats(Base):
    def test_half_float_texture(self):
        # R16F keeps 11 significant bits of the coefficients: error about 2^-11 of their size.
        data = rng(9).random((19, 23))
        f = self.w.save("f.npy", data)
        p = self.w.save("p.npy", float32_positions(rng(10), data.shape, 500))
        want = self.sample(f, p, "c.npy", "--precision", "single")
        got = self.sample(f, p, "g.npy", "--backend", "gl", "--fetch", "precise", "--format", "r16f")
        err = np.abs(got - want).max()
        MEASURED.append(("precise r16f vs cpu single, max |error| (data in [0, 1])", err))
        self.assertLess(err, 4e-3)
        self.assertGreater(err, 1e-6, "r16f really stores half floats")

    def test_r16_for_unfiltered_data_in_unit_range(self):
        data = rng(11).random((9, 10))
        f = self.w.save("f.npy", data)
        p = self.w.save("p.npy", float32_positions(rng(12), data.shape, 200))
        want = self.sample(f, p, "c.npy", "--degree", 1, "--precision", "single")
        got = self.sample(f, p, "g.npy", "--backend", "gl", "--fetch", "linear", "--format", "r16")
        err = np.abs(got - want).max()
        MEASURED.append(("linear r16 vs cpu single, max |error|", err))
        # The linear bound on data in [0, 1] plus half a unit of the 16-bit storage.
        self.assertLess(err, bound("linear", 2, 1.0, 1.0) + 2.0 ** -17)


class Failures(Base):
    def check_fails(self, args, out, message):
        sentinel = b"pre-existing output, must stay byte-identical\n"
        for existing in (False, True):
            if os.path.exists(out):
                os.remove(out)
            if existing:
                with open(out, "wb") as fh:
                    fh.write(sentinel)
            before = self.w.listing()
            r = TOOL.run(*args)
            what = " ".join(str(a) for a in args)
            self.assertNotEqual(r.returncode, 0, what)
            lines = r.stderr.splitlines()
            self.assertEqual(len(lines), 1, "%s: stderr %r" % (what, r.stderr))
            self.assertTrue(lines[0].startswith("splinetool: "), lines[0])
            self.assertIn(message, lines[0], what)
            self.assertEqual(self.w.listing(), before, what)
            if existing:
                with open(out, "rb") as fh:
                    self.assertEqual(fh.read(), sentinel, what)
            if os.environ.get("SPLINETOOL_SHOW_ERRORS"):
                print("   ", lines[0])

    def test_r16_refusals(self):
        unit = self.w.save("unit.npy", rng(13).random((6, 7)))
        wide = self.w.save("wide.npy", rng(14).random((6, 7)) * 3 - 1)
        p = self.w.save("p.npy", float32_positions(rng(15), (6, 7), 5))
        out = self.w.path("out.npy")
        # Prefiltered coefficients overshoot [0, 1] even for data inside it.
        self.check_fails(["sample", unit, p, out, "--backend", "gl", "--format", "r16"], out,
                         "B-spline coefficients span")
        self.check_fails(["sample", wide, p, out, "--backend", "gl", "--format", "r16",
                          "--fetch", "linear"], out, "samples span")
        self.check_fails(["resample", wide, out, "--zoom", 2, "--backend", "gl", "--format", "r16",
                          "--method", "nearest"], out, "[0, 1]")

    def test_bad_inputs_fail_cleanly_on_gl(self):
        f3 = self.w.save("f3.npy", rng(16).random((4, 5, 6)))
        f2 = self.w.save("f2.npy", rng(17).random((6, 7)))
        p2 = self.w.save("p2.npy", rng(18).uniform(0, 5, (4, 2)))
        out = self.w.path("out.npy")
        self.check_fails(["sample", f3, p2, out, "--backend", "gl"], out, "shape")
        self.check_fails(["sample", f2, p2, out, "--backend", "gl", "--derivative", 2], out,
                         "derivative")
        self.check_fails(["resample", f3, out, "--rotate", 10, "--backend", "gl"], out, "2-D")


def main():
    global TOOL
    if len(sys.argv) < 2:
        sys.exit("usage: test_gl_backend.py PATH/TO/splinetool [unittest args]")
    TOOL = Tool(sys.argv[1])
    info = json.loads(TOOL.ok("info", "--json").stdout)["gl"]
    if not info["compiled"]:
        print("SKIP: splinetool was built without the GL layer (SPLINEVIEW_BUILD_VIEWER=OFF)")
        sys.exit(77)
    if not info["works"]:
        print("SKIP: no OpenGL 4.5 context here: %s" % info["none_reason"])
        sys.exit(77)
    print("GL: %s (EGL %s)" % (info["description"], info["platform"]))
    prog = unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2, exit=False)
    print("\nmeasured:")
    for what, value in MEASURED:
        print("  %-80s %.3g" % (what, value))
    sys.exit(0 if prog.result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
