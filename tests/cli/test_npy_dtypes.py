#!/usr/bin/env python3
"""splinetool reads .npy of every numeric dtype exactly as numpy does (issue 13 item 3).

numpy writes each dtype (bool, int8..int64, uint8..uint64, float16, float32, float64) in both
byte orders and both memory orders, of shapes (5, 7), (3, 5, 7) and (4, 6, 3) with --channels.
Two oracles, both exact:
  - `prefilter IN out.npy --degree 1 --precision double` (degree 1 is the identity) writes the
    loaded values as float64: they must equal numpy's `a.astype(np.float64)` bit for bit;
  - `compare IN ref.npy --json`, ref being numpy's float64 copy in C order: identical, max_abs 0.
Also the refusals (complex, object, strings, structured, datetime, int64 beyond 2^53) as one
line naming the dtype. No splinetool command writes the input's dtype (their outputs are
float32/float64/uint8 by rule), so there is no typed output to check here.

Usage: test_npy_dtypes.py PATH/TO/splinetool [unittest args]
"""
import json
import sys
import unittest

import numpy as np

from cli_util import Tool, Workdir, load

TOOL = None  # set in __main__

TYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
         np.uint64, np.float16, np.float32, np.float64]
SHAPES = [((5, 7), False), ((3, 5, 7), False), ((4, 6, 3), True)]


def values(dtype, shape, rng):
    """Random values of `dtype` with the type's extremes (int64/uint64 within 2^53, the exact
    range) and, for floats, subnormals, the largest finite value and infinities."""
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -2**53), min(int(info.max), 2**53)
        a = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64 if dt.kind == "i" else np.uint64)
        a = a.astype(dt)
        a[:2] = [lo, hi]
    else:
        info = np.finfo(dt)
        a = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 5, n)).astype(dt)
        a[:6] = [info.max, -info.max, info.smallest_subnormal, -info.tiny, np.inf, -np.inf]
        a[6] = 0.5 * (info.eps + 1)  # some value needing rounding in lower precisions
    return a.reshape(shape)


class NpyDtypes(unittest.TestCase):
    def setUp(self):
        self.w = Workdir()

    def tearDown(self):
        self.w.close()

    def commands_for(self, arr, channels, name):
        """Both oracles for one file written by numpy: the file, the two commands (prefilter
        --degree 1, the identity, to float64; compare against numpy's float64 values) and what
        check_loads needs afterwards."""
        w = self.w
        path = w.path(name)
        np.save(path, arr)
        with open(path, "rb") as f:
            head = f.read(200)
        want = np.ascontiguousarray(arr.astype(np.float64))
        extra = ["--channels"] if channels else []
        out = w.path("out_" + name)
        ref = w.save("ref_" + name, want)
        return ([["prefilter", path, out, "--degree", 1, "--precision", "double",
                  "--allow-nonfinite", *extra],
                 ["compare", path, ref, "--json", "--allow-nonfinite", *extra]],
                (name, head, want, out))

    def check_loads(self, case, compare_result):
        name, head, want, out = case
        got = load(out)
        self.assertEqual(got.dtype, np.float64, name)
        self.assertEqual(got.shape, want.shape, name)
        self.assertTrue(np.array_equal(got.view(np.uint64), want.view(np.uint64)),
                        "%s (%r): values differ at %s" % (name, head, np.argwhere(got != want)[:5]))
        j = json.loads(compare_result.stdout)
        self.assertEqual(j["count"], np.count_nonzero(np.isfinite(want)), name)  # finite pairs
        self.assertEqual(j["max_abs"], 0, name)
        self.assertEqual(j["nonfinite_mismatch"], 0, name)
        self.assertTrue(j["identical"], name)

    def test_every_dtype_order_and_layout(self):
        rng = np.random.default_rng(13)
        commands, cases = [], []
        for dtype in TYPES:
            for shape, channels in SHAPES:
                base = values(dtype, shape, rng)
                orders = "<>" if base.dtype.itemsize > 1 else "|"
                for order in orders:
                    typed = base.astype(base.dtype.newbyteorder(order)) if order != "|" else base
                    for layout in "CF":
                        arr = np.asarray(typed, order=layout)
                        if layout == "F":
                            self.assertTrue(arr.flags.f_contiguous and not arr.flags.c_contiguous)
                        name = "%s_%s_%s_%s.npy" % (np.dtype(dtype).name,
                                                    "x".join(map(str, shape)),
                                                    {"<": "le", ">": "be", "|": "na"}[order],
                                                    layout)
                        c, case = self.commands_for(arr, channels, name)
                        commands += c
                        cases.append(case)
        # every command of every case through one `splinetool batch` process, each exactly
        # as a separate run; every one must exit 0
        results = TOOL.ok_all(commands)
        checked = 0
        for i, case in enumerate(cases):
            with self.subTest(name=case[0]):
                self.check_loads(case, results[2 * i + 1])
                checked += 1
        # 12 types x 3 shapes x (2 orders for the 9 multi-byte types, 1 for 3) x 2 layouts
        self.assertEqual(checked, 3 * 2 * (9 * 2 + 3))

    def test_oracle_can_fail(self):
        """The compare oracle sees a single difference of one unit."""
        a = np.arange(35, dtype=np.int16).reshape(5, 7)
        typed = self.w.save("a.npy", np.asfortranarray(a.astype(">i2")))
        b = a.astype(np.float64)
        b[3, 4] += 1
        ref = self.w.save("b.npy", b)
        j = json.loads(TOOL.ok("compare", typed, ref, "--json").stdout)
        self.assertFalse(j["identical"])
        self.assertEqual(j["max_abs"], 1)

    def fails(self, path, parts):
        r = TOOL.run("prefilter", path, self.w.path("refused.npy"))
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("splinetool: " + path + ": "), lines[0])
        for p in parts:
            self.assertIn(p, lines[0])
        self.assertNotIn("refused.npy", self.w.listing())

    def test_refusals(self):
        w = self.w
        cases = [
            (np.zeros((3, 4), np.complex128), ["unsupported dtype '<c16' (complex numbers"]),
            (np.zeros((3, 4), np.complex64), ["unsupported dtype '<c8' (complex numbers"]),
            (np.array([["ab", "c"]]), ["unsupported dtype '<U2' (strings"]),
            (np.array([[b"ab", b"c"]]), ["unsupported dtype '|S2' (strings"]),
            (np.zeros((3, 4), "datetime64[ns]"), ["unsupported dtype '<M8[ns]' (dates and times"]),
            (np.zeros((3, 4), "timedelta64[s]"), ["unsupported dtype '<m8[s]'"]),
            (np.zeros((3, 4), [("x", "<f4"), ("y", "<i2")]),
             ["unsupported dtype '[('x', '<f4'), ('y', '<i2')]' (a structured dtype"]),
            (np.zeros((3, 4), np.longdouble), ["extended-precision floats"]),
        ]
        for i, (arr, parts) in enumerate(cases):
            with self.subTest(dtype=str(arr.dtype)):
                p = w.path("r%d.npy" % i)
                np.save(p, arr)
                self.fails(p, parts)
        obj = w.path("obj.npy")
        np.save(obj, np.array([[1, "a"]], dtype=object), allow_pickle=True)
        self.fails(obj, ["unsupported dtype '|O' (Python objects"])

    def test_int64_exactness(self):
        w = self.w
        a = np.arange(20, dtype=np.int64).reshape(4, 5)
        a[1, 0] = 2**53
        ok = w.save("ok.npy", a)
        TOOL.ok("prefilter", ok, w.path("out.npy"), "--degree", 1)
        self.assertEqual(load(w.path("out.npy"))[1, 0], 2.0**53)
        a[2, 2] = 2**53 + 1
        # C order and Fortran order name the same (C-order, numpy's a.flat) element index.
        self.fails(w.save("bad.npy", a),
                   ["int64 value 9007199254740993 at element 12 is not exactly representable "
                    "as a double"])
        self.fails(w.save("badf.npy", np.asfortranarray(a.astype(">i8"))),
                   ["int64 value 9007199254740993 at element 12"])
        u = np.array([2**64 - 1], dtype=np.uint64)
        self.fails(w.save("u.npy", u), ["uint64 value 18446744073709551615 at element 0"])


if __name__ == "__main__":
    TOOL = Tool(sys.argv.pop(1))
    unittest.main()
