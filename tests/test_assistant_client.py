"""The model client: SDK retry policy, error classes and messages, the whole-request deadline,
the token budget's charging, against a loopback server.

The server is a tiny in-test http.server on 127.0.0.1 (port 0) answering a scripted list of
responses; sleep and random are injected, so no test waits for a backoff. The deadline tests
wait on purpose, a few tenths of a second: the deadline itself is what they check.
Servers nobody here wrote and the TLS context are tested in tests/test_assistant_other_servers.py, which imports
its helpers from here.
"""
import http.server
import json
import os
import socket
import sys
import threading
import unittest
from unittest import mock

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import client, errors, retry  # noqa: E402
from assistant.budget import BudgetExceeded, TokenBudget  # noqa: E402
from assistant.config import DEFAULT_MAX_TOKENS  # noqa: E402
from assistant.models import make_model  # noqa: E402
from assistant.demo_model import DemoModel  # noqa: E402

OK_BODY = {"choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "你好"}}],
           "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}
CONTEXT_400 = {"error": {"message": "This model's maximum context length is 65536 tokens. "
                                    "However, you requested 70000 tokens.",
                         "type": "invalid_request_error"}}


def error(status, message="出错了", headers=None):
    return status, headers or {}, {"error": {"message": message}}


class Retries(unittest.TestCase):
    def test_backoff_formula(self):
        self.assertEqual(retry.retry_delay(0, {}, random=lambda: 0.0), 0.5)
        self.assertEqual(retry.retry_delay(0, {}, random=lambda: 1.0), 0.375)
        self.assertEqual(retry.retry_delay(1, {}, random=lambda: 0.5), 0.875)
        self.assertEqual(retry.retry_delay(4, {}, random=lambda: 0.0), 8.0)
        self.assertEqual(retry.retry_delay(9, {}, random=lambda: 0.0), 8.0)  # capped

    def test_server_hints(self):
        no_jitter = {"random": lambda: 0.0}
        self.assertEqual(retry.retry_delay(0, {"retry-after-ms": "1500"}, **no_jitter), 1.5)
        self.assertEqual(retry.retry_delay(0, {"Retry-After": "3"}, **no_jitter), 3.0)
        self.assertEqual(retry.retry_delay(0, {"retry-after-ms": "250", "retry-after": "9"}, **no_jitter), 0.25)
        self.assertEqual(retry.retry_delay(1, {"retry-after": "60"}, **no_jitter), 60.0)
        # outside (0, 60] or unreadable: the formula again
        for headers in ({"retry-after": "0"}, {"retry-after": "61"}, {"retry-after": "-2"},
                        {"retry-after-ms": "60001"}, {"retry-after": "soon"}):
            with self.subTest(headers=headers):
                self.assertEqual(retry.retry_delay(1, headers, **no_jitter), 1.0)

    def test_a_wait_of_exactly_60_seconds_is_waited_and_one_just_above_stops(self):
        plan = retry.plan_retry(0, 2, 429, {"retry-after": "60"}, random=lambda: 0.0)
        self.assertEqual((plan.wait, plan.asked), (60.0, 60.0))
        plan = retry.plan_retry(0, 2, 429, {"retry-after-ms": "60001"}, random=lambda: 0.0)
        self.assertIsNone(plan.wait)
        self.assertAlmostEqual(plan.asked, 60.001)

    def test_retry_after_as_http_date(self):
        date = {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}
        self.assertEqual(retry.retry_delay(0, date, random=lambda: 0.0, now=lambda: 1445412480 - 5), 5.0)
        # a date in the past falls back to the formula
        self.assertEqual(retry.retry_delay(0, date, random=lambda: 0.0, now=lambda: 1445412480 + 5), 0.5)

    def test_should_retry(self):
        for status in (None, 408, 409, 429, 500, 502, 503, 529):
            self.assertTrue(retry.should_retry(status, {}), status)
        for status in (400, 401, 402, 403, 404, 422):
            self.assertFalse(retry.should_retry(status, {}), status)
        self.assertTrue(retry.should_retry(400, {"X-Should-Retry": "true"}))
        self.assertFalse(retry.should_retry(503, {"x-should-retry": "false"}))
        self.assertTrue(retry.should_retry(503, {"x-should-retry": "maybe"}))


class ErrorClasses(unittest.TestCase):
    def test_status_to_class(self):
        cases = [(400, "bad", errors.BadRequestError),
                 (400, CONTEXT_400["error"]["message"], errors.ContextLengthError),
                 (401, "", errors.AuthenticationError), (402, "", errors.InsufficientBalanceError),
                 (429, "", errors.RateLimitError), (503, "", errors.OverloadedError),
                 (529, "", errors.OverloadedError), (500, "", errors.InternalServerError),
                 (502, "", errors.InternalServerError), (404, "", errors.APIStatusError)]
        for status, message, cls in cases:
            with self.subTest(status=status):
                exc = errors.status_error(status, message, {})
                self.assertIs(type(exc), cls)
                self.assertEqual(exc.status, status)
        self.assertTrue(issubclass(errors.ContextLengthError, errors.BadRequestError))
        self.assertTrue(issubclass(errors.APITimeoutError, errors.APIConnectionError))

    def test_one_message_per_class_most_specific_first(self):
        expected = [
            (errors.status_error(401, "x"), "API 密钥无效（401）"),
            (errors.status_error(402, "x"), "余额不足（402）"),
            (errors.status_error(429, "x"), "请求被限流（429）"),
            (errors.status_error(503, "x"), "繁忙（503）"),
            (errors.status_error(529, "x"), "繁忙（529）"),
            (errors.status_error(400, CONTEXT_400["error"]["message"]), "最大上下文长度"),
            (errors.status_error(400, "unknown field"), "请求被拒绝（400），服务端说明：“unknown field”"),
            (errors.APITimeoutError("timed out"), "超时"),
            (errors.APIConnectionError("连接被拒绝"), "连不上模型 API（连接被拒绝）"),
            (errors.IncompleteResponseError("正文断了"), "回应不完整（正文断了）"),
            (errors.status_error(500, "boom"), "返回 500，服务端说明：“boom”"),
            (errors.ServerReportedError("upstream overloaded", 200), "错误说明：“upstream overloaded”"),
            (errors.EmptyReplyError("空", 200), "空回答"),
        ]
        messages = [errors.describe_api_error(exc) for exc, _ in expected]
        for message, (_, phrase) in zip(messages, expected):
            self.assertTrue(message.startswith("错误："), message)
            self.assertIn(phrase, message)
        self.assertEqual(len(set(messages)), len(messages))

    def test_a_server_text_cut_short_ends_with_an_ellipsis(self):
        long_text = "no-usage、heed-reminder " * 20  # 480 characters, more than a message quotes
        message = errors.describe_api_error(errors.ServerReportedError(long_text, 200))
        quoted = message[message.index("“") + 1:message.index("”")]
        self.assertTrue(quoted.endswith("……"), quoted)
        self.assertTrue(long_text.startswith(quoted[:-2]))
        self.assertLess(len(quoted), len(long_text))
        whole = errors.describe_api_error(errors.ServerReportedError("upstream overloaded", 200))
        self.assertIn("“upstream overloaded”", whole)  # a text that fits is quoted as it is, without "……"

    def test_reset_hint_only_in_chat(self):
        exc = errors.status_error(400, CONTEXT_400["error"]["message"])
        self.assertIn("/reset", errors.describe_api_error(exc, chat=True))
        self.assertNotIn("/reset", errors.describe_api_error(exc))


class ScriptedServer(http.server.ThreadingHTTPServer):
    """Answers each POST with the next scripted (status, headers, body); records the requests.

    A str body is sent verbatim; any other body as JSON.
    """

    def __init__(self, script):
        super().__init__(("127.0.0.1", 0), ScriptedHandler)
        self.script = list(script)
        self.received = []
        self.release = threading.Event()


class ScriptedHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                     "body": json.loads(body)})
        status, headers, payload = self.server.script.pop(0) if self.server.script else (200, {}, OK_BODY)
        if status == "hang":
            self.server.release.wait(5)
            return
        if status in ("trickle", "cut"):
            return self.deliver_badly(status, json.dumps(OK_BODY).encode("utf-8"))
        if status in ("raw", "raw-trickle", "raw-slow-body"):  # PAYLOAD: the whole response as bytes
            start = {"raw": len(payload), "raw-trickle": 0, "raw-slow-body": payload.find(b"\r\n\r\n") + 4}[status]
            return self.deliver_raw(payload, trickle_from=start)
        # a str is sent as it is (a broken or HTML body); anything else as JSON
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode("utf-8")
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def deliver_badly(self, how, data):
        """"trickle": the whole response one byte every 50 ms; "cut": half the body, then hang up."""
        whole = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(data)) + data
        self.close_connection = True
        try:
            if how == "cut":
                return self.wfile.write(whole[:len(whole) - len(data) // 2])
            for index in range(len(whole)):
                if self.server.release.wait(0.05):
                    return
                self.wfile.write(whole[index:index + 1])
        except OSError:
            return None  # the client gave up, as it should

    def deliver_raw(self, whole, trickle_from):
        """Bytes another server might send (broken HTTP included), then hang up; from TRICKLE_FROM on,
        one byte per 50 ms."""
        self.close_connection = True
        try:
            self.wfile.write(whole[:trickle_from])
            for index in range(trickle_from, len(whole)):
                if self.server.release.wait(0.05):
                    return None
                self.wfile.write(whole[index:index + 1])
        except OSError:
            return None  # the client gave up, as it should
        return None

    def log_message(self, *args):
        pass


class LoopbackCase(unittest.TestCase):
    """serve(*script) starts a ScriptedServer; make(url) a ChatClient whose sleeps are recorded."""

    def serve(self, *script):
        server = ScriptedServer(script)
        thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
        thread.start()

        def stop():
            server.release.set()
            server.shutdown()
            server.server_close()
            thread.join(5)
        self.addCleanup(stop)
        self.server = server
        return f"http://127.0.0.1:{server.server_address[1]}/"

    def make(self, base_url, **options):
        self.sleeps = []
        options.setdefault("sleep", self.sleeps.append)
        options.setdefault("random", lambda: 0.5)
        return client.ChatClient(base_url, "sk-test", **options)


class ChatClientAgainstLoopback(LoopbackCase):
    def test_success_request_shape_and_usage(self):
        chat = self.make(self.serve((200, {}, OK_BODY), (200, {}, OK_BODY)))
        tools = [{"type": "function", "function": {"name": "list_notes", "parameters": {"type": "object"}}}]
        choice = chat.complete([{"role": "user", "content": "问"}], tools)
        self.assertEqual(choice, {"message": {"role": "assistant", "content": "你好"}, "finish_reason": "stop"})
        chat.complete([{"role": "user", "content": "再问"}], [])
        self.assertEqual(chat.usage, {"prompt_tokens": 22, "completion_tokens": 6, "total_tokens": 28})
        self.assertEqual(chat.requests, 2)
        first, second = self.server.received
        self.assertEqual(first["path"], "/chat/completions")
        self.assertEqual(first["headers"]["authorization"], "Bearer sk-test")
        self.assertEqual(first["headers"]["x-stainless-retry-count"], "0")
        self.assertEqual(first["body"]["model"], "deepseek-chat")
        self.assertEqual(first["body"]["tools"], tools)
        self.assertEqual(first["body"]["messages"][0]["role"], "system")
        self.assertEqual(first["body"]["messages"][1:], [{"role": "user", "content": "问"}])
        self.assertNotIn("tools", second["body"])  # an empty tool list is not sent
        self.assertEqual(self.sleeps, [])

    def test_429_retried_twice_then_raised(self):
        chat = self.make(self.serve(error(429), error(429), error(429), (200, {}, OK_BODY)))
        with self.assertRaises(errors.RateLimitError) as caught:
            chat.complete([{"role": "user", "content": "问"}], [])
        self.assertEqual([r["headers"]["x-stainless-retry-count"] for r in self.server.received], ["0", "1", "2"])
        self.assertEqual(self.sleeps, [0.4375, 0.875])
        self.assertEqual(chat.retry_log, [(1, 0.4375), (2, 0.875)])
        self.assertEqual(chat.requests, 3)
        self.assertIn("重试 2 次后仍被限流（429）", errors.describe_api_error(caught.exception))

    def test_500_then_ok_is_invisible_to_the_caller(self):
        chat = self.make(self.serve(error(500), (200, {}, OK_BODY)))
        self.assertEqual(chat.complete([], [])["message"]["content"], "你好")
        self.assertEqual((chat.requests, self.sleeps), (2, [0.4375]))

    def test_retry_after_headers_are_waited_exactly(self):
        chat = self.make(self.serve(error(429, headers={"retry-after": "2"}),
                                    error(503, headers={"retry-after-ms": "250"}), (200, {}, OK_BODY)))
        chat.complete([], [])
        self.assertEqual(self.sleeps, [2.0, 0.25])

    def test_400_is_not_retried_unless_the_server_says_so(self):
        chat = self.make(self.serve(error(400, "bad field")))
        with self.assertRaises(errors.BadRequestError):
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)
        chat = self.make(self.serve(*[error(400, "busy", {"x-should-retry": "true"})] * 3))
        with self.assertRaises(errors.BadRequestError):
            chat.complete([], [])
        self.assertEqual((chat.requests, len(self.sleeps)), (3, 2))

    def test_x_should_retry_false_stops_a_503(self):
        chat = self.make(self.serve(error(503, headers={"x-should-retry": "false"})))
        with self.assertRaises(errors.OverloadedError):
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)

    def test_context_length_401_402_not_retried(self):
        cases = [((400, {}, CONTEXT_400), errors.ContextLengthError),
                 (error(401, "Authentication Fails"), errors.AuthenticationError),
                 (error(402, "Insufficient Balance"), errors.InsufficientBalanceError)]
        for response, cls in cases:
            with self.subTest(cls=cls.__name__):
                chat = self.make(self.serve(response))
                with self.assertRaises(cls):
                    chat.complete([], [])
                self.assertEqual(chat.requests, 1)

    def test_connection_refused_is_retried_then_raised(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        chat = self.make(f"http://127.0.0.1:{port}")
        with self.assertRaises(errors.APIConnectionError) as caught:
            chat.complete([], [])
        self.assertNotIsInstance(caught.exception, errors.APITimeoutError)
        self.assertEqual((chat.requests, len(self.sleeps)), (3, 2))

    def test_timeout(self):
        chat = self.make(self.serve(("hang", {}, None)), timeout=0.05, max_retries=0)
        with self.assertRaises(errors.APITimeoutError):
            chat.complete([], [])

    def test_loopback_never_goes_through_a_proxy(self):
        dead_proxy = "http://127.0.0.1:9"
        with mock.patch.dict(os.environ, {"http_proxy": dead_proxy, "HTTP_PROXY": dead_proxy,
                                          "no_proxy": "", "NO_PROXY": ""}):
            chat = self.make(self.serve((200, {}, OK_BODY)))
            self.assertEqual(chat.complete([], [])["message"]["content"], "你好")

    def test_keyboard_interrupt_is_neither_retried_nor_swallowed(self):
        chat = self.make(self.serve(), send=mock.Mock(side_effect=KeyboardInterrupt))
        with self.assertRaises(KeyboardInterrupt):
            chat.complete([], [])
        self.assertEqual((chat.requests, self.sleeps), (1, []))

    def test_a_reply_that_is_not_a_completion(self):
        chat = self.make(self.serve((200, {}, {"unexpected": True})))
        with self.assertRaises(errors.APIError) as caught:
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)
        self.assertIn("choices", caught.exception.message)

    def test_a_misshapen_message_is_an_api_error_not_a_crash(self):
        shapes = ("hi", None, {"role": "assistant", "tool_calls": {"id": "c1"}},
                  {"role": "assistant", "tool_calls": ["x"]},
                  {"role": "assistant", "tool_calls": [{"id": "c1", "function": "list_notes"}]},
                  {"role": "assistant", "content": [{"type": "image_url", "image_url": "x"}]})
        for message in shapes:
            with self.subTest(message=message):
                body = {"choices": [{"message": message, "finish_reason": "stop"}]}
                chat = self.make(self.serve((200, {}, body)))
                with self.assertRaises(errors.APIError) as caught:
                    chat.complete([], [])
                self.assertEqual((chat.requests, caught.exception.status), (1, 200))
                self.assertIn("格式不对", errors.describe_api_error(caught.exception))

    def test_a_200_is_never_retried_even_when_the_server_says_so(self):
        chat = self.make(self.serve((200, {"x-should-retry": "true"}, "not json"), (200, {}, OK_BODY)))
        with self.assertRaises(errors.APIError):
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)

    def test_a_gateway_html_page_is_not_pasted_into_the_message(self):
        chat = self.make(self.serve((404, {}, "<html><body>Not Found</body></html>")))
        with self.assertRaises(errors.APIStatusError) as caught:
            chat.complete([], [])
        message = errors.describe_api_error(caught.exception)
        self.assertNotIn("<html>", message)
        self.assertIn("DEEPSEEK_BASE_URL", message)


class FaultsOfRealServers(LoopbackCase):
    def test_the_deadline_bounds_the_whole_request_however_slowly_bytes_come(self):
        import time
        chat = self.make(self.serve(("trickle", {}, None), ("trickle", {}, None)), timeout=0.3, max_retries=1)
        started = time.monotonic()
        with self.assertRaises(errors.APITimeoutError) as caught:
            chat.complete([], [])
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, 2 * 0.3 + 0.4)  # a socket timeout alone would take about 12 s per attempt
        self.assertGreaterEqual(elapsed, 2 * 0.3 - 0.05)
        self.assertEqual(chat.requests, 2)
        self.assertIn("0.3 秒内没有收到完整回应", errors.describe_api_error(caught.exception))

    def test_a_cut_off_body_is_an_incomplete_response_retried_like_a_connection_error(self):
        chat = self.make(self.serve(("cut", {}, None), ("cut", {}, None), ("cut", {}, None)))
        with self.assertRaises(errors.IncompleteResponseError) as caught:
            chat.complete([], [])
        message = errors.describe_api_error(caught.exception)
        self.assertEqual(chat.requests, 3)
        self.assertIn("不完整", message)
        self.assertNotIn("连不上", message)
        self.assertNotIn("IncompleteRead", message)
        self.assertIn("IncompleteRead", caught.exception.detail)  # the raw detail stays for --json

    def test_a_wait_beyond_60_seconds_is_not_cut_short(self):
        for headers in ({"retry-after": "70"}, {"retry-after-ms": "61000"}):
            with self.subTest(headers=headers):
                chat = self.make(self.serve(error(429, headers=headers), (200, {}, OK_BODY)))
                with self.assertRaises(errors.RateLimitError) as caught:
                    chat.complete([], [])
                self.assertEqual((chat.requests, self.sleeps), (1, []))
                message = errors.describe_api_error(caught.exception)
                self.assertIn(f"等待 {float(caught.exception.asked_wait):.0f} 秒", message)
                self.assertNotIn("重试 ", message)

    def test_a_wait_the_server_asked_for_is_reported(self):
        seen = []
        chat = self.make(self.serve(error(429, headers={"retry-after": "2"}), error(500), (200, {}, OK_BODY)),
                         on_retry=lambda number, wait, asked, exc: seen.append((number, wait, asked, exc.status)))
        chat.complete([], [])
        self.assertEqual(seen, [(1, 2.0, 2.0, 429), (2, 0.875, None, 500)])

    def test_no_retry_is_claimed_when_none_was_made(self):
        chat = self.make(self.serve(error(503, headers={"x-should-retry": "false"})))
        with self.assertRaises(errors.OverloadedError) as caught:
            chat.complete([], [])
        self.assertNotIn("重试", errors.describe_api_error(caught.exception))
        chat = self.make(self.serve(error(503), error(503), error(503)))
        with self.assertRaises(errors.OverloadedError) as caught:
            chat.complete([], [])
        self.assertIn("已重试 2 次", errors.describe_api_error(caught.exception))

    def test_an_error_object_in_a_200_shows_the_servers_words_and_is_not_retried(self):
        body = {"error": {"message": "upstream overloaded", "type": "server_error"}}
        chat = self.make(self.serve((200, {"x-should-retry": "true"}, body), (200, {}, OK_BODY)))
        with self.assertRaises(errors.ServerReportedError) as caught:
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)
        self.assertIn("“upstream overloaded”", errors.describe_api_error(caught.exception))

    def test_connection_refused_is_said_in_chinese(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        chat = self.make(f"http://127.0.0.1:{port}", max_retries=0)
        with self.assertRaises(errors.APIConnectionError) as caught:
            chat.complete([], [])
        message = errors.describe_api_error(caught.exception)
        self.assertIn("连接被拒绝", message)
        self.assertNotIn("Errno", message)
        self.assertNotIn("ConnectionRefusedError", message)
        self.assertIn("ConnectionRefusedError", caught.exception.detail)

    def test_text_parts_are_joined_into_one_answer(self):
        parts = {"choices": [{"message": {"role": "assistant", "content": [{"type": "text", "text": "你"},
                                                                          {"type": "text", "text": "好"}]}}]}
        chat = self.make(self.serve((200, {}, parts)))
        self.assertEqual(chat.complete([], []), {"message": {"role": "assistant", "content": "你好"},
                                                 "finish_reason": "stop"})


class InterruptWhileWaiting(unittest.TestCase):
    def test_ctrl_c_while_waiting_to_retry_says_so(self):
        from assistant.agent import run_question
        from assistant.transport import Reply

        def limited(url, body, headers, attempt):
            return Reply(429, {"retry-after": "30"}, json.dumps({"error": {"message": "slow down"}}).encode())

        def interrupted_sleep(seconds):
            raise KeyboardInterrupt
        chat = client.ChatClient("http://127.0.0.1:9", "sk-test", send=limited, sleep=interrupted_sleep)
        outcome = run_question(chat, [], "问题")
        self.assertEqual((outcome.stop, chat.requests), ("interrupted", 1))
        self.assertIn("已中断：等待第 1 次重试（服务端要求等待 30 秒）时按下了 Ctrl-C", outcome.answer)
        self.assertNotIn("等待模型回应", outcome.answer)
        self.assertEqual(outcome.tokens.used, 0)  # an error reply and a wait use nothing


class TokenCharging(LoopbackCase):
    def test_a_usage_above_the_requests_bound_is_not_believed(self):
        budget = TokenBudget(10 ** 6)
        huge = {**OK_BODY, "usage": {"total_tokens": 10 ** 12}}
        chat = self.make(self.serve((200, {}, huge)))
        chat.complete([{"role": "user", "content": "问"}], [], budget)
        bound = int(self.server.received[0]["headers"]["content-length"]) + DEFAULT_MAX_TOKENS
        self.assertEqual(budget.record(), {"used": bound, "estimated": True, "budget": 10 ** 6})

    def test_a_2xx_that_cannot_be_read_counts_its_bound(self):
        budget = TokenBudget()
        chat = self.make(self.serve((200, {}, "<html>busy</html>")))
        with self.assertRaises(errors.ReplyError):
            chat.complete([{"role": "user", "content": "问"}], [], budget)
        bound = int(self.server.received[0]["headers"]["content-length"]) + DEFAULT_MAX_TOKENS
        self.assertEqual((budget.used, budget.estimated), (bound, True))

    def test_every_request_sends_max_tokens_and_is_charged_what_the_server_counted(self):
        budget = TokenBudget()
        chat = self.make(self.serve(error(429), (200, {}, OK_BODY)))
        chat.complete([{"role": "user", "content": "问"}], [], budget)
        self.assertEqual([r["body"]["max_tokens"] for r in self.server.received], [DEFAULT_MAX_TOKENS] * 2)
        self.assertEqual(budget.record(), {"used": 14, "estimated": False, "budget": None})  # the 429 counts 0

    def test_a_reply_without_usage_counts_its_upper_bound_as_an_estimate(self):
        budget = TokenBudget()
        chat = self.make(self.serve((200, {}, {"choices": OK_BODY["choices"]})))
        chat.complete([{"role": "user", "content": "问"}], [], budget)
        size = int(self.server.received[0]["headers"]["content-length"])
        self.assertEqual(budget.record(), {"used": size + DEFAULT_MAX_TOKENS, "estimated": True, "budget": None})

    def test_a_timeout_or_an_interrupt_after_connecting_counts_the_bound(self):
        budget = TokenBudget()
        chat = self.make(self.serve(("hang", {}, None)), timeout=0.2, max_retries=0, max_tokens=100)
        with self.assertRaises(errors.APITimeoutError):
            chat.complete([], [], budget)
        self.assertTrue(budget.estimated)
        self.assertGreater(budget.used, 100)

    def test_an_attempt_that_does_not_fit_is_never_sent(self):
        budget = TokenBudget(limit=500)
        chat = self.make(self.serve(), max_tokens=400)
        with self.assertRaises(BudgetExceeded) as caught:
            chat.complete([{"role": "user", "content": "问" * 40}], [], budget)
        self.assertEqual((chat.requests, self.server.received, budget.used), (0, [], 0))
        self.assertEqual(caught.exception.retries, 0)

    def test_retries_are_admitted_too(self):
        chat = self.make(self.serve(("hang", {}, None), (200, {}, OK_BODY)), timeout=0.2, max_tokens=100)
        bound = len(json.dumps(chat._payload([], []), ensure_ascii=False).encode("utf-8")) + 100
        budget = TokenBudget(limit=bound + bound // 2)  # room for one attempt, not for its retry
        with self.assertRaises(BudgetExceeded) as caught:
            chat.complete([], [], budget)
        self.assertEqual((chat.requests, caught.exception.retries, budget.used), (1, 1, bound))


class MakeModel(unittest.TestCase):
    def test_offline_demo_without_a_key(self):
        for env, offline in (({}, False), ({"DEEPSEEK_API_KEY": "  \n"}, False), ({"DEEPSEEK_API_KEY": "sk"}, True)):
            model = make_model(offline=offline, env=env)
            self.assertIsInstance(model, DemoModel)
            self.assertEqual((model.name, model.offline), ("offline-demo", True))

    def test_real_client_with_defaults_and_overrides(self):
        model = make_model(env={"DEEPSEEK_API_KEY": " sk-1 "})
        self.assertEqual((model.url, model.name, model.timeout, model.offline, model.api_key),
                         ("https://api.deepseek.com/chat/completions", "deepseek-chat", 60.0, False, "sk-1"))
        model = make_model(env={"DEEPSEEK_API_KEY": "sk", "DEEPSEEK_BASE_URL": "http://127.0.0.1:8000/v1/",
                                       "DEEPSEEK_MODEL": "deepseek-reasoner", "DEEPSEEK_TIMEOUT": "5"})
        self.assertEqual((model.url, model.name, model.timeout),
                         ("http://127.0.0.1:8000/v1/chat/completions", "deepseek-reasoner", 5.0))
        self.assertNotIn("sk", repr(model).replace("deepseek", ""))

    def test_bad_settings_name_the_variable(self):
        for env, name in (({"DEEPSEEK_TIMEOUT": "abc"}, "DEEPSEEK_TIMEOUT"),
                          ({"DEEPSEEK_TIMEOUT": "0"}, "DEEPSEEK_TIMEOUT"),
                          ({"DEEPSEEK_TIMEOUT": "nan"}, "DEEPSEEK_TIMEOUT"),
                          ({"DEEPSEEK_BASE_URL": "api.deepseek.com"}, "DEEPSEEK_BASE_URL"),
                          ({"DEEPSEEK_BASE_URL": "http://"}, "DEEPSEEK_BASE_URL"),
                          ({"DEEPSEEK_BASE_URL": "http://127.0.0.1:abc"}, "DEEPSEEK_BASE_URL"),
                          ({"DEEPSEEK_BASE_URL": "http://[::1"}, "DEEPSEEK_BASE_URL"),
                          ({"DEEPSEEK_API_KEY": "“sk-abc”"}, "DEEPSEEK_API_KEY"),
                          ({"DEEPSEEK_API_KEY": "sk-abc\nsk-def"}, "DEEPSEEK_API_KEY")):
            with self.subTest(env=env):
                with self.assertRaises(ValueError) as caught:
                    make_model(env={"DEEPSEEK_API_KEY": "sk", **env})
                self.assertIn(name, str(caught.exception))


if __name__ == "__main__":
    unittest.main()
