"""The guarded tool loop: every stop reason, the cycle detector, history validity, the demo model.

Scripted fake models stand in for the API (in-process, no network, no waiting). Each fake
checks, at every request, that the history it is sent would be accepted by the API.
"""
import json
import sys
import unittest

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import agent, errors  # noqa: E402
from assistant.budget import BudgetExceeded, TokenBudget  # noqa: E402
from assistant.cycle import CycleDetector, round_signature  # noqa: E402
from assistant.demo_model import DemoModel  # noqa: E402
from assistant.history import REMINDER_PREFIX, history_problems, is_reminder, seal_dangling_tool_calls  # noqa: E402

RAG_SENTENCE = "RAG 的步骤顺序是：先检索相关段落，再把检索到的段落交给模型生成回答。"


def call(name, arguments, call_id):
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


def calls(*tool_calls, finish="tool_calls"):
    return {"message": {"role": "assistant", "content": "", "tool_calls": list(tool_calls)},
            "finish_reason": finish}


def answer(text, finish="stop"):
    return {"message": {"role": "assistant", "content": text}, "finish_reason": finish}


class ScriptedModel:
    """Returns (or raises) the next item; a callable item gets the request number."""

    name = "scripted"
    offline = True

    def __init__(self, *script, then=None):
        self.script = list(script)
        self.then = then
        self.requests = 0
        self.sent = []          # a copy of the history at each request
        self.problems = []      # history_problems at each request

    def complete(self, messages, tools, budget=None):
        self.requests += 1
        self.sent.append([dict(message) for message in messages])
        self.problems.extend(history_problems(messages))
        item = self.script.pop(0) if self.script else self.then
        if callable(item):
            item = item(self.requests)
        if isinstance(item, BaseException):
            raise item
        return item


class Runner:
    """A tool runner that records calls; `results` maps a call number to (content, is_error)."""

    def __init__(self, result=("[]", False), results=None, interrupt_at=None):
        self.result, self.results, self.interrupt_at = result, results or {}, interrupt_at
        self.calls = []

    def __call__(self, name, arguments):
        self.calls.append((name, arguments))
        if len(self.calls) == self.interrupt_at:
            raise KeyboardInterrupt
        result = self.results.get(len(self.calls), self.result)
        return result(len(self.calls)) if callable(result) else result


class LoopTestCase(unittest.TestCase):
    def ask(self, model, runner=None, history=None, **options):
        self.history = [] if history is None else history
        outcome = agent.run_question(model, self.history, "问题", tool_runner=runner or Runner(), **options)
        self.assertEqual(model.problems, [], "a request was sent with an invalid history")
        self.assertEqual(history_problems(self.history), [])
        self.assertIn(outcome.stop, ("answered", "max_turns", "tool_failures", "no_progress", "output_truncated",
                                     "context_full", "model_refused", "api_error", "interrupted", "token_budget"))
        return outcome


class StopReasons(LoopTestCase):
    def test_answer_without_tools(self):
        outcome = self.ask(ScriptedModel(answer("答案")))
        self.assertEqual((outcome.stop, outcome.answer, outcome.turns, outcome.tool_calls, outcome.error),
                         ("answered", "答案", 1, [], None))
        self.assertEqual(self.history, [{"role": "user", "content": "问题"},
                                        {"role": "assistant", "content": "答案"}])

    def test_tool_round_then_answer(self):
        model = ScriptedModel(calls(call("search_notes", {"query": "RAG"}, "c1")), answer("好了"))
        runner = Runner(result=('[{"note_id": "A01"}]', False))
        outcome = self.ask(model, runner)
        self.assertEqual((outcome.stop, outcome.turns, outcome.tool_calls), ("answered", 2, ["search_notes"]))
        self.assertEqual(runner.calls, [("search_notes", '{"query": "RAG"}')])
        self.assertEqual(self.history[2], {"role": "tool", "tool_call_id": "c1", "content": '[{"note_id": "A01"}]'})

    def test_a_runner_that_raises_still_answers_the_call(self):
        def broken(name, arguments):
            raise OSError("/secret/path")
        model = ScriptedModel(calls(call("list_notes", {}, "c1")), answer("好"))
        outcome = self.ask(model, broken)
        self.assertEqual(outcome.stop, "answered")
        self.assertEqual(self.history[2]["tool_call_id"], "c1")
        self.assertIn("工具 list_notes 执行时出错（OSError）", self.history[2]["content"])
        self.assertNotIn("/secret/path", self.history[2]["content"])

    def test_missing_call_ids_are_made_up_consistently(self):
        model = ScriptedModel(calls({"function": {"name": "list_notes", "arguments": "{}"}}), answer("好"))
        self.ask(model)
        self.assertEqual(self.history[1]["tool_calls"][0]["id"], self.history[2]["tool_call_id"])

    def test_repeated_call_ids_are_replaced_so_each_result_has_one_call(self):
        # some compatible servers repeat ids; the API pairs each result with exactly one call
        model = ScriptedModel(calls(call("list_notes", {}, "c0"), call("read_note", {"note_id": "A01"}, "c0")),
                              calls(call("list_notes", {}, "c0")), answer("好"))
        self.ask(model)
        ids = [c["id"] for m in self.history for c in m.get("tool_calls") or []]
        self.assertEqual(len(ids), 3)
        self.assertEqual(len(set(ids)), 3, ids)
        self.assertEqual(history_problems(
            [{"role": "assistant", "tool_calls": [call("list_notes", {}, "x"), call("list_notes", {}, "x")]},
             {"role": "tool", "tool_call_id": "x", "content": "[]"},
             {"role": "tool", "tool_call_id": "x", "content": "[]"}]),
            ["第 1 条消息里有重复的工具调用 id：每个结果只能对应一个调用。"])

    def test_only_chat_suggests_reset(self):
        for chat, hint in ((True, "或用 /reset 重来。"), (False, "把问题拆小后重新提问。")):
            with self.subTest(chat=chat):
                model = ScriptedModel(then=lambda n: calls(call("list_notes", {}, f"c{n}")))
                outcome = self.ask(model, chat=chat)
                self.assertEqual(outcome.stop, "no_progress")
                self.assertTrue(outcome.answer.endswith(hint), outcome.answer)

    def test_turn_cap_with_changing_arguments(self):
        model = ScriptedModel(then=lambda n: calls(call("search_notes", {"query": f"词{n}"}, f"c{n}")))
        outcome = self.ask(model)
        self.assertEqual((outcome.stop, outcome.turns, model.requests), ("max_turns", 20, 20))
        self.assertEqual(outcome.answer, "已停止：这个问题已用掉 20 次模型请求仍没有结论。"
                                         "可以换个问法、把问题拆小后重新提问。")
        self.assertEqual(self.history[-1], {"role": "assistant", "content": outcome.answer})

    def test_turn_cap_is_configurable_and_checked_before_the_request(self):
        model = ScriptedModel(then=lambda n: calls(call("list_notes", {}, f"c{n}")))
        outcome = self.ask(model, Runner(result=lambda n: (f"结果{n}", False)), limits=agent.Limits(max_turns=2))
        self.assertEqual((outcome.stop, model.requests), ("max_turns", 2))
        self.assertIn("已用掉 2 次模型请求", outcome.answer)

    def test_same_call_with_changing_results_runs_to_the_turn_cap(self):
        model = ScriptedModel(then=lambda n: calls(call("list_notes", {}, f"c{n}")))
        outcome = self.ask(model, Runner(result=lambda n: (f"结果{n}", False)))
        self.assertEqual((outcome.stop, model.requests), ("max_turns", 20))

    def test_identical_calls_stop_at_round_3(self):
        model = ScriptedModel(then=lambda n: calls(call("list_notes", {}, f"c{n}")))
        outcome = self.ask(model)
        self.assertEqual((outcome.stop, model.requests), ("no_progress", 3))
        self.assertIn("list_notes({})", outcome.answer)
        self.assertIn("每 1 轮一个循环", outcome.answer)
        self.assertTrue(outcome.answer.startswith("已停止："))
        self.assertEqual(self.history[-1]["role"], "assistant")

    def test_period_2_cycle_stops_at_round_6(self):
        def alternate(n):
            if n % 2:
                return calls(call("search_notes", {"query": "RAG"}, f"c{n}"))
            return calls(call("read_note", {"note_id": "A01"}, f"c{n}"))
        model = ScriptedModel(then=alternate)
        outcome = self.ask(model, Runner(result=lambda n: (f"结果{n % 2}", False)))
        self.assertEqual((outcome.stop, model.requests), ("no_progress", 6))
        self.assertIn("每 2 轮一个循环", outcome.answer)
        self.assertIn('search_notes({"query":"RAG"}) → read_note({"note_id":"A01"})', outcome.answer)

    def test_all_failing_rounds_stop_at_3_and_win_over_no_progress(self):
        model = ScriptedModel(then=lambda n: calls(call("read_note", {"note_id": "A99"}, f"c{n}")))
        outcome = self.ask(model, Runner(result=("错误：没有编号为 'A99' 的笔记。", True)))
        self.assertEqual((outcome.stop, model.requests), ("tool_failures", 3))
        self.assertEqual(outcome.answer, "已停止：工具连续 3 轮全部失败（第 3 轮），请换个方式再试。")

    def test_a_round_with_one_success_resets_the_failure_counter(self):
        failing = ("错误：失败", True)
        script = [calls(call("read_note", {"note_id": f"X{n}"}, f"c{n}")) for n in (1, 2)]
        script.append(calls(call("read_note", {"note_id": "X3"}, "c3a"), call("list_notes", {}, "c3b")))
        script += [calls(call("read_note", {"note_id": f"X{n}"}, f"c{n}")) for n in (4, 5)]
        script.append(answer("终于"))
        outcome = self.ask(ScriptedModel(*script), Runner(result=failing, results={4: ("[]", False)}))
        self.assertEqual((outcome.stop, outcome.turns), ("answered", 6))

    def test_truncated_output_runs_no_tool(self):
        runner = Runner()
        model = ScriptedModel(calls(call("list_notes", {}, "c1"), finish="length"))
        outcome = self.ask(model, runner)
        self.assertEqual(outcome.stop, "output_truncated")
        self.assertTrue(outcome.answer.startswith("已停止：模型输出达到长度上限，本轮没有执行工具。"))
        self.assertEqual(runner.calls, [])
        self.assertEqual(self.history, [{"role": "user", "content": "问题"},
                                        {"role": "assistant", "content": outcome.answer}])

    def test_finish_reasons_in_other_cases_are_read_the_same(self):
        for finish, stop in (("LENGTH", "output_truncated"), (" Length ", "output_truncated"),
                             ("CONTENT_FILTER", "model_refused"), ("Insufficient_System_Resource", "model_refused")):
            with self.subTest(finish=finish):
                runner = Runner()
                outcome = self.ask(ScriptedModel(answer("", finish=finish)), runner)  # a refusal carries no text
                self.assertEqual(outcome.stop, stop)
                self.assertNotIn("空回答", outcome.answer)
                self.assertEqual(runner.calls, [])
        self.assertEqual(self.ask(ScriptedModel(answer("好", finish="STOP"))).stop, "answered")

    def test_refusals_run_no_tool(self):
        for finish in ("content_filter", "insufficient_system_resource"):
            with self.subTest(finish=finish):
                runner = Runner()
                outcome = self.ask(ScriptedModel(calls(call("list_notes", {}, "c1"), finish=finish)), runner)
                self.assertEqual(outcome.stop, "model_refused")
                self.assertEqual(runner.calls, [])
                self.assertEqual(len(self.history), 2)
                self.assertIn("本轮没有执行工具", self.history[-1]["content"])


class ApiFailuresAndInterrupts(LoopTestCase):
    def test_api_error_leaves_the_history_as_before_the_request(self):
        error = errors.status_error(429, "rate limited")
        model = ScriptedModel(calls(call("list_notes", {}, "c1")), error)
        outcome = self.ask(model)
        self.assertEqual((outcome.stop, outcome.turns, outcome.error), ("api_error", 2, error))
        self.assertEqual(self.history, model.sent[1])
        self.assertEqual(len(self.history), 3)
        self.assertIn("429", outcome.answer)

    def test_api_error_on_the_first_request_keeps_only_the_question(self):
        outcome = self.ask(ScriptedModel(errors.APIConnectionError("refused")))
        self.assertEqual(outcome.stop, "api_error")
        self.assertEqual(self.history, [{"role": "user", "content": "问题"}])

    def test_context_length_is_context_full_with_reset_hint_in_chat(self):
        error = errors.status_error(400, "This model's maximum context length is 65536 tokens.")
        outcome = self.ask(ScriptedModel(error), chat=True)
        self.assertEqual(outcome.stop, "context_full")
        self.assertIn("/reset", outcome.answer)
        self.assertEqual(len(self.history), 1)

    def test_ctrl_c_while_waiting_for_the_model(self):
        outcome = self.ask(ScriptedModel(KeyboardInterrupt()))
        self.assertEqual(outcome.stop, "interrupted")
        self.assertEqual(self.history, [{"role": "user", "content": "问题"}])
        self.assertIn("Ctrl-C", outcome.answer)

    def test_a_termination_signal_is_not_called_ctrl_c(self):
        class Terminated(KeyboardInterrupt):  # what the workspace's cli raises on SIGTERM / SIGHUP
            pass
        outcome = self.ask(ScriptedModel(Terminated()))
        self.assertEqual(outcome.stop, "interrupted")
        self.assertIn("终止信号", outcome.answer)
        self.assertNotIn("Ctrl-C", outcome.answer)

    def test_ctrl_c_during_a_tool_gives_every_call_a_result(self):
        model = ScriptedModel(calls(call("list_notes", {}, "c1"), call("search_notes", {"query": "a"}, "c2"),
                                    call("read_note", {"note_id": "A01"}, "c3")))
        runner = Runner(interrupt_at=2)
        outcome = self.ask(model, runner)
        self.assertEqual((outcome.stop, outcome.tool_calls),
                         ("interrupted", ["list_notes", "search_notes", "read_note"]))
        self.assertEqual(len(runner.calls), 2)  # the third never ran
        self.assertEqual([m["content"] for m in self.history[2:]],
                         ["[]", "错误：用户中断了这个工具。", "错误：这一轮已中断，工具没有执行。"])
        self.assertEqual([m["tool_call_id"] for m in self.history[2:]], ["c1", "c2", "c3"])

    def test_the_next_question_after_an_interrupt_is_sent_valid(self):
        model = ScriptedModel(calls(call("list_notes", {}, "c1")), answer("好"))
        self.ask(model, Runner(interrupt_at=1))
        outcome = agent.run_question(model, self.history, "再问", tool_runner=Runner())
        self.assertEqual(outcome.stop, "answered")
        self.assertEqual(model.problems, [])

    def test_events_report_requests_and_tool_calls(self):
        events = []
        model = ScriptedModel(calls(call("list_notes", {}, "c1")), answer("好"))
        self.ask(model, on_event=lambda kind, data: events.append((kind, data.get("name"))))
        self.assertEqual(events, [("request", None), ("reply", None), ("tool_call", "list_notes"),
                                  ("tool_result", "list_notes"), ("round", None), ("request", None), ("reply", None),
                                  ("stop", None)])


class Reminder(LoopTestCase):
    """The first time a block of rounds is seen twice, one user message beginning 【循环提醒】."""

    def reminders(self):
        return [index for index, message in enumerate(self.history) if is_reminder(message)]

    def test_identical_calls_are_reminded_once_and_still_stop_at_round_3(self):
        model = ScriptedModel(then=lambda n: calls(call("list_notes", {}, f"c{n}")))
        outcome = self.ask(model)
        self.assertEqual((outcome.stop, model.requests), ("no_progress", 3))
        self.assertEqual(self.reminders(), [5])  # question, 2 x (call, result), then the reminder
        reminder = self.history[5]["content"]
        self.assertTrue(reminder.startswith("【循环提醒】"), reminder)
        self.assertIn("list_notes({})", reminder)
        self.assertEqual(model.sent[2][-1]["content"], reminder)  # the third request carries it
        self.assertNotIn(reminder, [m["content"] for m in model.sent[1]])

    def test_a_model_that_heeds_the_reminder_answers_on_request_3(self):
        def heed(n):
            if any(is_reminder(m) for m in model.sent[-1]):
                return answer("换个做法：直接回答。")
            return calls(call("list_notes", {}, f"c{n}"))
        model = ScriptedModel(then=heed)
        outcome = self.ask(model)
        self.assertEqual((outcome.stop, model.requests, outcome.answer), ("answered", 3, "换个做法：直接回答。"))

    def test_period_2_cycle_is_reminded_after_round_4_and_stops_at_6(self):
        def alternate(n):
            return calls(call("list_notes", {}, f"c{n}") if n % 2 else call("read_note", {"note_id": "A01"}, f"c{n}"))
        model = ScriptedModel(then=alternate)
        outcome = self.ask(model)
        self.assertEqual((outcome.stop, model.requests), ("no_progress", 6))
        self.assertEqual(len(self.reminders()), 1)
        self.assertEqual(len([m for m in model.sent[4] if is_reminder(m)]), 1)  # request 5 is the first with it
        self.assertEqual(len([m for m in model.sent[3] if is_reminder(m)]), 0)

    def test_failing_and_changing_rounds_keep_their_stops(self):
        failing = ScriptedModel(then=lambda n: calls(call("read_note", {"note_id": "A99"}, f"c{n}")))
        outcome = self.ask(failing, Runner(result=("错误：没有这篇笔记。", True)))
        self.assertEqual((outcome.stop, failing.requests, len(self.reminders())), ("tool_failures", 3, 1))
        changing = ScriptedModel(then=lambda n: calls(call("list_notes", {}, f"c{n}")))
        outcome = self.ask(changing, Runner(result=lambda n: (f"结果{n}", False)))
        self.assertEqual((outcome.stop, changing.requests, self.reminders()), ("max_turns", 20, []))

    def test_no_reminder_when_the_stop_needs_fewer_than_three_repeats(self):
        model = ScriptedModel(then=lambda n: calls(call("list_notes", {}, f"c{n}")))
        outcome = self.ask(model, limits=agent.Limits(cycle_repeats=2))
        self.assertEqual((outcome.stop, model.requests, self.reminders()), ("no_progress", 2, []))

    def test_reading_the_detector_does_not_change_it(self):
        detector = CycleDetector()
        for signature in "AA":
            detector.add(signature)
        before = list(detector.signatures)
        self.assertEqual((detector.repeating(2), detector.repeating(2)), (1, 1))
        self.assertEqual(detector.signatures, before)
        self.assertEqual(detector.add("A"), 1)

    def test_the_demo_model_does_not_take_the_reminder_for_a_question(self):
        history = [{"role": "user", "content": "RAG 的步骤顺序是什么？"},
                   {"role": "user", "content": REMINDER_PREFIX + "最近 2 轮在重复 list_notes({})。"}]
        choice = DemoModel().complete(history, agent.TOOL_SCHEMAS)
        queries = [json.loads(c["function"]["arguments"])["query"] for c in choice["message"]["tool_calls"]]
        self.assertEqual(queries[0], "RAG 的步骤顺序")


class OtherStops(LoopTestCase):
    def test_empty_text_without_tool_calls_is_an_api_error(self):
        for text in ("", "  \n ", None):
            with self.subTest(text=text):
                outcome = self.ask(ScriptedModel(answer(text)))
                self.assertEqual(outcome.stop, "api_error")
                self.assertIn("空回答", outcome.answer)
                self.assertEqual(self.history, [{"role": "user", "content": "问题"}])

    def test_token_budget_stop_appends_its_message_and_sends_nothing(self):
        budget = TokenBudget(100, used=90)
        model = ScriptedModel(BudgetExceeded(50, budget))
        outcome = self.ask(model, limits=agent.Limits(max_tokens=100))
        self.assertEqual((outcome.stop, outcome.turns), ("token_budget", 0))
        self.assertEqual(self.history[-1], {"role": "assistant", "content": outcome.answer})
        self.assertIn("token 预算是 100", outcome.answer)
        self.assertIn("--max-tokens", outcome.answer)

    def test_a_budget_too_small_for_one_request_names_the_minimum(self):
        outcome = self.ask(ScriptedModel(BudgetExceeded(4321, TokenBudget(100))), limits=agent.Limits(max_tokens=100))
        self.assertEqual((outcome.stop, outcome.turns), ("token_budget", 0))
        self.assertIn("--max-tokens 至少要 4321", outcome.answer)
        self.assertNotIn("换个问法", outcome.answer)  # no rewording makes the first request fit

    def test_the_outcome_carries_the_question_budget(self):
        outcome = self.ask(ScriptedModel(answer("好")), limits=agent.Limits(max_tokens=5000))
        self.assertEqual(outcome.tokens.record(), {"used": 0, "estimated": False, "budget": 5000})

    def test_a_stop_reason_outside_the_fixed_set_is_refused(self):
        self.assertEqual(len(agent.STOP_REASONS), 10)
        with self.assertRaises(ValueError):
            agent.Outcome("gave_up", "", [], 0)

    def test_only_chat_says_a_next_question_can_follow_an_interrupt(self):
        for chat, hint in ((True, "可以接着问下一句"), (False, "重新运行这条命令")):
            with self.subTest(chat=chat):
                outcome = self.ask(ScriptedModel(KeyboardInterrupt()), chat=chat)
                self.assertIn(hint, outcome.answer)


class HistoryRepair(unittest.TestCase):
    def dangling(self):
        return [{"role": "user", "content": "问"},
                {"role": "assistant", "content": "", "tool_calls": [call("list_notes", {}, "c1"),
                                                                    call("read_note", {"note_id": "A01"}, "c2")]},
                {"role": "tool", "tool_call_id": "c1", "content": "[]"}]

    def test_seal_dangling_tool_calls(self):
        history = self.dangling()
        self.assertEqual(len(history_problems(history)), 1)
        self.assertTrue(seal_dangling_tool_calls(history))
        self.assertEqual(history[-1], {"role": "tool", "tool_call_id": "c2",
                                       "content": "错误：用户中断，这个工具的执行状态不明；重试前请先检查现况。"})
        self.assertEqual(history_problems(history), [])
        self.assertFalse(seal_dangling_tool_calls(history))  # nothing left to seal

    def test_a_call_without_its_type_is_sealed_too(self):  # compatible servers may leave "type" out
        history = self.dangling()
        del history[-2]["tool_calls"][1]["type"]
        self.assertTrue(seal_dangling_tool_calls(history))
        self.assertEqual((history[-1]["tool_call_id"], history_problems(history)), ("c2", []))

    def test_nothing_to_seal(self):
        for history in ([], [{"role": "user", "content": "问"}],
                        [{"role": "user", "content": "问"}, {"role": "assistant", "content": "答"}]):
            before = [dict(message) for message in history]
            self.assertFalse(seal_dangling_tool_calls(history))
            self.assertEqual(history, before)

    def test_run_question_seals_a_broken_history_first(self):
        history = self.dangling()
        model = ScriptedModel(answer("好"))
        agent.run_question(model, history, "再问", tool_runner=Runner())
        self.assertEqual(model.problems, [])

    def test_history_problems(self):
        valid = self.dangling()[:2] + [{"role": "tool", "tool_call_id": "c1", "content": "x"},
                                      {"role": "tool", "tool_call_id": "c2", "content": "y"},
                                      {"role": "assistant", "content": "答"}]
        self.assertEqual(history_problems(valid), [])
        interrupted_by_user = self.dangling() + [{"role": "user", "content": "又问"}]
        self.assertEqual(len(history_problems(interrupted_by_user)), 1)
        orphan = [{"role": "user", "content": "问"}, {"role": "tool", "tool_call_id": "c9", "content": "x"}]
        self.assertIn("c9", history_problems(orphan)[0])
        self.assertIn("c2", history_problems(self.dangling())[0])


class CycleDetection(unittest.TestCase):
    def feed(self, signatures, **options):
        detector = CycleDetector(**options)
        return [detector.add(signature) for signature in signatures]

    def test_periods(self):
        self.assertEqual(self.feed("AAA"), [None, None, 1])
        self.assertEqual(self.feed("ABABAB"), [None] * 5 + [2])
        self.assertEqual(self.feed("ABCDE" * 3), [None] * 14 + [5])
        self.assertEqual(self.feed("ABCDEF" * 4), [None] * 24)  # period 6 is beyond max_period 5
        self.assertEqual(self.feed("ABCDEF" * 3, max_period=6), [None] * 17 + [6])
        self.assertEqual(self.feed("ABAB", repeats=2), [None, None, None, 2])
        self.assertEqual(self.feed("AABAAB"), [None] * 6)
        self.assertEqual(self.feed("ABCDEFGHIJKLMNOPQRST"), [None] * 20)

    def test_reset(self):
        detector = CycleDetector()
        detector.add("A")
        detector.add("A")
        detector.reset()
        self.assertIsNone(detector.add("A"))

    def test_round_signature(self):
        first = round_signature([call("search_notes", {"a": 1, "b": 2}, "x")], [("结果", False)])
        same = round_signature([call("search_notes", {"b": 2, "a": 1}, "y")], [("结果", False)])
        self.assertEqual(first, same)  # ids and key order do not matter
        self.assertNotEqual(first, round_signature([call("search_notes", {"a": 1, "b": 3}, "x")], [("结果", False)]))
        self.assertNotEqual(first, round_signature([call("search_notes", {"a": 1, "b": 2}, "x")], [("别的", False)]))
        pair = [call("list_notes", {}, "1"), call("read_note", {"note_id": "A01"}, "2")]
        self.assertNotEqual(round_signature(pair, ["r1", "r2"]), round_signature(pair[::-1], ["r2", "r1"]))


class DemoModelThroughTheLoop(unittest.TestCase):
    def test_rag_question_is_answered_with_a_verbatim_quote(self):
        history = []
        model = DemoModel()
        outcome = agent.run_question(model, history, "RAG 的步骤顺序是什么？")
        self.assertEqual(outcome.stop, "answered")
        self.assertEqual(outcome.tool_calls, ["search_notes"] * 4 + ["read_note"])  # 3 key phrases and 步骤, a name
        self.assertEqual((outcome.turns, model.requests), (3, 3))
        self.assertIn("离线演示", outcome.answer)
        self.assertIn("A01《RAG 的基本流程》", outcome.answer)
        self.assertIn(f"“{RAG_SENTENCE}”", outcome.answer)
        self.assertIn(RAG_SENTENCE, (ROOT / "project" / "notes" / "A01.md").read_text(encoding="utf-8"))
        self.assertEqual(history_problems(history), [])

    def test_nothing_in_the_notes_is_a_normal_answer(self):
        outcome = agent.run_question(DemoModel(), [], "量子计算机的原理是什么？")
        self.assertEqual((outcome.stop, outcome.turns), ("answered", 2))
        self.assertIn("笔记中没有找到相关内容", outcome.answer)

    def test_follow_up_questions_in_one_history(self):
        history, model = [], DemoModel()
        agent.run_question(model, history, "RAG 的步骤顺序是什么？")
        outcome = agent.run_question(model, history, "什么是指数退避？")
        self.assertEqual(outcome.stop, "answered")
        self.assertIn("A08《API 重试与退避》", outcome.answer)
        self.assertEqual(history_problems(history), [])

    def test_demo_goes_through_the_same_guards(self):
        def broken_tools(name, arguments):
            return "错误：工具坏了。", True
        outcome = agent.run_question(DemoModel(), [], "RAG 的步骤顺序是什么？", tool_runner=broken_tools)
        self.assertEqual((outcome.stop, outcome.turns), ("answered", 2))
        self.assertIn("搜索笔记时工具出错：错误：工具坏了。", outcome.answer)
        outcome = agent.run_question(DemoModel(), [], "RAG 的步骤顺序是什么？", limits=agent.Limits(max_turns=1))
        self.assertEqual(outcome.stop, "max_turns")


if __name__ == "__main__":
    unittest.main()
