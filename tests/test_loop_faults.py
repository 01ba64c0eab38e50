"""Tests of loop_lab.py under faults: a mid-run time stop, unexpected exceptions, a taken child name, changed
files, a record that cannot be written, and an interrupt at every point (a record, one JSON line, exit 130).

Faults are injected in-process through run_loop's parameters or by patching, never by waiting; LoopTestCase
(one copy of the workspace per class) and the clock helpers are tests/test_loop_lab.py's.
"""
import json
from unittest import mock

import os
import signal
import unittest

import cli
import export_review
import harness
import loop_lab
from machinery import progress
from tests.support import not_on_windows
from tests.test_loop_lab import FakeTime, LoopTestCase, fake_clock, seconds_between


class FaultTest(LoopTestCase):
    def assertValidInterruptedRecord(self, name, record, code):
        self.assertEqual(code, 130)
        on_disk = self.read_record(name)
        self.assertEqual(on_disk, record)
        self.assertEqual((on_disk["status"], on_disk["reason"]), ("interrupted", "keyboard_interrupt"))
        self.assertEqual(on_disk["attempts"][-1]["state"], "unknown")
        self.assertIn("runs/" + name + "-01/run.json", on_disk["handoff"]["inspect"])
        self.assertIn("不能认定这次动作没做", on_disk["handoff"]["decide"])
        self.assertEqual(self.verdict(name)["result"], "needs_human")

    def test_fake_clock_exhausts_a_nonzero_time_budget_mid_run(self):
        # readings: start 0, round 1 at 0, attempt 1 ends at 31, round 2 judges 31
        record, code = self.loop("t", "repair", max_seconds=30, **FakeTime(0, 0, 31).options())
        self.assertEqual(code, 1)
        self.assertEqual((record["status"], record["reason"], len(record["attempts"])),
                         ("budget_exhausted", "time_budget", 1))
        self.assertEqual(record["elapsed_seconds"], 31)  # the reading the budget check judged
        self.assertEqual(seconds_between(record["started_at"], record["finished_at"]), 31)
        self.assertEqual((record["attempts"][0]["started_offset"], record["attempts"][0]["finished_offset"]), (0, 31))
        self.assertEqual(self.child_names("t"), ["t-01"])  # (the verifier's view of such a stop: its own tests)

    def test_an_attempt_that_began_inside_the_budget_is_judged_normally(self):
        # the attempt's own run takes the clock past the budget; the next round never starts
        record, code = self.loop("late", "semantic", max_seconds=30, clock=fake_clock(0, 29.9, 45))
        self.assertEqual((record["status"], code), ("needs_review", 0))

    def test_interrupt_before_a_child_run(self):
        def run_child(root, name, sample):
            raise KeyboardInterrupt

        record, code = self.loop("i-before", "repair", run_child=run_child)
        self.assertValidInterruptedRecord("i-before", record, code)
        self.assertEqual(self.child_names("i-before"), [])

    def test_interrupt_during_export(self):
        with mock.patch.object(export_review, "export_candidate", side_effect=KeyboardInterrupt):
            record, code = self.loop("i-export", "repair")
        self.assertValidInterruptedRecord("i-export", record, code)
        child = json.loads((self.root / "runs" / "i-export-01" / "run.json").read_text(encoding="utf-8"))
        self.assertEqual(child["status"], "running")

    def test_interrupt_after_a_child_run_before_the_record_is_updated(self):
        def check_child(path):
            raise KeyboardInterrupt

        record, code = self.loop("i-after", "repair", check_child=check_child)
        self.assertValidInterruptedRecord("i-after", record, code)
        self.assertIsNone(record["attempts"][0]["status"])
        child = json.loads((self.root / "runs" / "i-after-01" / "run.json").read_text(encoding="utf-8"))
        self.assertEqual(child["status"], "failed")

    def test_interrupt_in_a_subprocess_exits_130_with_one_line(self):
        # a sitecustomize-free way to inject Ctrl-C: a tiny driver script in the copy
        driver = self.root / "interrupt_driver.py"
        driver.write_bytes((
            "import sys, export_review, loop_lab\n"
            "def stop(*args, **kwargs):\n    raise KeyboardInterrupt\n"
            "export_review.export_candidate = stop\n"
            "sys.exit(loop_lab.main(sys.argv[1:]))\n").encode("utf-8"))
        code, stdout, stderr = self.run_cli("interrupt_driver.py", "--run", "ctrl-c", "--scenario", "repair")
        self.assertEqual(code, 130)
        self.assertEqual(stdout, '{"status": "interrupted", "reason": "keyboard_interrupt", '
                                 '"semantic_review": "pending", "attempts": 1, "actual_api_calls": 0}\n')
        self.assertIn("不能认定这次动作没做", stderr)
        self.assertNoTraceback(stderr)

    def test_unexpected_exception_in_the_runner(self):
        def run_child(root, name, sample):
            raise RuntimeError("磁盘出错")

        record, code = self.loop("u-runner", "repair", run_child=run_child)
        self.assertEqual(code, 1)
        self.assertEqual((record["status"], record["reason"], record["error_type"]),
                         ("needs_human", "unexpected_error", "RuntimeError"))
        self.assertEqual(record["attempts"][0]["state"], "unknown")
        self.assertIn("磁盘出错", record["handoff"]["stopped_at"])
        self.assertIn("意外异常（RuntimeError）：磁盘出错", self.said)
        self.assertEqual(self.read_record("u-runner"), record)
        self.assertEqual(self.verdict("u-runner")["result"], "needs_human")

    def test_unexpected_exception_during_export(self):
        with mock.patch.object(export_review, "export_candidate", side_effect=RuntimeError("坏了")):
            record, code = self.loop("u-export", "repair")
        self.assertEqual(code, 1)
        self.assertEqual((record["status"], record["reason"], record["error_type"]),
                         ("needs_human", "unexpected_error", "RuntimeError"))
        self.assertEqual((record["attempts"][0]["state"], record["attempts"][0]["status"]), ("done", "needs_human"))
        self.assertEqual(self.verdict("u-export")["result"], "needs_human")

    def test_a_child_name_taken_mid_run_stops_and_is_not_counted(self):
        def run_child(root, name, sample):
            result = harness.run_harness(root, name, sample)
            (root / "runs" / "k-02").mkdir()  # someone else takes the next name
            return result

        record, code = self.loop("k", "repair", run_child=run_child)
        self.assertEqual(code, 1)
        self.assertEqual((record["status"], record["reason"], record["error_type"]),
                         ("needs_human", "unexpected_error", "FileExistsError"))
        self.assertEqual(len(record["attempts"]), 1)
        self.assertIn("runs/k-02", record["handoff"]["inspect"])
        self.assertEqual(self.read_record("k"), record)
        verdict = self.verdict("k")
        self.assertEqual(verdict["result"], "needs_human")
        self.assertIn("runs/k-02", " ".join(verdict["problems"]))

    def test_files_changed_after_the_start_stop_the_loop(self):
        self.keep(self.root / "AGENTS.md")

        def run_child(root, name, sample):
            result = harness.run_harness(root, name, sample)
            with open(root / "AGENTS.md", "a", encoding="utf-8") as handle:
                handle.write("\n改动\n")
            return result

        record, code = self.loop("c", "repair", run_child=run_child)
        self.assertEqual(code, 1)
        self.assertEqual((record["status"], record["error_type"]), ("needs_human", "ContextChanged"))
        self.assertIn("AGENTS.md", record["handoff"]["inspect"])
        self.assertEqual(len(record["attempts"]), 1)
        verdict = self.verdict("c")
        self.assertEqual(verdict["result"], "fail")  # the files no longer match the record
        self.assertIn("AGENTS.md", " ".join(verdict["problems"]))

    def test_files_changed_before_an_attempt_stop_it_from_running(self):
        self.keep(self.root / "samples" / "valid.json")

        def clock():
            target = self.root / "samples" / "valid.json"  # changed while the loop decides
            if (self.root / "runs" / "v-01").exists() and b"edited" not in target.read_bytes():
                target.write_bytes(target.read_bytes() + b"\n edited")
            return 0

        record, code = self.loop("v", "repair", clock=clock)
        self.assertEqual((record["status"], record["error_type"], code), ("needs_human", "ContextChanged", 1))
        self.assertEqual(len(record["attempts"]), 1)
        self.assertEqual(self.child_names("v"), ["v-01"])

    def test_inconsistent_child_evidence_stops_the_loop(self):
        record, code = self.loop("e", "repair",
                                 check_child=lambda path, cache=None: {"result": "fail", "problems": ["产物被改动了"]})
        self.assertEqual((record["status"], record["error_type"], code), ("needs_human", "EvidenceMismatch", 1))

    def test_a_record_that_cannot_be_written_keeps_the_last_good_one(self):
        real_write, calls = loop_lab.write_json_atomic, []

        def failing(path, record):
            calls.append(record["status"])
            if len(calls) == 3:  # the write after attempt 1 (start, before attempt 1, after it)
                raise PermissionError("denied")
            real_write(path, record)

        with mock.patch.object(loop_lab, "write_json_atomic", failing):
            record, code = self.loop("w", "repair")
        self.assertEqual(code, 1)
        self.assertEqual((record["status"], record["reason"], record["error_type"]),
                         ("needs_human", "unexpected_error", "PermissionError"))
        on_disk = self.read_record("w")
        self.assertEqual(on_disk["status"], "running")
        self.assertEqual(on_disk["attempts"][0]["state"], "running")
        self.assertEqual(len(calls), 3)
        self.assertEqual(self.child_names("w"), ["w-01"])  # nothing runs once the record cannot be kept
        self.assertIn("无法写入 ", self.said)
        self.assertIn("loop-runs/w/loop.json", self.said)
        self.assertFalse((self.root / "loop-runs" / "w" / "loop.json.tmp").exists())


def interrupted_line(reason, attempts):
    return ('{"status": "interrupted", "reason": "%s", "semantic_review": "pending", "attempts": %d, '
            '"actual_api_calls": 0}\n' % (reason, attempts))


class InterruptTest(LoopTestCase):
    """A record at every interrupt, one JSON line and exit 130 from the script's first line on."""

    def test_before_the_first_record_nothing_is_created_and_one_line_is_printed(self):
        with mock.patch.object(loop_lab, "create_record_folder", side_effect=KeyboardInterrupt):
            code, stdout, stderr = self.main("--run", "early", "--scenario", "repair")
        self.assertEqual((code, stdout), (130, interrupted_line("keyboard_interrupt", 0)))
        self.assertIn("没有创建任何记录", stderr)
        self.assertNotIn("early", self.folders("loop-runs"))

    def driver(self, signal_name):
        """A script that runs loop_lab.py as a learner would, with SIGNAL_NAME arriving while it imports harness."""
        driver = self.root / f"import_{signal_name}.py"
        driver.write_bytes((
            "import os, runpy, signal, sys\n"
            "class Signal:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name == 'harness':\n            os.kill(os.getpid(), signal.{signal_name})\n"
            "sys.meta_path.insert(0, Signal())\n"
            "sys.argv[0] = 'loop_lab.py'\n"
            "runpy.run_path('loop_lab.py', run_name='__main__')\n").encode("utf-8"))
        return driver.name

    @not_on_windows("用 os.kill() 给自己发信号会直接结束进程，处理函数来不及运行")
    def test_during_the_scripts_own_imports(self):
        for signal_name, reason in (("SIGINT", "keyboard_interrupt"), ("SIGTERM", "terminated")):
            with self.subTest(signal=signal_name):
                code, stdout, stderr = self.run_cli(self.driver(signal_name), "--run", "imp", "--scenario", "repair")
                self.assertEqual((code, stdout), (130, interrupted_line(reason, 0)))
                self.assertNoTraceback(stderr)
                self.assertNotIn("imp", self.folders("loop-runs"))

    def test_after_the_final_record_the_line_and_the_exit_code_are_the_records(self):
        with mock.patch.object(progress, "say_end", side_effect=KeyboardInterrupt):
            code, stdout, stderr = self.main("--run", "late-stop", "--scenario", "semantic")
        self.assertEqual((code, json.loads(stdout)["status"]), (0, "needs_review"))
        self.assertEqual(self.read_record("late-stop")["status"], "needs_review")

    @not_on_windows("用 os.kill() 给自己发信号会直接结束进程，处理函数来不及运行")
    def test_a_real_signal_once_the_final_record_is_written_changes_nothing(self):
        real_write, real_print = loop_lab.write_json_atomic, loop_lab.print_json

        def write_with_ctrl_c(path, record):
            if record["status"] != "running":
                os.kill(os.getpid(), signal.SIGINT)  # arrives while the final record is being written
            real_write(path, record)

        with mock.patch.object(loop_lab, "write_json_atomic", write_with_ctrl_c):
            record, code = self.loop("held", "semantic")
        self.assertEqual((record["status"], code), ("needs_review", 0))
        self.assertEqual(self.read_record("held"), record)

        def print_then_signals(line):  # Ctrl-C and SIGTERM just after the result line (the 5 of 24)
            real_print(line)
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)

        with mock.patch.object(loop_lab, "print_json", print_then_signals):
            code, stdout, stderr = self.main("--run", "late-signal", "--scenario", "stuck")
        self.assertEqual((code, json.loads(stdout)["status"]), (1, "stalled"))
        self.assertEqual(self.read_record("late-signal")["status"], "stalled")

    @not_on_windows("用 os.kill() 给自己发信号会直接结束进程，处理函数来不及运行")
    def test_a_ctrl_c_just_before_the_final_record_is_what_it_records(self):
        def stop_then_ctrl_c(loop_self):
            os.kill(os.getpid(), signal.SIGINT)  # pending when the loop turns to its final record
            return loop_lab.Stop("needs_review", "mechanical_pass", None)

        with mock.patch.object(loop_lab.OuterLoop, "rounds", stop_then_ctrl_c):
            code, stdout, stderr = self.main("--run", "just-before", "--scenario", "semantic")
        self.assertEqual((code, json.loads(stdout)["status"]), (130, "interrupted"))
        self.assertEqual(self.read_record("just-before")["status"], "interrupted")

    @not_on_windows("用 os.kill() 给自己发信号会直接结束进程，处理函数来不及运行")
    def test_a_real_ctrl_c_while_the_name_is_claimed_waits_for_the_first_record(self):
        real_write = loop_lab.write_json_atomic

        def write_with_ctrl_c(path, record):
            if ".lock-" in str(path):  # the first record, written into the claim folder
                os.kill(os.getpid(), signal.SIGINT)
            real_write(path, record)

        with mock.patch.object(loop_lab, "write_json_atomic", write_with_ctrl_c):
            record, code = self.loop("held-claim", "repair")
        self.assertEqual((record["status"], len(record["attempts"]), code), ("interrupted", 0, 130))
        self.assertEqual(self.read_record("held-claim"), record)

    def test_termination_is_recorded_as_terminated(self):
        def run_child(root, name, sample):
            raise cli.Terminated("SIGTERM")

        record, code = self.loop("term", "repair", run_child=run_child)
        self.assertEqual((record["status"], record["reason"], code), ("interrupted", "terminated", 130))
        self.assertEqual(record["attempts"][0]["state"], "unknown")
        self.assertIn("终止信号", record["handoff"]["stopped_at"])

    def test_an_interrupt_before_any_attempt_says_nothing_ran(self):
        readings = []  # the start, then Ctrl-C at the first budget check, then time as usual

        def ctrl_c_at_the_budget_check():
            readings.append(0.0)
            if len(readings) == 2:
                raise KeyboardInterrupt
            return 0.0

        record, code = self.loop("no-attempt", "repair", clock=ctrl_c_at_the_budget_check)
        self.assertEqual((record["status"], len(record["attempts"]), code), ("interrupted", 0, 130))
        self.assertIn("还没有开始任何尝试，也没有子运行", record["handoff"]["decide"])
        self.assertNotIn("已记录的尝试都已完成", record["handoff"]["decide"])
        self.assertIn("被 Ctrl-C 中断于", record["handoff"]["stopped_at"])

    def test_a_missing_file_mid_loop_is_named_and_listed_to_inspect(self):
        def run_child(root, name, sample):
            raise FileNotFoundError(2, "No such file or directory", os.path.join(root, "samples", "gone.json"))

        record, code = self.loop("gone", "repair", run_child=run_child)
        self.assertEqual((record["reason"], record["error_type"], code), ("unexpected_error", "FileNotFoundError", 1))
        self.assertIn("samples/gone.json", record["handoff"]["inspect"])
        self.assertNotIn(str(self.root), record["handoff"]["stopped_at"])
        self.assertIn("文件或文件夹不存在（FileNotFoundError）", self.said)
        self.assertIn("samples/gone.json（不存在）", self.said)

    def test_an_attempt_budget_hand_off_fits_any_scenario(self):
        record, _ = self.loop("stuck-short", "stuck", max_attempts=1)
        self.assertEqual(record["reason"], "attempt_budget")
        self.assertNotIn("repair", record["handoff"]["decide"])
        self.assertIn("最后一次反馈在 runs/stuck-short-01/run.json。", record["handoff"]["decide"])

    def test_no_hand_off_or_message_shows_an_unfilled_template(self):
        for name, scenario, options in (("tpl-a", "repair", {"max_attempts": 1}), ("tpl-s", "stuck", {}),
                                        ("tpl-t", "repair", {"max_seconds": 0}), ("tpl-p", "permission", {})):
            record, _ = self.loop(name, scenario, **options)
            for text in (json.dumps(record["handoff"], ensure_ascii=False), self.said):
                self.assertNotRegex(text, r"\{[^{}\s]*[a-z_][^{}\s]*\}", name)  # e.g. {self.name}

    @not_on_windows("os.kill(SIGTERM) 会直接结束进程，处理函数来不及运行")
    def test_a_real_sigterm_while_the_script_runs(self):
        driver = self.root / "sigterm_driver.py"
        driver.write_bytes((
            "import os, runpy, signal, sys, export_review\n"
            "def stop(*args, **kwargs):\n    os.kill(os.getpid(), signal.SIGTERM)\n"
            "export_review.export_candidate = stop\n"
            "sys.argv[0] = 'loop_lab.py'\n"
            "runpy.run_path('loop_lab.py', run_name='__main__')\n").encode("utf-8"))
        code, stdout, stderr = self.run_cli(driver.name, "--run", "sigterm", "--scenario", "repair")
        self.assertEqual((code, stdout), (130, interrupted_line("terminated", 1)))
        self.assertNoTraceback(stderr)
        self.assertEqual(self.read_record("sigterm")["reason"], "terminated")

    def test_an_interrupted_hand_off_says_which_named_file_does_not_exist(self):
        def run_child(root, name, sample):
            raise KeyboardInterrupt

        self.loop("never-made", "repair", run_child=run_child)
        self.assertIn("runs/never-made-01/run.json（不存在）", self.said)
        self.assertIn("run.json 不存在", self.read_record("never-made")["handoff"]["decide"])


if __name__ == "__main__":
    unittest.main()
