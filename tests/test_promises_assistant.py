"""The assistant's promises that tests/mutation.py found unguarded: each test fails with its mutant applied.

Through the guarded loop (run_question) with the offline demo model or a scripted one, as the other
assistant tests do: how a follow-up question is read in a conversation (the demo model's answer opens with how it
read it: "（接着上一问，理解为：…）" for the previous question asked again, "按“…”来找" for the subject names it
carried), an interrupt that lands outside the tool itself, and a server's wait hint that says nothing (NaN) beside
one that does.
"""
import sys
import unittest

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import retry  # noqa: E402
from assistant.agent import run_question  # noqa: E402
from assistant.demo_model import DemoModel  # noqa: E402
from assistant.history import history_problems  # noqa: E402
from tests.test_assistant_agent import Runner, ScriptedModel, call, calls  # noqa: E402

LEANS = "接着上一问"  # every reading that leans on the previous question says so


def conversation(*questions):
    """The demo model's answer to the last of QUESTIONS, asked one after another in one chat."""
    history = []
    for question in questions:
        outcome = run_question(DemoModel(), history, question, chat=True)
    return outcome.answer


class FollowUpPromiseTest(unittest.TestCase):
    def test_an_aspect_asked_of_it_is_the_previous_subjects(self):
        # BM25 is a name the notes write in Latin letters, on no alias line
        self.assertIn("（接着上一问，理解为：BM25的缺点是什么？）", conversation("BM25 是什么？", "那它的缺点呢？"))

    def test_a_question_asking_with_ne_carries_the_subject_instead(self):
        answer = conversation("BM25 有什么缺点？", "那怎么办呢？")  # 怎么办 asks: no new subject put in BM25's place
        self.assertIn("接着上一问“BM25 有什么缺点？”，按“BM25”来找。", answer)

    def test_a_question_naming_its_own_subject_carries_nothing(self):
        answer = conversation("向量检索是什么？", "BM25 有什么缺点？")
        self.assertNotIn(LEANS, answer)
        self.assertIn("不理解同义表达", answer)  # BM25's own weakness, read as written
        self.assertNotIn(LEANS, conversation("为什么？", "它和 BM25 有什么区别？"))

    def test_asking_words_alone_are_nothing_to_carry(self):
        answer = conversation("为什么？", "它的缺点是什么？")
        self.assertNotIn(LEANS, answer)
        self.assertIn("缺点", answer)  # searched as written

    def test_a_subject_asked_anew_leaves_the_old_one_behind(self):
        answer = conversation("BM25 是什么？", "那向量检索呢？", "它的缺点是什么？")
        self.assertIn("（接着上一问，“它”指“向量检索”，理解为：向量检索的缺点是什么？）", answer)


class InterruptPromiseTest(unittest.TestCase):
    def test_an_interrupt_between_a_tool_and_its_report_leaves_every_call_answered(self):
        def on_event(kind, data):
            if kind == "tool_result":  # Ctrl-C lands while the first result is being reported
                raise KeyboardInterrupt
        history = []
        model = ScriptedModel(calls(call("list_notes", {}, "c1"), call("read_note", {"note_id": "A01"}, "c2")))
        outcome = run_question(model, history, "问题", tool_runner=Runner(), on_event=on_event)
        self.assertEqual(outcome.stop, "interrupted")
        self.assertEqual(history_problems(history), [])
        self.assertEqual([m["tool_call_id"] for m in history if m["role"] == "tool"], ["c1", "c2"])


class RetryPromiseTest(unittest.TestCase):
    def test_a_wait_hint_that_is_not_a_number_gives_way_to_the_next_one(self):
        headers = {"retry-after-ms": "nan", "retry-after": "2"}
        self.assertEqual(retry.retry_delay(0, headers, random=lambda: 0.0), 2.0)
        self.assertEqual(retry.plan_retry(0, 2, 429, headers, random=lambda: 0.0), retry.RetryPlan(2.0, 2.0))


if __name__ == "__main__":
    unittest.main()
