"""Tests of the repository as a whole: it stands on its own and stays readable.

Every rule a maintainer needs lives in the repository's own documents, so no file cites an
outside contract; long Python lines are kept for tables and messages only. README's 目录 names every
top-level entry and every document, and AGENTS.md names every file a verifier is made of (the
verify_*.py scripts and the workspace modules they import), so a coding assistant knows what not to edit.
"""
import ast
import re
import subprocess
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LONG_LINES = 10
LONG = 120


def git_files():
    """The paths git tracks, or None when there is no git (a learner's ZIP)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [name for name in listed.decode("utf-8").split("\0") if name]


def tracked_files():
    """The files git tracks, or every file outside .git when there is no git (a learner's ZIP)."""
    names = git_files()
    if names is None:
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [ROOT / name for name in names if (ROOT / name).is_file()]


def readme_listing():
    """The first word of each line of the text block under README's "## 目录"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("\n## 目录\n", 1)[1].split("```text\n", 1)[1].split("\n```", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def module_file(name):
    """The workspace file of module NAME (`cli`, `verifier.check`), or None when it is not the workspace's."""
    path = ROOT.joinpath(*name.split(".")).with_suffix(".py")
    return path if path.is_file() else None


def workspace_imports(path):
    """The workspace's own module files that the Python file PATH imports anywhere in its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)  # `from package import module`
    return {found for found in map(module_file, names) if found is not None}


def verifier_files():
    """verify_*.py and every workspace module they import, directly or not, as paths from the root."""
    seen, todo = set(), list(ROOT.glob("verify_*.py"))
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(workspace_imports(path))
    return sorted(path.relative_to(ROOT).as_posix() for path in seen)


class RepositoryTest(unittest.TestCase):
    def test_no_file_cites_an_outside_contract(self):
        outside = re.compile(r"SPEC\b|\.\./shared|§ ?\d")
        cited = [f"{path.relative_to(ROOT).as_posix()}:{number}"
                 for path in tracked_files() if path.suffix in (".py", ".md", ".txt", "")
                 and path != Path(__file__).resolve()  # the pattern itself
                 for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
                 if outside.search(line)]
        self.assertEqual(cited, [], "the repository must carry its own rules")

    def test_few_long_python_lines(self):
        long_lines = [f"{path.relative_to(ROOT).as_posix()}:{number}"
                      for path in tracked_files() if path.suffix == ".py"
                      for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                      if len(line) > LONG]
        self.assertLessEqual(len(long_lines), MAX_LONG_LINES, "\n".join(long_lines))

    def test_the_readme_lists_every_top_level_entry_and_document(self):
        tracked = git_files()
        if tracked is None:
            self.skipTest("这里没有 git：学员的文件夹里还有自己生成的运行和 ZIP，只有 git 知道发布了哪些文件")
        listed = readme_listing()
        tops = {name.split("/")[0] for name in tracked}
        unlisted = sorted(top for top in tops
                          if not any(entry.rstrip("/").split("/")[0] == top for entry in listed))
        self.assertEqual(unlisted, [], "README.md 「目录」 must name every top-level file and folder")
        documents = sorted(name for name in tracked if name.startswith("docs/"))
        self.assertEqual([name for name in documents if name not in listed], [],
                         "README.md 「目录」 must name every document under docs/")

    def test_the_readme_first_screen_says_where_to_start(self):
        """Before its first section the README shows the two commands and the reading order, down to the
        verifier's rules and `--explain`; the notes assistant and the maintainers have pages of their own."""
        first = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ", 1)[0]
        order = ["AGENTS.md", "docs/loop/TASK.md", "loop_lab.py", "verify_loop.py", "verifier/records.py",
                 "verifier/check.py", "verifier/clocks.py", "verifier/older.py", "verifier/explain.py", "--explain"]
        self.assertEqual([name for name in order if f"{name}" not in first], [])
        reading = first.split("读代码的顺序", 1)[1]
        found = [reading.index(name) for name in order[:4]]
        self.assertEqual(found, sorted(found), "the reading order")
        for command in ("python3 loop_lab.py --run demo-01 --scenario repair\n", "python3 -m unittest\n"):
            self.assertIn(f"```sh\n{command}```", first)
        self.assertLessEqual(first.count("\n"), 60, "one screen")
        for page in ("docs/assistant/README.md", "docs/MAINTAINERS.md"):
            self.assertIn(f"`{page}`", first)

    def test_agents_md_names_every_file_of_the_verifiers(self):
        text = (ROOT / "AGENTS.md").read_text(encoding="utf-8")
        files = verifier_files()
        self.assertIn("verifier/check.py", files)  # the search follows verify_loop.py's imports
        self.assertEqual([name for name in files if f"`{name}`" not in text], [],
                         "AGENTS.md must name every file a verifier is made of")


if __name__ == "__main__":
    unittest.main()
