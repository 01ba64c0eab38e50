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
The tests are split by theme, each module importing its helpers from here: the command line in
tests/test_verify_loop_cli.py, clocks in tests/test_verify_loop_clocks.py, the files as they arrive in
tests/test_verify_loop_files.py, the strict reading of records in tests/test_verify_loop_records.py.
"""
import calendar
import contextlib
import hashlib
import io
import json
import os
import shutil
import time
from pathlib import Path
from unittest import mock

import cli
import harness
import loop_lab
from verifier import records as loop_records
import verify_harness
import verify_loop
from verifier.check import checked_loop
from tests.support import assert_found, fields_of, findings_in, kinds_in, values_in
from tests.test_loop_lab import SharedWorkspaceTestCase
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
