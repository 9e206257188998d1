#!/usr/bin/env python3
"""One line per nvidia-smi sampling file (tools/gpu.sh clocks): the GPU's busy window
(utilization >= 50 %, its first 0.2 s dropped as the ramp) with the median SM clock (MHz) over
the whole window, its first and its last second, the median power (W), the highest temperature
(C) and how many samples carried each clock-event reason (the driver's bit mask).
  tools/clocks_summary.py [--label L] [--json OUT.json] [--svg OUT.svg] [LABEL=]FILE...
  tools/clocks_summary.py --from-json CLOCKS.json [--svg OUT.svg] [LABEL=]WINDOW...
--json writes every window with the file's whole series (seconds from the first busy sample, SM
clock, power); --svg draws the series, SM clock above and power below, one line per file.
--from-json reads the windows of such a file instead of sampling files: each WINDOW names one by
its label (LABEL= relabels it), so a picture can be drawn again from the committed JSON."""
import argparse
import csv
import html
import json
import math
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
    busy, every = [], []
    for r in rows[1:]:
        if len(r) != len(head) or num(r[col["utilization.gpu"]]) is None:
            continue
        t = datetime.strptime(r[col["timestamp"]], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        every.append((t, r))
        if num(r[col["utilization.gpu"]]) >= 50:
            busy.append((t, r))
    if len(busy) < 5:
        return f"{label}: {len(busy)} busy samples in {path}: too few"
    t_busy = busy[0][0]
    t0 = t_busy + 0.2
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
            "series": [[round(t - t_busy, 3), num(r[col["clocks.sm"]]), num(r[col["power.draw"]])] for t, r in every]}


def line(w):
    if isinstance(w, str):
        return w
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(w["reasons"].items(), key=lambda kv: -kv[1])) or "none"
    return (f"{w['label']}: {w['samples']} samples over {w['busy_s']:.2f} s busy: SM clock median "
            f"{w['sm_mhz_median']:.0f} MHz (first s {w['sm_mhz_first_s']:.0f}, last s {w['sm_mhz_last_s']:.0f}), "
            f"power median {w['power_w_median']:.0f} W, temperature max {w['temperature_c_max']:.0f} C; "
            f"reasons: {reasons}")


def nice_step(span, target):
    """A round step (1, 2 or 5 x 10^k) giving about `target` ticks over `span`."""
    if not span > 0 or math.isinf(span):
        return 1.0
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    f = raw / mag
    return (1.0 if f < 1.5 else 2.0 if f < 3.5 else 5.0 if f < 7.5 else 10.0) * mag


COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
           "#bcbd22"]


def axis(lo, hi, target):
    """A round step (nice_step) and the round ticks at or past lo and hi: the axis' ends."""
    step = nice_step(hi - lo, target)
    return step, math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step


def ticks(lo, hi, step):
    """The multiples of step from lo to hi (at most 1000 of them)."""
    k0 = round(lo / step)
    return [k * step for k in range(k0, k0 + 1000) if k * step <= hi + 1e-9 * step]


def svg(windows, path, title):
    """SM clock (MHz) and power (W) against seconds from each run's first busy sample. Every axis
    runs between round ticks (1, 2 or 5 x 10^k) at or past its data: the time from just before the
    first busy sample to just after the last one, the clock over the busy samples (the idle clock
    before a run is far below and says nothing: such samples are drawn on the panel's floor, and a
    note says so), the power from 0."""
    w, left, top, panel, gap = 1000, 70, 50, 190, 60
    h = top + 2 * panel + gap + 62  # the axis' numbers, its title and the note on sampling under it
    # The idle time around a run (process start, context creation) drops the clock to idle and
    # says nothing: the window starts 0.4 s before the first busy sample, ends 0.8 s after the last.
    step, x0, x1 = axis(-0.4, max(win["busy_s"] for win in windows) + 0.8, 8)
    windows = [dict(win, series=[p for p in win["series"] if x0 <= p[0] <= x1]) for win in windows]
    busy = [p[1] for win in windows for p in win["series"] if 0 <= p[0] <= win["busy_s"] and p[1] is not None]
    allc = [p[1] for win in windows for p in win["series"] if p[1] is not None]
    power = [p[2] for win in windows for p in win["series"] if p[2] is not None]
    cstep, clo, chi = axis(min(busy or allc or [0]), max(allc or [1]), 5)
    pstep, plo, phi = axis(0.0, max(power or [1]), 5)
    below = [v for v in allc if v < clo]
    pw = w - left - 290
    panels = [("SM clock, MHz", 1, clo, chi, cstep, top), ("power, W", 2, plo, phi, pstep, top + panel + gap)]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="24" font-size="14">{html.escape(title)}</text>']
    for name, idx, lo, hi, ystep, y in panels:
        out.append(f'<rect x="{left}" y="{y}" width="{pw}" height="{panel}" fill="none" stroke="#999"/>')
        out.append(f'<text x="{left}" y="{y - 6}">{name}</text>')
        for v in ticks(lo, hi, ystep):
            yy = y + panel - panel * (v - lo) / (hi - lo)
            out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{v:g}</text>')
            out.append(f'<line x1="{left}" x2="{left + pw}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#eee"/>')
        for i, win in enumerate(windows):
            line = " ".join(f"{left + pw * (p[0] - x0) / (x1 - x0):.1f},"
                            f"{y + panel - panel * (min(max(p[idx], lo), hi) - lo) / (hi - lo):.1f}"
                            for p in win["series"] if p[idx] is not None)
            out.append(f'<polyline points="{line}" fill="none" stroke="{COLOURS[i % len(COLOURS)]}" stroke-width="1.5"/>')
    if below:
        out.append(f'<text x="{left + pw}" y="{top - 6}" text-anchor="end" font-size="10" fill="#555">'
                   f'samples below {clo:g} MHz (idle, before a run: {min(below):g} MHz) drawn on the floor</text>')
    ybot = top + 2 * panel + gap
    # Round ticks with a grid line through both panels, rather than the window's ends cut into fifths.
    for v in ticks(x0, x1, step):
        px = left + pw * (v - x0) / (x1 - x0)
        for *_, y in panels:
            out.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{y}" y2="{y + panel}" stroke="#eee"/>')
        out.append(f'<text x="{px:.1f}" y="{ybot + 16}" text-anchor="middle">{v:g}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{ybot + 34}" text-anchor="middle">seconds from the first busy sample'
               f'</text>')
    out.append(f'<text x="{left + pw / 2}" y="{ybot + 50}" text-anchor="middle" font-size="10" fill="#555">'
               f'nvidia-smi updates these fields about every 0.1 s; power.draw is averaged over about 1 s</text>')
    for i, win in enumerate(windows):
        y = top + 14 + 18 * i
        out.append(f'<line x1="{left + pw + 12}" x2="{left + pw + 32}" y1="{y - 4}" y2="{y - 4}" '
                   f'stroke="{COLOURS[i % len(COLOURS)]}" stroke-width="3"/>')
        out.append(f'<text x="{left + pw + 38}" y="{y}">{html.escape(win["label"])}: {win["sm_mhz_median"]:.0f} MHz</text>')
    out.append("</svg>")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--label", default="", help="the label of a single FILE")
    ap.add_argument("--json", help="write the windows and their series to this file")
    ap.add_argument("--svg", help="draw the series (SM clock, power) to this file")
    ap.add_argument("--title", default="SM clock and power while a GEMM runs back to back")
    ap.add_argument("--from-json", metavar="CLOCKS.json", help="read the windows of this file (--json's format)")
    ap.add_argument("files", nargs="+", metavar="[LABEL=]FILE")
    a = ap.parse_args()
    for o in (a.json, a.svg):
        if o and not os.path.isdir(os.path.dirname(o) or "."):
            ap.error(f"{o}: no such folder")
    out = []
    if a.from_json:
        try:
            with open(a.from_json) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            ap.error(f"{a.from_json}: {e}")
        if not isinstance(doc, dict) or doc.get("format") != "duet-clocks/1":
            ap.error(f"{a.from_json}: not a duet-clocks/1 file")
        windows = {w.get("label"): w for w in doc.get("windows", []) if isinstance(w, dict)}
        for arg in a.files:
            label, _, name = arg.rpartition("=")
            if name not in windows:
                ap.error(f"{a.from_json}: no window labelled {name!r} (there are: {', '.join(sorted(windows))})")
            out.append(dict(windows[name], label=label or name))
            print(line(out[-1]))
    else:
        for arg in a.files:
            if not os.path.isfile(arg.rpartition("=")[2]):
                ap.error(f"{arg.rpartition('=')[2]}: no such file")
        for arg in a.files:
            label, _, path = arg.rpartition("=")
            w = summarise(path, label or a.label or path)
            print(line(w))
            if not isinstance(w, str):
                out.append(w)
    if a.svg and out:
        svg(out, a.svg, a.title)
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            # One window a line: the series are long lists of short triples.
            f.write('{"format": "duet-clocks/1", "windows": [\n' +
                    ",\n".join(json.dumps(w) for w in out) + "\n]}\n")
        os.replace(a.json + ".tmp", a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
