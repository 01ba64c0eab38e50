"""The teacher's tools around the class check, promises tests/mutation.py found unguarded: the roster and its
grades file, the platforms' names, copies by clock readings, the cap on a student's problem lines, --pack's
refusal of names differing only in case. Each test fails with its mutant applied.

The six lesson cases are run once (loop_lab in-process, in a copy of the workspace); each class folder below is
laid out from copies of those records, `verify_loop.py --class` runs once over it, in-process, and each test
reads the rows it printed and the files it wrote.
"""
import csv
import datetime
import io
import json
import shutil
import tempfile
import zipfile
from pathlib import Path

import tests.test_class_check as class_tests
from classroom.check import workspace_row
from tests.test_class_check import HONEST, in_process
from tests.test_class_intake import zip_folder
from tests.test_copies import copy_loops, other_ids
from tests import test_hand_in
from tests.test_loop_lab import SharedWorkspaceTestCase

# Moodle's grading worksheet: two people named 王五 (told apart by their participant ids), a maximum of 25.01
# for 钱七 (half of it is 12.505: rounded half up, 12.51)
WORKSHEET = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Feedback comments\r\n"
             "Participant 100001,Zhang San,zs@example.edu,Submitted,,100.00,\r\n"
             "Participant 100004,李四,ls@example.edu,Submitted,,100.00,\r\n"
             "Participant 100005,王五,ww5@example.edu,No submission,,100.00,\r\n"
             "Participant 100006,王五,ww6@example.edu,Submitted,,100.00,\r\n"
             "Participant 100007,赵六,zl@example.edu,Submitted,,100.00,\r\n"
             "Participant 100008,钱七,qq@example.edu,Submitted,,25.01,\r\n")
HALF = ("stuck-01", "budget-01", "time-01")  # the loops 钱七 leaves out: three of the six cases pass


def rows_of(stdout):
    return [json.loads(line) for line in stdout.splitlines()]


def without_loops(folder, names):
    for name in names:
        shutil.rmtree(folder / "loop-runs" / name)
        for child in (folder / "runs").glob(f"{name}-0?"):
            shutil.rmtree(child)
    return folder


class ClassToolsPromiseTest(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.made = cls.root / "made"
        class_tests.ClassCheckTest.make_records.__func__(cls, cls.made / "honest", HONEST)

    @classmethod
    def student(cls, path):
        return class_tests.ClassCheckTest.student.__func__(cls, path)

    @classmethod
    def zipped(cls, target, keep=lambda folder: folder):
        folder = keep(cls.student(cls.root / "zipping" / target.name))
        return zip_folder(folder, target)

    # --- the roster and the grades file

    def roster_class(self):
        cd = self.root / "名单班"
        if not cd.exists():
            (cd / "王五_100006_assignsubmission_file_").mkdir(parents=True)
            self.zipped(cd / "王五_100006_assignsubmission_file_" / "王五.zip")
            self.student(cd / "zhangsan")
            self.student(cd / "李四")
            self.zipped(cd / "李四.zip")  # the same person once more
            failed = self.student(cd / "赵六")
            class_tests.forge(failed / "loop-runs" / "repair-01" / "loop.json",
                              lambda rec: rec.update(status="stalled", reason="repeated_failure"))
            without_loops(self.student(cd / "钱七"), HALF)
            (self.root / "工作表.csv").write_bytes(WORKSHEET.encode("utf-8"))
        code, stdout, stderr = in_process(self.root, "--class", cd.name, "--roster", "工作表.csv",
                                          "--grades", "成绩.csv")
        grades = list(csv.reader(io.StringIO((self.root / "成绩.csv").read_text(encoding="utf-8"))))
        return rows_of(stdout), {(row[0], row[1]): row[4] for row in grades[1:]}, stderr

    def test_each_hand_in_finds_its_person_on_the_roster(self):
        rows, _, stderr = self.roster_class()
        said = [(row["student"], row["id"], row["result"]) for row in rows]
        self.assertEqual(said[:6], [("Zhang San", "100001", "pass"), ("李四", "100004", "pass"),
                                    ("王五", "100005", "missing"), ("王五", "100006", "pass"),
                                    ("赵六", "100007", "fail"), ("钱七", "100008", "incomplete")], stderr)
        (again,) = rows[6:]  # 李四's second hand-in is listed after everyone, never in place of the first
        self.assertEqual(again["student"], "李四")
        self.assertEqual(again["note_kinds"][0], "roster_taken")

    def test_grades_follow_the_policy(self):
        _, grades, stderr = self.roster_class()
        self.assertEqual(grades, {("Participant 100001", "Zhang San"): "100.00",
                                  ("Participant 100004", "李四"): "100.00",
                                  ("Participant 100005", "王五"): "",  # missing: left as it was
                                  ("Participant 100006", "王五"): "100.00",
                                  ("Participant 100007", "赵六"): "0.00",  # fail: 0, not blank
                                  ("Participant 100008", "钱七"): "12.51"}, stderr)  # 25.01 x 3/6 = 12.505

    # --- the platforms' names

    def platform_class(self):
        cd = self.root / "平台班"
        if not cd.exists():
            cd.mkdir()
            self.zipped(cd / "张三_100001_assignsubmission_file_张三.zip")  # Moodle without a folder per student
            self.zipped(cd / "lisi_2001_9001_李四.zip", keep=lambda folder: without_loops(folder, HALF))
            self.zipped(cd / "lisi_2001_9005_李四-1.zip")  # Canvas: the later attachment, all six cases
        code, stdout, stderr = in_process(self.root, "--class", cd.name, "--feedback-zip", "平台反馈.zip")
        return {row["student"]: row for row in rows_of(stdout)}, stderr

    def test_the_latest_canvas_attachment_is_judged(self):
        rows, stderr = self.platform_class()
        self.assertEqual((rows["lisi"]["result"], rows["lisi"]["loops"]), ("pass", 6), stderr)

    def test_a_moodle_file_entry_gets_its_feedback_in_the_folder_moodle_matches(self):
        self.platform_class()
        with zipfile.ZipFile(self.root / "平台反馈.zip") as archive:
            names = archive.namelist()
        self.assertIn("张三_100001_assignsubmission_file_/张三.md", names)

    # --- copies by clock readings

    def clocks_class(self):
        cd = self.root / "时钟班"
        if not cd.exists():
            self.student(cd / "甲")
            shutil.copytree(cd / "甲", cd / "乙")  # the same readings, made an hour later: not the same clock
            other_ids(cd / "乙")
            for record in (cd / "乙" / "loop-runs").glob("*/loop.json"):
                class_tests.forge(record, later_by_an_hour)
            copy_loops(cd / "甲", cd / "丁", ("repair-01", "stuck-01", "budget-01"))  # three of 甲's loops
            other_ids(cd / "丁", at=0)
        code, stdout, stderr = in_process(self.root, "--class", cd.name)
        return {row["student"]: list(zip(row["kinds"], row["problems"])) for row in rows_of(stdout)}

    def test_readings_alike_at_other_moments_are_named_as_possibly_chance_not_as_the_same_clock(self):
        said = self.clocks_class()
        (shared,) = [text for kind, text in said["乙"] if kind == "shared_readings"]  # possibly chance, it says
        self.assertIn(" 甲 ", shared)
        self.assertIn(" 22 ", shared)
        self.assertNotIn("shared_clock", dict(said["乙"]))

    def test_the_loops_named_are_the_ones_whose_clocks_are_shared(self):
        said = self.clocks_class()
        (shared,) = [text for kind, text in said["甲"] if kind in ("shared_clock", "shared_readings") and " 丁 " in text]
        self.assertIn(" 丁 ", shared)
        self.assertIn("等 3 个", shared)  # 甲's fourth loop with attempts (semantic-01) is its own: 3 named

    # --- at most ten problem lines a student

    def test_a_student_is_shown_at_most_ten_problem_lines_then_a_count(self):
        folder = self.student(Path(tempfile.mkdtemp(dir=self.root)) / "洪水")
        for number in range(1, 13):
            loop = folder / "loop-runs" / f"bad-{number:02d}"
            loop.mkdir()
            (loop / "loop.json").write_bytes(b"{not json")
        row = workspace_row(folder, "洪水")
        self.assertEqual(row["result"], "fail")
        self.assertEqual(len(row["problems"]), 11, row["problems"])
        self.assertEqual(row["kinds"][-1], "more")

    # --- --pack

    def test_pack_refuses_two_names_differing_only_in_case_whatever_their_case(self):
        folder = self.student(Path(tempfile.mkdtemp(dir=self.root)) / "吴二")
        for name in ("CASE.txt", "Case.txt"):
            (folder / "runs" / "repair-01-01" / name).write_bytes(b"x")
        if len(list((folder / "runs" / "repair-01-01").glob("*.txt"))) < 2:
            self.skipTest("这个文件系统不分大小写")
        code, stdout, stderr = test_hand_in.HandInTest.pack(self, folder, folder.parent / "吴二.zip")
        self.assertEqual((code, stdout), (2, ""), stderr)
        self.assertIn("只差大小写", stderr)
        self.assertFalse((folder.parent / "吴二.zip").exists())


def later_by_an_hour(rec):
    """REC's start and finish an hour later on the wall clock (its monotonic readings unchanged)."""
    for field in ("started_at", "finished_at"):
        moment = datetime.datetime.strptime(rec[field], "%Y-%m-%dT%H:%M:%SZ") + datetime.timedelta(hours=1)
        rec[field] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
