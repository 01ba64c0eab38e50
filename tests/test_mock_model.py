"""The failing mock model: its own history validation, per-request modes, sessions, counters, CLI."""
import hashlib
import http.client
import json
import shutil
import socket
import tempfile
import threading
import time
import subprocess
import sys
import unittest
from pathlib import Path
import urllib.error
import urllib.request

from tests.support import _FAST_TEMP, ROOT, WorkspaceTestCase

sys.path.insert(0, str(ROOT / "project"))
import mock_model  # noqa: E402

USER = {"role": "user", "content": "RAG 的步骤顺序是什么？"}


def call(call_id, name="list_notes", arguments="{}"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def asked(*ids):
    return {"role": "assistant", "content": "", "tool_calls": [call(i) for i in ids]}


def answered(call_id):
    return {"role": "tool", "tool_call_id": call_id, "content": "[]"}


class RequestProblemTest(unittest.TestCase):
    """The API's rule, checked without a server: every call answered before any other message."""

    def problem(self, *messages):
        return mock_model.request_problem({"model": "deepseek-chat", "messages": list(messages)})

    def test_complete_history_is_accepted(self):
        self.assertIsNone(self.problem(USER, asked("a", "b"), answered("b"), answered("a"),
                                       {"role": "assistant", "content": "好"}, USER))

    def test_unanswered_call_is_rejected_at_the_end_and_in_the_middle(self):
        self.assertIn("tool_call_id", self.problem(USER, asked("a")))
        self.assertIn("tool_call_id", self.problem(USER, asked("a", "b"), answered("a"), USER))

    def test_tool_message_without_its_call_is_rejected(self):
        self.assertIn("role 'tool'", self.problem(USER, answered("x")))
        self.assertIn("role 'tool'", self.problem(USER, asked("a"), answered("a"), answered("a")))

    def test_broken_bodies_are_rejected(self):
        self.assertIn("model", mock_model.request_problem({"messages": [USER]}))
        self.assertIn("messages", mock_model.request_problem({"model": "m", "messages": []}))
        self.assertIn("JSON object", mock_model.request_problem([USER]))
        self.assertIn("id", self.problem(USER, {"role": "assistant", "tool_calls": [{"type": "function"}]}))

    def test_what_else_the_real_api_rejects(self):
        def problem(**body):
            return mock_model.request_problem({"model": "m", "messages": [USER], **body})
        for bad in ({"max_tokens": "abc"}, {"max_tokens": 0}, {"max_tokens": 8193}, {"max_tokens": True}):
            with self.subTest(body=bad):
                self.assertIn("max_tokens", problem(**bad))
        self.assertIsNone(problem(max_tokens=2048))
        self.assertIn("tools", problem(tools="list_notes"))
        self.assertIn("stream", problem(stream=True))
        for content in (5, None, []):
            with self.subTest(content=content):
                self.assertIn("content", self.problem({"role": "user", "content": content}))
        self.assertIsNone(self.problem({"role": "user", "content": [{"type": "text", "text": "RAG"}]}))
        self.assertIsNone(self.problem(USER, {"role": "assistant", "content": None, "tool_calls": [call("a")]},
                                       answered("a")))
        self.assertIn("duplicate", self.problem(USER, {"role": "assistant", "content": "",
                                                       "tool_calls": [call("a"), call("a")]}, answered("a")))


class MockServerTest(unittest.TestCase):
    def setUp(self):
        self.mock = mock_model.MockServer(0, "plain", retry_after=2, slow_seconds=0.01).start()
        self.addCleanup(self.mock.stop)

    def post(self, path, messages, retry_count="0", auth="Bearer test"):
        """(status, headers, JSON body) of one chat completions request."""
        body = json.dumps({"model": "deepseek-chat", "messages": messages}).encode("utf-8")
        headers = {"Content-Type": "application/json", "x-stainless-retry-count": retry_count}
        if auth:
            headers["Authorization"] = auth
        request = urllib.request.Request(self.mock.url + path, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, dict(response.headers), json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), json.loads(error.read())

    def get(self, path):
        with urllib.request.urlopen(self.mock.url + path, timeout=5) as response:
            return json.loads(response.read())

    def test_ping_and_stats_are_not_counted(self):
        self.assertTrue(self.get("/ping")["ok"])
        self.post("/chat/completions", [USER])
        self.get("/ping")
        stats = self.get("/stats")
        self.assertEqual(stats["total"], 1)
        self.assertEqual(stats["by_mode"], {"plain": 1})
        self.assertEqual(stats["session"]["requests"], 1)

    def test_plain_answer_has_the_openai_shape(self):
        status, _, body = self.post("/v1/chat/completions", [USER])
        self.assertEqual(status, 200)
        self.assertEqual(body["choices"][0]["finish_reason"], "stop")
        self.assertEqual(body["choices"][0]["message"]["role"], "assistant")
        self.assertIn("RAG", body["choices"][0]["message"]["content"])

    def test_history_without_results_gets_400_and_is_counted_as_rejected(self):
        status, _, body = self.post("/mode/loop/s/v1/chat/completions", [USER, asked("a")])
        self.assertEqual(status, 400)
        self.assertIn("must be followed by tool messages", body["error"]["message"])
        status, _, body = self.post("/mode/loop/s/v1/chat/completions", [USER, answered("a")])
        self.assertEqual(status, 400)
        session = self.get("/mode/loop/s/v1/stats")["session"]
        self.assertEqual((session["requests"], session["rejected"], session["statuses"]), (2, 2, [400, 400]))

    def test_mode_per_request_and_session_counting(self):
        statuses = [self.post("/mode/500-then-ok/s/one/chat/completions", [USER])[0] for _ in range(3)]
        self.assertEqual(statuses, [500, 500, 200])
        self.assertEqual(self.post("/mode/500-then-ok/s/two/chat/completions", [USER])[0], 500)
        self.assertEqual(self.get("/mode/500-then-ok/s/one/stats")["session"]["requests"], 3)
        self.assertEqual(self.get("/stats")["by_mode"], {"500-then-ok": 4})

    def test_retry_headers_and_retry_count_are_recorded(self):
        status, headers, _ = self.post("/mode/429-after/s/a/chat/completions", [USER])
        self.assertEqual((status, headers.get("retry-after")), (429, "2"))
        self.assertEqual(self.post("/mode/429-after/s/a/chat/completions", [USER], "1")[0], 200)
        status, headers, _ = self.post("/mode/400-retry/s/a/chat/completions", [USER])
        self.assertEqual((status, headers.get("x-should-retry")), (400, "true"))
        session = self.get("/mode/429-after/s/a/stats")["session"]
        self.assertEqual(session["retry_counts"], [0, 1])
        self.assertIsNone(session["gaps"][0])
        self.assertGreaterEqual(session["gaps"][1], 0)

    def test_failure_modes_answer_like_the_real_api(self):
        expected = {"429": 429, "503": 503, "529": 529, "401": 401, "402": 402, "400": 400}
        for mode, status in expected.items():
            with self.subTest(mode=mode):
                seen, _, body = self.post(f"/mode/{mode}/chat/completions", [USER])
                self.assertEqual(seen, status)
                self.assertTrue(body["error"]["message"])
        self.assertIn("maximum context length", self.post("/mode/400/chat/completions", [USER])[2]["error"]["message"])
        self.assertEqual(self.post("/chat/completions", [USER], auth=None)[0], 401)

    def test_tool_modes_follow_the_question_round_by_round(self):
        history = [USER]
        for expected in ("list_notes", "read_note", "list_notes"):
            message = self.post("/mode/cycle/s/c/chat/completions", history)[2]["choices"][0]["message"]
            self.assertEqual(message["tool_calls"][0]["function"]["name"], expected)
            history += [message, answered(message["tool_calls"][0]["id"])]
        ids = [m["tool_calls"][0]["id"] for m in history if m.get("tool_calls")]
        self.assertEqual(len(set(ids)), 3)
        first = self.post("/mode/progress/chat/completions", [USER])[2]["choices"][0]["message"]
        second = self.post("/mode/progress/chat/completions", [USER, first, answered(first["tool_calls"][0]["id"])])
        arguments = [m["tool_calls"][0]["function"]["arguments"]
                     for m in (first, second[2]["choices"][0]["message"])]
        self.assertNotEqual(arguments[0], arguments[1])

    def test_mixed_and_length_modes(self):
        mixed = self.post("/mode/mixed/chat/completions", [USER])[2]["choices"][0]["message"]
        self.assertEqual([c["function"]["name"] for c in mixed["tool_calls"]], ["read_note", "search_notes"])
        choice = self.post("/mode/length/chat/completions", [USER])[2]["choices"][0]
        self.assertEqual(choice["finish_reason"], "length")
        with self.assertRaises(ValueError):
            json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"])

    def test_new_fault_modes(self):
        status, headers, _ = self.post("/mode/429-long/chat/completions", [USER])
        self.assertEqual((status, headers.get("retry-after")), (429, "70"))
        empty = self.post("/mode/empty/chat/completions", [USER])[2]["choices"][0]["message"]
        self.assertEqual((empty["content"].strip(), empty.get("tool_calls")), ("", None))
        status, _, body = self.post("/mode/error-200/chat/completions", [USER])
        self.assertEqual((status, body["error"]["message"], "choices" in body), (200, "upstream overloaded", False))
        status, _, body = self.post("/mode/no-usage/chat/completions", [USER])
        self.assertEqual((status, "usage" in body, "usage" in self.post("/chat/completions", [USER])[2]),
                         (200, False, True))

    def test_cut_off_and_trickling_bodies(self):
        request = urllib.request.Request(self.mock.url + "/mode/cut-off/chat/completions",
                                         data=json.dumps({"model": "m", "messages": [USER]}).encode("utf-8"),
                                         headers={"Authorization": "Bearer t", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as response:
            with self.assertRaises(http.client.IncompleteRead):
                response.read()
        self.mock.trickle_seconds = 0.002
        trickling = urllib.request.Request(self.mock.url + "/mode/trickle/chat/completions", data=request.data,
                                           headers=request.headers)
        started = time.monotonic()
        with urllib.request.urlopen(trickling, timeout=5) as response:
            body = json.loads(response.read())
        self.assertEqual(body["choices"][0]["message"]["content"], mock_model.ANSWER)
        self.assertGreater(time.monotonic() - started, 0.002 * 200)  # a few hundred bytes, one at a time

    def test_a_loop_reminder_is_not_a_new_question(self):
        first = self.post("/mode/heed-reminder/chat/completions", [USER])[2]["choices"][0]["message"]
        self.assertEqual(first["tool_calls"][0]["function"]["name"], "list_notes")
        history = [USER, first, answered(first["tool_calls"][0]["id"]),
                   {"role": "user", "content": "【循环提醒】最近 2 轮在重复 list_notes({})。"}]
        heeded = self.post("/mode/heed-reminder/chat/completions", history)[2]["choices"][0]["message"]
        self.assertEqual(heeded["content"], mock_model.HEEDED_ANSWER)
        cycle = self.post("/mode/cycle/chat/completions", history)[2]["choices"][0]["message"]
        self.assertEqual(cycle["tool_calls"][0]["function"]["name"], "read_note")  # round 2, not round 1 again
        session = self.get("/mode/heed-reminder/stats")["session"]
        self.assertEqual(session["max_tokens"], [None, None])  # recorded as sent (none here)

    def test_unknown_mode_or_path_is_404_and_not_counted(self):
        status, _, body = self.post("/mode/nonsense/chat/completions", [USER])
        self.assertEqual(status, 404)
        self.assertIn("nonsense", body["error"]["message"])
        self.assertEqual(self.post("/elsewhere", [USER])[0], 404)
        self.assertEqual(self.get("/stats")["total"], 0)

    def test_other_methods_get_a_json_405(self):
        for method in ("PUT", "DELETE", "PATCH"):
            with self.subTest(method=method):
                request = urllib.request.Request(self.mock.url + "/chat/completions", data=b"{}", method=method)
                with self.assertRaises(urllib.error.HTTPError) as caught:
                    urllib.request.urlopen(request, timeout=5)
                self.assertEqual(caught.exception.code, 405)
                self.assertEqual(json.loads(caught.exception.read())["error"]["type"], "invalid_request_error")
        self.assertEqual(self.get("/stats")["total"], 0)


class ServerLogAndScriptTest(unittest.TestCase):
    """--log: the server's own line per request, on disk before the reply; --script: replies served in order."""

    def setUp(self):
        self.folder = Path(tempfile.mkdtemp(dir=_FAST_TEMP))
        self.addCleanup(shutil.rmtree, self.folder, True)
        self.log = self.folder / "server-log.jsonl"
        script = [{"tool_calls": [{"name": "list_notes", "arguments": {}}]},
                  {"status": 429, "error": "slow", "headers": {"retry-after": "0.5"}}, {"content": "好", "usage": False}]
        self.mock = mock_model.MockServer(0, "plain", slow_seconds=0.3, script=script, request_log=self.log).start()
        self.addCleanup(self.mock.stop)

    def post(self, path, messages, **headers):
        body = json.dumps({"model": "deepseek-chat", "messages": messages}).encode("utf-8")
        request = urllib.request.Request(self.mock.url + path, data=body, headers={
            "Content-Type": "application/json", "Authorization": "Bearer t", **headers})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, json.loads(response.read()), body
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read()), body

    def lines(self):
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def test_a_slow_reply_is_logged_before_its_wait(self):
        answer = []
        thread = threading.Thread(target=lambda: answer.append(self.post("/mode/slow/s/a/chat/completions", [USER],
                                                                         **{"x-question-run": "r1"})))
        thread.start()
        deadline = time.monotonic() + 5
        while not self.log.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(answer, [])  # the line is there, the reply is still on its way
        thread.join()
        line, = self.lines()
        status, payload, body = answer[0]
        self.assertEqual((line["number"], line["mode"], line["session"], line["run"], line["retry_count"]),
                         (1, "slow", "a", "r1", None))
        self.assertEqual((line["body_sha256"], line["status"]), (hashlib.sha256(body).hexdigest(), status))
        self.assertEqual(line["finish_reason"], payload["choices"][0]["finish_reason"])

    def test_the_script_is_served_in_order_and_its_last_item_repeats(self):
        first = self.post("/mode/script/s/b/chat/completions", [USER], **{"x-stainless-retry-count": "0"})[1]
        call = first["choices"][0]["message"]["tool_calls"][0]
        history = [USER, first["choices"][0]["message"], {"role": "tool", "tool_call_id": call["id"],
                                                          "content": "错误：没有这篇笔记"}]
        seen = [self.post("/mode/script/s/b/chat/completions", history)[:2] for _ in range(3)]
        self.assertEqual([status for status, _ in seen], [429, 200, 200])
        self.assertEqual([body["choices"][0]["message"]["content"] for _, body in seen[1:]], ["好", "好"])
        self.assertNotIn("usage", seen[1][1])
        self.assertEqual(self.post("/mode/script/s/other/chat/completions", [USER])[0], 200)  # its own first item
        lines = self.lines()
        self.assertEqual([line["status"] for line in lines], [200, 429, 200, 200, 200])
        self.assertEqual(lines[0]["tool_calls"], [{"id": call["id"], "name": "list_notes", "arguments": "{}"}])
        self.assertEqual(lines[1]["tool_results"], [{"call_id": call["id"], "error": True, "content_sha256":
                                                     hashlib.sha256("错误：没有这篇笔记".encode()).hexdigest()}])

    def test_a_request_to_nowhere_is_logged_but_not_counted(self):
        self.assertEqual(self.post("/mode/nonsense/chat/completions", [USER], **{"x-question-run": "r2"})[0], 404)
        line, = self.lines()
        self.assertEqual((line["number"], line["status"], line["run"]), (None, 404, "r2"))
        self.assertEqual(self.mock.stats()["total"], 0)

    def test_scripts_that_cannot_be_served_are_named(self):
        from mockapi.script import script_problem
        for script, words in (([], "列表"), ([{"status": 200}], "400 到 599"), ([{"content": 1}], "content"),
                              ([{"tool_calls": [{"name": "x", "arguments": []}]}], "tool_calls"),
                              ([{"contnet": "x"}], "contnet"), ([{}, {"status": 500, "headers": {"a": 1}}], "第 2 项")):
            with self.subTest(script=script):
                self.assertIn(words, script_problem(script))
        self.assertIsNone(script_problem([{}, {"status": 503, "error": "busy", "headers": {"retry-after": "1"}}]))

    def test_script_mode_needs_a_script_and_a_bad_one_is_exit_2(self):
        bad = self.folder / "bad.json"
        bad.write_text('[{"status": 200}]', encoding="utf-8")
        for args, words in ((["--mode", "script"], "--script"), (["--mode", "script", "--script", str(bad)], "第 1 项")):
            with self.subTest(args=args):
                proc = subprocess.run([sys.executable, str(ROOT / "project" / "mock_model.py"), *args],
                                      capture_output=True, text=True, encoding="utf-8", timeout=30)
                self.assertEqual((proc.returncode, proc.stdout), (2, ""))
                self.assertIn(words, proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)


class MockAsAnotherClientSeesIt(unittest.TestCase):
    """Raw HTTP a client nobody here wrote may send: every answer is an HTTP response with a JSON error object."""

    def setUp(self):
        self.mock = mock_model.MockServer(0, "plain").start()
        self.addCleanup(self.mock.stop)

    def send(self, head, body=b"", close_write=False):
        """(status, JSON body) of the raw request HEAD (lines without the blank line) + BODY."""
        import socket
        with socket.create_connection(("127.0.0.1", self.mock.server_address[1]), timeout=5) as sock:
            sock.sendall(head.encode("latin-1") + b"\r\n\r\n" + body)
            if close_write:
                sock.shutdown(socket.SHUT_WR)  # the client sent less than it promised, and stops
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        status_line, _, rest = answer.partition(b"\r\n")
        status = int(status_line.split()[1]) if status_line.startswith(b"HTTP/") else None
        return status, json.loads(rest.partition(b"\r\n\r\n")[2] if status else answer)

    def post(self, body, **headers):
        fields = {"Host": "127.0.0.1", "Authorization": "Bearer t", "Content-Type": "application/json", **headers}
        lines = ["POST /chat/completions HTTP/1.1", *(f"{key.replace('_', '-')}: {value}"
                                                      for key, value in fields.items())]
        return lines, body

    def test_bodies_the_server_cannot_take_get_an_error_object_and_are_counted(self):
        whole = json.dumps({"model": "m", "messages": [USER]}).encode("utf-8")
        cases = [(self.post(b"", Content_Length="9" * 9), 413, "larger"),
                 (self.post(whole, Content_Length="abc"), 400, "Content-Length"),
                 (self.post(whole[:10], Content_Length=len(whole)), 400, "shorter")]
        for (lines, body), status, words in cases:
            with self.subTest(words=words):
                answer = self.send("\r\n".join(lines), body, close_write=True)
                self.assertEqual(answer[0], status)
                self.assertIn(words, answer[1]["error"]["message"])
        session = self.mock.stats()["session"]
        self.assertEqual((session["requests"], session["rejected"]), (3, 3))

    def test_a_chunked_body_is_read_like_the_real_api(self):
        whole = json.dumps({"model": "m", "messages": [USER]}).encode("utf-8")
        lines, body = self.post(b"%x\r\n%s\r\n0\r\n\r\n" % (len(whole), whole), Transfer_Encoding="chunked")
        status, answer = self.send("\r\n".join(lines), body)
        self.assertEqual(status, 200)
        self.assertIn("RAG", answer["choices"][0]["message"]["content"])

    def test_broken_http_and_other_methods_get_json_not_an_html_page(self):
        for head, status in (("HELLO", None), ("HEAD /chat/completions HTTP/1.1\r\nHost: x", 405),
                             ("OPTIONS /chat/completions HTTP/1.1\r\nHost: x", 405)):
            with self.subTest(head=head):
                answer = self.send(head)
                self.assertEqual(answer[0], status)
                self.assertIn("message", answer[1]["error"])
        self.assertEqual(self.mock.stats()["total"], 0)


class MockCommandTest(WorkspaceTestCase):
    def test_prints_url_logs_each_request_and_stops_by_itself(self):
        process = subprocess.Popen(
            [sys.executable, str(self.root / "project" / "mock_model.py"), "--mode", "429",
             "--port", "0", "--max-seconds", "0.6"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.addCleanup(lambda: process.poll() is None and process.kill())
        url = process.stdout.readline().strip()
        self.assertRegex(url, r"^http://127\.0\.0\.1:\d+$")
        request = urllib.request.Request(url + "/chat/completions", headers={
            "Authorization": "Bearer test", "x-stainless-retry-count": "0"},
            data=json.dumps({"model": "m", "messages": [USER]}).encode("utf-8"))
        with self.assertRaises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=5)
        self.assertEqual(raised.exception.code, 429)
        stdout, stderr = process.communicate(timeout=10)
        self.assertEqual(process.returncode, 0)
        self.assertEqual(stdout, "")
        self.assertIn("第 1 次请求", stderr)
        self.assertIn("retry-count=0", stderr)
        self.assertIn("-> 429", stderr)
        self.assertNoTraceback(stderr)

    def test_a_port_in_use_is_named_without_errno_text(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            code, stdout, stderr = self.run_cli("project/mock_model.py", "--port", port)
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn(f"端口 {port} 已被占用（可能另一个 serve / mock 还开着）：换一个 --port，或先关掉那个进程。", stderr)
        self.assertNotIn("Errno", stderr)
        self.assertNoTraceback(stderr)

    def test_bad_mode_is_refused_in_chinese(self):
        code, stdout, stderr = self.run_cli("project/mock_model.py", "--mode", "nope")
        self.assertEqual(code, 2)
        self.assertIn("--mode", stderr)
        self.assertIn("参数错误", stderr)
        self.assertNoTraceback(stderr)


if __name__ == "__main__":
    unittest.main()
