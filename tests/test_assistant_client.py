"""The model client: SDK retry policy, error classes and messages, against a loopback server.

The server is a tiny in-test http.server on 127.0.0.1 (port 0) answering a scripted list of
responses; sleep and random are injected, so no test waits for a backoff.
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
from assistant import client  # noqa: E402
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
        self.assertEqual(client.retry_delay(0, {}, random=lambda: 0.0), 0.5)
        self.assertEqual(client.retry_delay(0, {}, random=lambda: 1.0), 0.375)
        self.assertEqual(client.retry_delay(1, {}, random=lambda: 0.5), 0.875)
        self.assertEqual(client.retry_delay(4, {}, random=lambda: 0.0), 8.0)
        self.assertEqual(client.retry_delay(9, {}, random=lambda: 0.0), 8.0)  # capped

    def test_server_hints(self):
        no_jitter = {"random": lambda: 0.0}
        self.assertEqual(client.retry_delay(0, {"retry-after-ms": "1500"}, **no_jitter), 1.5)
        self.assertEqual(client.retry_delay(0, {"Retry-After": "3"}, **no_jitter), 3.0)
        self.assertEqual(client.retry_delay(0, {"retry-after-ms": "250", "retry-after": "9"}, **no_jitter), 0.25)
        self.assertEqual(client.retry_delay(1, {"retry-after": "60"}, **no_jitter), 60.0)
        # outside (0, 60] or unreadable: the formula again
        for headers in ({"retry-after": "0"}, {"retry-after": "61"}, {"retry-after": "-2"},
                        {"retry-after-ms": "60001"}, {"retry-after": "soon"}):
            with self.subTest(headers=headers):
                self.assertEqual(client.retry_delay(1, headers, **no_jitter), 1.0)

    def test_retry_after_as_http_date(self):
        date = {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}
        self.assertEqual(client.retry_delay(0, date, random=lambda: 0.0, now=lambda: 1445412480 - 5), 5.0)
        # a date in the past falls back to the formula
        self.assertEqual(client.retry_delay(0, date, random=lambda: 0.0, now=lambda: 1445412480 + 5), 0.5)

    def test_should_retry(self):
        for status in (None, 408, 409, 429, 500, 502, 503, 529):
            self.assertTrue(client.should_retry(status, {}), status)
        for status in (400, 401, 402, 403, 404, 422):
            self.assertFalse(client.should_retry(status, {}), status)
        self.assertTrue(client.should_retry(400, {"X-Should-Retry": "true"}))
        self.assertFalse(client.should_retry(503, {"x-should-retry": "false"}))
        self.assertTrue(client.should_retry(503, {"x-should-retry": "maybe"}))


class ErrorClasses(unittest.TestCase):
    def test_status_to_class(self):
        cases = [(400, "bad", client.BadRequestError), (400, CONTEXT_400["error"]["message"], client.ContextLengthError),
                 (401, "", client.AuthenticationError), (402, "", client.InsufficientBalanceError),
                 (429, "", client.RateLimitError), (503, "", client.OverloadedError),
                 (529, "", client.OverloadedError), (500, "", client.InternalServerError),
                 (502, "", client.InternalServerError), (404, "", client.APIStatusError)]
        for status, message, cls in cases:
            with self.subTest(status=status):
                exc = client.status_error(status, message, {})
                self.assertIs(type(exc), cls)
                self.assertEqual(exc.status, status)
        self.assertTrue(issubclass(client.ContextLengthError, client.BadRequestError))
        self.assertTrue(issubclass(client.APITimeoutError, client.APIConnectionError))

    def test_one_message_per_class_most_specific_first(self):
        expected = [
            (client.status_error(401, "x"), "API 密钥无效（401）"),
            (client.status_error(402, "x"), "余额不足（402）"),
            (client.status_error(429, "x"), "仍被限流（429）"),
            (client.status_error(503, "x"), "繁忙（503）"),
            (client.status_error(529, "x"), "繁忙（529）"),
            (client.status_error(400, CONTEXT_400["error"]["message"]), "最大上下文长度"),
            (client.status_error(400, "unknown field"), "请求被拒绝（400）：unknown field"),
            (client.APITimeoutError("timed out"), "超时"),
            (client.APIConnectionError("refused"), "连不上模型 API：refused"),
            (client.status_error(500, "boom"), "返回 500：boom"),
        ]
        messages = [client.describe_api_error(exc) for exc, _ in expected]
        for message, (_, phrase) in zip(messages, expected):
            self.assertTrue(message.startswith("错误："), message)
            self.assertIn(phrase, message)
        self.assertEqual(len(set(messages)), len(messages))

    def test_reset_hint_only_in_chat(self):
        exc = client.status_error(400, CONTEXT_400["error"]["message"])
        self.assertIn("/reset", client.describe_api_error(exc, chat=True))
        self.assertNotIn("/reset", client.describe_api_error(exc))


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
        # a str is sent as it is (a broken or HTML body); anything else as JSON
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode("utf-8")
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class ChatClientAgainstLoopback(unittest.TestCase):
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
        with self.assertRaises(client.RateLimitError) as caught:
            chat.complete([{"role": "user", "content": "问"}], [])
        self.assertEqual([r["headers"]["x-stainless-retry-count"] for r in self.server.received], ["0", "1", "2"])
        self.assertEqual(self.sleeps, [0.4375, 0.875])
        self.assertEqual(chat.retry_log, [(1, 0.4375), (2, 0.875)])
        self.assertEqual(chat.requests, 3)
        self.assertIn("重试 2 次后仍被限流（429）", client.describe_api_error(caught.exception))

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
        with self.assertRaises(client.BadRequestError):
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)
        chat = self.make(self.serve(*[error(400, "busy", {"x-should-retry": "true"})] * 3))
        with self.assertRaises(client.BadRequestError):
            chat.complete([], [])
        self.assertEqual((chat.requests, len(self.sleeps)), (3, 2))

    def test_x_should_retry_false_stops_a_503(self):
        chat = self.make(self.serve(error(503, headers={"x-should-retry": "false"})))
        with self.assertRaises(client.OverloadedError):
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)

    def test_context_length_401_402_not_retried(self):
        cases = [((400, {}, CONTEXT_400), client.ContextLengthError),
                 (error(401, "Authentication Fails"), client.AuthenticationError),
                 (error(402, "Insufficient Balance"), client.InsufficientBalanceError)]
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
        with self.assertRaises(client.APIConnectionError) as caught:
            chat.complete([], [])
        self.assertNotIsInstance(caught.exception, client.APITimeoutError)
        self.assertEqual((chat.requests, len(self.sleeps)), (3, 2))

    def test_timeout(self):
        chat = self.make(self.serve(("hang", {}, None)), timeout=0.05, max_retries=0)
        with self.assertRaises(client.APITimeoutError):
            chat.complete([], [])

    def test_loopback_never_goes_through_a_proxy(self):
        dead_proxy = "http://127.0.0.1:9"
        with mock.patch.dict(os.environ, {"http_proxy": dead_proxy, "HTTP_PROXY": dead_proxy,
                                          "no_proxy": "", "NO_PROXY": ""}):
            chat = self.make(self.serve((200, {}, OK_BODY)))
            self.assertEqual(chat.complete([], [])["message"]["content"], "你好")

    def test_keyboard_interrupt_is_neither_retried_nor_swallowed(self):
        chat = self.make(self.serve())
        with mock.patch.object(chat._opener, "open", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                chat.complete([], [])
        self.assertEqual((chat.requests, self.sleeps), (1, []))

    def test_a_reply_that_is_not_a_completion(self):
        chat = self.make(self.serve((200, {}, {"unexpected": True})))
        with self.assertRaises(client.APIError) as caught:
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)
        self.assertIn("choices", caught.exception.message)

    def test_a_misshapen_message_is_an_api_error_not_a_crash(self):
        shapes = ("hi", None, {"role": "assistant", "tool_calls": {"id": "c1"}},
                  {"role": "assistant", "tool_calls": ["x"]},
                  {"role": "assistant", "tool_calls": [{"id": "c1", "function": "list_notes"}]},
                  {"role": "assistant", "content": [{"type": "text", "text": "hi"}]})
        for message in shapes:
            with self.subTest(message=message):
                body = {"choices": [{"message": message, "finish_reason": "stop"}]}
                chat = self.make(self.serve((200, {}, body)))
                with self.assertRaises(client.APIError) as caught:
                    chat.complete([], [])
                self.assertEqual((chat.requests, caught.exception.status), (1, 200))
                self.assertIn("格式不对", client.describe_api_error(caught.exception))

    def test_a_200_is_never_retried_even_when_the_server_says_so(self):
        chat = self.make(self.serve((200, {"x-should-retry": "true"}, "not json"), (200, {}, OK_BODY)))
        with self.assertRaises(client.APIError):
            chat.complete([], [])
        self.assertEqual(chat.requests, 1)

    def test_a_gateway_html_page_is_not_pasted_into_the_message(self):
        chat = self.make(self.serve((404, {}, "<html><body>Not Found</body></html>")))
        with self.assertRaises(client.APIStatusError) as caught:
            chat.complete([], [])
        message = client.describe_api_error(caught.exception)
        self.assertNotIn("<html>", message)
        self.assertIn("DEEPSEEK_BASE_URL", message)


class MakeModel(unittest.TestCase):
    def test_offline_demo_without_a_key(self):
        for env, offline in (({}, False), ({"DEEPSEEK_API_KEY": "  \n"}, False), ({"DEEPSEEK_API_KEY": "sk"}, True)):
            model = client.make_model(offline=offline, env=env)
            self.assertIsInstance(model, DemoModel)
            self.assertEqual((model.name, model.offline), ("offline-demo", True))

    def test_real_client_with_defaults_and_overrides(self):
        model = client.make_model(env={"DEEPSEEK_API_KEY": " sk-1 "})
        self.assertEqual((model.url, model.name, model.timeout, model.offline, model.api_key),
                         ("https://api.deepseek.com/chat/completions", "deepseek-chat", 60.0, False, "sk-1"))
        model = client.make_model(env={"DEEPSEEK_API_KEY": "sk", "DEEPSEEK_BASE_URL": "http://127.0.0.1:8000/v1/",
                                       "DEEPSEEK_MODEL": "deepseek-reasoner", "DEEPSEEK_TIMEOUT": "5"})
        self.assertEqual((model.url, model.name, model.timeout),
                         ("http://127.0.0.1:8000/v1/chat/completions", "deepseek-reasoner", 5.0))
        self.assertNotIn("sk", repr(model).replace("deepseek", ""))

    def test_bad_settings_name_the_variable(self):
        for env, name in (({"DEEPSEEK_TIMEOUT": "abc"}, "DEEPSEEK_TIMEOUT"), ({"DEEPSEEK_TIMEOUT": "0"}, "DEEPSEEK_TIMEOUT"),
                          ({"DEEPSEEK_BASE_URL": "api.deepseek.com"}, "DEEPSEEK_BASE_URL"),
                          ({"DEEPSEEK_BASE_URL": "http://"}, "DEEPSEEK_BASE_URL"),
                          ({"DEEPSEEK_BASE_URL": "http://127.0.0.1:abc"}, "DEEPSEEK_BASE_URL"),
                          ({"DEEPSEEK_BASE_URL": "http://[::1"}, "DEEPSEEK_BASE_URL"),
                          ({"DEEPSEEK_API_KEY": "“sk-abc”"}, "DEEPSEEK_API_KEY"),
                          ({"DEEPSEEK_API_KEY": "sk-abc\nsk-def"}, "DEEPSEEK_API_KEY")):
            with self.subTest(env=env):
                with self.assertRaises(ValueError) as caught:
                    client.make_model(env={"DEEPSEEK_API_KEY": "sk", **env})
                self.assertIn(name, str(caught.exception))


if __name__ == "__main__":
    unittest.main()
