"""The loop's promises that tests/mutation.py found unguarded: each test fails with its mutant applied.

Through run_loop only (clocks, the child runner and its checker injected, as test_loop_lab does): which
budget stops the loop when both are spent, a child whose independent check needs a person, an action
outside the scope, files changed between two attempts. The executor's tests run a real child process with
limits of a few tenths of a second, since the timing itself is what they check: the deadline is the limit
(not later), SIGTERM comes first, and a child that ignores it is killed 0.5 s later (docs/loop/TASK.md).
"""
import json
import os
import signal
import subprocess
import sys
import time
import unittest
from unittest import mock

import loop_lab
from tests.support import not_on_windows
from tests.test_loop_lab import FakeTime, LoopTestCase

LIMIT, GRACE = 0.6, 0.5  # the attempt's limit here; the grace docs/loop/TASK.md gives a child after SIGTERM
# A child that ignores SIGTERM: only SIGKILL ends it before it has slept STUBBORN seconds.
STUBBORN = 8
IGNORES_SIGTERM = f"import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep({STUBBORN})"


class DecisionPromiseTest(LoopTestCase):
    def test_a_child_whose_independent_check_needs_a_person_is_handed_to_a_person(self):
        record, code = self.loop("check-says-human", "semantic",
                                 check_child=lambda path, *more: {"result": "needs_human", "problems": ["时钟跳变过一次。"]})
        self.assertEqual((record["status"], record["reason"], code), ("needs_human", "unexpected_error", 1))
        self.assertEqual(record["attempts"][0]["status"], "needs_review")  # the child said it passed: not enough
        self.assertEqual(record["attempts"][0]["decision"]["reason"], "unexpected_error")

    def test_when_both_budgets_are_spent_at_a_round_the_attempt_budget_is_named(self):
        # readings: start 0, round 1 at 0, attempt 1 ends at 40, round 2 at 40: one attempt allowed, 30 s spent
        record, code = self.loop("both-spent", "repair", max_attempts=1, max_seconds=30, **FakeTime(0, 0, 40).options())
        self.assertEqual((record["status"], record["reason"], len(record["attempts"]), code),
                         ("budget_exhausted", "attempt_budget", 1, 1))

    def test_an_action_other_than_export_is_blocked_even_on_a_known_sample(self):
        publish_valid = {"action": "publish", "sample": "valid"}
        with mock.patch.dict(loop_lab.CHOOSERS, {"stuck": lambda feedback: publish_valid}):
            record, code = self.loop("publish-valid", "stuck")
        self.assertEqual((record["status"], record["reason"], record["attempts"], code),
                         ("needs_human", "permission_boundary", [], 1))
        self.assertEqual(record["blocked_proposal"]["action"], "publish")
        self.assertEqual(self.child_names("publish-valid"), [])

    def test_a_file_changed_between_two_attempts_keeps_the_next_one_from_running(self):
        sample = self.root / "samples" / "valid.json"
        self.keep(sample)
        record_file = self.root / "loop-runs" / "between" / "loop.json"

        def clock():
            # once attempt 1 is decided and written down, the next round's budget check reads the clock: the
            # file changes there, after the check that followed attempt 1 and before attempt 2 may start
            decided = record_file.exists() and any(
                attempt["decision"] for attempt in json.loads(record_file.read_text(encoding="utf-8"))["attempts"])
            if decided and b"edited" not in sample.read_bytes():
                sample.write_bytes(sample.read_bytes() + b"\n edited")
            return 0

        record, code = self.loop("between", "repair", clock=clock)
        self.assertEqual((record["status"], record["error_type"], code), ("needs_human", "ContextChanged", 1))
        self.assertEqual(len(record["attempts"]), 1)
        self.assertEqual(self.child_names("between"), ["between-01"])  # attempt 2 never ran
        self.assertIn("第 2 次尝试开始前", record["handoff"]["stopped_at"])


@not_on_windows("没有进程组和 SIGKILL：只能结束进程本身，这几项时限的承诺按 POSIX 的做法检查")
class ExecutorPromiseTest(LoopTestCase):
    def children_as(self, program=None):
        """Keeps every child process the executor starts; PROGRAM (python -c) runs in place of the attempt."""
        children, real_popen = [], subprocess.Popen

        def start(args, **options):
            children.append(real_popen([sys.executable, "-c", program] if program else args, **options))
            return children[-1]

        patcher = mock.patch.object(subprocess, "Popen", start)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(lambda: [child.kill() for child in children if child.poll() is None])
        return children

    def timed_loop(self, name, scenario, **options):
        started = time.monotonic()
        record, code = self.loop(name, scenario, **options)
        return record, code, time.monotonic() - started

    def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(self):
        children = self.children_as(IGNORES_SIGTERM)
        record, code, took = self.timed_loop("stubborn", "semantic", attempt_timeout=LIMIT)
        self.assertEqual((record["status"], record["reason"], code), ("needs_human", "attempt_timeout", 1))
        (child,) = children
        self.assertEqual(child.returncode, -signal.SIGKILL)
        attempt = record["attempts"][0]
        self.assertLess(attempt["finished_offset"] - attempt["started_offset"], LIMIT + GRACE + 1.5)
        self.assertLess(took, LIMIT + GRACE + 2.5, "the loop waited for a child that ignored SIGTERM")

    def test_the_attempt_is_ended_at_its_limit_not_later(self):
        self.children_as(IGNORES_SIGTERM)
        record, _, _ = self.timed_loop("on-time", "semantic", attempt_timeout=LIMIT)
        waited = record["attempts"][0]["timeout"]["waited_seconds"]
        self.assertGreaterEqual(waited, LIMIT)
        self.assertLess(waited, 2 * LIMIT - 0.05, "the executor waited well past the limit")

    def test_an_attempt_at_its_limit_is_asked_to_end_first(self):
        children = self.children_as()  # the real attempt: slow's stand-in tool outlasts the limit
        record, code, _ = self.timed_loop("asked", "slow", attempt_timeout=LIMIT, tool_seconds=STUBBORN)
        self.assertEqual((record["reason"], code), ("attempt_timeout", 1))
        self.assertEqual(children[0].returncode, -signal.SIGTERM)  # it ended when asked: no SIGKILL needed


if __name__ == "__main__":
    unittest.main()
