"""The assistant's promises that tests/mutation.py found unguarded: each test fails with its mutant applied.

Through the guarded loop (run_question) with the offline demo model or a scripted one, as the other
assistant tests do: how a short follow-up question is read in a conversation (the demo model says
"（接着上一问，理解为：…）" when it reads a question together with the one before), an interrupt that lands
outside the tool itself, and a server's wait hint that says nothing (NaN) beside one that does.
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

READ_AS = "接着上一问，理解为："


def conversation(*questions):
    """The demo model's answer to the last of QUESTIONS, asked one after another in one chat."""
    history = []
    for question in questions:
        outcome = run_question(DemoModel(), history, question, chat=True)
    return outcome.answer


class FollowUpPromiseTest(unittest.TestCase):
    def test_an_aspect_asked_of_it_is_the_previous_subjects(self):
        self.assertIn(f"{READ_AS}BM25的缺点是什么？", conversation("BM25 是什么？", "那它的缺点呢？"))

    def test_a_longer_question_carries_its_own_subject(self):
        answer = conversation("BM25 是什么？", "这个在中文文档里一般应该怎么调比较好？")  # 19 characters
        self.assertNotIn(READ_AS, answer)

    def test_a_question_that_asks_with_ne_is_no_new_subject(self):
        answer = conversation("BM25 有什么缺点？", "那怎么办呢？")
        self.assertNotIn(READ_AS, answer)

    def test_it_stands_for_nothing_when_the_previous_question_had_no_subject(self):
        self.assertNotIn(READ_AS, conversation("为什么？", "它和 BM25 有什么区别？"))


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
