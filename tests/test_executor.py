"""Tests of machinery/executor.py on its own: told what to run, ended at its limit, never left behind.

The loop's use of it (--attempt-timeout) is tested in tests/test_loop_lab.py. Here the executor runs tasks of
the standard library (json.loads, time.sleep), so nothing of the loop is needed, and real child processes are
what is checked: the waits are a few tenths of a second, never a budget.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import cli
from machinery import executor
from tests.support import not_on_windows

# A child that ignores SIGTERM, says it is ready, then would run for 5 s (5 s > any limit below + grace + slack).
STUBBORN = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(5)")


def quiet_environment():
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1")  # the child imports machinery/ from the checkout


class ExecutorTest(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.run_dir = Path(folder.name) / "runs" / "x-01"

    def assertGone(self, child):
        self.assertIsNotNone(child.poll(), "the child is still running")
        if hasattr(os, "killpg"):  # its process group is empty too (it leads one of its own)
            with self.assertRaises(ProcessLookupError):
                os.killpg(child.pid, 0)

    def write_run_record(self, status):
        self.run_dir.mkdir(parents=True, exist_ok=True)
        cli.write_json_atomic(self.run_dir / "run.json", {"run": "x-01", "status": status})

    def test_it_runs_the_task_it_is_told_and_returns_its_record(self):
        record = executor.run_in_own_process("json:loads", ['{"status": "needs_review"}'], 30, self.run_dir)
        self.assertEqual(record, {"status": "needs_review"})

    def test_the_tasks_exception_is_raised_again_as_its_kind(self):
        with self.assertRaises(ValueError) as raised:
            executor.run_in_own_process("json:loads", ["not json"], 30, self.run_dir)
        self.assertEqual(raised.exception.error_type, "JSONDecodeError")

    def test_a_child_that_ignores_termination_is_killed_after_the_grace(self):
        child = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 **executor.own_group())
        self.assertEqual(child.stdout.readline().strip(), b"ready")  # SIGTERM is ignored from here on
        started = time.monotonic()
        with self.assertRaises(executor.AttemptTimedOut) as ended:
            executor.outcome(child, 0.1, self.run_dir)
        self.assertLess(time.monotonic() - started, 0.1 + executor.GRACE_SECONDS + 1)  # S + grace, 1 s of slack
        self.assertGreaterEqual(ended.exception.waited, 0.1)
        self.assertEqual(ended.exception.left, {"exists": False, "run_status": None, "files": []})
        self.assertGone(child)

    def test_a_child_ends_when_its_caller_is_gone(self):
        # the caller killed outright (SIGKILL) closes its end of the child's stdin: the child must end at once
        read_end, write_end = os.pipe()
        child = subprocess.Popen([sys.executable, "-S", "-c", executor.CHILD_PROGRAM, executor.CODE_FOLDER,
                                  "time:sleep", "[30]"], stdin=read_end, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=quiet_environment())
        os.close(read_end)
        os.close(write_end)
        out, err = child.communicate(timeout=10)
        self.assertEqual((child.returncode, out), (130, b""), err)

    def test_a_child_that_finished_its_record_by_the_end_counts_as_finished(self):
        self.write_run_record("needs_review")
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, **executor.own_group())
        record = executor.outcome(child, 0.1, self.run_dir)  # ended at the limit, but run.json is final
        self.assertEqual((record["run"], record["status"]), ("x-01", "needs_review"))
        self.assertGone(child)
        self.write_run_record("running")
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, **executor.own_group())
        with self.assertRaises(executor.AttemptTimedOut) as ended:
            executor.outcome(child, 0.1, self.run_dir)
        self.assertEqual(ended.exception.left, {"exists": True, "run_status": "running", "files": ["run.json"]})
        self.assertGone(child)

    @not_on_windows("没有间隔定时器（setitimer）")
    def test_ctrl_c_while_waiting_ends_the_child_first(self):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, **executor.own_group())
        def ctrl_c(*_):
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGALRM, ctrl_c)
        self.addCleanup(signal.signal, signal.SIGALRM, previous)
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with self.assertRaises(KeyboardInterrupt):
            executor.outcome(child, 30, self.run_dir)
        self.assertGone(child)

    def test_a_childs_exception_is_described_and_rebuilt_as_its_kind(self):
        for raised, kind, error_type in ((cli.NameTaken("runs/x-01"), FileExistsError, "NameTaken"),
                                         (FileNotFoundError(2, "No such file", "/w/samples/valid.json"),
                                          FileNotFoundError, "FileNotFoundError"),
                                         (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), ValueError,
                                          "UnicodeDecodeError")):
            with self.subTest(error_type):
                again = executor.exception_from_child(json.loads(json.dumps(executor.described(raised))))
                self.assertIsInstance(again, kind)
                self.assertEqual(again.error_type, error_type)
        self.assertEqual(executor.exception_from_child(executor.described(raised)).args, (str(raised),))
        missing = executor.exception_from_child(executor.described(FileNotFoundError(2, "x", "/w/a.json")))
        self.assertEqual(missing.filename, "/w/a.json")


if __name__ == "__main__":
    unittest.main()
