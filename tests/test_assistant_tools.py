"""The assistant's tools: schemas, argument checks, the notes-folder boundary, caps, failures.

In-process; the real notes are only read, other notes folders are temporary.
"""
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import tools  # noqa: E402


def run(name, arguments):
    return tools.run_tool(name, json.dumps(arguments) if not isinstance(arguments, str) else arguments)


class Schemas(unittest.TestCase):
    def test_three_tools_in_openai_format(self):
        names = [schema["function"]["name"] for schema in tools.TOOL_SCHEMAS]
        self.assertEqual(names, ["list_notes", "search_notes", "read_note"])
        for schema in tools.TOOL_SCHEMAS:
            self.assertEqual(schema["type"], "function")
            self.assertTrue(schema["function"]["description"])
            parameters = schema["function"]["parameters"]
            self.assertEqual(parameters["type"], "object")
            self.assertIs(parameters["additionalProperties"], False)
        self.assertEqual(tools.TOOL_SCHEMAS[1]["function"]["parameters"]["required"], ["query"])
        self.assertEqual(tools.TOOL_SCHEMAS[2]["function"]["parameters"]["required"], ["note_id"])


class Successes(unittest.TestCase):
    def test_list_notes(self):
        content, is_error = run("list_notes", {})
        self.assertFalse(is_error)
        listed = json.loads(content)
        self.assertEqual(len(listed), 12)
        self.assertEqual(listed[0], {"note_id": "A01", "title": "RAG 的基本流程"})
        self.assertEqual(run("list_notes", "")[1], False)  # "" from a model = no arguments

    def test_search_notes(self):
        content, is_error = run("search_notes", {"query": "RAG 的步骤顺序"})
        self.assertFalse(is_error)
        self.assertEqual([hit["note_id"] for hit in json.loads(content)], ["A01"])

    def test_no_hit_is_an_empty_successful_result(self):
        self.assertEqual(run("search_notes", {"query": "量子纠缠"}), ("[]", False))

    def test_read_note_returns_the_text_verbatim(self):
        content, is_error = run("read_note", {"note_id": "A01"})
        self.assertFalse(is_error)
        note = json.loads(content)
        self.assertEqual(note["title"], "RAG 的基本流程")
        original = (ROOT / "project" / "notes" / "A01.md").read_text(encoding="utf-8")
        self.assertEqual(note["text"], original.replace("\r\n", "\n"))
        self.assertFalse(note["truncated"])


class Failures(unittest.TestCase):
    def assertToolError(self, result, *phrases):
        content, is_error = result
        self.assertTrue(is_error, content)
        self.assertTrue(content.startswith("错误："), content)
        for phrase in phrases:
            self.assertIn(phrase, content)

    def test_unknown_tool_names_the_available_ones(self):
        self.assertToolError(run("delete_note", {}), "delete_note", "list_notes、search_notes、read_note")

    def test_arguments_not_matching_the_schema(self):
        cases = [
            ("search_notes", "{not json", "不是合法的 JSON"),
            ("search_notes", "[\"RAG\"]", "必须是 JSON 对象"),
            ("search_notes", "null", "必须是 JSON 对象"),
            ("search_notes", {}, "缺少参数 query"),
            ("search_notes", {"query": "RAG", "limit": 3}, "不接受参数 limit"),
            ("search_notes", {"qeury": "RAG"}, "不接受参数 qeury"),
            ("search_notes", {"query": 5}, "必须是字符串"),
            ("search_notes", {"query": True}, "必须是字符串"),
            ("search_notes", {"query": "   "}, "长度必须在 1 到 200"),
            ("search_notes", {"query": "长" * 201}, "长度必须在 1 到 200"),
            ("read_note", {"note_id": ["A01"]}, "必须是字符串"),
            ("list_notes", {"all": True}, "不接受参数 all"),
        ]
        for name, arguments, phrase in cases:
            with self.subTest(name=name, arguments=arguments):
                self.assertToolError(run(name, arguments), phrase, name)

    def test_unknown_note_id_says_what_to_do(self):
        self.assertToolError(run("read_note", {"note_id": "A99"}), "A99", "A01", "search_notes")

    def test_ids_that_would_leave_the_notes_folder(self):
        for note_id in ("../A01", "../../README.md", "/etc/passwd", "A01/../..", "A01/../A02",
                        "..\\A01", "notes\\A01", "C:\\Windows\\win.ini", "~/A01", "..", "A01.md"):
            with self.subTest(note_id=note_id):
                content, is_error = run("read_note", {"note_id": note_id})
                self.assertTrue(is_error)
                self.assertNotIn("RAG 的基本流程\\n", content)
                if note_id != "A01.md":
                    self.assertIn("不能是路径", content)

    def test_a_tool_that_raises_becomes_an_error_result(self):
        with mock.patch.dict(tools.TOOLS, {"list_notes": lambda notes: 1 / 0}):
            self.assertToolError(run("list_notes", {}), "list_notes", "ZeroDivisionError")

    def test_keyboard_interrupt_is_never_swallowed(self):
        def interrupted(notes):
            raise KeyboardInterrupt
        with mock.patch.dict(tools.TOOLS, {"list_notes": interrupted}):
            with self.assertRaises(KeyboardInterrupt):
                run("list_notes", {})


class FolderBoundaryAndCaps(unittest.TestCase):
    """A temporary notes folder with a secret file next to it."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        base = Path(tmp.name)
        self.folder = base / "notes"
        self.folder.mkdir()
        (base / "SECRET.md").write_text("# 机密\n\n不应被读到\n", encoding="utf-8")
        for number in range(1, 9):
            (self.folder / f"N0{number}.md").write_text(f"# 笔记 {number}\n\n共同词\n", encoding="utf-8")
        (self.folder / "LONG.md").write_text("# 长笔记\n\n" + "字" * 9000, encoding="utf-8")

    def call(self, name, arguments):
        return tools.run_tool(name, json.dumps(arguments, ensure_ascii=False), notes_dir=self.folder)

    def test_search_is_capped_at_five_hits(self):
        content, is_error = self.call("search_notes", {"query": "共同词"})
        self.assertFalse(is_error)
        self.assertEqual([hit["note_id"] for hit in json.loads(content)],
                         ["N01", "N02", "N03", "N04", "N05"])

    def test_note_text_is_capped_at_4000_characters(self):
        note = json.loads(self.call("read_note", {"note_id": "LONG"})[0])
        self.assertEqual(len(note["text"]), 4000)
        self.assertTrue(note["truncated"])

    def test_secret_next_to_the_folder_is_unreachable(self):
        for note_id in ("../SECRET", "SECRET", str(self.folder.parent / "SECRET")):
            content, is_error = self.call("read_note", {"note_id": note_id})
            self.assertTrue(is_error)
            self.assertNotIn("不应被读到", content)

    @unittest.skipIf(not hasattr(os, "symlink"), "这里不能创建符号链接")
    def test_symlink_pointing_outside_is_not_a_note(self):
        try:
            (self.folder / "LINK.md").symlink_to(self.folder.parent / "SECRET.md")
        except OSError as exc:  # Windows without the privilege
            self.skipTest(f"这里不能创建符号链接：{exc}")
        content, is_error = self.call("read_note", {"note_id": "LINK"})
        self.assertTrue(is_error)
        self.assertNotIn("不应被读到", content)


if __name__ == "__main__":
    unittest.main()
