#!/usr/bin/python3
"""splineview's Python package against scipy.ndimage, side by side in one run: spline_filter,
zoom x2 and rotate (30 degrees, reshape=False) of 2048^2 and 256^3 float64, order 3, mode
'mirror'. Prints a Markdown table.

Each measurement runs in a fresh process (a runner that starts the worker and reads
resource.getrusage(RUSAGE_CHILDREN).ru_maxrss once it has exited): time = median of the worker's
repeats; peak = the worker's peak RSS minus a baseline worker that imports numpy and the same
module and makes the same input but calls nothing. So "peak" is what the call adds on top of the
input: its copies, coefficients, output and scratch.

usage: PYTHONPATH=build-rel/python /usr/bin/python3 tools/bench_python.py [--repeats N]
       [--only 2d|3d]
"""
import argparse
import json
import os
import resource
import subprocess
import sys

CASES = [
    ("spline_filter", "2048^2", (2048, 2048)),
    ("zoom x2", "2048^2", (2048, 2048)),
    ("rotate 30", "2048^2", (2048, 2048)),
    ("spline_filter", "256^3", (256, 256, 256)),
    ("zoom x2", "256^3", (256, 256, 256)),
    ("rotate 30", "256^3", (256, 256, 256)),
]

WORKER = r"""
import json, statistics, sys, time
import numpy as np
lib, op, shape, repeats = sys.argv[1], sys.argv[2], tuple(json.loads(sys.argv[3])), int(sys.argv[4])
if lib == "splineview":
    import splineview as m
else:
    import scipy.ndimage as m
a = np.random.default_rng(1).random(shape)
calls = {
    "none": None,
    "spline_filter": lambda: m.spline_filter(a, order=3, mode="mirror"),
    "zoom x2": lambda: m.zoom(a, 2, order=3, mode="mirror"),
    "rotate 30": lambda: m.rotate(a, 30, reshape=False, order=3, mode="mirror"),
}
times = []
if calls[op] is not None:
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = calls[op]()
        times.append(time.perf_counter() - t0)
        del r
print(json.dumps({"time": statistics.median(times) if times else 0.0}))
"""

RUNNER = r"""
import resource, subprocess, sys, json
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
r = json.loads(out.strip().splitlines()[-1])
r["maxrss_kib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps(r))
"""


def measure(lib, op, shape, repeats):
    cmd = [sys.executable, "-c", RUNNER, sys.executable, "-c", WORKER, lib, op,
           json.dumps(list(shape)), str(repeats)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=["2d", "3d"])
    args = ap.parse_args()
    import numpy
    import scipy
    import splineview
    print("splineview %s, scipy %s, numpy %s, python %s, %d CPUs"
          % (splineview.__version__, scipy.__version__, numpy.__version__,
             sys.version.split()[0], os.cpu_count()))
    print()
    print("| operation | size | scipy time | ours time | speed-up | scipy peak | ours peak "
          "| memory ours/scipy |")
    print("|---|---|---|---|---|---|---|---|")
    base = {}
    for op, label, shape in CASES:
        if args.only and (len(shape) == 2) != (args.only == "2d"):
            continue
        row = {}
        for lib in ("scipy", "splineview"):
            if (lib, shape) not in base:
                base[(lib, shape)] = measure(lib, "none", shape, 1)["maxrss_kib"]
            r = measure(lib, op, shape, args.repeats)
            row[lib] = (r["time"], (r["maxrss_kib"] - base[(lib, shape)]) / 1024.0)
        (ts, ms), (to, mo) = row["scipy"], row["splineview"]
        print("| %s | %s | %.3f s | %.3f s | %.1fx | %.0f MB | %.0f MB | %.2f |"
              % (op, label, ts, to, ts / to, ms, mo, mo / ms if ms > 0 else float("nan")))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
