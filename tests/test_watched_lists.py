"""Every copy of the watched-file lists agrees with the documents, and the loop's covers the code it runs.

The verifiers import nothing of the programs they check, so the list of the 14 files a harness run
depends on exists in several places: the task document (for people), harness.py, verify_harness.py,
and the loop's lists (the 14 + the files of the table in docs/loop/TASK.md「受监视的文件」) in loop_lab.py and
verifier/records.py (the loop verifier's copy). The documents are the reference; these tests read them and
compare. The loop's list must also cover every module of the workspace that a loop's process runs: a test
runs the loop and looks at what it loaded.
"""
import importlib
import json
import re
import unittest

from tests.support import ROOT, WorkspaceTestCase


def documented_list():
    """The bullet list under "## 受监视的 14 个文件" in docs/harness/TASK.md, in its order."""
    text = (ROOT / "docs" / "harness" / "TASK.md").read_text(encoding="utf-8")
    section = text.split("## 受监视的 14 个文件", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- `([^`]+)`$", section, re.MULTILINE)


def loop_section():
    """(count in the heading, the files of its table) of "## 受监视的 N 个文件" in docs/loop/TASK.md."""
    text = (ROOT / "docs" / "loop" / "TASK.md").read_text(encoding="utf-8")
    count, section = re.search(r"^## 受监视的 (\d+) 个文件\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL).groups()
    return int(count), re.findall(r"^\| `([^`]+)` \|", section, re.MULTILINE)


def documented_loop_list():
    """The loop's watched files as the documents give them: the harness's 14 and the table's."""
    return documented_list() + loop_section()[1]


def documented_model_list():
    """The files a model loop runs beyond the 23: the table of docs/loop/TASK.md「开发模型提出候选」."""
    text = (ROOT / "docs" / "loop" / "TASK.md").read_text(encoding="utf-8")
    section = text.split("## 开发模型提出候选", 1)[1].split("\n## ", 1)[0].split("- **上下文**", 1)[1]
    return re.findall(r"^  \| `([^`]+)` \|", section, re.MULTILINE)


# Prints, at exit, the workspace's Python files loaded by the loop it then runs (as loop_lab.py does).
LOADED = '''import atexit, json, os, runpy, sys
ROOT, DRIVER = os.path.abspath("."), os.path.abspath(__file__)
def loaded():
    files = {os.path.relpath(os.path.abspath(m.__file__), ROOT).replace(os.sep, "/")
             for m in list(sys.modules.values()) if getattr(m, "__file__", None) and m.__file__ != DRIVER}
    sys.stderr.write("LOADED " + json.dumps(sorted(f for f in files if not f.startswith(".."))))
atexit.register(loaded)
sys.argv[0] = "loop_lab.py"
runpy.run_path("loop_lab.py", run_name="__main__")
'''


class WatchedListTest(unittest.TestCase):
    def setUp(self):
        self.listed = documented_list()

    def test_the_document_lists_14_distinct_files_that_exist(self):
        self.assertEqual(len(self.listed), 14)
        self.assertEqual(len(set(self.listed)), 14)
        for rel in self.listed:
            self.assertTrue((ROOT / rel).is_file(), rel)

    def test_the_loops_table_gives_its_real_count_of_distinct_files_that_exist(self):
        count, table = loop_section()
        everything = self.listed + table
        self.assertEqual(count, len(everything))
        self.assertEqual(len(set(everything)), count)
        for rel in table:
            self.assertTrue((ROOT / rel).is_file(), rel)

    def test_the_harness_and_its_verifier_hold_the_same_list(self):
        for module_name in ("harness", "verify_harness"):
            with self.subTest(module_name):
                copy = importlib.import_module(module_name).WATCHED_FILES
                self.assertEqual(sorted(copy), sorted(self.listed))
                self.assertEqual(len(copy), len(set(copy)))

    def test_the_loops_lists_are_the_documented_ones(self):
        compared = 0
        for module_name, attribute, documented in (("loop_lab", "LOOP_FILES", documented_loop_list()),
                                                   ("verifier.records", "LOOP_FILES", documented_loop_list()),
                                                   ("verifier.records", "WATCHED_FILES", self.listed)):
            copy = getattr(importlib.import_module(module_name), attribute, None)
            if copy is None:  # this module keeps no list under that name
                continue
            compared += 1
            with self.subTest(f"{module_name}.{attribute}"):
                self.assertEqual(sorted(copy), sorted(documented))
                self.assertEqual(len(copy), len(set(copy)))
        self.assertGreaterEqual(compared, 2, "the loop's lists were not found")


class ModelListTest(unittest.TestCase):
    def test_the_model_loops_lists_are_the_documented_ones(self):
        documented = documented_model_list()
        self.assertEqual(len(documented), 28)
        from proposer import scenario
        from verifier import records
        for copy in (scenario.PACKAGE_FILES + scenario.CLIENT_FILES + scenario.MOCK_FILES,
                     records.MODEL_PACKAGE + records.MODEL_CLIENT + records.MODEL_MOCK):
            self.assertEqual(sorted(copy), sorted(documented))
        for rel in documented:
            self.assertTrue((ROOT / rel).is_file(), rel)


class LoopRunsOnlyWatchedCodeTest(WorkspaceTestCase):
    def test_every_module_a_loop_runs_is_a_watched_file(self):
        (self.root / "loaded.py").write_text(LOADED, encoding="utf-8")
        loaded = set()
        for name, options in (("plain", ()), ("own-process", ("--attempt-timeout", "30"))):
            code, _, stderr = self.run_cli("loaded.py", "--run", name, "--scenario", "repair", *options)
            self.assertEqual(code, 0, stderr)
            loaded.update(json.loads(stderr.rsplit("LOADED ", 1)[1]))
        self.assertIn("machinery/executor.py", loaded)
        self.assertEqual(sorted(loaded - set(documented_loop_list())), [],
                         "a module the loop runs is missing from its watched files")

    def test_every_module_a_model_loop_runs_is_a_watched_file(self):
        (self.root / "loaded.py").write_text(LOADED, encoding="utf-8")
        code, _, stderr = self.run_cli("loaded.py", "--run", "m-01", "--scenario", "model", "--model-script",
                                       "samples/models/repeat.json")
        self.assertEqual(code, 1, stderr)
        loaded = set(json.loads(stderr.rsplit("LOADED ", 1)[1]))
        self.assertIn("project/assistant/client.py", loaded)
        self.assertEqual(sorted(loaded - set(documented_loop_list()) - set(documented_model_list())), [],
                         "a module the model loop runs is missing from its watched files")
