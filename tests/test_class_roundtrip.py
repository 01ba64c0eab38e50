"""Round trips with today's platforms: a class handed over as Moodle and Canvas hand it over, checked, and what
the check wrote read back by the platforms' own import rules (tests/platform_rules.py, where each rule says where
in the platform's code it was read).

Records are made once (loop_lab in-process in a copy of the workspace): six honest loops, and the same without
`stuck`. Moodle: "Download all submissions" of 4.1 (folders without the trailing `_`) and of 4.0 (with it), a
student's ZIP over 1 MiB inside, the worksheet in English and in Chinese, in UTF-8 and GBK, a teacher's own grade
and comment, and a grade an earlier --grades run wrote before the student handed in again. Canvas: Chinese,
accented and underscored names lower-cased, a late file, a re-submission, the whole-gradebook export with two
assignments, grading-period and group totals, split names, SIS and custom columns, a teacher's earlier grade.
Each test checks what the platform would do with the files: every student matched, every grade and comment
where it belongs, the teacher's entries untouched, every feedback file in the right student's folder.
"""
import io
import json
import os
import shutil
import zipfile
from decimal import Decimal

from tests import test_class_check as class_tests
from tests.platform_rules import CanvasCourse, CanvasStudent, MoodleAssignment, Participant
from tests.test_class_check import HONEST, in_process
from tests.test_class_intake import zip_folder
from tests.test_loop_lab import SharedWorkspaceTestCase

T0, T1, T2 = 1_795_000_000, 1_795_100_000, 1_795_200_000  # graded before, worksheet downloaded, uploaded
TEACHERS = "内容很好，格式再整理一下。"  # a comment the teacher typed in Moodle
# what an earlier run wrote, with 83.33: comments are read back by their words (the form of a comment kind), so these
# guard the words an earlier grades file holds
EARLIER = "通过 5/6 个情景，缺少：stuck。补跑缺少的情景后重新打包提交。"


def moodle_class(lang="en"):
    return MoodleAssignment([
        Participant(100001, "张三", "zs@example.edu", submitted_at=T0),
        Participant(100002, "李四", "ls@example.edu", submitted_at=T0),
        Participant(100003, "王五", "ww@example.edu", submitted_at=T0, grade=Decimal(90), graded_at=T0,
                    comment=TEACHERS),
        Participant(100004, "孙七", "sq@example.edu"),
        Participant(100005, "Zhang_San", "zhangsan@example.edu", submitted_at=T0),
        Participant(100006, "周九", "zj@example.edu", submitted_at=T1, grade=Decimal("83.33"), graded_at=T0,
                    comment=EARLIER),
    ], lang)


SOURCES = {100001: "honest", 100002: "partial", 100003: "honest", 100005: "honest", 100006: "honest"}


class RoundTripTest(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.made = made = cls.root / "made"
        class_tests.ClassCheckTest.make_records.__func__(cls, made / "honest", HONEST)
        shutil.copytree(made / "honest", made / "partial")
        shutil.rmtree(made / "partial" / "loop-runs" / "stuck-01")
        for child in (made / "partial" / "runs").glob("stuck-01-*"):
            shutil.rmtree(child)
        cls.student_zips = {uid: cls.zipped(f"moodle-{uid}", source) for uid, source in SOURCES.items()}
        big = cls.root / "zipping" / "big.zip"  # 张三's ZIP carries a 1.5 MiB file beside the workspace
        shutil.copy(cls.student_zips[100001], big)
        with zipfile.ZipFile(big, "a") as archive:
            archive.writestr(zipfile.ZipInfo("作业说明/录屏.bin"), os.urandom(3 * 2 ** 19))
        cls.student_zips[100001] = big

    @classmethod
    def zipped(cls, name, source):
        folder = class_tests.ClassCheckTest.student.__func__(cls, cls.root / "zipping" / name, source)
        return zip_folder(folder, cls.root / "zipping" / f"{name}.zip")

    def check(self, *args):
        code, stdout, stderr = in_process(self.root, *args)
        rows = [json.loads(line) for line in stdout.splitlines()]
        return code, rows, stderr

    # --- Moodle ----------------------------------------------------------------------------------

    def moodle_download(self, moodle, version, name):
        """Moodle's download-all ZIP: each participant's folder holding their ZIP."""
        target = self.root / name
        with zipfile.ZipFile(target, "w") as archive:
            for uid, folder in moodle.folders(version).items():
                archive.writestr(f"{folder}/作业14.zip", self.student_zips[uid].read_bytes())
        return target

    def moodle_round_trip(self, lang, version, encoding="utf-8", bom=False, tag=""):
        moodle = moodle_class(lang)
        download = self.moodle_download(moodle, version, f"moodle{tag}.zip")
        worksheet = self.root / f"worksheet{tag}.csv"
        worksheet.write_bytes(moodle.worksheet(bom=bom).encode(encoding))
        code, rows, stderr = self.check("--class", download.name, "--roster", worksheet.name, "--grades",
                                        f"grades{tag}.csv", "--feedback-zip", f"feedback{tag}.zip", "--report",
                                        f"report{tag}.md")
        self.assertEqual(code, 1, stderr)  # 李四 is incomplete, 孙七 missing
        return moodle, rows, stderr

    def assert_moodle_imported(self, moodle, imported, stale_skipped=()):
        """Grades and comments landed as intended: ours where due, the teacher's own row untouched."""
        expected = {100001: Decimal(100), 100002: Decimal("83.33"), 100005: Decimal(100), 100006: Decimal(100)}
        for uid in stale_skipped:
            expected.pop(uid)
        self.assertEqual(imported.grades, expected)
        self.assertEqual(imported.skipped[100003], "unchanged")  # the teacher's 90 stays
        self.assertEqual(moodle.people[100003].comment, TEACHERS)
        self.assertNotIn(100003, imported.comments)
        self.assertNotIn(100004, imported.comments)  # nothing handed in: no comment either
        self.assertIn("缺少：stuck", imported.comments[100002])
        self.assertEqual(sorted(imported.seen), sorted(moodle.people))  # every row matched a participant

    def assert_feedback_in_place(self, moodle, tag, version):
        with zipfile.ZipFile(self.root / f"feedback{tag}.zip") as archive:
            folders = {name.split("/")[0] for name in archive.namelist()}
        self.assertEqual(folders, set(moodle.folders(version).values()))  # the download's own folder names
        taken, ignored = moodle.upload_feedback_zip((self.root / f"feedback{tag}.zip").read_bytes())
        self.assertEqual(ignored, [])
        self.assertEqual(sorted(taken), sorted(SOURCES))
        for uid in SOURCES:
            ((_, text),) = moodle.people[uid].feedback_files
            self.assertTrue(text.startswith(f"# 作业核对反馈：{moodle.people[uid].name}\n"),
                            text[:80])

    def test_moodle_4_1_english_worksheet_comes_back_as_intended(self):
        moodle, rows, stderr = self.moodle_round_trip("en", (4, 1), tag="-41")
        self.assertEqual([(row["student"], row["id"], row["result"]) for row in rows],
                         [("张三", "100001", "pass"), ("李四", "100002", "incomplete"), ("王五", "100003", "pass"),
                          ("孙七", "100004", "missing"), ("Zhang_San", "100005", "pass"), ("周九", "100006", "pass")])
        self.assertFalse(any(row.get("notes") for row in rows), rows)
        kept = "保留了名单里已有的成绩或评语：王五（成绩 90.00 和评语）"
        self.assertIn(kept, stderr)
        self.assertIn(kept, (self.root / "report-41.md").read_text(encoding="utf-8"))
        imported = moodle.upload_grades((self.root / "grades-41.csv").read_bytes(), T2)
        self.assert_moodle_imported(moodle, imported)
        self.assert_feedback_in_place(moodle, "-41", (4, 1))

    def test_moodle_before_4_1_chinese_worksheet_needs_ignore_modified_for_earlier_grades(self):
        moodle, rows, stderr = self.moodle_round_trip("zh_cn", (4, 0), bom=True, tag="-40")
        self.assertEqual([row["result"] for row in rows], ["pass", "incomplete", "pass", "missing", "pass", "pass"])
        data = (self.root / "grades-40.csv").read_bytes()
        self.assertTrue(data.startswith(b"\xef\xbb\xbf"))
        # Moodle cannot read its own Chinese date: 周九's earlier grade looks changed in Moodle since, and is skipped
        imported = moodle.upload_grades(data, T2)
        self.assertEqual(imported.skipped[100006], "modified in Moodle")
        self.assert_moodle_imported(moodle, imported, stale_skipped=(100006,))
        moodle = moodle_class("zh_cn")  # the same upload with "Allow updating records modified more recently"
        self.assert_moodle_imported(moodle, moodle.upload_grades(data, T2, ignoremodified=True))
        self.assert_feedback_in_place(moodle, "-40", (4, 0))

    def test_a_gbk_worksheet_is_read_and_written_back_in_utf8_with_a_bom(self):
        moodle, rows, stderr = self.moodle_round_trip("zh_cn", (4, 1), encoding="gbk", tag="-gbk")
        self.assertEqual(len(rows), 6)
        self.assertFalse(any(row.get("notes") for row in rows), rows)
        self.assertIn("是 GB18030 编码", stderr)
        self.assertIn("按 UTF-8（带 BOM）写出", stderr)
        data = (self.root / "grades-gbk.csv").read_bytes()
        self.assertTrue(data.startswith(b"\xef\xbb\xbf"))
        gbk = moodle.worksheet().encode("gbk")
        self.assertEqual(moodle_class("zh_cn").upload_grades(gbk, T2).error, "invalidgradeimport")  # as Moodle would
        self.assert_moodle_imported(moodle, moodle.upload_grades(data, T2, ignoremodified=True))

    def test_a_unicode_text_worksheet_is_written_back_with_commas(self):
        moodle = moodle_class("en")
        download = self.moodle_download(moodle, (4, 1), "moodle-u16.zip")
        tabbed = moodle.worksheet().replace(",", "\t")  # Excel's "Unicode text": UTF-16 with its BOM, tabs
        (self.root / "worksheet-u16.txt").write_bytes(tabbed.encode("utf-16"))
        code, rows, stderr = self.check("--class", download.name, "--roster", "worksheet-u16.txt",
                                        "--grades", "grades-u16.csv")
        self.assertIn("逗号分隔", stderr)
        data = (self.root / "grades-u16.csv").read_bytes()
        self.assertTrue(data.startswith(b"\xef\xbb\xbf"))
        imported = moodle.upload_grades(data, T2)
        self.assertEqual(imported.error, None)
        self.assertEqual(imported.grades[100001], Decimal(100))

    def test_a_re_submission_updates_what_an_earlier_run_wrote_and_nothing_of_the_teachers(self):
        moodle = moodle_class("en")
        moodle.people[100006].comment += "请补交。"  # once the teacher edits that comment, the row is theirs
        download = self.moodle_download(moodle, (4, 1), "moodle-edit.zip")
        (self.root / "worksheet-edit.csv").write_bytes(moodle.worksheet().encode("utf-8"))
        code, rows, stderr = self.check("--class", download.name, "--roster", "worksheet-edit.csv",
                                        "--grades", "grades-edit.csv")
        imported = moodle.upload_grades((self.root / "grades-edit.csv").read_bytes(), T2)
        self.assertNotIn(100006, imported.grades)
        self.assertEqual(moodle.people[100006].grade, Decimal("83.33"))
        self.assertIn("周九（成绩 83.33 和评语）", stderr)

    def test_a_teachers_comment_with_no_grade_yet_is_kept(self):
        moodle = moodle_class("en")
        moodle.people[100001].comment = TEACHERS  # typed before grading: the grade cell is still empty
        download = self.moodle_download(moodle, (4, 1), "moodle-own.zip")
        (self.root / "worksheet-own.csv").write_bytes(moodle.worksheet().encode("utf-8"))
        self.check("--class", download.name, "--roster", "worksheet-own.csv", "--grades", "grades-own.csv")
        imported = moodle.upload_grades((self.root / "grades-own.csv").read_bytes(), T2)
        self.assertNotIn(100001, imported.grades)
        self.assertIn(100002, imported.grades)  # a row of the check's own is still written
        self.assertEqual((moodle.people[100001].grade, moodle.people[100001].comment), (None, TEACHERS))

    # --- Canvas ----------------------------------------------------------------------------------

    def canvas_course(self):
        course = CanvasCourse(
            [CanvasStudent(12345, "", "李四", "lisi", "s12345"), CanvasStudent(12346, "Wu", "Wang", "wangwu", "s12346"),
             CanvasStudent(12347, "José", "Núñez", "jnunez", "s12347"),
             CanvasStudent(12348, "Jiu", "Zhou", "zhoujiu", "s12348"),
             CanvasStudent(12349, "Qi", "Qian_Li", "qianqi", "s12349")],
            {5501: ("Lesson 14 loops", Decimal(10), None), 5502: ("Lesson 13 harness", Decimal(20), None),
             5503: ("Lesson 14 make-up", Decimal(10), {12347})},  # assigned to one student: N/A for the others
            custom_columns=["Notes"])
        course.scores[(12349, 5501)] = "9.50"  # the teacher graded 钱 by hand already
        course.scores[(12345, 5502)] = "18.00"
        return course

    def canvas_download(self, course, folder):
        target = self.root / folder
        target.mkdir()
        files = [(12345, 9001, "作业.zip", "partial", False), (12345, 9005, "作业-1.zip", "honest", False),
                 (12346, 9002, "hand-in.zip", "honest", True), (12347, 9003, "entrega.zip", "honest", False),
                 (12349, 9004, "qq.zip", "honest", False)]
        for uid, attachment, name, source, late in files:
            made = self.zipped(f"canvas-{folder}-{attachment}", source)
            shutil.copy(made, target / course.download_name(uid, attachment, name, late=late))
        return sorted(path.name for path in target.iterdir())

    def test_canvas_names_and_the_whole_gradebook_come_back_as_intended(self):
        course = self.canvas_course()
        names = self.canvas_download(course, "canvas")
        self.assertIn("wangwu_late_12346_9002_hand-in.zip", names)
        self.assertIn("núñezjosé_12347_9003_entrega.zip", names)
        self.assertIn("李四_12345_9005_作业-1.zip", names)
        self.assertIn("qian_liqi_12349_9004_qq.zip", names)
        book = self.root / "gradebook.csv"
        book.write_bytes(course.export(split_names=True, period="2026", bom=True).encode("utf-8"))
        code, rows, stderr = self.check("--class", "canvas", "--roster", book.name, "--grades", "canvas-grades.csv")
        self.assertEqual((code, rows), (2, []))  # two assignments: which one is this?
        listed = "Lesson 14 loops (5501)、Lesson 13 harness (5502)、Lesson 14 make-up (5503)"
        self.assertIn(f"里有 3 个作业列（{listed}）", stderr)
        code, rows, stderr = self.check("--class", "canvas", "--roster", book.name, "--grades", "canvas-grades.csv",
                                        "--assignment", "5504")
        self.assertEqual((code, rows), (2, []))
        self.assertIn(f"没有叫 5504 的作业列：作业列是 {listed}", stderr)
        code, rows, stderr = self.check("--class", "canvas", "--roster", book.name, "--grades", "canvas-grades.csv",
                                        "--assignment", "5503")
        imported = course.import_gradebook((self.root / "canvas-grades.csv").read_bytes())
        self.assertEqual(imported.changes, {(12347, 5503): "10.00"})
        written = (self.root / "canvas-grades.csv").read_text(encoding="utf-8")
        self.assertEqual(written.count(",N/A,"), 4)  # the others' cells left as Canvas wrote them
        for wanted in ("5501", "Lesson 14 loops"):
            with self.subTest(assignment=wanted):
                code, rows, stderr = self.check("--class", "canvas", "--roster", book.name, "--grades",
                                                "canvas-grades.csv", "--assignment", wanted)
                self.assertEqual({row["id"]: row["result"] for row in rows},  # in the gradebook's order
                                 {"12345": "pass", "12346": "pass", "12347": "pass", "12348": "missing",
                                  "12349": "pass"}, stderr)
                self.assertEqual(len(rows), 5)
                lisi = next(row for row in rows if row["id"] == "12345")
                self.assertEqual(lisi["note_kinds"], ["earlier_attempts"])
                self.assertIn("李四_12345_9001_作业.zip", lisi["notes"][0])
                self.assertIn("Qi Qian_Li（成绩 9.50）", stderr)
                imported = course.import_gradebook((self.root / "canvas-grades.csv").read_bytes())
                self.assertEqual((imported.error, imported.new_assignments, imported.unknown_students), (None, [], []))
                self.assertEqual(imported.changes, {(12345, 5501): "10.00", (12346, 5501): "10.00",
                                                    (12347, 5501): "10.00"})

    def test_a_gradebook_resaved_as_gbk_is_written_back_as_canvas_reads_it(self):
        course = self.canvas_course()
        self.canvas_download(course, "canvas-gbk")
        text = course.export().replace("José", "Jose").replace("Núñez", "Nunez")
        (self.root / "gradebook-gbk.csv").write_bytes(text.encode("gbk"))
        self.assertEqual(course.import_gradebook(text.encode("gbk")).error, "Gradebook import did not parse cleanly")
        code, rows, stderr = self.check("--class", "canvas-gbk", "--roster", "gradebook-gbk.csv",
                                        "--grades", "canvas-gbk-grades.csv", "--assignment", "5501")
        imported = course.import_gradebook((self.root / "canvas-gbk-grades.csv").read_bytes())
        self.assertEqual(imported.error, None)
        self.assertEqual(sorted(imported.changes), [(12345, 5501), (12346, 5501), (12347, 5501)])  # found by ID

    def test_an_anonymous_canvas_download_is_matched_by_user_id(self):
        course = self.canvas_course()
        target = self.root / "canvas-anonymous"
        target.mkdir()
        for uid, attachment, late in ((12345, 9101, False), (12346, 9102, True)):
            name = course.download_name(uid, attachment, "hand-in.zip", late=late, anonymous=True)
            shutil.copy(self.zipped(f"anonymous-{uid}", "honest"), target / name)
        self.assertEqual(sorted(path.name for path in target.iterdir()),
                         ["12345_9101_hand-in.zip", "late_12346_9102_hand-in.zip"])
        (self.root / "gradebook-anonymous.csv").write_bytes(course.export().encode("utf-8"))
        code, rows, stderr = self.check("--class", "canvas-anonymous", "--roster", "gradebook-anonymous.csv",
                                        "--grades", "canvas-anonymous-grades.csv", "--assignment", "5501")
        self.assertEqual({row["id"]: row["result"] for row in rows}["12346"], "pass", stderr)
        self.assertFalse(any(row.get("notes") for row in rows), rows)
        imported = course.import_gradebook((self.root / "canvas-anonymous-grades.csv").read_bytes())
        self.assertEqual(imported.changes, {(12345, 5501): "10.00", (12346, 5501): "10.00"})

    def test_what_an_earlier_run_wrote_is_told_from_the_teachers_own_entries(self):
        from classroom import grades
        hundred = Decimal(100)
        cases = [  # (grade cell, comment cell, the teacher's own?)
            ("", "", False), ("-", "", False), ("N/A", "", False),
            ("90.00", "", True), ("", TEACHERS, True), ("0.00", "", True),
            ("100.00", "六个情景都有通过的循环。内容是否合适仍由老师审阅。", False),
            ("95.00", "六个情景都有通过的循环。内容是否合适仍由老师审阅。", True),  # the grade changed by hand
            ("83.33", EARLIER, False), ("83,33", EARLIER, False), ("83.34", EARLIER, True),
            ("83.33", EARLIER + "请补交。", True),
            ("0.00", "有记录与证据不符（repair），详见反馈文件。", False),
            ("", "没能打开你的提交，还没有核对：请按 README「交作业」用 --pack 打包后重新提交。", False),
            ("60.00", "没能打开你的提交，还没有核对：请按 README「交作业」用 --pack 打包后重新提交。", True),
        ]
        for grade_cell, comment_cell, expected in cases:
            with self.subTest(grade=grade_cell, comment=comment_cell):
                self.assertIs(grades.teachers_own(grade_cell, comment_cell, hundred), expected)
        self.assertIs(grades.teachers_own("8.33", EARLIER, Decimal(10)), False)  # 10 × 5/6, of a maximum of 10

    def test_late_is_read_in_either_case_and_never_taken_for_the_name(self):
        from classroom.platforms import handed_in
        folder = self.root / "canvas-late-case"
        folder.mkdir()
        for name in ("wangwu_LATE_12346_9002_a.zip", "núñezjosé_late_12347_9003_b.zip", "李四_12345_9001_c.zip"):
            (folder / name).write_bytes(b"")
        handed, _ = handed_in(folder)
        self.assertEqual(sorted((person.student, person.student_id) for person in handed),
                         [("núñezjosé", "12347"), ("wangwu", "12346"), ("李四", "12345")])

    def test_assignment_is_for_a_canvas_gradebook_only(self):
        (self.root / "plain-roster.txt").write_bytes("张三\n".encode("utf-8"))
        (self.root / "one").mkdir()
        shutil.copy(self.student_zips[100001], self.root / "one" / "张三.zip")
        for args, words in ((("--roster", "plain-roster.txt", "--assignment", "5501"), "不是 Canvas 的成绩册"),
                            (("--assignment", "5501"), "请同时用 --roster 给出成绩册")):
            with self.subTest(args=args):
                code, rows, stderr = self.check("--class", "one", *args)
                self.assertEqual((code, rows), (2, []))
                self.assertIn(words, stderr)
        code, rows, stderr = self.check("--assignment", "5501", "loop-runs/x")
        self.assertEqual((code, rows), (2, []))
        self.assertIn("只能和 --class 一起用", stderr)

    def test_a_semicolon_gradebook_with_decimal_commas_and_a_utf16_list_without_a_bom(self):
        course = self.canvas_course()
        self.canvas_download(course, "canvas-semicolon")
        book = self.root / "gradebook-semicolon.csv"
        book.write_bytes(course.export(delimiter=";", decimal=",").encode("utf-8"))  # 10,00 points possible
        code, rows, stderr = self.check("--class", "canvas-semicolon", "--roster", book.name,
                                        "--grades", "canvas-semicolon-grades.csv", "--assignment", "5501")
        data = (self.root / "canvas-semicolon-grades.csv").read_bytes()
        self.assertIn(b";10.00;", data)  # a full grade of the points possible, written with the roster's delimiter
        imported = course.import_gradebook(data)
        self.assertEqual(imported.changes, {(12345, 5501): "10.00", (12346, 5501): "10.00", (12347, 5501): "10.00"})
        for encoding in ("utf-16-le", "utf-16-be"):  # no BOM: told by where the zero bytes are
            with self.subTest(encoding=encoding):
                (self.root / "list-u16.txt").write_bytes("李四\r\n王五\r\n".encode(encoding))
                code, rows, stderr = self.check("--class", "canvas-semicolon", "--roster", "list-u16.txt")
                self.assertEqual([row["student"] for row in rows[:2]], ["李四", "王五"], stderr)
