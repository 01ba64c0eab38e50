"""Executable documentation: README.md, the teacher's page, the exercises, the notes assistant's page and the
maintainers' page (DOCUMENTS) run as a reader would.

The convention the documents follow (docs/MAINTAINERS.md, section 「可执行的文档」, says the same in Chinese):
- a fenced block with the info string `sh` holds POSIX commands, one per line, that the learner
  types in the order shown (text after an unquoted `#` is a comment);
- a `stdout` block after it shows what those commands print on stdout, all of them, in order;
  a `stderr` block shows their stderr. At most one of each per `sh` block; blocks in between
  (`powershell`, `bat`, plain text) and prose do not end the group;
- every other block (`powershell`, `bat`, `text`, untagged) is shown only, never run.

One test walks the README in a temporary copy of the workspace, then the other documents at the same time,
each in its own copy of the workspace as the README left it (each builds on the README only). In a whole-suite
run the walk is done by a process of its own, started while unittest collects the suite, so it runs beside the
other tests (BackgroundWalk). The test compares every shown output with what
the commands print, exactly, after the masks in MASKS (figures that vary from run to run; both sides).
Printed paths that differ on every machine are rewritten before comparing: the folder holding the
copy becomes `…`, this interpreter's path becomes `python3`. On Windows the scripts print paths with `/`
as everywhere; only line ends (`\r\n`) and suggested commands (`py -3`) differ there, and are read as here.
Commands run without a shell, so the test runs on Windows too: `python3` is this interpreter
(sys.executable) with -S, since the workspace needs the standard library only and a heavy
site-packages would otherwise dominate the start-up time; leading `NAME=value` words set
environment variables; `cd`, `pushd`, `popd`, `cp`, `rm`, `mv`, `mkdir`, `cat` and `echo $?` are done here
with their POSIX meaning (COMMANDS; pushd's list of folders is not printed). Every command in SKIPPED is not
run (each entry must still appear); any other command fails the test, so a document cannot quietly show a
command nobody ran.
Shares with the rest of the suite only tests/support.py (the temporary copy).
"""
import atexit
import concurrent.futures
import difflib
import glob
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support import _FAST_TEMP, PYTHON, ROOT, WorkspaceTestCase, copy_workspace

DOCUMENTS = ("README.md", "docs/loop/TEACHER.md", "docs/loop/EXERCISES.md", "docs/assistant/README.md",
             "docs/MAINTAINERS.md")
# What the documents' commands create in the workspace: removed from the copy first, in case the checkout
# holds them from a reader who followed the README there (a fresh ZIP has none of them).
CREATED_BY_DOCUMENTS = ("my-export", "ask-runs", "交作业", "全班.md", "全班.csv", "反馈", "张三.zip", "练习后", "下载", "下载.zip",
                        "评分工作表.csv", "成绩.csv", "反馈.zip", "核对.html", "全班.html")
# Commands a test cannot run, with the reason; every entry must still appear in a document.
SKIPPED = {
    "python3 -m unittest": "the suite itself: running it here would run this test again",
    "python3 tests/windows_behaviour.py": "the suite again, as on Windows: running it here would run this test again",
    "python3 tests/bench_loop.py": "a benchmark that times many runs on purpose (tens of seconds)",
}
# Figures that vary from run to run or by platform: (pattern, replacement, why). Applied to shown and printed text.
MASKS = (
    (r'"python": "\d+\.\d+\.\d+"', '"python": "3.x.y"', "harness.py --check reports this machine's Python"),
    (r"已用 \d+\.\d+ 秒", "已用 N 秒", "a time budget spent mid-loop: the seconds actually used"),
    (r"elapsed_seconds（\d+(\.\d+)?）", "elapsed_seconds（N）", "the verifier quotes those seconds"),
    (r"单调时钟读数 \d+\.\d{3}(–\d+\.\d{3})? 秒", "单调时钟读数 N 秒", "verify_loop --explain: a round's readings"),
    (r"子进程运行了 \d+\.\d 秒", "子进程运行了 N 秒", "an attempt ended at its time limit: how long its child ran"),
    (r"重试在 \d+\.\d\d 秒后发出", "重试在 N 秒后发出", "a retry's backoff has a random part (jitter), as the SDKs'"),
    (r'"decided_offset": \d+(\.\d+)?', '"decided_offset": N', "a decision's monotonic reading, as a record keeps it"),
    (r"单调时钟(至少)?走了 \d+\.\d{3} 秒", "单调时钟走了 N 秒", "a resume: the monotonic time of the segment before"),
    (r"隔了 -?\d+\.\d{3} 秒", "隔了 N 秒", "a resume: the wall-clock gap between two segments"),
    (r"(?m)^(.* \d{4}-\d\d-\d\d \d\d:\d\d:\d\d) +\d+$", r"\1 N",
     "`python3 -m zipfile -l`: a feedback file's size, whose suggested commands read `py -3` on Windows"),
)
FENCE = re.compile(r"^```\s*([^`\s]*)[^`]*$")


class Group:
    """One `sh` block and the outputs shown for it."""

    def __init__(self, document, line, commands):
        self.document, self.line, self.commands = document, line, commands
        self.shown = {}  # "stdout" / "stderr" -> text


def fenced_blocks(text):
    """(info string's first word, content, line number) of every fenced block, in order."""
    blocks, info, start, content = [], None, 0, []
    for number, line in enumerate(text.splitlines(), 1):
        if info is None:
            match = FENCE.match(line)
            if match:
                info, start, content = match.group(1), number, []
        elif line.strip() == "```":
            blocks.append((info, "".join(content), start))
            info = None
        else:
            content.append(line + "\n")
    return blocks


def command_groups(document, text):
    """The `sh` blocks of TEXT, each with its `stdout` / `stderr` block."""
    groups = []
    for info, content, line in fenced_blocks(text):
        if info == "sh":
            groups.append(Group(document, line, content.splitlines()))
        elif info in ("stdout", "stderr"):
            if not groups or info in groups[-1].shown:
                raise AssertionError(f"{document}:{line}: a `{info}` block needs its own `sh` block before it")
            groups[-1].shown[info] = content
    return groups


def masked(text):
    for pattern, replacement, _why in MASKS:
        text = re.sub(pattern, replacement, text)
    return text


class Shell:
    """Runs one document's commands in order, keeping the current folder and the last exit code."""

    def __init__(self, cwd):
        self.cwd, self.code, self.skipped_used, self.ran = Path(cwd), 0, set(), 0
        self.stack = []  # pushd's folders
        # The folder holding the copy, as given and as resolved (macOS: /var -> /private/var): shown as …
        folders = (Path(cwd).parent, Path(cwd).resolve().parent)
        self.outside = sorted({*map(str, folders), *(folder.as_posix() for folder in folders)}, key=len, reverse=True)
        # Bytecode goes to a cache beside the copy (not into it): each script is compiled once, not 100 times.
        self.env = dict(os.environ, PYTHONIOENCODING="utf-8",
                        PYTHONPYCACHEPREFIX=str(Path(cwd).parent / "pycache"))
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        for name in ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "DEEPSEEK_MODEL", "DEEPSEEK_TIMEOUT"):
            self.env.pop(name, None)

    def run_group(self, group):
        """Runs the group's commands; returns (stdout, stderr) of them all."""
        out, err = [], []
        for line in group.commands:
            words = shlex.split(line, comments=True)
            if not words:
                continue
            key = " ".join(words)
            if key in SKIPPED:
                self.skipped_used.add(key)
                continue
            stdout, stderr = self.run(words, f"{group.document}:{group.line}: {line}")
            out.append(stdout)
            err.append(stderr)
            self.ran += 1
        return "".join(out), "".join(err)

    def run(self, words, where):
        env = dict(self.env)
        while "=" in words[0] and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        command, args = words[0], [self.expand(word) for word in words[1:]]
        args = [item for group in args for item in group]
        if command == "python3":
            return self.python(args, env)
        if command not in COMMANDS:
            raise AssertionError(f"{where}: the test cannot run `{command}`; add it to COMMANDS or SKIPPED")
        try:
            stdout = COMMANDS[command](self, args) or ""
        except (OSError, ValueError) as exc:
            raise AssertionError(f"{where}: {exc}") from exc
        self.code = 0
        return stdout, ""

    def expand(self, word):
        """A word with * ? [ is a file pattern, as in the shell (sorted; no match keeps the word)."""
        if not any(char in word for char in "*?[") or word.startswith("-"):
            return [word]
        found = sorted(glob.glob(word, root_dir=self.cwd))
        return [path.replace(os.sep, "/") for path in found] or [word]

    def python(self, args, env):
        proc = subprocess.run([sys.executable, "-S", *args], cwd=self.cwd, env=env, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=60)  # nothing waits for a keyboard
        self.code = proc.returncode
        return self.hide_outside(decoded(proc.stdout)), self.hide_outside(decoded(proc.stderr))

    def hide_outside(self, text):
        """Paths that differ on every machine: the folder holding the copy, and this interpreter (`python3`)."""
        for folder in self.outside:
            text = text.replace(folder, "…")
        return text.replace(sys.executable, "python3")

    def path(self, name):
        return self.cwd / name

    def cd(self, args):
        (folder,) = args
        target = self.path(folder).resolve()
        if not target.is_dir():
            raise ValueError(f"cd: {folder} is not a folder")
        self.cwd = target

    def cp(self, args):
        recursive = args[0] in ("-R", "-r")
        source, target = (self.path(name) for name in args[recursive:])
        if source.is_dir():
            if not recursive or target.exists():
                raise ValueError(f"cp: copy a folder with -R to a new name ({target} exists or -R missing)")
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target / source.name if target.is_dir() else target)

    def rm(self, args):
        recursive, force = args[0] in ("-r", "-R", "-rf"), args[0] == "-rf"
        for name in args[recursive:]:
            target = self.path(name)
            if target.is_dir() and not target.is_symlink():
                if not recursive:
                    raise ValueError(f"rm: {name} is a folder (use rm -r)")
                handler = "onexc" if sys.version_info >= (3, 12) else "onerror"  # the same call; renamed in 3.12
                shutil.rmtree(target, **({handler: writable_then_again} if force else {}))
            else:
                target.unlink()

    def mv(self, args):
        source, target = (self.path(name) for name in args)
        if target.exists():
            raise ValueError(f"mv: {target} exists; the documents only move to new names")
        shutil.move(source, target)

    def pushd(self, args):
        self.stack.append(self.cwd)
        self.cd(args)

    def popd(self, args):
        if args or not self.stack:
            raise ValueError("popd: takes no argument, after a pushd")
        self.cwd = self.stack.pop()

    def mkdir(self, args):
        parents = args[0] == "-p"
        for name in args[parents:]:
            self.path(name).mkdir(parents=parents, exist_ok=parents)

    def cat(self, args):
        return "".join(decoded(self.path(name).read_bytes()) for name in args)

    def echo(self, args):
        if args != ["$?"]:
            raise ValueError("echo: only `echo $?` (the last exit code) is supported")
        return f"{self.code}\n"


def writable_then_again(remove, path, _error):
    """rm -f removes a read-only file too (git makes the files under .git/ so; Windows refuses to remove one)."""
    os.chmod(path, stat.S_IWRITE | stat.S_IREAD)
    remove(path)


COMMANDS = {"cd": Shell.cd, "pushd": Shell.pushd, "popd": Shell.popd, "cp": Shell.cp, "rm": Shell.rm, "mv": Shell.mv,
            "mkdir": Shell.mkdir, "cat": Shell.cat, "echo": Shell.echo}


# Python's own message for a script it cannot find names the file in the platform's way (the scripts never do).
MISSING_SCRIPT = re.compile(r"can't open file '[^']*'")


def decoded(data):
    """Printed bytes as the documents show them: Windows' line ends and `py -3` read as `\\n` and `python3`."""
    text = data.decode("utf-8", errors="backslashreplace").replace("\r\n", "\n")
    text = MISSING_SCRIPT.sub(lambda found: found.group().replace(os.sep, "/"), text)
    return text.replace(f"{PYTHON} ", "python3 ")


def disagreeing_figures(text):
    """Loops of TEXT whose blocks show different seconds used at a time-budget stop: the masks hide each figure,
    so two blocks pasted from two runs would pass one by one. {loop name: the figures} for each such loop."""
    figures = {}
    for _info, content, _line in fenced_blocks(text):
        for name in set(re.findall(r"loop-runs/([\w.-]+)", content)):
            figures.setdefault(name, set()).update(re.findall(r"已用 (\d+\.\d+) 秒(?:，达到| ≥)", content))
    return {name: sorted(found) for name, found in figures.items() if len(found) > 1}


def difference(shown, printed):
    return "".join(difflib.unified_diff(shown.splitlines(True), printed.splitlines(True), "shown", "printed"))


def mismatches(group, printed):
    """(stream, shown, printed) for each output shown for GROUP that differs from PRINTED, masked."""
    return [(stream, masked(shown), masked(printed[stream])) for stream, shown in group.shown.items()
            if masked(shown) != masked(printed[stream])]


def run_and_print(shell, group):
    return dict(zip(("stdout", "stderr"), shell.run_group(group)))


class Walk:
    """What walking one document found: how many outputs it compared, and each difference (line, text)."""

    def __init__(self):
        self.compared, self.problems = 0, []


def walk(shell, document):
    """Runs DOCUMENT's command groups in order with SHELL and compares every shown output."""
    outcome = Walk()
    for group in command_groups(document, (ROOT / document).read_text(encoding="utf-8")):
        printed = run_and_print(shell, group)
        outcome.compared += len(group.shown)
        if "Traceback (most recent call last)" in printed["stderr"]:
            outcome.problems.append((group.line, f"{document}:{group.line}: a traceback\n{printed['stderr']}"))
        for stream, shown, actual in mismatches(group, printed):
            outcome.problems.append((group.line, f"\n{document}:{group.line} {stream} differs:\n"
                                                 f"{difference(shown, actual)}"))
    return outcome


def walk_documents(root):
    """Walks every document in the workspace copy ROOT; a JSON-ready summary of what was compared and found.

    The README first; then the other documents at the same time, each in its own copy of the workspace as the
    README left it (each builds on the README only; their commands mostly wait on children).
    """
    root = Path(root)
    for name in CREATED_BY_DOCUMENTS:
        leftover = root / name
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink(missing_ok=True)
    first, *rest = DOCUMENTS
    shell = Shell(root)
    results = [walk(shell, first)]
    shells = [shell] + [copy_of(root, shell) for _ in rest[1:]]
    try:
        with concurrent.futures.ThreadPoolExecutor(len(rest)) as pool:
            results += pool.map(walk, shells, rest)
    finally:
        for twin in shells[1:]:
            shutil.rmtree(twin.home.parent, ignore_errors=True)
    return {"documents": [[document, outcome.compared, outcome.problems] for document, outcome in zip(DOCUMENTS, results)],
            "skipped_used": sorted(set().union(*(shell.skipped_used for shell in shells))),
            "ran": sum(shell.ran for shell in shells)}


def copy_of(root, shell):
    """A Shell in a fresh copy of the workspace ROOT as SHELL has left it, beside ROOT's own folder."""
    copy = Path(tempfile.mkdtemp(prefix="lesson14-docs-", dir=root.parent.parent)) / root.name
    shutil.copytree(root, copy, symlinks=True)
    twin = Shell(copy)
    twin.cwd, twin.code = copy / os.path.relpath(shell.cwd.resolve(), root.resolve()), shell.code
    twin.home = copy
    return twin


class BackgroundWalk:
    """The documents walked by a process of their own, started while unittest collects the suite (load_tests):
    its commands run on another core while the rest of the suite runs here, and nothing this process patches
    (mock, signals) reaches it. The test waits for it; run on its own, the test walks in-process instead."""

    def __init__(self):
        self.holder = Path(tempfile.mkdtemp(prefix="lesson14-docs-", dir=_FAST_TEMP))
        root = self.holder / "copy" / "lesson-14"
        copy_workspace(root)
        self.process = subprocess.Popen([sys.executable, "-m", "tests.test_docs", "--walk", str(root)], cwd=ROOT,
                                        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        atexit.register(self.close)

    def summary(self):
        out, _ = self.process.communicate(timeout=600)
        self.close()
        if self.process.returncode or not out.strip():  # its own traceback (a shown output that differs) is above
            raise AssertionError(f"the documents' walk (python3 -m tests.test_docs --walk) ended with exit "
                                 f"{self.process.returncode} and no result: read its error above this test's")
        return json.loads(out.decode("utf-8"))

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.holder, ignore_errors=True)


_background = []


def load_tests(loader, tests, pattern):
    if not _background:
        _background.append(BackgroundWalk())
    return tests


class DocumentsTest(WorkspaceTestCase):
    def test_every_shown_command_prints_what_is_shown(self):
        summary = _background.pop().summary() if _background else walk_documents(self.root)
        compared = 0
        for document, count, problems in summary["documents"]:
            compared += count
            for line, problem in problems:
                with self.subTest(document=document, line=line):
                    self.fail(problem)
        self.assertEqual(sorted(SKIPPED), summary["skipped_used"], "every SKIPPED command must still be shown")
        # The documents are mostly commands with their output: finding few means the convention broke.
        self.assertGreaterEqual(summary["ran"], 50)
        self.assertGreaterEqual(compared, 40)
        if os.environ.get("DOCS_TEST_COUNTS"):
            print(f"\ntest_docs: {summary['ran']} commands run, {compared} outputs compared", file=sys.stderr)

    def test_a_changed_line_fails(self):
        """The comparison can fail: one figure changed in a shown line is a difference."""
        shown = ("```sh\npython3 harness.py --check\necho $?\n```\n\n```stdout\n"
                 '{"ready": true, "missing": [], "watched_files": 14, "python": "3.11.7", "read_only": []}\n0\n```\n')
        shell = Shell(self.root)
        for text, expected in ((shown, []), (shown.replace(": 14,", ": 15,"), ["stdout"])):
            (group,) = command_groups("example", text)
            self.assertEqual([stream for stream, *_ in mismatches(group, run_and_print(shell, group))], expected)

    def test_the_blocks_of_one_loop_come_from_one_run(self):
        for document in DOCUMENTS:
            with self.subTest(document=document):
                self.assertEqual(disagreeing_figures((ROOT / document).read_text(encoding="utf-8")), {})
        two_runs = ("```stderr\n[第 2 轮] 已用 3.004 秒，达到时间预算 1 秒：loop-runs/x/loop.json\n```\n"
                    "```stderr\n核对过程：loop-runs/x\n  预算检查：已用 3.089 秒 ≥ 预算 1 秒\n```\n")
        self.assertEqual(disagreeing_figures(two_runs), {"x": ["3.004", "3.089"]})

    def test_groups_and_masks(self):
        text = ("```sh\necho $?  # 上一条命令的退出码\n```\n\n"
                "```powershell\n$LASTEXITCODE\n```\n\n```stdout\n0\n```\n")
        (group,) = command_groups("example", text)
        self.assertEqual((group.commands, group.shown), (["echo $?  # 上一条命令的退出码"], {"stdout": "0\n"}))
        with self.assertRaises(AssertionError):
            command_groups("example", "```stdout\n0\n```\n")
        self.assertEqual(masked("已用 0.012 秒"), masked("已用 3.500 秒"))
        self.assertNotEqual(masked('"watched_files": 14'), masked('"watched_files": 15'))
        listed = "张三_100001_assignsubmission_file_/张三.md         1980-01-01 00:00:00          449\n"
        self.assertEqual(masked(listed), masked(listed.replace("449", "447")))  # `py -3` in a feedback file
        self.assertNotEqual(masked(listed), masked(listed.replace("张三.md", "李四.md")))


if __name__ == "__main__" and sys.argv[1:2] == ["--walk"]:  # the background walk (BackgroundWalk)
    print(json.dumps(walk_documents(sys.argv[2]), ensure_ascii=True))
