"""The stop-guard acceptance check, run as a learner runs it: every check passes, fast, no traceback."""
import os
import subprocess
import sys
import unittest

from tests.support import WorkspaceTestCase


class CheckLoopGuardsTest(WorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        """Both ways of running the check, started together: they take seconds each and share nothing."""
        workspace = WorkspaceTestCase("run")
        workspace.setUp()
        cls.addClassCleanup(workspace.doCleanups)
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        env.pop("DEEPSEEK_API_KEY", None)
        script = str(workspace.root / "project" / "check_loop_guards.py")
        runs = {mode: subprocess.Popen([sys.executable, script, *flags], cwd=workspace.root, env=env, text=True,
                                       encoding="utf-8", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for mode, flags in (("lines", []), ("json", ["--json"]))}
        cls.results = {mode: (proc.communicate(timeout=30), proc.returncode) for mode, proc in runs.items()}

    def test_prints_one_pass_line_per_check_on_stdout(self):
        (stdout, stderr), code = self.results["lines"]
        self.assertEqual(code, 0, stdout + stderr)
        self.assertNoTraceback(stderr)
        lines = stdout.splitlines()
        self.assertEqual(len(lines), 32, stdout)
        self.assertTrue(all(line[:5] in ("PASS ", "SKIP ") for line in lines), stdout)
        self.assertIn("共 32 项", stderr)

    def test_every_check_passes(self):
        (stdout, stderr), code = self.results["json"]
        summary = self.assertOneJsonLine(stdout)
        lines = stderr.splitlines()
        self.assertEqual(code, 0, stderr)
        self.assertEqual([line for line in lines if line.startswith("FAIL")], [])
        self.assertNoTraceback(stderr)
        self.assertEqual(summary["failed"], 0)
        # 32 checks: the lesson's seventeen adapted, one for model refusal, the cycle detector's four,
        # 503 / 529 counted separately, eight for real servers' faults, the reminder and the budget, and the
        # records of every question checked by verify_ask; SKIP only where SIGINT cannot reach a child (Windows)
        self.assertEqual(summary["passed"] + summary["skipped"], 32)
        self.assertLessEqual(summary["skipped"], 1)
        self.assertEqual(len([line for line in lines if line[:5] in ("PASS ", "SKIP ")]), 32)
        turn_cap = next(check for check in summary["checks"] if "MAX_TURNS" in check["check"])
        self.assertIn("mock 收到 20 次请求", turn_cap["detail"])

    def test_bad_argument_exits_2(self):
        code, stdout, stderr = self.run_cli("project/check_loop_guards.py", "--fast")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("--fast", stderr)
        self.assertNoTraceback(stderr)


if __name__ == "__main__":
    unittest.main()
