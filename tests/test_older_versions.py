"""An older version softens only what it could not record, a release exactly as a schema; a byte copy is a copy.

A loop made on an earlier release's course files (classroom/releases.json) or written in an older schema is
judged on the files its record says it ran on: its children against its own context (one made on other files
fails), every other rule as for today's record; only what those files change is said for a person, once. A
release whose loop wrote another schema did not make the record. A loop folder copied byte for byte beside itself
(cloud sync's `repair-01-DESKTOP-K3J2`, Explorer's `stuck-01 - 副本`) is named as a copy for a person, never
as a forgery.

The loops are made once in a shared copy of the workspace; the teacher's course is a second folder holding the
course files with docs/loop/TASK.md edited since (a later release), and the release table is patched to know the
students' version.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

from classroom import check as class_check
from classroom import releases
from tests.test_verify_loop import VerifyTestCase, as_old_record, as_v3_record, fingerprint_of, stop_as_passed
from tests.support import assert_found, kinds_in
from verifier.findings import Finding
from verifier.check import checked_loop
from verifier.records import LOOP_FILES


class VersionsTestCase(VerifyTestCase):
    @classmethod
    def setUpClass(cls):
        super(VerifyTestCase, cls).setUpClass()
        for name, scenario in (("r", "repair"), ("s", "stuck"), ("m", "semantic")):
            cls.make(name, scenario)
        cls.teacher = cls.root / "teacher"
        notes = [f"project/notes/{note.name}" for note in (cls.root / "project" / "notes").iterdir()]
        for rel in [*LOOP_FILES, *notes]:
            (cls.teacher / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(cls.root / rel, cls.teacher / rel)
        task = cls.teacher / "docs" / "loop" / "TASK.md"
        task.write_bytes(task.read_bytes() + "\n（下一版）\n".encode("utf-8"))
        cls.students = releases.current_fingerprint(cls.root)

    def judged(self, name, table=None, teacher=None):
        """The check of loop NAME against the teacher's course, the release table holding TABLE (default: the
        students' course files as release 2027-01-01 of today's schema)."""
        table = {self.students: {"release": "2027-01-01", "schema": "loop-run/4"}} if table is None else table
        with mock.patch.object(releases, "_known", table):
            return checked_loop(self.root / "loop-runs" / name,
                                course=class_check.TeacherCourse(teacher or self.teacher)).result()

    def made_on_other_files(self, run_name, rel):
        """runs/RUN_NAME's run.json as a run made on another copy of REL would hold it (its fingerprint added up)."""
        path = self.root / "runs" / run_name / "run.json"
        self.keep(path)
        run = json.loads(path.read_text(encoding="utf-8"))
        entries = dict(run["context"]["entries"], **{rel: hashlib.sha256(b"another copy").hexdigest()})
        run["context"].update(entries=entries, fingerprint=fingerprint_of(entries))
        path.write_bytes(json.dumps(run, ensure_ascii=False, indent=2).encode("utf-8"))

    def assertJudged(self, verdict, result, *expected):
        """VERDICT is RESULT, its findings holding EXPECTED (kinds and values: tests/support.py assert_found)."""
        self.assertEqual(verdict["result"], result, verdict)
        self.assertNotIn("check_crashed", kinds_in(verdict))
        assert_found(self, verdict, *expected)
        return " ".join(verdict["problems"])


class ReleaseTest(VersionsTestCase):
    def test_an_honest_loop_of_an_earlier_release_is_for_a_person_saying_which_once(self):
        verdict = self.judged("r")
        text = self.assertJudged(verdict, "needs_human", "older_release", "2027-01-01", "course_differs",
                                 "course_teacher", "docs/loop/TASK.md")
        self.assertEqual(len(verdict["problems"]), 1, verdict)
        self.assertNotRegex(text, "被改过|改动过")

    def test_without_the_table_the_same_loop_ran_on_changed_course_files(self):
        self.assertJudged(self.judged("r", table={}), "fail", "course_changed", "course_teacher", "docs/loop/TASK.md")

    def test_every_other_rule_still_applies(self):
        forgeries = {
            "a relabelled stop": ("s", lambda: self.forge("s", stop_as_passed), ("stop_contradicted",)),
            "an approved semantic review": (
                "m", lambda: self.forge("m", lambda rec: rec.update(semantic_review="approved")),
                ("semantic_review_wrong",)),
            "a deleted review": ("r", lambda: self.removed(self.root / "runs" / "r-02" / "artifact" / "review.md"),
                                 ("child_failed", "runs/r-02")),
            "a hidden attempt": ("r", lambda: self.hidden("r"), ("run_unrecorded", "runs/r-03")),
        }
        for what, (name, forge, expected) in forgeries.items():
            with self.subTest(what):
                forge()
                self.assertJudged(self.judged(name), "fail", *expected)
                self.doCleanups()

    def test_a_child_made_on_other_files_than_its_loop_says_fails(self):
        self.made_on_other_files("r-01", "harness.py")
        self.assertJudged(self.judged("r"), "fail", "child_failed", "runs/r-01", "harness.py")

    def test_a_release_whose_loop_wrote_another_schema_did_not_make_the_record(self):
        for table in ({self.students: "2026-12-01"},
                      {self.students: {"release": "2026-12-01", "schema": "loop-run/3"}}):
            with self.subTest(table=table):
                self.assertJudged(self.judged("r", table=table), "fail", "context_swapped", "2026-12-01")

    def test_a_release_of_other_notes_checks_all_but_what_reads_them(self):
        teacher = self.root / "teacher-notes"
        shutil.copytree(self.teacher, teacher)
        note = teacher / "project" / "notes" / "A01.md"
        note.write_bytes(note.read_bytes() + "\n后来补的一段。\n".encode("utf-8"))
        self.assertJudged(self.judged("r", teacher=teacher), "needs_human", "older_release", "unread",
                          "project/notes/A01.md")
        cards = self.root / "runs" / "r-02" / "artifact" / "cards.json"
        self.keep(cards)
        cards.write_bytes(cards.read_bytes() + b" ")
        self.assertJudged(self.judged("r", teacher=teacher), "fail", "child_failed", "artifact/cards.json")

    def test_the_class_row_says_the_release_once_and_keeps_every_other_problem(self):
        self.forge("s", stop_as_passed)
        with mock.patch.object(releases, "_known", {self.students: {"release": "2027-01-01", "schema": "loop-run/4"}}):
            row = class_check.workspace_row(self.root, "某某", course=class_check.TeacherCourse(self.teacher))
        self.assertEqual(row["result"], "fail", row)
        self.assertEqual(row["kinds"].count("older_versions"), 1, row["problems"])
        self.assertIn("2027-01-01", row["problems"][row["kinds"].index("older_versions")])
        self.assertIn("stop_contradicted", row["kinds"], row["problems"])

    def removed(self, path):
        self.keep(path)
        path.unlink()
        self.addCleanup(lambda: None)

    def hidden(self, name):
        extra = self.root / "runs" / f"{name}-03"
        shutil.copytree(self.root / "runs" / f"{name}-02", extra)
        self.addCleanup(shutil.rmtree, extra)


    def test_a_release_made_now_keeps_the_schema_its_loop_writes(self):
        table = self.root / "classroom" / "releases.json"
        self.keep(table)
        older = json.loads(table.read_text(encoding="utf-8"))
        older["releases"] = {self.students: "同一份文件的旧一行", **older["releases"]}  # made again: it becomes the newest
        table.write_text(json.dumps(older, ensure_ascii=False), encoding="utf-8")
        made = subprocess.run([sys.executable, "-m", "classroom.releases", "2027-03-01"], cwd=self.root,
                              capture_output=True, text=True, encoding="utf-8", timeout=60,
                              env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        self.assertEqual(made.returncode, 0, made.stderr)
        fingerprint = json.loads(made.stdout)["fingerprint"]
        self.assertEqual(fingerprint, self.students)
        entry = json.loads(table.read_text(encoding="utf-8"))["releases"][fingerprint]
        files = {rel: hashlib.sha256((self.root / rel).read_bytes()).hexdigest() for rel in LOOP_FILES}
        self.assertEqual(entry, {"release": "2027-03-01", "schema": "loop-run/4", "files": files})
        self.assertEqual(list(json.loads(table.read_text(encoding="utf-8"))["releases"])[-1], fingerprint)  # newest
        with mock.patch.object(releases, "_known", {fingerprint: entry, "f" * 64: "2026-11-30"}):
            self.assertEqual(releases.names(), {fingerprint: "2027-03-01", "f" * 64: "2026-11-30"})
            self.assertEqual(releases.release_of(json.loads(self.record_path("r").read_text(encoding="utf-8"))[
                "context"]["entries"]), ("2027-03-01", "loop-run/4"))


class OlderSchemaTest(VersionsTestCase):
    def test_a_loop_run_3_handed_in_without_course_files_is_for_a_person_not_failed(self):
        self.forge("r", as_v3_record)
        handed = self.root / "handed"
        for rel in ("loop-runs/r", "runs/r-01", "runs/r-02"):
            shutil.copytree(self.root / rel, handed / rel)
        row = class_check.workspace_row(handed, "某某", course=class_check.TeacherCourse(self.root))
        self.assertEqual((row["result"], row["cases"]["repair"]), ("needs_human", "needs_human"), row)
        self.assertEqual(row["kinds"][0], "older_versions", row["problems"])
        self.assertIn("loop-run/3", row["problems"][0])

    def test_a_loop_run_3_is_judged_by_every_rule_it_can_show(self):
        self.forge("s", lambda rec: [as_v3_record(rec), stop_as_passed(rec)])
        self.assertJudged(self.judged("s", table={}), "fail", "stop_contradicted")

    def test_a_loop_run_3_child_made_on_other_files_fails(self):
        self.forge("r", as_v3_record)
        self.made_on_other_files("r-02", "samples/valid.json")
        self.assertJudged(self.judged("r", table={}), "fail", "child_failed", "runs/r-02", "samples/valid.json")


    def test_a_loop_run_1_child_made_on_other_files_fails_though_its_own_check_is_for_a_person(self):
        self.forge("r", as_old_record)
        for number in ("01", "02"):
            path = self.root / "runs" / f"r-{number}" / "run.json"
            self.keep(path)
            run = json.loads(path.read_text(encoding="utf-8"))
            run["schema"] = "harness-run/1"
            del run["id"], run["duration_seconds"]
            if number == "02":
                entries = dict(run["context"]["entries"], **{"AGENTS.md": hashlib.sha256(b"another").hexdigest()})
                run["context"].update(entries=entries, fingerprint=fingerprint_of(entries))
            path.write_bytes(json.dumps(run, ensure_ascii=False, indent=2).encode("utf-8"))
        self.assertJudged(self.judged("r", table={}), "fail", "child_failed", "runs/r-02", "AGENTS.md")


class CopyTest(VersionsTestCase):
    """A loop folder copied byte for byte beside itself is named as a copy for a person."""

    def copied(self, name, as_name):
        copy = self.root / "loop-runs" / as_name
        shutil.copytree(self.root / "loop-runs" / name, copy)
        self.addCleanup(shutil.rmtree, copy)
        return copy

    def test_cloud_syncs_and_explorers_copies_are_named_as_copies(self):
        for as_name in ("r-DESKTOP-K3J2", "r - 副本", "r (2)"):
            with self.subTest(as_name=as_name):
                self.copied("r", as_name)
                verdict = checked_loop(self.root / "loop-runs" / as_name).result()
                self.assertJudged(verdict, "needs_human", "loop_copy", "loop-runs/r")
                self.assertEqual(kinds_in(verdict), ["loop_copy"])
                self.doCleanups()

    def test_the_class_row_names_the_copy_once_and_not_as_a_shared_record(self):
        self.copied("s", "s - 副本")
        row = class_check.workspace_row(self.root, "某某", course=class_check.TeacherCourse(self.root))
        self.assertEqual(row["result"], "needs_human", row)
        self.assertEqual([(kind, problem) for kind, problem in zip(row["kinds"], row["problems"])
                          if kind in ("loop_copy", "shared_record", "copy_inside")],
                         [("loop_copy", Finding("in_loop", loop="loop-runs/s - 副本", finding=Finding(
                             "loop_copy", folder="loop-runs/s - 副本", original="loop-runs/s")).sentence())])

    def test_a_copy_that_differs_by_a_byte_or_has_no_original_is_no_copy(self):
        copy = self.copied("r", "r - 副本")
        record = copy / "loop.json"
        record.write_bytes(record.read_bytes().replace(b'"pending"', b'"pending" '))
        self.assertJudged(checked_loop(copy).result(), "fail", "run_wrong")
        self.doCleanups()
        copy = self.copied("r", "r (2)")
        (copy / "extra.txt").write_bytes(b"")  # a file its original does not hold
        self.assertJudged(checked_loop(copy).result(), "fail", "run_wrong")
        self.doCleanups()
        leftover = self.root / "loop-runs" / "r" / "loop.json.tmp"  # both hold it, with other bytes
        leftover.write_bytes(b"{")
        self.addCleanup(leftover.unlink)
        copy = self.copied("r", "r (3)")
        (copy / "loop.json.tmp").write_bytes(b"[")
        self.assertJudged(checked_loop(copy).result(), "fail", "run_wrong")

    def test_a_copy_of_a_linked_folder_is_no_copy(self):
        copy = self.copied("m", "m - 副本")
        record = copy / "loop.json"
        record.write_bytes(record.read_bytes().replace(b'"run": "m"', b'"run": "m-link"'))
        link = self.root / "loop-runs" / "m-link"  # the folder its record names is a link to the copy itself
        try:
            os.symlink(copy, link, target_is_directory=True)
        except (OSError, NotImplementedError):
            self.skipTest("这个系统上当前用户不能建符号链接")
        self.addCleanup(link.unlink)
        self.assertJudged(checked_loop(copy).result(), "fail", "run_wrong")


if __name__ == "__main__":
    unittest.main()
