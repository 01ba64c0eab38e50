"""tests/mutation.py ends a run of tests with everything it started, also what left its process group, and starts
none after a Ctrl-C.

A run is given a folder holding one test file that starts two sleeping processes and says their ids: one in the
tests' own process group, one in a session of its own (as the loop's attempts and its model server are started),
then either passes at once or waits for the Ctrl-C. Once the run has ended neither process is alive.
"""
import os
import shutil
import signal
import tempfile
import threading
import time
import unittest
from pathlib import Path

from tests import mutation
from tests.support import not_on_windows

LEAVES = """import os, subprocess, sys, time, unittest

class Leaves(unittest.TestCase):
    def test_leaves_two_sleepers(self):
        sleep = [sys.executable, "-S", "-c", "import time; time.sleep(60)"]
        kept = subprocess.Popen(sleep)
        alone = subprocess.Popen(sleep, start_new_session=True)
        with open("pids.tmp", "w") as out:
            out.write(f"{kept.pid} {alone.pid}")
        os.replace("pids.tmp", "pids")
        if os.environ.get("WAIT_FOR_CTRL_C"):
            time.sleep(60)
"""


def alive(pid):
    """Whether process PID still runs a moment after it was killed (a zombie nobody has reaped yet has ended)."""
    deadline = time.monotonic() + 5  # a killed process is gone within milliseconds; a survivor stays
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                running = stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
        except FileNotFoundError:
            running = False
        except OSError:  # no /proc
            try:
                os.kill(pid, 0)
                running = True
            except ProcessLookupError:
                running = False
        if not running:
            return False
        time.sleep(0.01)
    return True


@not_on_windows("没有进程组：变异检查只能结束它启动的测试进程本身（与 machinery/executor.py 相同）")
class EndsWhatItsTestsStartedTest(unittest.TestCase):
    def setUp(self):
        self.folder = Path(tempfile.mkdtemp(prefix="mutation-check-"))
        self.addCleanup(shutil.rmtree, self.folder, ignore_errors=True)
        (self.folder / "test_leaves.py").write_text(LEAVES, encoding="utf-8")
        self.addCleanup(self.end_sleepers)

    def sleepers(self):
        return [int(pid) for pid in (self.folder / "pids").read_text(encoding="utf-8").split()]

    def end_sleepers(self):  # whatever the run may have left, so a failing test leaves nothing either
        for pid in self.sleepers() if (self.folder / "pids").exists() else []:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def test_a_run_that_passes_leaves_nothing_running(self):
        outcome, _seconds, _said = mutation.run_tests(self.folder, ["test_leaves"], timeout=60)
        self.assertEqual(outcome, "passed")
        kept, alone = self.sleepers()
        self.assertFalse(alive(kept), "the sleeper in the tests' process group")
        if not os.path.isdir("/proc"):
            self.skipTest("这个系统没有 /proc：另立会话的进程找不到，变异检查只结束测试的进程组")
        self.assertFalse(alive(alone), "the sleeper in a session of its own")

    def test_ctrl_c_ends_the_runs_going_and_starts_none(self):
        self.addCleanup(mutation.STOPPED.clear)
        os.environ["WAIT_FOR_CTRL_C"] = "1"
        self.addCleanup(os.environ.pop, "WAIT_FOR_CTRL_C", None)
        ended = []
        run = threading.Thread(target=lambda: ended.append(mutation.run_tests(self.folder, ["test_leaves"], 60)))
        run.start()
        deadline = time.monotonic() + 30
        while not (self.folder / "pids").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        mutation.stop_all()
        run.join(30)
        self.assertEqual([outcome for outcome, _, _ in ended], ["stopped"])
        kept, alone = self.sleepers()
        self.assertFalse(alive(kept))
        del os.environ["WAIT_FOR_CTRL_C"]  # were a run to start now, it would pass at once
        self.assertEqual(mutation.run_tests(self.folder, ["test_leaves"], 60), ("stopped", 0.0, []))
        self.assertEqual(self.sleepers(), [kept, alone])  # nothing ran again
        if not os.path.isdir("/proc"):
            self.skipTest("这个系统没有 /proc：另立会话的进程找不到，变异检查只结束测试的进程组")
        self.assertFalse(alive(alone))


if __name__ == "__main__":
    unittest.main()
