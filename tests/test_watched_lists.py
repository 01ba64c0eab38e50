"""Every copy of the watched-file list agrees with the one in docs/harness/TASK.md.

The verifiers import nothing of the programs they check, so the list of the 14 files a harness
run depends on exists in several places: the task document (for people), harness.py,
verify_harness.py, and the loop's 16-file lists (the 14 + loop_lab.py + docs/loop/TASK.md) in
loop_lab.py and verifier/records.py (the loop verifier's copy). The document is the reference; this test reads it and compares.
"""
import importlib
import re
import unittest

from tests.support import ROOT

LOOP_EXTRA = ["loop_lab.py", "docs/loop/TASK.md"]


def documented_list():
    """The bullet list under "## 受监视的 14 个文件" in docs/harness/TASK.md, in its order."""
    text = (ROOT / "docs" / "harness" / "TASK.md").read_text(encoding="utf-8")
    section = text.split("## 受监视的 14 个文件", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- `([^`]+)`$", section, re.MULTILINE)


class WatchedListTest(unittest.TestCase):
    def setUp(self):
        self.listed = documented_list()

    def test_the_document_lists_14_distinct_files_that_exist(self):
        self.assertEqual(len(self.listed), 14)
        self.assertEqual(len(set(self.listed)), 14)
        for rel in self.listed:
            self.assertTrue((ROOT / rel).is_file(), rel)

    def test_the_harness_and_its_verifier_hold_the_same_list(self):
        for module_name in ("harness", "verify_harness"):
            with self.subTest(module_name):
                copy = importlib.import_module(module_name).WATCHED_FILES
                self.assertEqual(sorted(copy), sorted(self.listed))
                self.assertEqual(len(copy), len(set(copy)))

    def test_the_loops_lists_are_the_14_plus_its_own_two(self):
        compared = 0
        for module_name, attribute, extra in (("loop_lab", "LOOP_FILES", LOOP_EXTRA),
                                              ("verifier.records", "LOOP_FILES", LOOP_EXTRA),
                                              ("verifier.records", "WATCHED_FILES", [])):
            copy = getattr(importlib.import_module(module_name), attribute, None)
            if copy is None:  # this module keeps no list under that name
                continue
            compared += 1
            with self.subTest(f"{module_name}.{attribute}"):
                self.assertEqual(sorted(copy), sorted(self.listed + extra))
                self.assertEqual(len(copy), len(set(copy)))
        self.assertGreaterEqual(compared, 1, "the loop's 16-file list was not found")
