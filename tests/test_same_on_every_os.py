"""The same screen and the same bytes on every OS: what a Windows learner sees and keeps is what Linux gives.

- The product never writes a file in text mode (Windows would turn each "\\n" into "\\r\\n"): every file is
  written as bytes with the line ends its format asks for. Checked by reading the product's source.
- Records made while text-mode writes translate line ends (as on Windows) are byte for byte the format of
  docs/harness/TASK.md: json.dumps(value, ensure_ascii=False, indent=2) and one "\\n", UTF-8.
- Paths shown to people use `/` even where the platform's own strings use `\\` (Windows' separators are
  taken from tests/windows_simulation.py); paths in records are relative to the workspace however it was
  reached (through a link, like macOS's /var -> /private/var).
- What a script says before it has finished loading, and the documents' one-liners that print records,
  work in any console encoding.
- The suite does not depend on how it was started (Ctrl-C ignored when it runs as a background job).
"""
import ast
import builtins
import contextlib
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import cli
import loop_lab
from tests import windows_simulation
from tests.support import ROOT, WorkspaceTestCase
from tests.test_docs import DOCUMENTS, fenced_blocks

# Calls that open a file: where their mode argument stands, and the mode when none is given (Path.open and
# the temporary files take the mode first).
OPENERS = {"open": (1, "r"), "fdopen": (1, "r"), "NamedTemporaryFile": (0, "w+b"), "TemporaryFile": (0, "w+b"),
           "SpooledTemporaryFile": (0, "w+b")}
ALWAYS_TEXT = {"write_text", "TextIOWrapper"}
SAFE_STDOUT = "sys.stdout.reconfigure(errors='backslashreplace')"


def product_files():
    """The workspace's own Python files: the scripts and the notes assistant; not the tests."""
    return sorted([*ROOT.glob("*.py"), *(ROOT / "project").rglob("*.py")])


def is_module_open(func):
    """io.open, os.fdopen, codecs.open, builtins.open: the file comes first, then the mode."""
    return isinstance(func.value, ast.Name) and func.value.id in ("io", "os", "codecs", "builtins")


def is_os_open(func):
    """os.open: a descriptor with flags, never a text file (the bytes go through os.read and os.write)."""
    return isinstance(func, ast.Attribute) and func.attr == "open" and getattr(func.value, "id", None) == "os"


def mode_of(call, name):
    """The mode an opening CALL gives: its string, the default when none is given, "?" when not a constant."""
    at, default = OPENERS[name]
    if name == "open" and isinstance(call.func, ast.Attribute) and not is_module_open(call.func):
        at = 0  # a method: Path.open(mode)
    given = next((keyword.value for keyword in call.keywords if keyword.arg == "mode"),
                 call.args[at] if len(call.args) > at else None)
    if given is None:
        return default
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else "?"


def text_mode_writes(source):
    """Line numbers of calls in SOURCE that write a file in text mode (or may: a mode that is not a constant)."""
    found = []
    for call in (node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)):
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
        if name in ALWAYS_TEXT or name == "print" and prints_to_a_file(call):
            found.append(call.lineno)
        elif name in OPENERS and not is_os_open(call.func):
            mode = mode_of(call, name)
            # a method's unknown first argument may be no mode at all (urllib's opener.open(request))
            unknown = mode == "?" and (isinstance(call.func, ast.Name) or is_module_open(call.func))
            if unknown or mode != "?" and "b" not in mode and set(mode) & set("wax+"):
                found.append(call.lineno)
    return found


def prints_to_a_file(call):
    target = next((keyword.value for keyword in call.keywords if keyword.arg == "file"), None)
    return target is not None and ast.unparse(target) not in ("sys.stdout", "sys.stderr")


class NoTextModeWriteTest(unittest.TestCase):
    def test_the_product_never_writes_in_text_mode(self):
        files = product_files()
        self.assertGreater(len(files), 20)
        found = [f"{path.relative_to(ROOT).as_posix()}:{line}" for path in files
                 for line in text_mode_writes(path.read_text(encoding="utf-8"))]
        self.assertEqual(found, [], "write bytes with the line ends the format asks for")

    def test_the_scan_finds_every_kind_of_text_mode_write(self):
        writes = ("p.write_text(s)", "open(p, 'w')", "open(p, mode='a', encoding='utf-8')", "io.open(p, 'x')",
                  "os.fdopen(fd, 'w')", "p.open('w')", "open(p, m)", "tempfile.NamedTemporaryFile('w')",
                  "print(s, file=out)", "io.TextIOWrapper(raw)", "open(p, 'r+')")
        reads_and_bytes = ("open(p)", "open(p, 'rb')", "p.open()", "p.open('wb')", "p.write_bytes(b)",
                           "tempfile.NamedTemporaryFile()", "print(s, file=sys.stderr)", "opener.open(request)")
        self.assertEqual(text_mode_writes("\n".join(writes)), list(range(1, len(writes) + 1)))
        self.assertEqual(text_mode_writes("\n".join(reads_and_bytes)), [])


class RecordBytesTest(WorkspaceTestCase):
    def test_records_made_with_windows_text_mode_are_the_same_bytes(self):
        windows_open = windows_simulation.translating(io.open)
        with mock.patch.object(builtins, "open", windows_open), mock.patch.object(io, "open", windows_open), \
                contextlib.redirect_stderr(io.StringIO()):
            loop_lab.run_loop(self.root, "same", "repair")
        records = ["loop-runs/same/loop.json", "runs/same-01/run.json", "runs/same-02/run.json",
                   "runs/same-02/artifact/cards.json"]
        for rel in records:
            with self.subTest(rel):
                data = (self.root / rel).read_bytes()
                self.assertNotIn(b"\r", data)
                self.assertEqual(data, (json.dumps(json.loads(data), ensure_ascii=False, indent=2) + "\n").encode())


class ShownPathsTest(unittest.TestCase):
    """cli.py is where every shown path is made; here it sees Windows' separators and name."""

    def setUp(self):
        patcher = mock.patch.object(cli, "os", windows_simulation.CliOs(launcher=True, separators=True))
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_paths_and_commands_are_shown_with_slashes(self):
        here = Path.cwd()
        beside = here.name + "-beside"
        self.assertEqual(cli.display_path(here / "runs" / "demo-01-01"), "runs/demo-01-01")
        self.assertEqual(cli.display_path(here.parent / beside / "x"), f"../{beside}/x")
        self.assertEqual(cli.command(here / "My Documents" / "verify_loop.py", here / "loop-runs" / "a"),
                         'py -3 "My Documents/verify_loop.py" loop-runs/a')

    def test_a_far_path_is_shown_whole_with_slashes(self):
        with tempfile.TemporaryDirectory() as folder:
            deep = Path(folder, "x", "y", "z")
            deep.mkdir(parents=True)
            here = Path.cwd()
            os.chdir(deep)
            try:
                shown = cli.display_path(Path(folder, "a", "b"))
            finally:
                os.chdir(here)
        self.assertNotIn("\\", shown)
        self.assertTrue(shown.endswith("/a/b"), shown)
        self.assertFalse(shown.startswith(".."), shown)


class LinkedWorkspaceTest(WorkspaceTestCase):
    """A workspace reached through a link is the same workspace: its paths stay relative to it."""

    def setUp(self):
        super().setUp()
        self.link = self.root.parent / "linked"
        try:
            os.symlink(self.root, self.link, target_is_directory=True)
        except OSError as exc:  # Windows without the right to make links
            self.skipTest(f"这里不能创建符号链接：{exc}")

    def test_a_path_is_relative_to_the_workspace_however_either_was_reached(self):
        real = self.root.resolve()
        for path, root in ((self.link / "runs" / "x", real), (real / "runs" / "x", self.link),
                           (self.link / "runs" / "x", self.link)):
            with self.subTest(path=path, root=root):
                self.assertEqual(cli.workspace_path(path, root), "runs/x")
        self.assertIsNone(cli.workspace_path(self.root.parent / "elsewhere", self.link))

    def test_hand_off_paths_are_relative_when_the_loop_runs_through_a_link(self):
        def run_child(root, name, sample):
            raise FileNotFoundError(2, "No such file or directory", str(self.link / "samples" / "gone.json"))

        with contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.link, "gone", "repair", run_child=run_child)
        self.assertIn("samples/gone.json", record["handoff"]["inspect"])


class ConsoleEncodingTest(WorkspaceTestCase):
    """On a Chinese Windows console (GBK) a redirected stderr must read as Chinese, not as UTF-8 bytes."""

    EARLY = (("harness.py", "hashlib", "已中断：harness.py 还在启动，没有创建任何文件。"),
             ("verify_loop.py", "hashlib", "已中断：还没有开始核对，什么都没有读写。"),
             ("project/app.py", "json", "已中断：笔记助手还在启动，没有发出任何请求。"))

    def test_ctrl_c_while_a_script_loads_is_said_in_the_consoles_encoding(self):
        fake = self.root.parent / "fake-stdlib"  # a module that is interrupted while it loads
        fake.mkdir()
        for script, module, message in self.EARLY:
            with self.subTest(script):
                # a real Ctrl-C arriving while the module loads (raise_signal runs the handler on Windows too)
                (fake / f"{module}.py").write_bytes(b"import signal\nsignal.raise_signal(signal.SIGINT)\n")
                proc = subprocess.run([sys.executable, script, "--help"], cwd=self.root, capture_output=True,
                                      timeout=30, env=dict(os.environ, PYTHONPATH=str(fake), PYTHONIOENCODING="gbk"))
                (fake / f"{module}.py").unlink()
                self.assertEqual(proc.returncode, 130)
                self.assertIn(message, proc.stderr.decode("gbk"))

    def test_the_documents_one_liners_print_records_on_any_console(self):
        """Every one-liner that prints Chinese asks for escapes where the console has no such characters;
        the way they all do it is then run on a Western European code page with output redirected."""
        codes = {words[2] for document in DOCUMENTS
                 for info, content, _ in fenced_blocks((ROOT / document).read_text(encoding="utf-8")) if info == "sh"
                 for words in map(shlex.split, content.splitlines()) if words[:2] == ["python3", "-c"]
                 and "ensure_ascii=False" in words[2] and "print(" in words[2]}
        self.assertTrue(codes)
        for code in codes:
            with self.subTest(code):
                self.assertIn(SAFE_STDOUT, code.split("print(", 1)[0])
        record = {"status": "failed", "error": {"type": "ValidationError", "message": "第 1 张卡：引文不在对应笔记原文中。"}}
        path = self.root / "record.json"
        path.write_bytes(json.dumps(record, ensure_ascii=False).encode("utf-8"))
        code = (f"import json, sys; {SAFE_STDOUT}; r = json.load(open(sys.argv[1], encoding='utf-8')); "
                "print(json.dumps({k: r[k] for k in sys.argv[2:]}, ensure_ascii=False))")
        self.assertIn(code, codes)  # the documents' own form, not one written for the test
        proc = subprocess.run([sys.executable, "-c", code, str(path), "status", "error"], capture_output=True,
                              timeout=30, env=dict(os.environ, PYTHONIOENCODING="cp1252"))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode("utf-8", "replace"))
        self.assertEqual(json.loads(proc.stdout.decode("cp1252")), record)


class SuiteEnvironmentTest(unittest.TestCase):
    def test_the_suite_takes_ctrl_c_back_when_started_with_it_ignored(self):
        code = "import signal, tests; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a background job inherits
        try:
            proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
        finally:
            signal.signal(signal.SIGINT, previous)
        self.assertEqual(proc.stdout.strip(), "True", proc.stderr)


if __name__ == "__main__":
    unittest.main()
