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

The sources are checked too: every C, header, HIP and CUDA file, Makefile and .mk fragment, every
file of tools/ and tuning_data/, and the fuzz seeds (tests/fuzz/corpus/). In them, a `../shared`
path is an error, and so is every cited file name ending in .md, .sh or .py that the repository does
not hold: a name with a folder must be that path (from the repository root or the citing file's
folder), a bare name must be the name of some file of the repository. Files of other projects that
the sources name as such are listed in EXTERNAL. The measurement archive (bench/results/archive/)
is a record of its day and names that day's scripts, to be read with `git show COMMIT:PATH`; it is
not checked.

Prints one line per missing path, `FILE:LINE: 'PATH' ...`, and exits 1 if there is any.

    python3 tools/check_doc_paths.py [--root DIR]
    python3 tools/check_doc_paths.py --self-test     plants a stale name of each kind, must catch all
"""
import argparse
import glob
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile

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


# Files of other projects that the sources cite by name, each said to be theirs where it is named.
EXTERNAL = {
    "predictor.py",       # the reference design's analytical predictor (iris PR #544)
    "collect_corpus.py",  # the reference design's corpus collector (iris PR #544)
    "matmul.py",          # tritonBLAS, named where origami's use is described
    "origami.py",         # tritonBLAS's origami binding
}
SOURCE_EXT = (".c", ".h", ".hip", ".cu", ".cuh", ".inc", ".mk", ".py", ".sh", ".json", ".txt")
SHARED = re.compile(r"\.\./shared\b")
CITED = re.compile(r"(?<![\w/.:$<>@-])((?:[\w.-]+/)*[A-Za-z_][\w.-]*\.(?:md|sh|py))(?![\w-])")


def repo_files(root):
    """Tracked and untracked (not ignored) files, or every file below root outside build folders
    where root is not a git checkout (as in the self-test)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                             check=True, capture_output=True).stdout.decode()
        files = [p for p in out.split("\0") if p and os.path.isfile(os.path.join(root, p))]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", "build") and not d.startswith("build-")]
        files += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames]
    return files


def is_source(rel):
    if rel.startswith("bench/results/archive/") or rel.startswith("docs/"):
        return False
    base = os.path.basename(rel)
    if base == "Makefile" or rel.startswith(("tools/", "tuning_data/", "tests/fuzz/corpus/", ".ci/")):
        return True
    return rel.endswith(SOURCE_EXT) and not rel.endswith((".json", ".txt"))


def check_source(root, rel, names, problems):
    here = os.path.dirname(rel)
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        if SHARED.search(line):
            problems.append(f"{rel}:{no}: cites ../shared, which is outside the repository")
        for m in CITED.finditer(line):
            word = m.group(1)
            if SHARED.search(word):
                continue  # reported above
            if "/" in word:
                if not (os.path.exists(os.path.join(root, word)) or os.path.exists(os.path.join(root, here, word))):
                    problems.append(f"{rel}:{no}: '{word}' does not exist")
            elif word not in names and word not in EXTERNAL:
                problems.append(f"{rel}:{no}: '{word}' is not a file of the repository")


def check_tree(root):
    """Every problem of the tree at root; returns (files checked, problems)."""
    files = ["README.md", "CHANGELOG.md", "bench/results/README.md"]
    files += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    problems = []
    checked = 0
    for rel in files:
        if os.path.exists(os.path.join(root, rel)):
            check_file(root, rel, problems)
            checked += 1
    all_files = repo_files(root)
    names = {os.path.basename(p) for p in all_files}
    for rel in sorted(all_files):
        # The checker and its planted names are not citations.
        if is_source(rel) and rel != "tools/check_doc_paths.py":
            check_source(root, rel, names, problems)
            checked += 1
    return checked, problems


def self_test():
    """Plant one stale citation of each kind in a scratch tree and check that each is caught, and
    that the clean tree has none. Returns an exit status."""
    plants = [
        ("model/a.c", "/* see ../shared/reference/h200.md */\n", "cites ../shared"),
        ("model/b.h", "/* measured by tools/h200-onegpu.sh */\n", "'tools/h200-onegpu.sh' does not exist"),
        ("backend/c.hip", "// as KINDS.md says\n", "'KINDS.md' is not a file"),
        ("Makefile", "# run gone.py first\n", "'gone.py' is not a file"),
        ("tuning_data/p.json", '{"source": "origami.md 2.2: 2048 FLOP/cycle"}\n', "'origami.md' is not a file"),
        ("tools/x.sh", "# from ../shared/notes\n", "cites ../shared"),
        ("tests/fuzz/corpus/f/seed.txt", "1# (tools/h200-ab.sh)\n", "'tools/h200-ab.sh' does not exist"),
    ]
    clean = [("docs/a.md", "See docs/a.md and tools/run.sh.\n"), ("tools/run.sh", "# tools/run.sh, docs/a.md\n"),
             ("model/ok.c", "/* tools/run.sh; a.md; predictor.py (the reference design's); REV:gone.sh */\n")]
    tmp = tempfile.mkdtemp(prefix="check-doc-paths-")
    try:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)) or tmp, exist_ok=True)
            with open(os.path.join(tmp, rel), "a", encoding="utf-8") as f:
                f.write(text)
        for rel, text in clean:
            write(rel, text)
        _, problems = check_tree(tmp)
        if problems:
            print("check_doc_paths: self-test: the clean tree reports " + "; ".join(problems), file=sys.stderr)
            return 1
        for rel, text, _ in plants:
            write(rel, text)
        _, problems = check_tree(tmp)
        missed = [(rel, want) for rel, _, want in plants if not any(p.startswith(rel + ":") and want in p
                                                                    for p in problems)]
        for rel, want in missed:
            print(f"check_doc_paths: self-test: {rel}: not caught ({want})", file=sys.stderr)
        if len(problems) != len(plants):
            print(f"check_doc_paths: self-test: {len(problems)} problems for {len(plants)} plants: {problems}",
                  file=sys.stderr)
            return 1
        print(f"check_doc_paths: self-test: {len(plants)} planted stale citations, {len(plants)} caught")
        return 1 if missed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description="every repository path the documentation and the sources cite exists")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true", help="plant stale citations in a scratch tree; all must be caught")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    root = os.path.abspath(args.root)
    checked, problems = check_tree(root)
    for p in problems:
        print(f"check_doc_paths: {p}", file=sys.stderr)
    print(f"check_doc_paths: {checked} files, {len(problems)} missing path(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
