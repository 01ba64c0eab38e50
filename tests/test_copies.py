"""Copies found by what is hard to fake: the monotonic readings and durations two submissions share.

The six lesson cases are run once in a copy of the workspace; the class folder then holds an honest student, a
copy of that student's work whose every record id differs in one hex digit (the cheapest copy the id rule missed),
another student with clocks of their own, a copy of three loops (named) and of two (not named), and a submission
holding one loop twice under two names (never named: one machine repeats itself). A second class holds replays:
the same student's loops with new ids and every wall time moved (by an hour; each loop by days of its own), named
by their readings alone, and a replay of one loop with attempts fewer (not named). Copies are found by grouping:
a synthetic class of records shared thousands of times is named in one line each, never pair by pair.
"""
import datetime
import json
import re
import shutil
import unittest
from pathlib import Path

from classroom import copies
from tests import test_class_check
from tests.test_class_check import HONEST, fresh_ids, in_process
from tests.test_loop_lab import SharedWorkspaceTestCase
from tests.support import fields_of


def other_ids(folder, at=-1):
    """Every record id under FOLDER with its hex digit AT changed, nothing else."""
    for path in [*Path(folder).glob("loop-runs/*/loop.json"), *Path(folder).glob("runs/*/run.json")]:
        text = path.read_text(encoding="utf-8")
        old = json.loads(text)["id"]
        digits = list(old)
        digits[at] = "0" if digits[at] != "0" else "1"
        path.write_bytes(text.replace(old, "".join(digits)).encode("utf-8"))


def replay(folder, shift, at):
    """Every wall time of every record under FOLDER (a segment's wall_minus_monotonic too) moved by SHIFT(loop name), a
    timedelta, the same for a loop and its children (so the one-loop check still passes), and every id's hex digit
    AT changed: a classmate's loops replayed."""
    for path in [*Path(folder).glob("loop-runs/*/loop.json"), *Path(folder).glob("runs/*/run.json")]:
        loop = path.parent.name if path.name == "loop.json" else path.parent.name.rpartition("-")[0]
        text = path.read_text(encoding="utf-8")
        moved = re.sub(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"', lambda found: json.dumps(
            (datetime.datetime.strptime(found[1], "%Y-%m-%dT%H:%M:%SZ") + shift(loop)).strftime("%Y-%m-%dT%H:%M:%SZ")),
                       text)
        assert moved != text, path  # every record says when it ran
        moved = re.sub(r'"wall_minus_monotonic": ([0-9.]+)', lambda found: '"wall_minus_monotonic": ' + str(
            round(float(found[1]) + shift(loop).total_seconds(), 3)), moved)  # the same reading as its start
        path.write_bytes(moved.encode("utf-8"))
    other_ids(folder, at)


def copy_loops(source, target, names):
    for name in names:
        shutil.copytree(source / "loop-runs" / name, target / "loop-runs" / name)
        for child in (source / "runs").glob(f"{name}-0?"):
            shutil.copytree(child, target / "runs" / child.name)


class CopiesTestCase(SharedWorkspaceTestCase):
    """One student's six cases are run once; a subclass's build(made, cd) makes the class folder cd from them, which
    is checked once."""
    folder, options = "班", ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        made = cls.root / "made"
        test_class_check.ClassCheckTest.make_records.__func__(cls, made / "honest", HONEST)
        cls.build(made, cls.root / cls.folder)
        cls.code, out, cls.err = in_process(cls.root, "--class", cls.folder, *cls.options)
        cls.rows = {row["student"]: row for row in map(json.loads, out.splitlines())}

    def said(self, student, kinds=("shared_clock", "shared_readings")):
        """STUDENT's reasons of KINDS (the clocks that submissions share), as the row words them."""
        row = self.rows[student]
        return [problem for kind, problem in zip(row["kinds"], row["problems"]) if kind in kinds]


class SameReadingsTest(CopiesTestCase):
    @classmethod
    def build(cls, made, cd):
        shutil.copytree(made / "honest", cd / "甲")
        shutil.copytree(made / "honest", cd / "乙")
        other_ids(cd / "乙")
        shutil.copytree(made / "honest", cd / "丙")
        fresh_ids(cd / "丙")
        shutil.copytree(made / "honest", cd / "戊")
        fresh_ids(cd / "戊")
        copy_loops(made / "honest", cd / "丁", ("repair-01", "stuck-01", "budget-01"))  # three of 甲's, ids changed
        other_ids(cd / "丁", at=0)
        copy_loops(made / "honest", cd / "己", ("repair-01", "semantic-01"))  # two: honest clocks share as many
        other_ids(cd / "己", at=1)
        renamed = cd / "戊" / "loop-runs" / "again-01"  # 戊's own repair loop, once more under another name
        shutil.copytree(cd / "戊" / "loop-runs" / "repair-01", renamed)
        text = (renamed / "loop.json").read_text(encoding="utf-8").replace('"repair-01', '"again-01')
        (renamed / "loop.json").write_bytes(text.replace("runs/repair-01", "runs/again-01").encode("utf-8"))
        for number in ("01", "02"):
            child = cd / "戊" / "runs" / f"again-01-{number}"
            shutil.copytree(cd / "戊" / "runs" / f"repair-01-{number}", child)
            run = (child / "run.json").read_text(encoding="utf-8").replace('"repair-01', '"again-01')
            (child / "run.json").write_bytes(run.encode("utf-8"))
        other_ids(renamed.parent.parent)

    def test_a_copy_with_every_id_changed_is_named_by_its_readings(self):
        for student, others, count in (("甲", "丁、乙", 22), ("乙", "丁、甲", 22), ("丁", "乙、甲", 18)):
            row = self.rows[student]
            self.assertEqual(row["result"], "needs_human", row)
            self.assertEqual(len(self.said(student)), 1, row["problems"])
            self.assertEqual(len(self.said(student, ("shared_clock",))), 1, row["problems"])
            self.assertIn(f" {others} ", self.said(student)[0])  # the others, named
            self.assertIn(f" {count} ", self.said(student)[0])  # the readings they share

    def test_students_with_clocks_of_their_own_are_not_named(self):
        self.assertEqual(self.rows["丙"]["result"], "pass", self.rows["丙"])

    def test_two_loops_alone_name_nobody(self):
        self.assertEqual(self.said("己"), [])
        self.assertNotIn("己", " ".join(self.said("甲")))

    def test_never_inside_one_submission(self):
        self.assertEqual(self.said("戊"), [], self.rows["戊"])


class ReplayTest(CopiesTestCase):
    """Readings alone: a classmate's loops replayed with new ids and wall times moved (by an hour, or each loop by
    days of its own) are named as a possible copy; one loop with attempts fewer, or readings of one's own, is not."""
    folder, options = "回放班", ("--feedback", "回放反馈")

    @classmethod
    def build(cls, made, cd):
        shutil.copytree(made / "honest", cd / "甲")
        shutil.copytree(made / "honest", cd / "庚")
        replay(cd / "庚", lambda loop: datetime.timedelta(hours=1), at=2)
        shutil.copytree(made / "honest", cd / "癸")
        replay(cd / "癸", lambda loop: datetime.timedelta(days=len(loop), minutes=7 * len(loop), seconds=13), at=3)
        shutil.copytree(made / "honest", cd / "辛")
        fresh_ids(cd / "辛")
        copy_loops(made / "honest", cd / "壬", ("repair-01", "stuck-01", "budget-01", "time-01", "permission-01"))
        replay(cd / "壬", lambda loop: datetime.timedelta(hours=2), at=4)  # three of the four loops with attempts

    def test_a_replay_with_wall_times_moved_and_new_ids_is_named(self):
        for student, others in (("甲", "庚、癸"), ("庚", "甲、癸"), ("癸", "庚、甲")):
            row = self.rows[student]
            self.assertEqual(row["result"], "needs_human", row)
            self.assertEqual(set(row["cases"].values()), {"pass"}, row)  # the one-loop check passes each loop
            self.assertEqual(len(self.said(student)), 1, row["problems"])
            self.assertEqual(len(self.said(student, ("shared_readings",))), 1, row["problems"])  # chance is said
            self.assertIn(f" {others} ", self.said(student)[0])
            self.assertIn(" 22 ", self.said(student)[0])

    def test_the_student_reads_that_it_may_be_chance(self):
        feedback = (self.root / "回放反馈" / "庚.md").read_text(encoding="utf-8")
        (line,) = [line for line in feedback.splitlines() if line.endswith(" `shared_readings`")]  # chance is said
        self.assertIn(" 2 ", line)  # how many others, never who
        self.assertIn(" 22 ", line)
        self.assertNotIn("甲", feedback)

    def test_students_with_readings_of_their_own_are_not_named(self):
        self.assertEqual(self.rows["辛"]["result"], "pass", self.rows["辛"])

    def test_one_loop_with_attempts_fewer_is_not_named(self):
        self.assertEqual(self.said("壬"), [])
        self.assertNotIn("壬", " ".join(self.said("甲")))


class Item:
    def __init__(self, student, records):
        self.student, self.student_id, self.records, self.copies = student, "", records, []


class GroupingTest(unittest.TestCase):
    """Copies are found by grouping: thousands of holders of one record cost one group and one line each."""

    def test_one_record_held_2500_times_inside_one_submission_is_one_line(self):
        item = Item("甲", [(("id", "a" * 32), f"runs/r{number:04d}/run.json") for number in range(2500)])
        copies.mark_copies([item], lambda finding: finding)
        self.assertEqual(len(item.copies), 1)
        self.assertEqual((item.copies[0].kind, len(fields_of(item.copies[0], "group")["names"])), ("copy_inside", 2500))
        self.assertLess(len(item.copies[0].sentence()), 400)

    def test_readings_shared_by_2000_submissions_name_a_few_each(self):
        keys = [("clock", "repair", "3", "30", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z",
                 tuple(f"0.{n:03d}" for n in range(first, first + 7))) for first in (0, 10, 20)]
        found = self.reason_of_2000_holding(keys)
        self.assertEqual((found.kind, found.fields["count"]), ("shared_clock", 21))
        self.assertEqual(fields_of(found, "people_more")["count"], 1999)

    def test_readings_alone_shared_by_2000_submissions_name_a_few_each(self):
        keys = [("readings", "repair", "3", "30", tuple(f"0.{n:03d}" for n in range(first, first + 11)))
                for first in (0, 20)]
        found = self.reason_of_2000_holding(keys)
        self.assertEqual((found.kind, found.fields["count"]), ("shared_readings", 22))
        self.assertEqual(fields_of(found, "people_more"), {"names": [f"学生{n}" for n in range(1, 6)], "count": 1999})

    def reason_of_2000_holding(self, keys):
        """The first of 2000 submissions that all hold the copy KEYS: one short reason each, naming a few others."""
        items = [Item(f"学生{number}", [(key, f"loop-runs/{key[-1][0]}/loop.json") for key in keys])
                 for number in range(2000)]
        copies.mark_copies(items, lambda finding: finding)
        self.assertTrue(all(len(item.copies) == 1 for item in items))
        self.assertLess(len(items[0].copies[0].sentence()), 600)
        return items[0].copies[0]

if __name__ == "__main__":
    unittest.main()
