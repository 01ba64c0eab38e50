"""The offline demo is honest when unsure, follows a conversation by one rule, and knows learners' English names.

An answer's shown text is every passage it quotes; it "holds the answer" when it holds every phrase the question
needs, and "shows only a wrong note" when it cites notes and none is the right one. The held-out set
(tests/assistant_heldout.py) was written from the notes alone, before the rules changed, and never tuned on;
the margins were chosen on the sets of tests/test_assistant_questions.py. Measured (before -> after):
held-out 25/32 -> 26/32 hold, 1/32 -> 0/32 only a wrong note; the 91 questions of the other sets 80 -> 82 hold,
1 -> 1 only a wrong note; follow-ups 6/13 -> 11/13. With the list item shown whole and the reason found by what the
sentence does (tests/test_assistant_answers.py): held-out 26 -> 28 hold, still 0 only a wrong note; the other sets
82 -> 83; follow-ups 11 -> 11.
"""
import re
import sys
import unittest

from tests.assistant_heldout import CONVERSATIONS, HELD_OUT
from tests.support import ROOT
from tests.test_assistant_questions import ANSWERS, DEV, QUESTIONS, asked_alone, quotes_of, verbatim_pieces

sys.dont_write_bytecode = True
sys.path.insert(0, str(ROOT / "project"))
from assistant import notes, showing  # noqa: E402
from assistant.agent import run_question  # noqa: E402
from assistant.demo_model import DemoModel  # noqa: E402

LOADED = notes.load_notes()


def ask(question, history=None):
    return run_question(DemoModel(), [] if history is None else history, question, chat=history is not None).answer


def shown(answer):
    """(the quoted text, the notes cited in order)."""
    return "\n".join(quotes_of(answer)), list(dict.fromkeys(re.findall(r"(A\d\d)《", answer)))


def shares(items):
    """(answers whose shown text holds every phrase, answers showing only a wrong note) over ITEMS."""
    holds = wrong = 0
    for note, question, phrases in items:
        phrases = (phrases,) if isinstance(phrases, str) else phrases
        text, cited = shown(asked_alone(question)[0].answer)
        holds += all(phrase in text for phrase in phrases)
        wrong += bool(cited) and note not in cited
    return holds, wrong


def held_follow_ups(conversations):
    """How many follow-ups of CONVERSATIONS ([first, (note, question, phrases), ...]) show their note and phrases."""
    held = 0
    for first, *turns in conversations:
        history = []
        ask(first, history)
        for note, question, phrases in turns:
            text, cited = shown(ask(question, history))
            held += all(phrase in text for phrase in phrases) and note in cited
    return held


class HonestWhenUnsure(unittest.TestCase):
    def test_the_held_out_set(self):
        self.assertEqual(len(HELD_OUT), 32)
        self.assertEqual(shares(HELD_OUT), (28, 0))

    def test_the_tuning_sets(self):
        self.assertEqual(shares(QUESTIONS + ANSWERS + DEV), (83, 1))

    def test_every_shown_piece_is_verbatim_and_within_about_240_characters(self):
        for note, question, _ in HELD_OUT:
            with self.subTest(question=question):
                text, cited = shown(asked_alone(question)[0].answer)
                self.assertLessEqual(len(text), showing.MAX_SHOWN + 10)  # + the line breaks of a list
                for piece in verbatim_pieces(text):
                    self.assertTrue(any(piece in LOADED[note_id].text for note_id in cited), piece)

    def test_the_issues_wrong_quotes_now_show_the_answer(self):
        cases = [("引文最短要多长？", "A10", "引文不能太短"),
                 ("检索回来的段落跟问题没啥关系，能不能在 prompt 里让模型认真一点？", "A01", "先改进切块或检索方式"),
                 ("结果怎么合到一起？", "A03", "倒数排名融合")]
        for question, note, phrase in cases:
            with self.subTest(question=question):
                text, cited = shown(ask(question))
                self.assertIn(phrase, text)
                self.assertIn(note, cited)
        self.assertEqual(shown(ask("引文最短要多长？"))[1][0], "A10")  # the note about 引文 is cited first

    def test_unsure_shows_the_most_relevant_passages_with_their_sources(self):
        answer = ask("引文最短要多长？")
        self.assertIn("最相关的原文", answer)
        self.assertNotIn("根据笔记", answer)  # no single confident quote
        for line in quotes_of(answer):
            self.assertTrue(any(line in LOADED[note_id].text for note_id in shown(answer)[1]))
        self.assertRegex(answer, r"（来源：A10《[^》]+》、A\d\d《")  # the note about 引文 first, then another

    def test_a_list_asked_for_is_quoted_as_the_list(self):
        answer = ask("写 prompt 的时候一般要包含哪几块内容？")
        text, cited = shown(answer)
        self.assertEqual(cited, ["A04"])
        for part in ("角色：", "任务：", "上下文：", "输出格式：", "示例："):
            self.assertIn(f"- {part}", text)
        for piece in verbatim_pieces(text):
            self.assertIn(piece, LOADED["A04"].text)
        self.assertTrue(all(line.endswith("…") for line in text.split("\n")[1:]))  # each cut at a clause boundary

    def test_a_clear_answer_is_one_passage(self):
        answer = ask("RAG 的步骤顺序是什么？")
        self.assertIn("根据笔记 A01《RAG 的基本流程》，原文是：\n“RAG 的步骤顺序是：先检索相关段落", answer)


class FollowUpsByOneRule(unittest.TestCase):
    def test_conversations_written_before_the_rule(self):
        self.assertGreaterEqual(len(CONVERSATIONS), 10)
        self.assertEqual(held_follow_ups(CONVERSATIONS), 11)  # of 13 follow-ups (6 before)

    def test_a_question_without_a_subject_carries_the_previous_one_and_says_so(self):
        history = []
        ask("对话历史太长会怎么样？", history)
        answer = ask("那怎么办？有什么处理办法？", history)
        self.assertIn("接着上一问“对话历史太长会怎么样？”，也按“对话历史”来找", answer)  # it says what it asks: 处理办法
        self.assertEqual(shown(answer)[1][0], "A09")
        self.assertIn("截断", shown(answer)[0])

    def test_a_bare_why_and_a_bare_what_to_do_are_not_left_without_keywords(self):
        for first, follow_up in (("RAG 的步骤顺序是什么？", "为什么？"), ("上下文窗口是什么？", "那怎么办？")):
            history = []
            ask(first, history)
            answer = ask(follow_up, history)
            self.assertNotIn("没能从问题中找出", answer)
            self.assertIn("接着上一问", answer)

    def test_the_restatement_never_doubles_words(self):
        history = []
        ask("引文要怎么检查？", history)
        answer = ask("那引文最短要多长？", history)
        self.assertNotIn("最短最短", answer)
        self.assertEqual(shown(answer)[1][0], "A10")

    def test_a_new_subject_reads_the_previous_question_whole(self):
        history = []
        ask("关键词检索适合什么场景？", history)
        self.assertIn("理解为：向量检索适合什么场景？", ask("那向量检索呢？", history))
        history = []
        ask("向量检索适合什么场景？", history)
        self.assertIn("理解为：向量检索的缺点是什么？", ask("那缺点呢？", history))

    def test_a_follow_ups_single_quote_must_name_the_carried_subject(self):
        note = notes.Note("B01", "# 水果\n\n苹果每天吃 2 个。香蕉每天吃 3 个就够了，多吃无益。\n\n别名：香蕉、banana\n")
        weights = {"香蕉": 3.0}
        self.assertIn("原文是", showing.compose([note], "香蕉吃多少个？", weights))
        self.assertIn("原文是", showing.compose([note], "banana，吃多少个？", weights, carried=("banana",)))  # an alias
        carried = showing.compose([note], "苹果，香蕉吃多少个？", weights, carried=("苹果",))
        self.assertIn("最相关的原文", carried)  # the best passage does not name 苹果: no single quote


class LearnersEnglishNames(unittest.TestCase):
    def test_rerank_and_other_names_find_their_note(self):
        for query, note in (("rerank", "A03"), ("reranker", "A03"), ("cosine", "A03"),
                            ("human-in-the-loop", "A12"), ("schema", "A06")):
            with self.subTest(query=query):
                self.assertEqual(notes.search(query)[0]["note_id"], note)
        self.assertIn("重排模型", shown(ask("rerank 是做什么的？"))[0])


if __name__ == "__main__":
    unittest.main()
