"""Tests of the python/duet_overlap package over build/libduet.so (run by make test with python3 -m unittest)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import duet_overlap as duet  # noqa: E402

DUET_BIN = os.environ.get("DUET_BIN", os.path.join(ROOT, "build", "duet"))
AG = dict(gemm=(4096, 4096, 4096), collective="all_gather", comm=(2048, 4096), world=2)


class TestDuet(unittest.TestCase):
    def test_library_and_profiles(self):
        self.assertTrue(os.path.exists(duet.library_path()))
        self.assertRegex(duet.version(), r"^\d+\.\d+\.\d+$")
        self.assertEqual(duet.hw_list(), ["h100", "h200", "mi300x", "mi350x"])
        prof = duet.hw("mi300x")
        self.assertEqual(prof["schema"], "duet-hw/1")
        self.assertEqual(prof["constants"]["n_sms"]["value"], 304)
        # A profile dict goes back in as it came out.
        again = duet.hw(prof)
        self.assertEqual(again["constants"]["n_sms"]["value"], 304)

    def test_plan_by_hand(self):
        # 4096^3 in the default 256x128x64 tile: 16 x 32 = 512 tiles, 4096 / 64 = 64 K steps, 2 m n k FLOPs.
        p = duet.plan(gemm=(4096, 4096, 4096))
        self.assertEqual(p["schema"], "duet-plan/1")
        self.assertEqual(p["gemm"]["tiles"], 512)
        self.assertEqual(p["gemm"]["k_iters"], 64)
        self.assertEqual(p["gemm"]["flops"], 2.0 * 4096**3)

    def test_simulate_matches_the_cli(self):
        cfg = {"mode": "concurrent", "gemm_wgs": 112, "comm_wgs": 20}
        r = duet.simulate(config=cfg, **AG)
        self.assertEqual(r["schema"], "duet-simulate/1")
        cli = subprocess.run(
            [DUET_BIN, "simulate", "--gemm", "4096x4096x4096", "--collective", "all_gather", "--comm", "2048x4096",
             "--mode", "concurrent", "--gemm-wgs", "112", "--comm-wgs", "20", "--json"],
            check=True, capture_output=True, text=True)
        c = json.loads(cli.stdout)
        self.assertEqual(r["makespan_us"], c["makespan_us"])
        self.assertEqual(r["config"], c["config"])
        # all_gather over 2 ranks: S = 2 x 2048 x 4096 x 2 bytes, busbw = S / t x 1/2.
        s = 2 * 2048 * 4096 * 2
        self.assertEqual(r["comm_bytes"], s)
        self.assertAlmostEqual(r["busbw_gbs"], s / (r["comm_finish_us"] * 1e-6) / 1e9 * 0.5, places=9)

    def test_predict_ranks_and_emits(self):
        p = duet.predict(split_step=8, top=0, emit="torch", **AG)
        self.assertEqual(p["schema"], "duet-predict/2")
        # Ranked by the upper end of each prediction's interval: pred_us (1 + err) of its mode.
        times = [row["hi_us"] for row in p["ranked"]]
        self.assertEqual(len(times), p["n_configs"])
        for a, b in zip(times, times[1:]):
            self.assertLessEqual(a, b * (1 + 1e-9))
        for row in p["ranked"]:
            self.assertAlmostEqual(row["hi_us"], row["pred_us"] * (1 + row["err"]), delta=1e-9 * row["hi_us"])
            self.assertAlmostEqual(row["lo_us"], row["pred_us"] / (1 + row["err"]), delta=1e-9 * row["hi_us"])
        d = p["decision"]
        self.assertEqual(d["safe_kind"], "static_default")
        self.assertEqual(d["moved"], d["gain_lo"] > 0)
        vb = p["emit"]["vendor_best"]
        self.assertEqual(vb["mode"], "vendor")
        self.assertIn("opts.config.max_ctas = %d" % vb["comm_wgs"], p["emit"]["settings"])
        self.assertIn("torch._C._set_sm_carveout_experimental(%d)  # private API: SMs left out of cuBLASLt's matmul plans"
                      % (132 - vb["gemm_wgs"]), p["emit"]["settings"])
        self.assertAlmostEqual(p["emit"]["duet_speedup"], vb["pred_us"] / p["emit"]["duet_best"]["pred_us"])

    def test_running_vendor_is_the_safe_choice(self):
        p = duet.predict(split_step=8, top=3, running_vendor=(120, 12), **AG)
        d = p["decision"]
        self.assertEqual(d["safe_kind"], "running_vendor")
        self.assertEqual((d["safe"]["mode"], d["safe"]["gemm_wgs"], d["safe"]["comm_wgs"]), ("vendor", 120, 12))
        self.assertAlmostEqual(d["safe"]["hi_us"], d["safe"]["pred_us"] * (1 + d["safe"]["err"]))

    def test_comm_bytes(self):
        p = duet.predict(gemm=(1024, 1024, 1024), collective="all_gather", comm_bytes=128 << 20, split_step=64,
                         top=1)
        self.assertEqual((p["mc"], p["nc"]), (4096, 8192))

    def test_sweep_grid_comm_tile_and_swizzle(self):
        # Every fused row of the sweep runs on the grid, comm tile and swizzle asked for, as on the command line.
        p = duet.predict(modes=["fused"], split_step=8, top=3, num_wgs=120, comm_tile=(128, 64), group_m=4, **AG)
        for row in p["ranked"]:
            self.assertEqual((row["num_wgs"], row["comm_tile"], row["group_m"]), (120, "128x64", 4))
            self.assertEqual(row["gemm_wgs"] + row["comm_wgs"], 120)
        # The static default stays the reference design's split of every SM, with the comm tile and swizzle.
        d = p["static_default"]
        self.assertEqual((d["num_wgs"], d["comm_tile"], d["group_m"]), (132, "128x64", 4))
        cli = subprocess.run(
            [DUET_BIN, "predict", "--gemm", "4096x4096x4096", "--collective", "all_gather", "--comm", "2048x4096",
             "--mode", "fused", "--splits", "step:8", "--top", "3", "--num-wgs", "120", "--comm-tile", "128x64",
             "--group-m", "4", "--json"], check=True, capture_output=True, text=True)
        self.assertEqual(p["ranked"], json.loads(cli.stdout)["ranked"])
        # The comm tile as the request's string is the same request.
        q = duet.predict(modes=["fused"], split_step=8, top=3, num_wgs=120, comm_tile="128x64", group_m=4, **AG)
        self.assertEqual(q["ranked"], p["ranked"])

    def test_reference_pricing(self):
        # The reference's own pick: its candidates are max(16, 132 / 8) = 16 .. 132 SMs in steps of 8.
        p = duet.predict(policy="frozen", reference_pricing=True, split_step=8, top=1, **AG)
        ref = p["reference_predict_split"]
        self.assertIn(ref["gemm_wgs"], range(16, 133, 8))
        self.assertRegex(ref["tile"], r"^\d+x\d+x\d+$")
        self.assertGreater(ref["pred_us"], 0)
        self.assertNotIn("reference_predict_split", duet.predict(policy="frozen", split_step=8, top=1, **AG))
        with self.assertRaises(duet.DuetError) as e:
            duet.predict(reference_pricing=True, split_step=8, top=1, **AG)
        self.assertIn("request.reference_pricing needs policy frozen", str(e.exception))

    def test_errors_raise(self):
        with self.assertRaises(duet.DuetError) as e:
            duet.predict(gemm=(64, 64, 64), emit="mpi")
        self.assertIn("'mpi' is not nccl", str(e.exception))
        self.assertLess(e.exception.status, 0)
        with self.assertRaises(duet.DuetError):
            duet.simulate(gemm=(64, 64, 64), config={"tile": "7x7"})

    def test_library_from_the_environment(self):
        # DUET_LIBRARY names the library; a wrong one is an error that says so, in a fresh interpreter.
        code = "import duet_overlap as duet\ntry:\n    duet.version()\nexcept duet.DuetError as e:\n    print('E', e)\n"
        env = dict(os.environ, DUET_LIBRARY="/nonexistent/libduet.so", PYTHONPATH=os.path.join(ROOT, "python"))
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        self.assertTrue(out.stdout.startswith("E cannot load /nonexistent/libduet.so"), out.stdout)


class TestArguments(unittest.TestCase):
    """Misspelt keywords and non-integers are refused before any request, with a message that says why."""

    def test_unknown_keyword_is_named_with_the_closest(self):
        with self.assertRaises(TypeError) as e:
            duet.predict(gemm=(64, 64, 64), wrld=8)
        self.assertEqual(str(e.exception), "predict() got an unexpected keyword argument 'wrld'; did you mean 'world'?")
        with self.assertRaises(TypeError) as e:
            duet.simulate(gemm=(64, 64, 64), polcy="frozen")
        self.assertEqual(str(e.exception),
                         "simulate() got an unexpected keyword argument 'polcy'; did you mean 'policy'?")
        with self.assertRaises(TypeError) as e:
            duet.predict(gemm=(64, 64, 64), num_wg=120)
        self.assertEqual(str(e.exception),
                         "predict() got an unexpected keyword argument 'num_wg'; did you mean 'num_wgs'?")
        # rank is plan's alone.
        with self.assertRaises(TypeError) as e:
            duet.simulate(gemm=(64, 64, 64), rank=1)
        self.assertEqual(str(e.exception), "simulate() got an unexpected keyword argument 'rank'")
        self.assertEqual(duet.plan(rank=1, **AG)["schema"], "duet-plan/1")

    def test_non_integers_are_refused_not_truncated(self):
        cases = [
            (dict(gemm=(4096.7, 4096, 4096)), "gemm[0] must be an integer, not 4096.7 (float)"),
            (dict(gemm=(64, 64, 64), world=8.0), "world must be an integer, not 8.0 (float)"),
            (dict(gemm=(64, 64, 64), root="0"), "root must be an integer, not '0' (str)"),
            (dict(gemm=(64, 64, 64), top=2.5), "top must be an integer, not 2.5 (float)"),
            (dict(gemm=(64, 64, 64), collective="all_gather", comm=(256, True)),
             "comm[1] must be an integer, not True (bool)"),
            (dict(gemm=(64, 64)), "gemm must hold 3 integers, not 2"),
            (dict(gemm=(64, 64, 64), split_ks=[1, 2.0]), "split_ks[1] must be an integer, not 2.0 (float)"),
            (dict(gemm=(64, 64, 64), running_vendor=(120, 12.5)),
             "running_vendor[1] must be an integer, not 12.5 (float)"),
            (dict(gemm=(64, 64, 64), num_wgs=120.0), "num_wgs must be an integer, not 120.0 (float)"),
            (dict(gemm=(64, 64, 64), group_m="4"), "group_m must be an integer, not '4' (str)"),
            (dict(gemm=(64, 64, 64), comm_tile=(128, 64.0)), "comm_tile[1] must be an integer, not 64.0 (float)"),
            (dict(gemm=(64, 64, 64), comm_tile=(128,)), "comm_tile must hold 2 integers, not 1"),
            (dict(gemm=(64, 64, 64), reference_pricing=1), "reference_pricing must be True or False, not 1 (int)"),
        ]
        for kw, message in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(TypeError) as e:
                    duet.predict(**kw)
                self.assertEqual(str(e.exception), message)

    def test_integers_of_other_types_pass(self):
        # Any integral type (numpy's included) is an integer: a bool subclass of int is not.
        class Int(int):
            pass

        p = duet.plan(gemm=(Int(4096), 4096, 4096))
        self.assertEqual(p["gemm"]["tiles"], 512)


def _read(*path):
    with open(os.path.join(ROOT, *path)) as f:
        return f.read()


def _version_h():
    text = _read("include", "duet", "version.h")
    return ".".join(re.search(r"#define DUET_VERSION_%s (\d+)" % p, text).group(1) for p in ("MAJOR", "MINOR", "PATCH"))


def _builder():
    """An interpreter that can build the package with no network: pip, setuptools and wheel installed
    (build isolation would download setuptools). None if there is none."""
    for exe in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if exe and os.path.exists(exe) and all(
                subprocess.run([exe] + args, capture_output=True).returncode == 0
                for args in (["-c", "import setuptools, wheel"], ["-m", "pip", "--version"])):
            return exe
    return None


class TestPackage(unittest.TestCase):
    def test_version_is_the_library_version(self):
        text = _read("python", "pyproject.toml")
        self.assertEqual(re.search(r'^version = "([^"]+)"', text, re.M).group(1), _version_h())
        self.assertEqual(re.search(r'^name = "([^"]+)"', text, re.M).group(1), "duet-overlap")
        self.assertEqual(duet.version(), _version_h())

    def test_pip_installs_it(self):
        exe = _builder()
        if exe is None:
            self.skipTest("no python3 with pip, setuptools and wheel to build the package offline")
        with tempfile.TemporaryDirectory() as tmp:
            src, target = os.path.join(tmp, "src"), os.path.join(tmp, "site")
            shutil.copytree(os.path.join(ROOT, "python"), src, ignore=shutil.ignore_patterns("__pycache__"))
            subprocess.run([exe, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
                            "--target", target, src], check=True, capture_output=True, text=True,
                           env=dict(os.environ, PIP_ROOT_USER_ACTION="ignore"))
            code = ("import importlib.metadata as m, duet_overlap as d\n"
                    "print(m.version('duet-overlap'), d.version(), d.__file__)\n")
            out = subprocess.run([exe, "-c", code], check=True, capture_output=True, text=True,
                                 env=dict(os.environ, PYTHONPATH=target, DUET_LIBRARY=duet.library_path()))
            dist, lib, path = out.stdout.split()
            self.assertEqual((dist, lib), (_version_h(), _version_h()))
            self.assertTrue(path.startswith(target), path)


if __name__ == "__main__":
    unittest.main()
