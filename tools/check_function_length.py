#!/usr/bin/env python3
"""Fail when a C function in the given folders is longer than a limit.

A function's length is counted from the first line of its signature to its closing brace, both
included. clang-format (BreakBeforeBraces: Linux) puts a function's opening brace alone at column 0
and its closing brace alone at column 0, which is what this relies on.

A function named in --allow FILE (lines "path:function: N", # comments) may stay as long as it is
there but not grow; the list only shrinks as those functions are split.

usage: tools/check_function_length.py [--max N] [--list] [--allow FILE] DIR_OR_FILE...
"""
import argparse
import os
import re
import sys

NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(path):
    """(name, first line, length) of each function definition in one C file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] != "{":
            i += 1
            continue
        # The signature: the lines above the brace back to a blank line or the end of a comment,
        # declaration or previous definition.
        start = i
        while start > 0:
            prev = lines[start - 1].rstrip()
            if prev == "" or prev.endswith((";", "}", "*/")) or prev.startswith(("#", "//")):
                break
            start -= 1
        end = i + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        m = NAME.search(" ".join(lines[start:i]))
        out.append((m.group(1) if m else "?", start + 1, end - start + 1))
        i = end + 1
    return out


def sources(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, _, files in os.walk(p):
            for name in sorted(files):
                if name.endswith(".c") or name.endswith(".hip"):
                    yield os.path.join(root, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=60, help="longest function allowed, lines (default 60)")
    ap.add_argument("--list", action="store_true", help="print every function's length, longest first")
    ap.add_argument("--allow", help="functions allowed over the limit, at most as long as listed")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    allowed = {}
    if a.allow:
        with open(a.allow, encoding="utf-8") as f:
            for raw in f:
                text = raw.split("#", 1)[0].strip()
                if text:
                    where, n = text.rsplit(":", 1)
                    allowed[where.strip()] = int(n)
    rows = []
    for path in sources(a.paths):
        rows += [(n, path, line, name) for name, line, n in functions(path)]
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    long_ones = [r for r in rows if r[0] > max(a.max, allowed.get(f"{r[1]}:{r[3]}", 0))]
    for n, path, line, name in rows if a.list else long_ones:
        print(f"{path}:{line}: {name}: {n} lines" + (f" (over {a.max})" if n > a.max else ""))
    if long_ones:
        print(f"check_function_length: {len(long_ones)} of {len(rows)} functions over {a.max} lines", file=sys.stderr)
        return 1
    listed = sum(1 for r in rows if f"{r[1]}:{r[3]}" in allowed and r[0] > a.max)
    print(f"check_function_length: {len(rows)} functions, none over {a.max} lines"
          + (f" but the {listed} listed in {a.allow}" if listed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
