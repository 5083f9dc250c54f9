#!/usr/bin/env python3
"""splinetool's issue-17 commands with --backend cuda against --backend cpu.

Usage: test_bspline_cuda_cli.py SPLINETOOL contract|device [pyramid]

contract (runs everywhere): with no CUDA device visible (CUDA_VISIBLE_DEVICES=""), derivative,
  gradient, gradient-magnitude, laplacian, hessian, smooth, indirect, reduce and expand with
  --backend cuda exit 1 with exactly the line the other cuda commands print ("--backend cuda
  cannot run here: REASON; use --backend cpu", REASON as `splinetool info` gives it) before
  reading IN (a missing IN is not reported), and write no OUT.
device (skips, exit 77, where `splinetool info` lists no CUDA device): each command on random
  1-D, 2-D and 3-D inputs (odd sizes), several modes and degrees, --precision double and single,
  from samples and (--no-prefilter) coefficients, --lambda 0, real-pole, complex-pole and
  near-unit-circle smoothing; reduce (halving and --zoom 0.3/0.71, samples and coefficients out,
  --coefficients-in) and expand of its coefficients, reflect/mirror/grid-wrap, degrees 1/3/7:
  cuda against cpu double. Bounds: double 1e-9 of max|IN| times
  the filter's size (2^|order| for derivatives); single 2e-4 of the same (float coefficients and
  passes; the C++ test test_cuda_bspline derives the per-operation float bounds, these are an
  order of magnitude looser and only guard the command line's plumbing). --json reports
  backend cuda; output shapes and dtypes equal the cpu's. Prints the worst measured errors.
  With the third argument `pyramid`, device runs only the reduce/expand cases.
"""
import json
import os
import sys

import numpy as np

from cli_util import Tool, Workdir, load

NO_DEVICE = {"CUDA_VISIBLE_DEVICES": ""}
failures = []
measured = {}


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def contract(tool):
    r = tool.run("info", "--json", env=NO_DEVICE)
    reason = json.loads(r.stdout)["cuda_none_reason"]
    w = Workdir()
    try:
        missing = w.path("missing.npy")  # never read: the refusal comes first
        out = w.path("out.npy")
        expected = "splinetool: --backend cuda cannot run here: %s; use --backend cpu" % reason
        cases = [
            ["derivative", missing, out, "--order", "1,0"],
            ["gradient", missing, out],
            ["gradient-magnitude", missing, out],
            ["laplacian", missing, out],
            ["hessian", missing, out],
            ["smooth", missing, out, "--lambda", 0.5],
            ["indirect", missing, out, "--degree", 3],
            ["reduce", missing, out],
            ["expand", missing, out, "--shape", "18,16"],
        ]
        for args in cases:
            r = tool.run(*(args + ["--backend", "cuda"]), env=NO_DEVICE)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 1 and lines == [expected] and not os.path.exists(out),
                  "%s: exit %d, stderr %r" % (args[0], r.returncode, r.stderr))
    finally:
        w.close()


def compare(tool, w, args, scale, label):
    """Runs args with cpu double and with cuda (double, single); checks the differences."""
    ref_path, cuda_d, cuda_s = w.path("ref.npy"), w.path("cd.npy"), w.path("cs.npy")
    r = tool.run(*(args[:1] + [args[1], ref_path] + args[2:] + ["--precision", "double"]))
    check(r.returncode == 0, "%s cpu: %s" % (label, r.stderr.strip()))
    if r.returncode != 0:
        return
    ref = load(ref_path)
    for precision, path, tol in (("double", cuda_d, 1e-9), ("single", cuda_s, 2e-4)):
        r = tool.run(*(args[:1] + [args[1], path] + args[2:] +
                       ["--precision", precision, "--backend", "cuda", "--json"]))
        check(r.returncode == 0, "%s cuda %s: %s" % (label, precision, r.stderr.strip()))
        if r.returncode != 0:
            continue
        j = json.loads(r.stdout)
        check(j.get("backend") == "cuda", "%s: --json backend %r" % (label, j.get("backend")))
        got = load(path)
        check(got.shape == ref.shape, "%s %s: shape %s vs %s" % (label, precision, got.shape,
                                                                 ref.shape))
        check(got.dtype == (np.float64 if precision == "double" else np.float32),
              "%s %s: dtype %s" % (label, precision, got.dtype))
        if got.shape != ref.shape:
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - ref))) / scale
        key = "%s %s" % (args[0], precision)
        measured[key] = max(measured.get(key, 0.0), err)
        check(err <= tol, "%s cuda %s: error %.3g of the scale > %.1g" % (label, precision, err,
                                                                          tol))


def device(tool, only_pyramid=False):
    info = json.loads(tool.ok("info", "--json").stdout)
    if not info.get("cuda_devices"):
        print("SKIP: no CUDA device: %s" % info.get("cuda_none_reason"))
        return 77
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    w = Workdir()
    try:
        # Few cases per command (each cuda run pays the device's start-up): every mode meets the
        # derivative on some rank, the rest rotate through the modes and degrees.
        shapes = [(301,), (37, 54), (13, 17, 21)]
        modes = ["reflect", "mirror", "grid-wrap", "nearest", "grid-constant", "wrap"]
        for si, shape in enumerate(shapes):
            a = rng.uniform(-1, 1, size=shape)
            src = w.save("in.npy", a)
            m = float(np.max(np.abs(a)))
            rank = len(shape)
            for mi, mode in enumerate([] if only_pyramid else
                                      modes[si::len(shapes)] + [modes[(si + 1) % 6]]):
                degree = 3 if (si + mi) % 2 == 0 else 5
                base = ["--mode", mode, "--degree", degree]
                if mode == "grid-constant":
                    base += ["--cval", 0.25]
                order = ",".join(str((d + degree) % 3) for d in range(rank))
                o = sum((d + degree) % 3 for d in range(rank))
                tag = "%s %s n=%d" % (shape, mode, degree)
                compare(tool, w, ["derivative", src, "--order", order] + base,
                        m * 2.0 ** o * 3 ** rank, "derivative " + tag)
                if mi == 0:
                    compare(tool, w, ["laplacian", src] + base, m * 4 * rank * 3 ** rank,
                            "laplacian " + tag)
                    compare(tool, w, ["gradient", src] + base, m * 2 * 3 ** rank,
                            "gradient " + tag)
                    compare(tool, w, ["derivative", src, "--order", order, "--no-prefilter"] +
                            base, m * 2.0 ** o, "derivative coefficients " + tag)
                else:
                    compare(tool, w, ["gradient-magnitude", src] + base,
                            m * 2 * rank * 3 ** rank, "gradient-magnitude " + tag)
                    compare(tool, w, ["hessian", src] + base, m * 4 * 3 ** rank,
                            "hessian " + tag)
            mode = ["reflect", "mirror", "grid-wrap"][si]
            for lam in (() if only_pyramid else (0, 0.003, 0.5, 40)):
                compare(tool, w, ["smooth", src, "--lambda", lam, "--mode", mode], m * 3 ** rank,
                        "smooth %s %s lambda=%g" % (shape, mode, lam))
            if not only_pyramid:
                compare(tool, w, ["smooth", src, "--lambda", 0.5, "--coefficients", "--mode",
                                  mode, "--degree", 5], m * 10 ** rank,
                        "smooth coefficients %s %s" % (shape, mode))
                degrees = ",".join(str(2 * d + 1) for d in range(rank))
                compare(tool, w, ["indirect", src, "--degree", degrees, "--mode", mode], m,
                        "indirect %s %s" % (shape, mode))
            # The pyramid (the max-norm gain of a reduce axis is below 3 for these degrees).
            for pi, degree in enumerate((1, 3, 7)):
                pmode = ["reflect", "mirror", "grid-wrap"][(si + pi) % 3]
                if pmode == "grid-wrap" and any(n % 2 for n in shape):
                    zoom = ["--zoom", 0.71]
                else:
                    zoom = [] if pi % 2 == 0 else ["--zoom", [0.3, 0.71][si % 2]]
                base = ["--mode", pmode, "--degree", degree] + zoom
                tag = "%s %s n=%d %s" % (shape, pmode, degree, zoom)
                compare(tool, w, ["reduce", src] + base, m * 3 ** rank, "reduce " + tag)
                compare(tool, w, ["reduce", src, "--coefficients", "--coefficients-in"] + base,
                        m * 3 ** rank, "reduce coefficients " + tag)
                if not zoom:
                    coef = w.path("coef.npy")
                    tool.ok("reduce", src, coef, "--coefficients", "--mode", pmode, "--degree",
                            degree)
                    fine = ",".join(str(n) for n in shape)
                    compare(tool, w, ["expand", coef, "--shape", fine, "--mode", pmode,
                                      "--degree", degree], m * 3 ** rank, "expand " + tag)
    finally:
        w.close()
    for k in sorted(measured):
        print("measured %-28s worst |cuda - cpu double| / scale %.3g" % (k, measured[k]))
    return 0


def main():
    if (len(sys.argv) not in (3, 4) or sys.argv[2] not in ("contract", "device") or
            sys.argv[3:] not in ([], ["pyramid"])):
        print(__doc__)
        return 2
    tool = Tool(sys.argv[1])
    if sys.argv[2] == "contract":
        contract(tool)
    else:
        code = device(tool, sys.argv[3:] == ["pyramid"])
        if code == 77:
            return 77
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("all %s checks passed" % sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
