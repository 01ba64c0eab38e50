"""Tests of verify_loop.py's command line: one line per folder and a summary, exit codes, folders given from
another directory, run as a subprocess.

Helpers and VerifyTestCase (loops made in-process in one copy of the workspace per class) are
tests/test_verify_loop.py's.
"""
import json
import os
import subprocess
import sys
import unittest

import verify_loop
from tests.support import kinds_in
from tests.test_repository import verifier_files
from tests.test_verify_loop import PASS_LINE, VerifyTestCase


class CommandLineTest(VerifyTestCase):
    def test_many_folders_one_line_each_with_run_and_a_summary(self):
        self.make("bad", "repair")
        self.forge("bad", lambda rec: rec.update(actual_api_calls=3))
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/r", "loop-runs/s", "loop-runs/bad")
        lines = [json.loads(line) for line in stdout.splitlines()]
        self.assertEqual(lines[0], {"result": "pass", "status": "needs_review", "attempts": 2,
                                    "semantic_review": "pending", "run": "r"})
        self.assertEqual(lines[1], {"result": "pass", "status": "stalled", "attempts": 2,
                                    "semantic_review": "pending", "run": "s"})
        self.assertEqual([lines[2]["result"], lines[2]["run"]], ["fail", "bad"])
        self.assertIn("actual_api_calls 是 3", " ".join(lines[2]["problems"]))  # the words a person reads on stdout
        self.assertEqual(code, 1)
        self.assertIn("共核对 3 个循环：pass 2，fail 1，needs_human 0。", stderr)
        self.assertNoTraceback(stderr)

    def test_a_claim_folder_named_by_a_wildcard_is_skipped_not_judged(self):
        claim = self.root / "loop-runs" / ".lock-left"
        claim.mkdir()
        self.addCleanup(claim.rmdir)
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/r", "loop-runs/.lock-left")
        self.assertEqual((code, len(stdout.splitlines())), (0, 1))
        self.assertIn("跳过 loop-runs/.lock-left：以点开头的是循环的锁文件或认领名称时的临时目录，不是循环记录。", stderr)
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/.lock-left")
        self.assertEqual((code, stdout), (2, ""))
        held = self.root / "loop-runs" / ".held-r"  # every loop's lock: where the system has no file locks, the file
        if not held.exists():                        # is there only while the loop runs (machinery/resume.py)
            held.write_text(str(os.getpid()), encoding="ascii")
            self.addCleanup(held.unlink)
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/r", "loop-runs/.held-r")
        self.assertEqual((code, len(stdout.splitlines())), (0, 1), stderr)
        self.assertIn("跳过 loop-runs/.held-r：", stderr)

    def test_a_folder_that_does_not_exist_is_said_so(self):
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/nope")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("loop-runs/nope 不存在：请给出 loop-runs/ 下的循环目录", stderr)
        self.assertNotIn("移走", stderr)

    def test_an_interrupt_before_any_attempt_names_no_child_run(self):
        handoff = {"stopped_at": "被 Ctrl-C 中断于第一次尝试开始之前", "done": ["还没有启动任何子运行。"],
                   "inspect": ["loop-runs/t/loop.json"], "decide": "还没有开始任何尝试，也没有子运行；核对后用新名称重新运行。"}
        with self.forged("t", lambda rec: rec.update(status="interrupted", reason="keyboard_interrupt",
                                                     handoff=handoff)):
            verdict = self.verdict("t")
        text = " ".join(verdict["problems"])
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(kinds_in(verdict), ["undecided_no_attempt", "why_interrupted", "handoff_guide", "resume_hint"],
                         text)  # an interrupted loop may be resumed: the note says how

    def test_all_passing_folders_exit_0(self):
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/r", "loop-runs/p")
        self.assertEqual(code, 0)
        self.assertEqual(len(stdout.splitlines()), 2)

    def test_a_failing_single_folder_names_the_run_and_problems(self):
        self.make("no-cards", "repair")
        (self.root / "runs" / "no-cards-02" / "artifact" / "cards.json").unlink()
        code, stdout, stderr = self.run_cli("verify_loop.py", "loop-runs/no-cards")
        result = self.assertOneJsonLine(stdout)
        self.assertEqual(list(result), ["result", "status", "attempts", "semantic_review", "run", "problems"])
        self.assertEqual((result["result"], result["run"], code), ("fail", "no-cards", 1))
        self.assertIn("cards.json", stderr)

    def test_works_from_another_directory(self):
        proc = subprocess.run([sys.executable, str(self.root / "verify_loop.py"), "r"], cwd=self.root / "loop-runs",
                              capture_output=True, text=True, encoding="utf-8", timeout=60)
        self.assertEqual((proc.stdout, proc.returncode), (PASS_LINE, 0))

    def test_paths_in_messages_are_usable_from_the_current_folder(self):
        self.make("far", "repair")
        (self.root / "runs" / "far-02" / "artifact" / "review.md").unlink()
        proc = subprocess.run([sys.executable, str(self.root / "verify_loop.py"), "far"], cwd=self.root / "loop-runs",
                              capture_output=True, text=True, encoding="utf-8", timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(" ../runs/far-02 ", proc.stderr)
        self.assertTrue(proc.stderr.startswith("far：fail"), proc.stderr)

    def test_not_a_loop_folder_exits_2(self):
        for args in (("runs/r-01",), ("loop-runs",), ("loop-runs/nothing-here",), ("loop-runs/r", "samples"), ()):
            with self.subTest(args=args):
                code, stdout, stderr = self.run_cli("verify_loop.py", *args)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn("参数", stderr)
                self.assertNoTraceback(stderr)

    def test_help_lists_the_exit_codes(self):
        code, stdout, stderr = self.run_cli("verify_loop.py", "--help")
        self.assertEqual(code, 0)
        for text in ("0 每个循环都通过", "1 有循环 fail 或 needs_human", "2 参数错误"):
            self.assertIn(text, " ".join(stdout.split()))  # argparse wraps long lines anywhere

    def test_imports_nothing_it_verifies(self):
        # nothing the verifiers reach by import, however deep (verifier/, classroom/ included), is what they check
        reached = verifier_files()
        self.assertIn("classroom/check.py", reached)
        self.assertEqual([rel for rel in reached if rel in ("loop_lab.py", "harness.py", "export_review.py")
                          or rel.startswith("machinery/")], [])
        self.assertIn("None of them imports loop_lab.py, harness.py, export_review.py or the loop's machinery/",
                      " ".join(verify_loop.__doc__.split()))
        # with every import of the checked programs made to fail, the verifier still judges a real run
        driver = ("import runpy, sys; "
                  "sys.modules.update(loop_lab=None, harness=None, export_review=None, machinery=None); "
                  "sys.argv = ['verify_loop.py', 'loop-runs/r']; runpy.run_path('verify_loop.py', run_name='__main__')")
        proc = subprocess.run([sys.executable, "-c", driver], cwd=self.root, capture_output=True, text=True,
                              encoding="utf-8", env=dict(os.environ, PYTHONIOENCODING="utf-8"))
        self.assertEqual((proc.returncode, proc.stdout), (0, PASS_LINE), proc.stderr)


if __name__ == "__main__":
    unittest.main()
