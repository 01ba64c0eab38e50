"""Tests of export_review.py: every mechanical rule and its message, the artifact, the CLI (docs/harness/TASK.md).

RULE_CASES is the table of rule violations with their exact messages; test_verify_export.py
runs the same table through the independent verifier, so both implementations must agree.
Most checks call the exporter in-process with paths inside the temporary workspace copy; only
the CLI contract (exit codes, one JSON line, Chinese stderr) runs subprocesses.
"""
import hashlib
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

import export_review
from tests.support import WorkspaceTestCase

DROP = object()  # a card change that removes the key
QUOTE_A01 = "RAG 的步骤顺序是：先检索相关段落，再把检索到的段落交给模型生成回答。"
VALID_CARD = {
    "note_id": "A01",
    "question": "RAG 的各个步骤应当按什么顺序进行？",
    "answer": "先检索相关段落，再生成回答。",
    "quote": QUOTE_A01,
}
QUOTE_MESSAGE = "第 1 张卡：引文不在对应笔记原文中。"
ALLOWED_KEYS = "（只允许 note_id、question、answer、quote）。"
NOTE_TITLES = {"A01": "RAG 的基本流程", "A02": "文档切块：大小、重叠与标题",
               "A03": "检索：关键词检索与向量检索", "A05": "评估：用固定用例检查检索与回答",
               "A07": "预算与停止条件"}
REVERSED_ANSWER = "先让模型生成回答，再去检索相关段落，把检索到的段落附在回答后面作为依据。"


def card(**changes):
    """VALID_CARD with CHANGES applied; a key changed to DROP is removed."""
    changed = {**VALID_CARD, **changes}
    return {key: value for key, value in changed.items() if value is not DROP}


def candidate(*cards, title="RAG 复习卡片"):
    return {"title": title, "cards": list(cards) if cards else [card()]}


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def run_main(main, *argv):
    """A script's main() in-process: (exit code, stdout, stderr); SystemExit becomes the code."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


NOT_A_NOTE_ID = ("../A01", "A01/../A02", "..\\A01", "/etc/passwd", "a01", "A1", "A01.md", "A０1")

# (what is wrong, candidate, the exact message of the first violation)
RULE_CASES = [
    ("candidate is a list", [], "候选必须是 JSON 对象，包含 title 和 cards 两个字段。"),
    ("candidate is a string", "RAG", "候选必须是 JSON 对象，包含 title 和 cards 两个字段。"),
    ("unknown top-level key", {"title": "T", "cards": [card()], "tags": []},
     "候选有未知字段 tags：只允许 title 和 cards。"),
    ("missing title", {"cards": [card()]}, "候选缺少字段 title。"),
    ("missing cards", {"title": "T"}, "候选缺少字段 cards。"),
    ("title not a string", candidate(title=["T"]), "title 必须是字符串。"),
    ("title null", candidate(title=None), "title 必须是字符串。"),
    ("title empty", candidate(title=""), "title 不能为空。"),
    ("title blank", candidate(title=" \t "), "title 不能为空。"),
    ("title 81 characters", candidate(title="题" * 81), "title 超过 80 个字符（现有 81 个）。"),
    ("cards not a list", {"title": "T", "cards": card()}, "cards 必须是数组。"),
    ("0 cards", {"title": "T", "cards": []}, "cards 必须有 1 到 20 张卡（现有 0 张）。"),
    ("21 cards", {"title": "T", "cards": [card()] * 21}, "cards 必须有 1 到 20 张卡（现有 21 张）。"),
    ("card not an object", candidate(card(), "A01"), "第 2 张卡：必须是 JSON 对象。"),
    ("typo key qoute", candidate(card(quote=DROP, qoute=QUOTE_A01)),
     "第 1 张卡：有未知字段 qoute" + ALLOWED_KEYS),
    ("missing answer", candidate(card(answer=DROP)), "第 1 张卡：缺少字段 answer。"),
    ("question not a string", candidate(card(question=42)), "第 1 张卡：question 必须是字符串。"),
    ("note_id null", candidate(card(note_id=None)), "第 1 张卡：note_id 必须是字符串。"),
    ("answer blank", candidate(card(answer="  \n ")), "第 1 张卡：answer 不能为空。"),
    ("quote empty", candidate(card(quote="")), "第 1 张卡：quote 不能为空。"),
    ("question 201 characters", candidate(card(question="问" * 201)),
     "第 1 张卡：question 超过 200 个字符（现有 201 个）。"),
    ("answer 501 characters", candidate(card(answer="答" * 501)),
     "第 1 张卡：answer 超过 500 个字符（现有 501 个）。"),
    ("quote 3 characters", candidate(card(quote="RAG")), "第 1 张卡：quote 至少要 4 个字符（现有 3 个）。"),
    ("quote 301 characters", candidate(card(quote="引" * 301)),
     "第 1 张卡：quote 超过 300 个字符（现有 301 个）。"),
    *((f"note id {bad!r}", candidate(card(note_id=bad)),
       f"第 1 张卡：note_id「{bad}」不是笔记编号（应形如 A01）。") for bad in NOT_A_NOTE_ID),
    ("unknown note Z99", candidate(card(note_id="Z99")),
     "第 1 张卡：找不到笔记 Z99（project/notes/Z99.md 不存在）。"),
    ("quote one character off", candidate(card(quote=QUOTE_A01.replace("先检索", "后检索"))), QUOTE_MESSAGE),
    ("quote without its last character changed", candidate(card(quote=QUOTE_A01[:-1] + "！")), QUOTE_MESSAGE),
    ("quote from another note", candidate(card(note_id="A02")), QUOTE_MESSAGE),
    ("bad quote on card 3", candidate(card(), card(), card(quote="这句话并不在笔记里。")),
     "第 3 张卡：引文不在对应笔记原文中。"),
    # rule order: the first violation wins
    ("order: unknown top-level key before a missing one", {"title": "T", "extra": 1},
     "候选有未知字段 extra：只允许 title 和 cards。"),
    ("order: title before cards", {"title": "", "cards": 5}, "title 不能为空。"),
    ("order: card count before the cards' content", {"title": "T", "cards": ["x"] * 21},
     "cards 必须有 1 到 20 张卡（现有 21 张）。"),
    ("order: an earlier card first", candidate(card(answer=DROP), card(note_id="Z99")),
     "第 1 张卡：缺少字段 answer。"),
    ("order: unknown key before missing and wrong-typed keys", candidate({"note_id": 1, "qoute": "RAG 的"}),
     "第 1 张卡：有未知字段 qoute" + ALLOWED_KEYS),
    ("order: fields in the order note_id, question, answer, quote",
     candidate(card(answer="", question="问" * 201, quote=5)),
     "第 1 张卡：question 超过 200 个字符（现有 201 个）。"),
    ("order: quote length before note id", candidate(card(note_id="../A01", quote="RAG")),
     "第 1 张卡：quote 至少要 4 个字符（现有 3 个）。"),
    ("order: note before quote", candidate(card(note_id="Z99", quote="这句话并不在笔记里。")),
     "第 1 张卡：找不到笔记 Z99（project/notes/Z99.md 不存在）。"),
    ("order: a valid card, then two broken ones",
     candidate(card(), card(quote="这句话并不在笔记里。"), card(note_id="Z99")),
     "第 2 张卡：引文不在对应笔记原文中。"),
]

SURROGATE = "含有无法用 UTF-8 保存的字符 \\u{}（JSON 里单独的代理项转义）：请删掉它或换成完整的字符后再试。"


def second_card(**changes):
    """Candidate bytes (JSON's ASCII escapes): a valid card, then VALID_CARD with CHANGES (lone surrogates allowed)."""
    return json.dumps(candidate(card(), card(**changes))).encode("ascii")


# (what the file holds, its bytes, the exact message)
FILE_CASES = [
    ("broken JSON", b'{"title": "x", "cards": [}', "候选文件不是合法的 JSON：第 1 行第 26 列附近有语法错误。"),
    ("trailing comma on line 3", b'{\n  "title": "x",\n}', "候选文件不是合法的 JSON：第 3 行第 1 列附近有语法错误。"),
    ("empty file", b"", "候选文件不是合法的 JSON：第 1 行第 1 列附近有语法错误。"),
    ("BOM, then broken JSON", b'\xef\xbb\xbf{\n"title" "x"}', "候选文件不是合法的 JSON：第 2 行第 9 列附近有语法错误。"),
    ("non-UTF-8 bytes", b'{"title": "\xff\xfe", "cards": []}', "候选文件不是 UTF-8 编码的文本，请用 UTF-8 另存后再试。"),
    ("nesting too deep to read", b"[" * 100000, "候选文件不是合法的 JSON：含有过长的数字或嵌套过深的结构。"),
    ("a 5000-digit number", b"1" * 5000, "候选文件不是合法的 JSON：含有过长的数字或嵌套过深的结构。"),
    # a key given twice: which value counts would be up to the reader, so both programs refuse
    ("duplicate top-level key", b'{"title": "a", "title": "b", "cards": []}',
     "候选文件里同一个对象中的字段 title 出现了两次：请只保留其中一个后再试。"),
    ("duplicate key inside a card", b'{"title": "a", "cards": [{"quote": "x", "note_id": "A01", "quote": "y"}]}',
     "候选文件里同一个对象中的字段 quote 出现了两次：请只保留其中一个后再试。"),
    ("duplicate key that is a lone surrogate", b'{"title": "a", "\\ud800": 1, "\\ud800": 2}',
     "候选文件里同一个对象中的字段 \\ud800 出现了两次：请只保留其中一个后再试。"),
    # text UTF-8 cannot hold: checked right after parsing, before every other rule, naming where it is
    ("lone surrogate in the title", b'{"title": "\\ud800", "cards": []}', "title " + SURROGATE.format("d800")),
    ("lone surrogate in card 2's answer", second_card(answer="答\udfff"),
     "第 2 张卡：answer " + SURROGATE.format("dfff")),
    ("lone surrogate in a card's field name", second_card(**{"\udc00x": 1}), "第 2 张卡：字段名" + SURROGATE.format("dc00")),
    ("lone surrogate in a card that is a string", b'{"title": "T", "cards": ["\\ud83d"]}',
     "第 1 张卡：" + SURROGATE.format("d83d")),
    ("lone surrogate in an unknown top-level key", b'{"title": "T", "x": ["\\ud800"], "cards": []}',
     "候选文件" + SURROGATE.format("d800")),
    ("lone surrogate in a top-level array", b'["\\ud800"]', "候选文件" + SURROGATE.format("d800")),
    ("lone surrogate in a nested value of a card field", second_card(quote={"a": ["\ud800"]}),
     "第 2 张卡：quote " + SURROGATE.format("d800")),
    ("the first surrogate in file order wins", b'{"cards": [{"note_id": "\\ud801"}], "title": "\\ud802"}',
     "第 1 张卡：note_id " + SURROGATE.format("d801")),
    ("a surrogate pair is one real character, not a lone surrogate",
     json.dumps(candidate(card(quote="\U0001f600引文"))).encode("ascii"),
     "第 1 张卡：quote 至少要 4 个字符（现有 3 个）。"),
]


class ExporterCase(WorkspaceTestCase):
    def setUp(self):
        super().setUp()
        self.notes = self.root / "project" / "notes"

    def write_candidate(self, value, name="candidate.json"):
        path = self.root / name
        data = value if isinstance(value, bytes) else json.dumps(value, ensure_ascii=False).encode("utf-8")
        path.write_bytes(data)
        return path

    def rejection(self, value):
        """The exporter's message for VALUE (a candidate or file bytes); also checks nothing was written."""
        out = self.root / "out-rejected"
        with self.assertRaises(export_review.ValidationError) as caught:
            export_review.export_candidate(self.write_candidate(value), out, self.notes)
        self.assertFalse(out.exists(), "a rejected candidate must not leave an output folder")
        return str(caught.exception)

    def export(self, value, out_name="out"):
        out = self.root / out_name
        hashes = export_review.export_candidate(self.write_candidate(value), out, self.notes)
        return hashes, out


class RuleTest(ExporterCase):
    def test_every_rule_has_its_own_exact_message(self):
        for label, value, message in RULE_CASES:
            with self.subTest(label):
                with self.assertRaises(export_review.ValidationError) as caught:
                    export_review.validate(value, self.notes)
                self.assertEqual(str(caught.exception), message)

    def test_rules_through_files_write_nothing_on_rejection(self):
        for label, value, message in RULE_CASES[::6]:
            with self.subTest(label):
                self.assertEqual(self.rejection(value), message)

    def test_unreadable_files_have_their_own_message(self):
        for label, data, message in FILE_CASES:
            with self.subTest(label):
                self.assertEqual(self.rejection(data), message)

    def test_gbk_encoded_candidate_is_named_as_not_utf8(self):
        data = (self.root / "samples" / "valid.json").read_text(encoding="utf-8").encode("gbk")
        self.assertEqual(self.rejection(data), "候选文件不是 UTF-8 编码的文本，请用 UTF-8 另存后再试。")

    def test_limits_themselves_are_allowed(self):
        note = (self.notes / "A01.md").read_text(encoding="utf-8")
        self.assertGreater(len(note), 300)
        at_the_limits = [
            candidate(title="题" * 80),
            {"title": "T", "cards": [card()] * 20},
            candidate(card(question="问" * 200, answer="答" * 500)),
            candidate(card(quote="检索相关")),
            candidate(card(quote=note[:300])),
            candidate(card(quote=note[1:5])),
        ]
        for value in at_the_limits:
            with self.subTest(value=str(value)[:60]):
                self.assertEqual(list(export_review.validate(value, self.notes)), ["A01"])

    def test_validate_returns_each_cited_note_once(self):
        value = candidate(card(), card(note_id="A02", quote="相邻块之间可以保留一段重叠，例如块长的 10% 到 20%。"), card())
        self.assertEqual(sorted(export_review.validate(value, self.notes)), ["A01", "A02"])

    def test_path_like_note_id_never_reads_a_file(self):
        # a real file one level up that "../A01" would reach if the id were used as a path
        (self.root / "project" / "A01.md").write_text("RAG 的步骤顺序是：先检索相关段落，再把检索到的段落交给模型生成回答。",
                                                       encoding="utf-8")
        (self.notes / "A01.md").unlink()
        with self.assertRaises(export_review.ValidationError) as caught:
            export_review.validate(candidate(card(note_id="../A01")), self.notes)
        self.assertEqual(str(caught.exception), "第 1 张卡：note_id「../A01」不是笔记编号（应形如 A01）。")


class LineEndingTest(ExporterCase):
    SPANNING = QUOTE_A01 + "\n\n一次完整的请求通常包括下面几步："

    def test_quote_spanning_lines_with_crlf_matches_lf_note(self):
        hashes, out = self.export(candidate(card(quote=self.SPANNING.replace("\n", "\r\n"))))
        review = (out / "review.md").read_text(encoding="utf-8")
        self.assertIn(f"> {QUOTE_A01}\n>\n> 一次完整的请求通常包括下面几步：\n", review)

    def test_quote_spanning_lines_with_lf_matches(self):
        self.assertEqual(list(export_review.validate(candidate(card(quote=self.SPANNING)), self.notes)), ["A01"])

    def test_crlf_note_checkout_quotes_and_hashes_like_lf(self):
        lf_bytes = (self.notes / "A01.md").read_bytes()
        (self.notes / "A01.md").write_bytes(lf_bytes.replace(b"\n", b"\r\n"))
        _, out = self.export(candidate(card(quote=self.SPANNING)))
        cards = json.loads((out / "cards.json").read_text(encoding="utf-8"))
        self.assertEqual(cards["notes"], {"A01": sha256(lf_bytes)})

    def test_bom_candidate_is_accepted(self):
        data = b"\xef\xbb\xbf" + (self.root / "samples" / "valid.json").read_bytes()
        hashes, out = self.export(data)
        self.assertEqual(sorted(hashes), ["cards.json", "review.md"])

    def test_crlf_candidate_file_is_accepted(self):
        data = (self.root / "samples" / "valid.json").read_bytes().replace(b"\n", b"\r\n")
        self.assertIn(b"\r\n", data)
        _, out = self.export(data)
        self.assertIn("# RAG 复习卡片\n", (out / "review.md").read_text(encoding="utf-8"))


class SampleTest(ExporterCase):
    def sample(self, name):
        return self.root / "samples" / f"{name}.json"

    def test_bad_quote_sample_is_rejected_on_card_1(self):
        with self.assertRaises(export_review.ValidationError) as caught:
            export_review.export_candidate(self.sample("bad-quote"), self.root / "out", self.notes)
        self.assertEqual(str(caught.exception), "第 1 张卡：引文不在对应笔记原文中。")
        self.assertFalse((self.root / "out").exists())

    def test_valid_sample_review_md_shows_every_card(self):
        export_review.export_candidate(self.sample("valid"), self.root / "out", self.notes)
        review = (self.root / "out" / "review.md").read_text(encoding="utf-8")
        source = json.loads(self.sample("valid").read_text(encoding="utf-8"))
        self.assertTrue(review.startswith("# RAG 复习卡片\n"))
        self.assertEqual(len(source["cards"]), 4)
        for number, item in enumerate(source["cards"], 1):
            with self.subTest(card=number):
                self.assertIn(f"## {number}. {item['question']}\n", review)
                self.assertIn(item["answer"], review)
                self.assertIn(f"\n> {item['quote']}\n", review)
                self.assertIn(f"来源：{item['note_id']}《{NOTE_TITLES[item['note_id']]}》", review)

    def test_valid_sample_cards_json_records_cards_and_note_hashes(self):
        hashes = export_review.export_candidate(self.sample("valid"), self.root / "out", self.notes)
        out = self.root / "out"
        cards_bytes, review_bytes = (out / "cards.json").read_bytes(), (out / "review.md").read_bytes()
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["cards.json", "review.md"])
        self.assertEqual(hashes, {"review.md": sha256(review_bytes), "cards.json": sha256(cards_bytes)})
        record = json.loads(cards_bytes.decode("utf-8"))
        source = json.loads(self.sample("valid").read_text(encoding="utf-8"))
        self.assertEqual(record["schema"], "review-cards/1")
        self.assertEqual(record["title"], "RAG 复习卡片")
        self.assertEqual(record["cards"], source["cards"])
        self.assertEqual(record["notes"], {note: sha256((self.notes / f"{note}.md").read_bytes())
                                           for note in ("A01", "A02", "A03", "A07")})
        self.assertEqual(record["review_md_sha256"], sha256(review_bytes))
        content = {key: record[key] for key in ("title", "cards", "notes")}
        self.assertEqual(record["content_sha256"],
                         sha256((json.dumps(content, ensure_ascii=False, indent=2) + "\n").encode("utf-8")))

    def test_semantic_sample_passes_and_review_md_still_shows_the_reversed_answer(self):
        export_review.export_candidate(self.sample("semantic"), self.root / "out", self.notes)
        review = (self.root / "out" / "review.md").read_text(encoding="utf-8")
        self.assertIn(REVERSED_ANSWER, review)
        self.assertIn(f"> {QUOTE_A01}", review)

    def test_existing_out_dir_is_refused_untouched(self):
        out = self.root / "out"
        out.mkdir()
        (out / "review.md").write_text("旧的审核记录", encoding="utf-8")
        with self.assertRaises(FileExistsError):
            export_review.export_candidate(self.sample("valid"), out, self.notes)
        self.assertEqual([p.name for p in out.iterdir()], ["review.md"])
        self.assertEqual((out / "review.md").read_text(encoding="utf-8"), "旧的审核记录")


class ExportCliTest(ExporterCase):
    def test_valid_exits_0_with_one_json_line(self):
        code, out, err = self.run_cli("export_review.py", "samples/valid.json", "--out", "exported")
        self.assertEqual(code, 0, err)
        result = self.assertOneJsonLine(out)
        folder = self.root / "exported"
        self.assertEqual(list(result), ["status", "out", "artifact"])
        self.assertEqual(result["status"], "exported")
        self.assertEqual(result["artifact"], {"review.md": sha256((folder / "review.md").read_bytes()),
                                              "cards.json": sha256((folder / "cards.json").read_bytes())})
        self.assertIn("已导出", err)
        self.assertNoTraceback(err)

    def test_bad_quote_exits_1_with_the_rule_message(self):
        code, out, err = self.run_cli("export_review.py", "samples/bad-quote.json", "--out", "exported")
        self.assertEqual(code, 1, err)
        self.assertEqual(self.assertOneJsonLine(out), {
            "status": "rejected",
            "error": {"type": "ValidationError", "message": "第 1 张卡：引文不在对应笔记原文中。"}})
        self.assertIn("导出被拒绝：第 1 张卡：引文不在对应笔记原文中。", err)
        self.assertFalse((self.root / "exported").exists())
        self.assertNoTraceback(err)

    def test_existing_out_dir_exits_2_and_changes_nothing(self):
        out = self.root / "exported"
        out.mkdir()
        (out / "keep.txt").write_bytes(b"old evidence\n")
        code, stdout, err = self.run_cli("export_review.py", "samples/valid.json", "--out", "exported")
        self.assertEqual(code, 2)
        self.assertIn("已存在", err)
        self.assertEqual([(p.name, p.read_bytes()) for p in out.iterdir()], [("keep.txt", b"old evidence\n")])
        self.assertNoTraceback(err)

    def test_usage_errors_exit_2_in_chinese(self):
        cases = [
            (("samples/missing.json", "--out", str(self.root / "x")), "找不到候选文件"),
            (("samples/valid.json",), "缺少必需的参数：--out"),
            ((str(self.root / "samples"), "--out", str(self.root / "x")), "找不到候选文件"),
        ]
        for argv, said in cases:
            with self.subTest(argv=argv):
                code, out, err = run_main(export_review.main, *argv)
                self.assertEqual(code, 2)
                self.assertIn(said, err)
                self.assertEqual(out, "")
        self.assertFalse((self.root / "x").exists())

    def test_help_lists_the_exit_codes(self):
        code, out, _ = run_main(export_review.main, "--help")
        self.assertEqual(code, 0)
        flowed = " ".join(out.split())  # argparse wraps the epilog to the terminal's width
        self.assertIn("退出码：0 已导出；1 候选违反机械规则", flowed)
        self.assertIn("2 参数错误或输出目录已存在", flowed)

    # once a traceback: --out under a folder that does not exist
    def test_out_dir_under_a_missing_folder_is_no_traceback(self):
        out_dir = self.root / "no-such-folder" / "out"
        try:
            code, _, _ = run_main(export_review.main, str(self.root / "samples" / "valid.json"), "--out", str(out_dir))
        except OSError as exc:
            self.fail(f"export_review.py --out {out_dir} raised {type(exc).__name__}: {exc}")
        self.assertEqual(code, 2, "a --out whose parent folder does not exist is a usage error")
        self.assertFalse(out_dir.parent.exists())


# review.md for TRICKY_CANDIDATE, written by hand from the rendering rule in docs/harness/TASK.md
TRICKY_REVIEW = (
    "# 渲染规则\n"
    "\n"
    "共 3 张卡片，引用 2 篇笔记。\n"
    "机械检查已通过：每条引文都能在对应笔记原文中逐字找到。答案是否正确还没有人审过（semantic_review: pending），"
    "请对照引文逐张阅读。\n"
    "\n"
    "---\n"
    "\n"
    "## 1. 问题 *一*\n第二行\n"
    "\n"
    "**答：** <b>答案</b>\r\n内部换行\n"
    "\n"
    f"> {QUOTE_A01}\n"
    ">\n"
    "> 一次完整的请求通常包括下面几步：\n"
    "\n"
    "来源：A01《RAG 的基本流程》\n"
    "\n"
    "---\n"
    "\n"
    "## 2. 第二问\n"
    "\n"
    "**答：** 第二答\n"
    "\n"
    ">  开头有空格的正文\n"
    ">\n"
    "\n"
    "来源：Z01《》\n"
    "\n"
    "---\n"
    "\n"
    "## 3. 第三问\n"
    "\n"
    "**答：** 第三答\n"
    "\n"
    "> RAG 的步骤\n"
    "\n"
    "来源：A01《RAG 的基本流程》\n"
)
TRICKY_CANDIDATE = {"title": " \t渲染规则\u3000", "cards": [
    card(question="  问题 *一*\n第二行 ", answer="\n<b>答案</b>\r\n内部换行  ",
         quote=QUOTE_A01 + "\r\n\r\n一次完整的请求通常包括下面几步："),
    card(note_id="Z01", question="第二问", answer="第二答", quote=" 开头有空格的正文\n"),
    card(question="第三问", answer="第三答", quote="RAG 的步骤"),
]}
# a note whose first line is no `# ` heading: its title in review.md is empty
UNTITLED_NOTE = "没有井号的第一行\n 开头有空格的正文\n其余内容。\n"


class RenderTest(ExporterCase):
    def test_review_md_follows_the_documented_rendering_byte_for_byte(self):
        (self.notes / "Z01.md").write_bytes(UNTITLED_NOTE.encode("utf-8"))
        _, out = self.export(TRICKY_CANDIDATE)
        self.assertEqual((out / "review.md").read_bytes().decode("utf-8"), TRICKY_REVIEW)

    def test_note_title_is_the_first_line_after_hash_space_trimmed(self):
        for first_line, title in (("#  有空格的标题  ", "有空格的标题"), ("#没有空格", ""), ("\ufeff# 有 BOM", ""),
                                  ("## 二级标题", ""), ("# ", "")):
            with self.subTest(first_line=first_line):
                (self.notes / "Z02.md").write_bytes(f"{first_line}\r\n引文在这里。\n".encode("utf-8"))
                _, out = self.export(candidate(card(note_id="Z02", quote="引文在这里")), out_name=f"out-{title}")
                self.assertIn(f"\n来源：Z02《{title}》\n", (out / "review.md").read_text(encoding="utf-8"))
                (out / "review.md").unlink()
                (out / "cards.json").unlink()
                out.rmdir()

    def test_only_crlf_is_normalised_in_a_note(self):
        # a lone CR is not a line break: the quote must carry it to match
        (self.notes / "Z03.md").write_bytes("# 标题\n甲\r乙丙丁\n".encode("utf-8"))
        self.assertEqual(self.rejection(candidate(card(note_id="Z03", quote="甲\n乙丙丁"))), QUOTE_MESSAGE)
        self.assertEqual(list(export_review.validate(candidate(card(note_id="Z03", quote="甲\r乙丙丁")), self.notes)),
                         ["Z03"])


class StrictInputCliTest(ExporterCase):
    def test_lone_surrogate_and_repeated_key_are_explained_by_both_commands(self):
        cases = (("surrogate.json", b'{"title": "T", "cards": [{"note_id": "A01", "answer": "\\udfff"}]}',
                  "第 1 张卡：answer " + SURROGATE.format("dfff")),
                 ("repeated.json", b'{"title": "T", "title": "U", "cards": []}',
                  "候选文件里同一个对象中的字段 title 出现了两次：请只保留其中一个后再试。"))
        for name, data, message in cases:
            with self.subTest(name):
                (self.root / name).write_bytes(data)
                code, out, err = self.run_cli("export_review.py", name, "--out", f"out-{name}")
                self.assertEqual((code, self.assertOneJsonLine(out)["error"]["message"]), (1, message))
                self.assertIn(f"导出被拒绝：{message}", err)
                self.assertNoTraceback(err)
                code, out, err = self.run_cli("verify_export.py", name)
                self.assertEqual((code, self.assertOneJsonLine(out)["problems"]), (1, [message]))
                self.assertNoTraceback(err)
                self.assertFalse((self.root / f"out-{name}").exists())

    def test_out_dir_made_by_someone_else_meanwhile_exits_2(self):
        with mock.patch.object(export_review, "export_candidate", side_effect=FileExistsError):
            code, out, err = run_main(export_review.main, str(self.root / "samples" / "valid.json"),
                                      "--out", str(self.root / "late"))
        self.assertEqual((code, out), (2, ""))
        self.assertIn("刚刚被别的程序建立：为保留它不会覆盖，请换一个新目录名。", err)
