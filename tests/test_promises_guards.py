"""Rules that were guarded only where another rule caught the same record, and thresholds tested on one side.

A fresh set of hand-planted bugs found these: each test here is a record (or a call) that only its rule catches,
on both sides of its threshold or tie. The loop's verifier: a run begun during the loop is no run begun after it;
a Windows device name with a suffix is no loop name. The exporter and its verifier count a title alike. The class
check: a cut-short loop is set aside only when nothing else is wrong with it; the "another course version" notice
holds at exactly half the class; a hand-in that two people on the roster match is given to neither. The loop: the
name it suggests is unused; a time budget's elapsed_seconds is the reading that budget check judged. The
assistant: a connection refused before anything was sent costs no tokens.
"""
import argparse
import calendar
import contextlib
import io
import json
import shutil
import socket
import sys
import tempfile
import time
import unittest
from pathlib import Path
from types import SimpleNamespace

import cli
import export_review
import harness
import loop_lab
import verify_export
from classroom import check as class_check
from classroom.roster import SEVERAL, Person, whose
from machinery import arguments
from tests.support import ROOT
from tests.support import kinds_in
from verifier.findings import Finding
from tests.test_loop_lab import FakeTime
from tests.test_verify_loop import VerifyTestCase
from verifier.records import is_loop_name

sys.path.insert(0, str(ROOT / "project"))
from assistant import client, errors  # noqa: E402
from assistant.budget import TokenBudget  # noqa: E402


def course_copy(test):
    """A temporary folder holding the course files a loop runs on (removed when TEST ends)."""
    root = Path(test.enterContext(tempfile.TemporaryDirectory()))
    for rel in harness.WATCHED_FILES + loop_lab.LOOP_FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes((ROOT / rel).read_bytes())
    for note in (ROOT / "project" / "notes").iterdir():
        (root / "project" / "notes" / note.name).write_bytes(note.read_bytes())
    return root


def later(text, seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))
                                                             + seconds))


class LoopRulesTest(VerifyTestCase):
    @classmethod
    def setUpClass(cls):
        super(VerifyTestCase, cls).setUpClass()
        cls.make("r", "repair")
        cls.make("s", "stuck")

    def stray(self, seconds):
        """runs/r-03, a run with the loop's prefix it does not record, begun SECONDS after the loop finished."""
        stray = self.root / "runs" / "r-03"
        with contextlib.redirect_stderr(io.StringIO()):
            harness.run_harness(self.root, "r-03", "valid")
        self.addCleanup(lambda: shutil.rmtree(stray))
        finished = json.loads(self.record_path("r").read_text(encoding="utf-8"))["finished_at"]
        run = json.loads((stray / "run.json").read_text(encoding="utf-8"))
        run.update(started_at=later(finished, seconds), finished_at=later(finished, seconds))
        (stray / "run.json").write_bytes(json.dumps(run, ensure_ascii=False, indent=2).encode("utf-8"))
        return self.verdict("r")

    def test_a_run_begun_during_the_loop_is_a_hidden_attempt_and_one_begun_after_it_is_for_a_person(self):
        for seconds, result in ((-5, "fail"), (2, "fail"), (3, "needs_human")):  # whole seconds, 1 s of tolerance
            with self.subTest(seconds=seconds):
                verdict = self.stray(seconds)
                self.assertEqual(verdict["result"], result, verdict)
                self.assertIn("run_unrecorded" if result == "fail" else "run_after_loop", kinds_in(verdict))
                self.doCleanups()

    def test_a_reading_is_at_most_a_billion_seconds(self):
        for reading, said in ((10 ** 9, False), (10 ** 9 + 1, True)):
            with self.subTest(reading=reading), self.forged("r", lambda rec: [
                    rec.update(elapsed_seconds=reading), rec["segments"][0].update(elapsed_seconds=reading)]):
                verdict = self.verdict("r")
                self.assertEqual("elapsed_wrong" in kinds_in(verdict), said, verdict)

    def test_a_course_file_checked_out_with_crlf_is_the_same_file(self):
        # a Windows checkout (git's autocrlf, an editor) turns the line ends of the course files into CRLF
        task = self.root / "docs" / "loop" / "TASK.md"
        self.keep(task)
        task.write_bytes(task.read_bytes().replace(b"\n", b"\r\n"))
        verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "pass", verdict)

    def test_a_handoff_that_leaves_out_a_child_run_to_inspect_fails(self):
        inspect = json.loads(self.record_path("s").read_text(encoding="utf-8"))["handoff"]["inspect"]
        self.assertIn("runs/s-01/run.json", inspect)
        for left_out in ("runs/s-01/run.json", "runs/s-02/run.json", "loop-runs/s/loop.json"):
            with self.subTest(left_out=left_out), self.forged("s", lambda rec: rec["handoff"].update(
                    inspect=[path for path in rec["handoff"]["inspect"] if path != left_out])):
                self.assertFails("s", "handoff_wrong")
        self.assertEqual(self.verdict("s")["result"], "pass")

    def test_a_loop_name_is_at_most_61_characters(self):  # docs/loop/TASK.md's name rule
        self.assertEqual([is_loop_name("a" * length) for length in (1, 61, 62, 64)], [True, True, False, False])

    def test_a_windows_device_name_with_a_suffix_is_no_loop_name(self):
        for name in ("CON.txt", "nul.json", "Com1.tar.gz", "lpt9.x"):
            with self.subTest(name=name):
                self.assertFalse(is_loop_name(name))
        for name in ("CONSOLE", "con-01", "nul_1", "COM10", "LPT0.x"):
            with self.subTest(name=name):
                self.assertTrue(is_loop_name(name))
        self.assertEqual(is_loop_name("x.CON"), True)  # only the part before the first dot is the device's


class TitleTest(unittest.TestCase):
    """docs/harness/TASK.md's limits, counted alike by the exporter and its verifier on both sides: a title of at
    most 80 characters as written (spaces too), 1 to 20 cards, a question of at most 200, an answer of at most 500, a
    quote of 4 to 300."""

    def verdicts(self, title=None, change=None):
        candidate = json.loads((ROOT / "samples" / "valid.json").read_text(encoding="utf-8"))
        if title is not None:
            candidate["title"] = title
        if change:
            change(candidate)
        try:
            export_review.validate(candidate, ROOT / "project" / "notes")
            exporter = None
        except export_review.ValidationError as exc:
            exporter = str(exc)
        found = verify_export.candidate_problems(candidate, ROOT / "project" / "notes")
        return exporter, (found[0] if found else None)

    def test_the_exporter_and_the_verifier_count_a_title_alike_on_both_sides_of_80(self):
        for title, accepted in (("题" * 80, True), ("题" * 81, False), (" " + "题" * 79, True),
                                (" " + "题" * 79 + " ", False), ("e\u0301" * 40, True), ("e\u0301" * 40 + "x", False)):
            with self.subTest(title=title):
                exporter, verifier = self.verdicts(title)
                self.assertEqual(exporter, verifier)
                self.assertEqual(verifier is None, accepted, verifier)

    def test_the_other_limits_are_counted_alike_on_both_sides(self):
        note = (ROOT / "project" / "notes" / "A01.md").read_text(encoding="utf-8").replace("\r\n", "\n")

        def cards(count):
            return lambda candidate: candidate.update(cards=[candidate["cards"][0]] * count)

        def field(name, value):
            return lambda candidate: candidate["cards"][0].update({name: value, "note_id": "A01"} if name == "quote"
                                                                 else {name: value})
        for change, accepted in ((cards(20), True), (cards(21), False), (cards(0), False),
                                 (field("question", "问" * 200), True), (field("question", "问" * 201), False),
                                 (field("answer", "答" * 500), True), (field("answer", "答" * 501), False),
                                 (field("quote", note[:4]), True), (field("quote", note[:3]), False),
                                 (field("quote", note[:300]), True), (field("quote", note[:301]), False)):
            with self.subTest(accepted=accepted):
                exporter, verifier = self.verdicts(change=change)
                self.assertEqual(exporter, verifier)
                self.assertEqual(verifier is None, accepted, verifier)


class CutShortTest(VerifyTestCase):
    """An honest interrupted loop is a note on its row; anything else wrong with it is said and counts."""

    @classmethod
    def setUpClass(cls):
        super(VerifyTestCase, cls).setUpClass()

        def interrupted_in_attempt_2(root, name, sample):
            if name.endswith("-02"):
                raise KeyboardInterrupt
            return harness.run_harness(root, name, sample)
        cls.make("cut", "stuck", run_child=interrupted_in_attempt_2)
        cls.alone = cls.root / "alone"
        for rel in ("loop-runs/cut", "runs/cut-01"):
            shutil.copytree(cls.root / rel, cls.alone / rel)

    def row(self):
        return class_check.workspace_row(self.alone, "某某", course=class_check.TeacherCourse(self.root))

    def test_an_honest_cut_short_loop_is_a_note_and_an_edited_one_is_not(self):
        row = self.row()
        self.assertEqual(row["result"], "incomplete", row)  # a note: the loop counts for no case, holds nothing back
        self.assertEqual([(kind, note) for kind, note in zip(row["note_kinds"], row["notes"]) if kind == "cut_short"],
                         [("cut_short", Finding("cut_short", folder="loop-runs/cut",
                                                stop="interrupted/keyboard_interrupt").sentence())])
        path = self.alone / "loop-runs" / "cut" / "loop.json"
        original = path.read_bytes()
        self.addCleanup(path.write_bytes, original)
        record = json.loads(original)
        record["attempts"][0]["feedback"]["message"] = "另一条消息"  # what only the comparison with its child catches
        path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
        row = self.row()
        self.assertEqual((row["result"], row.get("notes", [])), ("fail", []), row)

    def test_a_cut_short_loop_with_something_else_for_a_person_is_not_set_aside(self):
        path = self.alone / "loop-runs" / "cut" / "loop.json"
        original = path.read_bytes()
        self.addCleanup(path.write_bytes, original)
        record = json.loads(original)  # its wall clock stepped once, between its start and its attempt
        record["started_at"] = later(record["started_at"], 3600)
        record["segments"][0]["started_at"] = later(record["segments"][0]["started_at"], 3600)
        record["segments"][0]["wall_minus_monotonic"] += 3600
        path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
        row = self.row()
        self.assertEqual((row["result"], row.get("notes", [])), ("needs_human", []), row)


class CourseVersionNoticeTest(unittest.TestCase):
    """The notice above the table: at least half the submissions with loops (two or more) share other course files."""

    def files(self, sharing, others):
        seen = (("docs/loop/TASK.md", "a" * 64),)
        checked = [SimpleNamespace(loops=[{"course_seen": seen}]) for _ in range(sharing)]
        checked += [SimpleNamespace(loops=[{"course_seen": ()}]) for _ in range(others)]
        checked.append(SimpleNamespace(loops=[]))  # a submission without loops counts for neither side
        return class_check.other_course_version(checked)

    def test_exactly_half_is_enough_and_less_or_one_alone_is_not(self):
        self.assertEqual(self.files(2, 2), ["docs/loop/TASK.md"])
        self.assertEqual(self.files(3, 2), ["docs/loop/TASK.md"])
        self.assertEqual(self.files(2, 3), [])
        self.assertEqual(self.files(1, 1), [])  # half, but one submission alone is no course version


class RosterMatchTest(unittest.TestCase):
    def roster(self, *people):
        return SimpleNamespace(people=[Person(number, name, person_id, []) for number, (name, person_id) in
                                       enumerate(people)])

    def test_a_hand_in_two_people_match_goes_to_neither_unless_its_id_settles_it(self):
        roster = self.roster(("王五", "100005"), ("王五", "100006"), ("赵六", "100007"))
        index = {}
        for number, person in enumerate(roster.people):
            for key in person.keys:
                index.setdefault(key, []).append(number)
        item = SimpleNamespace(names=["王五"], student_id="")
        self.assertEqual(whose(item, roster, index), SEVERAL)  # given to neither of them
        self.assertEqual(whose(SimpleNamespace(names=["王五"], student_id="100006"), roster, index), 1)
        self.assertIsNone(whose(SimpleNamespace(names=["王五"], student_id="999"), roster, index))
        self.assertEqual(whose(SimpleNamespace(names=["赵六"], student_id=""), roster, index), 2)


class LoopNumbersTest(unittest.TestCase):
    def test_the_suggested_name_is_one_nothing_uses(self):
        root = Path(self.enterContext(tempfile.TemporaryDirectory()))
        (root / "loop-runs" / "repair-01").mkdir(parents=True)
        (root / "runs" / "Repair-02-01").mkdir(parents=True)  # repair-02 is used too: by a child, in another case
        args = argparse.Namespace(run="repair-01", scenario="repair", max_attempts=3, max_seconds=30,
                                  attempt_timeout=None)
        message = arguments.name_taken_message(cli.NameTaken("loop-runs/repair-01"), args, root)
        self.assertIn("--run repair-03 --scenario repair", message)

    def test_a_time_budgets_elapsed_seconds_is_the_reading_it_judged(self):
        # start 0; round 1 at 0, attempt 1 ends at 31, decided at 31.2; round 2 judges 31.5; the end read at 32
        root = course_copy(self)
        with contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(root, "t", "repair", **FakeTime(0, 0, 31, 31.2, 31.5, 32).options())
        self.assertEqual((record["reason"], record["elapsed_seconds"], record["segments"][0]["elapsed_seconds"]),
                         ("time_budget", 31.5, 32))


class RefusedConnectionTest(unittest.TestCase):
    def test_a_refused_connection_costs_no_tokens(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        chat = client.ChatClient(f"http://127.0.0.1:{port}", "sk-test", sleep=lambda seconds: None,
                                 random=lambda: 0.5, max_retries=0)
        budget = TokenBudget()
        with self.assertRaises(errors.APIConnectionError):
            chat.complete([{"role": "user", "content": "问"}], [], budget)
        self.assertEqual(budget.record(), {"used": 0, "estimated": False, "budget": None})


if __name__ == "__main__":
    unittest.main()
