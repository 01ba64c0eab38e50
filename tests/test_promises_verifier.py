"""The loop verifier's promises that tests/mutation.py found unguarded: each test fails with its mutant applied.

Loops are made in-process with run_loop in one shared copy of the workspace (as test_verify_loop does). Where
a loop must take time, its clocks stand still but for SHIFT seconds a child takes: its own run.json says so, and
the loop's monotonic reading and wall clock move on with it, so the honest record passes and only the forged
field is wrong. Then the record (or a child) is edited as a forger would, and verify_loop is asked again.
"""
import contextlib
import io
import json
import os
import shutil
import time
import unittest
from unittest import mock

import export_review
import harness
import loop_lab
from tests import test_verifier_holes as holes
from tests.test_verify_loop import VerifyTestCase, as_old_record, as_record_of_16_files, lasting
from tests.support import assert_found, fields_of
from verifier import records as loop_records

SHIFT = 40  # seconds a child "takes" on the shifted clocks: beyond the default 30 s budget
WHY = "循环这样停下的原因足够长，能让人据此决定。"


def interrupt_after_child(root, name, sample):
    harness.run_harness(root, name, sample)
    raise KeyboardInterrupt  # Ctrl-C after the child ended, before the loop wrote the attempt's end


def second_child_broken(root, name, sample):
    if name.endswith("-02"):
        raise RuntimeError("磁盘出了问题")  # the loop stops for a person after attempt 2: unexpected_error
    return harness.run_harness(root, name, sample)


def rewrite(path, change):
    record = json.loads(path.read_text(encoding="utf-8"))
    change(record)
    path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))


class PromiseTestCase(VerifyTestCase):
    @classmethod
    def setUpClass(cls):  # the base runs of test_verify_loop are not needed here: each test makes its own
        super(VerifyTestCase, cls).setUpClass()

    def shifted(self, name, scenario, after=(1,), seconds=SHIFT, **options):
        """Loop NAME on clocks that stand still, but for the SECONDS the child of each attempt N in AFTER takes."""
        started, shift = time.time(), []
        run_child = lasting(seconds, shift, slow=lambda run_name: int(run_name[-2:]) in after)
        with contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.root, name, scenario, clock=lambda: sum(shift),
                                          wall=lambda: started + sum(shift), run_child=run_child, **options)
        self.assertEqual(self.verdict(name)["result"], "pass")  # honest: whatever fails below is the edit
        return record

    def assertResult(self, name, result, *expected):
        """Loop NAME is RESULT, its findings holding EXPECTED (kinds and values: tests/support.py assert_found)."""
        verdict = self.verdict(name)
        self.assertEqual(verdict["result"], result, verdict)
        assert_found(self, verdict, *expected)


class StopPromiseTest(PromiseTestCase):
    def test_a_loop_whose_time_budget_is_edited_to_zero_is_not_the_zero_seconds_case(self):
        # an honest time-budget stop after one attempt; with max_seconds 0 no attempt could have started
        self.shifted("zero", "repair")
        self.forge("zero", lambda rec: rec["budget"].update(max_seconds=0))
        self.assertResult("zero", "fail", "expected_mismatch")

    def test_when_both_budgets_are_spent_the_attempt_budget_is_the_stop(self):
        record = self.shifted("both", "repair", max_attempts=1)
        self.assertEqual(record["reason"], "attempt_budget")
        self.forge("both", lambda rec: rec.update(reason="time_budget"))
        self.assertResult("both", "fail", "stop_contradicted", "budget_exhausted/attempt_budget")

    def test_an_error_type_belongs_to_an_unexpected_stop_only(self):
        self.shifted("typed", "repair")
        self.forge("typed", lambda rec: rec.update(error_type="ValidationError"))
        self.assertResult("typed", "fail", "error_type_wrong")


class ShapePromiseTest(PromiseTestCase):
    def test_a_negative_reading_fails_as_no_reading_a_loop_records(self):
        self.shifted("below", "repair", max_attempts=1)
        for change, kind in ((lambda rec: rec.update(elapsed_seconds=-0.001), "elapsed_wrong"),
                             (lambda rec: rec["attempts"][0].update(started_offset=-1), "attempt_start_wrong")):
            with self.subTest(kind=kind), self.forged("below", change):
                self.assertResult("below", "fail", kind)

    def test_a_segment_whose_wall_clock_reads_before_1970_fails(self):
        self.shifted("epoch", "repair", max_attempts=1)
        # its start time and wall reading agree with each other, and both lie before any clock a loop reads
        self.forge("epoch", lambda rec: rec["segments"][0].update(wall_minus_monotonic=-1,
                                                                  started_at="1969-12-31T23:59:59Z"))
        self.assertResult("epoch", "fail", "segments_wrong")

    def test_only_the_last_attempt_may_have_timed_out(self):
        self.shifted("early", "repair", after=(2,))

        def first_timed_out(rec):
            rec["attempts"][0].update(state="timed_out", status=None, feedback=None)
            rec.update(status="needs_human", reason="attempt_timeout")
        self.forge("early", first_timed_out)
        self.assertResult("early", "fail", "state_wrong")
        self.assertEqual(fields_of(self.verdict("early"), "state_wrong")["where"].fields["number"], 1)

    def test_an_attempt_cut_off_in_flight_carries_no_status(self):
        self.make("inflight", "repair", run_child=interrupt_after_child)
        self.assertResult("inflight", "needs_human")
        self.forge("inflight", lambda rec: rec["attempts"][0].update(status="running"))
        self.assertResult("inflight", "fail", "status_state")


class TimeoutPromiseTest(PromiseTestCase):
    def timed_out(self, number):
        """A change making attempt NUMBER (the last) a timeout of 5 s that waited its 40 s, and the loop's stop."""
        def change(rec):
            rec["budget"]["attempt_timeout"] = 5
            rec["attempts"][number - 1].update(
                state="timed_out", status=None, feedback=None,
                timeout={"seconds": 5, "waited_seconds": 5.2, "inventory": {"exists": True, "run_status": None,
                                                                            "files": []}},
                decision=dict(rec["attempts"][number - 1]["decision"], next="stop", reason="attempt_timeout", why=WHY))
            inspect = [f"loop-runs/{rec['run']}/loop.json"] + [f"{a['child_run']}/run.json" for a in rec["attempts"]]
            rec.update(status="needs_human", reason="attempt_timeout", error_type=None,
                       handoff={"stopped_at": "第 1 次尝试到单次时限", "done": ["导出"], "inspect": inspect, "decide": WHY})
        return change

    def test_a_timeout_recorded_over_a_child_that_passed_fails(self):
        self.shifted("over-pass", "repair", after=(2,))
        self.forge("over-pass", self.timed_out(2))
        self.assertResult("over-pass", "fail", "timed_out_finished")

    def test_a_timeout_recorded_over_a_child_that_failed_fails(self):
        self.shifted("over-fail", "repair", max_attempts=1)
        self.forge("over-fail", self.timed_out(1))
        self.assertResult("over-fail", "fail", "timed_out_finished")

    def test_a_timeout_recorded_over_a_child_that_ended_needing_a_person_fails(self):
        started, shift = time.time(), []
        with mock.patch.object(export_review, "export_candidate", side_effect=OSError(5, "磁盘出错")), \
                contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.root, "over-human", "repair", clock=lambda: sum(shift),
                                          wall=lambda: started + sum(shift), run_child=lasting(SHIFT, shift))
        self.assertEqual(record["attempts"][0]["status"], "needs_human")  # its child finished, needing a person
        self.forge("over-human", self.timed_out(1))
        self.assertResult("over-human", "fail", "timed_out_finished")

    def test_a_timed_out_attempt_in_a_loop_its_timeout_did_not_stop_fails(self):
        self.shifted("other-stop", "repair", max_attempts=1)

        def said_unexpected(rec):
            self.timed_out(1)(rec)
            rec["attempts"][0]["decision"].update(reason="unexpected_error")
            rec.update(reason="unexpected_error", error_type="TimeoutError")  # the timeout called an error
        self.forge("other-stop", said_unexpected)
        self.assertResult("other-stop", "fail", "timeout_count_wrong")

    def test_a_timeout_must_be_the_budgets_limit(self):
        with contextlib.redirect_stderr(io.StringIO()):
            loop_lab.run_loop(self.root, "cut", "slow", attempt_timeout=0.1, tool_seconds=0.4)
        self.assertResult("cut", "needs_human")  # honest: the child was ended, its outcome unknown
        self.forge("cut", lambda rec: rec["budget"].update(attempt_timeout=30))  # "it ran into a 30 s limit"
        self.assertResult("cut", "fail", "timeout_wrong")


class ChildPromiseTest(PromiseTestCase):
    def test_a_hidden_child_is_not_excused_by_a_taken_name(self):
        def run_child(root, name, sample):
            child = harness.run_harness(root, name, sample)
            (root / "runs" / "taken-02").mkdir()  # someone else takes the next name: the loop stops there
            return child
        with contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.root, "taken", "repair", run_child=run_child)
        self.assertEqual(record["error_type"], "FileExistsError")
        self.assertResult("taken", "needs_human", "runs/taken-02")
        shutil.copytree(self.root / "runs" / "taken-01", self.root / "runs" / "taken-03")  # a third, hidden
        self.assertResult("taken", "fail", "run_unrecorded", "runs/taken-03")

    def test_a_child_whose_own_check_needs_a_person_makes_the_loop_need_one(self):
        self.shifted("stepped", "semantic")
        child = self.root / "runs" / "stepped-01" / "run.json"
        self.keep(child)
        # one clock step between its two wall readings: its own monotonic clock says 10 s less than they do
        rewrite(child, lambda run: run.update(duration_seconds=round(run["duration_seconds"] - 10, 3)))
        self.assertResult("stepped", "needs_human", "child_needs_human", "runs/stepped-01")

    def test_a_failed_child_whose_own_check_needs_a_person_makes_the_loop_need_one_too(self):
        self.shifted("stepfail", "repair")  # its first child failed (the exporter's rejection), as the lesson's
        child = self.root / "runs" / "stepfail-01" / "run.json"
        self.keep(child)
        rewrite(child, lambda run: run.update(duration_seconds=round(run["duration_seconds"] - 10, 3)))
        self.assertEqual(json.loads(child.read_text(encoding="utf-8"))["status"], "failed")
        self.assertResult("stepfail", "needs_human", "child_needs_human", "runs/stepfail-01")

    def test_a_child_longer_than_its_attempt_is_no_clock_step(self):
        self.shifted("longer", "semantic")
        child = self.root / "runs" / "longer-01" / "run.json"
        self.keep(child)
        rewrite(child, lambda run: run.update(duration_seconds=100))  # the attempt's own readings are 40 s apart
        self.assertResult("longer", "fail", "child_longer")
        self.assertEqual(fields_of(self.verdict("longer"), "child_longer")["duration"], 100)
        self.assertNotIn("需要人工查看", " ".join(self.verdict("longer")["problems"]))

    def test_an_earlier_child_that_fails_its_check_fails_the_loop_whatever_stopped_it(self):
        with contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.root, "broke", "repair", run_child=second_child_broken)
        self.assertEqual((record["reason"], len(record["attempts"])), ("unexpected_error", 2))
        self.assertResult("broke", "needs_human")
        copy = self.root / "runs" / "broke-01" / "input" / "candidate.json"
        copy.write_bytes(copy.read_bytes() + b" ")  # attempt 1's evidence edited afterwards
        self.assertResult("broke", "fail", "child_failed", "runs/broke-01")

    def test_an_earlier_attempt_recorded_as_stopping_for_an_error_it_did_not_show_is_contradicted(self):
        with contextlib.redirect_stderr(io.StringIO()):
            loop_lab.run_loop(self.root, "broke-early", "repair", run_child=second_child_broken)
        self.assertResult("broke-early", "needs_human")
        # attempt 1's check passed and its child asked to go on: only the last attempt may carry the error's stop
        self.forge("broke-early", lambda rec: rec["attempts"][0]["decision"].update(next="stop",
                                                                                     reason="unexpected_error"))
        self.assertResult("broke-early", "fail", "decision_contradicted")


class ScriptPromiseTest(unittest.TestCase):
    def test_only_the_exporters_rule_rejection_moves_repair_on_to_valid(self):
        for feedback, choice in (([{"error_type": "ValidationError", "message": "引文不在笔记里"}], "valid"),
                                 ([{"error_type": "OSError", "message": "磁盘出错"}], "bad-quote"), ([None], "bad-quote")):
            with self.subTest(feedback=feedback):
                self.assertEqual(loop_records.scripted("repair", feedback), choice)


class OldRecordPromiseTest(PromiseTestCase):
    def test_an_old_record_claiming_a_stall_its_children_do_not_show_fails(self):
        self.shifted("old", "repair", after=())  # needs_review after two attempts
        for child in ("old-01", "old-02"):
            rewrite(self.root / "runs" / child / "run.json",
                    lambda run: [run.update(schema="harness-run/1"), run.pop("id")])
        self.forge("old", lambda rec: [as_old_record(rec), rec.update(status="stalled", reason="repeated_failure")])
        self.assertResult("old", "fail", "stop_contradicted", "stalled", "repeated_failure")

    def test_an_older_records_attempt_cut_off_in_flight_is_not_compared_as_done(self):
        self.make("oldcut", "repair", run_child=interrupt_after_child)
        self.forge("oldcut", as_record_of_16_files)  # loop-run/2: its attempt unknown, its child finished
        self.assertEqual(json.loads(self.record_path("oldcut").read_text(encoding="utf-8"))["attempts"][0]["state"],
                         "unknown")
        verdict = self.verdict("oldcut")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertNotIn("summary_mismatch", [finding.kind for finding in verdict["findings"]])

    def test_a_record_relabelled_old_without_its_id_fails_by_a_field_only_today_writes(self):
        self.shifted("relabelled", "permission", after=())  # no attempt: no child could say otherwise
        self.forge("relabelled", lambda rec: [rec.update(schema="loop-run/1"), rec.pop("id")])
        self.assertResult("relabelled", "fail", "old_fields", "budget.attempt_timeout")


class OldOnlyWhereOldPromiseTest(VerifyTestCase):
    """What no older workspace wrote fails under the old label as it would in a record of today."""

    def make_old(self, name, scenario):
        holes.OldOnlyWhereOldTest.make_old(self, name, scenario)  # loop-run/1 over harness-run/1 children

    def assertOldFails(self, name, *expected):
        verdict = self.verdict(name)
        self.assertEqual(verdict["result"], "fail", verdict)
        assert_found(self, verdict, *expected)

    def test_an_old_fingerprint_that_its_files_do_not_add_up_to_fails(self):
        self.make_old("of", "stuck")
        self.assertEqual(self.verdict("of")["result"], "needs_human")
        holes.rewrite(self.record_path("of"), lambda rec: rec["context"].update(fingerprint="0" * 64))
        self.assertOldFails("of", "old_context", "loop-runs/of/loop.json", "loop-run/1")

    def test_an_attempt_state_the_old_loop_never_wrote_fails(self):
        self.make_old("os", "stuck")
        holes.rewrite(self.record_path("os"), lambda rec: rec["attempts"][-1].update(state="timed_out"))
        self.assertOldFails("os", "old_state")
        self.assertEqual(fields_of(self.verdict("os"), "old_state")["known"], ["running", "done", "unknown"])

    def test_an_old_childs_record_that_is_a_link_fails(self):
        self.make_old("ol", "stuck")
        self.make_old("ol2", "stuck")
        record = self.root / "runs" / "ol-02" / "run.json"
        record.unlink()
        try:
            os.symlink(self.root / "runs" / "ol2-02" / "run.json", record)
        except (OSError, NotImplementedError) as exc:  # Windows without the privilege
            self.skipTest(f"这里不能创建符号链接：{exc}")
        self.assertOldFails("ol", "old_child_not_plain", "runs/ol-02/run.json")

    def test_a_cut_child_of_the_previous_schema_fails_its_writer_flushed_to_disk(self):
        self.make("of2", "stuck")
        holes.rewrite(self.record_path("of2"), as_record_of_16_files)  # loop-run/2 over its harness-run/2 children
        self.assertEqual(self.verdict("of2")["result"], "needs_human")
        child = self.root / "runs" / "of2-02" / "run.json"
        child.write_bytes(child.read_bytes()[:40])
        self.assertOldFails("of2", "old_child_not_json", "runs/of2-02/run.json", "在结尾处中断")  # cli.py's words


class UnicodeNamesPromiseTest(VerifyTestCase):
    def test_two_loop_folders_one_name_in_two_unicode_spellings_are_named(self):
        loops, composed, decomposed = self.root / "loop-runs", "caf\u00e9", "cafe\u0301"
        loops.mkdir(exist_ok=True)
        if not holes.can_hold_both(loops, composed, decomposed):
            self.skipTest("这个文件系统把两种写法当成同一个名称")
        self.make("cafe", "permission")
        for name in (composed, decomposed):
            shutil.copytree(loops / "cafe", loops / name)
            self.addCleanup(shutil.rmtree, loops / name)
        verdict = self.verdict(composed)
        self.assertEqual(verdict["result"], "fail", verdict)
        self.assertIn(f"loop-runs/{decomposed}", fields_of(verdict, "loop_twins")["others"][0])


if __name__ == "__main__":
    unittest.main()
