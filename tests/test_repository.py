"""Tests of the repository as a whole: it stands on its own and stays readable.

Every rule a maintainer needs lives in the repository's own documents, so no file cites an
outside contract; long Python lines are kept for tables and messages only.
"""
import re
import subprocess
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LONG_LINES = 10
LONG = 120


def tracked_files():
    """The files git tracks, or every file outside .git when there is no git (a learner's ZIP)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        names = [name for name in listed.decode("utf-8").split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [ROOT / name for name in names if (ROOT / name).is_file()]


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


if __name__ == "__main__":
    unittest.main()
