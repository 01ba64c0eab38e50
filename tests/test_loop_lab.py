"""Tests of loop_lab.py: the lesson's six cases end to end, names, arguments, faults, records.

The six cases run as subprocesses in a copy of the workspace and are compared with the lines
the lesson prints. Faults (a mid-run time stop, interrupts, unexpected exceptions, a taken child
name, changed files, a record that cannot be written) are injected in-process through
`run_loop`'s clock / wall / sleep / run_child / check_child parameters or by patching, never by
waiting. The slow scenario's stand-in tool is a fake sleep in-process; the executor's tests give
it a real wait of a few tenths of a second, since a real child process is what they check.
Copying the workspace is the slow part of a test here, so each class shares one copy: every test
uses loop names of its own and puts back any shared file it changes.
Faults and interrupts are tested in tests/test_loop_faults.py, the slow scenario and --attempt-timeout in
tests/test_loop_attempt_timeout.py; both import their helpers from here.
"""
import contextlib
import hashlib
import io
import json
from unittest import mock

import datetime
import os
import signal
import subprocess
import sys

import cli
import harness
import loop_lab
from machinery import arguments, interrupts
from tests.support import WorkspaceTestCase
from tests.test_watched_lists import documented_loop_list

LESSON_CASES = (
    (("--run", "repair-01", "--scenario", "repair"),
     '{"status": "needs_review", "reason": "mechanical_pass", '
     '"semantic_review": "pending", "attempts": 2, "actual_api_calls": 0}',
     0, ["repair-01-01", "repair-01-02"]),
    (("--run", "stuck-01", "--scenario", "stuck"),
     '{"status": "stalled", "reason": "repeated_failure", '
     '"semantic_review": "pending", "attempts": 2, "actual_api_calls": 0}',
     1, ["stuck-01-01", "stuck-01-02"]),
    (("--run", "budget-01", "--scenario", "repair", "--max-attempts", "1"),
     '{"status": "budget_exhausted", "reason": "attempt_budget", '
     '"semantic_review": "pending", "attempts": 1, "actual_api_calls": 0}',
     1, ["budget-01-01"]),
    (("--run", "time-01", "--scenario", "repair", "--max-seconds", "0"),
     '{"status": "budget_exhausted", "reason": "time_budget", '
     '"semantic_review": "pending", "attempts": 0, "actual_api_calls": 0}',
     1, []),
    (("--run", "semantic-01", "--scenario", "semantic"),
     '{"status": "needs_review", "reason": "mechanical_pass", '
     '"semantic_review": "pending", "attempts": 1, "actual_api_calls": 0}',
     0, ["semantic-01-01"]),
    (("--run", "permission-01", "--scenario", "permission"),
     '{"status": "needs_human", "reason": "permission_boundary", '
     '"semantic_review": "pending", "attempts": 0, "actual_api_calls": 0}',
     1, []),
)
QUOTE_ERROR = "第 1 张卡：引文不在对应笔记原文中。"


def moment(timestamp):
    return datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ")


def seconds_between(start, finish):
    return (moment(finish) - moment(start)).total_seconds()


def fake_clock(*readings):
    """A clock that returns READINGS in turn, then keeps returning the last one."""
    values = list(readings)
    return lambda: values.pop(0) if len(values) > 1 else values[0]


class FakeTime:
    """Injected time: monotonic READINGS in turn (then the last one again; the loop reads at its start,
    at each round's budget check, after each attempt and at the end), a wall clock that follows them
    from a fixed moment, and a sleep that moves every reading on without waiting."""
    WALL_START = 1_800_000_000  # 2027-01-15T08:00:00Z

    def __init__(self, *readings):
        self.readings, self.now, self.slept = list(readings or [0]), 0, []

    def monotonic(self):
        self.now = self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]
        return self.now

    def time(self):
        return self.WALL_START + self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.readings = [reading + seconds for reading in self.readings]

    def options(self):
        return {"clock": self.monotonic, "wall": self.time, "sleep": self.sleep}


class SharedWorkspaceTestCase(WorkspaceTestCase):
    """One copy of the workspace for the whole class (see the module docstring)."""

    @classmethod
    def setUpClass(cls):
        holder = WorkspaceTestCase("setUp")  # borrows the helper's copying and clean-up
        holder.setUp()
        cls.addClassCleanup(holder.doCleanups)
        cls.root = holder.root

    def setUp(self):
        pass  # the class's copy is used as it is

    def keep(self, *paths):
        """Puts PATHS back as they are now when the test ends."""
        for path in paths:
            self.addCleanup(path.write_bytes, path.read_bytes())

    def folders(self, parent):
        folder = self.root / parent
        return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


class LoopTestCase(SharedWorkspaceTestCase):
    def loop(self, name, scenario, **options):
        """run_loop in-process; what it says on stderr is kept in self.said."""
        with contextlib.redirect_stderr(io.StringIO()) as said:
            try:
                return loop_lab.run_loop(self.root, name, scenario, **options)
            finally:
                self.said = said.getvalue()

    def main(self, *args):
        """loop_lab.main in-process on the copy: (exit code, stdout, stderr).

        main() leaves Ctrl-C ignored once its final record is written (the process ends then); here
        the test runner goes on, so its handlers are put back.
        """
        out, err = io.StringIO(), io.StringIO()
        handlers = {number: signal.getsignal(number) for number in interrupts.HELD}
        self.addCleanup(lambda: [signal.signal(number, handler) for number, handler in handlers.items()])
        with mock.patch.object(loop_lab, "ROOT", self.root), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                code = loop_lab.main(list(args))
            except SystemExit as exc:
                code = exc.code
        return code, out.getvalue(), err.getvalue()

    def read_record(self, name):
        return json.loads((self.root / "loop-runs" / name / "loop.json").read_text(encoding="utf-8"))

    def child_names(self, loop_name):
        """The run folders named LOOP_NAME-NN."""
        return [name for name in self.folders("runs") if name[:-3] == loop_name and name[-3] == "-"]

    def assertTimesInOrder(self, name):
        """Wall clock: loop start <= each attempt's start <= its child's start <= the child's finish <= the
        attempt's finish <= the next attempt's start <= loop finish (1 s tolerance); monotonic offsets in
        the same order, exactly; elapsed_seconds agrees with the loop's own wall times."""
        record = self.read_record(name)
        times, offsets = [record["started_at"]], [0]
        for attempt in record["attempts"]:
            child = json.loads((self.root / attempt["child_run"] / "run.json").read_text(encoding="utf-8"))
            times += [attempt["started_at"], child["started_at"], child["finished_at"], attempt["finished_at"]]
            offsets += [attempt["started_offset"], attempt["finished_offset"]]
        times.append(record["finished_at"])
        offsets.append(record["elapsed_seconds"])
        for earlier, later in zip(times, times[1:]):
            self.assertGreaterEqual(seconds_between(earlier, later), -1, times)
        self.assertEqual(offsets, sorted(offsets))
        total = seconds_between(record["started_at"], record["finished_at"])
        self.assertLessEqual(abs(total - record["elapsed_seconds"]), 1, (times, record["elapsed_seconds"]))

    def verdict(self, name):
        import verify_loop  # another engineer's file: only the tests that ask for a verdict need it
        return verify_loop.verify_loop(self.root / "loop-runs" / name)


class LessonCasesTest(LoopTestCase):
    def test_six_cases_print_the_lessons_lines_and_exit_codes(self):
        for args, line, code, children in LESSON_CASES:
            with self.subTest(args=args):
                exit_code, stdout, stderr = self.run_cli("loop_lab.py", *args)
                self.assertNoTraceback(stderr)
                self.assertEqual(stdout, line + "\n")
                self.assertEqual(exit_code, code)
                name = args[1]
                self.assertEqual(self.child_names(name), children)
                self.assertEqual(self.read_record(name)["status"], json.loads(line)["status"])

    def test_verifier_passes_the_repair_run_with_the_lessons_line(self):
        self.run_cli("loop_lab.py", "--run", "repair-02", "--scenario", "repair")
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/repair-02")
        self.assertEqual(stdout, '{"result": "pass", "status": "needs_review", "attempts": 2, '
                                 '"semantic_review": "pending"}\n')
        self.assertEqual(code, 0)
        self.assertNoTraceback(stderr)

    def test_progress_one_line_per_round_in_chinese_on_stderr(self):
        code, stdout, stderr = self.main("--run", "stuck-02", "--scenario", "stuck")
        rounds = [line for line in stderr.splitlines() if line.startswith("[第 ")]
        self.assertEqual(len(rounds), 2)
        self.assertIn("尝试 1/3", rounds[0])
        self.assertIn("bad-quote", rounds[0])
        self.assertIn("runs/stuck-02-01", rounds[0])
        self.assertIn("failed", rounds[0])
        self.assertIn(QUOTE_ERROR, rounds[0])
        self.assertIn("runs/stuck-02-02", rounds[1])
        self.assertIn("需要你决定", stderr)

    def test_budget_stop_round_has_its_own_progress_line(self):
        code, stdout, stderr = self.main("--run", "b", "--scenario", "repair", "--max-attempts", "1")
        rounds = [line for line in stderr.splitlines() if line.startswith("[第 ")]
        self.assertEqual(len(rounds), 2)
        self.assertIn("attempt_budget", rounds[1])

    def test_help_lists_the_exit_codes(self):
        code, stdout, stderr = self.run_cli("loop_lab.py", "--help")
        self.assertEqual(code, 0)
        for text in ("0 needs_review", "1 stalled", "attempt_timeout", "2 参数错误", "130", "--attempt-timeout"):
            self.assertIn(text, stdout)


class RecordTest(LoopTestCase):
    def test_repair_record_holds_the_attempts_and_their_evidence(self):
        record, code = self.loop("r", "repair")
        self.assertEqual(code, 0)
        on_disk = self.read_record("r")
        self.assertEqual(on_disk, record)
        self.assertEqual(list(on_disk), [
            "schema", "id", "run", "scenario", "budget", "status", "reason", "error_type", "semantic_review",
            "actual_api_calls", "context", "attempts", "blocked_proposal", "handoff", "segments", "elapsed_seconds",
            "started_at", "finished_at"])
        self.assertEqual(on_disk["schema"], "loop-run/4")
        self.assertRegex(on_disk["id"], r"^[0-9a-f]{32}$")
        self.assertEqual(on_disk["budget"], {"max_attempts": 3, "max_seconds": 30, "attempt_timeout": None})
        self.assertEqual(sorted(on_disk["context"]["entries"]), sorted(documented_loop_list()))
        self.assertEqual(on_disk["context"]["files"], len(documented_loop_list()))
        first, second = on_disk["attempts"]
        self.assertEqual(list(first), ["attempt", "candidate", "child_run", "state", "status", "feedback",
                                       "started_at", "finished_at", "started_offset", "finished_offset",
                                       "decision", "timeout"])
        self.assertEqual(first["candidate"]["sample"], "bad-quote")
        sample = (self.root / "samples" / "bad-quote.json").read_bytes().replace(b"\r\n", b"\n")
        self.assertEqual(first["candidate"]["sha256"], hashlib.sha256(sample).hexdigest())
        self.assertEqual(first["child_run"], "runs/r-01")
        self.assertEqual((first["state"], first["status"]), ("done", "failed"))
        self.assertEqual(first["feedback"], {"error_type": "ValidationError", "message": QUOTE_ERROR})
        self.assertEqual((second["candidate"]["sample"], second["status"], second["feedback"]),
                         ("valid", "needs_review", None))
        self.assertIsNone(on_disk["blocked_proposal"])
        self.assertIsNone(on_disk["handoff"])
        self.assertIsNotNone(on_disk["finished_at"])
        self.assertFalse((self.root / "loop-runs" / "r" / "loop.json.tmp").exists())
        self.assertNotEqual(self.loop("r2", "repair")[0]["id"], on_disk["id"])  # made new for every loop

    def test_record_written_at_start_before_each_attempt_and_at_the_end(self):
        # docs/loop/TASK.md「记录」: at start, before and after every attempt, and at the end
        snapshots = []
        real_write = loop_lab.write_json_atomic

        def spy(path, record):
            snapshots.append((record["status"], [(a["attempt"], a["state"], (a["decision"] or {}).get("next"))
                                                 for a in record["attempts"]]))
            real_write(path, record)

        with mock.patch.object(loop_lab, "write_json_atomic", spy):
            self.loop("order", "repair")
        self.assertEqual(snapshots, [  # each finished attempt is written once: with its result and the decision
            ("running", []),
            ("running", [(1, "running", None)]),
            ("running", [(1, "done", "continue")]),
            ("running", [(1, "done", "continue"), (2, "running", None)]),
            ("running", [(1, "done", "continue"), (2, "done", "stop")]),
            ("needs_review", [(1, "done", "continue"), (2, "done", "stop")]),
        ])

    def test_permission_records_the_blocked_publish_and_a_concrete_handoff(self):
        record, code = self.loop("p", "permission")
        self.assertEqual(code, 1)
        self.assertEqual(record["blocked_proposal"]["action"], "publish")
        self.assertIn("target", record["blocked_proposal"])
        self.assertIn("reason", record["blocked_proposal"])
        handoff = record["handoff"]
        self.assertEqual(sorted(handoff), ["decide", "done", "inspect", "stopped_at"])
        self.assertIn("尚未导出", handoff["stopped_at"])
        self.assertIn("loop-runs/p/loop.json", handoff["inspect"])
        self.assertEqual(self.child_names("p"), [])

    def test_stalled_handoff_names_the_children_and_the_sample(self):
        record, code = self.loop("s", "stuck")
        self.assertEqual((record["status"], code), ("stalled", 1))
        self.assertEqual(record["handoff"]["inspect"], [
            "loop-runs/s/loop.json", "runs/s-01/run.json", "runs/s-02/run.json", "samples/bad-quote.json"])

    def test_fractional_time_budget_is_recorded_as_given(self):
        record, code = self.loop("f", "semantic", max_seconds=2.5, max_attempts=1)
        self.assertEqual(record["budget"], {"max_attempts": 1, "max_seconds": 2.5, "attempt_timeout": None})
        self.assertEqual(record["status"], "needs_review")


class StallRuleTest(LoopTestCase):
    """The stall rule with scripted children: what counts as 'the same failure'."""

    def scripted(self, proposals, errors):
        def choose(feedback):
            return {"action": "export", "sample": proposals[len(feedback)]}

        def run_child(root, name, sample):
            error = errors[int(name[-2:]) - 1]
            return {"status": "failed", "error": {"type": "ValidationError", "message": error}}
        return choose, run_child

    def run_scripted(self, name, proposals, errors, max_attempts=5):
        choose, run_child = self.scripted(proposals, errors)
        with mock.patch.dict(loop_lab.CHOOSERS, {"stuck": choose}):
            return self.loop(name, "stuck", max_attempts=max_attempts, run_child=run_child,
                             check_child=lambda path, cache=None: {"result": "pass", "problems": []})

    def test_a_repeat_at_any_earlier_attempt_is_a_stall(self):
        record, code = self.run_scripted("any", ["bad-quote", "semantic", "bad-quote"], ["错误 A", "错误 B", "错误 A"])
        self.assertEqual((record["status"], record["reason"], len(record["attempts"]), code),
                         ("stalled", "repeated_failure", 3, 1))

    def test_same_candidate_with_another_message_is_not_a_stall(self):
        record, code = self.run_scripted("other", ["bad-quote"] * 3, ["错误 A", "错误 B", "错误 C"], max_attempts=3)
        self.assertEqual((record["status"], record["reason"]), ("budget_exhausted", "attempt_budget"))


class UsedNameTest(LoopTestCase):
    def test_existing_loop_folder_exits_2_and_keeps_the_old_record(self):
        self.main("--run", "repair-01", "--scenario", "repair")
        before = (self.root / "loop-runs" / "repair-01" / "loop.json").read_bytes()
        code, stdout, stderr = self.main("--run", "repair-01", "--scenario", "stuck", "--attempt-timeout", "2.5")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("loop-runs/repair-01 已存在", stderr)
        self.assertIn("loop_lab.py --run repair-02 --scenario stuck --attempt-timeout 2.5", stderr)
        self.assertNoTraceback(stderr)
        self.assertEqual((self.root / "loop-runs" / "repair-01" / "loop.json").read_bytes(), before)
        self.assertEqual(self.child_names("repair-01"), ["repair-01-01", "repair-01-02"])

    def test_any_child_folder_with_the_name_is_a_used_name(self):
        (self.root / "runs" / "mine-07").mkdir(parents=True)
        code, stdout, stderr = self.main("--run", "mine", "--scenario", "repair")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("runs/mine-07 已存在", stderr)
        self.assertFalse((self.root / "loop-runs" / "mine").exists())
        self.assertEqual(self.child_names("mine"), ["mine-07"])

    def test_a_longer_name_sharing_the_prefix_is_not_used(self):
        (self.root / "runs" / "a-01-01").mkdir(parents=True)
        record, code = self.loop("a", "semantic")
        self.assertEqual((record["status"], code), ("needs_review", 0))

    def test_in_process_refusal_creates_nothing(self):
        (self.root / "loop-runs" / "old").mkdir(parents=True)
        with self.assertRaises(FileExistsError):
            self.loop("old", "repair")
        self.assertEqual(list((self.root / "loop-runs" / "old").iterdir()), [])
        self.assertEqual(self.child_names("old"), [])


class ArgumentTest(LoopTestCase):
    BAD = (
        (("--run", "", "--scenario", "repair"), "长度"),
        (("--run", ".hidden", "--scenario", "repair"), "不能以点或连字符开头"),
        (("--run", "-dash", "--scenario", "repair"), "--run"),
        (("--run", "end.", "--scenario", "repair"), "不能以点结尾"),
        (("--run", "a..b", "--scenario", "repair"), ".."),
        (("--run", "a/b", "--scenario", "repair"), "不允许的字符"),
        (("--run", "名字", "--scenario", "repair"), "不允许的字符"),
        (("--run", "CON", "--scenario", "repair"), "Windows 设备名"),
        (("--run", "lpt9.txt", "--scenario", "repair"), "Windows 设备名"),
        (("--run", "x" * 62, "--scenario", "repair"), "1-61"),
        (("--run", "x", "--scenario", "deploy"), "--scenario"),
        (("--run", "x"), "--scenario"),
        (("--scenario", "repair"), "--run"),
        (("--run", "x", "--scenario", "repair", "--max-attempts", "0"), "--max-attempts"),
        (("--run", "x", "--scenario", "repair", "--max-attempts", "6"), "--max-attempts"),
        (("--run", "x", "--scenario", "repair", "--max-attempts", "2.5"), "--max-attempts"),
        (("--run", "x", "--scenario", "repair", "--max-seconds", "-1"), "--max-seconds"),
        (("--run", "x", "--scenario", "repair", "--max-seconds", "300.5"), "--max-seconds"),
        (("--run", "x", "--scenario", "repair", "--max-seconds", "nan"), "--max-seconds"),
        (("--run", "x", "--scenario", "repair", "--max-seconds", "soon"), "--max-seconds"),
        (("--run", "x", "--scenario", "repair", "--attempt-timeout", "0"), "--attempt-timeout 应为 0.1-300 秒"),
        (("--run", "x", "--scenario", "repair", "--attempt-timeout", "-1"), "--attempt-timeout 应为 0.1-300 秒"),
        (("--run", "x", "--scenario", "repair", "--attempt-timeout", "0.09"), "--attempt-timeout 应为 0.1-300 秒"),
        (("--run", "x", "--scenario", "repair", "--attempt-timeout", "300.5"), "--attempt-timeout 应为 0.1-300 秒"),
        (("--run", "x", "--scenario", "repair", "--attempt-timeout", "nan"), "--attempt-timeout 应为 0.1-300 秒"),
        (("--run", "x", "--scenario", "repair", "--attempt-timeout", "inf"), "--attempt-timeout 应为 0.1-300 秒"),
        (("--run", "x", "--scenario", "slow", "--attempt-timeout", "soon"), "--attempt-timeout"),
        (("--run", "x", "--scenario", "repair", "--verbose"), "--verbose"),
    )

    def test_bad_arguments_exit_2_in_chinese_and_create_nothing(self):
        before = (self.folders("loop-runs"), self.folders("runs"))
        for args, named in self.BAD:
            with self.subTest(args=args):
                code, stdout, stderr = self.main(*args)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn(named, stderr)
                self.assertIn("参数", stderr)
                self.assertEqual((self.folders("loop-runs"), self.folders("runs")), before)

    def test_bad_arguments_on_the_command_line(self):
        for args, named in (self.BAD[3], self.BAD[-3]):
            with self.subTest(args=args):
                code, stdout, stderr = self.run_cli("loop_lab.py", *args)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn(named, stderr)
                self.assertNoTraceback(stderr)
                self.assertFalse((self.root / "loop-runs" / args[1]).exists())

    def test_an_out_of_range_value_is_echoed_as_plain_decimal(self):
        for args, echoed in ((("--attempt-timeout", "1e9"), "收到 1000000000。"),
                             (("--max-seconds", "12345678"), "收到 12345678。"),
                             (("--max-seconds", "-0.5"), "收到 -0.5。")):
            with self.subTest(args=args):
                code, _, stderr = self.main("--run", "x", "--scenario", "slow", *args)
                self.assertEqual(code, 2)
                self.assertIn(echoed, stderr)

    def test_attempt_timeout_edges_are_accepted(self):
        for seconds in (0.1, 1, 300):
            self.assertIsNone(arguments.argument_problem(loop_lab.SCENARIOS, "x", "slow", 3, 30, seconds), seconds)

    def test_budget_edges_are_accepted(self):
        name61 = "n" * 61
        record, code = self.loop(name61, "semantic", max_attempts=5, max_seconds=300)
        self.assertEqual((record["status"], code), ("needs_review", 0))
        self.assertTrue((self.root / "runs" / (name61 + "-01")).is_dir())

    def test_in_process_bad_values_raise_value_error(self):
        for options in ({"max_attempts": True}, {"max_attempts": 3.0}, {"max_seconds": float("inf")},
                        {"max_seconds": "30"}, {"attempt_timeout": 0}, {"attempt_timeout": float("nan")},
                        {"attempt_timeout": "1"}, {"attempt_timeout": True}):
            with self.subTest(options=options), self.assertRaises(ValueError):
                self.loop("v", "repair", **options)
        self.assertFalse((self.root / "loop-runs" / "v").exists())


class RoundOrderTest(LoopTestCase):
    """The flowchart's order and edges: budget, scope, the verdict before the child's own status."""

    def test_time_budget_stops_at_exactly_the_limit(self):
        # readings: start 0, round 1 at 0, round 2 at exactly 30 (= max_seconds), the end at 30
        record, code = self.loop("edge", "repair", max_seconds=30, clock=fake_clock(0, 0, 30))
        self.assertEqual((record["status"], record["reason"], len(record["attempts"]), code),
                         ("budget_exhausted", "time_budget", 1, 1))
        self.assertEqual(self.child_names("edge"), ["edge-01"])

    def test_export_of_an_unknown_sample_is_a_permission_boundary_with_no_attempt(self):
        with mock.patch.dict(loop_lab.CHOOSERS, {"stuck": lambda feedback: {"action": "export", "sample": "secret"}}):
            record, code = self.loop("unknown-sample", "stuck")
        self.assertEqual((record["status"], record["reason"], len(record["attempts"]), code),
                         ("needs_human", "permission_boundary", 0, 1))
        self.assertEqual(record["blocked_proposal"]["action"], "export")
        self.assertEqual(record["blocked_proposal"]["target"], "secret")
        self.assertEqual(self.child_names("unknown-sample"), [])

    def test_the_independent_verdict_is_consulted_before_the_childs_status(self):
        def run_child(root, name, sample):
            return {"status": "needs_human", "error": {"type": "RuntimeError", "message": "坏了"}}

        record, code = self.loop("order-first", "repair", run_child=run_child,
                                 check_child=lambda path: {"result": "fail", "problems": ["产物被改动了。"]})
        self.assertEqual((record["status"], record["error_type"], code), ("needs_human", "EvidenceMismatch", 1))
        self.assertIn("产物被改动了", record["handoff"]["stopped_at"])

    def test_repair_chooses_on_the_error_type_not_its_wording(self):
        feedback = [{"error_type": "ValidationError", "message": "any other wording"}]
        self.assertEqual(loop_lab.CHOOSERS["repair"](feedback), {"action": "export", "sample": "valid"})
        self.assertEqual(loop_lab.CHOOSERS["repair"]([None]), {"action": "export", "sample": "bad-quote"})

    def test_times_of_a_real_run_are_in_order(self):
        self.loop("times", "repair")
        self.assertTimesInOrder("times")

    def test_offsets_and_times_follow_the_injected_clocks(self):
        # start 0; round 1 judged at 1, attempt 1 ends at 4, decided at 4.5; round 2 judged at 5, attempt 2 ends at
        # 6.5, decided at 6.8; the end read at 7. Each wall time is read with its monotonic reading.
        fake = FakeTime(0, 1, 4, 4.5, 5, 6.5, 6.8, 7)
        record, code = self.loop("fake-times", "repair", **fake.options())
        self.assertEqual((record["status"], record["elapsed_seconds"]), ("needs_review", 7))
        self.assertEqual([(a["started_offset"], a["finished_offset"], a["decision"]["decided_offset"])
                          for a in record["attempts"]], [(1, 4, 4.5), (5, 6.5, 6.8)])
        self.assertEqual([(a["started_at"], a["finished_at"]) for a in record["attempts"]],
                         [("2027-01-15T08:00:01Z", "2027-01-15T08:00:04Z"),
                          ("2027-01-15T08:00:05Z", "2027-01-15T08:00:06Z")])
        self.assertEqual((record["started_at"], record["finished_at"]),
                         ("2027-01-15T08:00:00Z", "2027-01-15T08:00:07Z"))
        self.assertEqual(record["segments"], [{"started_at": "2027-01-15T08:00:00Z", "started_offset": 0,
                                               "wall_minus_monotonic": fake.WALL_START, "elapsed_seconds": 7}])


class NameCaseTest(LoopTestCase):
    def test_a_name_differing_only_in_case_is_used(self):
        self.assertEqual(self.main("--run", "Demo", "--scenario", "permission")[0], 1)
        before = ((self.root / "loop-runs" / "Demo" / "loop.json").read_bytes(), self.folders("loop-runs"))
        code, stdout, stderr = self.main("--run", "demo", "--scenario", "permission")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("loop-runs/Demo 已存在", stderr)
        self.assertIn("不区分大小写", stderr)
        self.assertEqual(((self.root / "loop-runs" / "Demo" / "loop.json").read_bytes(), self.folders("loop-runs")),
                         before)

    def test_a_child_run_differing_only_in_case_is_used(self):
        (self.root / "runs" / "Mine-03").mkdir(parents=True)
        code, stdout, stderr = self.main("--run", "mine", "--scenario", "repair")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("runs/Mine-03 已存在", stderr)
        self.assertNotIn("mine", self.folders("loop-runs"))

    def test_two_processes_started_together_one_runs(self):
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        for round_number in range(3):
            names = (f"Race{round_number}", f"race{round_number}")
            with self.subTest(names=names):
                procs = [subprocess.Popen([sys.executable, "loop_lab.py", "--run", name, "--scenario", "permission"],
                                          cwd=self.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                         for name in names]
                codes = sorted(proc.wait(timeout=30) for proc in procs)
                for proc in procs:
                    proc.stdout.close()
                    proc.stderr.close()
                self.assertEqual(codes, [1, 2])  # permission ends with 1; the other name is refused
                made = [name for name in self.folders("loop-runs") if name.lower() == names[1]]
                self.assertEqual(len(made), 1, made)
        # no claim is left; each loop's lock file stays beside its folder (a loop's lock: machinery/resume.py)
        self.assertEqual([name for name in self.folders("loop-runs") if name.startswith(".") and "race" in name],
                         [".held-race0", ".held-race1", ".held-race2"])


class MessageTest(LoopTestCase):
    """Hand-offs stay within the rules of AGENTS.md, gloss each error_type, and name files truly."""
    EDITING_ADVICE = ("修改候选 samples", "先按反馈修改候选", "TASK.md 中重新定义", "下面的文件")

    def test_hand_offs_never_advise_editing_course_files_or_records(self):
        for name, scenario, options in (("adv-stuck", "stuck", {}), ("adv-budget", "repair", {"max_attempts": 1}),
                                        ("adv-perm", "permission", {}), ("adv-time", "repair", {"max_seconds": 0})):
            with self.subTest(scenario=scenario, options=options):
                record, code = self.loop(name, scenario, **options)
                decide = record["handoff"]["decide"]
                for advice in self.EDITING_ADVICE:
                    self.assertNotIn(advice, decide)
                self.assertIn("预期结果", decide)  # in the course this stop is what should happen
                self.assertIn("新名称", decide)

    def test_real_project_advice_names_who_fixes_the_candidate(self):
        record, code = self.loop("who", "stuck")
        self.assertIn("在真实项目里，由候选的作者", record["handoff"]["decide"])
        self.assertIn("不要修改它", record["handoff"]["decide"])

    def test_each_error_type_is_glossed_in_chinese(self):
        agents = self.root / "AGENTS.md"
        original = agents.read_bytes()
        self.addCleanup(agents.write_bytes, original)

        def run_child(root, name, sample):
            result = harness.run_harness(root, name, sample)
            agents.write_bytes(original + "\n改动\n".encode("utf-8"))
            return result

        def taken(root, name, sample):
            raise cli.NameTaken(f"runs/{name}")

        cases = (("gloss-c", {"run_child": run_child}, "上下文文件被改动（ContextChanged）"),
                 ("gloss-e", {"check_child": lambda path: {"result": "fail", "problems": ["x"]}},
                  "证据不一致（EvidenceMismatch）"),
                 ("gloss-f", {"run_child": taken}, "子运行目录已被占用（FileExistsError）"))
        for name, options, gloss in cases:
            with self.subTest(gloss=gloss):
                record, code = self.loop(name, "repair", **options)
                agents.write_bytes(original)
                self.assertEqual(record["error_type"], gloss.split("（")[1].rstrip("）"))
                self.assertIn(gloss, self.said)
                self.assertNotIn("下面", record["handoff"]["decide"])

    def test_printed_paths_work_from_another_folder(self):
        elsewhere = self.root.parent / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.run([sys.executable, os.path.join("..", self.root.name, "loop_lab.py"), "--run", "far",
                               "--scenario", "repair"], cwd=elsewhere, env=env, capture_output=True, text=True,
                              encoding="utf-8", timeout=60)
        self.assertEqual(proc.stdout, LESSON_CASES[0][1] + "\n")
        shown = [word.rstrip("。") for line in proc.stderr.splitlines() for word in line.replace("，", " ").split()
                 if "loop.json" in word or "review.md" in word or word.startswith("../")]
        self.assertTrue(any(path.endswith("loop-runs/far/loop.json") for path in shown), proc.stderr)
        self.assertTrue(any(path.endswith("review.md") for path in shown), proc.stderr)
        for path in shown:
            candidate = path.split("记录在")[-1].split("请阅读")[-1]
            self.assertTrue((elsewhere / candidate).exists(), candidate)


class DecisionTest(LoopTestCase):
    """Every finished attempt carries the decision taken after it, in the lesson's terms."""
    CONTINUE = {"next": "continue", "reason": "first_failure", "why": "已确认的教学失败，第一次出现：带着反馈继续"}

    def decisions(self, record):
        """Each attempt's decision, without the reading taken when it was made (RoundOrderTest follows those)."""
        return [attempt["decision"] and {key: value for key, value in attempt["decision"].items()
                                         if key != "decided_offset"} for attempt in record["attempts"]]

    def test_continue_then_mechanical_pass(self):
        record, _ = self.loop("d-repair", "repair")
        self.assertEqual(self.decisions(record), [self.CONTINUE, {
            "next": "stop", "reason": "mechanical_pass", "why": "独立核对通过，子运行机械通过：停止，内容等待人工审核"}])

    def test_repeated_failure_names_the_earlier_attempt(self):
        first, second = self.decisions(self.loop("d-stuck", "stuck")[0])
        self.assertEqual(first, self.CONTINUE)
        self.assertEqual((second["next"], second["reason"]), ("stop", "repeated_failure"))
        self.assertIn("与第 1 次尝试的候选和错误都相同", second["why"])

    def test_a_budget_stop_comes_at_the_next_round_so_the_last_decision_was_to_continue(self):
        record, _ = self.loop("d-budget", "repair", max_attempts=1)
        self.assertEqual((record["reason"], self.decisions(record)), ("attempt_budget", [self.CONTINUE]))

    def test_stops_for_a_person_after_an_attempt(self):
        agents = self.root / "AGENTS.md"
        self.keep(agents)

        def changes_agents(root, name, sample):
            result = harness.run_harness(root, name, sample)
            agents.write_bytes(agents.read_bytes() + "\n改动\n".encode("utf-8"))
            return result

        def child_needs_human(root, name, sample):
            return {"status": "needs_human", "error": {"type": "RuntimeError", "message": "坏了"}}

        cases = (("d-evidence", {"check_child": lambda path: {"result": "fail", "problems": ["x"]}}, "独立核对没有通过"),
                 ("d-child", {"run_child": child_needs_human, "check_child": lambda path: {"result": "pass"}},
                  "子运行以 needs_human 结束（RuntimeError），不是已确认的教学失败"),
                 ("d-context", {"run_child": changes_agents}, "循环开始后上下文文件变了（AGENTS.md）"))
        for name, options, why in cases:
            with self.subTest(name):
                record, code = self.loop(name, "repair", **options)
                (decision,) = self.decisions(record)
                self.assertEqual((decision["next"], decision["reason"], code), ("stop", "unexpected_error", 1))
                self.assertIn(why, decision["why"])
                self.assertEqual(self.decisions(self.read_record(name))[:1], [decision])

    def test_an_attempt_cut_off_has_no_decision(self):
        record, code = self.loop("d-cut", "repair", check_child=mock.Mock(side_effect=KeyboardInterrupt))
        self.assertEqual((record["status"], record["attempts"][0]["state"], self.decisions(record)),
                         ("interrupted", "unknown", [None]))


