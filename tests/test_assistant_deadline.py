"""One deadline for a whole question, progress while a reply is slow, and what the person is told about
replies that are cut off, empty, not JSON or a gateway's HTML page.

The deadline tests run on an injected clock that the scripted sends and sleeps move forward: no test
waits for a deadline or a 10-second progress interval.
"""
import io
import sys
import time
import unittest
from contextlib import redirect_stderr

from tests.support import ROOT
from tests.test_assistant_client import OK_BODY, LoopbackCase, error

sys.dont_write_bytecode = True
sys.path.insert(0, str(ROOT / "project"))
from assistant import client, config, errors  # noqa: E402
from assistant.agent import run_question  # noqa: E402
from assistant.transport import Reply  # noqa: E402

OK_REPLY = Reply(200, {}, b'{"choices": [{"message": {"role": "assistant", "content": "ok"}}]}')


class FakeTime:
    """A clock that only the fake network and the sleeps move."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def scripted_client(steps, *, timeout=60.0, deadline=90.0, **options):
    """A ChatClient whose every attempt is the next step: ("hang", None) uses up the attempt's whole time and
    times out; ("reply", Reply) answers at once. Returns (client, the attempts' seconds, the sleeps)."""
    clock, given, sleeps = FakeTime(), [], []

    def send(url, body, headers, attempt):
        given.append(attempt.seconds)
        kind, reply = steps.pop(0)
        if kind == "hang":
            clock.now += attempt.seconds
            raise errors.APITimeoutError(f"{attempt.seconds:g} 秒内没有收到完整回应", attempt.seconds)
        return reply

    def sleep(seconds):
        sleeps.append(seconds)
        clock.now += seconds

    chat = client.ChatClient("http://127.0.0.1:9/", "sk-test", timeout=timeout, deadline=deadline, send=send,
                             sleep=sleep, random=lambda: 0.0, clock=clock, **options)
    return chat, given, sleeps, clock


class WholeQuestionDeadline(unittest.TestCase):
    def test_each_attempt_gets_the_smaller_of_the_timeout_and_the_time_left(self):
        chat, given, sleeps, clock = scripted_client([("hang", None), ("hang", None), ("hang", None)])
        with self.assertRaises(errors.DeadlineReached) as caught:
            chat.complete([], [])
        # 60 s, then 0.5 s of backoff, then only the 29.5 s that are left: 90 s in all, not 3 x 60
        self.assertEqual(given, [60.0, 29.5])
        self.assertEqual(sleeps, [0.5])
        self.assertEqual(clock.now, 90.0)
        message = errors.describe_api_error(caught.exception)
        self.assertIn("整个期限 90 秒", message)
        self.assertIn("请求超时", message)
        self.assertIn("DEEPSEEK_DEADLINE", message)

    def test_a_wait_longer_than_the_time_left_stops_at_once_saying_so(self):
        reply = Reply(429, {"retry-after": "30"}, b'{"error": {"message": "slow down"}}')
        chat, given, sleeps, clock = scripted_client([("hang", None), ("reply", reply)], timeout=70.0)
        with self.assertRaises(errors.DeadlineReached) as caught:
            chat.complete([], [])
        self.assertEqual((given, sleeps), ([70.0, 19.5], [0.5]))  # the second attempt got the 19.5 s left
        chat, given, sleeps, clock = scripted_client([("reply", reply)], deadline=20.0)
        with self.assertRaises(errors.DeadlineReached) as caught:
            chat.complete([], [])
        self.assertEqual(sleeps, [])  # nobody sits through a 30 s wait that the deadline cuts anyway
        message = errors.describe_api_error(caught.exception)
        self.assertIn("要先等 30.0 秒，而期限只剩 20.0 秒", message)
        self.assertIn("HTTP 429", message)

    def test_a_wait_that_fits_is_waited(self):
        reply = Reply(429, {"retry-after": "30"}, b'{"error": {"message": "slow down"}}')
        chat, given, sleeps, clock = scripted_client([("reply", reply), ("reply", OK_REPLY)], deadline=31.0)
        self.assertEqual(chat.complete([], [])["message"]["content"], "ok")
        self.assertEqual(sleeps, [30.0])

    def test_a_wait_that_would_end_just_at_the_deadline_is_not_waited(self):
        reply = Reply(429, {"retry-after": "30"}, b'{"error": {"message": "slow down"}}')
        chat, given, sleeps, clock = scripted_client([("reply", reply), ("reply", OK_REPLY)], deadline=30.0)
        with self.assertRaises(errors.DeadlineReached):
            chat.complete([], [])
        self.assertEqual(sleeps, [])  # the tie: after the wait no time would be left for the request

    def test_tool_time_counts(self):
        chat, given, sleeps, clock = scripted_client([("reply", Reply(200, {}, TOOL_CALL)), ("hang", None)],
                                                     deadline=50.0)

        def slow_tool(name, arguments):
            clock.now += 45.0
            return "[]", False
        outcome = run_question(chat, [], "问", tool_runner=slow_tool)
        self.assertEqual(outcome.stop, "api_error")
        self.assertEqual(given, [50.0, 5.0])  # the tool took 45 of the 50 seconds
        self.assertIn("整个期限 50 秒", outcome.answer)

    def test_every_question_starts_its_own_deadline(self):
        chat, given, sleeps, clock = scripted_client([("reply", OK_REPLY), ("reply", OK_REPLY)], deadline=10.0)
        history = []
        run_question(chat, history, "一")
        clock.now += 100.0  # a person thinks for a while in chat
        self.assertEqual(run_question(chat, history, "二").stop, "answered")
        self.assertEqual(given, [10.0, 10.0])


TOOL_CALL = (b'{"choices": [{"message": {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", '
             b'"type": "function", "function": {"name": "list_notes", "arguments": "{}"}}]}}]}')


class ProgressWhileSlow(LoopbackCase):
    def test_a_progress_line_comes_every_interval_while_a_reply_is_slow(self):
        seen = []
        chat = self.make(self.serve(("hang", {}, None)), timeout=0.35, max_retries=0, progress_every=0.05,
                         on_progress=lambda what, waited, left: seen.append((what, waited, left)))
        started = time.monotonic()
        with self.assertRaises(errors.APITimeoutError):
            chat.complete([], [])
        took, count = time.monotonic() - started, len(seen)
        time.sleep(0.12)  # a ticker left running would add lines now
        self.assertEqual(len(seen), count)
        self.assertGreaterEqual(count, 3)
        self.assertLessEqual(count, took / 0.05 + 1)  # one line an interval at most, however busy the machine
        self.assertEqual({what for what, _, _ in seen}, {"等待模型回应"})
        waited = [round(w, 2) for _, w, _ in seen]
        self.assertEqual(waited, sorted(waited))
        self.assertTrue(all(left <= config.DEFAULT_DEADLINE for _, _, left in seen))

    def test_no_progress_line_for_a_quick_reply(self):
        seen = []
        chat = self.make(self.serve((200, {}, OK_BODY)), progress_every=0.05, on_progress=lambda *a: seen.append(a))
        chat.complete([], [])
        time.sleep(0.1)
        self.assertEqual(seen, [])


class WhatHappenedIsSaid(LoopbackCase):
    def test_a_gateways_html_page_is_read_as_ours_quoting_only_its_title(self):
        page = "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>"
        chat = self.make(self.serve((502, {}, page), (502, {}, page), (502, {}, page)))
        with self.assertRaises(errors.APIStatusError) as caught:
            chat.complete([], [])
        message = errors.describe_api_error(caught.exception)
        self.assertIn("HTML 错误页", message)
        self.assertIn("页面标题是“502 Bad Gateway”", message)
        self.assertNotIn("服务端说明", message)  # our reading is never put in the server's mouth
        self.assertNotIn("nginx", message)
        self.assertIn("502 Bad Gateway", caught.exception.detail)

    def test_a_page_without_a_title_says_so(self):
        chat = self.make(self.serve((403, {}, "<html><body>denied</body></html>")))
        with self.assertRaises(errors.APIStatusError) as caught:
            chat.complete([], [])
        self.assertIn("页面没有标题", errors.describe_api_error(caught.exception))

    def test_empty_choices_name_a_content_filter_not_the_base_url(self):
        chat = self.make(self.serve((200, {}, {"choices": [], "usage": {"total_tokens": 5}})))
        with self.assertRaises(errors.EmptyChoicesError) as caught:
            chat.complete([], [])
        message = errors.describe_api_error(caught.exception)
        self.assertIn("choices 是空的", message)
        self.assertIn("内容过滤", message)
        self.assertNotIn("DEEPSEEK_BASE_URL", message)
        self.assertEqual(chat.requests, 1)

    def test_a_whole_200_body_that_is_not_json_is_not_retried_it_may_be_billed(self):
        chat = self.make(self.serve((200, {}, "upstream said: oops"), (200, {}, OK_BODY)))
        with self.assertRaises(errors.NotJSONError) as caught:
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)
        message = errors.describe_api_error(caught.exception)
        self.assertIn("不是 JSON", message)
        self.assertIn("没有重试", message)
        self.assertIn("计费", message)

    def test_a_reply_cut_mid_way_is_retried_and_said_as_cut(self):
        chat = self.make(self.serve(("cut", {}, None), ("cut", {}, None), (200, {}, OK_BODY)))
        self.assertEqual(chat.complete([], [])["message"]["content"], "你好")
        chat = self.make(self.serve(("cut", {}, None), ("cut", {}, None), ("cut", {}, None)))
        with self.assertRaises(errors.IncompleteResponseError) as caught:
            chat.complete([], [])
        message = errors.describe_api_error(caught.exception)
        self.assertIn("半路被切断", message)
        self.assertIn("已重试 2 次", message)
        self.assertNotIn("DEEPSEEK_BASE_URL", message)


class TimeoutAboveTheDeadline(unittest.TestCase):
    def test_it_is_named_on_stderr(self):
        sys.path.insert(0, str(ROOT / "project"))
        import app
        said = io.StringIO()
        env = {"DEEPSEEK_API_KEY": "sk-test", "DEEPSEEK_TIMEOUT": "120", "DEEPSEEK_DEADLINE": "90"}
        with redirect_stderr(said):
            model = app.load_model(False, env)
        self.assertEqual((model.timeout, model.deadline), (120.0, 90.0))
        self.assertIn("DEEPSEEK_TIMEOUT（120 秒）", said.getvalue())
        self.assertIn("DEEPSEEK_DEADLINE（90 秒）", said.getvalue())
        with redirect_stderr(said := io.StringIO()):
            app.load_model(False, {**env, "DEEPSEEK_TIMEOUT": "60"})
        self.assertEqual(said.getvalue(), "")

    def test_a_bad_deadline_is_a_usage_error_naming_it(self):
        sys.path.insert(0, str(ROOT / "project"))
        import app
        with self.assertRaises(app.UsageError) as caught:
            app.load_model(False, {"DEEPSEEK_API_KEY": "sk-test", "DEEPSEEK_DEADLINE": "soon"})
        self.assertIn("DEEPSEEK_DEADLINE", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
