#!/usr/bin/env python3
"""Does a corpus's first round start at boost clock? (docs/calibration.md, "Per-row residuals".)

The collector writes a shape's rows in its first round's order, and the board's power limit takes
the SM clock down within 0.1-0.2 s of matrix work. For each shape this sums, row by row, the time of
the first round's runs (warm-up + timed, each the row's median plus --gap-us for the barrier and
sync), and compares the rows that start inside the first --window-ms with the later ones: the
fastest run over the median (a first round at boost would pull it far below 1) and the log residual
against the profile's prediction.
  duet validate --corpus C.json --hw P.json --rows rows.csv
  tools/corpus_drift.py --corpus C.json rows.csv
Reads the --rows CSV of either layout: times in us (us, min_us, pred_us; duet 0.2 on) or in ms (ms,
min_ms, pred_ms; before), and a corpus of either schema (duet-corpus/2 or /1).
"""
import argparse
import collections
import csv
import json
import math
import statistics
import sys


def row_ms(r, name):
    """The row's time `name` (ms, min_ms, pred_ms) in ms, from its us column or its ms one."""
    us = name[:-2] + "us" if name.endswith("ms") else None
    return float(r[us]) / 1e3 if us in r else float(r[name])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="the corpus (for its warm-up, repeats and rounds)")
    ap.add_argument("--window-ms", type=float, default=200.0, help="the transient's length (default 200)")
    ap.add_argument("--gap-us", type=float, default=20.0, help="barrier and sync per run (default 20)")
    ap.add_argument("--min-rows", type=int, default=5, help="rows needed on each side (default 5)")
    ap.add_argument("rows", help="duet validate --rows output")
    a = ap.parse_args()
    try:
        meta = json.load(open(a.corpus))
        rows = list(csv.DictReader(open(a.rows)))
    except (OSError, ValueError) as e:
        ap.error(str(e))
    rounds = int(meta.get("rounds", 1))
    runs = int(meta["warmup"]) + math.ceil(int(meta["repeats"]) / rounds)  # first-round runs per row
    shapes = collections.defaultdict(list)
    for r in rows:
        shapes[r["shape"]].append(r)
    both = []
    print("shape  GEMM  collective  mc  first-round ms  rows early/late  residual early/late  fastest/median early/late")
    for s, rs in shapes.items():
        rs.sort(key=lambda r: int(r["index"]))
        t, early, late = 0.0, [], []
        for r in rs:
            ms = row_ms(r, "ms")
            (early if t < a.window_ms else late).append(
                (math.log(ms / row_ms(r, "pred_ms")), row_ms(r, "min_ms") / ms))
            t += runs * (ms + a.gap_us * 1e-3)
        if len(early) < a.min_rows or len(late) < a.min_rows:
            continue
        w = rs[0]
        e_res, l_res = (statistics.mean(x[0] for x in g) for g in (early, late))
        e_min, l_min = (statistics.median(x[1] for x in g) for g in (early, late))
        both.append((e_res, l_res, e_min, l_min))
        print(f"{s}  {w['m']}x{w['n']}x{w['k']}  {w['collective']}  {w['mc']}  {t:.0f}  {len(early)}/{len(late)}  "
              f"{e_res * 100:+.1f} / {l_res * 100:+.1f} %  {e_min:.3f} / {l_min:.3f}")
    if not both:
        print(f"no shape has {a.min_rows} rows on each side of {a.window_ms:.0f} ms")
        return 0
    print(f"{len(both)} shapes: residual later - earlier, mean {statistics.mean(b[1] - b[0] for b in both) * 100:+.2f} % "
          f"(later slower in {sum(b[1] > b[0] for b in both)}); fastest/median, median over shapes: "
          f"earlier {statistics.median(b[2] for b in both):.3f}, later {statistics.median(b[3] for b in both):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
