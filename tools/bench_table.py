#!/usr/bin/env python3
"""Markdown tables of a `duet bench` JSON (docs/performance.md).

    python3 tools/bench_table.py bench/results/bench-h200-w2.json            # all workloads
    python3 tools/bench_table.py --gemm bench/results/bench-h200-w2.json     # each GEMM once

Only reads the JSON that `duet bench` wrote; every number is a measured median or a ratio of two.
"""
import argparse
import json
import sys


def ms(stat):
    return stat["ms"] if stat.get("ok") else None


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
              f"| {f(ms(w['vendor']['gemm']))} | {f(ms(w['vendor']['collective']))} | {f(x.get('bound_ms'))} "
              f"| {f(x.get('best_vendor_ms'))} ({x.get('best_vendor')}) | {f(x.get('best_duet_ms'))} ({x.get('best_duet')}) "
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="a duet bench JSON (schema duet-bench/1)")
    ap.add_argument("--gemm", action="store_true", help="one row per GEMM shape: duet's GEMM against cuBLASLt")
    a = ap.parse_args()
    try:
        with open(a.json) as fh:
            d = json.load(fh)
    except (OSError, ValueError) as e:
        sys.exit(f"bench_table: {a.json}: {e}")
    if d.get("schema") != "duet-bench/1":
        sys.exit(f"bench_table: {a.json}: not a duet bench file (schema {d.get('schema')!r})")
    if a.gemm or d.get("gemm_only"):
        gemm_table(d)
    else:
        workloads_table(d)


if __name__ == "__main__":
    main()
