#!/usr/bin/env python3
"""Mutation testing for duet: does the CPU test suite notice small deliberate bugs?

Each mutant in the list (tests/mutate/mutants.txt) names a source file, an exact snippet of it and
a replacement. The runner

  1. copies the working tree (tracked and untracked, not ignored, files) into a scratch tree,
     build/mutate/tree by default, builds the test binary there and runs the unmutated suite once
     (it must pass); the scratch tree's build is kept between runs, so a second run rebuilds only
     what changed;
  2. per mutant: checks that the snippet occurs exactly once in the WORKING TREE's file (else the
     mutant is STALE, an error: the file moved on and the list must follow), writes the mutated
     file into the scratch tree, rebuilds incrementally (make: only the objects that depend on
     that file, then the archive and the two binaries), runs the test binary with --fail-fast
     under a time limit (first the suites of tests/<layer>/ of the mutated file's layer, where most
     mutants die within seconds, then the rest), and puts the original file and the baseline's
     objects back, so that the next mutant compiles only its own file;
  3. prints a table (mutant, file, result, the first failing test) and the score, and writes it to
     build/mutate/report.txt.

The working tree is never written, so an interrupt (Ctrl-C, SIGTERM) leaves nothing mutated
there; the scratch tree is restored before the runner exits, re-synchronised from the working tree
at the start of every run, and rebuilt from scratch if a run was killed before restoring it.

Results: killed (a test failed or crashed), timeout (a test ran past its Criterion timeout, or the
suite past the runner's limit: a mutant that loops), survived (every test passed), stale (the
snippet does not occur exactly once), build-error (the mutant does not compile: a mistake in the
list). The score is (killed + timeout) / (killed + timeout + survived). Stale and build-error
mutants make the exit status 2; a score below --min-score makes it 1.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def parse_mutants(path):
    """Blocks of 'key: value' lines, one mutant each, started by '[id]'. find/repl may repeat: their
    lines are joined with newlines (a snippet spanning lines). '#' lines are comments."""
    mutants, cur = [], None
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("#") or not line.strip():
                continue
            if line.startswith("[") and line.rstrip().endswith("]"):
                cur = {"id": line.strip()[1:-1], "line": no, "find": [], "repl": []}
                mutants.append(cur)
                continue
            if cur is None or ":" not in line:
                sys.exit(f"{path}:{no}: expected '[id]' or 'key: value', got {line!r}")
            key, _, val = line.partition(":")
            key = key.strip()
            val = val[1:] if val.startswith(" ") else val
            if key in ("find", "repl"):
                cur[key].append(val)
            elif key in ("file", "why"):
                if key in cur:
                    sys.exit(f"{path}:{no}: '{key}' given twice for [{cur['id']}]")
                cur[key] = val
            else:
                sys.exit(f"{path}:{no}: unknown key '{key}'")
    seen = set()
    for m in mutants:
        for key in ("file", "why"):
            if key not in m:
                sys.exit(f"{path}:{m['line']}: [{m['id']}] has no '{key}'")
        if not m["find"] or not m["repl"]:
            sys.exit(f"{path}:{m['line']}: [{m['id']}] needs find and repl")
        if m["id"] in seen:
            sys.exit(f"{path}:{m['line']}: mutant id [{m['id']}] is used twice")
        seen.add(m["id"])
        m["find"] = "\n".join(m["find"])
        m["repl"] = "\n".join(m["repl"])
        if m["find"] == m["repl"]:
            sys.exit(f"{path}:{m['line']}: [{m['id']}] replaces the snippet with itself")
    return mutants


def source_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))]


def same_content(a, b):
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def sync(tree):
    """Make the scratch tree's sources equal to the working tree's; only changed files are copied
    (with a new mtime), so make rebuilds only what they affect."""
    files = source_files()
    keep = set(files)
    changed = 0
    for rel in files:
        src, dst = os.path.join(ROOT, rel), os.path.join(tree, rel)
        if not same_content(src, dst):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                os.unlink(dst)
            shutil.copyfile(src, dst)
            shutil.copymode(src, dst)
            changed += 1
    for dirpath, dirnames, filenames in os.walk(tree):
        rel_dir = os.path.relpath(dirpath, tree)
        if rel_dir == "build" or rel_dir.startswith("build" + os.sep):
            dirnames[:] = []
            continue
        for name in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if rel not in keep:
                os.unlink(os.path.join(dirpath, name))
    return changed


def write_file(path, text):
    tmp = path + ".mutate-tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def become_subreaper():
    """Make this process the reaper of its orphaned descendants (Linux prctl PR_SET_CHILD_SUBREAPER).
    Criterion's workers call setsid, so a test's process is not in the group of the test run: when
    Criterion kills a worker at its timeout, the `build/duet` that the worker started is orphaned
    outside the group that os.killpg reaches. As a subreaper, the runner inherits such orphans and
    kill_descendants finds them. Returns False where the call is not available."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def descendants(root):
    """The pids of every live process below root, read from /proc (empty where /proc is missing)."""
    children = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    out, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            out.append(pid)
            todo.append(pid)
    return out


def kill_descendants(grace=5.0):
    """SIGKILL every process left below the runner, reap the ones that were reparented to it, and
    repeat until none is left (a dying parent may reparent its children to us mid-sweep). Only
    called when no run is in flight, so everything below the runner is a leftover. Returns the
    number of processes killed."""
    killed, t0 = 0, time.monotonic()
    while True:
        pids = descendants(os.getpid())
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if not pids or time.monotonic() - t0 > grace:
            return killed
        time.sleep(0.05)


def kill_leader_group(p):
    """Kill p's process group while p is not yet reaped (once it is, its pid may name someone
    else's group), and reap p."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def run_group(cmd, cwd, env, limit):
    """Run cmd in its own process group; kill the whole group at the limit, and after every run
    (timed out or not) kill whatever it left behind: the rest of its group, and any descendant that
    left the group (Criterion's workers do) and was orphaned when its parent was killed. Returns
    (rc, output, seconds, timed_out)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        try:
            out, _ = p.communicate(timeout=limit)
            return p.returncode, out.decode(errors="replace"), time.monotonic() - t0, False
        except subprocess.TimeoutExpired:
            kill_leader_group(p)
            # A stray outside the group may hold the output pipe open: kill it before reading.
            kill_descendants()
            out, _ = p.communicate()
            return -9, out.decode(errors="replace"), time.monotonic() - t0, True
    finally:
        # Normal end, timeout or interrupt: the group, then the strays, in the group or out of it,
        # which are the runner's descendants (it is their subreaper).
        kill_leader_group(p)
        kill_descendants()


def on_term(signum, frame):
    """SIGTERM (and SIGINT, which a shell ignores in background jobs) end the run cleanly."""
    raise KeyboardInterrupt


def build(tree, jobs, limit):
    cmd = ["make", "--no-print-directory", f"-j{jobs}", "build/duet-tests"]
    return run_group(cmd, tree, dict(os.environ), limit)


def run_tests(tree, jobs, limit, pattern=None):
    env = dict(os.environ)
    env["DUET_BIN"] = "build/duet"
    cmd = ["build/duet-tests", "--fail-fast", f"-j{jobs}", "--ascii", "--color=never", "--short-filename"]
    if pattern:
        cmd += ["--filter", pattern]
    return run_group(cmd, tree, env, limit)


SUITE_RE = re.compile(r"\b(?:Test|TestSuite|ParameterizedTest)\s*\(\s*(\w+)")


def layer_suites(tree, path):
    """The Criterion suites of the tests that mirror a source file's layer (tests/<layer>/*.c; the
    shared plan header belongs to the model layer). Empty when the layer has no tests folder."""
    layer = path.split("/")[0]
    if path.startswith("include/duet/"):
        layer = "model"
    folder = os.path.join(tree, "tests", layer)
    suites = set()
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".c"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    suites.update(SUITE_RE.findall(f.read()))
    return sorted(suites)


def test_mutant(tree, jobs, limit, suites):
    """The layer's own suites first (most mutants die there, in a few seconds), then the rest.
    Returns (result, detail, seconds)."""
    passes = [None] if not suites else [f"@({'|'.join(suites)})/*", f"!(@({'|'.join(suites)}))/*"]
    total = 0.0
    for pattern in passes:
        trc, tout, tsecs, tto = run_tests(tree, jobs, max(1.0, limit - total), pattern)
        total += tsecs
        failed = first_failure(tout)
        if tto or "(Timed out)" in failed:
            return "TIMEOUT", failed or f"over {limit:.0f} s", total
        if trc != 0:
            return "KILLED", failed or f"exit status {trc}", total
    return "SURVIVED", "", total


def first_failure(out):
    """The first failing test criterion names ('[FAIL] cost::comm_tiles_by_hand: (0.00s)'), with
    'CRASH' or 'Timed out' when criterion says so."""
    for line in out.splitlines():
        if line.startswith("[FAIL] "):
            name, _, rest = line[len("[FAIL] "):].partition(": ")
            for tag in ("CRASH", "Timed out"):
                if tag in rest:
                    return f"{name} ({tag})"
            return name
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", default=os.path.join(ROOT, "tests", "mutate", "mutants.txt"))
    ap.add_argument("--tree", default=os.path.join(ROOT, "build", "mutate", "tree"), help="scratch tree")
    ap.add_argument("--only", default="", help="comma-separated mutant ids (or id prefixes ending in *)")
    ap.add_argument("--jobs", type=int, default=2, help="make and criterion jobs (default 2)")
    ap.add_argument("--timeout", type=float, default=0,
                    help="seconds for one mutant's test run (default: 3 x the unmutated run, at least 90)")
    ap.add_argument("--build-timeout", type=float, default=600)
    ap.add_argument("--min-score", type=float, default=0.0, help="exit 1 below this score (0..1)")
    ap.add_argument("--report", default=os.path.join(ROOT, "build", "mutate", "report.txt"))
    ap.add_argument("--check", action="store_true", help="only check that every snippet matches once")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    become_subreaper()

    mutants = parse_mutants(args.mutants)
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        mutants = [m for m in mutants
                   if any(m["id"] == w or (w.endswith("*") and m["id"].startswith(w[:-1])) for w in wanted)]
        if not mutants:
            sys.exit("mutate: --only matches no mutant")

    # Stale check against the working tree, the source of truth.
    for m in mutants:
        path = os.path.join(ROOT, m["file"])
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            m["stale"] = f"cannot read: {e.strerror}"
            continue
        n = text.count(m["find"])
        if n != 1:
            m["stale"] = f"snippet occurs {n} times"
    stale = [m for m in mutants if "stale" in m]
    if args.check:
        for m in stale:
            print(f"STALE {m['id']} ({m['file']}): {m['stale']}")
        print(f"{len(mutants)} mutants, {len(stale)} stale")
        return 2 if stale else 0

    os.makedirs(args.tree, exist_ok=True)
    t_start = time.monotonic()
    # A run killed between writing a mutant and restoring the build (SIGKILL) may leave a mutated
    # object newer than its source: then only a clean build of the scratch tree can be trusted.
    dirty = os.path.join(os.path.dirname(args.tree), "dirty")
    if os.path.exists(dirty):
        print("mutate: the last run did not finish restoring the scratch tree: building it from scratch", flush=True)
        shutil.rmtree(os.path.join(args.tree, "build"), ignore_errors=True)
        os.unlink(dirty)
    print(f"mutate: scratch tree {os.path.relpath(args.tree, ROOT)}: {sync(args.tree)} files copied", flush=True)
    rc, out, secs, to = build(args.tree, args.jobs, args.build_timeout)
    if rc != 0:
        print(out[-4000:])
        sys.exit("mutate: the unmutated tree does not build")
    print(f"mutate: baseline build {secs:.0f} s", flush=True)
    rc, out, base_secs, to = run_tests(args.tree, args.jobs, 900)
    if rc != 0:
        print(out[-4000:])
        sys.exit("mutate: the unmutated test suite fails; fix it first")
    limit = args.timeout if args.timeout > 0 else max(90.0, 3.0 * base_secs)
    print(f"mutate: baseline tests pass in {base_secs:.1f} s; limit per mutant {limit:.0f} s; "
          f"{len(mutants)} mutants", flush=True)

    # The originals, read once: the working tree may change while the run goes on; every mutant is
    # of the tree as it was at the start (and the scratch tree was synchronised to it).
    originals = {}
    for m in mutants:
        if "stale" not in m and m["file"] not in originals:
            with open(os.path.join(args.tree, m["file"]), encoding="utf-8") as f:
                originals[m["file"]] = f.read()
    # The unmutated build, kept so that putting a file back costs no compile: every object and
    # dependency file of the baseline build is saved; after a mutant, the source gets its old time
    # stamp back, every object the mutant's build rewrote gets its old bytes and time stamp back,
    # and the archive is removed so that make rebuilds it (and relinks) from the objects next time.
    build_dir = os.path.join(args.tree, "build")
    saved = os.path.join(os.path.dirname(args.tree), "orig")
    shutil.rmtree(saved, ignore_errors=True)
    objects = {}
    for dirpath, _, filenames in os.walk(build_dir):
        for name in filenames:
            if name.endswith((".o", ".d")):
                src = os.path.join(dirpath, name)
                keep = os.path.join(saved, os.path.relpath(src, build_dir))
                os.makedirs(os.path.dirname(keep), exist_ok=True)
                shutil.copy2(src, keep)
                objects[src] = (keep, os.stat(src).st_mtime_ns)
    stamps = {rel: os.stat(os.path.join(args.tree, rel)).st_mtime_ns for rel in originals}

    def restore(rel):
        dst = os.path.join(args.tree, rel)
        write_file(dst, originals[rel])
        os.utime(dst, ns=(stamps[rel], stamps[rel]))
        for obj, (keep, mtime) in objects.items():
            try:
                same = os.stat(obj).st_mtime_ns == mtime
            except FileNotFoundError:
                same = False
            if not same:
                shutil.copy2(keep, obj)
        lib = os.path.join(build_dir, "libduet.a")
        if os.path.exists(lib):
            os.unlink(lib)

    results = []
    interrupted = False
    for i, m in enumerate(mutants, 1):
        if "stale" in m:
            results.append((m, "STALE", m["stale"], 0.0, 0.0))
            print(f"[{i}/{len(mutants)}] {m['id']}: STALE ({m['stale']})", flush=True)
            continue
        dst = os.path.join(args.tree, m["file"])
        try:
            with open(dirty, "w") as f:
                f.write(m["id"] + "\n")
            write_file(dst, originals[m["file"]].replace(m["find"], m["repl"], 1))
            brc, bout, bsecs, bto = build(args.tree, args.jobs, args.build_timeout)
            if brc != 0:
                err = next((l for l in bout.splitlines() if "error" in l), "build failed").strip()
                results.append((m, "BUILD-ERROR", err[:100], bsecs, 0.0))
            else:
                res, detail, tsecs = test_mutant(args.tree, args.jobs, limit, layer_suites(args.tree, m["file"]))
                results.append((m, res, detail, bsecs, tsecs))
        except KeyboardInterrupt:
            interrupted = True
        finally:
            restore(m["file"])
            os.unlink(dirty)
        if interrupted:
            print("mutate: interrupted; the scratch tree is restored, the working tree was never written")
            break
        r = results[-1]
        print(f"[{i}/{len(mutants)}] {m['id']}: {r[1]} {r[2]} (build {r[3]:.0f} s, tests {r[4]:.1f} s)", flush=True)

    # The table.
    lines = []
    wid = max([len(m["id"]) for m, *_ in results] + [6])
    wfile = max([len(m["file"]) for m, *_ in results] + [4])
    lines.append(f"{'mutant':<{wid}}  {'file':<{wfile}}  {'result':<11}  detail")
    for m, res, detail, bsecs, tsecs in results:
        lines.append(f"{m['id']:<{wid}}  {m['file']:<{wfile}}  {res:<11}  {detail}")
    counts = {k: sum(1 for r in results if r[1] == k) for k in ("KILLED", "TIMEOUT", "SURVIVED", "STALE",
                                                                 "BUILD-ERROR")}
    scored = counts["KILLED"] + counts["TIMEOUT"] + counts["SURVIVED"]
    score = (counts["KILLED"] + counts["TIMEOUT"]) / scored if scored else 0.0
    lines.append("")
    lines.append(f"killed {counts['KILLED']}, timeout {counts['TIMEOUT']}, survived {counts['SURVIVED']}, "
                 f"stale {counts['STALE']}, build-error {counts['BUILD-ERROR']}; "
                 f"score {counts['KILLED'] + counts['TIMEOUT']}/{scored} = {100 * score:.1f} %; "
                 f"{(time.monotonic() - t_start) / 60:.1f} min")
    survivors = [(m, d) for m, res, d, b, t in results if res == "SURVIVED"]
    if survivors:
        lines.append("survivors:")
        for m, _ in survivors:
            lines.append(f"  {m['id']} ({m['file']}): {m['why']}")
    text = "\n".join(lines)
    print()
    print(text)
    os.makedirs(os.path.dirname(args.report), exist_ok=True)
    with open(args.report, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(f"mutate: report in {os.path.relpath(args.report, ROOT)}")
    if interrupted:
        return 130
    if counts["STALE"] or counts["BUILD-ERROR"]:
        return 2
    return 1 if score < args.min_score else 0


if __name__ == "__main__":
    sys.exit(main())
