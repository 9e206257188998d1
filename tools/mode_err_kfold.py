#!/usr/bin/env python3
"""One mode's known error after refitting that mode's constants alone (docs/calibration.md, "The known
error per mode").

`duet calibrate fit` writes err_fused, err_concurrent and err_vendor from the held-out predictions of
every op row, each row's log error taken about the median of its workload's op rows (all modes). When
only one mode's constants were refitted, on that mode's GEMM-alone rows (the vendor GEMM's `vendor_*`),
a fit on a corpus filtered to those rows cannot give that figure: its workloads have no op rows of the
other modes, so the median it removes is the mode's own. This script repeats the refit within k folds
grouped by workload and keeps the rest of the profile as it is:

  1. `duet calibrate fit` on the mode's GEMM-alone and op rows, --folds K --rows, for the fold of each
     workload (the fit's own assignment; its constants are not used);
  2. per fold, `duet calibrate fit --folds 0` of PARAMS on the mode's GEMM-alone rows of the other
     folds' workloads, then `duet validate --rows` of that fold's op rows of the mode with it;
  3. `duet validate --rows` of every op row with the profile, for the other modes' predictions;
  4. per workload the median of r = log(pred / measured) over its op rows (the mode's from step 2, the
     others' from step 3); err = exp(q) - 1, q the 90th percentile of |r - median| over the mode's rows.

  tools/mode_err_kfold.py --duet build/duet --hw tuning_data/h200.json --mode vendor \\
      --params vendor_gemm_eff_fp16,... tuning_data/h200_world1-train-s1.json tuning_data/h200_world1-train2-s1.json

--max-iter N and --accept-unconverged are handed to every `duet calibrate fit` (a fit of many
--params may need more than its default 100 trust-region iterations); a step that fails ends the
script with that step's own error.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

Q = 0.9  # DUET_CAL_MODE_ERR_Q


def quantile(v, q):
    """Linear between the two samples around position q (n - 1), as duet__quantile_sorted()."""
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(pos)
    if lo >= len(v) - 1:
        return v[-1]
    t = pos - lo
    return (1 - t) * v[lo] + t * v[lo + 1]


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def row_key(r):
    """One measured configuration of one corpus, as a --rows CSV line names it."""
    return tuple(r[c] for c in ("corpus", "collective", "dtype", "m", "n", "k", "mc", "nc", "world", "mode",
                                "num_wgs", "gemm_wgs", "comm_wgs", "tile", "comm_tile", "group_m"))


def run(cmd):
    """Run one duet step; on failure, end with its last line of error (what went wrong, and what to do)."""
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        sys.exit("duet: mode_err_kfold: `%s %s` failed (exit %d): %s" %
                 (os.path.basename(cmd[0]), " ".join(cmd[1:3]), p.returncode, lines[-1] if lines else "no message"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="+")
    ap.add_argument("--duet", default="build/duet")
    ap.add_argument("--hw", required=True)
    ap.add_argument("--mode", required=True, choices=("fused", "concurrent", "vendor"))
    ap.add_argument("--params", required=True)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--max-iter", type=int, help="trust-region iterations per fit (duet calibrate fit --max-iter)")
    ap.add_argument("--accept-unconverged", action="store_true",
                    help="keep a fit that stopped without converging (duet calibrate fit --accept-unconverged)")
    a = ap.parse_args()
    if a.max_iter is not None and a.max_iter < 1:
        ap.error("--max-iter: %d is not a positive number of iterations" % a.max_iter)
    fit_opts = (["--max-iter", str(a.max_iter)] if a.max_iter is not None else []) + \
        (["--accept-unconverged"] if a.accept_unconverged else [])
    src = []
    for f in a.corpora:
        try:
            with open(f) as fh:
                src.append(json.load(fh))
        except (OSError, ValueError) as e:
            print("duet: mode_err_kfold: %s: %s" % (f, getattr(e, "strerror", None) or e), file=sys.stderr)
            sys.exit(2)

    def write(d, name, keep):
        """Each corpus with the rows keep(corpus index, row index, row) selects; the file names."""
        out = []
        for c, cj in enumerate(src):
            o = dict(cj)
            o["rows"] = [r for i, r in enumerate(cj["rows"]) if keep(c, i, r)]
            out.append(os.path.join(d, "%s_%d.json" % (name, c)))
            json.dump(o, open(out[-1], "w"))
        return out

    with tempfile.TemporaryDirectory() as d:
        mine = write(d, "mode", lambda c, i, r: r.get("mode") == a.mode and r.get("kind") in ("gemm_alone", "op"))
        rows = os.path.join(d, "assign.csv")
        run([a.duet, "calibrate", "fit", "--corpus", *mine, "--hw", a.hw, "-o", os.path.join(d, "x.json"),
             "--report", os.path.join(d, "x-r.json"), "--params", a.params, "--folds", str(a.folds), "--rows",
             rows, "--quiet", *fit_opts])
        # The fit's rows index the filtered corpora; map them back to the originals' indices.
        back = []
        for cj in src:
            back.append([i for i, r in enumerate(cj["rows"])
                         if r.get("mode") == a.mode and r.get("kind") in ("gemm_alone", "op")])
        fold = {(int(r["corpus"]), back[int(r["corpus"])][int(r["index"])]): int(r["fold"])
                for r in csv.DictReader(open(rows))}
        held = {}
        for f in range(a.folds):
            # The mode's GEMM-alone rows of the other folds (rows of other modes have no fold: f).
            train = write(d, "a%d" % f, lambda c, i, r: r.get("kind") == "gemm_alone" and fold.get((c, i), f) != f)
            test = write(d, "o%d" % f, lambda c, i, r: r.get("kind") == "op" and fold.get((c, i)) == f)
            prof = os.path.join(d, "p%d.json" % f)
            run([a.duet, "calibrate", "fit", "--corpus", *train, "--hw", a.hw, "-o", prof, "--report",
                 os.path.join(d, "r%d.json" % f), "--params", a.params, "--folds", "0", "--quiet", *fit_opts])
            out = os.path.join(d, "v%d.csv" % f)
            run([a.duet, "validate", "--hw", prof, "--corpus", *test, "--rows", out])
            for r in csv.DictReader(open(out)):
                held[row_key(r)] = float(r["pred_us"])
        ops = write(d, "ops", lambda c, i, r: r.get("kind") == "op")
        out = os.path.join(d, "ops.csv")
        run([a.duet, "validate", "--hw", a.hw, "--corpus", *ops, "--rows", out])
        lr = []
        for r in csv.DictReader(open(out)):
            if not float(r["us"]) > 0 or not r["pred_us"]:
                continue
            p = held.get(row_key(r)) if r["mode"] == a.mode else float(r["pred_us"])
            if p is None:
                sys.exit("duet: mode_err_kfold: no held-out prediction for a %s row of %s" % (a.mode, r["shape"]))
            lr.append((r["corpus"] + "/" + r["shape"], r["mode"], math.log(p / float(r["us"]))))
    by_shape = {}
    for s, _, x in lr:
        by_shape.setdefault(s, []).append(x)
    mid = {s: median(v) for s, v in by_shape.items()}
    dist = [abs(x - mid[s]) for s, m, x in lr if m == a.mode]
    ape = [abs(math.exp(x) - 1) for s, m, x in lr if m == a.mode]
    print("err_%s %.4f (p%d of %d op rows, %d workloads); its op rows' held-out APE median %.1f %%, p95 %.1f %%"
          % (a.mode, math.exp(quantile(dist, Q)) - 1, round(Q * 100), len(dist), len(by_shape),
             100 * median(ape), 100 * quantile(ape, 0.95)))


if __name__ == "__main__":
    main()
