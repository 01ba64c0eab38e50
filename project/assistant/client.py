"""The real model: DeepSeek's OpenAI-compatible chat completions, one question's requests at a time.

`ChatClient.complete(messages, tools, budget)` sends the conversation and returns choices[0]
as {"message", "finish_reason"}. Around each attempt: the token budget admits it (`budget`),
`transport.post_json` sends it within the attempt's time, and on failure `retry.plan_retry` decides
whether and when to try again. One deadline bounds the whole question (`deadline`, DEEPSEEK_DEADLINE, started by
`start_question`): each attempt gets the smaller of `timeout` and the time left, and a wait before a retry that
would end past it stops at once (`errors.DeadlineReached`). While a reply or a wait is slow, `on_progress` is
called every `progress_every` seconds. Every request carries `max_tokens` and
`x-stainless-retry-count`. Sleep, randomness and the clocks are injected so tests never wait.
A Ctrl-C during a wait before a retry carries `waiting_to_retry` = (retry number, wait, server's
hint or None), so the stop message can say what was being waited for.
Each HTTP attempt can be watched (`on_attempt(kind, data)`, None by default: then nothing is hashed or
timed for it): "before" just before it is sent (data: retry, wait, start, limit, body_sha256, body_bytes;
an exception raised here, e.g. a caller's own budget of API calls, keeps it unsent and leaves `complete`),
"after" however it ended (the same dict, completed: end, connected, status, error, retry_after,
retry_after_ms, should_retry, received_at, usage, charged), and "gave_up" {why, wait, left} when no
further attempt is made. Offsets (`offset()`) count from the question's start, the deadline's. With
`run_id` set, every request carries `x-question-run: <run_id>`.
Shared with: `config` (defaults), `errors` (what is raised), `budget`, `retry`, `transport`.
"""
import contextlib
import hashlib
import json
import random as random_module
import threading
import time
import urllib.parse

from . import config, errors
from .budget import BudgetExceeded, TokenBudget
from .retry import lower_keys, plan_retry
from .transport import Attempt, post_json

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
PROGRESS_EVERY = 10.0  # seconds between two progress lines while a reply (or a wait before a retry) is slow


class ChatClient:
    """One model endpoint; `requests` counts every HTTP attempt, `usage` sums what servers reported."""

    offline = False

    def __init__(self, base_url, api_key, model=config.DEFAULT_MODEL, timeout=config.DEFAULT_TIMEOUT,
                 max_retries=config.DEFAULT_MAX_RETRIES, sleep=time.sleep, random=random_module.random,
                 now=time.time, *, system_prompt=config.SYSTEM_PROMPT, max_tokens=config.DEFAULT_MAX_TOKENS,
                 deadline=config.DEFAULT_DEADLINE, on_retry=None, on_progress=None, progress_every=PROGRESS_EVERY,
                 send=post_json, clock=time.monotonic):
        self.base_url = base_url
        self.url = base_url.rstrip("/") + errors.COMPLETIONS_PATH
        self.api_key = api_key
        self.name = model
        self.timeout = timeout
        self.deadline = deadline
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.system_prompt = system_prompt
        self.on_retry = on_retry  # called (retry number, wait, server's hint or None, the error)
        self.on_progress = on_progress  # called (what is awaited, seconds waited, seconds left of the question)
        self.progress_every = progress_every
        self._sleep, self._random, self._now, self._send, self._clock = sleep, random, now, send, clock
        self._ends = None
        self.requests = 0
        self.usage = dict.fromkeys(USAGE_KEYS, 0)
        self.retry_log = []
        self.on_attempt = None  # called (kind, data) around each HTTP attempt; see the module's docstring
        self.run_id = None  # the question record's id, sent as x-question-run

    def start_question(self):
        """Start a question's deadline: every attempt, wait and tool from now on counts (`run_question` calls it)."""
        self._ends = self._clock() + self.deadline

    def offset(self) -> float:
        """Seconds since the question started (0 before it has)."""
        return 0.0 if self._ends is None else self._clock() - (self._ends - self.deadline)

    def time_left(self) -> float:
        if self._ends is None:  # used without run_question: the question starts with its first request
            self.start_question()
        return self._ends - self._clock()

    def __repr__(self):
        return f"ChatClient({self.url!r}, model={self.name!r})"  # never shows the key

    def complete(self, messages: list, tools: list, budget: TokenBudget = None) -> dict:
        """choices[0]; the errors.APIError subclass once retries (or the question's time) are used up;
        BudgetExceeded unsent."""
        body = _encoded(self._payload(messages, tools))
        budget = budget if budget is not None else TokenBudget()
        bound = len(body) + self.max_tokens
        body_sha256 = hashlib.sha256(body).hexdigest() if self.on_attempt else None
        retries, last, wait = 0, None, 0.0
        while True:
            try:
                budget.admit(bound)
            except BudgetExceeded as exc:
                exc.retries = retries  # 0: this request was never sent at all
                raise
            left = self.time_left()
            if left <= 0:
                self._gave_up("deadline", None, left)
                raise errors.DeadlineReached(self.deadline, last)
            info = {"retry": retries, "wait": wait, "start": self.offset(), "limit": min(self.timeout, left),
                    "body_sha256": body_sha256, "body_bytes": len(body)}
            try:
                with self._progress("等待模型回应"):
                    return self._watched(body, retries, budget, bound, info)
            except errors.APIError as exc:
                last = exc
                exc.retries = retries
                received = info.get("received_at") or self._now()  # an HTTP date counts from the reply's arrival
                plan = plan_retry(retries, self.max_retries, exc.status, exc.headers, self._random, lambda: received)
                left = self.time_left()
                if isinstance(exc, errors.APITimeoutError) and left <= 0:
                    self._gave_up("deadline", None, left)
                    raise errors.DeadlineReached(self.deadline, exc) from None  # the deadline cut this attempt
                if plan.wait is None:
                    exc.asked_wait = plan.asked
                    self._gave_up("limit" if retries >= self.max_retries else
                                  "retry_after_cap" if plan.asked else "not_retryable", plan.asked, left)
                    raise
                if plan.wait >= left:  # waiting would end past the deadline: say so now instead
                    self._gave_up("deadline", plan.wait, left)
                    raise errors.DeadlineReached(self.deadline, exc, plan.wait, left) from None
                retries, wait = retries + 1, plan.wait
                self.retry_log.append((retries, plan.wait))
                if self.on_retry:
                    self.on_retry(retries, plan.wait, plan.asked, exc)
                try:
                    with self._progress(f"等待第 {retries} 次重试"):
                        self._sleep(plan.wait)
                except KeyboardInterrupt as interrupt:  # the person is told it was waiting to retry, not for a reply
                    interrupt.waiting_to_retry = (retries, plan.wait, plan.asked)
                    raise

    def _watched(self, body, retries, budget, bound, info):
        """One attempt (`_attempt`), told to `on_attempt` before it is sent and after it ends, however it ends."""
        if self.on_attempt is None:
            return self._attempt(body, retries, budget, bound, info)
        self.on_attempt("before", info)
        try:
            return self._attempt(body, retries, budget, bound, info)
        except BaseException as exc:  # a Ctrl-C in flight too: what happened to the request is unknown
            info["error"] = errors.error_kind(exc)
            info.update(_hints(getattr(exc, "headers", None)))
            raise
        finally:
            info["end"] = self.offset()
            self.on_attempt("after", info)

    def _gave_up(self, why, wait, left):
        if self.on_attempt is not None:
            self.on_attempt("gave_up", {"why": why, "wait": wait, "left": left})

    @contextlib.contextmanager
    def _progress(self, what):
        """While the body runs, on_progress(what, seconds waited, seconds left) every `progress_every` seconds."""
        if self.on_progress is None:
            yield
            return
        done, started = threading.Event(), self._clock()

        def tick():
            while not done.wait(self.progress_every):
                self.on_progress(what, self._clock() - started, self.time_left())
        threading.Thread(target=tick, daemon=True).start()
        try:
            yield
        finally:
            done.set()

    def _payload(self, messages, tools):
        if self.system_prompt and (not messages or messages[0].get("role") != "system"):
            messages = [{"role": "system", "content": self.system_prompt}, *messages]
        payload = {"model": self.name, "messages": messages, "stream": False, "max_tokens": self.max_tokens}
        if tools:
            payload["tools"] = tools
        return payload

    def _attempt(self, body, retries, budget, bound, info):
        """One HTTP request of at most info["limit"] seconds, charged to the budget (what it was charged goes into
        INFO, with its status and usage); the choice, or the matching APIError."""
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "Authorization": f"Bearer {self.api_key}", "x-stainless-retry-count": str(retries),
                   "User-Agent": "lesson14-notes-assistant/2"}
        if self.run_id:
            headers["x-question-run"] = self.run_id
        attempt = Attempt(info["limit"], self._clock)
        info.update(connected=False, status=None, error=None, received_at=None, usage=None,
                    charged={"tokens": 0, "estimated": False}, **_hints(None))
        self.requests += 1
        try:
            reply = self._send(self.url, body, headers, attempt)
        except (KeyboardInterrupt, errors.APIError):
            info["connected"] = attempt.connected
            if attempt.connected:  # the server may have worked on it: its use is unknown
                _charge(budget, info, bound, estimated=True)
            raise
        info.update(connected=True, status=reply.status, received_at=self._now())
        if not 200 <= reply.status < 300:  # an error reply generated nothing
            headers = dict(reply.headers)
            if headers.get("location"):  # a relative redirect target is said in full
                headers["location"] = urllib.parse.urljoin(self.url, headers["location"])
            raise errors.status_error(reply.status, error_message(reply), headers,
                                      reply.body.decode("utf-8", errors="replace"))
        try:
            data = _decode(reply)
        except errors.APIError:  # a 2xx may have been generated and billed: unknown use is not zero
            _charge(budget, info, bound, estimated=True)
            raise
        self._charge(data, budget, bound, info)
        return parse_choice(data)

    def _charge(self, data, budget, bound, info):
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        info["usage"] = usage or None
        for key in USAGE_KEYS:
            if _count(usage.get(key)) is not None:
                self.usage[key] += usage[key]
        total = _count(usage.get("total_tokens"))
        if total is None or total > bound:  # above the bound is not a count the server can have made
            _charge(budget, info, bound, estimated=True)
        else:
            _charge(budget, info, total)


def _charge(budget, info, tokens, estimated=False):
    """Charge TOKENS to the question's budget, and say so in the attempt's INFO."""
    budget.charge(tokens, estimated)
    info["charged"] = {"tokens": tokens, "estimated": estimated}


def _hints(headers) -> dict:
    """The retry hints a failed attempt's headers gave the client (None where absent), as the record keeps them."""
    headers = lower_keys(headers)
    return {"retry_after": headers.get("retry-after"), "retry_after_ms": headers.get("retry-after-ms"),
            "should_retry": headers.get("x-should-retry")}


def _encoded(payload) -> bytes:
    """The request body as UTF-8 JSON; text that is not valid Unicode (a lone surrogate a server sent
    as "\\ud800", or bytes a terminal could not decode) goes as JSON's own \\u escapes instead of crashing."""
    try:
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload).encode("ascii")


def _count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _decode(reply):
    """The JSON of a 2xx body; a body the closing connection cut short is an incomplete response."""
    try:
        return json.loads(reply.body.decode("utf-8-sig"))
    except json.JSONDecodeError as exc:
        # only the connection closing ended this body: JSON that breaks off was most likely cut there
        if reply.ended_by_close and exc.doc.lstrip()[:1] in ("{", "["):
            raise errors.IncompleteResponseError("回应正文在连接关闭时还没有结束", detail=f"JSONDecodeError: {exc}") from None
    except ValueError:  # UnicodeDecodeError
        pass
    # no headers passed on: a 2xx is never retried, whatever x-should-retry says
    raise errors.NotJSONError(f"正文不是 JSON：{_looks_like(reply)}", 200)


def _looks_like(reply):
    """What a body that is not JSON looks like, in a few Chinese words (with its first characters)."""
    text = reply.body.decode("utf-8", errors="replace").strip()
    if not text:
        return "正文是空的"
    if errors.is_html(text):
        title = errors.html_title(text)
        return f"是一个 HTML 页面（{len(reply.body)} 字节{f'，标题“{title}”' if title else ''}），不是模型服务的回应"
    if "event-stream" in reply.headers.get("content-type", "") or text.startswith(("data:", "event:")):
        return "服务端发来的是流式回应（SSE），而请求要的是一次性回应（stream: false）"
    preview = errors.shortened(text, 60)
    return f"{len(reply.body)} 字节，开头是“{preview}”"


def parse_choice(data) -> dict:
    """choices[0] as {"message", "finish_reason"}, or the ReplyError saying what is wrong."""
    if isinstance(data, dict) and "choices" not in data and data.get("error"):
        raise errors.ServerReportedError(_server_words(data["error"]), 200)
    if isinstance(data, dict) and data.get("choices") == []:
        raise errors.EmptyChoicesError("choices 是空列表", 200)
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise errors.ReplyError("响应里没有 choices[0].message", 200) from None
    message = _joined_text_parts(message)
    problem = _message_problem(message)
    if problem:
        raise errors.ReplyError(f"响应格式不对：{problem}", 200)
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    return {"message": message, "finish_reason": finish if isinstance(finish, str) and finish else "stop"}


def _joined_text_parts(message):
    """Some compatible servers send content as a list of {"type": "text", "text": ...} parts: one string."""
    parts = message.get("content") if isinstance(message, dict) else None
    if isinstance(parts, list) and parts and all(
            isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
            for part in parts):
        return {**message, "content": "".join(part["text"] for part in parts)}
    return message


def _message_problem(message):
    """Why an assistant message cannot be used as is (the loop then never guesses), or None."""
    if not isinstance(message, dict):
        return "choices[0].message 不是对象"
    if not isinstance(message.get("content"), (str, type(None))):
        return "message.content 不是字符串"
    calls = message.get("tool_calls")
    if calls is None:
        return None
    if not isinstance(calls, list) or not all(
            isinstance(call, dict) and isinstance(call.get("function"), dict) for call in calls):
        return "message.tool_calls 应为带 function 对象的调用列表"
    return None


def _server_words(error):
    """The message of an OpenAI-shaped error object ({"message": ...}), or the error itself as text."""
    if isinstance(error, dict):  # OpenAI's "message"; FastAPI-style servers say "detail", others "msg"
        error = next((error[key] for key in ("message", "detail", "msg") if error.get(key)), None)
    message = error
    if message is None:
        return ""
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    return message.strip()[:500]


def error_message(reply) -> str:
    """The server's own explanation of an error status, or the status when it gave none."""
    raw = reply.body.decode("utf-8", errors="replace")
    if errors.is_html(raw):  # a gateway's page, not the service's words: `errors.status_error` reads its title
        return ""
    try:
        data = json.loads(raw)
        message = _server_words(data.get("error", data) if isinstance(data, dict) else data)
    except ValueError:
        data, message = raw, ""
    if not message and data not in (None, {}, [], ""):  # no field we know: the body itself is the server's words
        message = " ".join(raw.split())[:500]
    return message or f"HTTP {reply.status}"
