"""Shared test helpers: every test works in a temporary copy of the workspace.

The checkout is never written to. `copy_workspace()` copies the tracked-looking parts of the
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
SIMULATED = bool(os.environ.get("LESSON_WINDOWS_BEHAVIOUR"))
WINDOWS = os.name == "nt" or SIMULATED
PYTHON = "py -3" if WINDOWS else "python3"
ON_WINDOWS = "Windows："  # how every reason of the one rule starts (tests/windows_behaviour.py lists them)


def not_on_windows(why):
    """The one rule for a test that cannot hold on Windows: skipped there and under Windows' simulated behaviour,
    saying WHY (in Chinese). No test skips for Windows any other way (tests/test_python_versions.py checks), so the
    Windows-behaviour pass runs every other test as Windows would, and one that cannot hold there fails it."""
    return unittest.skipIf(WINDOWS, ON_WINDOWS + why)


def skip_on_windows(case, why):
    """The same rule inside a test that can tell only once it runs (CASE is the running test)."""
    if WINDOWS:
        case.skipTest(ON_WINDOWS + why)


def skip_in_simulation(case, why):
    """A test that holds on Windows but that the simulation cannot imitate (tests/windows_simulation.py)."""
    if SIMULATED:
        case.skipTest("Windows 行为模拟：" + why)


def benchmark_verdict(missed, wrong):
    """The last line a benchmark (tests/bench_*.py) says, and its exit code: 0 when every target is met and every
    result is right; 1 otherwise, saying which figures MISSED their targets and which results were WRONG."""
    if wrong:
        return (f"结果不对：{'；'.join(wrong)}。这不是速度问题：被测的命令给出了不该有的结果，请先运行 python3 -m unittest"
                "（退出码 1）。"), 1
    if missed:
        return (f"没达到的目标：{'；'.join(missed)}（退出码 1）。这是“变慢了”的信号，不是程序出错，也不影响任何核对结果；"
                "机器同时在做别的事时秒数类的目标也可能达不到，请在机器空闲时再测一次。"), 1
    return "全部目标都达到了（退出码 0）。", 0


def findings_in(found):
    """Every finding in FOUND (a finding, a list or tuple of them, a verdict or row holding them), the findings inside
    each included, in order: what a test asserts instead of the sentences' words."""
    if isinstance(found, dict) and "findings" in found:
        found = [*found["findings"], *found.get("remarks", [])]
    if isinstance(found, (list, tuple)):
        return [inner for item in found for inner in findings_in(item)]
    fields = getattr(found, "fields", None)
    if fields is None:
        return []
    return [found, *(inner for value in fields.values() for inner in findings_in(value))]


def kinds_in(found):
    """The kinds of findings_in(FOUND)."""
    return [finding.kind for finding in findings_in(found)]


def texts_in(found):
    """Every text among the fields of findings_in(FOUND): the paths, names and values the findings name."""
    return [text for finding in findings_in(found) for value in finding.fields.values()
            for text in ([value] if isinstance(value, str) else value if isinstance(value, (list, tuple)) else [])
            if isinstance(text, str)]


def values_in(found):
    """Every value among the fields of findings_in(FOUND), as text (numbers too): what the findings name."""
    return [str(item) for finding in findings_in(found) for value in finding.fields.values()
            for item in (value if isinstance(value, (list, tuple)) else [value])
            if isinstance(item, (str, int, float)) and not isinstance(item, bool)]


def assert_found(case, found, *expected):
    """Each of EXPECTED is a finding kind FOUND holds (anywhere inside) or a value one of its findings names (a path,
    a field, a figure, as part of a value): the test CASE fails otherwise."""
    from verifier.findings import SENTENCES
    kinds, values = kinds_in(found), values_in(found)
    for item in expected:
        if item in SENTENCES:
            case.assertIn(item, kinds, f"no finding of kind {item!r} in {found!r}")
        else:
            case.assertTrue(any(item in value for value in values), f"no finding names {item!r} in {found!r}")


def fields_of(found, kind):
    """The fields of the first finding of KIND in FOUND (KeyError when there is none)."""
    for finding in findings_in(found):
        if finding.kind == kind:
            return finding.fields
    raise KeyError(f"no finding of kind {kind!r} in {found!r}")


def _ignore(folder, names):
    return [n for n in names if n in _SKIP or n.endswith(".pyc")]


def _copy_file(source, target):
    """One file of a workspace copy: its bytes, mode and times, all that shutil.copy2 keeps but extended attributes
    (which nothing here reads), in two thirds of its time: the suite makes hundreds of copies."""
    with open(source, "rb") as read:
        data = read.read()
    with open(target, "wb") as write:
        write.write(data)
    status = os.stat(source)
    os.chmod(target, status.st_mode & 0o7777)
    os.utime(target, ns=(status.st_atime_ns, status.st_mtime_ns))
    return target


def copy_workspace(target):
    """A copy of the workspace at TARGET (a new folder), without .git, run evidence and caches."""
    shutil.copytree(ROOT, target, ignore=_ignore, copy_function=_copy_file)


class WorkspaceTestCase(unittest.TestCase):
    """A test case whose `self.root` is a fresh copy of the workspace, removed afterwards."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="lesson14-", dir=_FAST_TEMP)
        self._root = None
        self.addCleanup(self._tmp.cleanup)

    @property
    def root(self):
        """The copy, made when the test first asks for it: a test that never does pays nothing for a copy."""
        if self._root is None:
            self._root = Path(self._tmp.name) / "lesson-14"
            copy_workspace(self._root)
        return self._root

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
