#!/usr/bin/env python3
"""Tests of the mutation runner's process handling (tests/mutate/mutate.py): a test run that
times out, or that leaves processes behind, must leave nothing alive, including processes that
left the run's process group (Criterion's workers call setsid) and were orphaned when their
parent died. Run by `make test`; takes about 3 s."""
import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate  # noqa: E402


def alive(pid):
    """True while pid is a live (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


class RunGroup(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isdir("/proc"):
            raise unittest.SkipTest("needs /proc")
        cls.subreaper = mutate.become_subreaper()

    def setUp(self):
        self.pids = []

    def tearDown(self):
        # A failed test must not leave its sleepers behind either.
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        mutate.kill_descendants()

    def pids_of(self, out):
        self.pids = [int(w) for w in out.split()]
        self.assertTrue(self.pids, out)
        return self.pids

    def test_timeout_kills_the_group(self):
        # The shell prints its background sleeper's pid and waits on a second sleeper: a loop
        # that never ends, in the run's own group.
        rc, out, secs, timed_out = mutate.run_group(["sh", "-c", "sleep 300 & echo $!; sleep 300"], None,
                                                    dict(os.environ), 1.0)
        self.assertTrue(timed_out)
        self.assertLess(secs, 10.0)
        for pid in self.pids_of(out):
            self.assertFalse(alive(pid), f"pid {pid} survived the timeout")

    def test_timeout_kills_a_stray_outside_the_group(self):
        if not self.subreaper:
            self.skipTest("PR_SET_CHILD_SUBREAPER not available")
        # setsid puts the sleeper in a session (and group) of its own, as Criterion does with its
        # workers; killpg of the run's group does not reach it.
        rc, out, secs, timed_out = mutate.run_group(
            ["sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; sleep 300"], None,
            dict(os.environ), 1.0)
        self.assertTrue(timed_out)
        for pid in self.pids_of(out):
            self.assertFalse(alive(pid), f"pid {pid} (own session) survived the timeout")

    def test_normal_end_kills_an_orphan(self):
        if not self.subreaper:
            self.skipTest("PR_SET_CHILD_SUBREAPER not available")
        # The run ends at once with status 0 but orphans a sleeper in a session of its own: the
        # case of a Criterion worker killed at its timeout while its `build/duet` ran on.
        t0 = time.monotonic()
        rc, out, secs, timed_out = mutate.run_group(
            ["sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; exit 0"], None,
            dict(os.environ), 60.0)
        self.assertFalse(timed_out)
        self.assertEqual(rc, 0)
        self.assertLess(time.monotonic() - t0, 10.0)
        for pid in self.pids_of(out):
            self.assertFalse(alive(pid), f"orphan {pid} survived the run")

    def test_exit_status_and_output_of_a_normal_run(self):
        rc, out, secs, timed_out = mutate.run_group(["sh", "-c", "echo hello; exit 3"], None, dict(os.environ),
                                                    60.0)
        self.assertEqual((rc, out, timed_out), (3, "hello\n", False))


if __name__ == "__main__":
    unittest.main()
