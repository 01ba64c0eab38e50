"""Documents and module docstrings name only files and folders of the workspace that exist.

A move (a module into a package, a document into docs/) must take every mention along. Read: README.md,
AGENTS.md, every docs/**/*.md, and the module docstring of every Python file. What counts as a name of the
workspace, a name a reader would look for in this folder:
- a path with `/` whose first part is a top-level entry of the workspace (`verifier/check.py`,
  `docs/loop/TASK.md`, `machinery/`, `.ci/run`); the workspace's own folder name in front of it
  (`lesson-14/loop_lab.py`, or the exercises' copy `lesson-14-scratch/loop_lab.py`) is the workspace itself;
  in a module docstring also a path from the module's own folder (`assistant/agent.py` in project/);
- a bare file name ending in `.py` (`loop_lab.py`, `records.py`): some file of the workspace has that name.
Not names of the workspace: what the programs make as they run (`runs/`, `loop-runs/`, `my-export/`, the
exercises' copy, the teacher's class folders), which are no top-level entries of what ships; placeholders
(`runs/NAME-NN`, `project/notes/ID.md`); and the files of other projects in ELSEWHERE. A glob
(`samples/*.json`) must match at least one file.
"""
import ast
import fnmatch
import functools
import io
import re
import tokenize
import unittest
import warnings

from tests.support import ROOT
from tests.test_repository import tracked_files

# Made at run time next to the scripts, or a copy of the workspace: never shipped, so never checked.
GENERATED = {"runs", "loop-runs", "my-export", "lesson-14-scratch", "__pycache__"}
WORKSPACE_NAMES = ("lesson-14", "lesson-14-scratch")  # the workspace's folder as the lesson and the exercises name it
PLACEHOLDER = re.compile(r"\b(NAME|NN|ID|FILE|DIR|OUT|OTHER|SUBMISSIONS|CANDIDATE|PORT|STUDENT)\b")
ELSEWHERE = {"_base_client.py"}  # openai-python's file, compared with in docs/assistant/DESIGN.md
TOKEN = re.compile(r"(?<![\w./*-])[\w.*-]+(?:/[\w.*-]*)+|(?<![\w./*-])[\w*-]+\.py\b", re.ASCII)


def texts():
    """(file, text) of every document and every module docstring, as paths from the root."""
    files = sorted(path.relative_to(ROOT).as_posix() for path in tracked_files())
    for rel in files:
        if rel in ("README.md", "AGENTS.md") or (rel.startswith("docs/") and rel.endswith(".md")):
            yield rel, (ROOT / rel).read_text(encoding="utf-8")
        elif rel.endswith(".py"):
            docstring = module_docstring((ROOT / rel).read_text(encoding="utf-8"))
            if docstring:
                yield rel, docstring


def module_docstring(text):
    """ast.get_docstring(ast.parse(TEXT), clean=False), from TEXT's first statement alone: a docstring is the first
    statement, and parsing every file whole took a second."""
    lines = io.StringIO(text).readlines()
    ends = (token.end[0] for token in tokenize.generate_tokens(iter(lines).__next__) if token.type == tokenize.NEWLINE)
    with warnings.catch_warnings():  # a file's own escapes are not this test's business
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse("".join(lines[:next(ends, len(lines))]))
        except SyntaxError:  # the first statement is compound (a def, a class): no docstring
            return None
    return ast.get_docstring(tree, clean=False)


def missing_names(rel, text, shipped):
    """The workspace names in TEXT (of the file REL) that name nothing in SHIPPED (the workspace's files)."""
    folders, tops, file_names, entries = layout(tuple(shipped))
    bases = [""] + ([rel.rsplit("/", 1)[0] + "/"] if rel.endswith(".py") and "/" in rel else [])
    missing = []
    for token in TOKEN.findall(text):
        name = token.rstrip(".")
        if PLACEHOLDER.search(name) or name in ELSEWHERE:
            continue
        if "/" not in name:
            if not matched(name, file_names):
                missing.append(name)
            continue
        first, _, rest = name.partition("/")
        if first in WORKSPACE_NAMES:  # the workspace itself: whatever follows is a name in it, unless made at run time
            name, first, bases = rest, rest.split("/")[0], [""]
            tops = tops | {first} - GENERATED
        base = next((base for base in bases if (base + first) in tops or (base + first) in entries), None)
        if base is None or not name:
            continue
        path = base + name.rstrip("/")
        if not (path in folders or matched(path, shipped)):
            missing.append(token)
    return missing


@functools.lru_cache(maxsize=4)  # one layout for every text checked against it
def layout(shipped):
    """(folders, top-level names but GENERATED, file names, folders and files) of SHIPPED, a tuple of files."""
    folders = {"/".join(parts[:i]) for parts in (f.split("/") for f in shipped) for i in range(1, len(parts))}
    tops = {name.split("/")[0] for name in shipped} - GENERATED
    return folders, tops, {f.rsplit("/", 1)[-1] for f in shipped}, folders | set(shipped)


def matched(pattern, names):
    """Whether PATTERN (a glob when it holds * ? or [, else a name) matches one of NAMES."""
    if not any(char in pattern for char in "*?["):
        return pattern in names
    return any(fnmatch.fnmatchcase(name, pattern) for name in names)


class DocumentedPathsTest(unittest.TestCase):
    def test_every_workspace_name_in_a_document_or_docstring_exists(self):
        shipped = sorted(path.relative_to(ROOT).as_posix() for path in tracked_files())
        stale = [f"{rel}: {name}" for rel, text in texts() for name in missing_names(rel, text, shipped)]
        self.assertEqual(stale, [], "these names of the workspace name nothing that exists")

    def test_what_counts_as_a_name_of_the_workspace(self):
        shipped = ["loop_lab.py", "verifier/check.py", "machinery/executor.py", "docs/loop/TASK.md",
                   "project/assistant/agent.py", "samples/valid.json"]
        cases = (("verifier/check.py、machinery/ 和 docs/loop/TASK.md", []),
                 ("loop_check.py 和 verifier/loop_check.py", ["loop_check.py", "verifier/loop_check.py"]),
                 ("`lesson-14-scratch/loop_lab.py`，`lesson-14/loop_labs.py`", ["lesson-14/loop_labs.py"]),
                 ("runs/NAME-NN/、loop-runs/repair-01/loop.json、my-export/ 和 samples/NAME.json", []),
                 ("samples/*.json 与 samples/*.md", ["samples/*.md"]),
                 ("needs_review/mechanical_pass、docs/harness/ 与 machinery/gone/", ["docs/harness/", "machinery/gone/"]))
        for text, missing in cases:
            with self.subTest(text):
                self.assertEqual(missing_names("README.md", text, shipped), missing)
        self.assertEqual(missing_names("project/app.py", "assistant/agent.py 与 assistant/gone.py", shipped),
                         ["assistant/gone.py"])


if __name__ == "__main__":
    unittest.main()
