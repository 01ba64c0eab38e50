"""Tests of the class check on downloads as each platform hands them over, with a roster, grades and feedback.

Records are made once (loop_lab in-process in a copy of the workspace): six honest loops, the same plus an extra
`slow` loop interrupted by Ctrl-C and a `repair` loop interrupted as its first child ended, and six loops run on
course files of an earlier release. A class folder is then laid out as Moodle, Canvas, Blackboard (receipts, two
attempts, a receipt with nothing uploaded) and GitHub Classroom name their downloads, plus a teacher's list at the
top; a second class is Moodle's download-all ZIP with its grading worksheet, round-tripped through --grades and
--feedback-zip; Canvas's gradebook, GitHub Classroom's roster and a plain list are rosters too. Each test reads what
the check printed and wrote, as the platform would read it.
"""
import csv
import io
import json
import shutil
import zipfile
from pathlib import Path
from unittest import mock

import harness
from classroom import releases
from tests import test_class_check as class_tests
from tests.test_class_check import HONEST, SIX_CASES, in_process
from tests.test_class_intake import zip_folder
from tests.test_loop_lab import SharedWorkspaceTestCase
from verifier import findings


def interrupt(seconds):
    raise KeyboardInterrupt  # Ctrl-C while the slow scenario's stand-in tool waits


def interrupt_after_child(root, name, sample):
    harness.run_harness(root, name, sample)
    raise KeyboardInterrupt  # Ctrl-C after the child ended, before the loop wrote its attempt's end


RECEIPT = "Name: {name} ({user})\nAssignment: 作业14\nDate Submitted: {time}\n\nFiles:\n\tOriginal filename: x.zip\n"
WORKSHEET = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
             "Last modified (submission),Last modified (grade),Feedback comments\r\n"
             "Participant 100001,张三,zs@example.edu,Submitted for grading,,100.00,Yes,"
             "\"Monday, 30 November 2026\",-,\r\n"
             "Participant 100002,李四,ls@example.edu,Submitted for grading,,100.00,Yes,"
             "\"Monday, 30 November 2026\",-,\r\n"
             "Participant 100003,周九,zj@example.edu,No submission,,100.00,Yes,-,-,\r\n")
WORKSHEET_ZH = WORKSHEET.replace("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
                                 "Last modified (submission),Last modified (grade),Feedback comments",
                                 "标识符,姓名,电子邮件地址,状态,成绩,最高分,成绩可以修改,最后修改（提交）,最后修改（成绩）,反馈评语"
                                 ).replace("Participant ", "参与者 ")


class PlatformsTest(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.made = made = cls.root / "made"
        class_tests.ClassCheckTest.make_records.__func__(cls, made / "honest", HONEST)
        extra = (*HONEST, ("slow-01", "slow", {"sleep": interrupt}),
                 ("late-01", "repair", {"run_child": interrupt_after_child}))
        class_tests.ClassCheckTest.make_records.__func__(cls, made / "interrupted", extra)
        task = cls.root / "docs" / "loop" / "TASK.md"
        original = task.read_bytes()
        task.write_bytes(original + "\n（上一版）\n".encode("utf-8"))  # the course as an earlier release had it
        cls.earlier_release = releases.current_fingerprint(cls.root)
        class_tests.ClassCheckTest.make_records.__func__(cls, made / "older", HONEST)
        task.write_bytes(original)
        cls.build_mixed()
        cls.build_moodle()

    @classmethod
    def student(cls, path, source="honest"):
        return class_tests.ClassCheckTest.student.__func__(cls, path, source)

    @classmethod
    def zipped(cls, target, source="honest"):
        place = f"{target.parent.parent.name}-{target.parent.name}-{target.name}"
        folder = cls.student(cls.root / "zipping" / place, source)
        return zip_folder(folder, target)

    @classmethod
    def build_mixed(cls):
        cd = cls.mixed = cls.root / "lesson-14-submissions"
        (cd / "张三_100001_assignsubmission_file_").mkdir(parents=True)
        cls.zipped(cd / "张三_100001_assignsubmission_file_" / "张三.zip")
        (cd / "张三_100001_assignsubmission_onlinetext_").mkdir()
        (cd / "张三_100001_assignsubmission_onlinetext_" / "onlinetext.html").write_bytes(b"<p>done</p>")
        latest = cls.zipped(cd / "lisi_2001_9005_李四-1.zip")
        shutil.copy(latest, cd / "lisi_LATE_2001_9001_李四.zip")  # an earlier attempt: the same records
        (cd / "lisi_2001_9006_说明.txt").write_bytes("我的说明".encode("utf-8"))
        for time, source in (("2026-11-30-10-15-00", "honest"), ("2026-12-01-09-00-00", "interrupted")):
            cls.zipped(cd / f"作业14_wangwu_attempt_{time}_王五.zip", source)
            (cd / f"作业14_wangwu_attempt_{time}.txt").write_bytes(
                RECEIPT.format(name="王五", user="wangwu", time=time).encode("utf-8"))
        (cd / "作业14_zhaoliu_attempt_2026-12-01-08-00-00.txt").write_bytes(
            RECEIPT.format(name="赵六", user="zhaoliu", time="x").encode("utf-8"))
        (cls.student(cd / "lesson-14-qianqi") / ".git").mkdir()
        cls.student(cd / "孙八", "older")
        (cd / "名单.csv").write_bytes("姓名\n张三\n".encode("utf-8"))
        earlier = {cls.earlier_release: {"release": "2026-11-30", "schema": "loop-run/4"}}
        with mock.patch.object(releases, "_known", earlier):
            cls.code, cls.stdout, cls.stderr = in_process(cls.root, "--class", cd.name, "--report", "mixed.md",
                                                          "--csv", "mixed.csv", "--feedback", "mixed-feedback")

    @classmethod
    def build_moodle(cls):
        """Moodle's download-all ZIP: one folder per participant and plugin, a ZIP inside."""
        download = cls.root / "moodle-download"
        (download / "张三_100001_assignsubmission_file_").mkdir(parents=True)
        cls.zipped(download / "张三_100001_assignsubmission_file_" / "张三.zip")
        (download / "李四_100002_assignsubmission_file_").mkdir()
        lisi = cls.student(cls.root / "zipping" / "李四-moodle")
        shutil.rmtree(lisi / "loop-runs" / "stuck-01")
        for child in (lisi / "runs").glob("stuck-01-*"):
            shutil.rmtree(child)
        zip_folder(lisi, download / "李四_100002_assignsubmission_file_" / "李四.zip")
        (download / "王五_100004_assignsubmission_file_").mkdir()  # someone the worksheet does not list
        cls.zipped(download / "王五_100004_assignsubmission_file_" / "王五.zip")
        cls.download = zip_folder(download, cls.root / "作业14-下载.zip")
        cls.worksheet = cls.root / "评分工作表.csv"
        cls.worksheet.write_bytes(WORKSHEET.encode("utf-8"))

    def rows(self, stdout=None):
        return [json.loads(line) for line in (stdout or self.stdout).splitlines()]

    def row(self, student, stdout=None):
        return next(row for row in self.rows(stdout) if row["student"] == student)

    # --- every platform's names

    def test_each_platform_gives_one_row_per_student_with_its_names(self):
        seen = {row["student"]: (row["id"], row["result"]) for row in self.rows()}
        self.assertEqual(seen, {"张三": ("100001", "pass"), "lisi": ("2001", "pass"), "王五": ("wangwu", "pass"),
                                "赵六": ("zhaoliu", "packaging"), "qianqi": ("", "pass"), "孙八": ("", "needs_human")})
        self.assertEqual(self.stderr.splitlines()[-1],
                         "全班 6 人：pass 4，incomplete 0，fail 0，needs_human 1，packaging 1。")

    def test_receipts_notes_and_lists_are_set_aside_once_never_rows(self):
        for name in ("作业14_wangwu_attempt_2026-12-01-09-00-00.txt", "lisi_2001_9006_说明.txt", "名单.csv",
                     "张三_100001_assignsubmission_onlinetext_"):
            with self.subTest(name=name):
                self.assertEqual(self.stderr.count(f" {self.mixed.name}/{name}"), 1)
                self.assertIn(f" `{self.mixed.name}/{name}`", (self.root / "mixed.md").read_text(encoding="utf-8"))
        said = findings.Finding("set_aside", entry=f"{self.mixed.name}/名单.csv", why=findings.Finding("aside_document"))
        self.assertIn(said.sentence(), self.stderr.splitlines())

    def test_a_receipt_with_nothing_uploaded_is_that_students_packaging_row(self):
        (problem,) = self.row("赵六")["problems"]
        self.assertEqual(self.row("赵六")["kinds"], ["packaging"])
        receipt = findings.Finding("blackboard_receipt_only", receipt="作业14_zhaoliu_attempt_2026-12-01-08-00-00.txt")
        self.assertIn(receipt.sentence(), problem)

    def test_the_latest_attempt_is_judged_and_the_earlier_named_never_as_a_copy(self):
        lisi, wangwu = self.row("lisi"), self.row("王五")
        self.assertEqual(lisi["problems"], [])
        earlier = lambda names: findings.Finding("earlier_attempts", count=len(names), names=names).sentence()  # noqa
        self.assertEqual((lisi["notes"], lisi["note_kinds"]), ([earlier(["lisi_LATE_2001_9001_李四.zip"])],
                                                               ["earlier_attempts"]))
        self.assertIn(earlier(["2026-11-30-10-15-00"]), wangwu["notes"])
        self.assertFalse(any("shared_record" in line["kinds"] for line in self.rows()))

    def test_an_honest_interrupted_extra_loop_is_a_note_not_a_hold_back(self):
        wangwu = self.row("王五")
        self.assertEqual((wangwu["result"], wangwu["loops"], wangwu["cases"]),
                         ("pass", 8, dict.fromkeys(SIX_CASES, "pass")))
        for loop in ("slow-01", "late-01"):  # stopped before its child began, and after it ended
            with self.subTest(loop=loop):
                (note,) = [(kind, note) for kind, note in zip(wangwu["note_kinds"], wangwu["notes"]) if loop in note]
                self.assertEqual(note[0], "cut_short")
                self.assertIn("interrupted/keyboard_interrupt", note[1])

    def test_an_older_version_is_said_once_and_never_as_altered(self):
        sun = self.row("孙八")
        (older,) = sun["problems"]
        self.assertEqual(sun["kinds"], ["older_versions"])
        self.assertIn("2026-11-30", older)
        feedback = (self.root / "mixed-feedback" / "孙八.md").read_text(encoding="utf-8")
        self.assertEqual(feedback.count(" `older_versions`"), 1)
        self.assertNotRegex(feedback + older, "被改过|改动过|不能算数")

    def test_each_students_feedback_shows_only_their_own_names(self):
        texts = {path.name: path.read_text(encoding="utf-8") for path in (self.root / "mixed-feedback").iterdir()}
        self.assertEqual(sorted(texts), sorted(["张三.md", "lisi.md", "王五.md", "赵六.md", "qianqi.md", "孙八.md"]))
        names = {"张三.md": ("张三", "100001"), "lisi.md": ("lisi", "2001", "李四"), "王五.md": ("王五", "wangwu"),
                 "赵六.md": ("赵六", "zhaoliu"), "qianqi.md": ("qianqi",), "孙八.md": ("孙八",)}
        for name, text in texts.items():
            others = [word for other, words in names.items() if other != name for word in words
                      if word not in names[name]]
            with self.subTest(name=name):
                self.assertEqual([word for word in others if word in text], [])
                self.assertNotIn(str(self.root), text)

    # --- Moodle's round trip: the download-all ZIP, the worksheet, grades and feedback back

    def moodle(self, *args, worksheet=None):
        return in_process(self.root, "--class", self.download.name, "--roster", (worksheet or self.worksheet).name,
                          *args)

    def test_the_download_all_zip_is_the_class_given_directly_or_as_the_only_entry(self):
        code, stdout, stderr = self.moodle()
        (self.root / "only").mkdir()
        shutil.copy(self.download, self.root / "only" / self.download.name)
        again = in_process(self.root, "--class", "only", "--roster", self.worksheet.name)
        self.assertEqual(again[1], stdout)
        self.assertEqual([(row["student"], row["result"]) for row in self.rows(stdout)],
                         [("张三", "pass"), ("李四", "incomplete"), ("周九", "missing"), ("王五", "pass")])
        self.assertEqual(self.row("周九", stdout)["cases"], dict.fromkeys(SIX_CASES, "missing"))
        self.assertEqual(self.row("王五", stdout)["note_kinds"][0], "roster_nobody")
        self.assertEqual(stderr.splitlines()[-1],
                         "全班 4 人：pass 2，incomplete 1，fail 0，needs_human 0，packaging 0，missing 1。")
        self.assertEqual(code, 1)

    def test_the_download_all_zip_beside_the_worksheet_is_still_the_class(self):
        """A teacher saves both of Moodle's downloads into one folder: the worksheet is no submission."""
        (self.root / "下载的").mkdir()
        shutil.copy(self.download, self.root / "下载的" / self.download.name)
        shutil.copy(self.worksheet, self.root / "下载的" / self.worksheet.name)
        code, stdout, stderr = in_process(self.root, "--class", "下载的", "--roster", self.worksheet.name)
        self.assertEqual((code, stdout), self.moodle()[:2], stderr)

    def test_grades_go_back_into_the_worksheet_and_only_its_own_two_columns_change(self):
        code, _, stderr = self.moodle("--grades", "成绩.csv", "--feedback-zip", "反馈.zip")
        self.assertEqual(code, 1, stderr)
        written = (self.root / "成绩.csv").read_bytes()
        self.assertEqual(written.count(b"\r\n"), WORKSHEET.count("\r\n"))
        before = list(csv.reader(io.StringIO(WORKSHEET)))
        after = list(csv.reader(io.StringIO(written.decode("utf-8"))))
        self.assertEqual(after[0], before[0])
        changed = {(r, c) for r, row in enumerate(before) for c, cell in enumerate(row) if after[r][c] != cell}
        self.assertEqual({before[0][c] for _, c in changed}, {"Grade", "Feedback comments"})
        self.assertEqual([row[4] for row in after[1:]], ["100.00", "83.33", ""])  # 5 of 6 cases: 83.333 -> 83.33
        self.assertEqual(after[3][9], "")  # nothing handed in: no comment
        self.assertEqual(after[2][9], findings.Finding("comment_incomplete", passed=5, lacking=["stuck"]).sentence())
        with zipfile.ZipFile(self.root / "反馈.zip") as archive:
            names = archive.namelist()
        self.assertEqual(sorted(names), ["张三_100001_assignsubmission_file_/张三.md",
                                         "李四_100002_assignsubmission_file_/李四.md",
                                         "王五_100004_assignsubmission_file_/王五.md"])
        self.assertEqual([name.split("_")[1] for name in sorted(names)], ["100001", "100002", "100004"])

    def test_a_worksheet_quoted_as_moodle_writes_it_keeps_its_quoting(self):
        """Moodle writes the worksheet with PHP's fputcsv: a field holding a space is quoted, line ends are LF.
        Lines the check has nothing to fill stay byte for byte, so a diff shows only the grades and comments."""
        quoted = ('Identifier,"Full name","Email address",Status,Grade,"Maximum Grade","Grade can be changed",'
                  '"Last modified (submission)","Last modified (grade)","Feedback comments"\n'
                  '"Participant 100001",张三,zs@example.edu,"Submitted for grading",,100.00,Yes,'
                  '"Monday, 30 November 2026, 10:15 AM",-,\n'
                  '"Participant 100003",周九,zj@example.edu,"No submission",,100.00,Yes,-,-,\n')
        worksheet = self.root / "工作表-moodle.csv"
        worksheet.write_bytes(quoted.encode("utf-8"))
        code, _, stderr = self.moodle("--grades", "成绩-moodle.csv", worksheet=worksheet)
        lines = (self.root / "成绩-moodle.csv").read_text(encoding="utf-8").split("\n")
        before = quoted.split("\n")
        self.assertEqual((lines[0], lines[2], lines[3]), (before[0], before[2], before[3]), stderr)
        self.assertTrue(lines[1].startswith(before[1].replace(",,100.00", ",100.00,100.00")), lines[1])

    def test_a_worksheet_in_chinese_or_of_unknown_headers_is_read_by_its_columns(self):
        chinese = self.root / "工作表-中文.csv"
        chinese.write_bytes(b"\xef\xbb\xbf" + WORKSHEET_ZH.encode("utf-8"))
        code, stdout, _ = self.moodle("--grades", "成绩-中文.csv", worksheet=chinese)
        written = (self.root / "成绩-中文.csv").read_bytes()
        self.assertTrue(written.startswith(b"\xef\xbb\xbf"))
        after = list(csv.reader(io.StringIO(written.decode("utf-8-sig"))))
        self.assertEqual([row[4] for row in after[1:]], ["100.00", "83.33", ""])
        unknown = self.root / "工作表-别的语言.csv"
        german = WORKSHEET.replace("Identifier", "Kennung").replace("Grade,Maximum Grade", "Bewertung,Höchstbewertung")
        unknown.write_bytes(german.replace("Participant ", "Teilnehmer/in ").encode("utf-8"))
        code, stdout, stderr = self.moodle(worksheet=unknown)
        self.assertEqual(len(self.rows(stdout)), 4, stderr)
        nothing = self.root / "别的表.csv"
        nothing.write_bytes("a,b\n1,2\n".encode("utf-8"))
        code, stdout, stderr = self.moodle(worksheet=nothing)
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("找到的列是 a、b", stderr)

    def test_outputs_are_refused_inside_the_class_on_the_roster_or_over_other_files(self):
        (self.root / "别的.csv").write_bytes(b"x,y\n")
        for args, words in ((("--grades", self.worksheet.name), "是名单本身"),
                            (("--grades", "别的.csv"), "已经存在，而且不是这个核对以前写出的成绩文件"),
                            (("--feedback-zip", "别的.csv"), "不是 .zip 文件名")):
            with self.subTest(args=args):
                code, stdout, stderr = self.moodle(*args)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn(words, stderr)
        self.assertEqual((self.root / "别的.csv").read_bytes(), b"x,y\n")

    # --- other rosters

    def test_a_canvas_gradebook_gets_its_assignment_column_and_refuses_several(self):
        book = self.root / "gradebook.csv"
        book.write_bytes(("Student,ID,SIS User ID,SIS Login ID,Section,Lesson 14 (5501),Current Score\r\n"
                          "    Points Possible,,,,,10.00,(read only)\r\n"
                          "\"Li, Si\",2001,s2001,lisi,A,,\r\n\"Zhou, Jiu\",2002,s2002,zhoujiu,A,,\r\n").encode("utf-8"))
        code, stdout, stderr = in_process(self.root, "--class", self.mixed.name, "--roster", book.name,
                                          "--grades", "canvas-grades.csv")
        after = list(csv.reader(io.StringIO((self.root / "canvas-grades.csv").read_text(encoding="utf-8"))))
        self.assertEqual(after[1][5], "10.00")  # the Points Possible row kept
        self.assertEqual([row[5] for row in after[2:]], ["10.00", ""])
        self.assertEqual(self.row("Li, Si", stdout)["result"], "pass")
        self.assertEqual(self.row("Zhou, Jiu", stdout)["result"], "missing")
        book.write_bytes(book.read_bytes().replace(b"Current Score", b"Lesson 15 (5502)"))
        code, stdout, stderr = in_process(self.root, "--class", self.mixed.name, "--roster", book.name,
                                          "--grades", "canvas-grades.csv")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("Lesson 14 (5501)、Lesson 15 (5502)", stderr)

    def test_a_github_roster_and_a_plain_list_get_result_grade_and_comment_columns(self):
        roster = self.root / "classroom_roster.csv"
        roster.write_bytes("identifier,github_username,github_id,name\r\nS7,qianqi,77,钱七\r\n".encode("utf-8"))
        code, stdout, _ = in_process(self.root, "--class", self.mixed.name, "--roster", roster.name,
                                     "--grades", "gh-grades.csv")
        after = list(csv.reader(io.StringIO((self.root / "gh-grades.csv").read_text(encoding="utf-8"))))
        self.assertEqual(after[0], ["identifier", "github_username", "github_id", "name", "result", "grade", "comment"])
        self.assertEqual(after[1][:6], ["S7", "qianqi", "77", "钱七", "pass", "100.00"])
        self.assertEqual(self.rows(stdout)[0]["student"], "钱七")
        listed = self.root / "名单.txt"
        listed.write_bytes("孙八\n吴十\n".encode("utf-8"))
        code, stdout, stderr = in_process(self.root, "--class", self.mixed.name, "--roster", listed.name)
        # 孙八's course files are of a release the table does not know here: fail, as an edit would be
        self.assertEqual([(row["student"], row["result"]) for row in self.rows(stdout)[:2]],
                         [("孙八", "fail"), ("吴十", "missing")])
        self.assertTrue(all(row["note_kinds"][0] == "roster_nobody" for row in self.rows(stdout)[2:]))
        self.assertIn("missing 1。", stderr.splitlines()[-1])
