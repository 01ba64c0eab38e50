"""Tests of what the class check writes for the teacher and hands to students, when the class or the teacher's
machine is unusual: names no disk holds as they are, an output that cannot be written, the teacher's own folders
in a message, outputs reached through a link, rosters that repeat a person or are far too big, folders nested
deeper than Python's recursion limit, and the roster's two edge cases of matching (a hand-in that fits two people)
and of the class's course version (exactly half).

Records are made once (loop_lab in-process in a copy of the workspace): six honest loops, and six loops run while
one of the course files a child run watches (AGENTS.md) was edited, so a child's note names the reference copy.
"""
import io
import json
import os
import shutil
import unicodedata
import zipfile
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from classroom import check as class_check
from classroom import report as class_report
from classroom import roster as class_roster
from classroom import upload
from tests import test_class_check as class_tests
from tests.test_class_check import HONEST, in_process
from tests.test_class_intake import zip_folder
from tests.support import skip_on_windows
from tests.test_loop_lab import SharedWorkspaceTestCase


class TeacherOutputsTest(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.made = made = cls.root / "made"
        class_tests.ClassCheckTest.make_records.__func__(cls, made / "honest", HONEST[:1])
        agents = cls.root / "AGENTS.md"
        original = agents.read_bytes()
        agents.write_bytes(original + "\n（学生自己加的一行）\n".encode("utf-8"))
        class_tests.ClassCheckTest.make_records.__func__(cls, made / "edited", HONEST[:1])
        agents.write_bytes(original)

    def student(self, path, source="honest"):
        return class_tests.ClassCheckTest.student.__func__(type(self), path, source)

    def run_class(self, *args, cwd=None):
        code, stdout, stderr = in_process(self.root, *args, cwd=cwd)
        return code, [json.loads(line) for line in stdout.splitlines()], stderr

    # --- feedback names as every disk holds them ---------------------------------------------------

    def test_feedback_names_differ_as_every_disk_compares_them_and_fit_in_255_bytes(self):
        composed, decomposed = "Zoë", unicodedata.normalize("NFD", "Zoë")
        long_name = "张" * 85  # 255 bytes of UTF-8 before ".md"
        names = class_report.feedback_names([(composed, ""), (decomposed, ""), ("Anna", ""), ("anna", ""),
                                             (long_name, "1"), (long_name, "2")])
        keys = [unicodedata.normalize("NFC", name).casefold() for name in names.values()]
        self.assertEqual(len(set(keys)), 6, names)
        self.assertTrue(all(len(name.encode("utf-8")) <= 255 for name in names.values()), names)
        self.assertEqual(names[(long_name, "1")].encode("utf-8")[:240], long_name.encode("utf-8")[:240])
        self.assertLessEqual(len(class_report.safe_file_name("张" * 80).encode("utf-8")), class_report.NAME_BYTES)
        self.assertEqual(class_report.safe_file_name("张" * 80), "张" * 80)  # 240 bytes: within the limit, whole

    def test_a_long_name_gets_its_feedback_its_zip_folder_and_its_grade(self):
        long_name = "张" * 85  # a folder name of 255 bytes: its feedback file "….md" would be 258
        self.student(self.root / "long-class" / long_name)
        (self.root / "long-roster.txt").write_bytes(f"{long_name}\n".encode("utf-8"))
        code, rows, stderr = self.run_class("--class", "long-class", "--roster", "long-roster.txt", "--grades",
                                            "long-grades.csv", "--feedback", "long-feedback", "--feedback-zip",
                                            "long.zip")
        self.assertEqual(code, 1, stderr)  # one loop of six: incomplete
        (written,) = list((self.root / "long-feedback").iterdir())
        self.assertLessEqual(len(written.name.encode("utf-8")), 255)
        with zipfile.ZipFile(self.root / "long.zip") as archive:
            (member,) = archive.namelist()
        self.assertLessEqual(len(member.split("/")[0].encode("utf-8")), 255)
        self.assertIn(",incomplete,16.67,", (self.root / "long-grades.csv").read_text(encoding="utf-8"))
        moodle = upload.folder_name("欧阳" * 43 + "_100001_assignsubmission_file", set())  # as a ZIP may name it
        self.assertLessEqual(len(moodle.encode("utf-8")), 255)
        self.assertEqual(moodle.split("_")[1:], ["100001", "assignsubmission", "file"])  # what Moodle reads
        self.assertTrue(moodle.startswith("欧阳欧阳"))
        short = "张三_100001_assignsubmission_file_"
        self.assertEqual(upload.folder_name(short, set()), short)  # a name that fits is the download's own
        used = set()
        self.assertEqual([upload.folder_name(name, used) for name in ("Anna", "anna", "Zoë", "Zoe\u0308")],
                         ["Anna", "anna-2", "Zoë", "Zoe\u0308-2"])  # one folder each, as every disk compares names

    def test_one_unwritable_feedback_file_stops_nobody_elses_and_is_said(self):
        for name in ("张三", "李四", "王五"):
            self.student(self.root / "three" / name)
        real = class_report.write_text_atomic

        def fails_for_lisi(path, text, encoding):
            if Path(path).name == "李四.md":
                raise PermissionError("read-only")
            return real(path, text, encoding)
        with mock.patch.object(class_report, "write_text_atomic", side_effect=fails_for_lisi):
            code, rows, stderr = self.run_class("--class", "three", "--feedback", "three-feedback",
                                                "--report", "three.md")
        self.assertEqual(sorted(path.name for path in (self.root / "three-feedback").iterdir()), ["张三.md", "王五.md"])
        self.assertTrue((self.root / "three.md").exists())
        self.assertIn(" three-feedback/李四.md", stderr)  # the file that could not be written is named
        self.assertEqual(code, 1)

    # --- nothing of the teacher's machine in what a student receives -------------------------------

    def test_no_folder_of_the_teachers_machine_reaches_a_students_feedback(self):
        self.student(self.root / "edited-class" / "张三", "edited")
        outside = self.root.parent / f"{self.root.name}-elsewhere"
        outside.mkdir()
        self.addCleanup(shutil.rmtree, outside)
        code, rows, stderr = self.run_class("--class", str(self.root / "edited-class"), "--feedback",
                                            str(self.root / "edited-feedback"), "--report",
                                            str(self.root / "edited.md"), cwd=outside)
        teacher_sees = (self.root / "edited.md").read_text(encoding="utf-8")
        shown = os.path.relpath(self.root, outside).replace(os.sep, "/")
        self.assertIn(shown, teacher_sees)  # the teacher is told where the reference copy is
        feedback = (self.root / "edited-feedback" / "张三.md").read_text(encoding="utf-8")
        self.assertIn("AGENTS.md", feedback)  # the student is told which file
        self.assertNotIn(self.root.name, feedback)
        self.assertNotIn(shown, feedback)

    # --- outputs compared by the file they reach ---------------------------------------------------

    def test_grades_through_a_linked_folder_never_overwrite_the_roster(self):
        self.student(self.root / "linked-class" / "张三")
        roster = self.root / "linked-roster.txt"
        roster.write_bytes("张三\n".encode("utf-8"))
        try:
            os.symlink(self.root, self.root / "via", target_is_directory=True)
        except (OSError, NotImplementedError):
            self.skipTest("这里不能创建符号链接")
        for args in (("--grades", "via/linked-roster.txt"), ("--grades", f"via/../{self.root.name}/linked-roster.txt")):
            with self.subTest(args=args):
                code, rows, stderr = self.run_class("--class", "linked-class", "--roster", roster.name, *args)
                self.assertEqual((code, rows), (2, []))
                self.assertIn("是名单本身", stderr)
        code, rows, stderr = self.run_class("--class", "linked-class", "--report", "same.md", "--csv", "via/same.md")
        self.assertEqual((code, rows), (2, []))
        self.assertIn("不能是同一个文件", stderr)
        self.assertEqual(roster.read_bytes(), "张三\n".encode("utf-8"))

    def test_no_other_output_lands_on_a_students_feedback_file(self):
        # the class's grades, report or page written as 张三's feedback file would hand him everyone's results
        self.student(self.root / "fed-class" / "张三")
        (self.root / "fed-roster.txt").write_bytes("张三\n".encode("utf-8"))
        feedback = self.root / "fed-feedback"
        feedback.mkdir()
        for args in (("--grades", "fed-feedback/张三.md"), ("--html", "fed-feedback/张三.html"),
                     ("--report", "./fed-feedback/张三.md"), ("--csv", "fed-feedback/../fed-feedback/张三.md"),
                     ("--grades", "fed-feedback/张三.html", "--html", "fed.html")):
            with self.subTest(args=args):
                code, rows, stderr = self.run_class("--class", "fed-class", "--roster", "fed-roster.txt",
                                                    "--feedback", "fed-feedback", *args)
                written = os.listdir(feedback)
                for name in written:
                    (feedback / name).unlink()
                self.assertEqual((code, rows, written), (2, [], []), stderr)
        code, rows, stderr = self.run_class("--class", "fed-class", "--feedback", "fed-feedback", "--html",
                                            "fed-feedback/李四.html")  # no such student: a file of its own
        self.assertEqual((code, sorted(os.listdir(feedback))), (1, ["张三.html", "张三.md", "李四.html"]), stderr)

    # --- rosters that repeat a person or are far too big --------------------------------------------

    def roster_problem(self, name, text):
        (self.root / name).write_bytes(text.encode("utf-8"))
        self.student(self.root / "one-class" / "张三") if not (self.root / "one-class").exists() else None
        code, rows, stderr = self.run_class("--class", "one-class", "--roster", name)
        self.assertEqual((code, rows), (2, []), stderr)
        self.assertNotIn("Traceback", stderr)
        return stderr

    def test_a_repeated_identifier_is_refused_naming_both_lines(self):
        worksheet = ("Identifier,Full name,Grade,Maximum Grade\nParticipant 100001,张三,,100\n"
                     "Participant 100002,李四,,100\nParticipant 100001,张三,,100\n")
        self.assertIn("第 2 行和第 4 行是同一个人（100001）", self.roster_problem("twice.csv", worksheet))
        book = ("Student,ID,SIS Login ID,Section,L14 (5501)\n    Points Possible,,,,10\n"
                "\"Zhang, San\",2001,zs,A,\n\"Li, Si\",2001,ls,A,\n")
        self.assertIn("第 3 行和第 4 行是同一个人（2001）", self.roster_problem("twice-book.csv", book))
        self.assertIn("只有名字的名单分不清同名的人", self.roster_problem("twice.txt", "张伟\n\n李四\n张伟\n"))
        self.assertIn("第 1 行和第 4 行", self.roster_problem("twice-2.txt", "张伟\n\n李四\n张伟\n"))

    def test_a_roster_beyond_the_row_cap_is_refused_before_it_is_parsed(self):
        path = self.root / "rows.txt"
        with mock.patch.object(class_roster, "MAX_ROWS", 5):
            for ending in ("", "\n"):  # a last line with or without its line end is one line
                path.write_bytes(("\n".join(f"学生{i}" for i in range(5)) + ending).encode("utf-8"))
                self.assertEqual(len(class_roster.roster_of(path).people), 5)
            path.write_bytes("\n".join(f"学生{i}" for i in range(6)).encode("utf-8"))
            with self.assertRaisesRegex(class_roster.RosterError, "有 6 行，超过了核对的上限 5 行"):
                class_roster.roster_of(path)
        million = "a\n" * 1_000_000
        self.assertIn("有 1,000,000 行，超过了核对的上限 20,000 行", self.roster_problem("million.txt", million))

    def test_a_cell_beyond_csvs_limit_is_refused_naming_its_line(self):
        limit = 131_072
        fits = f"Identifier,Full name,Grade,Maximum Grade,Feedback comments\nParticipant 1,张三,,100,{'x' * limit}\n"
        (self.root / "fits.csv").write_bytes(fits.encode("utf-8"))
        self.assertEqual(len(class_roster.roster_of(self.root / "fits.csv").people), 1)
        too_long = fits.replace("x" * limit, "x" * (limit + 1))
        stderr = self.roster_problem("cell.csv", too_long)
        self.assertIn("第 2 行有一格超过 131,072 个字符", stderr)

    # --- no recursion a folder's depth can exhaust -----------------------------------------------------

    def test_pack_over_1100_nested_folders_writes_its_zip_and_its_row(self):
        skip_on_windows(self, "路径在 1,100 层文件夹之前早就超过 260 个字符了")
        from classroom import hand_in
        from classroom.intake import remove_tree
        import cli
        workspace = self.student(self.root / "deep-workspace")  # its evidence; the course files are the copy's
        self.addCleanup(remove_tree, workspace)  # before the copy's own clean-up, whose rmtree would recurse
        deep = workspace / "runs" / "notes"
        os.mkdir(deep)
        here = os.getcwd()
        try:
            os.chdir(deep)
            for _ in range(1100):
                os.mkdir("d")
                os.chdir("d")
            Path("f.txt").write_bytes(b"x")
        finally:
            os.chdir(here)
        out, err = io.StringIO(), io.StringIO()
        with mock.patch("sys.stdout", out), mock.patch("sys.stderr", err), \
                mock.patch.object(class_check, "HERE", self.root):
            code = hand_in.pack(cli.ChineseArgumentParser(), str(self.root / "deep.zip"), root=workspace)
        self.assertTrue((self.root / "deep.zip").exists(), err.getvalue())
        row = json.loads(out.getvalue())
        self.assertNotIn("RecursionError", json.dumps(row, ensure_ascii=False))
        self.assertEqual(code, 1)  # one loop of six: incomplete, read back from the ZIP
        self.assertEqual(row["result"], "incomplete", err.getvalue())

    # --- matching edge cases -------------------------------------------------------------------------

    def test_a_hand_in_that_fits_two_people_alike_is_nobodys(self):
        self.student(self.root / "namesake-class" / "张三")
        (self.root / "namesakes.csv").write_bytes(
            "Identifier,Full name,Grade,Maximum Grade\nParticipant 100001,张三,,100\nParticipant 100002,张三,,100\n"
            .encode("utf-8"))
        code, rows, stderr = self.run_class("--class", "namesake-class", "--roster", "namesakes.csv")
        self.assertEqual([(row["id"], row["result"]) for row in rows[:2]],
                         [("100001", "missing"), ("100002", "missing")])
        self.assertEqual(rows[2]["note_kinds"][0], "roster_several")

    def test_the_course_version_note_comes_at_exactly_half_of_the_submissions_with_loops(self):
        def item(*seen):
            return SimpleNamespace(loops=[{"course_seen": seen}] if seen is not None else [])
        changed = ("docs/loop/TASK.md", "abc")
        half = [item(changed), item(changed), item(), item()]
        self.assertEqual(class_check.other_course_version(half), ["docs/loop/TASK.md"])
        below = [item(changed), item(changed), item(), item(), item()]
        self.assertEqual(class_check.other_course_version(below), [])
        alone = [item(changed), item()]  # half, but one submission is no class-wide pattern
        self.assertEqual(class_check.other_course_version(alone), [])
        without_loops = [item(changed), item(changed), item(), SimpleNamespace(loops=[]), SimpleNamespace(loops=[])]
        self.assertEqual(class_check.other_course_version(without_loops), ["docs/loop/TASK.md"])
