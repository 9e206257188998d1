#!/usr/bin/env python3
"""The public structs' layout changes only with an ABI version bump (run by `make test`; docs/abi.md).

Every struct a public header defines (include/duet/*.h) is part of the ABI: a program compiled against
one layout and run against another reads the wrong bytes. tools/abi_layout.txt records, for the ABI
version (the soname's: MAJOR, or 0.MINOR while MAJOR is 0, from include/duet/version.h), each
struct's definition (its text after the preprocessor, without spacing, as a digest: a field added to
an X-macro list counts) and, for the headers that need no MPI, its size on an LP64 target (which also
catches an array bound set by a macro).

The check fails when a struct's layout differs from the record:
  - with the same ABI version as the record: the struct changed without a bump; bump the version in
    include/duet/version.h (docs/abi.md says which number), then record the new layout;
  - with another ABI version: the bump is there, the record is not; record the new layout.
A bump with no layout change passes. Recording (--update) refuses a changed layout under the
recorded ABI version, so the record cannot be moved without the bump.

    python3 tools/check_abi.py [--root DIR]            check
    python3 tools/check_abi.py --update [--root DIR]   record the current layout (after a bump)
    python3 tools/check_abi.py --self-test             plants a change in a scratch tree, must catch it

Environment: CC (default cc) compiles the size probe.
"""
import argparse
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

RECORD = os.path.join("tools", "abi_layout.txt")
# The public headers that include <mpi.h>: their structs are recorded by text only, since the probe
# is compiled with no MPI.
MPI_HEADERS = ("backend.h", "baseline.h", "measure.h")

# `typedef struct NAME {` ... `} NAME_t;` and `struct NAME {` ... `};`, starting at a line's start (a
# struct nested inside another is indented, and part of the outer one's text).
STRUCT = re.compile(r"^(typedef\s+)?(struct|union)\s+(\w*)\s*\{", re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# The self-test's checks fail on purpose; their messages are not printed.
QUIET = False


def say(text, err=False):
    if not QUIET:
        print(text, file=sys.stderr if err else sys.stdout)


def version(root):
    text = open(os.path.join(root, "include", "duet", "version.h")).read()
    part = {k: re.search(r"#define DUET_VERSION_%s (\d+)" % k, text).group(1) for k in ("MAJOR", "MINOR")}
    return "0." + part["MINOR"] if part["MAJOR"] == "0" else part["MAJOR"]


def preprocessed(root):
    """Every public header after the preprocessor, so that a struct whose fields come from an X-macro
    (duet_hw_t's DUET_HW_FIELDS) is seen field by field. <mpi.h> is an empty stand-in: only the text
    is needed, not its types."""
    headers = sorted(glob.glob(os.path.join(root, "include", "duet", "*.h")))
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, "mpi.h"), "w").close()
        c = os.path.join(tmp, "all.c")
        with open(c, "w") as f:
            f.write("".join('#include "duet/%s"\n' % os.path.basename(h) for h in headers))
        cc = os.environ.get("CC", "cc").split()
        return subprocess.run(cc + ["-std=c11", "-E", "-P", "-I" + tmp, "-I" + os.path.join(root, "include"), c],
                              check=True, capture_output=True, text=True).stdout


def structs(text):
    """[(name, digest)] of the duet structs defined at file scope in preprocessed text, in order."""
    out = []
    for m in STRUCT.finditer(text):
        depth, i = 0, m.end() - 1
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        tail = re.match(r"\s*(\w*)\s*;", text[i + 1:])
        if m.group(1) and tail and tail.group(1):
            name = tail.group(1)
        elif m.group(3):
            name = "%s %s" % (m.group(2), m.group(3))
        else:
            continue
        if not re.match(r"(struct |union )?duet_", name):
            continue
        body = " ".join(COMMENT.sub(" ", text[m.start():i + 1]).split())
        out.append((name, hashlib.sha256(body.encode()).hexdigest()[:16]))
    return out


def sizes(root, names):
    """{name: sizeof} on this compiler, or {} when the target is not LP64 (the record's sizes are)."""
    headers = sorted(os.path.basename(h) for h in glob.glob(os.path.join(root, "include", "duet", "*.h"))
                     if os.path.basename(h) not in MPI_HEADERS)
    src = "".join('#include "duet/%s"\n' % h for h in headers)
    src += "#include <stdio.h>\nint main(void) {\n"
    src += '    if (sizeof(void *) != 8 || sizeof(long) != 8) return 3;\n'
    src += "".join('    printf("%%s %%zu\\n", "%s", sizeof(%s));\n' % (n, n) for n in names)
    src += "    return 0;\n}\n"
    with tempfile.TemporaryDirectory() as tmp:
        c, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        with open(c, "w") as f:
            f.write(src)
        cc = os.environ.get("CC", "cc").split()
        subprocess.run(cc + ["-std=c11", "-I" + os.path.join(root, "include"), "-o", exe, c], check=True)
        run = subprocess.run([exe], capture_output=True, text=True)
        if run.returncode == 3:
            return {}
        run.check_returncode()
    return {n: int(s) for n, s in (line.rsplit(" ", 1) for line in run.stdout.splitlines())}


def layout(root):
    """{name: "size N digest D"} of every public struct (size "-" where the probe does not see it)."""
    found = dict(structs(preprocessed(root)))
    mpi_only = set()
    for h in MPI_HEADERS:
        path = os.path.join(root, "include", "duet", h)
        if os.path.exists(path):
            mpi_only |= set(re.findall(r"^\} (duet_\w+);", open(path).read(), re.M))
    size = sizes(root, [n for n in found if n not in mpi_only])
    return {n: "size %s digest %s" % (size.get(n, "-"), d) for n, d in found.items()}


def read_record(root):
    abi, rec = None, {}
    path = os.path.join(root, RECORD)
    if not os.path.exists(path):
        return None, {}
    for line in open(path):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "abi":
            abi = words[1]
        else:
            name, rest = line.rstrip("\n").split("\t")
            rec[name] = rest
    return abi, rec


def diff(old, new):
    """The struct names whose record differs (sizes compare only where both sides have one)."""
    out = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            out.append(name)
            continue
        sa, da = a.split()[1], a.split()[3]
        sb, db = b.split()[1], b.split()[3]
        if da != db or (sa != "-" and sb != "-" and sa != sb):
            out.append(name)
    return out


def write_record(root, abi, lay):
    with open(os.path.join(root, RECORD), "w") as f:
        f.write("# The public structs' layout at ABI version %s (tools/check_abi.py --update; docs/abi.md).\n" % abi)
        f.write("# name<TAB>size on LP64 (- for headers that need MPI), digest of the definition's text\n")
        f.write("abi %s\n" % abi)
        for name in sorted(lay):
            f.write("%s\t%s\n" % (name, lay[name]))


def check(root, update=False):
    abi = version(root)
    old_abi, old = read_record(root)
    lay = layout(root)
    changed = diff(old, lay) if old_abi else sorted(lay)
    if changed and old_abi == abi:
        say("check_abi: public struct layout changed at ABI version %s without a version bump: %s. "
            "Bump the version in include/duet/version.h (docs/abi.md), then run tools/check_abi.py --update"
            % (abi, ", ".join(changed)), err=True)
        return 1
    if update:
        write_record(root, abi, lay)
        say("  ABI     recorded %d public structs at ABI version %s in %s" % (len(lay), abi, RECORD))
        return 0
    if changed:
        say("check_abi: ABI version %s (was %s) with a new layout of %s: record it with tools/check_abi.py --update"
            % (abi, old_abi, ", ".join(changed)), err=True)
        return 1
    say("  ABI     %d public structs as recorded for ABI version %s (%s)" % (len(lay), abi, RECORD))
    return 0


def self_test(root):
    """A struct changed without a bump fails (a field written in the struct, and one added to
    DUET_HW_FIELDS's X-macro list), the bump alone fails until recorded, --update refuses without the
    bump; an unchanged tree passes."""
    global QUIET
    QUIET = True
    plants = (r"(typedef struct duet_hw \{\n)", r"(#define DUET_HW_FIELDS\(X\)[ \\]*\n)")
    lines = ("    double planted_by_self_test;\n", "    X(planted_by_self_test, DBL, \"1\", 0, 1, \"planted\") \\\n")
    results = []
    for plant, line in zip(plants, lines):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "tools"))
            shutil.copytree(os.path.join(root, "include"), os.path.join(tmp, "include"))
            shutil.copy(os.path.join(root, RECORD), os.path.join(tmp, RECORD))
            model = os.path.join(tmp, "include", "duet", "model.h")
            ver = os.path.join(tmp, "include", "duet", "version.h")
            results.append(check(tmp) == 0)
            text = open(model).read()
            planted = re.sub(plant, lambda m: m.group(1) + line, text, count=1)
            assert planted != text, "self-test: %s not found in include/duet/model.h" % plant
            open(model, "w").write(planted)
            results += [check(tmp) == 1, check(tmp, update=True) == 1]
            vtext = open(ver).read()
            major = re.search(r"#define DUET_VERSION_MAJOR (\d+)", vtext).group(1)
            part = "MINOR" if major == "0" else "MAJOR"
            bumped = re.sub(r"(#define DUET_VERSION_%s )(\d+)" % part,
                            lambda m: m.group(1) + str(int(m.group(2)) + 1), vtext)
            open(ver, "w").write(bumped)
            results += [check(tmp) == 1, check(tmp, update=True) == 0, check(tmp) == 0]
    QUIET = False
    if not all(results):
        print("check_abi --self-test: expected [pass, fail, refuse, fail, record, pass] twice, got %s" % results,
              file=sys.stderr)
        return 1
    print("  ABI     self-test: a field planted in duet_hw_t and in DUET_HW_FIELDS is caught without a bump,"
          " and recorded after one")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--update", action="store_true", help="record the current layout (after a version bump)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    root = os.path.normpath(args.root)
    if args.self_test:
        return self_test(root)
    return check(root, update=args.update)


if __name__ == "__main__":
    sys.exit(main())
