#!/usr/bin/python3
"""splinetool start-up: shared libraries loaded and wall time of short commands.

usage: tools/startup_bench.py [--runs N] LABEL=PATH/TO/splinetool [LABEL=... ...]

For each splinetool given (e.g. before=/tmp/old/splinetool after=build-rel/app/splinetool/
splinetool), measures in one interleaved run:
  - the shared objects the dynamic loader maps (LD_DEBUG=files, "generating link map"; the
    vDSO is not counted), for `--version` and for `sample` of a 4x4 .npy at 2 positions;
  - the wall time of both commands, median and 10th/90th percentiles of N runs (default 50),
    from fork to exit as seen by this script, and the CPU time (user + system) the child used,
    which other work on the machine disturbs less;
and, for context, `/usr/bin/python3 -c "import scipy.ndimage"` on the same machine.
Prints a Markdown table. A benchmark: it asserts nothing about speed.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def libraries(cmd):
    env = dict(os.environ, LD_DEBUG="files")
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
    maps = {line.split("file=", 1)[1].split()[0] for line in r.stderr.splitlines()
            if "generating link map" in line and "file=" in line}
    return len(maps) + 1  # + the executable itself (its link map is not announced)


def run_ms(cmd):
    """(wall ms, CPU ms: user + system of the child) of one run."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    t = (time.perf_counter() - t0) * 1e3
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode})")
    return t, (usage.ru_utime + usage.ru_stime) * 1e3


def summary(times):
    q = statistics.quantiles(times, n=10)
    return f"{statistics.median(times):.1f} ({q[0]:.1f}..{q[-1]:.1f})"


def main():
    args = sys.argv[1:]
    runs = 50
    if len(args) >= 2 and args[0] == "--runs":
        runs, args = int(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    tools = [a.split("=", 1) for a in args]
    with tempfile.TemporaryDirectory() as tmp:
        tiny, coords, out = (os.path.join(tmp, n) for n in ("tiny.npy", "coords.npy", "out.npy"))
        np.save(tiny, np.arange(16.0).reshape(4, 4))
        np.save(coords, np.array([[1.5, 1.5], [0.2, 2.7]]))
        cases = []
        for label, tool in tools:
            cases.append((label, "--version", [tool, "--version"]))
            cases.append((label, "sample 4x4", [tool, "sample", tiny, coords, out]))
        cases.append(("python3", "import scipy.ndimage",
                      ["/usr/bin/python3", "-c", "import scipy.ndimage"]))
        libs = {(l, w): libraries(c) for l, w, c in cases}
        for _, _, c in cases:  # warm the page cache
            run_ms(c)
        wall = {(l, w): [] for l, w, _ in cases}
        cpu = {(l, w): [] for l, w, _ in cases}
        for _ in range(runs):  # interleaved, so drift on the shared machine hits every case alike
            for l, w, c in cases:
                t, u = run_ms(c)
                wall[(l, w)].append(t)
                cpu[(l, w)].append(u)
    print(f"| binary | command | shared objects loaded | wall ms, median of {runs} (p10..p90) "
          f"| CPU ms (user + sys), median |")
    print("|---|---|---|---|---|")
    for l, w, _ in cases:
        print(f"| {l} | `{w}` | {libs[(l, w)]} | {summary(wall[(l, w)])} | "
              f"{statistics.median(cpu[(l, w)]):.1f} |")

if __name__ == "__main__":
    main()
