"""The model client against servers nobody here wrote: each class of fault, its retry rule and its Chinese
sentence, from raw HTTP bytes; and the TLS context, built once per process and only for https://.

LoopbackCase (a scripted server on 127.0.0.1, port 0; sleeps recorded) is tests/test_assistant_client.py's.
"""
import json
import sys
import unittest
from unittest import mock

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import client, errors, transport  # noqa: E402
from tests.test_assistant_client import LoopbackCase, OK_BODY


def http_bytes(body, head="HTTP/1.1 200 OK", **headers):
    """A raw HTTP response: HEAD line, the given headers (underscores become dashes), then BODY."""
    lines = [head, *(f"{name.replace('_', '-')}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class OtherServers(LoopbackCase):
    """Faults of servers nobody here wrote: each class of fault, its retry rule and its Chinese sentence."""

    OK_BYTES = json.dumps(OK_BODY).encode("utf-8")

    def test_a_response_trickling_past_the_deadline_is_a_timeout_not_what_arrived_so_far(self):
        slow_headers = http_bytes(b"", X_Padding="a" * 200)
        slow_page = http_bytes(b"<html>" + b"a" * 200, "HTTP/1.0 200 OK")  # no length: it ends when the socket does
        for how, whole in (("raw-trickle", slow_headers), ("raw-slow-body", slow_page)):
            with self.subTest(how=how):
                chat = self.make(self.serve((how, {}, whole), (how, {}, whole)), timeout=0.1, max_retries=1)
                with self.assertRaises(errors.APITimeoutError) as caught:
                    chat.complete([], [])
                self.assertEqual(chat.requests, 2)
                self.assertIn("0.1 秒内没有收到完整回应", errors.describe_api_error(caught.exception))

    def test_a_response_cut_inside_its_headers_or_body_is_incomplete_and_retried(self):
        for name, cut in (("headers", b"HTTP/1.1 200 OK\r\nContent-Ty"),
                          ("close-delimited JSON", http_bytes(self.OK_BYTES[:-15], "HTTP/1.0 200 OK")),
                          ("chunk", http_bytes(b"40\r\n" + self.OK_BYTES[:20], Transfer_Encoding="chunked"))):
            with self.subTest(cut=name):
                chat = self.make(self.serve(*[("raw", {}, cut)] * 3))
                with self.assertRaises(errors.IncompleteResponseError) as caught:
                    chat.complete([], [])
                self.assertEqual(chat.requests, 3)
                self.assertIn("回应不完整", errors.describe_api_error(caught.exception))

    def test_a_redirect_suggests_a_base_url_without_the_completions_path(self):
        for location, base in (("https://api.example.com/v1/chat/completions", "https://api.example.com/v1"),
                               ("/proxy/chat/completions/?x=1", "http://127.0.0.1:{port}/proxy")):
            with self.subTest(location=location):
                url = self.serve((308, {"Location": location}, {"error": {"message": "moved"}}))
                chat = self.make(url, max_retries=0)
                with self.assertRaises(errors.APIStatusError) as caught:
                    chat.complete([], [])
                message = errors.describe_api_error(caught.exception)
                port = url.rstrip("/").rsplit(":", 1)[1]
                self.assertIn(f"请把 DEEPSEEK_BASE_URL 改成 {base.format(port=port)}（", message)
                self.assertNotIn("completions）。", message.replace("程序会自己加上 /chat/completions）。", ""))

    def test_a_chunk_size_that_is_not_a_number_is_named_not_called_a_dropped_connection(self):
        body = b"zz\r\n" + self.OK_BYTES + b"\r\n0\r\n\r\n"
        chat = self.make(self.serve(*[("raw", {}, http_bytes(body, Transfer_Encoding="chunked"))] * 3))
        with self.assertRaises(errors.MalformedResponseError) as caught:
            chat.complete([], [])
        message = errors.describe_api_error(caught.exception)
        self.assertIn("分块大小应是十六进制数，收到的是“zz”", message)
        self.assertNotIn("断", message)
        self.assertEqual(chat.requests, 3)  # retried like a connection error, as the SDK does
        cut_between_chunks = b"%x\r\n" % len(self.OK_BYTES) + self.OK_BYTES + b"\r\n"  # the size line never came
        chat = self.make(self.serve(("raw", {}, http_bytes(cut_between_chunks, Transfer_Encoding="chunked"))),
                         max_retries=0)
        with self.assertRaises(errors.IncompleteResponseError):
            chat.complete([], [])

    def test_whole_answers_in_other_framings_are_read(self):
        import gzip
        for name, whole in (("close-delimited", http_bytes(self.OK_BYTES, "HTTP/1.0 200 OK")),
                            ("gzip", http_bytes(gzip.compress(self.OK_BYTES), Content_Encoding="gzip",
                                                Content_Length=len(gzip.compress(self.OK_BYTES)))),
                            ("text/plain", http_bytes(self.OK_BYTES, Content_Type="text/plain",
                                                      Content_Length=len(self.OK_BYTES)))):
            with self.subTest(framing=name):
                chat = self.make(self.serve(("raw", {}, whole)))
                self.assertEqual(chat.complete([], [])["message"]["content"], "你好")

    def test_a_2xx_that_is_not_json_says_what_it_looks_like_and_is_not_retried(self):
        stream = 'data: {"choices": [{"delta": {"content": "你"}}]}\n\ndata: [DONE]\n\n'
        for body, phrase in ((stream, "流式回应（SSE）"), ("<html><body>hi</body></html>", "HTML 页面"),
                             ("", "正文是空的"), ("Service OK", "开头是“Service OK”"),
                             ("Service OK " * 10, "开头是“" + ("Service OK " * 10)[:60] + "……”")):
            with self.subTest(phrase=phrase):
                chat = self.make(self.serve((200, {}, body)))
                with self.assertRaises(errors.ReplyError) as caught:
                    chat.complete([], [])
                self.assertEqual(chat.requests, 1)
                self.assertIn(phrase, errors.describe_api_error(caught.exception))
        import gzip
        bomb = gzip.compress(b" " * (17 * 1024 * 1024))  # 17 KB that inflate past the 16 MB cap
        for coding, body, phrase in (("br", b"\x0b\x02\x80", "Content-Encoding: br"),
                                     ("gzip", bomb, "解压后超过 16 MB")):
            with self.subTest(coding=coding):
                chat = self.make(self.serve(("raw", {}, http_bytes(body, Content_Encoding=coding,
                                                                   Content_Length=len(body)))))
                with self.assertRaises(errors.ReplyError) as caught:
                    chat.complete([], [])
                self.assertIn(phrase, errors.describe_api_error(caught.exception))

    def test_text_that_is_not_valid_unicode_is_sent_back_escaped_not_a_crash(self):
        chat = self.make(self.serve((200, {}, OK_BODY)))
        chat.complete([{"role": "user", "content": "问\ud800"}], [])  # e.g. a model's "\ud800" sent back
        self.assertEqual(self.server.received[0]["body"]["messages"][-1]["content"], "问\ud800")

    def test_the_servers_words_in_other_error_shapes(self):
        from assistant.transport import Reply
        for body, words in ((b'{"detail": "Model not found"}', "Model not found"),
                            (b'{"error": {"code": 42}}', '{"error": {"code": 42}}'),
                            (b"upstream connect error", "upstream connect error"), (b"null", "HTTP 404")):
            with self.subTest(body=body):
                self.assertEqual(client.error_message(Reply(404, {}, body)), words)

    def test_context_length_in_other_words_or_only_in_a_code(self):
        for body in ({"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum"}},
                     {"error": {"message": "Input is too long for requested model."}},
                     {"error": {"message": "the request exceeds the available context size"}},
                     {"error": {"message": "Invalid request", "code": "context_length_exceeded"}}):
            with self.subTest(body=body):
                chat = self.make(self.serve((400, {}, body)))
                with self.assertRaises(errors.ContextLengthError):
                    chat.complete([], [])
                self.assertEqual(chat.requests, 1)
        chat = self.make(self.serve((400, {}, {"error": {"message": "Invalid max_tokens value, [1, 8192]"}})))
        with self.assertRaises(errors.BadRequestError) as caught:
            chat.complete([], [])
        self.assertNotIsInstance(caught.exception, errors.ContextLengthError)


class OneTLSContext(LoopbackCase):
    """The TLS context is built once per process and only for https:// (Python 3.12+ urllib builds one per
    handler: 30-40 ms on every request, http:// ones included)."""

    def counted_contexts(self):
        built = []

        def create(*args, **kwargs):
            built.append(1)
            return real(*args, **kwargs)
        real = transport.ssl.create_default_context
        transport.tls_context.cache_clear()
        self.addCleanup(transport.tls_context.cache_clear)
        for name in ("create_default_context", "_create_default_https_context"):
            patcher = mock.patch.object(transport.ssl, name, create)
            patcher.start()
            self.addCleanup(patcher.stop)
        return built

    def test_an_http_request_builds_no_tls_context(self):
        built = self.counted_contexts()
        chat = self.make(self.serve((200, {}, OK_BODY), (200, {}, OK_BODY)))
        for _ in range(2):
            chat.complete([{"role": "user", "content": "问"}], [])
        self.assertEqual(built, [])

    def test_https_requests_share_one_context(self):
        built = self.counted_contexts()
        url = self.serve().replace("http://", "https://")  # a plain HTTP server: the TLS handshake fails
        chat = self.make(url, max_retries=1)
        with self.assertRaises(errors.APIConnectionError) as caught:
            chat.complete([{"role": "user", "content": "问"}], [])
        self.assertIn("TLS", caught.exception.message)
        self.assertEqual((chat.requests, built), (2, [1]))


if __name__ == "__main__":
    unittest.main()
