"""Tests of `verify_loop.py --class`: a small class checked through the real command line.

The loops are made once per class in a copy of the workspace (loop_lab in-process), moved into
student folders and copied, then some are damaged the way a student (or an accident) would: a
missing case, a tampered record, a course file edited before running honestly, a loop killed
mid-way, a case faked with another scenario, a linked folder, stray files next to the students.
The command runs once over that class; each test reads what it printed and wrote.
"""
import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import sys

from unittest import mock

import class_check
import loop_lab
import verify_loop
from tests.test_loop_lab import SharedWorkspaceTestCase

SIX_CASES = ["repair", "stuck", "repair --max-attempts 1", "repair --max-seconds 0", "semantic", "permission"]
HONEST = (("repair-01", "repair", {}), ("stuck-01", "stuck", {}), ("budget-01", "repair", {"max_attempts": 1}),
          ("time-01", "repair", {"max_seconds": 0}), ("semantic-01", "semantic", {}),
          ("permission-01", "permission", {}))
EXPECTED = {"张三": "pass", "李四": "incomplete", "王五": "fail", "赵六": "fail", "钱七": "needs_human",
            "周九": "incomplete"}


def run_verify(workspace, cwd, *args):
    """`python3 WORKSPACE/verify_loop.py ARGS` run from CWD: (exit code, stdout, stderr)."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, str(workspace / "verify_loop.py"), *args], cwd=cwd,
                          capture_output=True, text=True, encoding="utf-8", timeout=60, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def try_link(target, link):
    try:
        os.symlink(target, link, target_is_directory=True)
    except (OSError, NotImplementedError):  # Windows without the privilege
        return False
    return True


def remove_loop(student, name):
    shutil.rmtree(student / "loop-runs" / name)
    for child in (student / "runs").glob(f"{name}-??"):
        shutil.rmtree(child)


def merge(source, student):
    for folder in ("loop-runs", "runs"):
        for entry in (source / folder).iterdir():
            shutil.copytree(entry, student / folder / entry.name)


def forge(path, change):
    record = json.loads(path.read_text(encoding="utf-8"))
    change(record)
    path.write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")


def kill(student, name):
    """What a kill during attempt 2 leaves: a `running` record, attempt 2 in flight, no second child."""
    def in_flight(record):
        record.update(status="running", reason=None, handoff=None, finished_at=None, elapsed_seconds=0)
        record["attempts"][1].update(state="running", status=None, feedback=None)
    forge(student / "loop-runs" / name / "loop.json", in_flight)
    shutil.rmtree(student / "runs" / f"{name}-02")


class ClassCheckTest(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        made = cls.root / "made"
        cls.make_records(made / "honest", HONEST + (("extra-01", "repair", {"max_attempts": 2}),))
        cls.make_records(made / "fake-stuck", (("stuck-01", "repair", {}),))
        cls.make_records(made / "killed", (("repair-02", "repair", {}),))
        sample = cls.root / "samples" / "bad-quote.json"
        original = sample.read_bytes()
        sample.write_bytes(original + b"\n")  # an edit that changes nothing the loop decides by
        cls.make_records(made / "edited", (("repair-01", "repair", {}),))
        sample.write_bytes(original)
        cls.build_class(made, cls.root / "submissions")
        cls.linked = try_link(cls.root / "submissions" / "张三", cls.root / "submissions" / "吴十")
        cls.code, cls.stdout, cls.stderr = run_verify(cls.root, cls.root, "--class", "submissions",
                                                      "--report", "report.md", "--csv", "class.csv")
        shutil.copytree(cls.root / "submissions" / "张三", cls.root / "good" / "张三")

    @classmethod
    def make_records(cls, destination, loops):
        """Runs LOOPS in the copy, then moves its loop-runs/ and runs/ to DESTINATION."""
        with contextlib.redirect_stderr(io.StringIO()):
            for name, scenario, options in loops:
                loop_lab.run_loop(cls.root, name, scenario, **options)
        destination.mkdir(parents=True)
        for folder in ("loop-runs", "runs"):
            shutil.move(cls.root / folder, destination / folder)

    @classmethod
    def build_class(cls, made, submissions):
        def student(name, source="honest"):
            shutil.copytree(made / source, submissions / name)
            return submissions / name

        zhang = student("张三")  # handed in the whole workspace, with an edited sample of their own
        shutil.copytree(cls.root / "samples", zhang / "samples")
        (zhang / "samples" / "bad-quote.json").write_text("{}", encoding="utf-8")
        (zhang / "loop-runs" / "说明.txt").write_text("我的六个循环\n", encoding="utf-8")
        remove_loop(student("李四"), "stuck-01")
        forge(student("王五") / "loop-runs" / "stuck-01" / "loop.json",
              lambda rec: rec.update(status="needs_review", reason="mechanical_pass", handoff=None))
        zhao = student("赵六")
        remove_loop(zhao, "repair-01")
        merge(made / "edited", zhao)
        qian = student("钱七")
        merge(made / "killed", qian)
        kill(qian, "repair-02")
        (qian / "loop-runs" / ".new-repair-03-4242").mkdir()  # a name being claimed: not a run
        (qian / "loop-runs" / ".lock-repair-03").touch()
        zhou = student("周九")
        remove_loop(zhou, "stuck-01")
        merge(made / "fake-stuck", zhou)
        nested = submissions / "孙八" / "lesson-14"
        shutil.copytree(made / "honest", nested)
        (submissions / "名单.txt").write_text("张三\n", encoding="utf-8")
        (submissions / ".DS_Store").write_bytes(b"\0")
        (submissions / "__MACOSX" / "张三").mkdir(parents=True)

    def run_class(self, *args, cwd=None):
        return run_verify(self.root, cwd or self.root, *args)

    def lines(self):
        return [json.loads(line) for line in self.stdout.splitlines()]

    def student(self, name):
        return next(line for line in self.lines() if line["student"] == name)


    def test_one_line_per_student_sorted_by_folder_name(self):
        lines = self.lines()
        expected = dict(EXPECTED, 吴十="fail") if self.linked else EXPECTED
        self.assertEqual([line["student"] for line in lines], sorted(expected))
        self.assertEqual({line["student"]: line["result"] for line in lines}, expected)
        for line in lines:
            self.assertEqual(list(line), ["student", "result", "cases", "loops", "problems"])
            self.assertEqual(list(line["cases"]), SIX_CASES)
        self.assertEqual(self.code, 1)

    def test_complete_student_passes_with_a_loop_of_no_case(self):
        zhang = self.student("张三")
        self.assertEqual(zhang["cases"], dict.fromkeys(SIX_CASES, "pass"))
        self.assertEqual((zhang["loops"], zhang["problems"]), (7, []))

    def test_course_files_come_from_the_teacher_not_the_submission(self):
        # 张三's own edited samples/ is ignored; 赵六 ran honestly on an edited sample and fails
        self.assertEqual(self.student("张三")["result"], "pass")
        zhao = self.student("赵六")
        self.assertEqual(zhao["cases"]["repair"], "fail")
        self.assertIn("samples/bad-quote.json", " ".join(zhao["problems"]))
        self.assertIn("与老师工作区（当前文件夹）里的课程文件不同：samples/bad-quote.json", " ".join(zhao["problems"]))

    def test_missing_tampered_and_faked_cases(self):
        self.assertEqual(self.student("李四")["cases"]["stuck"], "missing")
        self.assertIn("缺少情景「stuck」", " ".join(self.student("李四")["problems"]))
        wang = self.student("王五")
        self.assertEqual((wang["cases"]["stuck"], wang["cases"]["repair"]), ("fail", "pass"))
        self.assertIn("submissions/王五/loop-runs/stuck-01", " ".join(wang["problems"]))
        # a repair loop named stuck-01 is a repair loop: the stuck case is still missing
        self.assertEqual(self.student("周九")["cases"]["stuck"], "missing")

    def test_killed_loop_needs_a_person_and_its_case_still_passes(self):
        qian = self.student("钱七")
        self.assertEqual((qian["result"], qian["cases"]["repair"], qian["loops"]), ("needs_human", "pass", 8))
        text = " ".join(qian["problems"])
        self.assertIn("running", text)
        self.assertNotIn("handoff", text)
        self.assertNotIn(".new-repair-03", text + self.stderr)  # a name being claimed is no loop

    def test_linked_student_folder_fails(self):
        if not self.linked:
            self.skipTest("cannot create a symlink here")
        wu = self.student("吴十")
        self.assertEqual((wu["result"], wu["loops"]), ("fail", 0))
        self.assertIn("符号链接", wu["problems"][0])

    def test_stderr_lists_what_was_skipped_then_table_and_totals(self):
        for skipped in ("跳过 submissions/名单.txt：不是文件夹。", "跳过 submissions/.DS_Store：不是文件夹。",
                        "跳过 submissions/__MACOSX：里面没有 loop-runs/ 文件夹。",
                        "跳过 submissions/孙八：里面没有 loop-runs/ 文件夹（在更深一层的 submissions/孙八/lesson-14 里找到了",
                        "跳过 submissions/张三/loop-runs/说明.txt：不是循环目录（loop-runs/ 里只应有循环文件夹）。"):
            self.assertIn(skipped, self.stderr)
        self.assertIn("| 学生 | 结果 | repair | stuck | repair --max-attempts 1 | repair --max-seconds 0 | semantic | "
                      "permission | 循环数 |", self.stderr)
        self.assertIn("| 张三 | pass | pass | pass | pass | pass | pass | pass | 7 |", self.stderr)
        self.assertIn("| 李四 | incomplete | pass | missing | pass | pass | pass | pass | 6 |", self.stderr)
        self.assertIn("\n王五：fail\n  - submissions/王五/loop-runs/stuck-01：子运行与预算支持的结果是 stalled", self.stderr)
        fails = 3 if self.linked else 2
        self.assertEqual(self.stderr.splitlines()[-1],
                         f"全班 {len(self.lines())} 人：pass 1，incomplete 2，fail {fails}，needs_human 1。")
        self.assertNoTraceback(self.stderr)

    def test_report_has_the_table_and_each_students_problems_with_paths(self):
        report = (self.root / "report.md").read_text(encoding="utf-8").splitlines()
        self.assertEqual(report[0], "# 全班核对：submissions")
        self.assertIn("| 王五 | fail | pass | fail | pass | pass | pass | pass | 7 |", report)
        self.assertIn("## 王五：fail", report)
        wang = next(line for line in report if line.startswith("- `submissions/王五/loop-runs/stuck-01`"))
        self.assertIn("`submissions/王五/runs/stuck-01-02`", wang)
        self.assertIn("- 缺少情景「stuck」：请学生运行这一行的命令后重新提交。", report)
        self.assertIn("- `submissions/张三/loop-runs/extra-01`（不属于六个情景，不计入）：pass；查看 "
                      "`submissions/张三/loop-runs/extra-01`、`submissions/张三/runs/extra-01-01`、"
                      "`submissions/张三/runs/extra-01-02`", report)

    def test_csv_opens_in_excel(self):
        data = (self.root / "class.csv").read_bytes()
        self.assertTrue(data.startswith(b"\xef\xbb\xbf"))
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
        self.assertEqual(rows[0], ["student", "result", *SIX_CASES, "loops"])
        self.assertIn(["李四", "incomplete", "pass", "missing", "pass", "pass", "pass", "pass", "6"], rows)
        self.assertEqual(len(rows), len(self.lines()) + 1)

    def test_a_class_that_all_passes_exits_0_and_replaces_old_reports(self):
        (self.root / "old.md").write_text("旧报告\n", encoding="utf-8")
        code, stdout, stderr = self.run_class("--class", "good", "--report", "old.md", "--csv", "old.csv")
        self.assertEqual(code, 0, stderr)
        self.assertEqual(len(stdout.splitlines()), 1)
        self.assertTrue((self.root / "old.md").read_text(encoding="utf-8").startswith("# 全班核对：good\n"))
        self.assertEqual(sorted(p.name for p in self.root.glob("*old*")), ["old.csv", "old.md"])  # no leftovers
        self.assertIn("全班 1 人：pass 1，incomplete 0，fail 0，needs_human 0。", stderr)

    def test_a_report_is_replaced_whole_or_not_at_all(self):
        report = self.root / "kept.md"
        report.write_text("上一次的报告\n", encoding="utf-8")
        with mock.patch("class_check.os.replace", side_effect=OSError("disk full")), self.assertRaises(OSError):
            class_check.write_text_atomic(report, "# 新报告\n", "utf-8")
        self.assertEqual(report.read_text(encoding="utf-8"), "上一次的报告\n")

    def test_from_another_folder_paths_are_shown_from_there(self):
        code, stdout, stderr = self.run_class("--class", "lesson-14/submissions", cwd=self.root.parent)
        self.assertEqual(code, 1)
        self.assertIn("lesson-14/submissions/王五/loop-runs/stuck-01", stdout)
        self.assertIn("跳过 lesson-14/submissions/名单.txt", stderr)

    def test_bad_arguments_exit_2_and_write_nothing(self):
        empty, strays = self.root / "empty", self.root / "only-strays"
        empty.mkdir()
        strays.mkdir()
        (strays / "名单.txt").write_text("x", encoding="utf-8")
        (self.root / "a-folder").mkdir()
        for args in (("--class", "nowhere"), ("--class", "empty"), ("--class", "only-strays"),
                     ("--report", "r.md", "loop-runs/x"), ("--class", "good", "loop-runs/x"),
                     ("--class", "good", "--report", "a-folder"), ("--class", "good", "--csv", "no/such/x.csv"),
                     ("--class", "good", "--report", "same.txt", "--csv", "same.txt"), ()):
            with self.subTest(args=args):
                code, stdout, stderr = self.run_class(*args)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn("参数错误", stderr)
                self.assertNoTraceback(stderr)
        self.assertFalse((self.root / "same.txt").exists())
        self.assertIn("跳过 only-strays/名单.txt：不是文件夹。", self.run_class("--class", "only-strays")[2])

    def test_reports_are_never_written_into_a_submission_or_over_a_course_file(self):
        evidence = self.root / "good" / "张三" / "loop-runs" / "repair-01" / "loop.json"
        before = evidence.read_bytes()
        for target, said in ((evidence, "在提交目录 good 里面：报告不能写进学生的提交"),
                             (self.root / "good" / "class.csv", "在提交目录 good 里面"),
                             (self.root / "samples" / "valid.json", "是老师工作区里的课程文件")):
            with self.subTest(target=target.name):
                code, stdout, stderr = self.run_class("--class", "good", "--csv", str(target))
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn(said, stderr)
        self.assertEqual(evidence.read_bytes(), before)
        self.assertFalse((self.root / "good" / "class.csv").exists())

    def test_a_report_that_cannot_be_written_is_said_in_chinese(self):
        too_long = "长" * 300 + ".md"  # more than a file name may hold on any system (255 units or bytes)
        code, stdout, stderr = self.run_class("--class", "good", "--report", too_long)
        self.assertEqual((code, len(stdout.splitlines())), (1, 1))
        self.assertIn(f"无法写出 {too_long}", stderr)
        self.assertIn("请换一个可以写入的路径再运行一次。", stderr)
        self.assertNoTraceback(stderr)

    def test_a_submissions_folder_it_may_not_list_exits_2_in_chinese(self):
        # root lists every folder whatever its mode, so the refusal is simulated where the folder is listed
        err = io.StringIO()
        with mock.patch("class_check.os.listdir", side_effect=PermissionError(13, "Permission denied")), \
                contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out, \
                self.assertRaises(SystemExit) as stop:
            verify_loop.main(["--class", str(self.root / "good")])
        self.assertEqual((stop.exception.code, out.getvalue()), (2, ""))
        self.assertIn("无法列出里面的内容（PermissionError），请确认有读取权限。", err.getvalue())
        self.assertNotIn("Traceback", err.getvalue())

    def test_a_linked_student_folder_fails_even_without_loop_runs(self):
        odd = self.root / "linked-elsewhere"
        shutil.copytree(self.root / "good", odd)
        if not try_link(self.root / "samples", odd / "孙十"):
            self.skipTest("cannot create a symlink here")
        code, stdout, _ = self.run_class("--class", "linked-elsewhere")
        self.assertEqual(code, 1)
        results = {line["student"]: line["result"] for line in map(json.loads, stdout.splitlines())}
        self.assertEqual(results, {"孙十": "fail", "张三": "pass"})

    def test_a_student_folder_name_cannot_fake_a_row_or_a_formula(self):
        odd = self.root / "odd-names"
        fake = "甲\n| 乙 | pass | pass | pass | pass | pass | pass | pass | 6 |"
        try:
            for name in (fake, "=1+1"):
                shutil.copytree(self.root / "good" / "张三", odd / name)
        except OSError as exc:  # Windows refuses a newline or | in a name
            self.skipTest(f"cannot make these folders here: {exc}")
        code, stdout, stderr = self.run_class("--class", "odd-names", "--report", "odd.md", "--csv", "odd.csv")
        self.assertEqual(code, 0, stderr)
        self.assertEqual([json.loads(line)["student"] for line in stdout.splitlines()], ["=1+1", fake])
        escaped_row = "| 甲\\n\\| 乙 \\| pass \\| pass \\| pass \\| pass \\| pass \\| pass \\| pass \\| 6 \\| | pass |"
        self.assertIn(escaped_row, stderr)
        self.assertNotIn("\n| 乙 |", stderr)
        report = (self.root / "odd.md").read_text(encoding="utf-8")
        self.assertIn(escaped_row, report)
        self.assertNotIn("\n| 乙 |", report)
        rows = list(csv.reader(io.StringIO((self.root / "odd.csv").read_text(encoding="utf-8-sig"))))
        self.assertEqual([row[0] for row in rows[1:]], ["'=1+1", fake.replace("\n", "\\n")])

    def test_the_report_excerpt_in_the_readme_is_what_the_report_says(self):
        readme = (self.root / "README.md").read_text(encoding="utf-8")
        excerpt = readme.split("`全班.md` 是给人读的报告", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
        submissions = self.root / "交作业"
        shutil.copytree(self.root / "made" / "honest", submissions / "张三")
        remove_loop(submissions / "张三", "extra-01")
        shutil.copytree(submissions / "张三", submissions / "李四")
        shutil.copytree(submissions / "张三", submissions / "王五")
        remove_loop(submissions / "李四", "stuck-01")
        (submissions / "王五" / "runs" / "repair-01-02" / "artifact" / "review.md").unlink()
        code, _, stderr = self.run_class("--class", "交作业", "--report", "全班.md")
        self.assertEqual(code, 1, stderr)
        report = (self.root / "全班.md").read_text(encoding="utf-8")
        self.assertIn(excerpt, report)
        self.assertTrue(report.startswith("# 全班核对：交作业\n\n对照的是老师工作区（当前文件夹）里的课程文件"))
