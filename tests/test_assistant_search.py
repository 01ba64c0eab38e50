"""Notes search: normalization rules and the evaluation cases S01-S10 over project/notes/.

Pure in-process and read-only: the notes are read from the checkout, any other notes folder
is a temporary one.
"""
import sys
import tempfile
import unittest
from pathlib import Path

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import notes  # noqa: E402

# (case, query, expected note ids in rank order). Title hits rank above body hits, then by id.
EVALUATION = [
    ("S01", "RAG 的步骤顺序", ["A01"]),
    ("S02", "ＲＡＧ", ["A01", "A03", "A05"]),                      # NFKC: full-width letters
    ("S03", "PYTHON", ["A03", "A07"]),                             # case-folded
    ("S04", "\tRAG\n的步骤顺序  ", ["A01"]),                        # trimmed, runs -> one space
    ("S05", "ＪＳＯＮ\u3000Ｓｃｈｅｍａ", ["A06"]),                   # full-width + ideographic space
    ("S06", "检索", ["A03", "A05", "A01", "A02", "A04"]),           # titles first, capped at 5
    ("S07", "重试", ["A08", "A07", "A11", "A12"]),
    ("S08", "上下文窗口", ["A09", "A02"]),
    ("S09", "retrieval-augmented generation", ["A01"]),
    ("S10", "not able", []),  # only "matches" A03's "notable" if internal spaces were deleted
]


class EvaluationCases(unittest.TestCase):
    def test_cases_s01_to_s10(self):
        loaded = notes.load_notes()
        for case, query, expected in EVALUATION:
            with self.subTest(case=case, query=query):
                hits = notes.search(query, loaded)
                self.assertEqual([hit["note_id"] for hit in hits], expected)

    def test_s10_is_meaningful_because_the_space_free_form_does_match(self):
        self.assertEqual([hit["note_id"] for hit in notes.search("notable")], ["A03"])

    def test_hits_carry_the_original_title_and_a_snippet_holding_the_phrase(self):
        hit = notes.search("RAG 的步骤顺序")[0]
        self.assertEqual(hit["title"], "RAG 的基本流程")
        self.assertIn("RAG 的步骤顺序是：先检索相关段落", hit["snippet"])
        wide = notes.search("ＪＳＯＮ　Ｓｃｈｅｍａ")[0]
        self.assertIn("JSON Schema", wide["snippet"])  # shown as written in the note
        self.assertLessEqual(len(wide["snippet"]), 140)

    def test_blank_query_and_limit(self):
        for query in ("", "   ", "\n\t"):
            self.assertEqual(notes.search(query), [])
        self.assertEqual(len(notes.search("检索", limit=2)), 2)
        self.assertEqual(notes.search("检索", limit=0), [])


class Normalize(unittest.TestCase):
    def test_rules(self):
        self.assertEqual(notes.normalize("  ＲＡＧ　Ｐｙｔｈｏｎ  "), "rag python")
        self.assertEqual(notes.normalize("a \t\n b"), "a b")
        self.assertEqual(notes.normalize("no table"), "no table")  # collapsed, never deleted
        self.assertEqual(notes.normalize("Straße"), "strasse")     # casefold, not lower
        self.assertEqual(notes.normalize(""), "")


class LoadNotes(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.folder = Path(tmp.name)

    def write(self, name, text):
        (self.folder / name).write_bytes(text.encode("utf-8"))

    def test_ids_titles_and_line_endings(self):
        self.write("B02.md", "# 第二篇\r\n\r\n正文 二\r\n")
        self.write("B01.md", "\ufeff# 第一篇\n\n正文一\n")
        self.write("not a note.md", "# 文件名有空格\n")
        self.write("B03.txt", "# 不是 md\n")
        loaded = notes.load_notes(self.folder)
        self.assertEqual(list(loaded), ["B01", "B02"])
        self.assertEqual(loaded["B01"].title, "第一篇")
        self.assertEqual(loaded["B02"].text, "# 第二篇\n\n正文 二\n")
        self.assertEqual([hit["note_id"] for hit in notes.search("正文 二", loaded)], ["B02"])

    def test_title_hit_ranks_above_a_lower_id_body_hit(self):
        self.write("C01.md", "# 其他\n\n这里提到向量检索。\n")
        self.write("C02.md", "# 向量检索\n\n正文。\n")
        hits = notes.search("向量检索", notes.load_notes(self.folder))
        self.assertEqual([hit["note_id"] for hit in hits], ["C02", "C01"])

    def test_a_broken_note_is_named(self):
        (self.folder / "B09.md").write_bytes(b"# \xff\xfe broken\n")
        with self.assertRaises(notes.NotesError) as caught:
            notes.load_notes(self.folder)
        self.assertIn("B09.md", str(caught.exception))
        self.assertIn("UTF-8", str(caught.exception))

    def test_missing_folder_has_no_notes(self):
        self.assertEqual(notes.load_notes(self.folder / "absent"), {})


if __name__ == "__main__":
    unittest.main()
