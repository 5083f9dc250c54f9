#!/usr/bin/env python3
"""Hardening of splinetool (issue 12): what it does with non-finite data, an OUT that is one of
its inputs, bad option values, --version, the documented examples, and signals.

Usage: test_hardening.py PATH/TO/splinetool SOURCE_DIR [unittest args]
  SOURCE_DIR: the repository root (assets/ and app/splinetool/README.md are read from it).

The examples convention (app/splinetool/README.md, "Examples"): every line of a fenced ```sh
block there, and every line of `splinetool --help` that starts with "  splinetool ", runs as
written, in order, in an empty folder holding `assets` (a link to the bundled data); the word
`splinetool` stands for the binary under test and `python3` for this interpreter. Lines for
--backend gl / --backend cuda run where that backend works here; upscale-video lines run only
with SPLINETOOL_EXAMPLES_VIDEO=1 (minutes per clip in the sanitizer build), else their command
line is checked (run with a missing IN, the status must be 1: parsed, then the file is missing).
"""
import json
import math
import os
import re
import resource
import shlex
import signal
import subprocess
import sys
import time
import unittest

import numpy as np

from cli_util import Tool, Workdir, load

TOOL = None  # set in __main__
SOURCE = None


def rng(seed):
    return np.random.default_rng(seed)


SENTINEL = b"pre-existing output, must stay byte-identical\n"


class Base(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()

    def tearDown(self):
        self.w.close()

    def fails(self, args, status, parts=(), out=None):
        """Runs `args` (with a pre-existing OUT when `out` is given): exit `status`, exactly one
        stderr line 'splinetool: ...' containing every string of `parts`, nothing on stdout, no
        file created or removed, OUT byte-identical. Returns the line."""
        if out:
            with open(out, "wb") as f:
                f.write(SENTINEL)
        before = self.w.listing()
        r = TOOL.run(*args)
        what = " ".join(str(a) for a in args)
        self.assertEqual(r.returncode, status, "%s: %r" % (what, r.stderr))
        lines = r.stderr.split("\n")
        self.assertEqual(lines[-1], "", "%s: %r" % (what, r.stderr))
        self.assertEqual(len(lines), 2, "%s: %r" % (what, r.stderr))
        self.assertTrue(lines[0].startswith("splinetool: "), lines[0])
        self.assertEqual(r.stdout, "", what)
        for p in parts:
            self.assertIn(p, lines[0], what)
        self.assertEqual(self.w.listing(), before, what)
        if out:
            with open(out, "rb") as f:
                self.assertEqual(f.read(), SENTINEL, what)
        return lines[0]


# ----------------------------------------------------------------------------------------------
# Non-finite data: refused with the count and first index unless --allow-nonfinite.


class NonFinite(Base):
    def setUp(self):
        super().setUp()
        self.clean = rng(1).random((4, 6, 9))
        bad = self.clean.copy()
        bad[0, 5, 7] = np.nan
        bad[2, 1, 3] = np.inf
        bad[3, 5, 8] = np.nan
        self.bad = self.w.save("bad.npy", bad)
        img = rng(2).random((8, 10))
        self.img = self.w.save("img.npy", img)
        img_bad = img.copy()
        img_bad[3, 4] = -np.inf
        self.img_bad = self.w.save("img_bad.npy", img_bad)
        self.p2 = self.w.save("p2.npy", rng(3).uniform(0, 7, (5, 2)))

    def test_every_command_refuses_with_count_and_first_index(self):
        out = self.w.path("out.npy")
        expect = "bad.npy: 3 non-finite values (NaN at [0, 5, 7] first); pass --allow-nonfinite"
        expect_img = "img_bad.npy: 1 non-finite value (-inf at [3, 4] first)"
        p3 = self.w.save("p3.npy", rng(4).uniform(0, 3, (4, 3)))
        for args, parts in [
                (["prefilter", self.bad, out], [expect]),
                (["prefilter", self.bad, out, "--precision", "single"], [expect]),
                (["sample", self.bad, p3, out], [expect]),
                (["resample", self.bad, out, "--zoom", 2], [expect]),
                (["resample", self.img_bad, out, "--rotate", 10], [expect_img]),
                (["resample", self.img, out, "--zoom", 1, "--reference", self.img_bad],
                 [expect_img]),
                (["compare", self.clean_path(), self.bad], [expect]),
                (["compare", self.img_bad, self.img], [expect_img])]:
            self.fails(args, 1, parts, out if args[0] != "compare" else None)

    def clean_path(self):
        return self.w.save("clean.npy", self.clean)

    def test_allow_nonfinite_processes_and_the_nan_spreads(self):
        out = self.w.path("c.npy")
        TOOL.ok("prefilter", self.bad, out, "--allow-nonfinite")
        c = load(out)
        self.assertTrue(np.isnan(c[0, 5, 7]))
        self.assertGreater(np.count_nonzero(~np.isfinite(c)), 3, "the recursion spreads it")
        # Degree 1 is the identity: the values come through exactly, NaN and inf included.
        TOOL.ok("prefilter", self.bad, out, "--allow-nonfinite", "--degree", 1)
        np.testing.assert_array_equal(load(out), load(self.bad))
        TOOL.ok("resample", self.img_bad, out, "--zoom", 2, "--allow-nonfinite")
        self.assertFalse(np.isfinite(load(out)).all())

    def test_compare_never_calls_nan_identical(self):
        # Issue 12 item 1: B holding a NaN was reported as max_abs 0, psnr null ("identical");
        # with the NaN last, max_abs was NaN.
        a = rng(5).random((5, 6))
        pa = self.w.save("a.npy", a)
        for at, index in [((0, 0), [0, 0]), ((4, 5), [4, 5]), ((2, 3), [2, 3])]:
            b = a.copy()
            b[at] = np.nan
            pb = self.w.save("b.npy", b)
            self.fails(["compare", pa, pb], 1, ["b.npy: 1 non-finite value (NaN at %s first)"
                                                % index])
            j = json.loads(TOOL.ok("compare", pa, pb, "--json", "--allow-nonfinite").stdout)
            self.assertIs(j["identical"], False)
            self.assertEqual(j["max_abs"], 0.0)
            self.assertEqual(j["psnr_db"], None)
            self.assertEqual((j["nonfinite_a"], j["nonfinite_b"], j["nonfinite_mismatch"]),
                             (0, 1, 1))
            self.assertEqual((j["nonfinite_first_a"], j["nonfinite_first_b"]), (None, index))
            self.assertEqual(j["count"], 29)
            text = TOOL.ok("compare", pa, pb, "--allow-nonfinite").stdout.splitlines()
            self.assertIn("identical no", text)
            self.assertIn("nonfinite_b 1 (NaN at %s first)" % index, text)
            # The finite figures are those of the finite pairs, against numpy.
            b2 = b.copy()
            b2[at] = a[at] + 0.25
            pb2 = self.w.save("b2.npy", b2 + 0.0)
            j2 = json.loads(TOOL.ok("compare", pa, pb2, "--json").stdout)
            self.assertAlmostEqual(j2["max_abs"], 0.25, places=12)
        # A NaN equals nothing, not even itself.
        j = json.loads(TOOL.ok("compare", pb, pb, "--json", "--allow-nonfinite").stdout)
        self.assertIs(j["identical"], False)
        self.assertEqual(j["nonfinite_mismatch"], 1)
        # The same infinity on both sides is equal.
        c = a.copy()
        c[1, 1] = np.inf
        pc = self.w.save("c.npy", c)
        j = json.loads(TOOL.ok("compare", pc, pc, "--json", "--allow-nonfinite").stdout)
        self.assertEqual((j["identical"], j["nonfinite_mismatch"], j["nonfinite_a"]),
                         (True, 0, 1))

    def test_resample_metrics_count_nonfinite(self):
        j = json.loads(TOOL.ok("resample", self.img, self.w.path("r.npy"), "--zoom", 1,
                               "--reference", self.img_bad, "--allow-nonfinite", "--json",
                               "--method", "linear").stdout)
        self.assertEqual((j["nonfinite_a"], j["nonfinite_b"], j["identical"]), (0, 1, False))

    def test_coordinates_with_nan(self):
        out = self.w.path("v.npy")
        p = rng(6).uniform(0, 7, (6, 2))
        p[4, 1] = np.nan
        pn = self.w.save("pn.npy", p)
        self.fails(["sample", self.img, pn, out], 1,
                   ["pn.npy: 1 non-finite value (NaN at [4, 1] first); pass --allow-nonfinite"],
                   out)
        TOOL.ok("sample", self.img, pn, out, "--allow-nonfinite")
        v = load(out)
        self.assertTrue(np.isnan(v[4]))
        keep = [0, 1, 2, 3, 5]
        TOOL.ok("sample", self.img, self.w.save("pk.npy", p[keep]), self.w.path("vk.npy"))
        np.testing.assert_array_equal(v[keep], load(self.w.path("vk.npy")))
        # Huge coordinates: named with the value formatted, not the sampler's "(-nan)".
        p[4, 1] = 1e300
        line = self.fails(["sample", self.img, self.w.save("ph.npy", p), out], 1,
                          ["ph.npy", "1e+300", "[4, 1]"])
        self.assertNotIn("nan", line)

    def test_overflow_in_the_result_is_refused(self):
        # Finite input whose single-precision result overflows: nothing written.
        x = np.zeros((9,))
        x[4] = 3e38
        x[5] = -3e38
        out = self.w.path("out.npy")
        self.fails(["prefilter", self.w.save("x.npy", x), out, "--precision", "single"], 1,
                   ["prefilter: the result has", "non-finite", "single precision"], out)


# ----------------------------------------------------------------------------------------------
# OUT that is an input: refused before any work, exit 2, the input byte-identical.


class OutputIsInput(Base):
    def setUp(self):
        super().setUp()
        self.x = self.w.save("x.npy", rng(7).random((6, 8)))
        with open(self.x, "rb") as f:
            self.x_bytes = f.read()
        self.p = self.w.save("p.npy", rng(8).uniform(0, 5, (3, 2)))

    def check_refused(self, args, parts):
        before = self.w.listing()
        r = TOOL.run(*args)
        what = " ".join(str(a) for a in args)
        self.assertEqual(r.returncode, 2, "%s: %r" % (what, r.stderr))
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        for p in parts:
            self.assertIn(p, r.stderr, what)
        self.assertIn("is the same file as", r.stderr)
        self.assertEqual(self.w.listing(), before, what)
        with open(self.x, "rb") as f:
            self.assertEqual(f.read(), self.x_bytes, what)

    def test_same_path(self):
        x = self.x
        self.check_refused(["prefilter", x, x], ["OUT '%s'" % x, "IN '%s'" % x])
        self.check_refused(["resample", x, x, "--zoom", 2], ["OUT", "IN"])
        self.check_refused(["resample", x, x, "--rotate", 10, "--precision", "single"],
                           ["OUT", "IN"])
        self.check_refused(["sample", x, self.p, x], ["OUT", "IN"])
        self.check_refused(["sample", self.w.save("y.npy", load(x)), x, x], ["OUT", "COORDS"])
        other = self.w.save("z.npy", load(x))
        self.check_refused(["resample", other, x, "--zoom", 1, "--reference", x],
                           ["OUT", "--reference"])

    def test_links_and_dotdot(self):
        x = self.x
        link = self.w.path("link.npy")
        os.symlink(x, link)
        hard = self.w.path("hard.npy")
        os.link(x, hard)
        os.mkdir(self.w.path("sub"))
        dotdot = os.path.join(self.w.dir, "sub", "..", "x.npy")
        for out in (link, hard, dotdot):
            self.check_refused(["prefilter", x, out], ["OUT", "IN"])
            self.check_refused(["resample", x, out, "--zoom", 2], ["OUT", "IN"])
            self.check_refused(["prefilter", out, x], ["OUT", "IN"])
        rel = os.path.relpath(x)
        self.check_refused(["prefilter", rel, x], ["OUT", "IN"])

    def test_nhdr_data_file(self):
        # A detached NRRD header's data file is an input too.
        data = rng(9).random((3, 4)).astype("<f8")
        self.w.write_bytes("vol.npy", data.tobytes())  # the data file, raw, named like an OUT
        hdr = self.w.write_bytes("vol.nhdr", b"NRRD0004\ntype: double\ndimension: 2\n"
                                 b"sizes: 4 3\nencoding: raw\nendian: little\n"
                                 b"data file: vol.npy\n\n")
        with open(self.w.path("vol.npy"), "rb") as f:
            raw = f.read()
        r = TOOL.run("prefilter", hdr, self.w.path("vol.npy"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("the data file of IN", r.stderr)
        with open(self.w.path("vol.npy"), "rb") as f:
            self.assertEqual(f.read(), raw)
        # The header reads (the refusal is not a parse failure): another OUT works.
        TOOL.ok("prefilter", hdr, self.w.path("c.npy"), "--degree", 1)
        np.testing.assert_array_equal(load(self.w.path("c.npy")), data)

    def test_compare_reads_only(self):
        TOOL.ok("compare", self.x, self.x)


# ----------------------------------------------------------------------------------------------
# Command-line errors: exit 2, one line naming the option; numbers formatted, text escaped.


class UsageErrors(Base):
    def setUp(self):
        super().setUp()
        self.f2 = self.w.save("f2.npy", rng(10).random((6, 7)))
        self.p2 = self.w.save("p2.npy", rng(11).uniform(0, 5, (4, 2)))

    def test_each_option(self):
        f2, p2, out = self.f2, self.p2, self.w.path("out.npy")
        long_number = "1" * 300
        cases = [
            (["resample", f2, out], "--shift S or --rotate DEG"),
            (["resample", f2, out, "--zoom", 0], "--zoom"),
            (["resample", f2, out, "--zoom", -2], "--zoom"),
            (["resample", f2, out, "--zoom", "nan"], "--zoom"),
            (["resample", f2, out, "--zoom", "inf"], "--zoom"),
            (["resample", f2, out, "--zoom", 10001], "--zoom"),
            (["resample", f2, out, "--zoom", long_number], "--zoom"),
            (["resample", f2, out, "--zoom", "fast"], "--zoom"),
            (["resample", f2, out, "--zoom", 2, "--rotate", 10], "--rotate"),
            (["resample", f2, out, "--rotate", "nan"], "--rotate"),
            (["resample", f2, out, "--rotate", "-inf"], "--rotate"),
            (["resample", f2, out, "--rotate", 10, "--repeat", 0], "--repeat"),
            (["resample", f2, out, "--rotate", 10, "--repeat", 1000001], "--repeat"),
            (["resample", f2, out, "--rotate", 10, "--repeat", "1e3"], "--repeat"),
            (["resample", f2, out, "--zoom", 2, "--method", "lanczos"], "--method"),
            (["resample", f2, out, "--zoom", 2, "--disc", -1], "--disc"),
            (["resample", f2, out, "--zoom", 2, "--peak", 0], "--peak"),
            (["resample", f2, out, "--zoom", 2, "--peak", "nan"], "--peak"),
            (["resample", f2, out, "--zoom", 2, "--fetch", "precise"], "--fetch"),
            (["resample", f2, out, "--zoom", 2, "--format", "r16f"], "--format"),
            (["resample", f2, out, "--zoom", 2, "--threads", -1], "--threads"),
            (["resample", f2, out, "--zoom", 2, "--threads", 100000], "--threads"),
            (["resample", f2, self.w.path("out.txt"), "--zoom", 2], "OUT must end in"),
            (["prefilter", f2, out, "--degree", 8], "--degree"),
            (["prefilter", f2, out, "--degree", "three"], "--degree"),
            (["prefilter", f2, out, "--boundary", "wrap"], "--boundary"),
            (["prefilter", f2, out, "--precision", "half"], "--precision"),
            (["prefilter", f2, out, "--backend", "vulkan"], "--backend"),
            (["prefilter", f2, out, "--backend", "gl"], "--backend gl"),
            (["sample", f2, p2, out, "--fetch", "otf"], "--fetch"),
            (["sample", f2, p2, out, "--format", "r16"], "--format"),
            (["sample", f2, p2, out, "--derivative", 3], "--derivative"),
            (["sample", f2, p2, out, "--derivative", -1], "--derivative"),
            (["sample", f2, p2, out, "--degree", 0, "--derivative", 0], "degree 0"),
            (["sample", f2, p2, out, "--backend", "gl", "--precision", "double"], "gl"),
            (["compare", f2, f2, "--disc", 0], "--disc"),
            (["compare", f2, f2, "--peak", -1], "--peak"),
            (["prefilter", f2, out, "--raw", "12x:u8"], "--raw"),
        ]
        for args, part in cases:
            line = self.fails(args, 2, [part], out if args[0] != "compare" else None)
            self.assertIsNone(re.search(r"\d{25}", line), line)
            if os.environ.get("SPLINETOOL_SHOW_ERRORS"):
                print("   ", line)

    def test_numbers_are_formatted_not_echoed(self):
        out = self.w.path("out.npy")
        line = self.fails(["resample", self.f2, out, "--zoom", "1" * 300], 2, ["1.11111e+299"])
        self.assertNotIn("1" * 25, line)
        line = self.fails(["resample", self.f2, out, "--rotate", 10, "--repeat", "9" * 300], 2)
        self.assertNotIn("9" * 25, line)
        line = self.fails(["resample", self.f2, out, "--zoom", "0x" + "f" * 300], 2)
        self.assertLess(len(line), 200)

    def test_no_control_bytes_in_messages(self):
        out = self.w.path("out.npy")
        for args in (["prefilter", self.f2, out, "--boundary", "wr\x1b[31mx\x0bnew"],
                     ["prefilter", self.w.path("mi\x1b]0;title\x07ss\x0bing.npy"), out],
                     ["resample", self.f2, out, "--method", "\x1b[2J"]):
            r = TOOL.run(*args)
            self.assertNotEqual(r.returncode, 0)
            self.assertEqual(len(r.stderr.split("\n")), 2, repr(r.stderr))
            self.assertIsNone(re.search(r"[\x00-\x09\x0b-\x1f\x7f]", r.stderr), repr(r.stderr))

    def test_huge_angles_are_reduced_exactly(self):
        # Issue 12 item 10: --rotate 1e308 turned into NaN positions ("sample: position ... (-nan)").
        out, ref = self.w.path("r.npy"), self.w.path("ref.npy")
        for angle in (1e308, -1e300, 370.0, 3600.5):
            TOOL.ok("resample", self.f2, out, "--rotate", repr(angle))
            TOOL.ok("resample", self.f2, ref, "--rotate", repr(math.fmod(angle, 360.0)))
            self.assertTrue(np.isfinite(load(out)).all(), angle)
            np.testing.assert_array_equal(load(out), load(ref), str(angle))

    def test_zoom_output_is_bounded_before_any_work(self):
        out = self.w.path("out.npy")
        t = time.monotonic()
        self.fails(["resample", self.f2, out, "--zoom", 2, "--repeat", 40], 1,
                   ["step", "134217728 (2^27)"], out)
        self.fails(["resample", self.f2, out, "--zoom", 9000], 1, ["2^27"], out)
        self.fails(["resample", self.f2, out, "--zoom", 0.01], 1, ["empty axis"], out)
        self.assertLess(time.monotonic() - t, 30)


# ----------------------------------------------------------------------------------------------
# --version


class SpecialFiles(Base):
    """Only regular files are read unless --allow-special-files; with it a pipe is read as far as
    its header claims."""

    def test_devices_and_fifos_refused_at_once(self):
        fifo = self.w.path("in.npy")
        os.mkfifo(fifo)
        out = self.w.path("out.npy")
        t0 = time.monotonic()
        # Nobody writes the FIFO: opening it would block, so a refusal proves it was not opened.
        line = self.fails(["prefilter", fifo, out], 1, ["in.npy", "not a regular file (a FIFO)"])
        self.assertTrue(line.isprintable(), line)
        self.fails(["prefilter", "/dev/zero", out, "--raw", "100x100:f32"], 1,
                   ["/dev/zero", "not a regular file (a character device)"])
        self.assertLess(time.monotonic() - t0, 60)

    def test_allow_special_files_reads_a_pipe(self):
        a = rng(11).random((5, 7))
        src = self.w.save("a.npy", a)
        fifo = self.w.path("pipe.npy")
        os.mkfifo(fifo)
        out_pipe, out_file = self.w.path("from_pipe.npy"), self.w.path("from_file.npy")
        # A writer that feeds the FIFO once, then the run with the opt-in reads it.
        writer = subprocess.Popen([sys.executable, "-c",
                                   "import sys; open(sys.argv[1], 'wb').write(open(sys.argv[2], "
                                   "'rb').read())", fifo, src])
        try:
            r = TOOL.run("prefilter", fifo, out_pipe, "--allow-special-files", timeout=120)
        finally:
            writer.wait(timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = TOOL.run("prefilter", src, out_file)
        self.assertEqual(r.returncode, 0, r.stderr)
        np.testing.assert_array_equal(load(out_pipe), load(out_file))


class Version(unittest.TestCase):
    def test_version(self):
        r = TOOL.run("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^splinetool \d+\.\d+\.\d+ \(splineview, commit "
                                   r"([0-9a-f]{7,40}(\+dirty)?|unknown)\)$")
        info = json.loads(TOOL.ok("info", "--json").stdout)
        self.assertEqual(info["version"], lines[0].split()[1])
        cuda = [l for l in lines if l.startswith("CUDA: ")]
        gl = [l for l in lines if l.startswith("GL backend: ")]
        ff = [l for l in lines if l.startswith("FFmpeg: ")]
        self.assertEqual((len(cuda), len(gl), len(ff)), (1, 1, 1), r.stdout)
        self.assertEqual(cuda[0].startswith("CUDA: compiled in"), info["cuda_compiled"])
        self.assertEqual(gl[0].startswith("GL backend: compiled in"), info["gl"]["compiled"])
        self.assertEqual(r.stderr, "")


# ----------------------------------------------------------------------------------------------
# The examples of the README and of --help run.


def readme_examples():
    """Lines of the fenced ```sh blocks of app/splinetool/README.md, in order."""
    path = os.path.join(SOURCE, "app", "splinetool", "README.md")
    lines, inside = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.rstrip("\n")
            if s.startswith("```"):
                inside = (s.strip() == "```sh") if not inside else False
                continue
            if inside and s.strip() and not s.lstrip().startswith("#"):
                lines.append(s.strip())
    return lines


def help_examples():
    out = []
    texts = [TOOL.ok("--help").stdout]
    for cmd in ("prefilter", "sample", "resample", "compare", "info", "upscale-video"):
        texts.append(TOOL.ok(cmd, "--help").stdout)
    for text in texts:
        for line in text.splitlines():
            if line.startswith("  splinetool "):
                out.append(line.strip())
    return out


class Examples(Base):
    @classmethod
    def setUpClass(cls):
        cls.info = json.loads(TOOL.ok("info", "--json").stdout)

    def run_examples(self, lines):
        os.symlink(os.path.join(SOURCE, "assets"), self.w.path("assets"))
        gl_works = self.info["gl"]["works"]
        cuda_works = bool(self.info["cuda_devices"])
        video = os.environ.get("SPLINETOOL_EXAMPLES_VIDEO") == "1"
        ran = 0
        for line in lines:
            words = shlex.split(line)
            if words[0] == "python3":
                words[0] = sys.executable
            elif words[0] == "splinetool":
                words[0] = TOOL.path
            else:
                self.fail("an example that is neither splinetool nor python3: " + line)
            if "gl" in words and "--backend" in words and not gl_works:
                continue
            if "cuda" in words and "--backend" in words and not cuda_works:
                continue
            if len(words) > 2 and words[1] == "upscale-video" and not video:
                # The command line parses: with a missing IN it gets as far as opening it.
                words[2] = self.w.path("missing.mp4")
                r = subprocess.run(words, cwd=self.w.dir, capture_output=True, text=True,
                                   timeout=600)
                self.assertEqual(r.returncode, 1, "%s: %s" % (line, r.stderr))
                self.assertIn("missing.mp4", r.stderr)
                continue
            r = subprocess.run(words, cwd=self.w.dir, capture_output=True, text=True,
                               timeout=600)
            self.assertEqual(r.returncode, 0, "%s: %s" % (line, r.stderr))
            ran += 1
        return ran

    def test_readme_examples_run(self):
        lines = readme_examples()
        self.assertGreaterEqual(len(lines), 8, "the README's examples were found")
        self.assertGreaterEqual(self.run_examples(lines), 6)

    def test_help_examples_run(self):
        lines = help_examples()
        self.assertGreaterEqual(len(lines), 3, "the help's examples were found")
        self.assertEqual(self.run_examples(lines), len(lines))


# ----------------------------------------------------------------------------------------------
# Signals and the file-size limit: no OUT.tmp-* left, an existing OUT unchanged.


class Signals(Base):
    def big_job(self, out, preexec=None):
        big = self.w.path("big.npy")
        if not os.path.exists(big):
            np.save(big, rng(12).random((2048, 2048)))
        return subprocess.Popen([TOOL.path, "resample", big, out, "--zoom", "2", "--method",
                                 "nearest", "--threads", "1"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, preexec_fn=preexec)

    def temporaries(self):
        return [n for n in os.listdir(self.w.dir) if ".tmp-" in n]

    def test_signal_while_writing_leaves_no_temporary(self):
        out = self.w.path("out.npy")
        for sig in (signal.SIGTERM, signal.SIGINT):
            with open(out, "wb") as f:
                f.write(SENTINEL)
            p = self.big_job(out)
            seen = False
            deadline = time.monotonic() + 300
            while p.poll() is None and time.monotonic() < deadline:
                if self.temporaries():
                    p.send_signal(sig)
                    seen = True
                    break
                time.sleep(0.001)
            p.communicate(timeout=300)
            if not seen:
                self.skipTest("the write was too quick to be caught")
            self.assertEqual(p.returncode, -sig, "ended by the signal")
            self.assertEqual(self.temporaries(), [], "temporary removed on %s" % sig.name)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), SENTINEL)

    def test_signal_while_computing(self):
        out = self.w.path("out.npy")
        with open(out, "wb") as f:
            f.write(SENTINEL)
        p = self.big_job(out)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=300)
        self.assertEqual(self.temporaries(), [])
        with open(out, "rb") as f:
            self.assertEqual(f.read(), SENTINEL)

    def test_file_size_limit(self):
        out = self.w.path("out.npy")
        with open(out, "wb") as f:
            f.write(SENTINEL)

        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        np.save(self.w.path("big.npy"), rng(12).random((2048, 2048)))  # before the limit
        p = self.big_job(out, preexec=limit)
        p.communicate(timeout=600)
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(self.temporaries(), [])
        with open(out, "rb") as f:
            self.assertEqual(f.read(), SENTINEL)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: test_hardening.py PATH/TO/splinetool SOURCE_DIR [unittest args]")
    TOOL = Tool(sys.argv[1], leak_every=1)  # every run leak-checked: error paths
    SOURCE = sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
