#!/usr/bin/env python3
"""splinetool batch: many commands in one process (app/splinetool/README.md, "Batches").

A batch's outputs equal separate runs' byte for byte (OUT files, stdout; JSON up to its timings),
nothing carries over from one line to the next, the first failing line stops the batch with its
exit status and a message naming the file and line, --keep-going runs every line and reports
each failure, quoting and comments split like a shell's simple words, a nested batch and what a
shell would expand are refused, and a missing or unreadable FILE and an unterminated quote give
one clear line.

Usage: test_batch.py PATH/TO/splinetool [unittest args]
"""
import json
import os
import subprocess
import sys
import unittest

import numpy as np

from cli_util import Tool, Workdir

TOOL = None  # set in __main__
SEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "seeds")


def without_timings(text):
    """A --json object without the fields that time the run."""
    j = json.loads(text)
    for k in ("seconds", "gpu_ms"):
        j.pop(k, None)
    return j


class Batch(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()
        rng = np.random.default_rng(7)
        self.a = self.w.save("a.npy", rng.uniform(0, 1, (9, 11)))
        self.b = self.w.save("b.npy", rng.uniform(0, 1, (9, 11)))
        self.p = self.w.save("p.npy", rng.uniform(-1, 10, (6, 2)))

    def tearDown(self):
        self.w.close()

    def batch(self, text, *options, stdin=None, name="cmds.txt"):
        """Writes `text` as the batch file and runs `batch FILE --log LOG *options` with stdout
        and stderr in files; returns (exit status, stdout bytes, stderr text, log records)."""
        path = self.w.write_bytes(name, text.encode() if isinstance(text, str) else text)
        log = self.w.path("log.jsonl")
        if os.path.exists(log):
            os.unlink(log)
        with open(self.w.path("out"), "w+b") as out, open(self.w.path("err"), "w+b") as err:
            r = subprocess.run([TOOL.path, "batch", "-" if stdin is not None else name, "--log",
                                log, *options], stdout=out, stderr=err, cwd=self.w.dir,
                               input=None if stdin is None else stdin,
                               stdin=subprocess.DEVNULL if stdin is None else None)
            out.seek(0)
            err.seek(0)
            so, se = out.read(), err.read().decode()
        records = []
        if os.path.exists(log):
            with open(log) as f:
                records = [json.loads(line) for line in f]
        return r.returncode, so, se, records

    def alone(self, *args):
        return subprocess.run([TOOL.path] + [str(a) for a in args], capture_output=True,
                              cwd=self.w.dir)

    def test_outputs_equal_separate_runs(self):
        w = self.w
        a, b, p = self.a, self.b, self.p
        commands = [
            ["prefilter", a, "{d}/c.npy", "--degree", "5", "--mode", "mirror"],
            ["prefilter", a, "{d}/c.nrrd", "--degree", "3", "--precision", "single"],
            ["sample", a, p, "{d}/v.npy", "--degree", "4", "--json"],
            ["resample", a, "{d}/z.npy", "--zoom", "1.5,0.7", "--degree", "2", "--mode",
             "constant", "--cval", "0.25"],
            ["resample", a, "{d}/r.png", "--rotate", "30", "--compare-original"],
            ["resample", a, "-", "--shift", "0.5,-1", "--mode", "nearest"],
            ["compare", a, b],
            ["compare", a, b, "--json", "--disc", "0.4"],
            ["info", a],
            ["gradient", a, "{d}/g.npy", "--degree", "3"],
            ["smooth", a, "{d}/s.npy", "--lambda", "0.5"],
            ["prefilter", a, "--help"],
            ["--version"],
        ]
        os.mkdir(w.path("sep"))
        os.mkdir(w.path("bat"))
        separate = []
        for c in commands:
            r = self.alone(*[x.format(d=w.path("sep")) for x in c])
            self.assertEqual(r.returncode, 0, (c, r.stderr))
            separate.append((r.stdout, r.stderr.decode()))
        text = "\n".join(" ".join("'%s'" % x.format(d=w.path("bat")) for x in c)
                         for c in commands) + "\n"
        status, so, se, records = self.batch(text)
        self.assertEqual(status, 0, se)
        self.assertEqual([r["line"] for r in records], list(range(1, len(commands) + 1)))
        begin = err_begin = 0
        for c, r, (want, want_err) in zip(commands, records, separate):
            got = so[begin:r["stdout_end"]]
            begin = r["stdout_end"]
            self.assertEqual(r["status"], 0, c)
            # stderr too (notes), the separate run's with the folder of its outputs
            self.assertEqual(se.encode()[err_begin:r["stderr_end"]].decode(),
                             want_err.replace(w.path("sep"), w.path("bat")), c)
            err_begin = r["stderr_end"]
            if "--json" in c:
                self.assertEqual(without_timings(got), without_timings(want), c)
            else:
                self.assertEqual(got, want, c)
        self.assertEqual(begin, len(so))
        for f in os.listdir(w.path("sep")):
            with open(os.path.join(w.path("sep"), f), "rb") as x, \
                    open(os.path.join(w.path("bat"), f), "rb") as y:
                self.assertEqual(x.read(), y.read(), f)
        self.assertEqual(sorted(os.listdir(w.path("sep"))), sorted(os.listdir(w.path("bat"))))
        for r in records:  # the resident sizes are known on Linux
            self.assertGreater(r["peak_rss_kib"], 0)
            self.assertGreaterEqual(r["peak_rss_kib"], r["start_rss_kib"])

    def test_no_state_between_lines(self):
        a = self.a
        n4d = os.path.join(SEEDS, "n2_4d.nii")
        # OUT '-' sends the JSON to stderr; the next line's JSON goes to stdout again.
        # --volume and --allow-special-files do not outlive their line.
        status, so, se, records = self.batch(
            "resample %s - --zoom 2 --json\n"
            "prefilter %s c.npy --json\n"
            "info %s --volume 1\n"
            "info %s\n" % (a, a, n4d, n4d), "--keep-going")
        self.assertEqual([r["status"] for r in records], [0, 0, 0, 1])
        self.assertEqual(status, 1)
        first = so[:records[0]["stdout_end"]]
        self.assertTrue(first.startswith(b"\x93NUMPY"))
        err = se.encode()
        self.assertEqual(json.loads(err[:records[0]["stderr_end"]])["command"], "resample")
        second = so[records[0]["stdout_end"]:records[1]["stdout_end"]]
        self.assertEqual(json.loads(second)["command"], "prefilter")
        self.assertEqual(records[1]["stderr_end"], records[0]["stderr_end"])  # nothing there
        alone = self.alone("info", n4d)
        self.assertEqual(alone.returncode, 1)
        self.assertEqual(err[records[2]["stderr_end"]:records[3]["stderr_end"]].decode(),
                         alone.stderr.decode().replace(
                             "splinetool: ", "splinetool: batch cmds.txt line 4: ", 1))

    def test_stops_at_the_first_failure(self):
        a = self.a
        status, so, se, records = self.batch(
            "# a comment\n\nprefilter %s one.npy\nprefilter missing.npy two.npy\n"
            "prefilter %s three.npy\n" % (a, a))
        self.assertEqual(status, 1)
        self.assertEqual(se.count("\n"), 1, se)
        self.assertTrue(se.startswith("splinetool: batch cmds.txt line 4: "), se)
        self.assertIn("missing.npy", se)
        self.assertEqual([(r["line"], r["status"]) for r in records], [(3, 0), (4, 1)])
        listing = self.w.listing()
        self.assertIn("one.npy", listing)
        self.assertNotIn("two.npy", listing)
        self.assertNotIn("three.npy", listing)  # never ran
        # a command-line error: exit 2, as alone, with the usage hint
        status, so, se, records = self.batch(
            "prefilter %s four.npy\nprefilter %s five.npy --degree 9\nprefilter %s six.npy\n"
            % (a, a, a))
        self.assertEqual(status, 2)
        alone = self.alone("prefilter", a, "five.npy", "--degree", "9")
        self.assertEqual(alone.returncode, 2)
        self.assertEqual(se, alone.stderr.decode().replace(
            "splinetool: ", "splinetool: batch cmds.txt line 2: ", 1))
        self.assertNotIn("six.npy", self.w.listing())

    def test_keep_going(self):
        a = self.a
        status, so, se, records = self.batch(
            "prefilter %s k1.npy\n"
            "prefilter nope.npy k2.npy\n"
            "prefilter %s k3.npy --zoom 2\n"
            "  # indented comment\n"
            "prefilter %s k4.npy\n" % (a, a, a), "--keep-going")
        self.assertEqual(status, 1)
        self.assertEqual([(r["line"], r["status"]) for r in records],
                         [(1, 0), (2, 1), (3, 2), (5, 0)])
        lines = se.splitlines()
        self.assertEqual(len(lines), 3, se)
        self.assertTrue(lines[0].startswith("splinetool: batch cmds.txt line 2: "), lines[0])
        self.assertIn("nope.npy", lines[0])
        self.assertTrue(lines[1].startswith("splinetool: batch cmds.txt line 3: "), lines[1])
        self.assertIn("--zoom", lines[1])
        self.assertEqual(lines[2], "splinetool: batch cmds.txt: 2 of 4 commands failed "
                                   "(lines 2, 3)")
        self.assertIn("k1.npy", self.w.listing())
        self.assertIn("k4.npy", self.w.listing())
        status, so, se, records = self.batch("prefilter %s k5.npy\n" % a, "--keep-going")
        self.assertEqual((status, se, len(records)), (0, "", 1))

    def test_quoting_and_comments(self):
        a = self.a
        text = ("# names a shell would have to quote\n"
                "prefilter %s 'with space.npy'   # a comment after the command\n"
                "prefilter %s \"double \\\"quoted\\\" \\$1.npy\"\r\n"
                "prefilter %s back\\ slash\\'s.npy\n"
                "prefilter %s 'hash#in'\"side\".npy\n"
                "\t\n"
                "prefilter %s star*?.npy\n" % (a, a, a, a, a))
        status, so, se, records = self.batch(text)
        self.assertEqual((status, se), (0, ""))
        self.assertEqual([r["line"] for r in records], [2, 3, 4, 5, 7])
        listing = self.w.listing()
        for name in ("with space.npy", 'double "quoted" $1.npy', "back slash's.npy",
                     "hash#inside.npy", "star*?.npy"):
            self.assertIn(name, listing)
        # an empty quoted word is a word: here an empty OUT name, refused as alone
        status, so, se, records = self.batch("prefilter %s ''\n" % a)
        alone = self.alone("prefilter", a, "")
        self.assertEqual(status, alone.returncode)
        self.assertEqual(se, alone.stderr.decode().replace(
            "splinetool: ", "splinetool: batch cmds.txt line 1: ", 1))
        # what a shell would expand or redirect is refused, naming the line and column
        for line, why in [("prefilter %s out.npy > x" % a, "unquoted '>' at column"),
                          ("prefilter $HOME/a.npy out.npy", "unquoted '$' at column 11"),
                          ("prefilter \"$HOME\" out.npy", "'$' inside double quotes"),
                          ("prefilter a.npy out.npy; ls", "unquoted ';'"),
                          ("prefilter a.npy `x`", "unquoted '`'"),
                          ("prefilter a.npy out.npy \\", "a backslash at the end of the line"),
                          ("prefilter 'a.npy out.npy", "unterminated single quote (opened at "
                                                       "column 11)"),
                          ("prefilter \"a.npy out.npy", "unterminated double quote")]:
            status, so, se, records = self.batch("# first\n" + line + "\n")
            self.assertEqual(status, 2, line)
            self.assertEqual(se.count("\n"), 1, se)
            self.assertTrue(se.startswith("splinetool: batch cmds.txt line 2: "), se)
            self.assertIn(why, se)
            self.assertEqual([(r["line"], r["status"]) for r in records], [(2, 2)])
        status, so, se, records = self.batch(b"info\x00x\n")
        self.assertEqual(status, 2)
        self.assertIn("line 1: a NUL byte at column 5", se)

    def test_nested_batch_refused(self):
        inner = self.w.write_bytes("inner.txt", b"info\n")
        status, so, se, records = self.batch("batch %s\n" % inner)
        self.assertEqual(status, 2)
        self.assertEqual(se, "splinetool: batch cmds.txt line 1: batch: a line of a batch "
                             "cannot run another batch (see 'splinetool batch --help')\n")

    def test_bad_files(self):
        r = self.alone("batch", "nope.txt")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, b"splinetool: batch: cannot open 'nope.txt': No such file "
                                   b"or directory\n")
        os.mkdir(self.w.path("folder"))
        r = self.alone("batch", "folder")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, b"splinetool: batch: 'folder' is a folder, not a file of "
                                   b"commands\n")
        # unreadable: a file whose reads fail (a directory's data through /proc is not
        # portable; a FIFO with no writer would block), here one removed of its permissions
        # where this user cannot bypass them, else skipped
        path = self.w.write_bytes("locked.txt", b"info\n")
        os.chmod(path, 0)
        if not os.access(path, os.R_OK):
            r = self.alone("batch", "locked.txt")
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stderr, b"splinetool: batch: cannot open 'locked.txt': "
                                       b"Permission denied\n")
        r = self.alone("batch", self.a, "--log", self.w.path("no/such/log"))
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"--log: cannot create", r.stderr)
        r = self.alone("batch")
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"FILE is required", r.stderr)
        # a line longer than 1 MiB is refused, the next line still read
        status, so, se, records = self.batch(b"info " + b"x" * (1 << 20) + b"\ninfo\n",
                                             "--keep-going")
        self.assertEqual([(r["line"], r["status"]) for r in records], [(1, 2), (2, 0)])
        self.assertIn("line 1: longer than 1048576 bytes", se)

    def test_standard_input(self):
        a = self.a
        status, so, se, records = self.batch("", stdin=("prefilter %s s1.npy\n"
                                                         "prefilter - s2.npy\n" % a).encode())
        self.assertEqual(status, 1)
        self.assertEqual([(r["line"], r["status"]) for r in records], [(1, 0), (2, 1)])
        self.assertTrue(se.startswith("splinetool: batch - line 2: standard input ('-') holds "
                                      "the commands of 'batch -'"), se)
        self.assertIn("s1.npy", self.w.listing())
        # with FILE a file, a line may read an array from standard input
        with open(a, "rb") as f:
            data = f.read()
        path = self.w.write_bytes("c.txt", b"prefilter - s3.npy --degree 1\n")
        r = subprocess.run([TOOL.path, "batch", path], input=data, capture_output=True,
                           cwd=self.w.dir)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertTrue(np.array_equal(np.load(self.w.path("s3.npy")), np.load(a)))

    def test_gl_lines_share_a_context(self):
        """A batch's --backend gl commands share one context and its shaders (README "Batches")
        and give what separate runs give, byte for byte, a failing GL line between them too."""
        info = json.loads(TOOL.ok("info", "--json").stdout)["gl"]
        if not info["works"]:
            self.skipTest("no GL context here: %s" % info["none_reason"])
        a, p = self.a, self.p
        wide = self.w.save("wide.npy", np.linspace(-1, 2, 99).reshape(9, 11))
        commands = [["sample", a, p, "{d}/g1.npy", "--backend", "gl", "--fetch", "precise"],
                    ["resample", a, "{d}/g2.npy", "--zoom", "2", "--backend", "gl"],
                    ["sample", wide, p, "{d}/never.npy", "--backend", "gl", "--format", "r16"],
                    ["sample", a, p, "{d}/g3.npy", "--backend", "gl", "--fetch", "otf",
                     "--derivative", "1"],
                    ["sample", a, p, "{d}/g4.npy", "--backend", "gl", "--fetch", "precise"]]
        # Mesa's driver leaks option strings (tests/cli/CMakeLists.txt): no leak check here
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
        os.mkdir(self.w.path("sep"))
        os.mkdir(self.w.path("bat"))
        want = [subprocess.run([TOOL.path] + [x.format(d=self.w.path("sep")) for x in c],
                               capture_output=True, env=env) for c in commands]
        self.assertEqual([r.returncode for r in want], [0, 0, 1, 0, 0])
        results = TOOL.batch([[x.format(d=self.w.path("bat")) for x in c] for c in commands],
                             env={"ASAN_OPTIONS": "detect_leaks=0"})
        for c, r, w in zip(commands, results, want):
            self.assertEqual(r.returncode, w.returncode, c)
            self.assertEqual(r.stderr, w.stderr.decode().replace(self.w.path("sep"),
                                                                 self.w.path("bat")), c)
        for name in ("g1.npy", "g2.npy", "g3.npy", "g4.npy"):
            with open(self.w.path("sep/" + name), "rb") as x, \
                    open(self.w.path("bat/" + name), "rb") as y:
                self.assertEqual(x.read(), y.read(), name)
        self.assertNotIn("never.npy", os.listdir(self.w.path("bat")))

    def test_tool_batch_helper(self):
        """cli_util's Tool.batch gives each line's status, stdout and stderr as alone."""
        a = self.a
        results = TOOL.batch([["compare", a, a], ["prefilter", "gone.npy", "x.npy"],
                              ["prefilter", a, "y.npy", "--degree", "11"]], cwd=self.w.dir)
        for r in results:
            alone = self.alone(*r.args)
            self.assertEqual(r.returncode, alone.returncode, r.args)
            self.assertEqual(r.stdout, alone.stdout.decode(), r.args)
            self.assertEqual(r.stderr, alone.stderr.decode(), r.args)


if __name__ == "__main__":
    TOOL = Tool(os.path.abspath(sys.argv.pop(1)))
    unittest.main()
