#!/usr/bin/env python3
"""Every repository path the documentation cites must exist (run by `make test`).

Reads README.md, CHANGELOG.md, docs/*.md and bench/results/README.md and checks:
  - the target of every Markdown link or image that is not a URL or an anchor (relative to the file
    that cites it);
  - every path-like word that starts with a folder of the repository (docs/, tools/, bench/, model/,
    ...; relative to the repository root, or to the citing file when it starts with ../), with
    `{a,b}` alternatives expanded and `*` matched as a glob;
  - every bare file name ending in .md, which must be a file of the repository root, of docs/ or of the
    citing file's folder;
  - every word starting with ../, relative to the citing file.
A path that leaves the repository (../shared/...) is an error. Words written as `REV:path` (a file
at an old commit, for `git show`), and words holding a placeholder (<...>, $VAR), are not checked;
build outputs (build/, build-gpu/, demo/) are not named as folders here, so they are not checked.
Prints one line per missing path, `FILE:LINE: 'PATH' ...`, and exits 1 if there is any.

    python3 tools/check_doc_paths.py [--root DIR]
"""
import argparse
import glob
import itertools
import os
import re
import sys

# The repository's folders whose files the documentation cites.
FOLDERS = ("include", "base", "model", "sim", "calibrate", "tune", "backend", "baseline", "cli",
           "tests", "tuning_data", "bench", "tools", "docs", ".ci", "examples")

LINK = re.compile(r"\]\(([^)\s]+)\)")
PATH = re.compile(r"(?<![\w/.:$<>-])((?:\.\./)*(?:" + "|".join(re.escape(f) for f in FOLDERS) +
                  r")/[\w./{},*+-]*)")
UP = re.compile(r"(?<![\w/.:$<>=-])((?:\.\./)+[\w./{},*+-]+)")
BARE_MD = re.compile(r"(?<![\w/.:$<>-])([\w][\w.-]*\.md)\b")


def expand(word):
    """`a{b,c}d` -> [abd, acd]; nested braces are not used in the docs."""
    parts = re.split(r"(\{[^{}]*\})", word)
    choices = [p[1:-1].split(",") if p.startswith("{") and p.endswith("}") else [p] for p in parts]
    return ["".join(c) for c in itertools.product(*choices)]


def exists(root, path):
    if "*" in path:
        return bool(glob.glob(os.path.join(root, path)))
    return os.path.exists(os.path.join(root, path))


def check_file(root, rel, problems):
    here = os.path.dirname(rel)
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        words = []
        for m in LINK.finditer(line):
            target = m.group(1).split("#", 1)[0]
            if not target or re.match(r"^[a-z]+:", target):
                continue
            words.append(("link", os.path.normpath(os.path.join(here, target))))
        # The rest of the line without the link targets, which are checked above.
        text = LINK.sub("]()", line)
        for m in PATH.finditer(text):
            word = m.group(1).rstrip(".,;:)'")
            if word.startswith("../"):
                word = os.path.normpath(os.path.join(here, word))
            words.append(("path", word))
        for m in UP.finditer(text):
            word = os.path.normpath(os.path.join(here, m.group(1).rstrip(".,;:)'")))
            if word.startswith("..") or not word.split("/")[0] in FOLDERS:
                words.append(("path", word))
        for m in BARE_MD.finditer(text):
            words.append(("md", m.group(1)))
        for kind, word in words:
            if word.startswith("..") or os.path.isabs(word):
                problems.append(f"{rel}:{no}: '{word}' is outside the repository")
                continue
            if kind == "md":
                if not any(exists(root, os.path.join(d, word)) for d in ("", "docs", here)):
                    problems.append(f"{rel}:{no}: '{word}' is not a file of the repository")
                continue
            for path in expand(word):
                if exists(root, path):
                    continue
                problems.append(f"{rel}:{no}: '{path}' does not exist")


def main():
    ap = argparse.ArgumentParser(description="every repository path the documentation cites exists")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    files = ["README.md", "CHANGELOG.md", "bench/results/README.md"]
    files += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    problems = []
    for rel in files:
        if os.path.exists(os.path.join(root, rel)):
            check_file(root, rel, problems)
    for p in problems:
        print(f"check_doc_paths: {p}", file=sys.stderr)
    print(f"check_doc_paths: {len(files)} files, {len(problems)} missing path(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
