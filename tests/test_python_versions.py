"""Every Python a learner may have: 3.11 and newer behave alike, older ones are refused in one line.

The refusal is cli.py's (its top must parse and run on old Pythons; every program imports cli first, the
programs in project/ through project/workspace.py). It is tested twice: with a faked version in this
interpreter, and for real with each older interpreter this machine has (python3.8 ... python3.10 on PATH,
pyenv's versions, or Windows' `py -3.X`); without one that test skips, saying so. What must not differ by
version: the usage lines (each program gives its own), the place of a JSON error (3.11's on every version),
and no warning while any module is compiled or imported.
"""
import ast
import contextlib
import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

import cli
from tests.support import ROOT, WorkspaceTestCase

# Each program with arguments that would write something if it ran (a new run, an export, a ZIP).
PROGRAMS = {
    "harness.py": ("--run", "old-01", "--sample", "valid"),
    "verify_harness.py": ("runs/old-01",),
    "export_review.py": ("samples/valid.json", "--out", "old-export"),
    "verify_export.py": ("samples/valid.json",),
    "loop_lab.py": ("--run", "old-01", "--scenario", "repair"),
    "verify_loop.py": ("--pack", "old.zip"),
    "project/app.py": ("ask", "RAG 的步骤顺序是什么？"),
    "project/mock_model.py": ("--port", "0", "--max-seconds", "5"),
    "project/check_loop_guards.py": ("--json",),
    "project/check_stop_corpus.py": ("--json",),
    "project/verify_ask.py": ("ask-runs/old",),
}
# The maintainers' scripts under tests/ (benchmarks, the Windows-behaviour pass, the mutation check) refuse alike.
TOOLS = {f"tests/{name}": () for name in ("bench_loop.py", "bench_class.py", "bench_ask.py", "windows_behaviour.py",
                                          "mutation.py", "measure_costs.py")}
OLD_VERSIONS = ("3.6", "3.7", "3.8", "3.9", "3.10")  # parse the programs; refused in one line
NO_PYTHON_3 = "2.7"  # cannot parse them: Python's own SyntaxError
# A program's usage, then each command of the notes assistant's.
HELPS = [(program,) for program in PROGRAMS] + [("project/app.py", command)
                                                 for command in ("ask", "chat", "search", "serve")]

# Runs each of HELPS with --help in this process; prints the usage paragraphs as one JSON list.
HELP_CODE = """import contextlib, io, json, runpy, sys
usages = []
for words in json.loads(sys.argv[1]):
    sys.argv, shown = [*words, "--help"], io.StringIO()
    with contextlib.redirect_stdout(shown), contextlib.suppress(SystemExit):
        runpy.run_path(words[0], run_name="__main__")
    usages.append(shown.getvalue().split("\\n\\n")[0])
print(json.dumps(usages))
"""


def programs():
    """The programs a learner runs: the top level's scripts but cli.py, and project/'s but workspace.py."""
    found = [path.name for path in ROOT.glob("*.py") if path.name != "cli.py"]
    found += [f"project/{path.name}" for path in (ROOT / "project").glob("*.py") if path.name != "workspace.py"]
    return sorted(found)


@functools.cache  # asked by more than one test; probing a pyenv shim costs a tenth of a second
def old_pythons():
    """(version, command) of each older Python here that really runs: on PATH, under pyenv, or via `py -3.X`."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = []
    for version in OLD_VERSIONS:
        candidates = [[shutil.which(f"python{version}")], [shutil.which("py"), f"-{version}"],
                      *([str(path)] for path in sorted(pyenv.glob(f"{version}.*/bin/python3"), reverse=True))]
        for command in candidates:
            if command[0] and reports(command, version):
                found.append((version, command))
                break
    return tuple(found)


def reports(command, version):
    """True when COMMAND starts a Python VERSION (a pyenv shim of an unselected version does not)."""
    try:
        proc = subprocess.run([*command, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30, env=dict(os.environ, PYENV_VERSION=""))
    except OSError:
        return False
    return proc.returncode == 0 and proc.stdout.strip() == version


def files(root):
    """Every file under ROOT but Python's own bytecode caches (git ignores them; a learner's Python writes them)."""
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if "__pycache__" not in path.parts)


def module_name(root, path):
    """The name PATH is imported by: from the root, or from project/ (its programs' folder)."""
    base = root / "project" if path.relative_to(root).parts[0] == "project" else root
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class OldPythonTest(WorkspaceTestCase):
    def test_the_line_names_the_version_the_need_and_where_to_get_it(self):
        line = cli.old_python((3, 10, 13, "final", 0), "loop_lab.py", "/usr/bin/python3")
        self.assertNotIn("\n", line)
        for part in ("loop_lab.py", "Python 3.10.13", "/usr/bin/python3", "需要 Python 3.11 或更高版本", "python.org",
                     "Microsoft Store", "Homebrew", "包管理器"):
            self.assertIn(part, line)
        for new in ((3, 11, 0, "final", 0), (3, 13, 0, "final", 0), (3, 14, 0, "alpha", 1), (4, 0, 0, "final", 0)):
            self.assertIsNone(cli.old_python(new, "loop_lab.py", "python3"))

    def test_an_old_version_exits_2_with_that_line_on_stderr(self):
        stderr = io.StringIO()
        with mock.patch.object(sys, "version_info", (3, 9, 18, "final", 0)), \
                mock.patch.object(sys, "argv", ["verify_loop.py"]), contextlib.redirect_stderr(stderr):
            with self.assertRaises(SystemExit) as stopped:
                cli.refuse_old_python()
        self.assertEqual(stopped.exception.code, 2)
        self.assertEqual(stderr.getvalue(), cli.old_python((3, 9, 18), "verify_loop.py", sys.executable) + "\n")
        cli.refuse_old_python()  # this Python: nothing happens

    def test_every_program_is_listed_here(self):
        self.assertEqual(programs(), sorted(PROGRAMS))

    def test_every_program_refuses_each_older_python_here_before_anything_runs(self):
        pythons = old_pythons()
        if not pythons:
            self.skipTest(f"这台机器上没有 Python {'、'.join(OLD_VERSIONS)}：旧版本被拒绝的真实运行只在有旧版本的机器上做"
                          "（上面用假的版本号测过同一个检查）")
        before = files(self.root)
        env = dict(os.environ, PYENV_VERSION="", PYTHONIOENCODING="utf-8")
        for number, (version, python) in enumerate(pythons):
            for program, args in {**PROGRAMS, **(TOOLS if number == 0 else {})}.items():  # the tools: once
                with self.subTest(python=version, program=program):
                    proc = subprocess.run([*python, program, *args], cwd=self.root, capture_output=True, timeout=30,
                                          env=env)
                    stderr = proc.stderr.decode("utf-8")
                    self.assertEqual((proc.returncode, proc.stdout), (2, b""), stderr)
                    self.assertEqual(len(stderr.splitlines()), 1, stderr)
                    self.assertIn(f"运行它的是 Python {version}.", stderr)
                    self.assertIn("需要 Python 3.11 或更高版本", stderr)
        # harness.py --check says the same as every program
        proc = subprocess.run([*pythons[0][1], "harness.py", "--check"], cwd=self.root, capture_output=True,
                              timeout=30, env=env)
        self.assertEqual((proc.returncode, proc.stdout), (2, b""))
        self.assertIn("需要 Python 3.11 或更高版本", proc.stderr.decode("utf-8"))
        self.assertEqual(files(self.root), before)

    def test_python_2_cannot_read_a_program_and_makes_nothing(self):
        """What README says of Python 2.7: its own English SyntaxError, exit 1, nothing created."""
        pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
        found = [shutil.which(f"python{NO_PYTHON_3}"), *map(str, sorted(pyenv.glob(f"{NO_PYTHON_3}.*/bin/python2")))]
        python = next((command for command in found if command and reports([command], NO_PYTHON_3)), None)
        if python is None:
            self.skipTest(f"这台机器上没有 Python {NO_PYTHON_3}")
        before = files(self.root)
        for program, args in PROGRAMS.items():
            with self.subTest(program):
                proc = subprocess.run([python, program, *args], cwd=self.root, capture_output=True, timeout=30,
                                      env=dict(os.environ, PYENV_VERSION=""))
                self.assertEqual((proc.returncode, proc.stdout), (1, b""))
                self.assertIn(b"SyntaxError", proc.stderr)
        self.assertEqual(files(self.root), before)


class SameOnEveryVersionTest(WorkspaceTestCase):
    def test_each_usage_is_the_programs_own_text_at_any_width(self):
        """argparse wraps a usage it makes by version and terminal width; a usage the program gives stays as written."""
        shown = [self.usages(width) for width in ("50", "200")]
        for words, narrow, wide in zip(HELPS, *shown):
            with self.subTest(" ".join(words)):
                self.assertTrue(narrow.startswith("用法："), narrow)
                self.assertEqual(narrow, wide)

    def usages(self, width):
        """The usage paragraph of each of HELPS' --help, all from one process whose terminal is WIDTH wide."""
        proc = subprocess.run([sys.executable, "-c", HELP_CODE, json.dumps(HELPS)], cwd=self.root, capture_output=True,
                              timeout=60, env=dict(os.environ, COLUMNS=width, PYTHONIOENCODING="utf-8",
                                                   PYTHONPATH=str(self.root / "project")))
        return json.loads(proc.stdout)

    def test_a_json_error_is_placed_as_python_3_11_places_it(self):
        # (text, 3.11's place); Python 3.13 places a trailing comma at the comma itself
        cases = (('{"a": 1,\n}', "第 2 行第 1 列"), ('[1,\n  ]', "第 2 行第 3 列"), ('{"a": 1, }', "第 1 行第 10 列"),
                 ('{"a":[1,2,],"b":{"c":3,}}', "第 1 行第 11 列"), ('{"a" 1}', "第 1 行第 6 列"),
                 ('{\n  "cards": [\n  ]x', "第 3 行第 4 列"))
        for text, place in cases:
            with self.subTest(text), self.assertRaises(json.JSONDecodeError) as raised:
                json.loads(text)
            self.assertEqual(cli.json_error_place(raised.exception), place)
        comma = '{"a": 1,\n}'.index(",")  # the error as Python 3.13 raises it, on any version
        as_313 = json.JSONDecodeError("Illegal trailing comma before end of object", '{"a": 1,\n}', comma)
        self.assertEqual(cli.json_error_place(as_313), "第 2 行第 1 列")

    def test_no_module_warns_when_compiled_or_imported(self):
        """A warning on start (3.12's SyntaxWarning for an invalid escape) reads to a learner as an error."""
        # Every module imported from its source (no bytecode is written or copied), each compiled as it is imported:
        # a warning while compiling is an error there too, naming the file.
        sources = sorted(path for path in self.root.rglob("*.py") if "__pycache__" not in path.parts)
        modules = [module_name(self.root, path) for path in sources]
        self.assertEqual(len(set(modules)), len(sources))  # no module hides another: every file is compiled
        code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
        proc = subprocess.run([sys.executable, "-W", "error", "-c", code, *modules], cwd=self.root,
                              capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, PYTHONPATH=str(self.root / "project"), PYTHONDONTWRITEBYTECODE="1"))
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))


def called_name(node):
    """The name a call calls (`skipTest` for self.skipTest(...)), or None."""
    called = getattr(node, "func", None)
    return getattr(called, "attr", getattr(called, "id", None))


class SkipReasonTest(unittest.TestCase):
    SKIPS = {"skipIf", "skipUnless", "skipTest", "SkipTest",
             "not_on_windows", "skip_on_windows", "skip_in_simulation"}  # tests/support.py's rule

    @classmethod
    def setUpClass(cls):
        """Every file under tests/ that names one of SKIPS read and parsed once for both tests (parsing them takes a
        second), where it is (nothing is written): (path, text, tree, the calls in it of any name in SKIPS)."""
        cls.sources = []
        for path in sorted((ROOT / "tests").glob("*.py")):
            text = path.read_text(encoding="utf-8")
            if not any(name in text for name in cls.SKIPS):  # no call of these names without the name itself
                continue
            tree = ast.parse(text)
            calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and called_name(node) in cls.SKIPS]
            cls.sources.append((path, text, tree, calls))
        cls.addClassCleanup(delattr, cls, "sources")

    def test_every_skip_reason_is_chinese(self):
        """The Windows-behaviour pass lists every skipped test with its reason, for a learner to read."""
        for path, _text, _tree, calls in self.sources:
            if path.name == "support.py":  # the rule's own calls: their reasons are the callers', checked there
                continue
            for node in calls:
                if node.args:
                    reason = node.args[-1]
                    text = "".join(part.value for part in getattr(reason, "values", [reason])
                                   if isinstance(part, ast.Constant) and isinstance(part.value, str))
                    with self.subTest(f"{path.name}:{node.lineno}"):
                        self.assertRegex(text, r"[\u4e00-\u9fff]")

    def test_a_test_skips_for_windows_by_the_one_rule_only(self):
        """Skipping for Windows another way (os.name, a missing os.killpg, a reason naming Windows) would skip on
        a learner's laptop without the Windows-behaviour pass seeing it: tests/support.py's rule is the only way."""
        own = {"support.py", "windows_behaviour.py", "windows_simulation.py"}
        windows = re.compile(r"Windows|os\.name|win32|WINDOWS|LESSON_WINDOWS_BEHAVIOUR|killpg")
        found = []
        for path, text, tree, calls in self.sources:
            calls = [node for node in calls if called_name(node) in ("skipIf", "skipUnless", "skipTest", "SkipTest")]
            if path.name in own or not calls:
                continue
            parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
            for node in calls:
                around = parents.get(parents.get(node))  # the `if` a skipTest() stands in
                said = ast.get_source_segment(text, node) + (
                    ast.get_source_segment(text, around.test) if isinstance(around, ast.If) else "")
                if windows.search(said):
                    found.append(f"{path.name}:{node.lineno}")
        self.assertEqual(found, [], "skip for Windows with tests/support.py not_on_windows / skip_on_windows")
        self.assertIsNotNone(windows.search('unittest.skipIf(os.name == "nt", "没有")'))  # the check can fail


if __name__ == "__main__":
    unittest.main()
