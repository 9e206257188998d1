#!/usr/bin/env python3
"""How well the model picks among duet's GEMM candidates of `duet bench --gemm-only --random` files.

Each row of such a file (schema duet-bench-gemm-random/2, or /1 with times in ms) holds every
candidate the bench measured on one GPU (tile x split_k, and stream-K where its plan splits the last
wave) with its measured median (`us`) and the model's prediction (`pred_us`). Per file this prints:

  - exact: rows where the model's pick (the least prediction among the candidates the K-split rule
    tries, as the bench picks) is the fastest measured candidate; pick/best: the pick's measured time
    over the fastest's, median and p90; how often stream-K is picked and how often it is the fastest;
  - measured / predicted per class of candidate: data-parallel (split_k 1), K split (split_k > 1),
    stream-K, and its spread about the row's median (the part of the error that can change a pick);
  - with --geometry, the stream-K candidates against their plan (`duet plan --json`): parts S, the
    C tiles split (the tail r), whole waves W, K steps per part, the fix-up charge the plan's rule adds
    per part (fix, K steps), the rounds of parts, the share of the CTAs the parts fill, the fp32
    workspace bytes of the split C tiles; and the rank correlation of each with the stream-K
    candidate's excess error, (measured / predicted) over the same tile's data-parallel candidate's,
    which is also its measured gain over that candidate against the predicted gain;
  - with --waves, how the data-parallel candidates' error follows the overcharge of a last wave of
    r < CTAs tiles priced at a full wave's K-step contention (print_waves).

With --duet PATH the predictions are recomputed by the CPU `duet simulate` (the bench's own pricing:
the plan of the candidate's configuration, the fluid simulator, the profile --hw, h100 by default),
so that the picks of a changed model can be judged on the same measurements; --check reports how
closely the recomputed predictions match the recorded ones.

  python3 tools/gemm_pick_report.py bench/results/gemm-random-h100-seed2789747789.json
  python3 tools/gemm_pick_report.py --duet build/duet --check --geometry --waves \
      bench/results/sm-budget-h100-seed1341755033.json

Only reads the files and runs the duet binary given; every measured number is the file's.
"""
import argparse
import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from mode_err_kfold import median, quantile  # linear between samples, as duet__quantile_sorted()

SK, DP, KS = "stream-K", "data-parallel", "K split"


def cdiv(a, b):
    return -(-a // b)


def kind(cfg):
    if cfg.get("stream_k"):
        return SK
    return KS if cfg["split_k"] > 1 else DP


def tile_of(cfg):
    return tuple(int(x) for x in cfg["tile"].split("x"))


def cand_args(row, cfg):
    """The `duet simulate`/`duet plan` arguments of one candidate (the GEMM alone, no collective)."""
    a = ["--gemm", "%dx%dx%d" % (row["m"], row["n"], row["k"]), "--dtype", row["dtype"], "--mode", cfg["mode"],
         "--num-wgs", str(cfg["num_wgs"]), "--gemm-wgs", str(cfg["gemm_wgs"]), "--tile", cfg["tile"],
         "--group-m", str(cfg["group_m"]), "--split-k", str(cfg["split_k"])]
    return a + (["--stream-k"] if cfg.get("stream_k") else [])


class Duet:
    """The CPU duet binary, run once per distinct candidate (2 at a time)."""

    def __init__(self, path, hw):
        self.path, self.hw = path, hw

    def _json(self, cmd, args):
        out = subprocess.run([self.path, cmd, "--hw", self.hw, "--json"] + args, check=True, capture_output=True,
                             text=True).stdout
        return json.loads(out)

    def hw_json(self):
        out = subprocess.run([self.path, "hw", "show", self.hw, "--json"], check=True, capture_output=True,
                             text=True).stdout
        return json.loads(out)

    def many(self, cmd, jobs):
        with ThreadPoolExecutor(max_workers=2) as ex:
            return list(ex.map(lambda a: self._json(cmd, a), jobs))


def load(path, duet, check):
    """The file's rows, each candidate with kind, measured us and pred (recomputed with duet)."""
    with open(path) as f:
        doc = json.load(f)
    rows = doc["rows"]
    cands = [(r, c) for r in rows for c in r["candidates"]]
    for r, c in cands:
        if "pred_us" not in c:  # duet-bench-gemm-random/1: times in ms
            c["pred_us"] = c["pred_ms"] * 1e3
            c["us"] = c["ms"] * 1e3 if c.get("ok") else math.nan
        c["kind"] = kind(c["config"])
        c["pred"] = c["pred_us"]
        c["meas"] = c["us"] if c.get("ok") else math.nan
    if duet is not None:
        sims = duet.many("simulate", [cand_args(r, c["config"]) for r, c in cands])
        errs = []
        for (r, c), s in zip(cands, sims):
            c["pred"] = s["makespan_us"]
            errs.append(abs(c["pred"] / c["pred_us"] - 1.0))
        if check:
            print("  recomputed pred_us against the file's: %d candidates, max |rel diff| %.3g, median %.3g, "
                  "%d above 1e-9" % (len(errs), max(errs), median(errs), sum(e > 1e-9 for e in errs)))
    return doc, rows


TIE_REL = 1e-9  # DUET_RANK_TIE_REL


def tie_key(c):
    """duet_rank_sort()'s order among tied predictions (the GEMM alone: mode and CTAs are equal)."""
    cfg = c["config"]
    return tile_of(cfg) + (cfg["split_k"], 1 if cfg.get("stream_k") else 0)


def pick_of(row):
    """The bench's pick: the least prediction among the candidates the K-split rule tries, ties
    (within TIE_REL) broken as duet_rank_sort() does: a stream-K plan that splits every C tile is
    the K split's plan, priced the same, and ranks before it."""
    ok = [c for c in row["candidates"] if c.get("split_rule_tries") and math.isfinite(c["pred"])]
    if not ok:
        return None
    least = min(c["pred"] for c in ok)
    tied = [c for c in ok if abs(c["pred"] - least) <= TIE_REL * max(abs(c["pred"]), abs(least))]
    return min(tied, key=tie_key)


def best_of(row):
    ok = [c for c in row["candidates"] if math.isfinite(c["meas"])]
    return min(ok, key=lambda c: c["meas"]) if ok else None


def pick_stats(rows):
    """(rows, exact picks, pick/best median, pick/best p90, stream-K picked, stream-K fastest)."""
    reg, exact, sk_pick, sk_best = [], 0, 0, 0
    for r in rows:
        p, b = pick_of(r), best_of(r)
        if p is None or b is None or not math.isfinite(p["meas"]):
            continue
        reg.append(p["meas"] / b["meas"])
        exact += p is b
        sk_pick += p["kind"] == SK
        sk_best += b["kind"] == SK
    if not reg:
        return 0, 0, math.nan, math.nan, 0, 0
    return len(reg), exact, median(reg), quantile(reg, 0.9), sk_pick, sk_best


def print_picks(rows, label):
    n, ex, med, p90, skp, skb = pick_stats(rows)
    print("  %-22s rows %3d  exact %3d (%4.1f %%)  pick/best median %.4f p90 %.4f  stream-K picked %2d, fastest %2d" %
          (label, n, ex, 100.0 * ex / max(n, 1), med, p90, skp, skb))


def print_classes(rows):
    """measured / predicted per class; and the error that ranks: |log(measured / predicted)| about the
    row's median of it (a factor common to every candidate of a row does not change the pick)."""
    for k in (DP, KS, SK):
        v, dev = [], []
        for r in rows:
            logs = [math.log(c["meas"] / c["pred"]) for c in r["candidates"] if math.isfinite(c["meas"])]
            mid = median(logs)
            for c in r["candidates"]:
                if c["kind"] == k and math.isfinite(c["meas"]):
                    v.append(c["meas"] / c["pred"])
                    dev.append(abs(math.log(c["meas"] / c["pred"]) - mid))
        if not v:
            print("  measured/pred %-14s n    0" % k)
            continue
        print("  measured/pred %-14s n %4d  median %.3f  p10 %.3f  p90 %.3f  |about the row| median %.3f p90 %.3f" %
              (k, len(v), median(v), quantile(v, 0.1), quantile(v, 0.9), median(dev), quantile(dev, 0.9)))


def sk_geometry(row, cfg, plan):
    """The stream-K plan's geometry, as duet_plan_stream_k_choose() decided it."""
    bm, bn, bk = tile_of(cfg)
    g = plan["gemm"]
    B, T, S = cfg["gemm_wgs"], g["c_tiles"], g["split_k"]
    KI = cdiv(row["k"], bk)
    W, r = T // B, T % B
    per = cdiv(KI, S)
    fix = cdiv(4 * bm * bn, (bm + bn) * bk)
    return {"S": S, "r": r, "W": W, "KI": KI, "per": per, "fix": fix, "rounds": cdiv(r * S, B),
            "r/B": r / B, "fill": min(1.0, r * S / B), "fix/per": fix / per,
            "ws_MB": r * 4 * bm * bn * (1 + S) / 1e6, "bm": bm, "bn": bn, "tile_area": bm * bn,
            "whole_frac": W * KI / (W * KI + cdiv(r * S, B) * (per + fix))}


def rank(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    out = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for q in range(i, j + 1):
            out[order[q]] = 0.5 * (i + j)
        i = j + 1
    return out


def spearman(x, y):
    rx, ry = rank(x), rank(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else math.nan


def print_geometry(rows, duet):
    """Stream-K candidates: excess error over the same tile's data-parallel candidate, against geometry."""
    sks = []
    for r in rows:
        dp = {(c["config"]["tile"]): c for c in r["candidates"] if c["kind"] == DP}
        for c in r["candidates"]:
            base = dp.get(c["config"]["tile"])
            if c["kind"] == SK and base is not None and math.isfinite(c["meas"]) and math.isfinite(base["meas"]):
                sks.append((r, c, base))
    if not sks:
        print("  no stream-K candidates")
        return
    plans = duet.many("plan", [cand_args(r, c["config"]) for r, c, _ in sks])
    feats, excess = [], []
    for (r, c, base), plan in zip(sks, plans):
        feats.append(sk_geometry(r, c["config"], plan))
        excess.append(math.log((c["meas"] / c["pred"]) / (base["meas"] / base["pred"])))
    print("  stream-K candidates %d: excess = (meas/pred) / (meas/pred of the tile's data-parallel candidate), "
          "median %.3f, p10 %.3f, p90 %.3f" % (len(excess), math.exp(median(excess)),
                                              math.exp(quantile(excess, 0.1)), math.exp(quantile(excess, 0.9))))
    print("  Spearman correlation of log excess with:")
    for k in feats[0]:
        print("    %-11s %+.3f" % (k, spearman([f[k] for f in feats], excess)))
    for lo, hi in ((0, 0.5), (0.5, 0.8), (0.8, 1.01)):
        v = [e for f, e in zip(feats, excess) if lo <= f["fill"] < hi]
        if v:
            print("    parts fill [%.1f, %.1f) of the CTAs: n %3d  excess median %.3f" %
                  (lo, hi, len(v), math.exp(median(v))))
    for s in sorted({f["S"] for f in feats}):
        v = [e for f, e in zip(feats, excess) if f["S"] == s]
        print("    parts %2d: n %3d  excess median %.3f" % (s, len(v), math.exp(median(v))))
    for t in sorted({(f["bm"], f["bn"]) for f in feats}):
        v = [e for f, e in zip(feats, excess) if (f["bm"], f["bn"]) == t]
        print("    tile %3dx%-3d: n %3d  excess median %.3f" % (t[0], t[1], len(v), math.exp(median(v))))


def print_waves(rows, duet):
    """Data-parallel candidates against their last wave. A last wave of r < B tiles priced at the
    K step's contention of a full one (1 + c busy / S, busy = min(tiles, B)) costs w (1 - (1 + c r / S)
    / (1 + c busy / S)) more than at its own load (w the predicted tile time, c gemm_sm_contention, S
    the SMs). Its share f of the prediction against log(measured / predicted), both about the row's
    mean and the tile's (a row's common error and a tile's own efficiency drop out): a slope of 1
    says such waves run at their own load, 0 that the prediction already accounts for it."""
    hw = duet.hw_json()["constants"]
    c_cont, n_sms = hw["gemm_sm_contention"]["value"], hw["n_sms"]["value"]
    if c_cont < 1e-3:
        print("  data-parallel last waves: the profile's gemm_sm_contention is %.3g, no contention to charge" % c_cont)
        return
    dps = [(r, c) for r in rows for c in r["candidates"] if c["kind"] == DP and math.isfinite(c["meas"])]
    plans = duet.many("plan", [cand_args(r, c["config"]) for r, c in dps])
    by_row = {}
    for (r, c), plan in zip(dps, plans):
        B, T = c["config"]["gemm_wgs"], plan["gemm"]["c_tiles"]
        W, rest = T // B, T % B
        busy = min(T, B, n_sms)
        over = 0.0
        if W >= 1 and rest > 0:
            over = plan["gemm"]["tile_us"] * (1 - (1 + c_cont * rest / n_sms) / (1 + c_cont * busy / n_sms))
        by_row.setdefault(id(r), []).append((c["config"]["tile"], over / c["pred"], math.log(c["meas"] / c["pred"])))
    per_tile = {}
    for cands in by_row.values():
        mf = sum(f for _, f, _ in cands) / len(cands)
        me = sum(e for _, _, e in cands) / len(cands)
        for t, f, e in cands:
            per_tile.setdefault(t, []).append((f - mf, e - me))
    xs, ys = [], []
    for v in per_tile.values():
        mf = sum(f for f, _ in v) / len(v)
        me = sum(e for _, e in v) / len(v)
        xs += [f - mf for f, _ in v]
        ys += [e - me for _, e in v]
    sxx = sum(x * x for x in xs)
    slope = -sum(x * y for x, y in zip(xs, ys)) / sxx if sxx > 0 else math.nan
    print("  data-parallel candidates %d: slope of log(measured/pred) on their last wave's overcharge at the "
          "full wave's contention (gemm_sm_contention %.3g): %.2f" % (len(xs), c_cont, slope))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--duet", help="recompute every prediction with this CPU duet binary")
    ap.add_argument("--hw", default="h100", help="the profile --duet prices with (default h100)")
    ap.add_argument("--check", action="store_true", help="with --duet: compare the recomputed predictions")
    ap.add_argument("--geometry", action="store_true", help="with --duet: stream-K error against its plan")
    ap.add_argument("--waves", action="store_true",
                    help="with --duet: data-parallel error against the last wave's contention")
    a = ap.parse_args()
    if (a.check or a.geometry or a.waves) and not a.duet:
        sys.exit("gemm_pick_report: --check, --geometry and --waves need --duet")
    duet = Duet(a.duet, a.hw) if a.duet else None
    for path in a.files:
        print(path)
        doc, rows = load(path, duet, a.check)
        for sms in sorted({r["sms"] for r in rows}, reverse=True):
            print_picks([r for r in rows if r["sms"] == sms], "%d SMs" % sms)
        if len({r["sms"] for r in rows}) > 1:
            print_picks(rows, "all budgets")
        print_classes(rows)
        if a.geometry:
            print_geometry(rows, duet)
        if a.waves:
            print_waves(rows, duet)


if __name__ == "__main__":
    main()
