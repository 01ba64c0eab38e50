"""Tests of verify_export.py, the independent re-check of a candidate or an artifact (docs/harness/TASK.md).

The rule table of test_export_review.py runs through both implementations: the verifier's first
problem must be the exporter's message, word for word. Artifacts are made by the exporter in the
temporary workspace copy, then edited byte by byte, or their notes edited, and re-checked.
"""
import ast
import json
import os
import subprocess
import sys
import unittest
from unittest import mock

import export_review
import verify_export
from tests.support import ROOT
from tests.test_export_review import (FILE_CASES, QUOTE_A01, REVERSED_ANSWER, RULE_CASES, TRICKY_CANDIDATE,
                                      TRICKY_REVIEW, UNTITLED_NOTE, ExporterCase, candidate, card, run_main, sha256)

REVIEW_HASH = "review.md 与 cards.json 记录的 review_md_sha256 不符：两者之一被改动过，请重新导出到新的目录。"
RERENDER_ADVICE = "；review.md 只能由导出器生成，请重新导出到新的目录（运行产物则用新的运行名重跑），不要手工修改它。"


def review_differs(folder_name, line, got, want):
    """The verifier's message for a review.md that is not the rendering of cards.json and the notes."""
    return f"{folder_name}/review.md 与按 cards.json 和笔记重新生成的内容不同：第 {line} 行是{got}，应为{want}" + RERENDER_ADVICE
CARDS_RELAID = "cards.json 的排版与导出时不同：文件被手工改动过。"
NOT_UTF8_OR_JSON = "cards.json 或 review.md 不是合法的 UTF-8/JSON：产物被改动过。"
A01_CHANGED = "笔记 A01 已与导出时不同（或已不存在）：引文需要按现在的笔记重新核对。"


def imported_names(script):
    """Every module an import statement of SCRIPT names, at any depth (lazy imports too)."""
    tree = ast.parse((ROOT / script).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    return names


def modules_loaded_by(module):
    """The modules a fresh Python has loaded after `import MODULE` (nothing is written: no bytecode)."""
    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return set(json.loads(proc.stdout))


class IndependenceTest(unittest.TestCase):
    def test_verify_export_imports_nothing_of_the_exporter(self):
        self.assertEqual(imported_names("verify_export.py") & {"export_review", "harness", "loop_lab"}, set())
        self.assertNotIn("export_review", modules_loaded_by("verify_export"))
        self.assertLessEqual(imported_names("verify_export.py") - set(sys.stdlib_module_names), {"cli"})


class VerifierCase(ExporterCase):
    def exported(self, sample="valid"):
        folder = self.root / f"artifact-{sample}"
        export_review.export_candidate(self.root / "samples" / f"{sample}.json", folder, self.notes)
        return folder


class CandidateTest(VerifierCase):
    def test_first_problem_equals_the_exporters_message(self):
        for label, value, message in RULE_CASES + FILE_CASES:
            with self.subTest(label):
                path = self.write_candidate(value)
                with self.assertRaises(export_review.ValidationError) as caught:
                    export_review.export_candidate(path, self.root / "never", self.notes)
                found = verify_export.check_candidate(path, self.notes)
                self.assertEqual(found[:1], [message])
                self.assertEqual(str(caught.exception), found[0])

    def test_samples(self):
        expected = {"valid": [], "semantic": [], "bad-quote": ["第 1 张卡：引文不在对应笔记原文中。"]}
        for sample, problems in expected.items():
            with self.subTest(sample):
                self.assertEqual(verify_export.check_candidate(self.root / "samples" / f"{sample}.json", self.notes),
                                 problems)

    def test_every_broken_card_is_named_with_its_number(self):
        value = candidate(card(quote="这句话并不在笔记里。"), card(), card(note_id="Z99"), card(qoute="x"))
        self.assertEqual(verify_export.check_candidate(self.write_candidate(value), self.notes), [
            "第 1 张卡：引文不在对应笔记原文中。",
            "第 3 张卡：找不到笔记 Z99（project/notes/Z99.md 不存在）。",
            "第 4 张卡：有未知字段 qoute（只允许 note_id、question、answer、quote）。",
        ])

    def test_bom_crlf_and_multiline_quotes_pass(self):
        spanning = QUOTE_A01 + "\r\n\r\n一次完整的请求通常包括下面几步："
        data = json.dumps(candidate(card(quote=spanning)), ensure_ascii=False, indent=2).encode("utf-8")
        for label, variant in (("BOM", b"\xef\xbb\xbf" + data), ("CRLF file", data.replace(b"\n", b"\r\n"))):
            with self.subTest(label):
                self.assertEqual(verify_export.check_candidate(self.write_candidate(variant), self.notes), [])

    def test_crlf_note_checkout_still_matches(self):
        note = self.notes / "A01.md"
        note.write_bytes(note.read_bytes().replace(b"\n", b"\r\n"))
        self.assertEqual(verify_export.check_candidate(self.root / "samples" / "valid.json", self.notes), [])

    # once a traceback: a cited note that cannot be read or decoded
    def test_note_that_is_a_folder_gets_the_exporters_message(self):
        (self.notes / "A01.md").unlink()
        (self.notes / "A01.md").mkdir()
        path = self.write_candidate(candidate())
        with self.assertRaises(export_review.ValidationError) as caught:
            export_review.validate(candidate(), self.notes)
        self.assertEqual(str(caught.exception), "第 1 张卡：找不到笔记 A01（project/notes/A01.md 不存在）。")
        try:
            found = verify_export.check_candidate(path, self.notes)
        except OSError as exc:
            self.fail(f"verify_export raised {type(exc).__name__} instead of naming the note")
        self.assertEqual(found, [str(caught.exception)])

    # once a traceback: a cited note that cannot be read or decoded
    def test_note_that_is_not_utf8_is_a_problem_not_a_crash(self):
        note = self.notes / "A01.md"
        note.write_bytes(note.read_bytes() + b"\xff\xfe")
        try:
            found = verify_export.check_candidate(self.write_candidate(candidate()), self.notes)
        except UnicodeDecodeError as exc:
            self.fail(f"verify_export raised {type(exc).__name__} instead of naming the note")
        self.assertEqual(len(found), 1)
        self.assertIn("A01", found[0])


class ArtifactTest(VerifierCase):
    def test_fresh_exports_pass(self):
        for sample in ("valid", "semantic"):
            with self.subTest(sample):
                self.assertEqual(verify_export.check_artifact(self.exported(sample), self.notes), [])

    def assert_every_edit_rejected(self, path, positions, expected=None):
        original = path.read_bytes()
        for position in positions:
            for replacement in (original[position] ^ 0x01, 0x20 if original[position] != 0x20 else 0x0A):
                with self.subTest(file=path.name, position=position, byte=replacement):
                    path.write_bytes(original[:position] + bytes([replacement]) + original[position + 1:])
                    problems = verify_export.check_artifact(path.parent, self.notes)
                    self.assertTrue(problems, "an edited byte must be rejected")
                    if expected:
                        self.assertTrue(set(problems) & set(expected), problems)
        path.write_bytes(original)
        self.assertEqual(verify_export.check_artifact(path.parent, self.notes), [])

    def test_any_byte_changed_in_review_md_is_rejected(self):
        review = self.exported() / "review.md"
        text = review.read_bytes()
        positions = {0, len(text) // 3, len(text) // 2, len(text) - 1, text.index(b" "), text.index(b"\n>")}
        # a byte inside a Chinese character may also break the UTF-8 itself
        self.assert_every_edit_rejected(review, sorted(positions))
        review.write_bytes(text + "已通过\n".encode("utf-8"))
        self.assertEqual(verify_export.check_artifact(review.parent, self.notes),
                         [review_differs("artifact-valid", 45, "「已通过」", "（文件已结束）")])

    def test_any_byte_changed_in_cards_json_is_rejected(self):
        cards = self.exported() / "cards.json"
        data = cards.read_bytes()
        positions = set(range(0, len(data), 97)) | {
            len(data) - 1,                                  # the final newline
            data.index(b"\n  ") + 1,                        # indentation
            data.index(b": ") + 1,                          # the space after a colon
            data.index(b'"A01"') + 3,                       # a note id
            data.index(b'"review_md_sha256": "') + 25,      # a recorded hash
            data.index(b'"content_sha256": "') + 30,
        }
        self.assert_every_edit_rejected(cards, sorted(positions))

    def test_review_md_rewritten_with_its_hash_recorded_is_still_rejected(self):
        folder = self.exported("semantic")
        review, cards = folder / "review.md", folder / "cards.json"
        review.write_bytes(review.read_bytes().replace(REVERSED_ANSWER.encode("utf-8"), "先检索，再生成。".encode("utf-8")))
        record = json.loads(cards.read_text(encoding="utf-8"))
        record["review_md_sha256"] = sha256(review.read_bytes())
        cards.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [review_differs(
            "artifact-semantic", 10, "「**答：** 先检索，再生成。」",
            "「**答：** 先让模型生成回答，再去检索相关段落，把检索到的段落附在回答后面作为…」")])

    def test_whitespace_only_edit_of_cards_json_is_named(self):
        cards = self.exported() / "cards.json"
        cards.write_bytes(cards.read_bytes().replace(b'": "', b'":  "', 1))
        self.assertEqual(verify_export.check_artifact(cards.parent, self.notes), [CARDS_RELAID])

    def test_missing_artifact_file_is_named(self):
        for name in ("review.md", "cards.json"):
            with self.subTest(name):
                folder = self.exported()
                (folder / name).unlink()
                problems = verify_export.check_artifact(folder, self.notes)
                self.assertEqual(len(problems), 1)
                self.assertTrue(problems[0].startswith(f"产物不完整：缺少 {name}"), problems)
                folder.rename(self.root / f"used-{name}")
        folder = self.exported()
        for name in ("review.md", "cards.json"):
            (folder / name).unlink()
        (problem,) = verify_export.check_artifact(folder, self.notes)
        self.assertTrue(problem.startswith("产物不完整：缺少 review.md、cards.json（"), problem)

    def test_note_edited_after_export_is_named(self):
        folder = self.exported()
        note = self.notes / "A01.md"
        note.write_bytes(note.read_bytes() + "\n补充：一行新内容。\n".encode("utf-8"))
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [A01_CHANGED])

    def test_note_edited_so_the_quote_is_gone_names_card_and_note(self):
        folder = self.exported()
        note = self.notes / "A01.md"
        note.write_text(note.read_text(encoding="utf-8").replace("先检索相关段落", "先检索段落"), encoding="utf-8")
        self.assertEqual(verify_export.check_artifact(folder, self.notes),
                         ["第 1 张卡：引文不在对应笔记原文中。", A01_CHANGED])

    def test_note_deleted_after_export_is_named(self):
        folder = self.exported()
        (self.notes / "A07.md").unlink()
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [
            "第 4 张卡：找不到笔记 A07（project/notes/A07.md 不存在）。",
            "笔记 A07 已与导出时不同（或已不存在）：引文需要按现在的笔记重新核对。"])

    # once missed: a same-size note edit under an unchanged mtime (a stale process-wide cache)
    def test_same_size_note_edit_is_seen_even_when_mtime_is_unchanged(self):
        folder = self.exported()
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [])
        note = self.notes / "A01.md"
        before = note.stat()
        text = note.read_text(encoding="utf-8")
        edited = text.replace("通常取前 3 到 5 段", "通常取前 2 到 4 段")
        self.assertNotEqual(edited, text)
        note.write_text(edited, encoding="utf-8")
        # a file system with coarse timestamps (FAT: 2 s, HFS+: 1 s) or a copy that keeps mtimes
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [A01_CHANGED])

    # once a traceback: a note_id that is a list in cards.json
    def test_cards_json_with_a_non_string_note_id_is_a_problem_not_a_crash(self):
        folder = self.exported()
        path = folder / "cards.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        record["cards"][0]["note_id"] = ["A01"]
        path.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        try:
            problems = verify_export.check_artifact(folder, self.notes)
        except TypeError as exc:
            self.fail(f"check_artifact raised {type(exc).__name__}: {exc}")
        self.assertIn("第 1 张卡：note_id 必须是字符串。", problems)

    def test_forged_record_shape_is_rejected(self):
        folder = self.exported()
        path = folder / "cards.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        record["schema"] = "review-cards/2"
        path.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        self.assertEqual(verify_export.check_artifact(folder, self.notes),
                         ["cards.json 的字段与导出格式 review-cards/1 不符：产物被改动过。"])


def forge(folder, edit_review):
    """A forger's edit of review.md, with cards.json's review_md_sha256 recomputed to match it."""
    review, cards = folder / "review.md", folder / "cards.json"
    review.write_bytes(edit_review(review.read_bytes()))
    record = json.loads(cards.read_text(encoding="utf-8"))
    record["review_md_sha256"] = sha256(review.read_bytes())
    cards.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


class ForgedReviewTest(VerifierCase):
    """review.md must be exactly the rendering of cards.json and the notes, whatever hashes were recomputed."""

    def test_appended_approval_line_is_named_with_its_line(self):
        folder = self.exported("semantic")
        forge(folder, lambda data: data + "\n已通过：内容已人工审核。\n".encode("utf-8"))
        self.assertEqual(verify_export.check_artifact(folder, self.notes),
                         [review_differs("artifact-semantic", 36, "「已通过：内容已人工审核。」", "（文件已结束）")])

    def test_answer_replaced_and_the_recorded_one_hidden_in_a_comment(self):
        folder = self.exported("semantic")
        hidden = f"**答：** 先检索相关段落，再生成回答。<!-- {REVERSED_ANSWER} -->".encode("utf-8")
        forge(folder, lambda data: data.replace(f"**答：** {REVERSED_ANSWER}".encode("utf-8"), hidden))
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [review_differs(
            "artifact-semantic", 10, "「**答：** 先检索相关段落，再生成回答。<!-- 先让模型生成回答，再去检索相…」",
            "「**答：** 先让模型生成回答，再去检索相关段落，把检索到的段落附在回答后面作为…」")])

    def test_any_small_edit_with_the_hash_recomputed_is_rejected(self):
        folder = self.exported()
        original = (folder / "review.md").read_bytes()
        edits = {"deleted a byte": lambda data, at: data[:at] + data[at + 1:],
                 "inserted a space": lambda data, at: data[:at] + b" " + data[at:],
                 "inserted a line": lambda data, at: data[:at] + b"\n" + data[at:]}
        for at in range(0, len(original), 89):
            for label, edit in edits.items():
                with self.subTest(label, at=at):
                    forge(folder, lambda data: edit(original, at))
                    problems = verify_export.check_artifact(folder, self.notes)
                    self.assertTrue(problems, "an edited review.md must be rejected")
                    self.assertTrue(problems[0].startswith(("artifact-valid/review.md 与按 cards.json 和笔记重新生成的内容不同",
                                                            NOT_UTF8_OR_JSON)), problems)

    def test_missing_final_newline_is_named(self):
        folder = self.exported()
        forge(folder, lambda data: data[:-1])
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [
            "artifact-valid/review.md 与按 cards.json 和笔记重新生成的内容不同：第 44 行（最后一行）少了结尾的换行"
            + RERENDER_ADVICE])

    def test_review_md_hash_edited_alone_is_named(self):
        folder = self.exported()
        cards = folder / "cards.json"
        record = json.loads(cards.read_text(encoding="utf-8"))
        record["review_md_sha256"] = "0" * 64
        cards.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [REVIEW_HASH])

    def test_the_exporters_rendering_of_tricky_text_passes(self):
        # the second renderer agrees on whitespace, CRLF, a blank quote line and an untitled note
        (self.notes / "Z01.md").write_bytes(UNTITLED_NOTE.encode("utf-8"))
        _, folder = self.export(TRICKY_CANDIDATE)
        self.assertEqual((folder / "review.md").read_bytes().decode("utf-8"), TRICKY_REVIEW)
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [])


    def test_both_renderers_find_the_same_note_title(self):
        for number, first_line in enumerate(("#  有空格的标题  ", "#没有空格", "\ufeff# 有 BOM", "## 二级标题", "# ", "#")):
            with self.subTest(first_line=first_line):
                (self.notes / "Z02.md").write_bytes(f"{first_line}\r\n引文在这里。\n".encode("utf-8"))
                _, folder = self.export(candidate(card(note_id="Z02", quote="引文在这里")), out_name=f"out-{number}")
                self.assertEqual(verify_export.check_artifact(folder, self.notes), [])


class StrictCardsJsonTest(VerifierCase):
    def test_duplicate_key_is_named_with_the_file(self):
        for key, old, new in (("title", b'  "title": ', rb'  "title": "\u5047", "title": '),
                              ("quote", b'"quote": ', b'"quote": "x", "quote": ')):
            with self.subTest(key):
                folder = self.exported()
                cards = folder / "cards.json"
                cards.write_bytes(cards.read_bytes().replace(old, new, 1))
                self.assertEqual(verify_export.check_artifact(folder, self.notes), [
                    f"artifact-valid/cards.json 里同一个对象中的键 {key} 出现了两次：产物被改动过，不能采信。"])
                folder.rename(self.root / f"used-{key}")

    def test_lone_surrogate_in_cards_json_is_a_problem_not_a_crash(self):
        folder = self.exported()
        cards = folder / "cards.json"
        cards.write_bytes(cards.read_bytes().replace(b'"RAG ', b'"\\ud800RAG ', 1))
        self.assertEqual(verify_export.check_artifact(folder, self.notes), [
            "artifact-valid/cards.json 含有无法用 UTF-8 保存的字符 \\ud800：产物被改动过，不能采信。"])

    def test_reordered_keys_with_every_hash_recomputed_fail(self):
        # cards.json's order is fixed: each card note_id, question, answer, quote; notes by id
        def card_fields_reversed(record):
            record["cards"][0] = dict(reversed(record["cards"][0].items()))

        def notes_reversed(record):
            record["notes"] = dict(reversed(record["notes"].items()))
        for change in (card_fields_reversed, notes_reversed):
            with self.subTest(change.__name__):
                folder = self.exported()
                cards = folder / "cards.json"
                record = json.loads(cards.read_text(encoding="utf-8"))
                self.assertGreater(len(record["notes"]), 1)  # reversing changes the order
                change(record)
                content = {key: record[key] for key in ("title", "cards", "notes")}
                record["content_sha256"] = sha256((json.dumps(content, ensure_ascii=False, indent=2) + "\n").encode())
                cards.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
                self.assertEqual(verify_export.check_artifact(folder, self.notes), [CARDS_RELAID])
                folder.rename(self.root / f"used-{change.__name__}")


class VerifyExportCliTest(VerifierCase):
    def run_verifier(self, target):
        code, out, err = self.run_cli("verify_export.py", target)
        self.assertNoTraceback(err)
        return code, self.assertOneJsonLine(out), err

    def test_candidate_pass_and_fail(self):
        code, result, err = self.run_verifier("samples/valid.json")
        self.assertEqual((code, result), (0, {"result": "pass", "kind": "candidate", "problems": []}))
        self.assertIn("核对通过", err)
        code, result, err = self.run_verifier("samples/bad-quote.json")
        self.assertEqual((code, result), (1, {"result": "fail", "kind": "candidate",
                                              "problems": ["第 1 张卡：引文不在对应笔记原文中。"]}))
        self.assertIn("问题：第 1 张卡：引文不在对应笔记原文中。", err)

    def test_artifact_pass_and_fail(self):
        folder = self.exported()
        code, result, _ = self.run_verifier(folder)
        self.assertEqual((code, result), (0, {"result": "pass", "kind": "artifact", "problems": []}))
        review = folder / "review.md"
        review.write_bytes(review.read_bytes().replace("RAG".encode(), b"rag", 1))
        code, result, err = self.run_verifier(folder)
        self.assertEqual((code, result), (1, {"result": "fail", "kind": "artifact", "problems": [
            review_differs(folder.name, 1, "「# rag 复习卡片」", "「# RAG 复习卡片」")]}))
        self.assertIn("共 1 个问题", err)

    def test_missing_target_exits_2_in_chinese(self):
        code, out, err = run_main(verify_export.main, str(self.root / "nowhere"))
        self.assertEqual(code, 2)
        self.assertIn("找不到", err)
        self.assertEqual(out, "")
        code, _, err = run_main(verify_export.main)
        self.assertEqual(code, 2)
        self.assertIn("缺少必需的参数", err)

    def test_a_file_it_may_not_read_is_a_problem_said_in_chinese(self):
        # root reads every file whatever its mode, so the refusal is simulated where the file is read
        target = self.root / "samples" / "valid.json"
        refused = PermissionError(13, "Permission denied", str(target))
        with mock.patch("os.open", side_effect=refused):
            code, out, err = run_main(verify_export.main, str(target))
        self.assertEqual(code, 1)
        [problem] = json.loads(out)["problems"]
        self.assertTrue(problem.startswith("无法读取 "), problem)
        self.assertTrue(problem.endswith("valid.json（PermissionError）：请确认它存在并且有读取权限后再核对。"), problem)
        self.assertNotIn("Traceback", err)


if __name__ == "__main__":
    unittest.main()
