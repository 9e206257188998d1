#!/usr/bin/env python3
"""Where a kernel's warps wait: the SASS lines with the most warp-state samples.

Reads the per-instruction table Nsight Compute writes with
    ncu -i REPORT.ncu-rep --page source --csv --print-source sass > REPORT.sass.csv
(tools/gpu.sh's ncu step writes it next to each report) and prints, per file, the total
of the samples and the TOP instructions by their share of all samples, each with how often it ran
and its three largest stall reasons (ncu's names without the "stall_" prefix: long_sb is a wait
on memory, barrier on __syncthreads or wgmma.wait_group, wait a fixed-latency dependency).

    tools/ncu_hot.py [--top N] FILE.sass.csv...
"""
import argparse
import csv
import sys


def hot_lines(path, top):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # Row 0 names the kernel, row 1 is the header, then one row per SASS instruction.
    if len(rows) < 3 or "Warp Stall Sampling (All Samples)" not in rows[1]:
        raise ValueError(f"{path}: not an ncu source page (--page source --csv --print-source sass)")
    hdr, data = rows[1], rows[2:]
    col_all = hdr.index("Warp Stall Sampling (All Samples)")
    col_ex = hdr.index("Instructions Executed")
    stalls = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "(Not Issued)" not in h]

    def samples(r):
        return int(r[col_all]) if r[col_all].isdigit() else 0

    total = sum(samples(r) for r in data)
    out = [f"{path}: {total} samples over {len(data)} instructions"]
    if total == 0:
        return out
    ranked = sorted(enumerate(data), key=lambda kr: -samples(kr[1]))[:top]
    for k, r in ranked:
        why = sorted(((hdr[i][6:], int(r[i])) for i in stalls if r[i].isdigit()), key=lambda x: -x[1])[:3]
        why = ", ".join(f"{name} {n}" for name, n in why if n > 0)
        out.append(f"  {100.0 * samples(r) / total:5.1f}%  #{k:<6} ran {r[col_ex]:>8}  {r[1].strip()[:60]:60s}  {why}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE.sass.csv")
    ap.add_argument("--top", type=int, default=10, help="instructions to list per file (default 10)")
    a = ap.parse_args()
    rc = 0
    for path in a.files:
        try:
            print("\n".join(hot_lines(path, a.top)))
        except (OSError, ValueError) as e:
            print(f"ncu_hot: {e}", file=sys.stderr)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
