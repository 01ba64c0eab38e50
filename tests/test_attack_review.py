"""Holes an attacker's review found in the verifier, each closed as a class and guarded here.

- An older record ("loop-run/1", "loop-run/2") is for a person only when its stop, its decisions and its clocks
  follow from its own children and budgets: the old label softens what an old record cannot show, not a stop
  its children contradict (say attempt_budget claimed after one attempt of three).
- Platform names: the student chooses the original file name at the end of a Blackboard entry, never who the
  entry is by; a name inside it shaped like another student's attempt must not take that student's place.
- Names a disk cannot hold: a ZIP member name or a workspace name Windows refuses (`?`, `*`, `<`, `"`, `|`,
  COM¹ and the other device names) or two names a case-insensitive, normalising disk takes for one (é composed
  and decomposed) are packaging at the teacher's and refused by --pack, alike.

Loops are made in-process in a copy of the workspace (one copy per class); a changed record is put back after its
test.
"""
import io
import json
import shutil
import zipfile
from pathlib import Path

from classroom import hand_in, intake
from classroom.platforms import handed_in
from tests.test_class_check import forge as rewrite
from tests.test_verify_loop import VerifyTestCase, as_old_record, as_record_of_16_files
from tests.support import WorkspaceTestCase, fields_of, kinds_in


def old_children(root, loop, count):
    """The children of LOOP relabelled as the workspace of loop-run/1 wrote them (harness-run/1, no id)."""
    for number in range(1, count + 1):
        path = root / "runs" / f"{loop}-{number:02d}" / "run.json"
        rewrite(path, lambda run: [run.update(schema="harness-run/1"), run.pop("id"), run.pop("duration_seconds")])


class OldRecordsFollowTheirChildrenTest(VerifyTestCase):
    """An older record's stop, decisions and clocks are re-derived from its children like today's."""

    def assertOldFails(self, name, *expected):
        verdict = self.assertFails(name, *expected)
        self.assertNotIn("older_schema", kinds_in(verdict))  # judged, not left to a person

    def test_the_honest_relabels_stay_for_a_person(self):
        with self.forged("s", as_record_of_16_files):
            self.assertEqual(self.verdict("s")["result"], "needs_human")
        self.keep(*(self.root / "runs" / f"s-0{n}" / "run.json" for n in (1, 2)))
        old_children(self.root, "s", 2)
        with self.forged("s", as_old_record):
            self.assertEqual(self.verdict("s")["result"], "needs_human")

    def test_an_attempt_budget_claimed_before_the_budget_was_spent_fails(self):
        def forge(rec):
            as_record_of_16_files(rec)
            rec.update(status="budget_exhausted", reason="attempt_budget")
        with self.forged("s", forge):
            self.assertOldFails("s", "stop_contradicted", "attempt_budget")

    def test_a_time_budget_claimed_below_the_budget_fails(self):
        def forge(rec):
            as_record_of_16_files(rec)
            rec["budget"]["max_attempts"] = 3
            rec.update(status="budget_exhausted", reason="time_budget")
        with self.forged("b", forge):
            self.assertOldFails("b", "time_budget")

    def test_a_decision_the_child_does_not_support_fails(self):
        def forge(rec):
            as_record_of_16_files(rec)
            rec["attempts"][0]["decision"] = {"next": "stop", "reason": "mechanical_pass", "why": "机械检查已通过，停下等人审"}
        with self.forged("r", forge):
            self.assertOldFails("r", "decision_contradicted")

    def test_monotonic_readings_that_run_backwards_fail(self):
        def forge(rec):
            as_record_of_16_files(rec)
            rec["attempts"][1]["started_offset"] = rec["attempts"][0]["started_offset"]
            rec["attempts"][0]["finished_offset"] = rec["attempts"][0]["started_offset"] + 5
        with self.forged("r", forge):
            self.assertOldFails("r", "reading_backwards", "finished_offset")

    def test_an_old_record_of_more_attempts_than_its_budget_fails(self):
        def forge(rec):
            as_old_record(rec)
            rec["budget"]["max_attempts"] = 1
            rec.update(status="stalled", reason="repeated_failure")
        self.keep(*(self.root / "runs" / f"s-0{n}" / "run.json" for n in (1, 2)))
        old_children(self.root, "s", 2)
        with self.forged("s", forge):
            self.assertOldFails("s", "too_many_attempts")

    def test_an_old_record_whose_candidate_the_script_never_proposes_fails(self):
        def forge(rec):
            as_old_record(rec)
            rec["scenario"] = "semantic"
        self.keep(*(self.root / "runs" / f"s-0{n}" / "run.json" for n in (1, 2)))
        old_children(self.root, "s", 2)
        with self.forged("s", forge):
            self.assertOldFails("s", "candidate_not_scripted", "semantic")


class PlatformNamesTest(WorkspaceTestCase):
    """Who an entry is by comes from the part of its name the platform writes, never from the student's file name."""

    def test_a_blackboard_file_named_like_another_students_attempt_stays_its_uploaders(self):
        folder = self.root / "cls"
        folder.mkdir()
        (folder / "HW14_alice_attempt_2026-11-30-10-00-00_alice.zip").write_bytes(b"PK")
        (folder / "HW14_alice_attempt_2026-11-30-10-00-00.txt").write_text("Name: Alice Wang (alice)\n")
        (folder / "HW14_bob_attempt_2026-11-30-11-00-00.txt").write_text("Name: Bob Li (bob)\n")
        (folder / "HW14_bob_attempt_2026-11-30-11-00-00_x_alice_attempt_2099-01-01-00-00-00_a.zip").write_bytes(b"PK")
        people, _ = handed_in(folder)
        by_user = {person.student_id: Path(person.entry).name for person in people}
        self.assertEqual(by_user["alice"], "HW14_alice_attempt_2026-11-30-10-00-00_alice.zip")
        self.assertEqual(by_user["bob"], "HW14_bob_attempt_2026-11-30-11-00-00_x_alice_attempt_2099-01-01-00-00-00_a.zip")

    def test_an_assignment_name_with_underscores_still_reads(self):
        folder = self.root / "cls"
        folder.mkdir()
        (folder / "Lesson_14_carol_attempt_2026-11-30-10-00-00_c.zip").write_bytes(b"PK")
        people, _ = handed_in(folder)
        self.assertEqual([(p.student_id, p.folder) for p in people],
                         [("carol", "Lesson_14_carol_attempt_2026-11-30-10-00-00")])


def zip_bytes(names):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("loop-runs/x/loop.json", "{}")
        for name in names:
            archive.writestr(name, "{}")
    return buffer.getvalue()


class NamesNoDiskHoldsTest(WorkspaceTestCase):
    """A name Windows refuses, or two names one disk takes for one, are refused at the teacher's and by --pack."""

    REFUSED = ("runs/x-01/a?b.json", "runs/x-01/a*b", "runs/x-01/a<b", "runs/x-01/a\"b", "runs/x-01/a|b",
               "runs/x-01/COM¹.txt", "runs/x-01/lpt³", "runs/x-01/CONIN$", "runs/x-01/aux .txt")

    def intake(self, names):
        path = self.root / "eve.zip"
        path.write_bytes(zip_bytes(names))
        scratch = self.root / "scratch"
        scratch.mkdir(exist_ok=True)
        with intake.taken_in(path, scratch) as submission:
            return submission.packaging

    def test_each_name_windows_refuses_is_packaging(self):
        for name in self.REFUSED:
            with self.subTest(name=name):
                self.assertIn("zip_windows_name", kinds_in(self.intake([name])))

    def test_two_members_one_normalising_disk_takes_for_one_are_packaging(self):
        said = self.intake(["runs/re\u0301pair-01-01/run.json", "runs/r\u00e9pair-01-01/run.json"])
        self.assertIn("zip_same_name", kinds_in(said))

    def test_pack_refuses_the_same_names(self):
        for name in self.REFUSED:
            with self.subTest(name=name):
                self.assertIsNotNone(hand_in.name_problem(name.rpartition("/")[2]))

    def test_pack_refuses_two_names_one_normalising_disk_takes_for_one(self):
        runs = self.root / "runs"
        (runs / "r\u00e9pair-01-01").mkdir(parents=True)
        try:
            (runs / "re\u0301pair-01-01").mkdir()
        except OSError:
            self.skipTest("这个文件系统分不出这两个名称")
        if len(list(runs.iterdir())) != 2:
            self.skipTest("这个文件系统分不出这两个名称")
        (self.root / "loop-runs").mkdir(exist_ok=True)
        found = [name for name, _why, _other in hand_in.name_problems(self.root)]
        self.assertEqual(len(found), 1, found)


class ZipCostTest(WorkspaceTestCase):
    """A ZIP costs the teacher what an honest one would: its member directory and its members are read no further
    than the verifier can use."""

    def test_a_directory_bigger_than_honest_entries_make_is_refused_before_it_is_read(self):
        # an end record counting 10 members over a 6 MB directory: no honest entry is near 512 bytes
        end = b"PK\x05\x06" + bytes(4) + (10).to_bytes(2, "little") * 2 + (6_000_000).to_bytes(4, "little") + bytes(6)
        self.assertEqual(intake.directory_problem(end).kind, "zip_directory")

    def test_a_member_is_taken_out_no_further_than_the_verifier_reads(self):
        path = self.root / "eve.zip"
        big = bytes(range(256)) * (3 * 2 ** 12)  # 3 MiB the ratio check lets through (stored, not compressed)
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("loop-runs/x/loop.json", "{}")
            archive.writestr("runs/x-01/run.json", big)
        scratch = self.root / "scratch"
        scratch.mkdir()
        with intake.taken_in(path, scratch) as submission:
            taken = submission.workspace / "runs" / "x-01" / "run.json"
            # docs/loop/TASK.md: no evidence file is read past 1 MiB; one byte more says the file is over the cap
            self.assertEqual(taken.stat().st_size, 2 ** 20 + 1)

    def test_members_that_unpack_a_hundred_times_their_size_are_refused_from_64_kib(self):
        path = self.root / "eve.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("loop-runs/x/loop.json", "{}")
            for number in range(3):  # 1 MiB of zeros each: a few KiB packed, no evidence file is like that
                archive.writestr(f"runs/x-{number:02d}/run.json", bytes(2 ** 20))
        scratch = self.root / "scratch"
        scratch.mkdir()
        with intake.taken_in(path, scratch) as submission:
            self.assertIn("member_ratio", kinds_in(submission.packaging))
            self.assertEqual(fields_of(submission.packaging, "member_ratio")["most"], 100)
