"""The tools that read duet's files read both layouts: the committed ones in ms (duet-bench/1, the
--rows CSV before duet 0.2) and the current ones in us (duet-bench/2, the --rows CSV now), with the
same tables as the answer."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DUET = os.environ.get("DUET_BIN", os.path.join(ROOT, "build", "duet"))
BENCH = os.path.join(ROOT, "bench", "results", "bench-h200-w2.json")
CORPUS = os.path.join(ROOT, "tuning_data", "h200_world1-test-s1.json")


def run_tool(name, *args):
    """tools/NAME with args, from the repository's root: its exit status and output."""
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", name), *args], capture_output=True, text=True,
                          cwd=ROOT)


def tool(name, *args):
    out = run_tool(name, *args)
    if out.returncode != 0:
        raise AssertionError(f"{name} {args}: exit {out.returncode}: {out.stderr}")
    return out.stdout


def to_us(item):
    """A duet-bench/1 tree as duet-bench/2 writes it: "ms" -> "us", "x_ms" -> "x_us", the value times 1000."""
    if isinstance(item, list):
        return [to_us(x) for x in item]
    if not isinstance(item, dict):
        return item
    out = {}
    for k, v in item.items():
        if k == "ms" or k.endswith("_ms"):
            out[k[:-2] + "us"] = None if v is None else v * 1e3
        else:
            out[k] = to_us(v)
    return out


class BenchTable(unittest.TestCase):
    def test_the_two_layouts_give_the_same_tables(self):
        with open(BENCH) as fh:
            old = json.load(fh)
        self.assertEqual(old["schema"], "duet-bench/1")
        new = to_us(old)
        new["schema"] = "duet-bench/2"
        self.assertNotIn('_ms"', json.dumps(new))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench-v2.json")
            with open(path, "w") as fh:
                json.dump(new, fh)
            for flags in ([], ["--gemm"]):
                a, b = tool("bench_table.py", *flags, BENCH), tool("bench_table.py", *flags, path)
                self.assertGreater(len(a.splitlines()), 10)
                self.assertEqual(a, b, flags)
            a = tool("bench_table.py", "--compare", BENCH, BENCH)
            b = tool("bench_table.py", "--compare", path, path)
            self.assertEqual(a.replace("bench-h200-w2", "x"), b.replace("bench-v2", "x"))


class CorpusDrift(unittest.TestCase):
    def test_rows_in_us_and_in_ms_give_the_same_answer(self):
        with tempfile.TemporaryDirectory() as d:
            rows_us = os.path.join(d, "rows-us.csv")
            subprocess.run([DUET, "validate", "--hw", "h200", "--corpus", CORPUS, "--quiet", "--rows", rows_us],
                           check=True, capture_output=True, cwd=ROOT)
            with open(rows_us, newline="") as fh:
                rows = list(csv.DictReader(fh))
            self.assertIn("us", rows[0])
            # The layout before duet 0.2: the same rows with their times in ms.
            rename = {"us": "ms", "min_us": "min_ms", "max_us": "max_ms", "pred_us": "pred_ms",
                      "held_out_us": "held_out_ms"}
            text = io.StringIO()
            w = csv.DictWriter(text, [rename.get(k, k) for k in rows[0]], lineterminator="\n")
            w.writeheader()
            for r in rows:
                w.writerow({rename.get(k, k): (str(float(v) / 1e3) if k in rename and v else v) for k, v in r.items()})
            rows_ms = os.path.join(d, "rows-ms.csv")
            with open(rows_ms, "w") as fh:
                fh.write(text.getvalue())
            a = tool("corpus_drift.py", "--corpus", CORPUS, "--min-rows", "1", rows_us)
            b = tool("corpus_drift.py", "--corpus", CORPUS, "--min-rows", "1", rows_ms)
            self.assertIn("shapes: residual later - earlier", a)
            self.assertEqual(a, b)


if __name__ == "__main__":
    unittest.main()


class ModeErrKfold(unittest.TestCase):
    """tools/mode_err_kfold.py hands --max-iter and --accept-unconverged to duet calibrate fit, and a
    step that fails ends it with that step's own error (a stand-in duet records its arguments and
    fails as a fit that did not converge does)."""

    def test_fit_options_reach_the_fit_and_its_error_reaches_the_user(self):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "argv.txt")
            fake = os.path.join(d, "duet")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n"
                        "echo \"$@\" > '%s'\n"
                        "echo 'duet: calibrate fit: the fit did not converge (raise --max-iter)' >&2\n"
                        "exit 1\n" % log)
            os.chmod(fake, 0o755)
            corpus = os.path.join(d, "c.json")
            with open(corpus, "w") as f:
                json.dump({"schema": "duet-corpus/2", "rows": []}, f)
            out = run_tool("mode_err_kfold.py", "--duet", fake, "--hw", "h200", "--mode", "vendor", "--params",
                           "vendor_tile_us", "--max-iter", "500", "--accept-unconverged", corpus)
            self.assertEqual(out.returncode, 1, out.stderr)
            self.assertIn("the fit did not converge", out.stderr)
            self.assertEqual(out.stderr.count("\n"), 1, "one line: %r" % out.stderr)
            with open(log) as f:
                argv = f.read().split()
            self.assertEqual(argv[:2], ["calibrate", "fit"])
            self.assertIn("--accept-unconverged", argv)
            self.assertEqual(argv[argv.index("--max-iter") + 1], "500")

    def test_a_max_iter_below_one_is_refused(self):
        out = run_tool("mode_err_kfold.py", "--hw", "h200", "--mode", "vendor", "--params", "x", "--max-iter", "0",
                       "c.json")
        self.assertEqual(out.returncode, 2)
        self.assertIn("--max-iter", out.stderr)

    def test_a_corpus_that_cannot_be_read_is_one_line_and_exit_2(self):
        out = run_tool("mode_err_kfold.py", "--hw", "h200", "--mode", "vendor", "--params", "x", "no-such-corpus.json")
        self.assertEqual(out.returncode, 2)
        self.assertEqual(out.stderr, "duet: mode_err_kfold: no-such-corpus.json: No such file or directory\n")
