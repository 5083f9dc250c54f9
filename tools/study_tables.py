#!/usr/bin/env python3
"""study_tables.py: the GL-study tables of docs/ACCURACY.md (section 4) and docs/BENCHMARKS.md,
rendered from the JSON reports that tools/gl_study.sh writes, with a column per machine.

Usage: tools/study_tables.py MESA_DIR [GPU_DIR]
  MESA_DIR  a gl_study.sh output folder from Mesa llvmpipe (probe.json, table1.json, ...)
  GPU_DIR   the same from the GPU machine; without it the GPU cells read "H100: pending"
Prints Markdown on stdout, one "<!-- table: NAME -->" marker before each table, in the order
the docs use them. Standard library only.
"""
import json
import os
import sys

PENDING = "H100: pending"


def load(folder, name):
    if not folder:
        return None
    path = os.path.join(folder, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def e(v, digits=2):
    return "n/a" if v is None else "%.*e" % (digits, v)


def f(v, fmt="%.3f"):
    return "n/a" if v is None else fmt % v


def header(cells):
    return "| " + " | ".join(cells) + " |\n|" + "---|" * len(cells)


def row(cells):
    return "| " + " | ".join(cells) + " |"


def pick(rows, **key):
    for r in rows:
        if all(r.get(k) == v for k, v in key.items()):
            return r
    return None


FLAVOURS = ["nearest", "linear", "cubic-unfiltered", "lut", "otf", "precise"]


def accuracy_tables(mesa, gpu):
    out = []
    sets = [d["name"] for d in mesa["datasets"]]
    shapes = {d["name"]: d["shape"] for d in mesa["datasets"]}
    for machine, rep in (("Mesa llvmpipe", mesa), ("H100", gpu)):
        out.append("<!-- table: accuracy-%s -->" % ("mesa" if rep is mesa else "h100"))
        out.append("%s: max abs error (RMS) against the CPU double reference; reflect; positions "
                   "uniform in [-2, N+1]" % machine)
        out.append("")
        out.append(header(["flavour", "format"] + ["%s %s" % (s, shapes[s]) for s in sets]))
        for fmt in ("r32f", "r16f"):
            for fl in FLAVOURS:
                cells = [fl, fmt]
                for s in sets:
                    if rep is None:
                        cells.append(PENDING)
                        continue
                    r = pick(rep["results"], dataset=s, fetch=fl, format=fmt, boundary="reflect",
                             positions="full")
                    err = r["error"] if r else None
                    cells.append("%s (%s)" % (e(err["max_abs"]), e(err["rms"], 1)) if err else "-")
                out.append(row(cells))
        out.append("")
    # Interior vs full, boundary modes: worst case over datasets, both machines.
    out.append("<!-- table: accuracy-summary -->")
    out.append(header(["flavour", "format", "positions", "boundary modes",
                       "Mesa: worst max abs over the data sets", "H100: worst max abs"]))
    for fmt in ("r32f", "r16f"):
        for fl in FLAVOURS:
            for pos in ("full", "interior"):
                cells = [fl, fmt, "[-2, N+1]" if pos == "full" else "[0, N-1]",
                         "all three" if fl in ("lut", "otf", "precise") else "reflect"]
                for rep in (mesa, gpu):
                    if rep is None:
                        cells.append(PENDING)
                        continue
                    vals = [r["error"]["max_abs"] for r in rep["results"]
                            if r["fetch"] == fl and r["format"] == fmt and r["positions"] == pos
                            and r["error"]["max_abs"] is not None]
                    cells.append(e(max(vals)) if vals else "-")
                out.append(row(cells))
    out.append("")
    return out


def table1_table(mesa, gpu):
    out = ["<!-- table: table1 -->"]
    out.append(header(["variant", "format", "Mesa SSE", "Mesa ms/frame", "H100 SSE",
                       "H100 ms/frame", "H100 max abs", "published SSE", "published ms"]))
    for r in mesa["results"]:
        v, fmt = r["variant"], r["format"]
        g = pick(gpu["results"], variant=v, format=fmt) if gpu else None
        sse = lambda x: e(x["vs_double"]["sse"], 3) if x and x["vs_double"] else "-"
        mx = lambda x: e(x["vs_double"]["max_abs"]) if x and x["vs_double"] else "-"
        pub = {"lut": ("7.68e-4", "15.0"), "lut-repeat": ("7.68e-4", "15.0"),
               "otf": ("5.83e-4", "15.6")}.get(v, ("-", "-")) if fmt == "r32f" else ("-", "-")
        out.append(row([v, fmt, sse(r), f(r["ms_per_frame"], "%.3f") + " (wall)",
                        sse(g) if gpu else PENDING,
                        f(g["ms_per_frame"], "%.4f") if g else PENDING,
                        mx(g) if gpu else PENDING, pub[0], pub[1]]))
    out.append("")
    return out


def probe_tables(mesa, gpu):
    out = ["<!-- table: probe-weights -->"]
    out.append(header(["format", "Mesa levels", "Mesa max abs error", "H100 levels",
                       "H100 max abs error"]))
    for r in mesa["weight_resolution"]:
        g = pick(gpu["weight_resolution"], format=r["format"]) if gpu else None
        out.append(row([r["format"], str(r["levels"]), e(r["max_abs"]),
                        str(g["levels"]) if g else PENDING, e(g["max_abs"]) if g else PENDING]))
    out.append("")
    out.append("<!-- table: probe-figure3 -->")
    out.append(header(["format", "Mesa levels", "Mesa max error (LSB of 1/65535)", "H100 levels",
                       "H100 max error (LSB)"]))
    for r in mesa["figure3"]:
        g = pick(gpu["figure3"], format=r["format"]) if gpu else None
        out.append(row([r["format"], str(r["levels"]), f(r["max_abs_in_lsb"]),
                        str(g["levels"]) if g else PENDING,
                        f(g["max_abs_in_lsb"]) if g else PENDING]))
    out.append("")
    return out


def rotation_table(mesa, gpu):
    out = ["<!-- table: rotation -->"]
    out.append(header(["flavour", "format", "CPU double (dB)", "Mesa (dB)",
                       "Mesa vs CPU double (dB)", "H100 (dB)", "H100 vs CPU double (dB)",
                       "H100 max abs vs CPU double"]))
    cpu = {c["method"]: c["psnr_vs_original"] for c in mesa["cpu_double"]}

    def vs(x):
        if x["psnr_vs_cpu_double"] is None:
            return "identical" if x["max_abs_vs_cpu_double_disc"] == 0 else "n/a"
        return f(x["psnr_vs_cpu_double"], "%.1f")

    for r in mesa["results"]:
        g = pick(gpu["results"], fetch=r["fetch"], format=r["format"]) if gpu else None
        out.append(row([r["fetch"], r["format"], f(cpu.get(r["cpu_method"])),
                        f(r["psnr_vs_original"]), vs(r),
                        f(g["psnr_vs_original"]) if g else PENDING, vs(g) if g else PENDING,
                        e(g["max_abs_vs_cpu_double_disc"]) if g else PENDING]))
    out.append("")
    return out


FULL_SIZE = {"zoom2d": "1920x1080 -> 3840x2160", "oblique3d": "256^3 -> 2048x2048"}


def speed_table(mesa, gpu):
    out = ["<!-- table: speed -->"]
    out.append(header(["workload", "format", "flavour", "H100 ms/frame",
                       "H100 x linear", "H100 goal", "Mesa ms/frame (wall)", "Mesa x linear"]))
    for r in mesa["results"]:
        kind = r["workload"].split()[0]
        g = None
        if gpu:
            g = next((x for x in gpu["results"] if x["workload"].split()[0] == kind
                      and x["fetch"] == r["fetch"] and x["format"] == r["format"]), None)
        full = g["workload"].split(" ", 1)[1] if g else FULL_SIZE.get(kind, "?")
        name = "%s %s; Mesa %s" % (kind, full, r["workload"].split(" ", 1)[1])
        goal = ("met" if g.get("meets_goal") else "missed") if g and "meets_goal" in g else ""
        out.append(row([name, r["format"], r["fetch"],
                        f(g["ms"], "%.3f") if g else PENDING,
                        f(g["ratio_to_linear"], "%.2f") if g else PENDING,
                        goal if g else PENDING if "meets_goal" in r else "",
                        f(r["ms"], "%.2f"), f(r["ratio_to_linear"], "%.2f")]))
    out.append("")
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    mesa_dir = sys.argv[1]
    gpu_dir = sys.argv[2] if len(sys.argv) > 2 else None
    lines = []
    for name, fn in (("accuracy", accuracy_tables), ("table1", table1_table),
                     ("probe", probe_tables), ("rotation", rotation_table), ("speed", speed_table)):
        m = load(mesa_dir, name)
        if m is None:
            sys.exit("study_tables: no %s.json in %s" % (name, mesa_dir))
        lines += fn(m, load(gpu_dir, name))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
