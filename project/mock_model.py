"""A local model server that fails on purpose: DeepSeek's OpenAI-compatible chat completions API.

It lets the notes assistant's stop guards be seen and checked without an account or money:
`check_loop_guards.py` and the tests start it; a person can start it by hand and point the app
at it (DEEPSEEK_API_KEY=test DEEPSEEK_BASE_URL=<printed URL> python3 project/app.py ask ...).

    python3 project/mock_model.py --mode MODE [--port 0] [--max-seconds 600] [--stop-when-stdin-closes]

prints its base URL as one line on stdout, then one line per request on stderr (number, mode and
session, x-stainless-retry-count, body size, gap since the session's previous request, status).
It stops by itself after --max-seconds, or on Ctrl-C (both a normal end: exit 0), and with
--stop-when-stdin-closes the moment its stdin reaches its end: a program that starts it holding the other end
of a pipe (loop_lab.py's model scenario) takes it along however that program ends, killed outright included.

URLs: one server serves every mode and every client run at once.
    base URL     http://127.0.0.1:PORT[/mode/MODE][/s/SESSION]
    POST {base}/chat/completions   a model request (counted); MODE defaults to --mode,
                                   SESSION to "-"; an optional /v1 before chat/ is accepted
    GET  {base}/stats              counters, not counted: {"total", "by_mode", "session": {...}}
    GET  /ping                     liveness, not counted
Modes whose answer depends on how many requests came before (429-after, 400-retry, 500-then-ok)
count per (MODE, SESSION): a client run that uses a SESSION of its own (any name of letters,
digits, "_" or "-") starts from the first request, whatever other runs did before.

Like the real API, and before any mode applies, a request is answered 400 when its JSON is broken,
when an assistant message's tool calls are not all followed by their tool results before the next
other message, when a tool message answers no pending call, when a message's content is not text,
when call ids repeat in one message, or when max_tokens, tools or stream are not what the API takes.
A body is read with Content-Length or chunked; too large is 413, shorter than promised 400, not sent
within READ_TIMEOUT 408; even a broken request line gets a JSON error object, never an HTML page.
This check is the mock's own: it must catch the client's mistakes, so it shares no code with the
client. A user message that
begins with 【循环提醒】 (the app's loop reminder) is not a new question: tool rounds are counted
past it, and the heed-reminder mode answers once it sees one. Every mode is listed in MODES (and
in --help and docs/assistant/DESIGN.md with what `ask --json` ends with).
"""
import workspace  # noqa: F401  first: the workspace's cli.py refuses a Python older than 3.11
import argparse
import contextlib
import errno
import hashlib
import json
import os
import re
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from mockapi.evidence import RequestLog, reply_view, results_view
from mockapi.requests import request_problem  # noqa: F401  (mock_model.request_problem, as the tests call it)
from mockapi.script import item_for, load_script

DEFAULT_MAX_SECONDS = 600.0
DEFAULT_RETRY_AFTER = 1.0
DEFAULT_SLOW_SECONDS = 5.0
DEFAULT_TRICKLE_SECONDS = 1.0
COMPLETION_TOKENS = 16
MAX_BODY_BYTES = 8 * 1024 * 1024
READ_TIMEOUT = 10.0  # a client that promised more body than it sends does not hold a thread forever
SESSION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
RATE_LIMITED = "Rate limit reached for requests"
ANSWER = "（mock）这是模拟模型的回答：RAG 先检索相关段落，再把段落交给模型生成回答。"
CONTEXT_LENGTH_MESSAGE = (
    "This model's maximum context length is 65536 tokens. However, you requested 70312 tokens "
    "(69288 in the messages, 1024 in the completion). Please reduce the length of the messages "
    "or completion.")
OVERLOADED_IN_200 = {"error": {"message": "upstream overloaded", "type": "server_error", "code": 200}}
HEEDED_ANSWER = "（mock）收到提醒，不再重复调用：笔记列表已经看过，这就是回答。"
REMINDER_PREFIX = "【循环提醒】"  # the app's loop reminder: part of the history, never a new question


# ---- what each mode answers -------------------------------------------------------------------

def _text(content, finish_reason="stop"):
    return 200, {}, {"message": {"role": "assistant", "content": content},
                     "finish_reason": finish_reason}


def _tool_calls(content, *calls):
    """A response asking for `calls` [(name, arguments dict)]; ids are filled in by the handler."""
    tool_calls = [{"id": None, "type": "function",
                   "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                  for name, args in calls]
    return 200, {}, {"message": {"role": "assistant", "content": content, "tool_calls": tool_calls},
                     "finish_reason": "tool_calls"}


def _error(status, message, kind, headers=None):
    return status, headers or {}, {"error": {"message": message, "type": kind, "param": None,
                                             "code": kind}}


def _truncated_tool_call():
    status, headers, choice = _tool_calls("", ("search_notes", {"query": "RAG"}))
    choice["message"]["tool_calls"][0]["function"]["arguments"] = '{"query": "RA'
    choice["finish_reason"] = "length"
    return status, headers, choice


def _delivered(reply, delivery=None, raw=None, usage=True):
    """A reply with how it is sent: `delivery` "trickle" / "cut-off", a `raw` body instead of a
    completion, or a completion without `usage`."""
    return (*reply, {"delivery": delivery, "raw": raw, "usage": usage})


def _failing(status, message, kind, times=None, headers=lambda server: {}):
    """A mode that answers this error (to the first `times` requests of a session, or always)."""
    def reply(n, round_no, asked):
        if times is not None and n > times:
            return _text(ANSWER)
        return _error(status, message, kind, headers(asked.server))
    return reply


def _scripted(item):
    """A script item's reply (mockapi/script.py says what an item may hold)."""
    if "status" in item:
        return _error(item["status"], item.get("error") or f"scripted failure {item['status']}", "script_error",
                      dict(item.get("headers") or {}))
    calls = [(call["name"], call.get("arguments", {})) for call in item.get("tool_calls") or []]
    status, headers, choice = _tool_calls(item.get("content", ""), *calls) if calls else _text(item.get("content", ""))
    choice["finish_reason"] = item.get("finish_reason") or choice["finish_reason"]
    return _delivered((status, headers, choice), usage=item.get("usage", True))


LIST_NOTES = ("list_notes", {})
READ_A01 = ("read_note", {"note_id": "A01"})
READ_MISSING = ("read_note", {"note_id": "Z99"})  # no such note: the tool call fails


def _search(query):
    return ("search_notes", {"query": query})


# mode -> (description, reply(n, round_no, asked)); n = the session's request number (1-based),
# round_no = the tool round this response opens within the current question (1-based), asked =
# Asked(server, reminded): reminded is True when a loop reminder came after the question.
# A reply is (status, headers, choice) or, through _delivered, (status, headers, choice, how).
MODES = {
    "plain": ("只回答文字，不调用工具", lambda n, r, s: _text(ANSWER)),
    "loop": ("每轮都是同一个调用 list_notes({})，参数不变",
             lambda n, r, s: _tool_calls("我再看一次笔记列表。", LIST_NOTES)),
    "fail": ("每轮都调用会失败的 read_note(Z99)",
             lambda n, r, s: _tool_calls("我读一下 Z99。", READ_MISSING)),
    "mixed": ("每轮一个失败调用 read_note(Z99) 加一个成功调用 search_notes（参数每轮不同）",
              lambda n, r, s: _tool_calls("两条路一起试。", READ_MISSING, _search(f"第 {r} 轮线索"))),
    "fail-mixed": ("两轮全部失败（read_note(Z99)）后一轮混合（同 mixed），如此往复",
                   lambda n, r, s: MODES["mixed" if r % 3 == 0 else "fail"][1](n, r, s)),
    "cycle": ("周期 2 的循环：list_notes({})、read_note(A01)、list_notes({}) ……参数不变",
              lambda n, r, s: _tool_calls("再确认一次。", LIST_NOTES if r % 2 else READ_A01)),
    "progress": ("每轮调用 search_notes，参数每轮不同，从不回答",
                 lambda n, r, s: _tool_calls("换个关键词再查。", _search(f"第 {r} 轮关键词"))),
    "429": ("总是 429 限流，不带 retry-after", _failing(429, RATE_LIMITED, "rate_limit_error")),
    "429-after": ("会话第 1 次请求回 429 并带 retry-after（--retry-after 秒），之后正常回答",
                  _failing(429, RATE_LIMITED, "rate_limit_error", times=1,
                           headers=lambda server: {"retry-after": f"{server.retry_after:g}"})),
    "503": ("总是 503 服务不可用", _failing(503, "Service Unavailable: server overloaded", "server_error")),
    "529": ("总是 529 过载", _failing(529, "Overloaded", "overloaded_error")),
    "400": ("总是 400 上下文超长（This model's maximum context length is ...）",
            _failing(400, CONTEXT_LENGTH_MESSAGE, "invalid_request_error")),
    "400-retry": ("会话第 1 次请求回 400 并带 x-should-retry: true，之后正常回答",
                  _failing(400, "Temporary upstream error, please retry", "invalid_request_error",
                           times=1, headers=lambda server: {"x-should-retry": "true"})),
    "401": ("总是 401 密钥无效",
            _failing(401, "Authentication Fails, Your api key is invalid", "authentication_error")),
    "402": ("总是 402 余额不足", _failing(402, "Insufficient Balance", "unknown_error")),
    "500-then-ok": ("会话前 2 次请求回 500，第 3 次起正常回答",
                    _failing(500, "Internal Server Error", "server_error", times=2)),
    "length": ("finish_reason 为 length，带一个只写了一半参数的调用",
               lambda n, r, s: _truncated_tool_call()),
    "refuse": ("finish_reason 为 content_filter（模型拒答）",
               lambda n, r, s: _text("", "content_filter")),
    "slow": ("先等 --slow-seconds 秒再正常回答",
             lambda n, r, s: _text(ANSWER)),
    "trickle": ("正常的回答，但整个回应（状态行、头和正文）每 --trickle-seconds 秒只发 1 个字节",
                lambda n, r, s: _delivered(_text(ANSWER), "trickle")),
    "cut-off": ("200 回应的正文只发一半就断开连接（Content-Length 写的是全长）",
                lambda n, r, s: _delivered(_text(ANSWER), "cut-off")),
    "429-long": ("总是 429，带 retry-after: 70（超过客户端自动等待的上限 60 秒）",
                 _failing(429, RATE_LIMITED, "rate_limit_error", headers=lambda server: {"retry-after": "70"})),
    "empty": ("200 回应，content 只有空白，也没有工具调用", lambda n, r, s: _text("  ")),
    "error-200": ("200 回应，但正文是错误对象 {\"error\": {\"message\": \"upstream overloaded\"}}",
                  lambda n, r, s: _delivered((200, {}, None), raw=OVERLOADED_IN_200)),
    "no-usage": ("正常回答，但回应里没有 usage（用量未知）", lambda n, r, s: _delivered(_text(ANSWER), usage=False)),
    "script": ("按 --script 文件的顺序回答或失败（会话的第 n 次请求取第 n 项，用完后重复最后一项）",
               lambda n, r, s: _scripted(item_for(s.server.script, n))),
    "heed-reminder": ("每轮都调用 list_notes({})，直到收到【循环提醒】才回答",
                      lambda n, r, s: _tool_calls("我再看一次笔记列表。", LIST_NOTES) if not s.reminded
                      else _text(HEEDED_ANSWER)),
}


@dataclass(frozen=True)
class Asked:
    """What a mode may look at besides the counters: the server (its settings) and the reminder."""

    server: object
    reminded: bool


def _reminded(messages):
    """True when a loop reminder follows the last question."""
    for message in reversed(messages):
        if _is_reminder(message):
            return True
        if message.get("role") == "user":
            return False
    return False


def _is_reminder(message):
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(REMINDER_PREFIX)


def _tool_round(messages):
    """1 + the assistant tool-call messages since the last user question (a reminder is not one)."""
    rounds = 0
    for message in reversed(messages):
        if message.get("role") == "user" and not _is_reminder(message):
            break
        if message.get("role") == "assistant" and message.get("tool_calls"):
            rounds += 1
    return rounds + 1


# ---- the server ---------------------------------------------------------------------------------

def parse_path(path):
    """(mode or None, session, rest) for /[mode/M/][s/S/][v1/]REST; session defaults to "-"."""
    parts = [part for part in path.split("?", 1)[0].split("/") if part]
    mode, session = None, "-"
    if len(parts) >= 2 and parts[0] == "mode":
        mode, parts = parts[1], parts[2:]
    if len(parts) >= 2 and parts[0] == "s":
        session, parts = parts[1], parts[2:]
    if parts[:1] == ["v1"]:
        parts = parts[1:]
    return mode, session, "/".join(parts)


class MockServer(ThreadingHTTPServer):
    """The mock on 127.0.0.1; `url`, `stats(mode, session)`, `stop()`. Counters live here."""

    daemon_threads = True

    def __init__(self, port=0, mode="plain", *, retry_after=DEFAULT_RETRY_AFTER,
                 slow_seconds=DEFAULT_SLOW_SECONDS, trickle_seconds=DEFAULT_TRICKLE_SECONDS, log=None, script=None,
                 request_log=None, clock=time.monotonic):
        super().__init__(("127.0.0.1", port), MockHandler)
        self.script = script  # script mode's items (mockapi/script.py), or None
        self.clock = clock  # the server's own clock (in-process, it may skip the client's waits: mockapi/clock.py)
        self.request_log = RequestLog(request_log, clock) if isinstance(request_log, (str, Path)) else request_log
        self.default_mode = mode
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.trickle_seconds = trickle_seconds
        self.log = log
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._total = 0
        self._by_mode = {}
        self._sessions = {}

    def count(self, mode, session, retry_count, body_size):
        """Record one model request; returns (request number, the session's count, gap or None)."""
        now = self.clock()
        with self._lock:
            self._total += 1
            self._by_mode[mode] = self._by_mode.get(mode, 0) + 1
            record = self._sessions.setdefault((mode, session), _new_session(mode, session))
            last = record.get("_last")
            gap = None if last is None else round(now - last, 3)
            record["_last"] = now
            record["requests"] += 1
            record["retry_counts"].append(retry_count)
            record["body_sizes"].append(body_size)
            record["gaps"].append(gap)
            return self._total, record["requests"], gap

    def note_max_tokens(self, mode, session, max_tokens):
        """Record the request's max_tokens (None when it sent none)."""
        with self._lock:
            self._sessions[(mode, session)]["max_tokens"].append(max_tokens)

    def finish(self, mode, session, status, rejected):
        with self._lock:
            record = self._sessions[(mode, session)]
            record["statuses"].append(status)
            record["rejected"] += rejected

    def stats(self, mode=None, session="-"):
        mode = mode or self.default_mode
        with self._lock:
            record = self._sessions.get((mode, session)) or _new_session(mode, session)
            session_view = {key: (list(value) if isinstance(value, list) else value)
                            for key, value in record.items() if not key.startswith("_")}
            return {"total": self._total, "by_mode": dict(self._by_mode), "session": session_view}

    def start(self):
        """Serve from a daemon thread (for in-process use); returns self."""
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self):
        self.stopping.set()
        self.shutdown()
        self.server_close()
        if self.request_log is not None:
            self.request_log.close()


def _new_session(mode, session):
    return {"mode": mode, "session": session, "requests": 0, "retry_counts": [], "body_sizes": [],
            "max_tokens": [], "gaps": [], "statuses": [], "rejected": 0}


class MockHandler(BaseHTTPRequestHandler):
    server_version = "MockModel/1"
    timeout = READ_TIMEOUT

    def log_message(self, format, *args):  # one line per request is written by do_POST instead
        pass

    def do_GET(self):
        if self.path.split("?", 1)[0] == "/ping":
            return self._send(200, {"ok": True, "modes": list(MODES)})
        mode, session, rest = parse_path(self.path)
        missing = (f"没有这个地址：GET {self.path}；可用 /ping 和 {{基础 URL}}/stats" if rest != "stats" else
                   self._unknown(mode or self.server.default_mode, session))
        if missing:
            return self._send(404, {"error": {"message": missing, "type": "not_found"}})
        self._send(200, self.server.stats(mode, session))

    def do_POST(self):
        mode, session, rest = parse_path(self.path)
        raw, refusal = self._read_body()
        missing = (f"没有这个地址：POST {self.path}" if rest != "chat/completions" else
                   self._unknown(mode or self.server.default_mode, session))
        if missing:  # not counted, but logged: a client that asked here holds an answer from this server
            self._evidence(None, mode, session, raw, 404)
            return self._send(404, {"error": {"message": missing, "type": "not_found"}})
        mode = mode or self.server.default_mode
        retry_count = self._retry_count()
        number, n, gap = self.server.count(mode, session, retry_count, len(raw))
        self._session = session
        if refusal:  # the body itself could not be taken: too large, cut short, not readable
            self.close_connection = True
            status, headers, payload, rejected, delivery = (*refusal, 1, None)
        else:
            status, headers, payload, rejected, delivery = self._reply(mode, n, raw, number)
        delay = self.server.slow_seconds if status == 200 and mode == "slow" else 0
        self._evidence(number, mode, session, raw, status, payload, delivery)
        if self.server.log:
            gap_text = "" if gap is None else f"，距上次 {gap:.2f} 秒"
            how = {"trickle": f"（每 {self.server.trickle_seconds:g} 秒发 1 个字节）", "cut-off": "（正文发一半就断开）",
                   None: f"（{delay:g} 秒后回答）" if delay else ""}[delivery]
            self.server.log(f"第 {number} 次请求（{mode}/{session} 第 {n} 次，retry-count="
                            f"{'-' if retry_count is None else retry_count}，body {len(raw)} bytes"
                            f"{gap_text}）-> {status}{how}")
        if delay and self.server.stopping.wait(delay):
            return None  # the server is stopping: no answer
        self.server.finish(mode, session, status, rejected)
        self._send(status, payload, headers, delivery)

    def _retry_count(self):
        header = self.headers.get("x-stainless-retry-count", "")
        return int(header) if header.isascii() and header.isdigit() else None

    def _evidence(self, number, mode, session, raw, status, payload=None, delivery=None):
        """The server's own line for this request (--log), before any byte of the reply is sent."""
        if self.server.request_log is None:
            return
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = None
        run = self.headers.get("x-question-run")
        self.server.request_log.write(
            number=number, mode=mode, session=session, run=run, retry_count=self._retry_count(),
            body_sha256=hashlib.sha256(raw).hexdigest(), body_bytes=len(raw), status=status, **reply_view(payload),
            tool_results=results_view(body), delivery=delivery)

    def _method_not_allowed(self):
        self._send(405, {"error": {"message": f"不支持 {self.command}：只有 POST {{基础 URL}}/chat/completions "
                                              "和 GET /ping、{基础 URL}/stats", "type": "invalid_request_error"}})

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _method_not_allowed

    def send_error(self, code, message=None, explain=None):
        """What http.server itself refuses (a bad request line, an unknown method, huge headers): a JSON error too."""
        self.close_connection = True
        reason = message or self.responses.get(code, ("HTTP error",))[0]
        self._send(code, {"error": {"message": reason, "type": "invalid_request_error"}})

    def _unknown(self, mode, session):
        """Why MODE / SESSION cannot be served (an unknown mode, a bad session name, script mode with no script), or
        None."""
        if mode not in MODES:
            return f"mock 没有模式 {mode!r}；可用：{'、'.join(MODES)}"
        if not SESSION_NAME.fullmatch(session) and session != "-":
            return f"会话名 {session!r} 无效：只能用字母、数字、_ 和 -，1-64 个字符"
        if mode == "script" and self.server.script is None:
            return "这个 mock 没有载入脚本：用 --mode script --script FILE 启动（FILE 的格式见 --help）"
        return None

    def _read_body(self):
        """(body, None), or (what was read, the error reply) when the body is too large, cut short or unreadable."""
        try:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                return self._read_chunks()
            declared = (self.headers.get("Content-Length") or "0").strip()
            if not declared.isdigit():
                return b"", _error(400, f"Invalid Content-Length: {declared!r}", "invalid_request_error")
            if int(declared) > MAX_BODY_BYTES:
                return b"", _error(413, f"Request body larger than {MAX_BODY_BYTES} bytes", "invalid_request_error")
            raw = self.rfile.read(int(declared))
        except OSError:  # the client stopped sending (READ_TIMEOUT) or went away
            return b"", _error(408, "Request body not received in time", "invalid_request_error")
        if len(raw) < int(declared):
            return raw, _error(400, "Request body shorter than its Content-Length", "invalid_request_error")
        return raw, None

    def _read_chunks(self):
        """A chunked request body (Transfer-Encoding: chunked), within MAX_BODY_BYTES."""
        chunks, size = [], 0
        while True:
            try:
                length = int(self.rfile.readline(1024).split(b";")[0].strip(), 16)
            except ValueError:
                return b"".join(chunks), _error(400, "Malformed chunked request body", "invalid_request_error")
            size += length
            if size > MAX_BODY_BYTES:
                return b"", _error(413, f"Request body larger than {MAX_BODY_BYTES} bytes", "invalid_request_error")
            if length == 0:
                while self.rfile.readline(1024).strip():
                    pass  # trailers
                return b"".join(chunks), None
            chunks.append(self.rfile.read(length))
            self.rfile.readline(8)  # the CRLF after the chunk

    def _reply(self, mode, n, raw, number):
        """(status, headers, JSON payload, rejected 0/1, delivery) for request `number` of this session."""
        if not self.headers.get("Authorization", "").removeprefix("Bearer ").strip():
            return (*_error(401, "Authentication Fails (no api key)", "authentication_error"), 0, None)
        try:
            body = json.loads(raw.decode("utf-8"))
            problem = request_problem(body)
        except ValueError:
            problem = "Request body is not valid JSON"
        if problem:
            return (*_error(400, problem, "invalid_request_error"), 1, None)
        self.server.note_max_tokens(mode, self._session, body.get("max_tokens"))
        status, headers, choice, *how = MODES[mode][1](n, _tool_round(body["messages"]),
                                                      Asked(self.server, _reminded(body["messages"])))
        how = how[0] if how else {"delivery": None, "raw": None, "usage": True}
        if status != 200:
            return status, headers, choice, 0, how["delivery"]
        if how["raw"] is not None:
            return status, headers, how["raw"], 0, how["delivery"]
        for index, call in enumerate(choice["message"].get("tool_calls", ()), 1):
            call["id"] = f"call_{number}_{index}"
        return status, headers, _completion(body, choice, number, len(raw), how["usage"]), 0, how["delivery"]

    def _send(self, status, payload, headers=None, delivery=None):
        """Answer PAYLOAD as JSON: whole, one byte at a time ("trickle"), or half and hang up ("cut-off")."""
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            if delivery == "trickle":
                return self._trickle(status, data, headers)
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if delivery == "cut-off":
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data[:len(data) // 2] if delivery == "cut-off" else data)
        except OSError:
            pass  # the client gave up (Ctrl-C, timeout) or stopped reading: nobody is left to answer
        return None

    def _trickle(self, status, data, headers):
        head = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}", "Content-Type: application/json",
                f"Content-Length: {len(data)}", "Connection: close",
                *(f"{name}: {value}" for name, value in (headers or {}).items())]
        self.close_connection = True
        whole = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data
        for index in range(len(whole)):
            if self.server.stopping.wait(self.server.trickle_seconds if index else 0):
                return  # the server is stopping
            self.wfile.write(whole[index:index + 1])
            self.wfile.flush()


def _completion(body, choice, number, body_size, usage=True):
    """A chat.completion; its usage (prompt: a quarter of the body's bytes, 16 generated) unless USAGE is False."""
    prompt_tokens = body_size // 4
    completion = {"id": f"chatcmpl-mock-{number}", "object": "chat.completion",
                  "created": int(time.time()), "model": body["model"],
                  "choices": [{"index": 0, "logprobs": None, **choice}]}
    if usage:
        completion["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": COMPLETION_TOKENS,
                               "total_tokens": prompt_tokens + COMPLETION_TOKENS}
    return completion


# ---- command line -------------------------------------------------------------------------------

class _ModesHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The mode table kept as laid out, and the usage line in Chinese like every other --help."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "用法：" if prefix is None else prefix)


def build_parser():
    from cli import ChineseArgumentParser
    modes = "\n".join(f"  {name:<12} {description}" for name, description in
                      ((name, spec[0]) for name, spec in MODES.items()))
    parser = ChineseArgumentParser(
        prog="mock_model.py", usage=(
            "[-h] [--mode MODE] [--port PORT] [--max-seconds MAX_SECONDS]",
            "[--retry-after RETRY_AFTER] [--slow-seconds SLOW_SECONDS]", "[--trickle-seconds TRICKLE_SECONDS]",
            "[--script FILE] [--log FILE] [--stop-when-stdin-closes]"),
        description="会故意出错的本地模型服务（OpenAI 兼容），只监听 127.0.0.1。",
        epilog=(f"模式：\n{modes}\n\n一个服务同时提供所有模式：基础 URL 写成 http://127.0.0.1:PORT/mode/MODE/s/SESSION"
                "\n（SESSION 由字母、数字、_、- 组成），每个会话从第 1 次请求算起；GET 基础URL/stats 查看计数，GET /ping 不计数。"
                "\n\n--script FILE：script 模式的脚本，一个 JSON 列表，每项是一次回答 {\"content\", \"tool_calls\": "
                "[{\"name\", \"arguments\": {...}}], \"finish_reason\", \"usage\": true|false}\n或一次失败 {\"status\": N, "
                "\"error\": \"说明\", \"headers\": {...}}；会话的第 n 次请求取第 n 项，用完后重复最后一项。"
                "\n--log FILE：服务端自己的记录，每收到一个请求追加一行 JSON（决定回应之后、发出第一个字节之前写下）。"
                "\n--stop-when-stdin-closes：stdin 读到结尾就停止（启动它的程序握着管道的另一端，那个程序怎样结束它都跟着结束）。"
                "\n\n退出码：0 到时自动停止，或按 Ctrl-C 停止；2 参数错误或端口不可用。"),
        formatter_class=_ModesHelpFormatter)
    parser.add_argument("--mode", default="plain", choices=list(MODES), metavar="MODE",
                        help="默认模式（也可以用 /mode/MODE 按请求选择），默认 plain")
    parser.add_argument("--port", type=int, default=0, help="端口，默认 0（自动选择）")
    parser.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS,
                        help=f"运行多少秒后自动停止，默认 {DEFAULT_MAX_SECONDS:g}")
    parser.add_argument("--retry-after", type=float, default=DEFAULT_RETRY_AFTER,
                        help=f"429-after 模式的 retry-after 秒数，默认 {DEFAULT_RETRY_AFTER:g}")
    parser.add_argument("--slow-seconds", type=float, default=DEFAULT_SLOW_SECONDS,
                        help=f"slow 模式回答前等待的秒数，默认 {DEFAULT_SLOW_SECONDS:g}")
    parser.add_argument("--trickle-seconds", type=float, default=DEFAULT_TRICKLE_SECONDS,
                        help=f"trickle 模式每发 1 个字节之间的秒数，默认 {DEFAULT_TRICKLE_SECONDS:g}")
    parser.add_argument("--script", metavar="FILE", help="script 模式按顺序给出的回答和失败（JSON 列表，格式见下）")
    parser.add_argument("--log", metavar="FILE", help="每收到一个请求，在 FILE 末尾追加一行 JSON（服务端自己的记录）")
    parser.add_argument("--stop-when-stdin-closes", action="store_true",
                        help="stdin 读到结尾（启动它的程序结束了）就停止")
    return parser


def stop_when_stdin_closes(server):
    """Stops SERVER once stdin reaches its end: the program that started this one holds the pipe's other end,
    which closes when that program ends in any way (killed outright included), so no mock outlives it.
    Returns the event set when that happened."""
    gone = threading.Event()

    def watch():
        with contextlib.suppress(OSError):  # a descriptor that cannot be read is a caller gone too
            data = b"."
            while data:
                data = os.read(0, 512)  # the raw descriptor: a buffered sys.stdin would block the interpreter's exit
        gone.set()
        server.stopping.set()
        server.shutdown()
    threading.Thread(target=watch, daemon=True).start()
    return gone


def main(argv=None):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the workspace's cli module
    from cli import EXIT_OK, EXIT_USAGE, install_termination_handlers, say, use_safe_console
    install_termination_handlers()
    use_safe_console()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"参数 --port 必须在 0 到 65535 之间（0 表示自动选择），收到 {args.port}")
    for name in ("max_seconds", "retry_after", "slow_seconds", "trickle_seconds"):
        if not 0 < getattr(args, name) <= 86400:
            parser.error(f"参数 --{name.replace('_', '-')} 必须是 0 到 86400 之间的秒数，收到 {getattr(args, name)}")
    if args.mode == "script" and not args.script:
        parser.error("--mode script 需要 --script FILE：按顺序给出的回答和失败（格式见 --help）")
    try:
        script = load_script(args.script) if args.script else None
        request_log = RequestLog(args.log) if args.log else None
    except ValueError as exc:
        parser.error(str(exc))
    except OSError as exc:
        parser.error(f"无法打开 --log 的文件 {args.log}（{exc.strerror or type(exc).__name__}）")
    try:
        server = MockServer(args.port, args.mode, retry_after=args.retry_after, slow_seconds=args.slow_seconds,
                            trickle_seconds=args.trickle_seconds, log=say, script=script, request_log=request_log)
    except OSError as exc:  # no errno text: a port in use is the usual case, and it says what to do
        in_use = exc.errno == errno.EADDRINUSE or getattr(exc, "winerror", None) == 10048  # 10048: Windows
        say(f"错误：端口 {args.port} 已被占用（可能另一个 serve / mock 还开着）：换一个 --port，或先关掉那个进程。"
            if in_use else f"错误：无法在 127.0.0.1:{args.port} 上监听（系统说明：{exc.strerror or type(exc).__name__}）。"
            "换一个端口，或用 --port 0。")
        return EXIT_USAGE
    print(server.url, flush=True)
    say(f"mock 模型已启动：{server.url}（默认模式 {args.mode}，{args.max_seconds:g} 秒后自动停止；"
        f"按请求选模式：{server.url}/mode/MODE）")
    timer = threading.Timer(args.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    caller_gone = stop_when_stdin_closes(server) if args.stop_when_stdin_closes else threading.Event()
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:  # the way a person stops a server: a normal end
        say("mock 已按要求停止。")
        return EXIT_OK
    finally:
        server.stopping.set()
        server.server_close()
        if request_log is not None:
            request_log.close()
    say("启动 mock 的程序已经结束，mock 随之停止。" if caller_gone.is_set() else
        f"已运行 {args.max_seconds:g} 秒，mock 自动停止。")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
