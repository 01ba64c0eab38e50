"""Tests of the verifier on resumed loops: honest ones pass, forged ones fail, --explain and the class check say so.

Three loops are made once, interrupted at three points and resumed (tests/test_resume.py's clocks): `w` cut in
attempt 1's wait (judged unknown: no child), `f` cut as attempt 1's child folder appeared (unknown: a partial child,
kept), `a` cut after attempt 1's child finished (adopted). Each forgery is one edit of a record or a child, put back
afterwards; the forgeries the issue names come first, then unseen ones of the same classes.
"""
import contextlib
import io
import json
import shutil
from unittest import mock

import export_review
import harness
import loop_lab
from classroom import check as class_check
from machinery import resume
from tests.test_resume import Shifted, verified_here
from tests.test_verify_loop import VerifyTestCase


def renumbered(rec, drop):
    """REC without its attempt DROP (from 1), the later ones numbered as if it had never been."""
    del rec["attempts"][drop - 1]
    for number, entry in enumerate(rec["attempts"], 1):
        entry.update(attempt=number, child_run=f"runs/{rec['run']}-{number:02d}")


@contextlib.contextmanager
def on_shifted_clocks(clocks):
    """Loops run and resumed in the block on CLOCKS["now"] (tests/test_resume.py's Shifted, replaced between runs):
    the children's wall times read from it, the resume's verifier asked in-process, stderr kept quiet."""
    patches = (mock.patch.object(resume, "verifier_problems", verified_here),
               mock.patch.object(harness, "now_iso", lambda: harness.time.strftime(
                   "%Y-%m-%dT%H:%M:%SZ", harness.time.gmtime(clocks["now"].time()))))
    with contextlib.ExitStack() as stack, contextlib.redirect_stderr(io.StringIO()):
        for patch in patches:
            stack.enter_context(patch)
        yield


class ResumedRecordTest(VerifyTestCase):
    @classmethod
    def setUpClass(cls):
        super(VerifyTestCase, cls).setUpClass()
        clocks = {"now": Shifted()}
        with on_shifted_clocks(clocks):
            ctrl_c = mock.Mock(side_effect=KeyboardInterrupt)
            loop_lab.run_loop(cls.root, "w", "slow", **clocks["now"].options(sleep=ctrl_c))
            with mock.patch.object(export_review, "export_candidate", side_effect=KeyboardInterrupt):
                loop_lab.run_loop(cls.root, "f", "repair", **clocks["now"].options())
            loop_lab.run_loop(cls.root, "a", "repair", **clocks["now"].options(check_child=ctrl_c))
            loop_lab.run_loop(cls.root, "r", "repair", **clocks["now"].options())  # never resumed
            for name in ("w", "f", "a"):
                clocks["now"] = Shifted(clocks["now"].shift + 60)
                loop_lab.run_loop(cls.root, name, None, **clocks["now"].options())

    def child_file(self, rel):
        path = self.root / "runs" / rel
        self.keep(path)
        return path

    def test_honest_resumed_loops_pass(self):
        for name, attempts in (("w", 3), ("f", 3), ("a", 2)):
            with self.subTest(name):
                verdict = self.verdict(name)
                self.assertEqual((verdict["result"], verdict["status"], verdict["attempts"]),
                                 ("pass", "needs_review", attempts), verdict)

    def test_the_forgeries_the_lesson_names(self):
        forgeries = {
            "segment time lowered": ("a", "segments_apart", lambda rec: rec["segments"][0].update(elapsed_seconds=0)),
            "the unknown attempt dropped": ("w", "child_deleted", lambda rec: renumbered(rec, 1)),
            "the judgement contradicted by the child": ("f", "judged_no_child",
                lambda rec: rec["attempts"][0]["resume"].update(
                found="no_child", run_status=None)),
            "an attempt renumbered": ("w", "attempt_numbering", lambda rec: rec["attempts"][2].update(attempt=4)),
        }
        for what, (name, kind, change) in forgeries.items():
            with self.subTest(what), self.forged(name, change):
                self.assertFails(name, kind)

    def test_unseen_forgeries_of_the_same_classes(self):
        def first(rec):
            return rec["attempts"][0]
        forgeries = {
            # no reading out of order: the adopted child is checked (milliseconds) before its decision is read
            "the second segment starts later": ("a", "segments_apart", lambda rec: rec["segments"][1].update(
                started_offset=first(rec)["decision"]["decided_offset"])),
            "the last segment shorter than its readings": ("a", "reading_backwards",
                lambda rec: rec["segments"][1].update(
                elapsed_seconds=0)),
            "the whole time lowered": ("a", "reading_backwards", lambda rec: rec.update(elapsed_seconds=0)),
            "a gap that is no difference of the wall clocks": ("w", "segment_gap",
                lambda rec: rec["segments"][1].update(
                gap_seconds=rec["segments"][1]["gap_seconds"] - 30)),
            "killed without its lower bound": ("w", "segments_wrong",
                lambda rec: rec["segments"][0].update(ended="killed")),
            "the resume found another count": ("w", "judged_elsewhere",
                lambda rec: rec["segments"][1].update(after_attempt=0)),
            "the segments merged": ("w", "judged_elsewhere",
                lambda rec: [rec["segments"].pop(), [rec["segments"][0].pop(key) for key in
                                                                            ("ended", "lower_bound")]]),
            "the judgement in a segment that is not there": ("w", "judged_elsewhere",
                lambda rec: first(rec)["resume"].update(segment=3)),
            "the judgement removed": ("w", "state_wrong", lambda rec: first(rec).pop("resume")),
            "the unknown attempt said to have failed": ("w", "decision_contradicted",
                lambda rec: first(rec)["decision"].update(
                reason="first_failure")),
            "the unknown attempt said to be done": ("f", "resume_state",
                lambda rec: first(rec).update(state="done", status="failed")),
            "another run status": ("f", "judged_run_status", lambda rec: first(rec)["resume"].update(run_status=None)),
            "a judgement found as a list": ("f", "resume_shape", lambda rec: first(rec)["resume"].update(found=[])),
            "a judgement found as an object": ("a", "resume_shape", lambda rec: first(rec)["resume"].update(found={})),
            "an adopted child said partial": ("a", "resume_state",
                lambda rec: first(rec)["resume"].update(found="partial_child")),
            "an adopted finish moved": ("a", "adopted_finish", lambda rec: first(rec).update(
                finished_offset=round(first(rec)["finished_offset"] / 2, 3))),
            "a judgement on a loop never resumed": ("r", "judged_elsewhere", lambda rec: first(rec).update(resume={
                "found": "complete_child", "run_status": "failed", "segment": 2})),
            "the attempt before dropped and the count kept": ("a", "candidate_not_scripted",
                lambda rec: renumbered(rec, 1)),
        }
        for what, (name, kind, change) in forgeries.items():
            with self.subTest(what), self.forged(name, change):
                self.assertFails(name, kind)

    def test_what_a_judged_child_left_stays_evidence(self):
        review = self.child_file("f-01/run.json")
        record = json.loads(review.read_text(encoding="utf-8"))
        review.write_bytes(json.dumps(dict(record, sample="valid"), ensure_ascii=False, indent=2).encode("utf-8"))
        self.assertFails("f")

    def test_a_partial_child_that_shows_any_finished_status_contradicts_its_judgement(self):
        path = self.child_file("f-01/run.json")
        record = json.loads(path.read_text(encoding="utf-8"))
        for status in ("failed", "needs_human", "needs_review"):
            with self.subTest(status):
                path.write_bytes(json.dumps(dict(record, status=status), ensure_ascii=False, indent=2).encode("utf-8"))
                self.assertFails("f", "judged_partial_finished")

    def test_a_child_made_where_the_resume_found_none(self):
        made = self.root / "runs" / "w-01"
        shutil.copytree(self.root / "runs" / "f-01", made)  # the same partial export, under the name never used
        self.addCleanup(shutil.rmtree, made)
        record = json.loads((made / "run.json").read_text(encoding="utf-8"))
        started = json.loads(self.record_path("w").read_text(encoding="utf-8"))["attempts"][0]["started_at"]
        made_up = dict(record, run="w-01", started_at=started)  # made when attempt 1 began: only the judgement is off
        (made / "run.json").write_bytes(json.dumps(made_up, ensure_ascii=False, indent=2).encode("utf-8"))
        self.assertFails("w", "judged_no_child")

    def test_explain_shows_the_segments_and_the_judgement(self):
        import verify_loop
        with contextlib.redirect_stderr(io.StringIO()) as said, contextlib.redirect_stdout(io.StringIO()):
            verify_loop.main([str(self.root / "loop-runs" / "w"), "--explain"])
        text = said.getvalue()
        self.assertIn("第 2 段：续跑（这时已有 1 次尝试）；上一段被 Ctrl-C 中断", text)
        self.assertIn("续跑时的判断：", text)
        self.assertIn("不存在：unknown，计一次尝试，", text)
        self.assertIn("情景预期：有 1 次尝试续跑时结果不知道", text)
        self.assertNotIn("  ≠", text)  # the verifier's account and the record's agree

    def test_in_a_class_a_resumed_loop_is_a_note_and_no_case(self):
        alone = self.root / "alone"
        for rel in ("loop-runs/a", "runs/a-01", "runs/a-02"):
            shutil.copytree(self.root / rel, alone / rel)
        self.addCleanup(shutil.rmtree, alone)
        row = class_check.workspace_row(alone, "某某", course=class_check.TeacherCourse(self.root))
        self.assertEqual((row["result"], row["cases"]["repair"]), ("incomplete", "missing"), row)
        self.assertEqual([note for note in row["notes"] if "续跑过" in note],
                         ["loop-runs/a 续跑过 1 次（loop_lab.py --resume，pass）：续跑的循环不计入任何情景，也不代替它；"
                          "要计入情景，请用新名称重新运行一次。"])
