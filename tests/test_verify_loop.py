"""Tests of verify_loop.py: honest runs pass, every forgery fails, undecidable runs need a person.

Forgeries include consistent edits: duplicate keys, linked folders and files, impossible times,
names that differ only in case, records deleted while their children stay. Submissions as they
really arrive are hostile or merely unusual: FIFOs, devices and links at evidence paths, records that
are no object, over their cap, empty or cut (fail); line ends converted or a BOM added as a whole
(pass with a note), a wall clock stepped once (needs_human), an unreadable file (needs_human). Each
guard test (GuardTest) names the line it protects.

Loop runs are made in-process in a copy of the workspace (one copy per class, see
test_loop_lab.SharedWorkspaceTestCase), then their records or evidence are changed the way a
forger (or an accident) would, and the verifier is asked again. A forged record is put back
after its test; a test that damages evidence makes loop runs of its own. The command line (one
line per folder, exit codes, folders given from another directory) runs as a subprocess.
"""
import calendar
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import unittest
from pathlib import Path
from unittest import mock

import cli
import harness
import loop_lab
from verifier import records as loop_records
import verify_harness
import verify_loop
from verifier import findings
from verifier.check import checked_loop
from tests.support import assert_found, fields_of, findings_in, kinds_in, not_on_windows, skip_on_windows, values_in
from tests.test_loop_lab import SharedWorkspaceTestCase
from tests.test_verify_harness import fails_instead_of_hanging
from tests.test_repository import verifier_files
from tests.test_watched_lists import documented_list

PASS_LINE = '{"result": "pass", "status": "needs_review", "attempts": 2, "semantic_review": "pending"}\n'
# the class's honest runs: name -> (scenario, budgets)
BASE_RUNS = {"r": ("repair", {}), "s": ("stuck", {}), "b": ("repair", {"max_attempts": 1}),
             "t": ("repair", {"max_seconds": 0}), "m": ("semantic", {}), "p": ("permission", {})}


def lasting(seconds, shift, slow=lambda name: True):
    """A child runner whose runs named SLOW took SECONDS longer by both of their own clocks (their run.json says so),
    the loop's clocks moved on with them (SHIFT, a list the loop's injected clocks add up): a slow machine. Every
    child moves them on by what it really took, too: clocks that stood still while a child ran would make its own
    duration longer than its attempt (so it is on a loaded machine, where a child takes a few tenths of a second)."""
    def run_child(root, name, sample):
        record = harness.run_harness(root, name, sample)
        shift.append(record["duration_seconds"])
        if slow(name):
            finished = calendar.timegm(time.strptime(record["finished_at"], "%Y-%m-%dT%H:%M:%SZ")) + seconds
            record.update(duration_seconds=round(record["duration_seconds"] + seconds, 3),
                          finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(finished)))
            cli.write_json_atomic(Path(root) / "runs" / name / "run.json", record)
            shift.append(seconds)
        return record
    return run_child


def verdict_error(verdict):
    """The error field of a verdict's first finding that has one (the words cli.py or the verifier put there)."""
    return next(finding.fields["error"] for finding in findings_in(verdict) if "error" in finding.fields)


def times_said(found, relative=False):
    """The times and readings the findings in FOUND name, in order, as (where, field): where is a file (loop.json,
    segments[0], a child's run.json; RELATIVE: from runs/ on) or the number of an attempt."""
    return [(shortened(finding.fields["where"], relative) if finding.kind == "time_of" else finding.fields["number"],
             finding.fields["field"])
            for finding in findings_in(found) if finding.kind in ("time_of", "reading_attempt")]


def shortened(where, relative):
    return "runs/" + where.rpartition("/runs/")[2] if relative and "/runs/" in where else where


def cut_off(rec):
    """REC as a loop killed during its last attempt leaves it: still running, that attempt in flight."""
    rec.update(status="running", reason=None, handoff=None, finished_at=None)
    rec["attempts"][-1].update(state="running", status=None, feedback=None, finished_at=None, finished_offset=None,
                               decision=None)


class VerifyTestCase(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name, (scenario, options) in BASE_RUNS.items():
            cls.make(name, scenario, **options)

    @classmethod
    def make(cls, name, scenario, **options):
        with contextlib.redirect_stderr(io.StringIO()):
            record, code = loop_lab.run_loop(cls.root, name, scenario, **options)
        return record

    def record_path(self, name):
        return self.root / "loop-runs" / name / "loop.json"

    def forge(self, name, change):
        """Rewrites loop-runs/NAME/loop.json after CHANGE(record) edits it; put back after the test."""
        path = self.record_path(name)
        self.keep(path)
        record = json.loads(path.read_text(encoding="utf-8"))
        change(record)
        path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))

    @contextlib.contextmanager
    def forged(self, name, change):
        """forge() for one block of a test: the record is put back when the block ends."""
        original = self.record_path(name).read_bytes()
        try:
            self.forge(name, change)
            yield
        finally:
            self.record_path(name).write_bytes(original)

    def verdict(self, name):
        return verify_loop.verify_loop(self.root / "loop-runs" / name)

    def assertFails(self, name, *expected):
        """The loop NAME fails; EXPECTED: finding kinds its verdict holds, and values its findings name (paths,
        fields, figures): tests/support.py assert_found()."""
        verdict = self.verdict(name)
        self.assertEqual(verdict["result"], "fail", verdict)
        self.assertNotIn("check_crashed", kinds_in(verdict))  # caught by a check, not by the safety net
        assert_found(self, verdict, *expected)
        return verdict


class HonestRunsTest(VerifyTestCase):
    def test_the_six_lesson_cases_pass(self):
        cases = (("repair-01", "repair", {}, "needs_review", 2), ("stuck-01", "stuck", {}, "stalled", 2),
                 ("budget-01", "repair", {"max_attempts": 1}, "budget_exhausted", 1),
                 ("time-01", "repair", {"max_seconds": 0}, "budget_exhausted", 0),
                 ("semantic-01", "semantic", {}, "needs_review", 1),
                 ("permission-01", "permission", {}, "needs_human", 0))
        for name, scenario, options, status, attempts in cases:
            with self.subTest(name=name):
                self.make(name, scenario, **options)
                verdict = self.verdict(name)
                self.assertEqual((verdict["result"], verdict["status"], verdict["attempts"], verdict["problems"]),
                                 ("pass", status, attempts, []))

    def test_budget_variants_of_the_table_pass(self):
        for name, scenario, options in (("s1", "stuck", {"max_attempts": 1}), ("s5", "stuck", {"max_attempts": 5}),
                                        ("p0", "permission", {"max_seconds": 0}),
                                        ("m1", "semantic", {"max_attempts": 1}),
                                        ("r2", "repair", {"max_attempts": 2, "max_seconds": 0.5})):
            with self.subTest(name=name):
                self.make(name, scenario, **options)
                self.assertEqual(self.verdict(name)["result"], "pass")

    def test_loops_a_and_a_01_do_not_clash(self):
        self.make("a", "stuck")
        self.make("a-01", "repair")
        self.assertEqual([name for name in self.folders("runs") if name.startswith("a-")],
                         ["a-01", "a-01-01", "a-01-02", "a-02"])
        self.assertEqual(self.verdict("a")["result"], "pass")
        self.assertEqual(self.verdict("a-01")["result"], "pass")

    def test_a_record_saved_with_a_bom_still_passes(self):
        path = self.record_path("r")
        self.keep(path)
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
        self.assertEqual(self.verdict("r")["result"], "pass")


class ForgeryTest(VerifyTestCase):
    """The forgeries docs/loop/TASK.md and the lesson list, and the relabellings the issue adds."""

    def test_deleted_artifact(self):
        self.make("del-art", "repair")
        (self.root / "runs" / "del-art-02" / "artifact" / "review.md").unlink()
        self.assertFails("del-art", "runs/del-art-02")

    def test_altered_artifact(self):
        self.make("alt-art", "repair")
        review = self.root / "runs" / "alt-art-02" / "artifact" / "review.md"
        review.write_bytes((review.read_text(encoding="utf-8") + "\n多一句。\n").encode("utf-8"))
        self.assertFails("alt-art", "runs/alt-art-02", "review.md")

    def test_deleted_child_run(self):
        self.make("del-child", "repair")
        shutil.rmtree(self.root / "runs" / "del-child-01")
        self.assertFails("del-child", "child_deleted", "runs/del-child-01")

    def test_status_relabelled_complete(self):
        self.forge("r", lambda rec: rec.update(status="complete"))
        self.assertFails("r", "status_unknown", "complete")

    def test_status_the_children_do_not_support(self):
        self.forge("s", lambda rec: rec.update(status="needs_review", reason="mechanical_pass", handoff=None))
        self.assertFails("s", "stop_contradicted", "stalled/repeated_failure", "needs_review", "mechanical_pass")

    def test_a_stop_the_children_contradict_is_said_first_even_when_the_handoff_is_wrong_too(self):
        # a naive relabelling leaves the stall's handoff behind: the contradiction is what a teacher reads first
        self.forge("s", lambda rec: rec.update(status="needs_review", reason="mechanical_pass"))
        verdict = self.assertFails("s", "handoff_wrong")
        self.assertEqual((verdict["findings"][0].kind, verdict["findings"][0].fields),
                         ("stop_contradicted", {"supported": "stalled/repeated_failure", "status": "needs_review",
                                                "reason": "mechanical_pass"}))

    def test_stall_claimed_without_a_repeat(self):
        self.forge("b", lambda rec: rec.update(status="stalled", reason="repeated_failure"))
        self.assertFails("b", "stop_contradicted", "stalled", "repeated_failure")

    def test_stall_claimed_where_the_second_attempt_passed(self):
        # a well-formed handoff, so that only the evidence can give the forgery away
        handoff = {"stopped_at": "第 2 次尝试之后", "done": [],
                   "inspect": ["loop-runs/r/loop.json", "runs/r-01/run.json", "runs/r-02/run.json"],
                   "decide": "同一候选、同一错误重复出现，请决定是否修改候选。"}
        self.forge("r", lambda rec: rec.update(status="stalled", reason="repeated_failure", handoff=handoff))
        self.assertFails("r", "stop_contradicted", "needs_review/mechanical_pass")

    def test_handoff_that_only_says_please_handle(self):
        with self.forged("s", lambda rec: rec["handoff"].update(decide="请处理")):
            self.assertFails("s", "handoff_wrong")
        with self.forged("s", lambda rec: rec["handoff"].update(inspect=[])):
            self.assertFails("s", "handoff_wrong")

    def test_timestamps_out_of_order_or_not_times(self):
        for started, finished in (("yesterday", ""), ("2030-01-01T00:00:00Z", "2020-01-01T00:00:00Z")):
            with self.subTest(started=started), \
                    self.forged("s", lambda rec: rec.update(started_at=started, finished_at=finished)):
                self.assertFails("s", "times_wrong" if started == "yesterday" else "clock_breaks")

    def test_blocked_proposal_target_or_reason_changed(self):
        for change in ({"target": "my-own-blog"}, {"reason": " "}):
            with self.subTest(change=change), self.forged("p", lambda rec: rec["blocked_proposal"].update(change)):
                self.assertFails("p", "blocked_wrong")

    def test_attempt_number_or_file_count_of_the_wrong_type(self):
        for value in (True, 1.0):
            with self.subTest(value=value), self.forged("r", lambda rec: rec["attempts"][0].update(attempt=value)):
                self.assertFails("r", "attempt_numbering")
                self.assertEqual(fields_of(self.verdict("r"), "attempt_entry"), {"number": 1})
        with self.forged("r", lambda rec: rec["context"].update(files=16.0)):
            self.assertFails("r", "context_wrong")

    def test_child_folder_linked_to_another_loops_child(self):
        self.make("link-r", "repair")
        self.make("link-s", "stuck")
        child = self.root / "runs" / "link-r-01"
        shutil.rmtree(child)
        try:
            os.symlink(self.root / "runs" / "link-s-01", child, target_is_directory=True)
        except (OSError, AttributeError) as exc:  # Windows without the privilege
            self.skipTest(f"这里不能创建符号链接：{exc}")
        self.assertFails("link-r", "child_links", "runs/link-r-01")

    def test_stray_folder_with_other_digits_is_not_a_child(self):
        self.make("digits", "repair")
        (self.root / "runs" / "digits-\u0660\u0663").mkdir()
        self.assertEqual(self.verdict("digits")["result"], "pass")

    def test_attempt_removed_from_the_front(self):
        self.forge("r", lambda rec: rec["attempts"].pop(0))
        self.assertFails("r", "attempt_numbering", "runs/r-02", "runs/r-01")

    def test_attempt_removed_from_the_end(self):

        def drop_last(rec):
            rec["attempts"].pop()
            rec.update(status="budget_exhausted", reason="attempt_budget")
            rec["budget"].update(max_attempts=1)
        self.forge("s", drop_last)
        self.assertFails("s", "run_unrecorded", "runs/s-02")

    def test_attempts_reordered(self):
        self.forge("r", lambda rec: rec["attempts"].reverse())
        self.assertFails("r", "attempt_numbering")
        self.assertEqual(fields_of(self.verdict("r"), "attempt_entry"), {"number": 1})

    def test_attempts_reordered_and_renumbered(self):

        def swap(rec):
            first, second = rec["attempts"]
            first["candidate"], second["candidate"] = second["candidate"], first["candidate"]
        self.forge("r", swap)
        self.assertFails("r", "candidate.sample")

    def test_nonzero_api_calls(self):
        self.forge("r", lambda rec: rec.update(actual_api_calls=1))
        self.assertFails("r", "api_calls_wrong")

    def test_api_calls_as_a_float_or_bool(self):
        self.forge("r", lambda rec: rec.update(actual_api_calls=False))
        self.assertFails("r", "api_calls_wrong")

    def test_extra_child_run_with_the_prefix(self):
        self.make("extra-s", "stuck")
        harness.run_harness(self.root, "extra-s-03", "bad-quote")
        self.assertFails("extra-s", "run_unrecorded", "runs/extra-s-03")

    def test_extra_child_run_that_is_only_a_folder(self):
        self.make("extra-t", "repair", max_seconds=0)
        (self.root / "runs" / "extra-t-01").mkdir(parents=True)
        self.assertFails("extra-t", "run_unrecorded", "runs/extra-t-01")

    def test_changed_feedback(self):
        self.forge("s", lambda rec: rec["attempts"][1]["feedback"].update(message="第 2 张卡：引文不在对应笔记原文中。"))
        self.assertFails("s", "summary_mismatch")
        self.assertEqual(fields_of(self.verdict("s"), "mismatch")["field"], "feedback")

    def test_feedback_removed(self):
        self.forge("r", lambda rec: rec["attempts"][0].update(feedback=None))
        self.assertFails("r", "summary_mismatch")
        self.assertEqual(fields_of(self.verdict("r"), "mismatch")["field"], "feedback")

    def test_attempt_status_changed(self):
        self.forge("b", lambda rec: rec["attempts"][0].update(status="needs_review"))
        self.assertEqual(fields_of(self.assertFails("b", "summary_mismatch"), "mismatch"),
                         {"field": "status", "recorded": "needs_review", "actual": "failed"})

    def test_changed_fingerprint_in_the_record(self):
        self.forge("r", lambda rec: rec["context"]["entries"].update({"AGENTS.md": "0" * 64}))
        self.assertFails("r", "context_wrong")

    def test_changed_fingerprint_consistently_recomputed(self):
        def rewrite(rec):
            # the forger recomputes the combined hash as docs/harness/TASK.md defines it, written out here on purpose
            entries = rec["context"]["entries"]
            entries["AGENTS.md"] = "0" * 64
            lines = "".join(f"{path}\t{sha}\n" for path, sha in sorted(entries.items()))
            rec["context"]["fingerprint"] = hashlib.sha256(lines.encode("utf-8")).hexdigest()
        self.forge("r", rewrite)
        self.assertFails("r", "context_changed", "AGENTS.md")

    def test_watched_file_changed_after_the_run(self):
        self.keep(self.root / "docs" / "loop" / "TASK.md")
        with open(self.root / "docs" / "loop" / "TASK.md", "a", encoding="utf-8") as handle:
            handle.write("\n新增一条规则。\n")
        verdict = self.assertFails("r", "context_changed", "docs/loop/TASK.md")
        self.assertNotIn("AGENTS.md", values_in(verdict))

    def test_scenario_relabelled(self):
        for name, relabel in (("s", "repair"), ("r", "semantic"), ("m", "repair"), ("b", "semantic"),
                              ("p", "repair"), ("r", "stuck")):  # a 0-second run stops alike in every scenario
            with self.subTest(name=name, relabel=relabel), self.forged(name, lambda rec: rec.update(scenario=relabel)):
                self.assertFails(name)

    def test_unknown_scenario(self):
        self.forge("r", lambda rec: rec.update(scenario="fix-everything"))
        self.assertFails("r", "scenario_unknown", "fix-everything")

    def test_attempt_budget_relabelled(self):
        self.forge("b", lambda rec: rec["budget"].update(max_attempts=3))
        self.assertFails("b", "stop_unsupported")

    def test_attempt_budget_lowered(self):
        self.forge("r", lambda rec: rec["budget"].update(max_attempts=1))
        self.assertFails("r", "too_many_attempts")

    def test_time_budget_relabelled(self):
        self.forge("t", lambda rec: rec["budget"].update(max_seconds=30))
        self.assertFails("t", "stop_unsupported")

    def test_time_budget_given_to_a_finished_run(self):
        self.forge("r", lambda rec: rec["budget"].update(max_seconds=0))
        self.assertFails("r", "expected_mismatch", "budget_exhausted/time_budget")

    def test_budget_out_of_range_or_wrong_type(self):
        for budget in ({"max_attempts": 9, "max_seconds": 30}, {"max_attempts": "3", "max_seconds": 30},
                       {"max_attempts": 3, "max_seconds": -1}, {"max_attempts": 3}):
            with self.subTest(budget=budget), self.forged("r", lambda rec: rec.update(budget=budget)):
                self.assertFails("r", "budget_wrong")

    def test_reason_changed_to_time_budget(self):
        self.forge("b", lambda rec: rec.update(reason="time_budget"))
        self.assertFails("b")

    def test_semantic_review_not_pending(self):
        self.forge("m", lambda rec: rec.update(semantic_review="approved"))
        self.assertFails("m", "semantic_review_wrong", "approved")

    def test_missing_blocked_proposal(self):
        self.forge("p", lambda rec: rec.update(blocked_proposal=None))
        self.assertFails("p", "blocked_unexpected")

    def test_blocked_proposal_that_was_allowed(self):
        self.forge("p", lambda rec: rec["blocked_proposal"].update(action="export", target="valid"))
        self.assertFails("p")

    def test_blocked_proposal_added_to_a_repair_run(self):
        self.forge("r", lambda rec: rec.update(blocked_proposal={"action": "publish", "target": "x", "reason": "y"}))
        self.assertFails("r", "blocked_wrong")

    def test_missing_handoff(self):
        self.forge("s", lambda rec: rec.update(handoff=None))
        self.assertFails("s", "handoff_wrong")

    def test_candidate_hash_changed(self):
        self.forge("r", lambda rec: rec["attempts"][1]["candidate"].update(sha256="1" * 64))
        self.assertFails("r", "candidate_hash", "samples/valid.json")

    def test_child_run_path_changed(self):
        self.forge("r", lambda rec: rec["attempts"][1].update(child_run="runs/other-02"))
        self.assertFails("r", "attempt_numbering", "runs/other-02", "runs/r-02")

    def test_run_name_changed(self):
        self.forge("r", lambda rec: rec.update(run="other"))
        self.assertFails("r", "run_wrong", "other")

    def test_interrupted_claim_with_nothing_in_flight_still_checks_api_calls(self):
        self.forge("r", lambda rec: rec.update(status="interrupted", reason="keyboard_interrupt", actual_api_calls=2,
                                               handoff={"stopped_at": "x", "done": [], "inspect": [], "decide": "y"}))
        self.assertFails("r", "api_calls_wrong")

    def test_broken_or_missing_records_fail_in_chinese(self):
        self.keep(self.record_path("r"))
        for content, kind in ((b"{not json", "record_not_json"), (b"\xff\xfe", "record_not_json"),
                              (b"[1, 2]", "record_not_object"), (b"{}", "fields_missing"),
                              (b"[" * 100000, "record_not_json")):
            with self.subTest(content=content[:10]):
                self.record_path("r").write_bytes(content)
                self.assertFails("r", kind, "loop-runs/r/loop.json" if kind != "fields_missing" else "schema")
        self.record_path("r").unlink()
        self.assertFails("r", "record_lost", "runs/r-01")

    def test_fields_of_the_wrong_type_never_raise(self):
        for field, value in (("status", ["x"]), ("attempts", {"1": 1}), ("context", None), ("scenario", ["r"]),
                             ("handoff", 5), ("elapsed_seconds", "1"), ("budget", [3, 30])):
            with self.subTest(field=field), self.forged("r", lambda rec: rec.update({field: value})):
                self.assertFails("r")
        self.forge("r", lambda rec: rec["attempts"][0].update(state=["done"]))
        self.assertFails("r", "state_wrong")


class NeedsHumanTest(VerifyTestCase):
    def test_record_still_running(self):
        self.forge("r", lambda rec: rec.update(status="running", reason=None, handoff=None, finished_at=None))
        verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "needs_human")
        assert_found(self, verdict, "undecided", "why_running", "child_listed", "runs/r-01")

    def test_running_attempt_in_a_running_record(self):
        self.forge("r", cut_off)
        self.assertEqual(self.verdict("r")["result"], "needs_human")

    def test_mid_run_time_stop_is_judged_on_the_monotonic_readings(self):
        shift = []  # attempt 1's child took 40 s by every clock: the 30 s budget is spent before round 2
        self.make("mid", "stuck", max_seconds=30, clock=lambda: time.monotonic() + sum(shift),
                  wall=lambda: time.time() + sum(shift), run_child=lasting(40, shift))
        verdict = self.verdict("mid")
        self.assertEqual((verdict["result"], verdict["status"], verdict["attempts"]), ("pass", "budget_exhausted", 1))
        self.assertEqual(json.loads(self.record_path("mid").read_text(encoding="utf-8"))["reason"], "time_budget")


class CommandLineTest(VerifyTestCase):
    def test_many_folders_one_line_each_with_run_and_a_summary(self):
        self.make("bad", "repair")
        self.forge("bad", lambda rec: rec.update(actual_api_calls=3))
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/r", "loop-runs/s", "loop-runs/bad")
        lines = [json.loads(line) for line in stdout.splitlines()]
        self.assertEqual(lines[0], {"result": "pass", "status": "needs_review", "attempts": 2,
                                    "semantic_review": "pending", "run": "r"})
        self.assertEqual(lines[1], {"result": "pass", "status": "stalled", "attempts": 2,
                                    "semantic_review": "pending", "run": "s"})
        self.assertEqual([lines[2]["result"], lines[2]["run"]], ["fail", "bad"])
        self.assertIn("actual_api_calls 是 3", " ".join(lines[2]["problems"]))  # the words a person reads on stdout
        self.assertEqual(code, 1)
        self.assertIn("共核对 3 个循环：pass 2，fail 1，needs_human 0。", stderr)
        self.assertNoTraceback(stderr)

    def test_a_claim_folder_named_by_a_wildcard_is_skipped_not_judged(self):
        claim = self.root / "loop-runs" / ".lock-left"
        claim.mkdir()
        self.addCleanup(claim.rmdir)
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/r", "loop-runs/.lock-left")
        self.assertEqual((code, len(stdout.splitlines())), (0, 1))
        self.assertIn("跳过 loop-runs/.lock-left：以点开头的是循环的锁文件或认领名称时的临时目录，不是循环记录。", stderr)
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/.lock-left")
        self.assertEqual((code, stdout), (2, ""))
        held = self.root / "loop-runs" / ".held-r"  # every loop's lock: where the system has no file locks, the file
        if not held.exists():                        # is there only while the loop runs (machinery/resume.py)
            held.write_text(str(os.getpid()), encoding="ascii")
            self.addCleanup(held.unlink)
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/r", "loop-runs/.held-r")
        self.assertEqual((code, len(stdout.splitlines())), (0, 1), stderr)
        self.assertIn("跳过 loop-runs/.held-r：", stderr)

    def test_a_folder_that_does_not_exist_is_said_so(self):
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/nope")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("loop-runs/nope 不存在：请给出 loop-runs/ 下的循环目录", stderr)
        self.assertNotIn("移走", stderr)

    def test_an_interrupt_before_any_attempt_names_no_child_run(self):
        handoff = {"stopped_at": "被 Ctrl-C 中断于第一次尝试开始之前", "done": ["还没有启动任何子运行。"],
                   "inspect": ["loop-runs/t/loop.json"], "decide": "还没有开始任何尝试，也没有子运行；核对后用新名称重新运行。"}
        with self.forged("t", lambda rec: rec.update(status="interrupted", reason="keyboard_interrupt",
                                                     handoff=handoff)):
            verdict = self.verdict("t")
        text = " ".join(verdict["problems"])
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(kinds_in(verdict), ["undecided_no_attempt", "why_interrupted", "handoff_guide", "resume_hint"],
                         text)  # an interrupted loop may be resumed: the note says how

    def test_all_passing_folders_exit_0(self):
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/r", "loop-runs/p")
        self.assertEqual(code, 0)
        self.assertEqual(len(stdout.splitlines()), 2)

    def test_a_failing_single_folder_names_the_run_and_problems(self):
        self.make("no-cards", "repair")
        (self.root / "runs" / "no-cards-02" / "artifact" / "cards.json").unlink()
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/no-cards")
        result = self.assertOneJsonLine(stdout)
        self.assertEqual(list(result), ["result", "status", "attempts", "semantic_review", "run", "problems"])
        self.assertEqual((result["result"], result["run"], code), ("fail", "no-cards", 1))
        self.assertIn("cards.json", stderr)

    def test_works_from_another_directory(self):
        proc = subprocess.run([sys.executable, str(self.root / "verify_loop.py"), "r"], cwd=self.root / "loop-runs",
                              capture_output=True, text=True, encoding="utf-8", timeout=60)
        self.assertEqual((proc.stdout, proc.returncode), (PASS_LINE, 0))

    def test_paths_in_messages_are_usable_from_the_current_folder(self):
        self.make("far", "repair")
        (self.root / "runs" / "far-02" / "artifact" / "review.md").unlink()
        proc = subprocess.run([sys.executable, str(self.root / "verify_loop.py"), "far"], cwd=self.root / "loop-runs",
                              capture_output=True, text=True, encoding="utf-8", timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(" ../runs/far-02 ", proc.stderr)
        self.assertTrue(proc.stderr.startswith("far：fail"), proc.stderr)

    def test_not_a_loop_folder_exits_2(self):
        for args in (("runs/r-01",), ("loop-runs",), ("loop-runs/nothing-here",), ("loop-runs/r", "samples"), ()):
            with self.subTest(args=args):
                code, stdout, stderr = self.run_cli("verify_loop.py", *args)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn("参数", stderr)
                self.assertNoTraceback(stderr)

    def test_help_lists_the_exit_codes(self):
        code, stdout, stderr = self.run_cli("verify_loop.py", "--help")
        self.assertEqual(code, 0)
        for text in ("0 每个循环都通过", "1 有循环 fail 或 needs_human", "2 参数错误"):
            self.assertIn(text, " ".join(stdout.split()))  # argparse wraps long lines anywhere

    def test_imports_nothing_it_verifies(self):
        # nothing the verifiers reach by import, however deep (verifier/, classroom/ included), is what they check
        reached = verifier_files()
        self.assertIn("classroom/check.py", reached)
        self.assertEqual([rel for rel in reached if rel in ("loop_lab.py", "harness.py", "export_review.py")
                          or rel.startswith("machinery/")], [])
        self.assertIn("None of them imports loop_lab.py, harness.py, export_review.py or the loop's machinery/",
                      " ".join(verify_loop.__doc__.split()))
        # with every import of the checked programs made to fail, the verifier still judges a real run
        driver = ("import runpy, sys; "
                  "sys.modules.update(loop_lab=None, harness=None, export_review=None, machinery=None); "
                  "sys.argv = ['verify_loop.py', 'loop-runs/r']; runpy.run_path('verify_loop.py', run_name='__main__')")
        proc = subprocess.run([sys.executable, "-c", driver], cwd=self.root, capture_output=True, text=True,
                              encoding="utf-8", env=dict(os.environ, PYTHONIOENCODING="utf-8"))
        self.assertEqual((proc.returncode, proc.stdout), (0, PASS_LINE), proc.stderr)


class ReferenceTest(VerifyTestCase):
    def test_one_check_reads_each_course_file_of_its_children_once(self):
        workspaces = {}  # as one verify_loop call over several folders shares them
        with mock.patch.object(verify_harness, "content_sha256", wraps=verify_harness.content_sha256) as read:
            for name in ("r", "s", "b"):  # five children between them
                self.assertEqual(checked_loop(self.root / "loop-runs" / name, workspaces).result()["result"], "pass")
        self.assertEqual(sorted(call.args[0].relative_to(self.root).as_posix() for call in read.call_args_list),
                         sorted(documented_list()))


class BudgetAndChildTest(VerifyTestCase):
    """The two verifier-side behaviours that had no test (each guards one line of verify_loop.py)."""

    def test_unexpected_error_with_more_attempts_than_its_budget(self):
        handoff = {"stopped_at": "第 2 次尝试之后", "done": [], "decide": "请按 error_type 核对子运行，再决定。",
                   "inspect": ["loop-runs/s/loop.json", "runs/s-01/run.json", "runs/s-02/run.json"]}
        one_attempt = {"max_attempts": 1, "max_seconds": 30, "attempt_timeout": None}
        self.forge("s", lambda rec: rec.update(status="needs_human", reason="unexpected_error", handoff=handoff,
                                               error_type="EvidenceMismatch", budget=one_attempt))
        verdict = self.assertFails("s", "too_many_attempts")
        self.assertEqual(fields_of(verdict, "too_many_attempts"), {"count": 2, "most": 1})

    def test_an_unexpected_stop_is_explained_in_chinese_with_its_error_type(self):
        handoff = {"stopped_at": "第 2 次尝试之后", "done": [], "decide": "请按 error_type 核对子运行，再决定。",
                   "inspect": ["loop-runs/s/loop.json", "runs/s-01/run.json", "runs/s-02/run.json"]}
        def context_changed_after_attempt_2(rec):
            rec.update(status="needs_human", reason="unexpected_error", handoff=handoff, error_type="ContextChanged")
            rec["attempts"][1]["decision"].update(next="stop", reason="unexpected_error", why="上下文文件被改动。")
        with self.forged("s", context_changed_after_attempt_2):
            verdict = self.verdict("s")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(fields_of(verdict, "why_error"), {"error_type": "ContextChanged"})
        self.assertIn("上下文文件被改动", verdict["problems"][0])  # the gloss of its error type (cli.py's words)

    def test_attempt_pointing_at_another_loops_child(self):
        self.forge("r", lambda rec: rec["attempts"][0].update(child_run="runs/s-01"))
        verdict = self.assertFails("r", "attempt_numbering", "runs/s-01", "runs/r-01")
        self.assertEqual(fields_of(verdict, "attempt_entry"), {"number": 1})


class StrictRecordTest(VerifyTestCase):
    """Duplicate keys, links and impossible times: consistent edits a forger could make."""

    def edit_text(self, path, old, new):
        self.keep(path)
        text = path.read_text(encoding="utf-8")
        self.assertIn(old, text)
        path.write_bytes(text.replace(old, new, 1).encode("utf-8"))

    def link(self, target, link):
        try:
            os.symlink(target, link, target_is_directory=Path(target).is_dir())
        except (OSError, NotImplementedError) as exc:  # Windows without the privilege
            self.skipTest(f"这里不能创建符号链接：{exc}")

    def test_duplicate_key_in_loop_json_names_file_and_key(self):
        for old, new, key in (('"status": "stalled"', '"status": "needs_review",\n  "status": "stalled"', '"status"'),
                              ('"state": "done"', '"state": "running", "state": "done"', '"state"')):
            with self.subTest(key=key):
                self.edit_text(self.record_path("s"), old, new)
                verdict = self.assertFails("s", "record_duplicate_key", "loop-runs/s/loop.json")
                self.assertEqual(f'"{fields_of(verdict, "record_duplicate_key")["key"]}"', key)
                self.doCleanups()

    def test_duplicate_key_in_a_childs_run_json_or_cards_json(self):
        self.make("dup", "repair")
        self.edit_text(self.root / "runs" / "dup-01" / "run.json", '"status": "failed"',
                       '"status": "needs_review", "status": "failed"')
        self.assertFails("dup", "child_failed", "runs/dup-01/run.json", "status")
        self.make("dupc", "repair")
        self.edit_text(self.root / "runs" / "dupc-02" / "artifact" / "cards.json", '"title"', '"title": "x", "title"')
        self.assertFails("dupc", "child_failed", "cards.json", "title")

    def test_loop_folder_that_is_a_link_fails(self):
        self.link(self.root / "loop-runs" / "r", self.root / "loop-runs" / "linked")
        self.addCleanup(os.unlink, self.root / "loop-runs" / "linked")
        self.assertFails("linked", "loop_link", "loop-runs/linked")

    def test_loop_json_or_evidence_file_that_is_a_link_fails(self):
        self.make("lj", "repair")
        kept = self.root / "kept-elsewhere"
        kept.mkdir()
        record = self.record_path("lj")
        shutil.move(record, kept / "loop.json")
        self.link(kept / "loop.json", record)
        self.assertFails("lj", "record_link", "loop-runs/lj/loop.json")
        self.make("ev", "repair")
        review = self.root / "runs" / "ev-02" / "artifact" / "review.md"
        shutil.move(review, kept / "review.md")
        self.link(kept / "review.md", review)
        self.assertFails("ev", "child_failed", "runs/ev-02/artifact/review.md 是符号链接")  # the harness's words

    def test_runs_folder_that_is_a_link_fails(self):
        student = self.root / "student"
        shutil.copytree(self.root / "loop-runs" / "r", student / "loop-runs" / "r")
        self.link(self.root / "runs", student / "runs")
        verdict = verify_loop.verify_loop(student / "loop-runs" / "r", course=loop_records.CourseFiles(self.root))
        self.assertEqual(verdict["result"], "fail")
        assert_found(self, verdict, "evidence_folder_link", "student/runs")

    def test_loop_that_finished_years_before_its_children(self):
        # the loop's start and finish readings moved together: one step explains neither, since the children lie between
        def moved(rec):
            rec.update(started_at="2020-01-01T00:00:00Z", finished_at="2020-01-01T00:00:01Z")
            rec["segments"][0].update(started_at="2020-01-01T00:00:00Z", wall_minus_monotonic=1577836800.25)
        self.forge("r", moved)
        verdict = self.assertFails("r", "clock_breaks", "1577836800.25", "2020-01-01T00:00:01Z")
        self.assertIn(("segments[0]", "wall_minus_monotonic"), times_said(verdict))
        self.assertIn(("loop.json", "finished_at"), times_said(verdict))

    def test_child_that_finishes_before_it_starts(self):
        self.make("rev", "repair")
        path = self.root / "runs" / "rev-01" / "run.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        self.edit_text(path, f'"finished_at": "{record["finished_at"]}"', '"finished_at": "2020-01-01T00:00:00Z"')
        verdict = self.assertFails("rev", "clock_breaks", "2020-01-01T00:00:00Z")
        self.assertIn(("runs/rev-01/run.json", "finished_at"), times_said(verdict, relative=True))


class ClockTest(VerifyTestCase):
    """Budgets and order are judged on the monotonic offsets; a wall clock that one step explains (NTP, a
    suspended laptop) is for a person, naming the step and where; two steps, or an offset going back, fail."""
    START = 1767225600  # 2026-01-01T00:00:00Z
    HONEST = {"offsets": ((1.0, 2.0), (3.0, 4.0)), "elapsed": 4.5}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make("clk", "repair")

    def retime(self, offsets=HONEST["offsets"], elapsed=HONEST["elapsed"], step=lambda offset: 0):
        """The verdict on loop clk with every time of it and its children set: OFFSETS (start, finish) of each
        attempt, ELAPSED, and a wall clock reading START + offset + STEP(offset), in whole seconds."""
        def stamp(offset):
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.START + offset + step(offset)))

        def change(rec):
            rec.update(started_at=stamp(0), finished_at=stamp(elapsed), elapsed_seconds=elapsed)
            rec["segments"][0].update(started_at=stamp(0), wall_minus_monotonic=self.START + step(0),
                                      elapsed_seconds=elapsed)
            for entry, (started, finished) in zip(rec["attempts"], offsets):
                entry.update(started_at=stamp(started), finished_at=stamp(finished), started_offset=started,
                             finished_offset=finished)
                entry["decision"]["decided_offset"] = finished
        self.forge("clk", change)
        for number, (started, finished) in enumerate(offsets, 1):
            path = self.root / "runs" / f"clk-{number:02d}" / "run.json"
            self.keep(path)
            record = json.loads(path.read_text(encoding="utf-8"))
            record.update(started_at=stamp(started + 0.1), finished_at=stamp(finished - 0.1),
                          duration_seconds=round(finished - started - 0.2, 3))
            path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
        return self.verdict("clk")

    def assertVerdict(self, verdict, result, *expected):
        """VERDICT is RESULT; EXPECTED as for assertFails."""
        self.assertEqual(verdict["result"], result, verdict)
        assert_found(self, verdict, *expected)

    def assertStep(self, verdict, kind, between, seconds):
        """VERDICT needs a person for one step of its wall clock, of KIND, BETWEEN the two times named as
        times_said() names them (each with its recorded text), of about SECONDS."""
        self.assertVerdict(verdict, "needs_human", kind)
        step = fields_of(verdict, kind)
        said = [(times_said(step["where"].fields[end])[0], step["where"].fields[end].fields["text"])
                for end in ("first", "second")]
        self.assertEqual(said, list(between))
        self.assertAlmostEqual(step["seconds"], seconds, delta=2)
        return step

    def test_honest_clocks_pass_within_the_precision_of_wall_times(self):
        self.assertVerdict(self.retime(), "pass")
        self.assertVerdict(self.retime(step=lambda offset: -1.9 if 1 < offset < 4 else 0), "pass")

    def test_one_step_between_attempts_is_for_a_person_naming_it(self):
        for seconds in (-5, 5, -3600, 3600):
            with self.subTest(seconds=seconds):
                verdict = self.retime(step=lambda offset: seconds if offset > 2.5 else 0)
                between = (((1, "finished_at"), "2026-01-01T00:00:02Z"),
                           ((2, "started_at"), time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                             time.gmtime(self.START + 3 + seconds))))
                self.assertStep(verdict, "clock_set_back" if seconds < 0 else "clock_slept", between, abs(seconds))
                self.doCleanups()

    def test_a_suspended_laptop_names_the_little_time_the_monotonic_clock_went(self):
        # the lid closed for an hour between the attempts: the monotonic clock stood still, the wall clock ran on
        verdict = self.retime(offsets=((1.0, 2.0), (2.2, 3.0)), elapsed=3.2,
                              step=lambda offset: 3600 if offset > 2.1 else 0)
        step = self.assertStep(verdict, "clock_slept", (((1, "finished_at"), "2026-01-01T00:00:02Z"),
                                                        ((2, "started_at"), "2026-01-01T01:00:02Z")), 3600)
        self.assertAlmostEqual(step["gap"], 0.2, places=3)

    def test_a_loop_start_moved_by_years_is_one_step(self):
        verdict = self.retime(step=lambda offset: -10 ** 8 if offset == 0 else 0)
        self.assertVerdict(verdict, "needs_human", "clock_slept")
        step = fields_of(verdict, "clock_slept")
        self.assertEqual(times_said(step["where"].fields["first"])[0], ("segments[0]", "wall_minus_monotonic"))
        self.assertGreater(step["seconds"], 2 * 86400)  # said in days

    def test_two_steps_no_honest_clock_makes_fail(self):
        for step in (lambda offset: -5 if 2.5 < offset < 3.5 else 0,  # back, then forward again
                     lambda offset: 5 if 1.5 < offset < 2.5 else 0):  # the end of attempt 1 ahead of what follows
            with self.subTest(step=step):
                self.assertVerdict(self.retime(step=step), "fail", "clock_breaks")
                self.doCleanups()

    def test_an_elapsed_seconds_one_step_explains_is_for_a_person(self):
        self.assertStep(self.retime(step=lambda offset: 250 if offset == 4.5 else 0), "clock_slept",
                        (((2, "finished_at"), "2026-01-01T00:00:04Z"),
                         (("loop.json", "finished_at"), "2026-01-01T00:04:14Z")), 250)

    def test_offsets_no_monotonic_clock_makes_fail(self):
        past = "started_past_budget"
        cases = ((((1.0, 2.0), (31.0, 32.0)), 32.5, past, {"number": 2, "offset": 31.0, "budget": 30}, []),
                 (((1.0, 2.0), (30.0, 32.0)), 32.5, past, {"number": 2, "offset": 30.0, "budget": 30}, []),
                 (((1.0, 2.0), (1.5, 4.0)), 4.5, "reading_backwards", {"value": 1.5, "before": 2.0},
                  [(2, "started_offset"), (1, "decision.decided_offset")]),
                 (((1.0, 0.5), (3.0, 4.0)), 4.5, "reading_backwards", {"value": 0.5, "before": 1.0},
                  [(1, "finished_offset"), (1, "started_offset")]),
                 (((1.0, 2.0), (3.0, 4.0)), 3.5, "reading_backwards", {"value": 3.5, "before": 4.0},
                  [(2, "decision.decided_offset")]))
        for offsets, elapsed, kind, fields, readings in cases:
            with self.subTest(kind=kind, fields=fields):
                verdict = self.retime(offsets, elapsed, step=lambda offset: 0)
                self.assertVerdict(verdict, "fail", kind)
                found = fields_of(verdict, kind)
                self.assertEqual({field: found[field] for field in fields}, fields)
                self.assertEqual(times_said(found.get("later")) + times_said(found.get("earlier")), readings)
                self.doCleanups()

    def test_a_time_budget_stop_the_readings_do_not_support(self):
        # 0 attempts under max_seconds 5, the judged reading 4 s: the budget was not spent
        with self.forged("t", lambda rec: (rec["budget"].update(max_seconds=5), rec.update(elapsed_seconds=4))):
            verdict = self.verdict("t")
        self.assertVerdict(verdict, "fail", "stop_unsupported")

    def test_a_running_record_is_checked_as_far_as_it_goes(self):
        def started_years_later(rec):
            cut_off(rec)
            rec.update(started_at="2099-01-01T00:00:00Z")
        self.forge("r", started_years_later)
        verdict = self.verdict("r")
        self.assertVerdict(verdict, "needs_human", "clock_set_back", "why_running", "2099-01-01T00:00:00Z")
        self.assertEqual(times_said(fields_of(verdict, "clock_set_back")["where"].fields["first"]),
                         [("loop.json", "started_at")])



class BudgetCheckGapTest(VerifyTestCase):
    """A time budget spent mid-loop is read where the loop checked it: just after the last attempt ended."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make("gap", "slow", max_seconds=0.05, tool_seconds=0.1)

    def test_a_budget_checked_long_after_the_last_attempt_needs_a_person(self):
        self.assertEqual(self.verdict("gap")["result"], "pass")

        def later(rec):  # elapsed_seconds and the finish time moved on together: the wall clock agrees
            finished = time.strptime(rec["finished_at"], "%Y-%m-%dT%H:%M:%SZ")
            rec["segments"][0]["elapsed_seconds"] += 30
            rec.update(elapsed_seconds=rec["elapsed_seconds"] + 30,
                       finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(calendar.timegm(finished) + 30)))
        self.forge("gap", later)
        verdict = self.verdict("gap")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(fields_of(fields_of(verdict, "pause")["where"], "moment_decided"), {"number": 1})
        self.assertEqual(kinds_in(verdict)[:2], ["pause", "pause_between"])


    def test_a_reading_no_honest_loop_reaches_fails_by_name(self):
        with self.forged("gap", lambda rec: rec.update(elapsed_seconds=1e308)):
            self.assertFails("gap", "elapsed_wrong", "1e+308")
        with self.forged("gap", lambda rec: rec["attempts"][0].update(finished_offset=1e300)):
            self.assertFails("gap", "attempt_finish_wrong", "1e+300")

class WallClockScaleTest(unittest.TestCase):
    """Finding the one step of a wall clock reads each time a few times, not once per possible step."""

    def test_the_step_is_found_in_linear_time(self):
        from verifier import clocks as loop_clock
        reads = []

        class Counted(loop_clock.Event):
            @property
            def wall(self):
                reads.append(1)
                return self._wall

            @wall.setter
            def wall(self, value):
                self._wall = value
        events = [Counted(str(k), "2026-01-01T00:00:00Z", k / 1000, k / 1000) for k in range(3000)]
        for k, event in enumerate(events):
            event.wall = 1767225600 + k / 1000 + (3600 if k >= 1000 else 0) + (3600 if k >= 2000 else 0)
        reads.clear()
        self.assertEqual(loop_clock.wall_clock_finding(events).kind, "clock_breaks")
        self.assertLess(len(reads), 20 * len(events))

class MissingRecordTest(VerifyTestCase):
    def test_folder_without_loop_json_needs_a_person(self):
        (self.root / "loop-runs" / "ghost").mkdir()
        verdict = self.verdict("ghost")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(kinds_in(verdict), ["record_missing"])

    def test_an_empty_or_cut_record_is_never_honest(self):
        # the loop flushes a record to disk before it renames it into place: no crash leaves one empty or cut
        cut_in_a_character = '{"run": "中'.encode("utf-8")[:-1]
        for name, content, said in (("half", b'{"schema": "loop-run/2", "ru', "在结尾处中断"), ("empty", b"", "是空的"),
                                    ("blank", b" \n", "是空的"), ("cut-char", cut_in_a_character, "在结尾处中断")):
            with self.subTest(name=name):
                (self.root / "loop-runs" / name).mkdir()
                self.record_path(name).write_bytes(content)
                self.assertFails(name, "record_cut", f"loop-runs/{name}/loop.json", said)  # cli.py's words

    def test_missing_record_with_child_runs_fails(self):
        self.make("lost", "repair")
        self.record_path("lost").unlink()
        self.assertFails("lost", "record_lost", "loop-runs/lost/loop.json", "runs/lost-01")

    def test_killed_loop_never_cites_a_missing_handoff(self):
        self.make("killed", "repair")
        shutil.rmtree(self.root / "runs" / "killed-02")
        self.forge("killed", cut_off)
        verdict = self.verdict("killed")
        text = " ".join(verdict["problems"])
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertNotIn("handoff_guide", kinds_in(verdict), text)
        self.assertTrue(fields_of(verdict, "child_absent")["child"].endswith("runs/killed-02"), verdict)
        assert_found(self, verdict, "attempt_unfinished_no_child")

    def test_interrupted_or_terminated_loop_cites_its_handoff(self):
        for reason, why in (("keyboard_interrupt", "why_interrupted"), ("terminated", "why_terminated")):
            handoff = {"stopped_at": "第 2 次尝试完成之后", "done": [], "decide": "核对已记录的尝试后，用新名称重新运行。",
                       "inspect": ["loop-runs/r/loop.json", "runs/r-01/run.json", "runs/r-02/run.json"]}
            with self.subTest(reason=reason), self.forged("r", lambda rec: rec.update(
                    status="interrupted", reason=reason, handoff=handoff)):
                verdict = self.verdict("r")
                self.assertEqual(verdict["result"], "needs_human", verdict)
                self.assertEqual(kinds_in(verdict["findings"][0])[:3], ["undecided", why, "handoff_guide"])


class NameCaseTest(VerifyTestCase):
    """Names are one name whatever their case, as loop_lab claims them."""

    def test_child_in_another_case_is_still_this_loops_child(self):
        self.make("Demo", "repair")
        (self.root / "runs" / "demo-03").mkdir()
        self.assertFails("Demo", "run_unrecorded", "runs/demo-03")

    def test_two_loop_folders_differing_only_in_case(self):
        self.make("Twin", "repair")
        try:
            (self.root / "loop-runs" / "twin").mkdir()
        except FileExistsError:
            self.skipTest("这个文件系统不区分大小写")
        self.assertFails("Twin", "loop_twins", "loop-runs/Twin", "loop-runs/twin")

    def test_child_folder_renamed_to_another_case(self):
        self.make("cs", "repair")
        os.rename(self.root / "runs" / "cs-01", self.root / "runs" / "CS-01")
        self.assertFails("cs", "child_other_case", "runs/cs-01", "runs/CS-01")



class ExactRecordTest(VerifyTestCase):
    """Records hold only what json.dumps writes, in the ranges a loop records; people see each folder's own name."""

    def test_nan_or_infinity_anywhere_in_loop_json_fails(self):
        for constant in ("NaN", "Infinity", "-Infinity"):
            with self.subTest(constant=constant):
                path = self.record_path("r")
                self.keep(path)
                text = path.read_text(encoding="utf-8")
                path.write_bytes(text.replace('{\n  "schema"', f'{{\n  "note": {constant},\n  "schema"', 1)
                                 .encode("utf-8"))
                verdict = self.assertFails("r", "record_not_json", "loop-runs/r/loop.json", constant)
                self.assertEqual(len(verdict["problems"]), 1)
                self.doCleanups()

    def test_a_number_too_large_for_a_float_is_a_field_problem(self):
        for kind, change in (("budget_wrong", lambda rec: rec["budget"].update(max_seconds=10 ** 400)),
                             ("elapsed_wrong", lambda rec: rec.update(elapsed_seconds=10 ** 400))):
            with self.subTest(kind=kind), self.forged("r", change):
                verdict = self.assertFails("r", kind)
                self.assertIn("1000000", " ".join(verdict["problems"]))  # shown as a number, cut, never raised

    def test_a_child_without_a_readable_run_json_is_said_in_chinese(self):
        self.make("norec", "repair")
        (self.root / "runs" / "norec-02" / "run.json").unlink()
        self.forge("norec", cut_off)
        verdict = self.verdict("norec")
        # the harness claims runs/NAME with its first record inside: a child folder without one was emptied by hand
        self.assertEqual(verdict["result"], "fail", verdict)
        self.assertEqual([finding.kind for finding in verdict["findings"][:2]],
                         ["unfinished_child_failed", "attempt_unfinished"])
        self.assertIn("runs/norec-02/run.json 不存在", verdict["problems"][0])  # the harness's words
        self.assertEqual(fields_of(verdict["findings"][1], "child_state_none"), {})
        self.assertNotIn("None", " ".join(verdict["problems"]))

    def test_a_run_named_like_a_child_begun_after_the_loop_ended_needs_a_person(self):
        # e.g. `harness.py --run after-03` once loop `after` had finished: not a hidden attempt of that loop
        self.make("after", "repair")
        finished = loop_records.moment(json.loads(self.record_path("after").read_text(encoding="utf-8"))["finished_at"])
        for offset, result in ((2, "fail"), (3, "needs_human")):  # 1 s precision + 1 s tolerance
            with self.subTest(offset=offset):
                late = self.root / "runs" / "after-03"
                shutil.copytree(self.root / "runs" / "after-02", late)
                self.addCleanup(shutil.rmtree, late)
                record = json.loads((late / "run.json").read_text(encoding="utf-8"))
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(finished + offset))
                record.update(run="after-03", started_at=stamp, finished_at=stamp)
                (late / "run.json").write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
                verdict = self.verdict("after")
                self.assertEqual(verdict["result"], result, verdict)
                self.assertTrue(verdict["findings"][0].fields["run"].endswith("runs/after-03"), verdict)
                self.assertEqual(verdict["findings"][0].kind,
                                 "run_unrecorded" if result == "fail" else "run_after_loop")
                self.doCleanups()

    def test_a_name_that_could_fake_a_line_is_shown_escaped(self):
        try:
            (self.root / "loop-runs" / "x\n  - pass").mkdir()
        except OSError as exc:  # Windows refuses such names
            self.skipTest(f"这里不能创建这个文件夹：{exc}")
        self.addCleanup(shutil.rmtree, self.root / "loop-runs" / "x\n  - pass")
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = verify_loop.main([str(self.root / "loop-runs" / "x\n  - pass")])
        self.assertEqual(code, 1)
        self.assertIn("x\\n  - pass：needs_human", err.getvalue())
        self.assertNotIn("\n  - pass", err.getvalue().replace("x\\n  - pass", ""))

    def test_a_folder_typed_in_another_case_is_checked_by_its_own_name(self):
        # Windows and macOS open loop-runs/R for loop-runs/r; on this file system the opening is simulated
        typed = self.root / "loop-runs" / "R"
        real_isdir = os.path.isdir
        opens = lambda path: os.fspath(path) == os.fspath(typed) or real_isdir(path)  # noqa: E731
        out = io.StringIO()
        with mock.patch("os.path.isdir", side_effect=opens), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(io.StringIO()):
            code = verify_loop.main([str(typed)])
        self.assertEqual((code, json.loads(out.getvalue())["result"]), (0, "pass"))

    def test_fields_a_loop_writes_as_null_or_text_must_be_so(self):
        cases = (("error_type", lambda rec: rec.update(error_type=False), "error_type_wrong"),
                 ("error_type", lambda rec: rec.update(error_type=[]), "error_type_wrong"),
                 ("inspect", lambda rec: rec["handoff"]["inspect"].append({}), "handoff_wrong"),
                 ("done", lambda rec: rec["handoff"]["done"].append(1), "handoff_wrong"))
        for field, change, kind in cases:
            with self.subTest(field=field, kind=kind), self.forged("p", change):
                self.assertFails("p", kind)  # said by the field's own check, not by the safety net

    def test_a_child_with_a_list_for_its_sample_fails_by_its_checks(self):
        path = self.root / "runs" / "s-02" / "run.json"
        self.keep(path)
        record = json.loads(path.read_text(encoding="utf-8"))
        record["sample"] = ["bad-quote"]
        path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
        self.assertFails("s", "child_failed", "run.json 的 sample ['bad-quote'] 不是已知样例")  # the harness's words


@not_on_windows("没有命名管道（FIFO）和间隔定时器（setitimer）")
class SpecialFileTest(VerifyTestCase):
    """A FIFO or a device where a loop's evidence belongs (as `tar x` makes them) is named and never opened."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make("h", "repair")

    def put_special(self, rel, kind):
        """Puts a FIFO or a character device (/dev/null's numbers: harmless if opened) at REL; what was there
        comes back after the test."""
        path = self.root / rel
        aside = path.with_name(path.name + ".kept")
        os.rename(path, aside)
        self.addCleanup(os.rename, aside, path)
        try:
            if kind == "fifo":
                os.mkfifo(path)
            else:
                os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except (PermissionError, AttributeError) as exc:  # making a device needs privileges few users have
            self.skipTest(f"这里不能创建 {kind}：{exc}")
        self.addCleanup(os.unlink, path)

    def test_a_fifo_or_a_device_at_every_loop_evidence_path(self):
        # the kind of finding, and the entry's kind as cli.entry_kind says it (the children's: verify_harness's words)
        cases = (("loop-runs/h/loop.json", "record_not_plain"), ("loop-runs/h", "loop_not_folder"),
                 ("runs/h-01", "child_failed"), ("runs/h-02/run.json", "child_failed"),
                 ("runs", "evidence_folder_not_folder"))
        for kind, said in (("fifo", "命名管道（FIFO）"), ("device", "字符设备")):
            for rel, finding in cases:
                with self.subTest(kind=kind, rel=rel):
                    self.put_special(rel, kind)
                    with fails_instead_of_hanging(self):
                        self.assertFails("h", finding, rel, said)
                    self.doCleanups()

    def test_a_socket_or_a_folder_where_loop_json_belongs(self):
        import socket
        path = self.record_path("h")
        self.keep(path)
        path.unlink()
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
        with fails_instead_of_hanging(self):
            self.assertFails("h", "record_not_plain", "loop-runs/h/loop.json", "套接字")
        path.unlink()
        path.mkdir()
        self.addCleanup(path.rmdir)
        self.assertFails("h", "record_not_plain", "loop-runs/h/loop.json", "文件夹")

    def test_a_record_linked_to_dev_zero_is_never_read(self):
        # a separate process with 1 GiB of address space and a time limit: a reader that followed the link
        # would fill memory (the issue saw 24 GB) instead of failing this test
        skip_on_windows(self, "没有 resource 模块：限制不了子进程的内存")
        import resource
        self.make("z", "repair")
        for rel in ("loop-runs/h/loop.json", "runs/z-01/run.json"):
            self.keep(self.root / rel)
            (self.root / rel).unlink()
            os.symlink("/dev/zero", self.root / rel)
            self.addCleanup(os.unlink, self.root / rel)
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # noqa: E731
        proc = subprocess.run([sys.executable, "verify_loop.py", "loop-runs/h", "loop-runs/z"], cwd=self.root,
                              timeout=30, capture_output=True, text=True, encoding="utf-8", preexec_fn=limit,
                              env=dict(os.environ, PYTHONIOENCODING="utf-8"))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertTrue(lines[0]["problems"][0].startswith("loop-runs/h/loop.json "), lines[0])  # its own folder's
        self.assertIn("runs/z-01/run.json 是符号链接", " ".join(lines[1]["problems"]))  # the harness's words
        self.assertNoTraceback(proc.stderr)


class RecordBytesTest(VerifyTestCase):
    """A loop.json that is no record fails naming the file; one a transport changed as a whole passes with a note."""

    def put(self, name, data):
        self.keep(self.record_path(name))
        self.record_path(name).write_bytes(data)

    def test_a_top_level_that_is_not_an_object_fails_naming_the_file(self):
        record = self.record_path("r").read_bytes()
        # the kind, and the JSON type as verify_harness.json_kind says it, or cli.py's words for an unreadable file
        for data, kind, said in ((b"null", "record_not_object", " null"), (b"[]", "record_not_object", "数组"),
                                 (b'"x"', "record_not_object", "字符串"), (b"3", "record_not_object", "数字"),
                                 (b"true", "record_not_object", " true"), (b"", "record_cut", "是空的"),
                                 (record.decode("utf-8").encode("utf-16"), "record_not_json", "不是 UTF-8 文本")):
            with self.subTest(data=data[:8]):
                self.put("r", data)
                self.assertFails("r", kind, "loop-runs/r/loop.json", said)
                self.doCleanups()

    def test_a_record_over_its_cap_is_not_read_past_it(self):
        record = self.record_path("r").read_bytes()
        self.put("r", record[:-2] + b" " * loop_records.RECORD_CAP + b"}\n")
        verdict = self.assertFails("r", "record_too_large", "loop-runs/r/loop.json")
        self.assertEqual(fields_of(verdict, "record_too_large")["mib"], 1)

    def test_line_ends_converted_wholesale_or_a_bom_pass_with_a_note(self):
        record = self.record_path("r").read_bytes()
        for data, said in ((record.replace(b"\n", b"\r\n"), "行尾被转换过（CRLF）"), (b"\xef\xbb\xbf" + record, "BOM"),
                           (b"\xef\xbb\xbf" + record.replace(b"\n", b"\r\n"), "行尾被转换过（CRLF）")):
            with self.subTest(said=said):
                self.put("r", data)
                verdict = self.verdict("r")
                self.assertEqual((verdict["result"], verdict["problems"]), ("pass", []))
                self.assertLessEqual(set(kinds_in(verdict["remarks"])), {"transport", "transport_at"})
                self.assertIn(said, " ".join(verdict["notes"]))  # verify_harness's words for a transport's change
                self.assertIn("loop-runs/r/loop.json", " ".join(verdict["notes"]))
                self.doCleanups()

    def test_line_ends_changed_in_part_are_an_edit(self):
        record = self.record_path("r").read_bytes()
        for data in (record.replace(b"\n", b"\r\n", 3), record.replace(b"\n", b"\r", 1)):
            with self.subTest(data=data[:40]):
                self.put("r", data)
                self.assertFails("r", "record_not_json", "loop-runs/r/loop.json")
                self.assertEqual(verdict_error(self.verdict("r")), findings.said("mixed_line_ends"))
                self.doCleanups()

    def test_every_record_of_a_loop_converted_to_crlf_passes_with_notes(self):
        # as git with core.autocrlf=true leaves a clone on Windows: every text file of the evidence in CRLF
        self.make("crlf", "repair")
        files = [self.record_path("crlf")] + [path for child in ("crlf-01", "crlf-02")
                                              for path in (self.root / "runs" / child).rglob("*") if path.is_file()]
        for path in files:
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        verdict = self.verdict("crlf")
        self.assertEqual((verdict["result"], verdict["problems"]), ("pass", []))
        self.assertIn("transport_at", kinds_in(verdict["remarks"]))
        self.assertIn("行尾被转换过（CRLF）", " ".join(verdict["notes"]))  # verify_harness's words
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = verify_loop.main([str(self.root / "loop-runs" / "crlf")])
        self.assertEqual((code, json.loads(out.getvalue())["result"]), (0, "pass"))
        self.assertIn("说明：", err.getvalue())


    def test_the_record_id_is_32_lowercase_hex(self):
        for value in ("ABCDEF0123456789ABCDEF0123456789", "0" * 31, 7, None):
            with self.subTest(value=value), self.forged("r", lambda rec: rec.update(id=value)):
                self.assertFails("r", "id_wrong")

    def test_an_unreadable_record_or_runs_folder_says_unreadable_not_missing(self):
        real_read = loop_records.read_evidence

        def refused(path, cap):
            if Path(path).name == "loop.json":
                raise PermissionError(13, "Permission denied", str(path))
            return real_read(path, cap)
        with mock.patch.object(loop_records, "read_evidence", refused):
            verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual((verdict["findings"][0].kind, verdict["findings"][0].fields["error_type"]),
                         ("record_unreadable", "PermissionError"))
        self.assertTrue(verdict["findings"][0].fields["record"].endswith("loop-runs/r/loop.json"), verdict)
        real_listing = loop_records.listing
        unlisted = lambda folder: ({}, PermissionError(13, "Permission denied")) if folder.name == "runs" \
            else real_listing(folder)  # noqa: E731
        with mock.patch.object(loop_records, "listing", unlisted):
            verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(fields_of(verdict, "children_unlistable")["error_type"], "PermissionError")
        self.assertNotIn("child_deleted", kinds_in(verdict))

    def test_a_file_where_runs_belongs_leaves_the_children_missing_not_unknown(self):
        # runs/ that is a file holds no child: the recorded ones are gone (fail), not unlistable (a person's)
        runs = self.root / "runs"
        os.rename(runs, runs.with_name("runs.kept"))
        self.addCleanup(os.rename, runs.with_name("runs.kept"), runs)
        runs.write_bytes(b"")
        self.addCleanup(runs.unlink)
        verdict = self.assertFails("r", "evidence_folder_not_folder", "child_deleted")
        self.assertNotIn("children_unlistable", kinds_in(verdict))


class GuardTest(VerifyTestCase):
    """The lesson's central promises, each guarding a line a careless edit could break unnoticed."""

    def test_a_child_that_claims_needs_review_but_fails_its_check_is_never_accepted(self):
        """Guards loop_lab.OuterLoop.decide's first test (`if verdict["result"] == "fail": return
        self.evidence_mismatch(...)`, before the child's own status is read) and loop_check's
        check_child_verdict (`self.verdict.fail(message)` for a child failing its independent check)."""
        def tampered_child(root, name, sample):
            child = harness.run_harness(root, name, sample)
            review = Path(root) / "runs" / name / "artifact" / "review.md"
            if review.exists():  # the valid export: its artifact changed after the child recorded needs_review
                review.write_bytes(review.read_bytes() + "多一句。\n".encode("utf-8"))
            return child
        record = self.make("claim", "repair", run_child=tampered_child)
        # loop_lab's decision judges the independent check before the child's own status
        self.assertEqual((record["status"], record["reason"], record["error_type"]),
                         ("needs_human", "unexpected_error", "EvidenceMismatch"))
        self.assertEqual(record["attempts"][-1]["status"], "needs_review")
        verdict = self.verdict("claim")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertIn("child_failed_at_stop", kinds_in(verdict))

        def trust_the_child(rec):
            rec.update(status="needs_review", reason="mechanical_pass", error_type=None, handoff=None)
            rec["attempts"][-1]["decision"].update(next="stop", reason="mechanical_pass", why="子运行机械通过。")
        self.forge("claim", trust_the_child)
        self.assertFails("claim", "child_failed", "runs/claim-02", "review.md")

    def test_the_stall_rule_compares_the_candidate_not_only_the_error(self):
        """Guards loop_records.child_view's `"key": repr((sample, sha256, feedback))` (the verifier's stall key)
        and loop_lab.same_failure's `earlier["candidate"] == attempt["candidate"]`."""
        # valid.json made to fail with bad-quote's very error: attempt 2 is another candidate with the same error,
        # no stall; the time budget is then spent (40 s by both clocks in attempt 2) before round 3
        valid = self.root / "samples" / "valid.json"
        self.keep(valid)
        bad = json.loads((self.root / "samples" / "bad-quote.json").read_text(encoding="utf-8"))
        valid.write_bytes(json.dumps(dict(bad, title=bad["title"] + "（另一份）"), ensure_ascii=False).encode("utf-8"))
        shift = []
        record = self.make("same-error", "repair", clock=lambda: time.monotonic() + sum(shift),
                           wall=lambda: time.time() + sum(shift),
                           run_child=lasting(40, shift, slow=lambda name: name.endswith("-02")))
        attempts = record["attempts"]
        self.assertEqual((record["status"], record["reason"], len(attempts)), ("budget_exhausted", "time_budget", 2))
        self.assertEqual(attempts[0]["feedback"], attempts[1]["feedback"])
        self.assertNotEqual(attempts[0]["candidate"], attempts[1]["candidate"])
        verdict = self.verdict("same-error")
        self.assertEqual((verdict["result"], verdict["problems"]), ("pass", []))

    def test_an_attempt_other_than_the_last_left_running_fails(self):
        """Guards loop_records.attempt_problem's `"running": last and status == "running"`."""
        def first_still_running(rec):
            rec.update(status="running", reason=None, handoff=None, finished_at=None)
            rec["attempts"][0].update(state="running", status=None, feedback=None, finished_at=None,
                                      finished_offset=None, decision=None)
        self.forge("r", first_still_running)
        verdict = self.assertFails("r", "state_wrong")
        self.assertEqual(fields_of(verdict, "state_wrong")["value"], "running")
        self.assertEqual(fields_of(verdict, "attempt_entry"), {"number": 1})

    def test_a_loop_that_carried_on_after_a_child_needs_human_is_flagged(self):
        """Guards loop_check.child_stops' `stops.append(("needs_human", "unexpected_error"))` and
        check_outcome's `if stop and number < count`."""
        self.make("on", "repair")
        child = self.root / "runs" / "on-01" / "run.json"
        run = json.loads(child.read_text(encoding="utf-8"))
        error = {"type": "OSError", "message": "磁盘已满。"}
        run.update(status="needs_human", error=error, steps=[{"name": "export", "ok": False, "error_type": "OSError",
                                                               "message": "磁盘已满。"}])
        child.write_bytes(json.dumps(run, ensure_ascii=False, indent=2).encode("utf-8"))
        self.forge("on", lambda rec: rec["attempts"][0].update(
            status="needs_human", feedback={"error_type": "OSError", "message": "磁盘已满。"}))
        verdict = self.assertFails("on", "went_on")
        self.assertEqual(fields_of(verdict, "went_on"),
                         {"number": 1, "stop": "needs_human/unexpected_error", "next": 2})



def as_old_record(rec):
    """REC as an older workspace wrote it (loop-run/1): no id, no attempt_timeout, no times or decisions per attempt,
    and the older loop_lab.py that wrote it in its fingerprint."""
    as_v3_record(rec)
    rec["schema"] = "loop-run/1"
    del rec["id"], rec["budget"]["attempt_timeout"]
    for attempt in rec["attempts"]:
        for field in ("started_at", "finished_at", "started_offset", "finished_offset", "decision", "timeout"):
            del attempt[field]
    as_record_of_16_files(rec)
    rec["schema"] = "loop-run/1"


def fingerprint_of(entries):
    """The combined fingerprint as docs/loop/TASK.md defines it: sha256 of one `PATH<TAB>SHA256` line per file."""
    lines = "".join(f"{rel}\t{entries[rel]}\n" for rel in sorted(entries))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def as_v3_record(rec):
    """REC as the previous workspace wrote it (loop-run/3): no segments, no reading in its decisions, the older
    loop_lab.py that wrote it in its fingerprint of the 22 files (it could not resume: no machinery/resume.py)."""
    rec["schema"] = "loop-run/3"
    del rec["segments"]
    for attempt in rec["attempts"]:
        if attempt["decision"]:
            del attempt["decision"]["decided_offset"]
    entries = {rel: sha for rel, sha in rec["context"]["entries"].items() if rel != "machinery/resume.py"}
    entries["loop_lab.py"] = hashlib.sha256(b"# loop-run/3's loop_lab.py\n").hexdigest()
    rec["context"] = {"files": 22, "fingerprint": fingerprint_of(entries), "entries": entries}


def as_record_of_16_files(rec):
    """REC as the workspace before that wrote it (loop-run/2): loop-run/3's fields, its context the 16 files it
    watched then (docs/harness/TASK.md's 14, loop_lab.py and docs/loop/TASK.md), with the older loop_lab.py."""
    if "segments" in rec:
        as_v3_record(rec)
    rec["schema"] = "loop-run/2"
    entries = {rel: rec["context"]["entries"][rel] for rel in documented_list() + ["loop_lab.py", "docs/loop/TASK.md"]}
    entries["loop_lab.py"] = hashlib.sha256(b"# loop_lab.py as an older course shipped it\n").hexdigest()
    rec["context"] = {"files": 16, "fingerprint": fingerprint_of(entries), "entries": entries}


def stop_as_passed(rec):
    """A stuck loop's record edited to say it passed, its hand-off and last decision to match."""
    rec.update(status="needs_review", reason="mechanical_pass", handoff=None)
    if "decision" in rec["attempts"][-1]:
        rec["attempts"][-1]["decision"].update(next="stop", reason="mechanical_pass", why="独立核对通过，停止")


class OlderRecordTest(VerifyTestCase):
    """An older workspace's record is for a person, but calling a forged record old does not excuse it."""

    def make_old(self, name, change=None, children=True):
        """Loop NAME as an older workspace wrote it, with its children (harness-run/1) unless CHILDREN is false."""
        for child in sorted((self.root / "runs").glob(f"{name}-0*")) if children else []:
            path = child / "run.json"
            self.keep(path)
            run = json.loads(path.read_text(encoding="utf-8"))
            run["schema"] = "harness-run/1"
            del run["id"], run["duration_seconds"]
            path.write_bytes(json.dumps(run, ensure_ascii=False, indent=2).encode("utf-8"))
        self.forge(name, lambda rec: [as_old_record(rec), change and change(rec)])

    def test_a_record_of_an_older_workspace_needs_a_person(self):
        self.make_old("r")
        verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual([verdict["findings"][0].kind, *kinds_in(verdict["findings"][0].fields["lacks"])],
                         ["older_schema", "lacks_v1"])
        self.assertTrue(fields_of(verdict, "older_schema")["record"].endswith("loop-runs/r/loop.json"), verdict)

    def test_a_current_record_relabelled_old_fails(self):
        self.forge("s", lambda rec: [stop_as_passed(rec), rec.update(schema="loop-run/1")])
        self.assertFails("s", "old_fields", "loop-runs/s/loop.json", "loop-run/1", "id", "started_offset", "decision")

    def test_a_record_of_the_previous_watched_list_needs_a_person(self):
        self.forge("r", as_record_of_16_files)
        verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual([verdict["findings"][0].kind, *kinds_in(verdict["findings"][0].fields["lacks"])],
                         ["older_schema", "lacks_v2"])

    def test_a_record_of_the_previous_schema_needs_a_person(self):
        self.forge("r", as_v3_record)
        verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual([verdict["findings"][0].kind, *kinds_in(verdict["findings"][0].fields["lacks"])],
                         ["older_schema", "lacks_v3"])

    def test_a_current_record_relabelled_as_the_previous_schema_fails(self):
        self.forge("s", lambda rec: [stop_as_passed(rec), rec.update(schema="loop-run/3")])
        verdict = self.assertFails("s", "old_fields", "old_extra_fields", "loop-runs/s/loop.json")
        self.assertIn("segments", fields_of(verdict, "old_extra_fields")["fields"])

    def test_a_record_of_the_22_files_relabelled_as_one_of_16_fails(self):
        self.forge("s", lambda rec: [stop_as_passed(rec), as_v3_record(rec), rec.update(schema="loop-run/2")])
        verdict = self.assertFails("s", "old_context", "loop-runs/s/loop.json", "machinery/arguments.py")
        self.assertEqual(fields_of(verdict, "old_context")["count"], 16)

    def test_an_old_record_with_current_children_fails(self):
        self.make_old("s", stop_as_passed, children=False)
        verdict = self.assertFails("s", "old_child_schema", "runs/s-01/run.json")
        self.assertEqual(fields_of(verdict, "old_child_schema")["value"], "harness-run/2")

    def test_an_old_record_whose_children_contradict_its_stop_fails(self):
        self.make_old("s", stop_as_passed)
        self.assertFails("s", "stop_contradicted", "needs_review", "stalled/repeated_failure")
        self.make_old("r", lambda rec: rec["attempts"].reverse())
        verdict = self.assertFails("r", "went_on")
        self.assertEqual(fields_of(verdict, "went_on")["stop"], "needs_review/mechanical_pass")


class RecordStringsShownTest(VerifyTestCase):
    """What a record says is shown on one line, escaped and cut: it cannot fake a line or flood the output."""

    def test_a_long_error_type_with_line_separators_is_shown_escaped_and_cut(self):
        forged = 'E\u2028{"result": "pass"}\u202e' + "A" * 300_000
        self.forge("s", lambda rec: [rec.update(status="needs_human", reason="unexpected_error", error_type=forged),
                                     rec["attempts"][-1]["decision"].update(next="stop", reason="unexpected_error",
                                                                            why="意外停止")])
        verdict = self.verdict("s")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        text = " ".join(verdict["problems"])
        self.assertNotIn("\u2028", text)
        self.assertNotIn("\u202e", text)
        self.assertIn("\\u2028", text)
        self.assertLess(len(text), 5000)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            verify_loop.main([str(self.root / "loop-runs" / "s")])
        self.assertEqual(len(out.getvalue().splitlines()), 1)  # Python's line readers split at U+2028 too

    def test_a_reason_is_shown_escaped(self):
        self.forge("r", lambda rec: rec.update(reason="mechanical_pass\u2028"))
        self.assertNotIn("\u2028", " ".join(self.assertFails("r", "reason_wrong")["problems"]))


class UnknownFieldTest(VerifyTestCase):
    def test_a_field_no_loop_writes_fails(self):
        with self.forged("r", lambda rec: rec.update(result="pass")):
            self.assertUnknown(("loop.json",), ["result"])
        with self.forged("r", lambda rec: rec["attempts"][0].update(verified=True)):
            self.assertUnknown({"number": 1}, ["verified"])
        with self.forged("r", lambda rec: rec["budget"].update({"Max_seconds": 0})):
            self.assertUnknown(("loop.json",), ["budget.Max_seconds"])
        with self.forged("r", lambda rec: rec["attempts"][1]["decision"].update(checked_by="teacher")):
            self.assertUnknown({"number": 2}, ["decision.checked_by"])

    def assertUnknown(self, where, fields):
        """Loop r fails naming FIELDS as fields no loop writes, WHERE: ("loop.json",) or an attempt's fields."""
        found = fields_of(self.assertFails("r", "unknown_fields"), "unknown_fields")
        self.assertEqual(found["fields"], fields)
        self.assertEqual((found["where"],) if type(found["where"]) is str else found["where"].fields, where)

class ScaleTest(VerifyTestCase):
    """A workspace's listings are read and indexed once: checking N loops costs N, not N x (its runs)."""

    def test_each_run_name_is_parsed_once_per_workspace(self):
        for number in range(60):
            shutil.copytree(self.root / "loop-runs" / "p", self.root / "loop-runs" / f"q{number:02d}")
            (self.root / "runs" / f"q{number:02d}-01").mkdir()
            (self.root / "runs" / f"q{number:02d}-02").mkdir()
        real = loop_records.parent_loop
        calls = []
        counted = lambda name: calls.append(name) or real(name)  # noqa: E731
        with mock.patch.object(loop_records, "parent_loop", counted):
            workspaces = {}
            for number in range(60):
                verify_loop.verify_loop(self.root / "loop-runs" / f"q{number:02d}", workspaces)
        self.assertEqual(len(calls), len(os.listdir(self.root / "runs")))

    def test_the_command_line_lists_the_folder_of_its_loops_once(self):
        folders = [str(self.root / "loop-runs" / name) for name in ("r", "s", "b", "t", "m", "p")]
        real = verify_loop.names_in
        listed = []
        with mock.patch.object(verify_loop, "names_in", lambda folder: listed.append(folder) or real(folder)):
            self.assertEqual(len(verify_loop.loop_folders(None, folders)), 6)
        self.assertEqual(listed, [self.root / "loop-runs"])
