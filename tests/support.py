"""Shared test helpers: every test works in a temporary copy of the workspace.

The checkout is never written to. `workspace_copy()` copies the tracked-looking parts of the
workspace (skipping .git, run evidence and caches) into a fresh temporary folder; tests run
the commands there, in-process or as subprocesses.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SKIP = {".git", "runs", "loop-runs", "ask-runs", "__pycache__", ".ci"}
# The suite makes hundreds of workspace copies: on a memory-backed folder (Linux's /dev/shm) one takes
# milliseconds instead of the tenth of a second a slow disk needs. Elsewhere the system's temporary folder.
_FAST_TEMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
# Windows, or its behaviour simulated on Linux and macOS (tests/windows_behaviour.py): a test that cannot
# hold there skips itself with the reason. Suggested commands start with `py -3` there.
WINDOWS = os.name == "nt" or bool(os.environ.get("LESSON_WINDOWS_BEHAVIOUR"))
PYTHON = "py -3" if WINDOWS else "python3"


def _ignore(folder, names):
    return [n for n in names if n in _SKIP or n.endswith(".pyc")]


class WorkspaceTestCase(unittest.TestCase):
    """A test case whose `self.root` is a fresh copy of the workspace, removed afterwards."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="lesson14-", dir=_FAST_TEMP)
        self.root = Path(self._tmp.name) / "lesson-14"
        shutil.copytree(ROOT, self.root, ignore=_ignore)
        self.addCleanup(self._tmp.cleanup)

    def run_cli(self, script, *args, timeout=60, env=None):
        """Run `python3 SCRIPT ARGS` in the copy; returns (exit code, stdout, stderr)."""
        full_env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        full_env.pop("DEEPSEEK_API_KEY", None)
        full_env.update(env or {})
        proc = subprocess.run(
            [sys.executable, str(self.root / script), *map(str, args)],
            cwd=self.root, capture_output=True, text=True, encoding="utf-8",
            timeout=timeout, env=full_env,
        )
        return proc.returncode, proc.stdout, proc.stderr

    def assertOneJsonLine(self, stdout):
        """stdout must be exactly one JSON line; returns the parsed object."""
        lines = stdout.splitlines()
        self.assertEqual(len(lines), 1, f"expected one stdout line, got: {stdout!r}")
        return json.loads(lines[0])

    def assertNoTraceback(self, stderr):
        self.assertNotIn("Traceback", stderr)
