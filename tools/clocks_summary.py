#!/usr/bin/env python3
"""One line per nvidia-smi sampling file (tools/h200-onegpu.sh clocks): the GPU's busy window
(utilization >= 50 %, its first 0.2 s dropped as the ramp) with the median SM clock (MHz) over
the whole window, its first and its last second, the median power (W), the highest temperature
(C) and how many samples carried each clock-event reason (the driver's bit mask).
  tools/clocks_summary.py [--label L] [--json OUT.json] [LABEL=]FILE...
--json writes every window with its series (seconds from the window's start, SM clock, power)."""
import argparse
import csv
import json
import os
import statistics
import sys
from datetime import datetime

# nvidia-smi's clocks_event_reasons bits (nvml.h, nvmlClocksEventReason*).
REASONS = {0x1: "idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x10: "sync_boost",
           0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clock"}


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


def summarise(path, label):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f, skipinitialspace=True) if r]
    if not rows or not rows[0][0].startswith("timestamp"):
        return f"{label}: no samples in {path} ({rows[0] if rows else 'empty'})"
    # nvidia-smi names some columns by their long form (clocks.sm -> clocks.current.sm).
    head = [h.split(" [")[0].replace("clocks.current.", "clocks.") for h in rows[0]]
    col = {h: i for i, h in enumerate(head)}
    reason_key = next((h for h in head if h.endswith("reasons.active")), None)
    busy = []
    for r in rows[1:]:
        if len(r) != len(head) or num(r[col["utilization.gpu"]]) is None:
            continue
        t = datetime.strptime(r[col["timestamp"]], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        if num(r[col["utilization.gpu"]]) >= 50:
            busy.append((t, r))
    if len(busy) < 5:
        return f"{label}: {len(busy)} busy samples in {path}: too few"
    t0 = busy[0][0] + 0.2
    busy = [(t, r) for t, r in busy if t >= t0]
    t_end = busy[-1][0]

    def med(key, part=None):
        v = [num(r[col[key]]) for t, r in (part or busy) if num(r[col[key]]) is not None]
        return statistics.median(v) if v else float("nan")

    first = [(t, r) for t, r in busy if t < t0 + 1.0]
    last = [(t, r) for t, r in busy if t > t_end - 1.0]
    counts = {}
    if reason_key:
        for _, r in busy:
            v = r[col[reason_key]]
            m = int(v, 16) if v.startswith("0x") else 0  # "[N/A]" where the driver has none
            for bit, name in REASONS.items():
                if m & bit:
                    counts[name] = counts.get(name, 0) + 1
    temps = [num(r[col["temperature.gpu"]]) for _, r in busy if num(r[col["temperature.gpu"]]) is not None]
    return {"label": label, "file": path, "samples": len(busy), "busy_s": round(t_end - t0, 3),
            "sm_mhz_median": med("clocks.sm"), "sm_mhz_first_s": med("clocks.sm", first),
            "sm_mhz_last_s": med("clocks.sm", last), "power_w_median": med("power.draw"),
            "temperature_c_max": max(temps) if temps else None, "reasons": counts,
            "series": [[round(t - t0, 3), num(r[col["clocks.sm"]]), num(r[col["power.draw"]])] for t, r in busy]}


def line(w):
    if isinstance(w, str):
        return w
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(w["reasons"].items(), key=lambda kv: -kv[1])) or "none"
    return (f"{w['label']}: {w['samples']} samples over {w['busy_s']:.2f} s busy: SM clock median "
            f"{w['sm_mhz_median']:.0f} MHz (first s {w['sm_mhz_first_s']:.0f}, last s {w['sm_mhz_last_s']:.0f}), "
            f"power median {w['power_w_median']:.0f} W, temperature max {w['temperature_c_max']:.0f} C; "
            f"reasons: {reasons}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--label", default="", help="the label of a single FILE")
    ap.add_argument("--json", help="write the windows and their series to this file")
    ap.add_argument("files", nargs="+", metavar="[LABEL=]FILE")
    a = ap.parse_args()
    out = []
    for arg in a.files:
        label, _, path = arg.rpartition("=")
        w = summarise(path, label or a.label or path)
        print(line(w))
        if not isinstance(w, str):
            out.append(w)
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"format": "duet-clocks/1", "windows": out}, f, indent=1)
        os.replace(a.json + ".tmp", a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
