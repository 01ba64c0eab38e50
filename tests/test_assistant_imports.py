"""The assistant's package has no import circle, lazy imports inside functions included.

A lazy import only hides a circle until the day someone moves it to the top; the two that
existed (client <-> config, notes <-> ranking) were each a module that needed one small thing
of the other. Read-only: the modules are parsed from the checkout, never imported.
"""
import ast
import tempfile
import unittest
from pathlib import Path

from tests.support import ROOT

PACKAGE = ROOT / "project" / "assistant"


def package_imports(path) -> set:
    """The names of the package's modules that the module at PATH imports anywhere in its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:  # from . import config, errors
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("assistant."):
            found.add(node.module.split(".")[1])
    return found


def import_graph(folder) -> dict:
    modules = {path.stem: path for path in folder.glob("*.py") if path.stem != "__init__"}
    return {name: package_imports(path) & set(modules) for name, path in modules.items()}


def circle_in(graph):
    """One import circle as a list of module names (first = last), or None."""
    state = {}

    def visit(name, trail):
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                return trail[trail.index(other):] + [other]
            if other not in state:
                found = visit(other, trail + [other])
                if found:
                    return found
        state[name] = "done"
        return None

    for name in sorted(graph):
        if name not in state:
            found = visit(name, [name])
            if found:
                return found
    return None


class ImportCircleTest(unittest.TestCase):
    def test_the_package_has_no_import_circle(self):
        self.assertIsNone(circle_in(import_graph(PACKAGE)))

    def circle_of(self, sources):
        with tempfile.TemporaryDirectory() as folder:
            for name, text in sources.items():
                (Path(folder) / name).write_text(text, encoding="utf-8")
            return circle_in(import_graph(Path(folder)))

    def test_a_lazy_import_inside_a_function_counts(self):
        found = self.circle_of({"notes.py": "from .ranking import ranked_hits\n",
                                "ranking.py": "def held():\n    from .notes import normalize\n"})
        self.assertEqual(found, ["notes", "ranking", "notes"])

    def test_a_package_import_of_names_counts(self):
        found = self.circle_of({"client.py": "from . import config, errors\n",
                                "config.py": "def make():\n    from .client import ChatClient\n"})
        self.assertEqual(found, ["client", "config", "client"])

if __name__ == "__main__":
    unittest.main()
