#!/usr/bin/env python3
"""Line and branch coverage of the CPU test suite, per layer (make coverage).

Reads the gcov data that a coverage build's test run left in BUILD (gcc --coverage) through gcovr,
sums the lines and branches of each layer's sources (base/, model/, sim/, calibrate/, tune/, cli/;
headers count with the folder they live in, include/duet/ as "include"), prints one row per layer
and the total, and writes the whole per-file summary to BUILD/coverage.json.

    tools/coverage.py BUILD [--min-branch PCT --layers model,sim,...]

--min-branch fails (exit 1) when a layer named by --layers has a lower branch coverage.
"""
import argparse
import json
import os
import subprocess
import sys

LAYERS = ["base", "model", "sim", "calibrate", "tune", "cli", "backend", "include"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", help="the coverage build's folder (its .gcda files)")
    ap.add_argument("--min-branch", type=float, default=None, help="least branch coverage, percent")
    ap.add_argument("--layers", default="model,sim,calibrate,tune", help="the layers --min-branch applies to")
    a = ap.parse_args()
    out = os.path.join(a.build, "coverage.json")
    # Only the project's sources: not the tests, not the system's headers.
    cmd = ["gcovr", "--root", ".", "--object-directory", a.build, "--json-summary-pretty", "-o", out,
           "--filter", r"(base|model|sim|calibrate|tune|cli|backend|include)/", "--exclude", r"tests/",
           "--gcov-ignore-parse-errors"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit("coverage: gcovr failed: " + " ".join(cmd))
    with open(out) as f:
        files = json.load(f)["files"]
    sums = {}
    for fl in files:
        layer = fl["filename"].split("/")[0]
        s = sums.setdefault(layer, [0, 0, 0, 0])
        s[0] += fl["line_covered"]
        s[1] += fl["line_total"]
        s[2] += fl["branch_covered"]
        s[3] += fl["branch_total"]

    def pct(c, t):
        return 100.0 * c / t if t else float("nan")

    print("%-10s %8s %8s %7s %9s %9s %7s" % ("layer", "lines", "of", "line%", "branches", "of", "branch%"))
    tot = [0, 0, 0, 0]
    for layer in LAYERS + sorted(set(sums) - set(LAYERS)):
        if layer not in sums:
            continue
        s = sums[layer]
        tot = [x + y for x, y in zip(tot, s)]
        print("%-10s %8d %8d %6.1f%% %9d %9d %6.1f%%" % (layer, s[0], s[1], pct(s[0], s[1]), s[2], s[3],
                                                          pct(s[2], s[3])))
    print("%-10s %8d %8d %6.1f%% %9d %9d %6.1f%%" % ("total", tot[0], tot[1], pct(tot[0], tot[1]), tot[2], tot[3],
                                                      pct(tot[2], tot[3])))
    print("per file: %s" % out)
    if a.min_branch is not None:
        low = [l for l in a.layers.split(",") if l in sums and pct(sums[l][2], sums[l][3]) < a.min_branch]
        if low:
            sys.exit("coverage: branch coverage below %g %% in %s" % (a.min_branch, ", ".join(low)))


if __name__ == "__main__":
    main()
