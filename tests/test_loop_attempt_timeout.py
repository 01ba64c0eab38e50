"""Tests of loop_lab.py's slow scenario (its stand-in tool a fake sleep in-process) and of --attempt-timeout
(each attempt in a child process of its own, given a real wait of a few tenths of a second).

LoopTestCase (one copy of the workspace per class) and the clock helpers are tests/test_loop_lab.py's.
"""
from unittest import mock

import os
import signal
import threading
import subprocess
import unittest

from tests.support import not_on_windows
from tests.test_loop_lab import FakeTime, LoopTestCase


class SlowScenarioTest(LoopTestCase):
    """slow: repair's script, every attempt first waiting on the stand-in tool (a fake sleep here)."""

    def test_default_budget_ends_for_review_after_two_waits(self):
        fake = FakeTime(0)
        record, code = self.loop("slow-ok", "slow", **fake.options())
        self.assertEqual((record["status"], record["reason"], code), ("needs_review", "mechanical_pass", 0))
        self.assertEqual(fake.slept, [3, 3])  # the documented wait, once per attempt, before the harness
        self.assertEqual([a["candidate"]["sample"] for a in record["attempts"]], ["bad-quote", "valid"])
        self.assertEqual([(a["started_offset"], a["finished_offset"]) for a in record["attempts"]], [(0, 3), (3, 6)])
        self.assertEqual(record["elapsed_seconds"], 6)
        self.assertIn("slow 的替身工具要等 3 秒才返回", self.said)

    def test_a_round_boundary_budget_does_not_interrupt_the_wait(self):
        fake = FakeTime(0)
        record, code = self.loop("slow-budget", "slow", max_seconds=1, **fake.options())
        self.assertEqual((record["status"], record["reason"], len(record["attempts"]), code),
                         ("budget_exhausted", "time_budget", 1, 1))
        self.assertEqual(fake.slept, [3])  # attempt 1 began inside the budget and ran to its end
        self.assertEqual(record["elapsed_seconds"], 3)  # above the budget: no timeout stopped the attempt
        self.assertEqual(record["attempts"][0]["decision"]["next"], "continue")
        self.assertIn("轮次边界检查不是超时", record["handoff"]["decide"])
        self.assertNotIn("要真正运行，请给出大于 0 的 --max-seconds", record["handoff"]["decide"])

    def test_a_time_budget_spent_before_round_1_says_so(self):
        record, code = self.loop("slow-none", "repair", max_seconds=0.5, **FakeTime(0, 0.6).options())
        self.assertEqual((record["reason"], len(record["attempts"])), ("time_budget", 0))
        self.assertNotIn("要真正运行，请给出大于 0 的 --max-seconds", record["handoff"]["decide"])
        self.assertIn("时间预算 0.5 秒在第 1 轮开始前就用完了", record["handoff"]["decide"])
        self.assertIn("要真正运行，请给出大于 0 的 --max-seconds", self.loop("zero", "repair", max_seconds=0)[0][
            "handoff"]["decide"])

    def test_other_scenarios_never_wait(self):
        fake = FakeTime(0)
        self.loop("no-wait", "repair", tool_seconds=5, **fake.options())
        self.assertEqual(fake.slept, [])


class ExecutorTest(LoopTestCase):
    """--attempt-timeout: each attempt in a child process of its own, ended at the limit, never left behind."""

    def spawned(self):
        """Patches subprocess.Popen to keep every child the loop starts; returns the list."""
        children, real_popen = [], subprocess.Popen

        def keep(*args, **kwargs):
            children.append(real_popen(*args, **kwargs))
            return children[-1]

        patcher = mock.patch.object(subprocess, "Popen", keep)
        patcher.start()
        self.addCleanup(patcher.stop)
        return children

    def assertGone(self, child):
        self.assertIsNotNone(child.poll(), "the child is still running")
        if hasattr(os, "killpg"):  # its process group is empty too (it leads one of its own)
            with self.assertRaises(ProcessLookupError):
                os.killpg(child.pid, 0)

    def test_a_slow_attempt_is_ended_at_its_limit_and_recorded_for_a_person(self):
        children = self.spawned()
        record, code = self.loop("cut", "slow", attempt_timeout=0.1, tool_seconds=0.4)
        self.assertEqual((record["status"], record["reason"], record["error_type"], code),
                         ("needs_human", "attempt_timeout", None, 1))
        (attempt,) = record["attempts"]  # never retried
        self.assertEqual((attempt["state"], attempt["status"], attempt["feedback"]), ("timed_out", None, None))
        timeout = attempt["timeout"]
        self.assertEqual((timeout["seconds"], timeout["inventory"]), (0.1, {"exists": False, "run_status": None,
                                                                               "files": []}))
        self.assertGreaterEqual(timeout["waited_seconds"], 0.1)
        self.assertLessEqual(attempt["finished_offset"] - attempt["started_offset"], 0.1 + 1)  # ended within S + 1 s
        self.assertEqual((attempt["decision"]["next"], attempt["decision"]["reason"]), ("stop", "attempt_timeout"))
        self.assertEqual(record["budget"]["attempt_timeout"], 0.1)
        self.assertEqual(self.child_names("cut"), [])  # killed while waiting: it honestly left nothing
        handoff = record["handoff"]
        self.assertIn("单次时限 0.1 秒", handoff["stopped_at"])
        for told in ("正在运行的是 export bad-quote → runs/cut-01", "不存在", "不会自动重试", "--attempt-timeout"):
            self.assertIn(told, handoff["decide"])
        self.assertEqual(len(children), 1)
        self.assertGone(children[0])
        self.assertEqual(self.read_record("cut"), record)

    def test_an_attempt_within_its_limit_is_recorded_as_in_process(self):
        children = self.spawned()
        record, code = self.loop("in-time", "semantic", attempt_timeout=30)
        self.assertEqual((record["status"], code), ("needs_review", 0))
        (attempt,) = record["attempts"]
        self.assertEqual((attempt["state"], attempt["status"], attempt["timeout"]), ("done", "needs_review", None))
        self.assertEqual(attempt["decision"]["reason"], "mechanical_pass")
        self.assertTrue((self.root / "runs" / "in-time-01" / "artifact" / "review.md").is_file())
        self.assertGone(children[0])

    @not_on_windows("不能给自己的进程发送这个信号")
    def test_ctrl_c_during_an_attempt_ends_the_child_first(self):
        children = self.spawned()
        ctrl_c = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        ctrl_c.start()
        self.addCleanup(ctrl_c.cancel)
        record, code = self.loop("ctrl-c-child", "slow", attempt_timeout=30, tool_seconds=30)
        self.assertEqual((record["status"], record["attempts"][0]["state"], code), ("interrupted", "unknown", 130))
        self.assertIn("执行这次尝试的子进程已被结束", record["handoff"]["decide"])
        self.assertLess(record["elapsed_seconds"], 5)
        self.assertGone(children[0])


if __name__ == "__main__":
    unittest.main()
