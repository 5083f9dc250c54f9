#!/usr/bin/env python3
"""Prints the CUDA tables of docs/BENCHMARKS.md from one run of tools/cuda_study.sh:
    tools/cuda_tables.py OUT_DIR
(OUT_DIR holds prefilter.json, peers.json and, if it was run, reconstruct.json of the same
run)."""
import json
import os
import sys


def main():
    d = sys.argv[1]
    pf = json.load(open(f"{d}/prefilter.json"))
    pe = json.load(open(f"{d}/peers.json"))
    has_rc = os.path.exists(f"{d}/reconstruct.json")
    peers = {c["name"]: c for c in pe["cases"]}
    print(f"<!-- table: cuda-prefilter ({pf['device']}; cupy {pe['cupy']}, scipy {pe['scipy']}) -->")
    print("| data | MB | copy ms | per axis ms | fraction of copy per axis | **total ms** | "
          "naive total ms | cupyx ms | scipy (CPU) ms | vs cupyx | vs scipy | extra MB | "
          "9800 GTX ms, temp array / step (published) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in pf["cases"]:
        v = {x["name"]: x for x in c["variants"]}
        t = v["tiled"]
        nv = next(x for x in c["variants"] if x["name"].startswith("naive"))
        p = peers.get(c["name"], {})
        cu = p.get("cupyx", {}).get("total")
        sc = p.get("scipy", {}).get("total")
        axes = " / ".join(f"{x:.3f}" for x in t["axis_ms"])
        fr = " / ".join(f"{100 * x:.0f}%" for x in t["axis_fraction_of_copy"])
        vs_cu = f"{cu / t['total_ms']:.1f}x" if cu else "-"
        vs_sc = f"{sc / t['total_ms']:.0f}x" if sc else "-"
        print(f"| {c['name']} | {c['bytes'] / 1e6:.1f} | {c['copy_ms']:.3f} | {axes} | {fr} | "
              f"**{t['total_ms']:.3f}** | {nv['total_ms']:.3f} | "
              f"{cu:.3f} | {sc:.1f} | {vs_cu} | {vs_sc} | {t['extra_bytes'] / 1e6:.1f} | "
              f"{c['published_9800gtx_ms'] or '-'} |" if cu and sc else
              f"| {c['name']} | ... |")
    print()
    print("<!-- table: cuda-prefilter-variants -->")
    big = [c for c in pf["cases"] if len(c["variants"]) > 3]
    print("| variant | " + " | ".join(c["name"] for c in big) + " |")
    print("|---" * (len(big) + 1) + "|")
    names = []  # every variant of the big cases, in order of appearance
    for c in big:
        names += [x["name"] for x in c["variants"] if x["name"] not in names]
    for name in names:
        cells = []
        for c in big:
            v = next((x for x in c["variants"] if x["name"] == name), None)
            cells.append(" / ".join(f"{100 * x:.0f}%" for x in v["axis_fraction_of_copy"])
                         if v else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("<!-- table: cuda-prefilter-fused -->")
    print("| volume | MB | copy ms | y + x passes ms | **fused y/x pass ms** | z pass ms | "
          "per-axis total ms | **fused total ms** | fused vs per-axis | cupyx ms | "
          "fused vs cupyx |")
    print("|---" * 11 + "|")
    for c in pf["cases"]:
        v = {x["name"]: x for x in c["variants"]}
        if "tiled, one pass per axis" not in v or "fused_xy_ms" not in v["tiled"]:
            continue
        t, pa = v["tiled"], v["tiled, one pass per axis"]
        ax = pa["axis_ms"]
        cu = peers.get(c["name"], {}).get("cupyx", {}).get("total")
        print(f"| {c['name']} | {c['bytes'] / 1e6:.1f} | {c['copy_ms']:.3f} | "
              f"{ax[1]:.3f} + {ax[2]:.3f} = {ax[1] + ax[2]:.3f} | **{t['fused_xy_ms']:.3f}** | "
              f"{t['axis_ms'][0]:.3f} | {pa['total_ms']:.3f} | **{t['total_ms']:.3f}** | "
              f"{pa['total_ms'] / t['total_ms']:.2f}x | "
              + (f"{cu:.3f} | {cu / t['total_ms']:.1f}x |" if cu else "- | - |"))
    print()
    if has_rc:
        print("<!-- table: cuda-reconstruct -->")
        print(open(f"{d}/reconstruct.md").read())


if __name__ == "__main__":
    main()
