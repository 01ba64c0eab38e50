"""The real model: DeepSeek's OpenAI-compatible chat completions over urllib, with SDK retries.

The retry policy is the official SDKs' (openai / anthropic `_base_client`): at most
`max_retries` retries; before retry n (n = retries already made) wait
`min(0.5 * 2**n, 8) * (1 - 0.25 * random())`, unless `retry-after-ms` / `retry-after` gives
0 < delay <= 60 s; `x-should-retry` overrides the status rule. Sleep, randomness and the
clock are injected so tests never wait. The error classes mirror the SDK's, and
`describe_api_error` turns each into one Chinese sentence for the person at the terminal
(the model never sees these: the request did not reach it).
"""
import email.utils
import http.client
import ipaddress
import json
import os
import random as random_module
import time
import urllib.error
import urllib.parse
import urllib.request

DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-chat"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER = 60.0
SYSTEM_PROMPT = (
    "你是课程笔记助手，只依据笔记回答学员的问题。先用 search_notes 按问题中的关键短语搜索，"
    "再用 read_note 读取最相关的笔记；回答时逐字引用原文，并注明笔记编号和标题。"
    "笔记中没有相关内容时，直接回答“笔记中没有找到相关内容”，不要编造。"
)


class APIError(Exception):
    """Any failure of a model request; `status` is None when no HTTP response came back."""

    def __init__(self, message, status=None, headers=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.headers = dict(headers or {})
        self.retries = 0  # retries made before giving up (set by ChatClient.complete)


class APIConnectionError(APIError):
    """No response: refused, reset, DNS, TLS ..."""


class APITimeoutError(APIConnectionError):
    """No response within the timeout."""


class APIStatusError(APIError):
    """The server answered with an error status (`status`)."""


class BadRequestError(APIStatusError):
    """400: the request itself is wrong; sending it again gives the same answer."""


class ContextLengthError(BadRequestError):
    """400 whose message mentions the maximum context length: the conversation is too long."""


class AuthenticationError(APIStatusError):
    """401: the key is wrong."""


class InsufficientBalanceError(APIStatusError):
    """402: the account has no balance left."""


class RateLimitError(APIStatusError):
    """429: too many requests."""


class OverloadedError(APIStatusError):
    """503 / 529: the service is busy."""


class InternalServerError(APIStatusError):
    """Any other status >= 500."""


_STATUS_CLASSES = {400: BadRequestError, 401: AuthenticationError, 402: InsufficientBalanceError,
                   429: RateLimitError, 503: OverloadedError, 529: OverloadedError}


def status_error(status, message, headers=None) -> APIStatusError:
    """The most specific APIStatusError subclass for an HTTP error response."""
    cls = _STATUS_CLASSES.get(status) or (InternalServerError if status >= 500 else APIStatusError)
    lowered = message.casefold()
    if cls is BadRequestError and ("maximum context length" in lowered
                                   or "context_length_exceeded" in lowered):
        cls = ContextLengthError
    return cls(message, status, headers)


def _lower_keys(headers):
    return {str(key).lower(): str(value) for key, value in (headers or {}).items()}


def retry_delay(retries_made: int, headers: dict, random=random_module.random, *, now=time.time) -> float:
    """Seconds to wait before the next retry (SDK rule; a server hint within (0, 60] wins)."""
    hint = _retry_after(_lower_keys(headers), now)
    if hint is not None and 0 < hint <= MAX_RETRY_AFTER:
        return hint
    backoff = min(INITIAL_RETRY_DELAY * 2 ** retries_made, MAX_RETRY_DELAY)
    return max(backoff * (1 - 0.25 * random()), 0.0)


def _retry_after(headers, now):
    """The server's hint in seconds: retry-after-ms, else retry-after (seconds or HTTP date)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name, "").strip()
        try:
            return float(value) * scale
        except ValueError:
            pass
    moment = email.utils.parsedate_tz(headers.get("retry-after", ""))
    return None if moment is None else email.utils.mktime_tz(moment) - now()


def should_retry(status, headers: dict) -> bool:
    """x-should-retry true/false decides first; else connection/timeout (None), 408, 409, 429, >= 500."""
    verdict = _lower_keys(headers).get("x-should-retry", "").strip().lower()
    if verdict in ("true", "false"):
        return verdict == "true"
    return status is None or status in (408, 409, 429) or status >= 500


def is_loopback(host) -> bool:
    if (host or "").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ChatClient:
    """One model endpoint; `complete` sends the conversation and returns choices[0]."""

    offline = False

    def __init__(self, base_url, api_key, model=DEFAULT_MODEL, timeout=DEFAULT_TIMEOUT,
                 max_retries=DEFAULT_MAX_RETRIES, sleep=time.sleep, random=random_module.random,
                 now=time.time, *, system_prompt=SYSTEM_PROMPT):
        self.base_url = base_url
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.name = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.system_prompt = system_prompt
        self._sleep, self._random, self._now = sleep, random, now
        self.requests = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        self.retry_log = []
        host = urllib.parse.urlsplit(self.url).hostname
        handlers = [urllib.request.ProxyHandler({})] if is_loopback(host) else []
        self._opener = urllib.request.build_opener(*handlers)

    def __repr__(self):
        return f"ChatClient({self.url!r}, model={self.name!r})"  # never shows the key

    def complete(self, messages: list, tools: list) -> dict:
        """choices[0] as {"message", "finish_reason"}; the APIError subclass once retries are used up."""
        body = json.dumps(self._payload(messages, tools), ensure_ascii=False).encode("utf-8")
        retries = 0
        while True:
            try:
                return self._choice(self._post(body, retries))
            except APIError as exc:
                if retries >= self.max_retries or not should_retry(exc.status, exc.headers):
                    exc.retries = retries
                    raise
                delay = retry_delay(retries, exc.headers, self._random, now=self._now)
                retries += 1
                self.retry_log.append((retries, delay))
                self._sleep(delay)

    def _payload(self, messages, tools):
        if self.system_prompt and (not messages or messages[0].get("role") != "system"):
            messages = [{"role": "system", "content": self.system_prompt}, *messages]
        payload = {"model": self.name, "messages": messages, "stream": False}
        if tools:
            payload["tools"] = tools
        return payload

    def _post(self, body, retries):
        """One HTTP request; the decoded JSON body, or the matching APIError."""
        request = urllib.request.Request(self.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json",
            "Authorization": f"Bearer {self.api_key}", "x-stainless-retry-count": str(retries),
            "User-Agent": "lesson14-notes-assistant/1"})
        self.requests += 1
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
                headers = dict(response.headers.items())
        except urllib.error.HTTPError as exc:
            raise status_error(exc.code, _error_message(exc), _lower_keys(exc.headers)) from None
        except urllib.error.URLError as exc:
            raise _connection_error(exc.reason) from None
        except (OSError, ValueError, http.client.HTTPException) as exc:  # reset, read timeout, bad reply
            raise _connection_error(exc) from None
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError:
            # no headers passed on: a 200 is never retried, whatever x-should-retry says
            raise APIError(f"模型服务返回的不是 JSON（{len(raw)} 字节）", 200) from None

    def _choice(self, data):
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise APIError("模型服务的响应里没有 choices[0].message", 200) from None
        problem = _message_problem(message)
        if problem:
            raise APIError(f"模型服务的响应格式不对：{problem}", 200)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        for key in self.usage:
            if isinstance(usage.get(key), int):
                self.usage[key] += usage[key]
        return {"message": message, "finish_reason": choice.get("finish_reason") or "stop"}


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


def _error_message(exc):
    """The server's own explanation (OpenAI shape {"error": {"message"}}), or the reason phrase."""
    try:
        raw = exc.read().decode("utf-8", errors="replace")
    except (OSError, ValueError, http.client.HTTPException):  # a body cut off mid-way
        raw = ""
    if raw.lstrip()[:1] == "<":  # a gateway's HTML page says nothing a person needs here
        return f"HTTP {exc.code}（网关返回了 HTML 错误页）"
    try:
        data = json.loads(raw)
        error = data.get("error", data)
        message = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        message = raw
    return (str(message or exc.reason or "").strip() or f"HTTP {exc.code}")[:500]


def _connection_error(reason):
    if isinstance(reason, TimeoutError) or "timed out" in str(reason):
        return APITimeoutError(f"请求超时：{reason}")
    return APIConnectionError(f"{type(reason).__name__}: {reason}" if isinstance(reason, Exception)
                              else str(reason))


def describe_api_error(exc: APIError, chat: bool = False) -> str:
    """One Chinese sentence per failure class, for the person; most specific class first."""
    detail = (exc.message or "")[:200]
    if isinstance(exc, AuthenticationError):
        return "错误：API 密钥无效（401）。请检查环境变量 DEEPSEEK_API_KEY，或加 --offline 使用离线演示模型。"
    if isinstance(exc, InsufficientBalanceError):
        return "错误：DeepSeek 账户余额不足（402）。请充值后再试，或加 --offline 使用离线演示模型。"
    if isinstance(exc, RateLimitError):
        tries = f"重试 {exc.retries} 次后" if getattr(exc, "retries", 0) else "请求"
        return f"错误：{tries}仍被限流（429）。请等一会儿再试。"
    if isinstance(exc, OverloadedError):
        return f"错误：模型服务繁忙（{exc.status}），重试后仍未成功。请稍后再试。"
    if isinstance(exc, ContextLengthError):
        hint = "可以用 /reset 清空对话后重来。" if chat else "请把问题改短后再试。"
        return f"错误：对话超过了模型的最大上下文长度（400）。{hint}"
    if isinstance(exc, BadRequestError):
        return f"错误：请求被拒绝（400）：{detail}。请检查 DEEPSEEK_MODEL 等设置。"
    if isinstance(exc, APITimeoutError):
        return "错误：等待模型回应超时。请稍后再试，或调大环境变量 DEEPSEEK_TIMEOUT（秒）。"
    if isinstance(exc, APIConnectionError):
        return f"错误：连不上模型 API：{detail}。请检查网络和 DEEPSEEK_BASE_URL，或加 --offline。"
    if isinstance(exc, APIStatusError) and exc.status == 404:
        return (f"错误：模型 API 返回 404：{detail}。请检查 DEEPSEEK_BASE_URL（不要带 /chat/completions）"
                "和 DEEPSEEK_MODEL。")
    if isinstance(exc, APIStatusError) and 400 <= (exc.status or 0) < 500:
        return f"错误：请求被拒绝（{exc.status}）：{detail}。重试不会有用，请检查问题或设置。"
    if isinstance(exc, APIStatusError):
        return f"错误：模型 API 返回 {exc.status}：{detail}。请稍后再试。"
    return f"错误：模型 API 出错：{detail}。请稍后再试。"


def _base_url_problem(base_url):
    try:
        parts = urllib.parse.urlsplit(base_url)
        parts.port  # raises ValueError for a port that is not a number in range
    except ValueError as exc:
        return f"无法解析（{exc}）"
    if parts.scheme not in ("http", "https"):
        return "必须以 http:// 或 https:// 开头"
    if not parts.hostname:
        return "缺少主机名"
    return None


def make_model(offline: bool = False, env=os.environ):
    """ChatClient when DEEPSEEK_API_KEY is set (and not offline), else the offline demo model.

    Raises ValueError (Chinese message naming the variable) for an unusable
    DEEPSEEK_TIMEOUT or DEEPSEEK_BASE_URL.
    """
    key = (env.get("DEEPSEEK_API_KEY") or "").strip()
    if offline or not key:
        from .demo_model import DemoModel
        return DemoModel()
    if not (key.isascii() and key.isprintable()) or any(ch.isspace() for ch in key):
        raise ValueError("环境变量 DEEPSEEK_API_KEY 含有空白、中文引号或其他不能放进请求头的字符："
                         "请重新复制密钥（只含字母、数字和符号）。")
    base_url = (env.get("DEEPSEEK_BASE_URL") or "").strip() or DEFAULT_BASE_URL
    problem = _base_url_problem(base_url)
    if problem:
        raise ValueError(f"环境变量 DEEPSEEK_BASE_URL 的值 {base_url!r} 不能用：{problem}。"
                         f"默认是 {DEFAULT_BASE_URL}。")
    raw_timeout = (env.get("DEEPSEEK_TIMEOUT") or "").strip() or str(DEFAULT_TIMEOUT)
    try:
        timeout = float(raw_timeout)
    except ValueError:
        timeout = -1.0
    if not 0 < timeout <= 3600:
        raise ValueError(f"环境变量 DEEPSEEK_TIMEOUT 必须是 0 到 3600 之间的秒数，现在是 {raw_timeout!r}。")
    model = (env.get("DEEPSEEK_MODEL") or "").strip() or DEFAULT_MODEL
    return ChatClient(base_url, key, model=model, timeout=timeout)
