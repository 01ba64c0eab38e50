"""Tests of verify_loop.py's strict reading of a record: duplicate keys, links, impossible times, only what
json.dumps writes, older workspaces' records, the record's strings shown escaped and cut, unknown fields.

Helpers and VerifyTestCase (loops made in-process in one copy of the workspace per class) are
tests/test_verify_loop.py's.
"""
import contextlib
import io
import json
import os
import shutil
import time
import unittest
from pathlib import Path
from unittest import mock

from verifier import records as loop_records
import verify_loop
from tests.support import assert_found, fields_of, kinds_in
from tests.test_verify_loop import (
    VerifyTestCase, as_old_record, as_record_of_16_files, as_v3_record, cut_off, stop_as_passed, times_said)


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


if __name__ == "__main__":
    unittest.main()
