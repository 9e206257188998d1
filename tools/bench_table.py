#!/usr/bin/env python3
"""Markdown tables of a `duet bench` JSON (docs/performance.md).

    python3 tools/bench_table.py bench/results/bench-h200-w2.json            # all workloads
    python3 tools/bench_table.py --gemm bench/results/bench-h200-w2.json     # each GEMM once
    python3 tools/bench_table.py --compare A.json B1.json B2.json            # runs of tools/gpu.sh bench with VARIANTS

Only reads the JSON that `duet bench --json` wrote; every number is a measured median or a ratio of two.
Reads both layouts: duet-bench/2 (times in us: "us", "bound_us", ...) and duet-bench/1 (the files
before it, as in bench/results: "ms", "bound_ms", ...). The tables show ms.
"""
import argparse
import json
import os
import sys


def ms(stat):
    """A figure's median in ms: duet-bench/2 holds us, duet-bench/1 ms."""
    if not stat.get("ok"):
        return None
    return stat["us"] / 1e3 if "us" in stat else stat["ms"]


def derived_ms(x, name):
    """A derived time (bound, best_vendor, best_duet) in ms, from name_us (/2) or name_ms (/1)."""
    if x.get(name + "_us") is not None:
        return x[name + "_us"] / 1e3
    return x.get(name + "_ms")


def f(x, digits=4):
    return "-" if x is None else f"{x:.{digits}f}"


def workloads_table(d):
    print("| GEMM M x N x K | collective | Mc x Nc | cuBLASLt ms | NCCL ms | bound ms | best vendor ms (which) "
          "| best duet ms (which) | duet / bound | vendor / duet | duet own kernels / bound "
          "| duet GEMM / cuBLASLt | NCCL / duet collective |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for w in d["workloads"]:
        x = w["derived"]
        print(f"| {w['m']}x{w['n']}x{w['k']} | {w['collective']} | {w['mc']}x{w['nc']} "
              f"| {f(ms(w['vendor']['gemm']))} | {f(ms(w['vendor']['collective']))} | {f(derived_ms(x, 'bound'))} "
              f"| {f(derived_ms(x, 'best_vendor'))} ({x.get('best_vendor')}) "
              f"| {f(derived_ms(x, 'best_duet'))} ({x.get('best_duet')}) "
              f"| {f(x.get('duet_over_bound'), 3)} | {f(x.get('speedup_over_vendor'), 3)} "
              f"| {f(x.get('own_kernels_over_bound'), 3)} | {f(x.get('gemm_tflops_ratio'), 3)} "
              f"| {f(x.get('collective_speed_ratio'), 3)} |")


def gemm_table(d):
    print("| GEMM M x N x K | cuBLASLt ms | cuBLASLt TFLOP/s | duet ms | duet TFLOP/s | duet tile | duet / cuBLASLt |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
    seen = set()
    for w in d["workloads"]:
        key = (w["m"], w["n"], w["k"])
        if key in seen:
            continue
        seen.add(key)
        flop = 2.0 * w["m"] * w["n"] * w["k"]
        v, g = ms(w["vendor"]["gemm"]), ms(w["duet"]["gemm"])
        tf = lambda t: None if t is None else flop / (t * 1e-3) / 1e12
        ratio = None if v is None or g is None else v / g
        tile = w["duet"].get("gemm_tile", "-")
        if w["duet"].get("gemm_split_k", 1) > 1:  # K split in parts (absent before split-K)
            tile += f"/k{w['duet']['gemm_split_k']}"
        print(f"| {w['m']}x{w['n']}x{w['k']} | {f(v)} | {f(tf(v), 1)} | {f(g)} | {f(tf(g), 1)} "
              f"| {tile} | {f(ratio, 3)} |")


def best_collective(w):
    """duet's collective alone at its best CTA count and comm tile, ms (None if none ran)."""
    times = [ms(c) for c in w["duet"].get("collective", []) if c.get("ok")]
    return min(times) if times else None


def compare_table(runs):
    """Side-by-side runs of one workload list (tools/gpu.sh bench with VARIANTS="A=DIR": bench-A.json, bench-B1.json, bench-B2.json), times in us."""
    names = [n for n, _ in runs]
    # The files' names without their common beginning: ab-overhead-h200-w2-A.json, -B1, -B2 -> A, B1, B2.
    common = len(os.path.commonprefix(names)) if len(names) > 1 else 0
    names = [n[common:] or n for n in names]
    ws = [d["workloads"] for _, d in runs]
    if any(len(x) != len(ws[0]) for x in ws):
        sys.exit("bench_table: --compare: the files hold different workload lists")
    gemm_only = runs[0][1].get("gemm_only")
    cols = [("duet GEMM", lambda w: ms(w["duet"]["gemm"])), ("cuBLASLt", lambda w: ms(w["vendor"]["gemm"]))]
    if not gemm_only:
        cols += [("duet collective", best_collective), ("NCCL", lambda w: ms(w["vendor"]["collective"])),
                 ("best duet", lambda w: derived_ms(w["derived"], "best_duet"))]
    order = " / ".join(names)
    print("| workload | " + " | ".join(f"{c} us ({order})" for c, _ in cols) + " |")
    print("| --- |" + " --- |" * len(cols))
    for i, w in enumerate(ws[0]):
        key = [(x[i]["m"], x[i]["n"], x[i]["k"], x[i]["collective"], x[i]["mc"], x[i]["nc"]) for x in ws]
        if any(k != key[0] for k in key):
            sys.exit(f"bench_table: --compare: workload {i} differs between the files")
        label = f"{w['m']}x{w['n']}x{w['k']}" + ("" if gemm_only else f" {w['collective']} {w['mc']}x{w['nc']}")
        cells = []
        for _, get in cols:
            vals = [get(x[i]) for x in ws]
            cells.append(" / ".join("-" if v is None else f"{v * 1e3:.1f}" for v in vals))
        print(f"| {label} | " + " | ".join(cells) + " |")


def load(path):
    try:
        with open(path) as fh:
            d = json.load(fh)
    except (OSError, ValueError) as e:
        sys.exit(f"bench_table: {path}: {e}")
    if d.get("schema") not in ("duet-bench/1", "duet-bench/2"):
        sys.exit(f"bench_table: {path}: not a duet bench file (schema {d.get('schema')!r})")
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="duet bench JSON files (schema duet-bench/2 or /1); several with --compare")
    ap.add_argument("--gemm", action="store_true", help="one row per GEMM shape: duet's GEMM against cuBLASLt")
    ap.add_argument("--compare", action="store_true",
                    help="one row per workload, each figure from every file in turn (A / B1 / B2 of tools/gpu.sh bench with VARIANTS)")
    a = ap.parse_args()
    if a.compare:
        compare_table([(p.rsplit("/", 1)[-1].removesuffix(".json"), load(p)) for p in a.json])
        return
    if len(a.json) != 1:
        sys.exit("bench_table: one file, or several with --compare")
    d = load(a.json[0])
    if a.gemm or d.get("gemm_only"):
        gemm_table(d)
    else:
        workloads_table(d)


if __name__ == "__main__":
    main()
