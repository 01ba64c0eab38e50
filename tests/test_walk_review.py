"""What a newcomer's and a teacher's walk through the documents found: each test was seen failing first.

A learner who types an option twice, a workspace the loop cannot write to, an older Python running the test
suite, and a teacher's report beside a roster.
"""
import contextlib
import io
import json
import shutil
import subprocess
import os
from unittest import mock

import cli
import loop_lab
from tests.support import WorkspaceTestCase
from tests.test_python_versions import old_pythons


class OptionTwiceTest(WorkspaceTestCase):
    def test_an_option_given_twice_is_refused_naming_it(self):
        for script, args, made in (("verify_loop.py", ("--pack", "a.zip", "--pack", "b.zip"), ("a.zip", "b.zip")),
                                   ("loop_lab.py", ("--run", "a-01", "--run", "b-01", "--scenario", "semantic"),
                                    ("loop-runs", "runs"))):
            with self.subTest(script=script):
                if script == "verify_loop.py":
                    self.run_cli("loop_lab.py", "--run", "t-01", "--scenario", "repair", "--max-seconds", "0")
                code, stdout, stderr = self.run_cli(script, *args)
                self.assertEqual((code, stdout), (2, ""), stderr)
                self.assertIn(f"{args[0]} 给了 2 次", stderr)
                self.assertNoTraceback(stderr)
                for name in made[:1] if script == "verify_loop.py" else ():
                    self.assertFalse((self.root / name).exists())
                if script == "loop_lab.py":
                    self.assertFalse((self.root / "runs").exists())

    def test_an_option_meant_to_repeat_still_repeats(self):
        parser = cli.ChineseArgumentParser(prog="x")
        parser.add_argument("--without", action="append", default=[])
        self.assertEqual(parser.parse_args(["--without", "a", "--without", "b"]).without, ["a", "b"])


class LoopCannotStartTest(WorkspaceTestCase):
    def test_a_file_named_loop_runs_still_gives_one_json_line(self):
        (self.root / "loop-runs").write_text("", encoding="utf-8")
        code, stdout, stderr = self.run_cli("loop_lab.py", "--run", "x-01", "--scenario", "repair")
        self.assertEqual(code, 1, stderr)
        line = self.assertOneJsonLine(stdout)
        self.assertEqual((line["status"], line["reason"], line["attempts"]), ("needs_human", "unexpected_error", 0))
        self.assertIn("loop-runs", stderr)
        self.assertNoTraceback(stderr)

    def test_the_operating_system_s_english_words_are_not_shown(self):
        denied = PermissionError(13, "Permission denied", str(self.root / "loop-runs"))
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(loop_lab, "new_loop", side_effect=denied), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            code = loop_lab.main(["--run", "x-01", "--scenario", "repair"])
        self.assertEqual(code, 1)
        self.assertEqual(json.loads(out.getvalue())["status"], "needs_human")
        self.assertNotIn("Permission denied", err.getvalue())
        self.assertIn("没有读写权限", err.getvalue())
        self.assertNotIn("新名称", err.getvalue())  # nothing was made: the same name is still free


class OldPythonSuiteTest(WorkspaceTestCase):
    def test_the_example_for_the_suite_is_a_command_that_runs(self):
        line = cli.old_python((3, 9, 18), "python3 -m unittest", "/usr/bin/python3")
        self.assertIn("例如 python3.11 -m unittest；", line)

    def test_the_suite_on_an_older_python_says_one_line(self):
        pythons = old_pythons()
        if not pythons:
            self.skipTest("这台机器上没有 Python 3.8–3.10：旧版本运行测试套件的真实检查只在有旧版本的机器上做")
        shutil.rmtree(self.root / "tests" / "__pycache__", ignore_errors=True)
        env = dict(os.environ, PYENV_VERSION="", PYTHONIOENCODING="utf-8")
        for version, python in pythons:
            with self.subTest(python=version):
                proc = subprocess.run([*python, "-m", "unittest"], cwd=self.root, capture_output=True, timeout=60,
                                      env=env)
                stderr = proc.stderr.decode("utf-8")
                self.assertEqual((proc.returncode, proc.stdout, len(stderr.splitlines())), (2, b"", 1), stderr)
                self.assertIn("需要 Python 3.11 或更高版本", stderr)


class ReportTotalsTest(WorkspaceTestCase):
    def test_the_report_counts_the_people_who_handed_nothing_in(self):
        self.run_cli("loop_lab.py", "--run", "time-01", "--scenario", "repair", "--max-seconds", "0")
        (self.root / "交作业" / "张三").mkdir(parents=True)
        shutil.copytree(self.root / "loop-runs", self.root / "交作业" / "张三" / "loop-runs")
        (self.root / "names.txt").write_text("张三\n孙七\n", encoding="utf-8")
        code, _, stderr = self.run_cli("verify_loop.py", "--class", "交作业", "--roster", "names.txt",
                                       "--report", "全班.md")
        totals = stderr.splitlines()[-1]
        self.assertIn("missing 1", totals)
        self.assertIn(totals, (self.root / "全班.md").read_text(encoding="utf-8").splitlines())
