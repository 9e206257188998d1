"""Tests of the python/duet package over build/libduet.so (run by make test with python3 -m unittest)."""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import duet  # noqa: E402

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

    def test_errors_raise(self):
        with self.assertRaises(duet.DuetError) as e:
            duet.predict(gemm=(64, 64, 64), emit="mpi")
        self.assertIn("'mpi' is not nccl", str(e.exception))
        self.assertLess(e.exception.status, 0)
        with self.assertRaises(duet.DuetError):
            duet.simulate(gemm=(64, 64, 64), config={"tile": "7x7"})

    def test_library_from_the_environment(self):
        # DUET_LIBRARY names the library; a wrong one is an error that says so, in a fresh interpreter.
        code = "import duet\ntry:\n    duet.version()\nexcept duet.DuetError as e:\n    print('E', e)\n"
        env = dict(os.environ, DUET_LIBRARY="/nonexistent/libduet.so", PYTHONPATH=os.path.join(ROOT, "python"))
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        self.assertTrue(out.stdout.startswith("E cannot load /nonexistent/libduet.so"), out.stdout)


if __name__ == "__main__":
    unittest.main()
