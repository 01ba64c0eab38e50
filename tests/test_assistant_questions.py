"""The offline demo answers natural questions: two per note, phrased as a learner would ask them.

Each question goes through the guarded loop with the offline demo model (search, read, quote);
it counts as answered from the right note when the answer quotes that note. At least 22 of
the 24 must be; questions the notes do not cover still get "没有找到". Also the ranked search
itself: Chinese terms (bigrams), the no-hit threshold, ranked hits after exact-phrase hits.
"""
import re
import sys
import unittest

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import notes, ranking  # noqa: E402
from assistant.agent import run_question  # noqa: E402
from assistant.demo_model import DemoModel  # noqa: E402

QUESTIONS = [
    ("A01", "RAG 是怎么工作的？"),
    ("A01", "为什么要先查资料再让模型回答？"),
    ("A02", "文档应该切成多大的块？"),
    ("A02", "相邻的块之间为什么要留一点重叠？"),
    ("A03", "向量检索和关键词检索有什么区别？"),
    ("A03", "中文没有空格，要怎么建索引？"),
    ("A04", "一个好的提示词由哪几部分组成？"),
    ("A04", "怎样把资料和指令分开写？"),
    ("A05", "怎么评估检索效果？"),
    ("A05", "什么是回归测试？"),
    ("A06", "模型是直接执行工具的吗？"),
    ("A06", "工具调用的结果要怎么交还给模型？"),
    ("A07", "执行循环应该什么时候停下？"),
    ("A07", "为什么计时要用单调时钟？"),
    ("A08", "遇到 429 要不要重试？"),
    ("A08", "退避等待的时间怎么算？"),
    ("A09", "多轮对话时模型怎么记住前面说过的话？"),
    ("A09", "历史消息太长了怎么办？"),
    ("A10", "引文可以改写吗？"),
    ("A10", "怎样让回答能被核查？"),
    ("A11", "工具出错时返回给模型的信息该怎么写？"),
    ("A11", "给人看的错误提示和给模型看的有什么不同？"),
    ("A12", "机械检查都通过了，内容就一定对吗？"),
    ("A12", "哪些操作必须先经过人同意？"),
]
UNRELATED = ["今天天气怎么样？", "Python 的 GIL 是什么？", "怎么做红烧肉？", "股票明天会涨吗？", "推荐一部电影", "如何学好英语口语？",
             "猫为什么喜欢纸箱？", "量子计算机的原理是什么？"]
REQUIRED = 22


def answered_from(question):
    outcome = run_question(DemoModel(), [], question)
    found = re.search(r"根据笔记 (A\d\d)《", outcome.answer)
    return outcome, found.group(1) if found else None


class NaturalQuestions(unittest.TestCase):
    def test_two_natural_questions_per_note(self):
        self.assertEqual(sorted({note for note, _ in QUESTIONS}), sorted(notes.load_notes()))
        right, missed = 0, []
        for expected, question in QUESTIONS:
            outcome, source = answered_from(question)
            self.assertEqual(outcome.stop, "answered")
            if source == expected:
                right += 1
                quote = outcome.answer.split("“", 1)[1].rsplit("”", 1)[0]
                self.assertIn(quote, notes.load_notes()[expected].text)  # quoted verbatim
            else:
                missed.append((question, expected, source))
        self.assertGreaterEqual(right, REQUIRED, f"{right}/{len(QUESTIONS)}; missed: {missed}")

    def test_unrelated_questions_still_find_nothing(self):
        for question in UNRELATED:
            with self.subTest(question=question):
                outcome, source = answered_from(question)
                self.assertEqual((outcome.stop, source), ("answered", None))
                self.assertIn("笔记中没有找到相关内容", outcome.answer)


class RankedSearch(unittest.TestCase):
    def test_chinese_is_cut_into_bigrams_without_question_words(self):
        self.assertEqual(ranking.terms(notes.normalize("怎么评估 RAG 的检索效果？")),
                         ["评估", "rag", "检索", "索效", "效果"])

    def test_a_seam_between_two_known_words_weighs_nothing(self):
        index = ranking.Index(notes.load_notes().values())
        weights = index.query(notes.normalize("评估检索效果"))
        self.assertEqual(weights["估检"], 0.0)
        self.assertGreater(weights["评估"], 0.0)
        unknown = index.query(notes.normalize("今天天气"))
        self.assertEqual(sorted(unknown.values()), [0.0, 0.0, ranking.UNKNOWN_TERM_WEIGHT])

    def test_ranked_hits_stand_alone_when_no_phrase_matches(self):
        hits = notes.search("向量检索和关键词检索有什么区别")
        self.assertEqual(hits[0]["note_id"], "A03")
        self.assertLessEqual(len(hits[0]["snippet"]), ranking.SNIPPET_CHARS)
        self.assertIn(hits[0]["snippet"], notes.load_notes()["A03"].text)

    def test_ranked_hits_follow_exact_hits_only_when_they_hold_every_term(self):
        self.assertEqual([hit["note_id"] for hit in notes.search("步骤顺序")], ["A01", "A12"])
        self.assertEqual([hit["note_id"] for hit in notes.search("RAG 的步骤顺序")], ["A01"])  # A12 lacks RAG
        self.assertEqual([hit["note_id"] for hit in notes.search("顺序步骤")], ["A01", "A12"])  # ranked only

    def test_the_no_hit_threshold(self):
        self.assertEqual(notes.search("红烧肉的做法"), [])
        self.assertEqual(notes.search("天气 检索"), [])  # one known word of two is under the threshold


if __name__ == "__main__":
    unittest.main()
