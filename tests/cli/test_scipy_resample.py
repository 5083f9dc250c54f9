#!/usr/bin/env python3
"""splinetool resample against scipy.ndimage.zoom / shift / rotate, and '-' (stdin/stdout).

Usage: test_scipy_resample.py PATH/TO/splinetool [SUMMARY.md]

Random oracle: for every mode (reflect, grid-mirror, mirror, grid-wrap, wrap, nearest, constant,
grid-constant) and order 0..5 (`--degree N`), with a random cval:
  - `--zoom` with per-axis factors (and a scalar one) in 1-, 2- and 3-D, both `--grid-mode`s,
    factors including 0.5 and 2 (whose positions fall on order-0 ties), against
    scipy.ndimage.zoom(grid_mode=...);
  - `--shape` against zoom with the factors out/in (its output shape checked too);
  - `--shift` per axis (0.5 included: ties again) against scipy.ndimage.shift;
  - `--rotate` in 2-D and 3-D, random angle, `--axes`, `--reshape` or not, against
    scipy.ndimage.rotate (shape included).
Tolerance as in test_scipy_modes.py: 1e-13 relative to the data range (cval included) against
the exact reference everywhere, and against scipy wherever scipy itself is exact. Where scipy is
not (reflect/grid-mirror on short lines, nearest/grid-constant padded by only 12 samples; see
docs/ACCURACY.md) the case must be one of those, and the comparison is with the exact
reference of test_scipy_modes.py (a dense solve of the interpolation conditions, padded by 60
for nearest/grid-constant, evaluated by scipy's map_coordinates(prefilter=False)) at scipy's
positions, computed here with scipy's formulas; 3-D rotations plane by plane, as scipy does.
Defaults: `--zoom F` alone is zoom(grid_mode=True, mode='grid-mirror'), `--rotate` alone is
rotate(reshape=False, mode='reflect').

Then '-': a pipe and a redirect into `prefilter - -` give the bytes of the file path result;
`sample`, `resample`, `compare` through stdin/stdout; --json with OUT '-' goes to stderr;
refusals: two '-' inputs (exit 2), a PNG on stdin (exit 1, one line), --grid-mode without a
zoom, option counts that do not fit the input, scipy's extras on --backend gl (exit 2).
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import scipy
    import scipy.ndimage as ndi
    import scipy.special
except ImportError as e:  # ctest shows this test as skipped (SKIP_RETURN_CODE 77)
    print("skipped: %s needs numpy and scipy (%s)" % (sys.executable, e))
    sys.exit(77)

import warnings

from cli_util import Tool, Workdir, load
from test_scipy_modes import MODES, TOLERANCE, exact_samples, known_inexact

DEGREES = (0, 1, 2, 3, 4, 5)
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def grid(axes):
    """(M, d) coordinates of the outer product of per-axis positions (C order)."""
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


def zoom_axes(shape, out, grid_mode):
    axes = []
    for n, m in zip(shape, out):
        if grid_mode:
            z = n / m
            axes.append((np.arange(m) + 0.5) * z - 0.5)
        else:
            z = (n - 1) / (m - 1) if m > 1 else 1.0
            axes.append(np.arange(m) * z)
    return axes


def rotate_plane_positions(in_plane, angle, reshape):
    """scipy.ndimage.rotate's (out plane shape, (M, 2) positions) for a plane of in_plane."""
    c, s = scipy.special.cosdg(angle), scipy.special.sindg(angle)  # as scipy's rotate
    rot = np.array([[c, s], [-s, c]])
    iy, ix = in_plane
    if reshape:
        b = rot @ [[0, 0, iy, iy], [0, ix, 0, ix]]
        out = tuple((np.ptp(b, axis=1) + 0.5).astype(int))
    else:
        out = tuple(in_plane)
    offset = (np.asarray(in_plane) - 1) / 2 - rot @ ((np.asarray(out) - 1) / 2)
    o = grid([np.arange(out[0]), np.arange(out[1])])
    return out, o @ rot.T + offset


def exact_rotate(f, angle, axes, reshape, order, mode, cval):
    a, b = sorted(axes)
    g = np.moveaxis(f, (a, b), (0, 1))  # plane axes first
    out, pos = rotate_plane_positions(g.shape[:2], angle, reshape)
    if g.ndim == 2:
        res = exact_samples(g, pos, order, mode, cval, False).reshape(out)
    else:
        res = np.stack([exact_samples(g[:, :, k], pos, order, mode, cval, False).reshape(out)
                        for k in range(g.shape[2])], axis=-1)
    return np.moveaxis(res, (0, 1), (a, b))


def compare_case(name, ours, sp, exact, f, cval, mode, order, table):
    scale = max(float(f.max()), cval) - min(float(f.min()), cval)
    if ours.shape != sp.shape:
        check(False, "%s: shape %s, scipy %s" % (name, ours.shape, sp.shape))
        return
    d_sp = np.abs(ours - sp).max() / scale
    row = table.setdefault((mode, order), [0.0, 0.0, 0.0])
    if exact is None:  # scipy is exact here by construction (orders 0-1, or checked below)
        check(d_sp <= TOLERANCE, "%s: %.2e from scipy > %.0e" % (name, d_sp, TOLERANCE))
        row[0] = max(row[0], d_sp)
        return
    d_ex = np.abs(ours - exact).max() / scale
    sp_ex = np.abs(sp - exact).max() / scale
    row[1] = max(row[1], d_ex)
    check(d_ex <= TOLERANCE, "%s: %.2e from the exact reference > %.0e" % (name, d_ex, TOLERANCE))
    if sp_ex <= TOLERANCE:
        # scipy within the tolerance of the exact values: ours within that plus scipy's own
        row[0] = max(row[0], d_sp)
        check(d_sp <= TOLERANCE + sp_ex, "%s: %.2e from scipy although scipy is exact" %
              (name, d_sp))
    else:
        row[2] = max(row[2], sp_ex)
        check(known_inexact(mode, order, f.shape),
              "%s: scipy differs from the exact reference by %.2e where it is known to be "
              "exact: the reference is wrong" % (name, sp_ex))


def oracle(tool, w, rng, table):
    print("scipy %s, numpy %s, tolerance %.0e relative to the data range" %
          (scipy.__version__, np.__version__, TOLERANCE))
    cases = 0
    # Every resample of the matrix runs through one `splinetool batch` process (each command
    # exactly as a separate run; every one must exit 0): the cases are drawn and scipy's and the
    # exact results computed first, each case's OUT compared after the batch.
    commands = []
    later = []  # compare_case's arguments, OUT's path in place of our result
    for mode in MODES:
        for order in DEGREES:
            cval = float(rng.uniform(-2.0, 4.0))
            common = ["--degree", order, "--mode", mode, "--cval", repr(cval)]
            need_exact = order >= 2  # where scipy may be inexact; cheap enough to always check

            def run(f, *args, common=common):
                k = len(commands)
                src, out = w.save("f%d.npy" % k, f), w.path("o%d.npy" % k)
                commands.append(["resample", src, out, *args, *common])
                return out

            # --zoom in 1-, 2-, 3-D; per-axis, and a scalar in 1-D; both grid modes
            for rank in (1, 2, 3):
                shape = tuple(int(rng.integers(2, 9 if rank == 3 else 14)) for _ in range(rank))
                f = rng.uniform(-1.0, 3.0, shape)
                choices = [0.5, 2.0, 1.0, 0.7, 1.6, 3.0, 0.35]
                z = [float(rng.choice(choices)) for _ in range(rank)]
                grid_mode = (order + rank + MODES.index(mode)) % 2 == 0
                zarg = repr(z[0]) if rank == 1 else ",".join(repr(v) for v in z)
                # --point-sample: scipy's zoom samples the spline (our default below 1 is the
                # anti-aliased reduction, tested in test_spline_commands.py)
                ours = run(f, "--zoom", zarg, "--grid-mode", "true" if grid_mode else "false",
                           "--point-sample")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sp = ndi.zoom(f, z, order=order, mode=mode, cval=cval, grid_mode=grid_mode)
                exact = None
                if need_exact:
                    pos = grid(zoom_axes(shape, sp.shape, grid_mode))
                    exact = exact_samples(f, pos, order, mode, cval, False).reshape(sp.shape)
                later.append(("zoom %s %s %s order %d grid_mode %s" % (shape, z, mode, order,
                                                                        grid_mode),
                              ours, sp, exact, f, cval, mode, order))
                cases += 1

            # --shape (scipy: zoom by out/in per axis)
            rank = int(rng.integers(1, 4))
            shape = tuple(int(rng.integers(2, 9 if rank == 3 else 14)) for _ in range(rank))
            out = tuple(int(rng.integers(1, 12)) for _ in range(rank))
            f = rng.uniform(-1.0, 3.0, shape)
            grid_mode = bool(rng.integers(0, 2))
            # --point-sample as for --zoom: a --shape smaller than IN is anti-aliased by default
            ours = run(f, "--shape", ",".join(map(str, out)), "--grid-mode",
                       "true" if grid_mode else "false", "--point-sample")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sp = ndi.zoom(f, np.array(out) / np.array(shape), order=order, mode=mode,
                              cval=cval, grid_mode=grid_mode)
            check(sp.shape == out, "scipy's zoom by out/in gives %s, not %s" % (sp.shape, out))
            exact = None
            if need_exact:
                pos = grid(zoom_axes(shape, out, grid_mode))
                exact = exact_samples(f, pos, order, mode, cval, False).reshape(out)
            later.append(("shape %s -> %s %s order %d grid_mode %s" % (shape, out, mode, order,
                                                                        grid_mode),
                          ours, sp, exact, f, cval, mode, order))

            # --shift per axis
            rank = int(rng.integers(1, 4))
            shape = tuple(int(rng.integers(2, 9 if rank == 3 else 14)) for _ in range(rank))
            f = rng.uniform(-1.0, 3.0, shape)
            s = [float(rng.choice([0.5, -1.25, 2.0, float(rng.uniform(-4, 4))]))
                 for _ in range(rank)]
            ours = run(f, "--shift", ",".join(repr(v) for v in s))
            sp = ndi.shift(f, s, order=order, mode=mode, cval=cval)
            exact = None
            if need_exact:
                pos = grid([np.arange(n) - v for n, v in zip(shape, s)])
                exact = exact_samples(f, pos, order, mode, cval, False).reshape(shape)
            later.append(("shift %s by %s %s order %d" % (shape, s, mode, order), ours, sp,
                          exact, f, cval, mode, order))

            # --rotate: 2-D and 3-D alternately, random angle, axes and reshape
            rank = 2 + (order + MODES.index(mode)) % 2
            shape = tuple(int(rng.integers(3, 9 if rank == 3 else 16)) for _ in range(rank))
            f = rng.uniform(-1.0, 3.0, shape)
            angle = float(rng.choice([float(rng.uniform(-200, 400)), 90.0, 30.0]))
            reshape = bool(rng.integers(0, 2))
            axes = [1, 0] if rank == 2 else [int(a) for a in rng.choice(3, 2, replace=False)]
            args = ["--rotate", repr(angle), "--axes", "%d,%d" % tuple(axes)]
            ours = run(f, *(args + (["--reshape"] if reshape else [])))
            sp = ndi.rotate(f, angle, axes=axes, reshape=reshape, order=order, mode=mode,
                            cval=cval)
            exact = exact_rotate(f, angle, axes, reshape, order, mode, cval) if need_exact \
                else None
            later.append(("rotate %s by %.4f axes %s reshape %s %s order %d" %
                          (shape, angle, axes, reshape, mode, order), ours, sp, exact, f, cval,
                          mode, order))
            cases += 3
    tool.ok_all(commands)
    for name, out, sp, exact, f, cval, mode, order in later:
        compare_case(name, load(out), sp, exact, f, cval, mode, order, table)
    print("%d cases" % cases)


def defaults(tool, w, rng):
    """--zoom alone is zoom(grid_mode=True, mode='grid-mirror'); --rotate alone is
    rotate(reshape=False, mode='reflect'); --zoom 0.5 on odd extents rounds half to even."""
    f = rng.uniform(0, 1, (41, 45))
    src = w.save("d.npy", f)
    tool.ok("resample", src, w.path("z.npy"), "--zoom", "2", "--method", "linear")
    want = ndi.zoom(f, 2, order=1, mode="grid-mirror", grid_mode=True)
    check(np.abs(load(w.path("z.npy")) - want).max() <= 1e-13, "default --zoom is not "
          "zoom(grid_mode=True, mode='grid-mirror')")
    tool.ok("resample", src, w.path("r.npy"), "--rotate", "17", "--method", "linear")
    want = ndi.rotate(f, 17, reshape=False, order=1, mode="reflect")
    check(np.abs(load(w.path("r.npy")) - want).max() <= 1e-13, "default --rotate is not "
          "rotate(reshape=False, mode='reflect')")
    tool.ok("resample", w.save("odd.npy", rng.uniform(0, 1, (5, 7))), w.path("h.npy"), "--zoom",
            "0.5")
    check(load(w.path("h.npy")).shape == ndi.zoom(np.zeros((5, 7)), 0.5).shape == (2, 4),
          "--zoom 0.5 of (5, 7) is not scipy's (2, 4)")


def run_bytes(tool, args, stdin_bytes=None, stdin_file=None):
    with open(stdin_file, "rb") if stdin_file else open(os.devnull, "rb") as fin:
        return subprocess.run([tool.path] + [str(a) for a in args],
                              input=stdin_bytes, stdin=None if stdin_bytes is not None else fin,
                              capture_output=True, timeout=300)


def streams(tool, w, rng):
    a = w.save("a.npy", rng.uniform(-1, 2, (9, 11, 6)))
    with open(a, "rb") as fh:
        a_bytes = fh.read()
    tool.ok("prefilter", a, w.path("f.npy"), "--degree", 5)
    with open(w.path("f.npy"), "rb") as fh:
        want = fh.read()
    piped = run_bytes(tool, ["prefilter", "-", "-", "--degree", 5], stdin_bytes=a_bytes)
    check(piped.returncode == 0 and piped.stdout == want and piped.stderr == b"",
          "prefilter - - through a pipe is not the file result bit for bit (%d, %r)" %
          (piped.returncode, piped.stderr[:200]))
    redirected = run_bytes(tool, ["prefilter", "-", "-", "--degree", 5], stdin_file=a)
    check(redirected.returncode == 0 and redirected.stdout == want,
          "prefilter - - < a.npy is not the file result bit for bit")
    # single precision (float32) too
    tool.ok("prefilter", a, w.path("f32.npy"), "--precision", "single")
    with open(w.path("f32.npy"), "rb") as fh:
        want32 = fh.read()
    r = run_bytes(tool, ["prefilter", "-", "-", "--precision", "single"], stdin_bytes=a_bytes)
    check(r.returncode == 0 and r.stdout == want32, "prefilter --precision single - - differs")
    # sample: COORDS from stdin, OUT to stdout
    p = rng.uniform(-2, 12, (50, 3))
    pp = w.save("p.npy", p)
    with open(pp, "rb") as fh:
        p_bytes = fh.read()
    tool.ok("sample", a, pp, w.path("v.npy"))
    r = run_bytes(tool, ["sample", a, "-", "-"], stdin_bytes=p_bytes)
    with open(w.path("v.npy"), "rb") as fh:
        check(r.returncode == 0 and r.stdout == fh.read(), "sample a.npy - - differs")
    # resample: a pipe chain, with --json going to stderr
    tool.ok("resample", a, w.path("z.npy"), "--zoom", "1,2,0.5", "--mode", "nearest",
            "--point-sample")
    r = run_bytes(tool, ["resample", "-", "-", "--zoom", "1,2,0.5", "--mode", "nearest",
                         "--point-sample", "--json"], stdin_bytes=a_bytes)
    with open(w.path("z.npy"), "rb") as fh:
        check(r.returncode == 0 and r.stdout == fh.read(), "resample - - differs")
    try:
        j = json.loads(r.stderr.decode())
        check(j["command"] == "resample" and j["shape"] == [9, 22, 3],
              "resample - - --json: report %r" % j)
    except ValueError:
        check(False, "resample - - --json: stderr is not the JSON report: %r" % r.stderr[:200])
    # compare - B
    r = run_bytes(tool, ["compare", "-", a, "--json"], stdin_bytes=a_bytes)
    check(r.returncode == 0 and json.loads(r.stdout.decode())["identical"] is True,
          "compare - a.npy with a's bytes is not identical")
    # refusals
    for args, what in [(["compare", "-", "-"], "compare - -"),
                       (["sample", "-", "-", w.path("none.npy")], "sample - - OUT"),
                       (["resample", "-", w.path("none.npy"), "--zoom", 2, "--reference", "-"],
                        "resample - --reference -")]:
        r = run_bytes(tool, args, stdin_bytes=a_bytes)
        err = r.stderr.decode()
        check(r.returncode == 2 and "standard input" in err and err.count("\n") == 1,
              "%s: expected exit 2 naming standard input, got %d %r" % (what, r.returncode, err))
    check(not os.path.exists(w.path("none.npy")), "a refused command created OUT")
    png = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets",
                       "ascent.png")
    with open(png, "rb") as fh:
        r = run_bytes(tool, ["prefilter", "-", w.path("none.npy")], stdin_bytes=fh.read())
    err = r.stderr.decode()
    check(r.returncode == 1 and err.startswith("splinetool: standard input: not a .npy file")
          and err.count("\n") == 1, "a PNG on stdin: %d %r" % (r.returncode, err))
    r = run_bytes(tool, ["prefilter", "-", "-"], stdin_bytes=a_bytes + b"junk")
    check(r.returncode == 1 and b"trailing data" in r.stderr and r.stdout == b"",
          "trailing bytes on stdin: %d %r" % (r.returncode, r.stderr))
    r = run_bytes(tool, ["prefilter", "-", "-"], stdin_bytes=a_bytes[:200])
    check(r.returncode == 1 and r.stdout == b"", "a truncated stdin wrote something")


def refusals(tool, w, rng):
    x2 = w.save("x2.npy", rng.uniform(0, 1, (6, 7)))
    out = w.path("never.npy")
    cases = []
    for args, code, text in [
            (["--zoom", 2, "--grid-mode", "false", "--shift", 1], 2, "excludes"),
            (["--shift", 1, "--grid-mode", "true"], 2, "--grid-mode goes with"),
            (["--zoom", 2, "--axes", "0,1"], 2, "--axes and --reshape go with --rotate"),
            (["--zoom", "1,2,3,4"], 2, "at most 3"),
            (["--zoom", "1,0"], 2, "--zoom"),
            (["--shape", "3,0"], 2, "--shape"),
            (["--zoom", "1,2,3"], 1, "gives 3 values for the 2-D input"),
            (["--shape", "4"], 1, "gives 1 extents for the 2-D input"),
            (["--shift", "1,2,3"], 1, "gives 3 values"),
            (["--rotate", 10, "--axes", "0,0"], 1, "two different axes"),
            (["--rotate", 10, "--axes", "0,2"], 1, "names no plane"),
            (["--zoom", 2, "--no-prefilter"], 2, "--no-prefilter goes with --degree"),
            (["--zoom", 2, "--degree", 3, "--method", "linear"], 2, "excludes"),
            (["--shape", "20000,20000"], 1, "the limit is"),
            (["--shift", 1, "--backend", "gl"], 2, "CPU only"),
            (["--zoom", "1,2", "--backend", "gl"], 2, "CPU only"),
            (["--rotate", 5, "--reshape", "--backend", "gl"], 2, "CPU only")]:
        cases.append((args, code, text))
    # one `splinetool batch` process: each line's exit status and error line as alone
    for (args, code, text), r in zip(cases, tool.batch([["resample", x2, out, *args]
                                                         for args, _, _ in cases])):
        check(r.returncode == code and text in r.stderr and r.stderr.count("\n") == 1,
              "resample %s: expected exit %d with %r, got %d %r" %
              (args, code, text, r.returncode, r.stderr))
    check(not os.path.exists(out), "a refused resample created OUT")
    # JSON of the new options
    j = json.loads(tool.ok("resample", x2, w.path("j.npy"), "--zoom", "2,0.5", "--grid-mode",
                           "false", "--degree", 4, "--point-sample", "--json").stdout)
    check(j["zoom"] == [2, 0.5] and j["grid_mode"] is False and j["degree"] == 4 and
          j["method"] is None and j["shape"] == [12, 4], "resample --json: %r" % j)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: test_scipy_resample.py PATH/TO/splinetool [SUMMARY.md]")
    tool = Tool(sys.argv[1])
    summary_path = sys.argv[2] if len(sys.argv) > 2 else None
    w = Workdir()
    seed = int(os.environ.get("SPLINETOOL_ORACLE_SEED", "20261126"))
    rng = np.random.default_rng(seed)
    table = {}
    oracle(tool, w, rng, table)
    defaults(tool, w, rng)
    streams(tool, w, rng)
    refusals(tool, w, rng)
    lines = ["| mode | order | ours vs scipy (where exact) | ours vs exact | scipy inexact: "
             "scipy vs exact up to |", "|---|---|---|---|---|"]
    for mode in MODES:
        for n in DEGREES:
            t = table.get((mode, n), [0.0, 0.0, 0.0])
            lines.append("| %s | %d | %.1e | %s | %s |" % (
                mode, n, t[0], "%.1e" % t[1] if n >= 2 else "-",
                "%.1e" % t[2] if t[2] > 0 else "-"))
    summary = "\n".join(lines)
    print(summary)
    if summary_path:
        with open(summary_path, "w") as fh:
            fh.write(summary + "\n")
    w.close()
    if FAILURES:
        print("\nFAILED (%d)" % len(FAILURES))
        sys.exit(1)
    print("\nall cases agree")


if __name__ == "__main__":
    main()
