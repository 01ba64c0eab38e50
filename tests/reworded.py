"""The suite with every sentence of verify_loop's findings reworded: what still passes depends on kinds, not words.

    python3 tests/reworded.py [TEST ...]        (default: the whole suite)

Every sentence of verifier/findings.py's table keeps its fields and loses its words: each Chinese character of its
text becomes 〇 (identifiers, paths and the fields' values stay as they are). Then the tests run in this process,
as `python3 -m unittest TEST ...` would. A test that fails here depends on the words of a finding: it should assert
the finding's kind and fields instead, unless it guards the words themselves (the executable documents, the table
in docs/loop/TEACHER.md, the page that shows the words). Tests that run verify_loop.py in a process of its own see
the table as written, not reworded. Prints the failing tests; exit 0 when none fails. Not a test.
"""
import sys  # noqa: E402 (the next three lines run on any Python: the workspace's cli.py refuses an old one)
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402,F401
import re
import unittest

from verifier import findings

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef“”‘’…]")
FIELD = re.compile(r"(\{\{|\}\}|\{[^{}]*\})")


def reworded(template):
    """TEMPLATE with its words replaced, its fields (and literal braces) kept."""
    return "".join(part if FIELD.fullmatch(part) else CJK.sub("〇", part) for part in FIELD.split(template))


def reword_table():
    for kind, entry in findings.SENTENCES.items():
        findings.SENTENCES[kind] = (entry[0], *map(reworded, entry[1:]))


def main(names):
    reword_table()
    root = str(Path(__file__).resolve().parent.parent)
    loader = unittest.defaultTestLoader
    suite = loader.loadTestsFromNames(names) if names else loader.discover("tests", top_level_dir=root)
    result = unittest.TextTestRunner(verbosity=0).run(suite)
    for test, _ in result.failures + result.errors:
        print(test.id())
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
