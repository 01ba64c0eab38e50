"""What can go wrong with a model request, as exception classes, and one Chinese sentence for each.

The classes mirror the official SDK's (openai `_exceptions`) so the retry rule can be stated
on them; `describe_api_error` turns each into the sentence the person at the terminal reads
(the model never sees these: the request did not reach it). Shared with: `transport` (raises
the network classes), `client` (raises the status and reply classes), `agent` (turns them
into the stop reasons `api_error` / `context_full`). A server's own words or an exception's
raw text only ever appear inside a Chinese sentence that says what happened; the raw text is
kept in `detail` for the machine-readable line. `failure_kind` names a failure for the retry
line on stderr (app), `shortened` cuts any quoted text for a sentence (client, app), `error_kind` names it
for a question record (client).
"""

import urllib.parse

MAX_DETAIL = 200
COMPLETIONS_PATH = "/chat/completions"  # what the client appends to DEEPSEEK_BASE_URL


class APIError(Exception):
    """Any failure of a model request; `status` is None when no HTTP response came back.

    `message` is the server's explanation or a Chinese description; `detail` the raw text
    (exception class and text, or the server's message) for `--json`'s error field;
    `retries` the retries made before giving up; `asked_wait` the seconds a server asked to
    wait when that was longer than the client waits by itself.
    """

    def __init__(self, message, status=None, headers=None, detail=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.headers = dict(headers or {})
        self.detail = detail if detail is not None else message
        self.retries = 0
        self.asked_wait = None


class APIConnectionError(APIError):
    """No usable response: refused, reset, DNS, TLS ... (`message` says which, in Chinese)."""


class APITimeoutError(APIConnectionError):
    """No complete response within the deadline (`seconds`)."""

    def __init__(self, message, seconds=None, detail=None):
        super().__init__(message, detail=detail)
        self.seconds = seconds


class IncompleteResponseError(APIConnectionError):
    """The server answered but the response broke off (cut-off body, closed before the reply).

    Retried like a connection error; described as an incomplete response, not a failure to connect.
    """


class MalformedResponseError(APIConnectionError):
    """The server's bytes are not valid HTTP framing (a chunk size that is not a hexadecimal number).

    Retried like a connection error (a proxy in between may have garbled it); described as what it is,
    not as a dropped connection.
    """


class DeadlineReached(APIError):
    """The question's whole deadline (DEEPSEEK_DEADLINE) is used up, or the next wait before a retry would pass it.

    `seconds` is the deadline; `last` the failure before it (or None); `wait` the wait that did not fit (or None).
    Never retried: there is no time left to retry in.
    """

    def __init__(self, seconds, last=None, wait=None, left=0.0):
        super().__init__(f"整个问题的期限 {seconds:g} 秒已用完", detail=f"deadline of {seconds:g} s reached"
                         + (f" after {last.detail}" if last is not None else ""))
        self.seconds, self.last, self.wait, self.left = seconds, last, wait, left
        self.retries = last.retries if last is not None else 0


class APIStatusError(APIError):
    """The server answered with an error status (`status`); `page_title` is the <title> of an HTML error page
    (a gateway's or a proxy's, not the model service's words), or None when the body is not HTML."""

    page_title = None


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


class ReplyError(APIError):
    """A 2xx response that cannot be used: not JSON, not a completion, an error object, misshapen."""


class ServerReportedError(ReplyError):
    """A 2xx response carrying {"error": {...}} instead of a completion; `message` is the server's."""


class EmptyChoicesError(ReplyError):
    """A completion whose `choices` is an empty list: no answer at all (often a content filter's shape)."""


class NotJSONError(ReplyError):
    """A complete 2xx body that is not JSON: not retried, since the request may have been generated and billed."""


class EmptyReplyError(ReplyError):
    """A completion with no text (none or only whitespace) and no tool calls: not an answer."""


# A failed attempt's kind as a question record names it (one word each, most specific class first).
ERROR_KINDS = ((APITimeoutError, "timeout"), (IncompleteResponseError, "incomplete"),
               (MalformedResponseError, "incomplete"), (APIConnectionError, "connection"),
               (ContextLengthError, "context_length"), (APIStatusError, "status"),
               (ServerReportedError, "error_object"), (NotJSONError, "not_json"),
               (EmptyChoicesError, "empty_choices"), (ReplyError, "bad_reply"))


def error_kind(exc) -> str:
    """The record's word for what ended an attempt: ERROR_KINDS, or "unknown" (a Ctrl-C in flight, a defect)."""
    return next((kind for cls, kind in ERROR_KINDS if isinstance(exc, cls)), "unknown")


_STATUS_CLASSES = {400: BadRequestError, 401: AuthenticationError, 402: InsufficientBalanceError,
                   429: RateLimitError, 503: OverloadedError, 529: OverloadedError}


# how servers say "the conversation is longer than the model's context", in their own words
CONTEXT_WORDS = ("context length", "context_length", "context window", "context size", "maximum context",
                 "prompt is too long", "input is too long", "input length", "input token count", "too many tokens",
                 "token limit", "maximum number of tokens", "reduce the length", "上下文长度", "超过最大长度")


def status_error(status, message, headers=None, raw="") -> APIStatusError:
    """The most specific APIStatusError subclass for an HTTP error response.

    RAW is the whole body: a server may put "context_length_exceeded" in a `code` field only.
    """
    cls = _STATUS_CLASSES.get(status) or (InternalServerError if status >= 500 else APIStatusError)
    page = is_html(raw)
    lowered = "" if page else f"{message} {raw}".casefold()
    if cls is BadRequestError and any(words in lowered for words in CONTEXT_WORDS):
        cls = ContextLengthError
    error = cls("" if page else message, status, headers,
                detail=f"HTTP {status}: an HTML page titled {html_title(raw)!r}" if page else None)
    if page:
        error.page_title = html_title(raw)
    return error


def is_html(text) -> bool:
    return str(text or "").lstrip()[:1] == "<"


def html_title(text) -> str:
    """The <title> of an HTML page, as the page wrote it (entities decoded, one line, shortened), or ''."""
    import html
    import re
    found = re.search(r"<title[^>]*>(.*?)</title", str(text)[:65536], re.IGNORECASE | re.DOTALL)
    return shortened(html.unescape(found.group(1)), 80) if found else ""


def base_url_of(location) -> str:
    """The base URL to set for a redirect's target: without query, fragment and the /chat/completions ending."""
    parts = urllib.parse.urlsplit(location)
    path = parts.path.rstrip("/")
    path = path[:-len(COMPLETIONS_PATH)] if path.endswith(COMPLETIONS_PATH) else path
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def shortened(text, limit) -> str:
    """TEXT on one line, at most LIMIT characters of it; a text cut short ends with '……' so it reads as cut."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "……"


def _quoted(exc):
    """The server's words, shortened, inside Chinese quotation marks."""
    text = shortened(exc.message or "", MAX_DETAIL)
    return f"“{text}”" if text else "（没有说明）"


def _said(exc):
    """'服务端说明：“…”', or for an HTML error page our reading of it, quoting only the page's own title."""
    if getattr(exc, "page_title", None) is None:
        return f"服务端说明：{_quoted(exc)}"
    title = f"，页面标题是“{exc.page_title}”" if exc.page_title else "，页面没有标题"
    return f"回来的是一个 HTML 错误页（多半来自中间的网关或代理，而不是模型服务本身{title}）"


TIMED_OUT = "请求超时"
INCOMPLETE = "回应不完整"


def failure_kind(exc: APIError) -> str:
    """What went wrong in a few words: '连接被拒绝：…', '请求超时（…）', '回应不完整（…）' or 'HTTP 503'.

    The retry line on stderr says this; the final sentence of `describe_api_error` names the same kind,
    so the person reads one classification from the first retry to the end.
    """
    if isinstance(exc, APITimeoutError):
        return f"{TIMED_OUT}（{exc.message}）"
    if isinstance(exc, IncompleteResponseError):
        return f"{INCOMPLETE}（{exc.message}）"
    if isinstance(exc, APIConnectionError):
        return exc.message  # already names the kind: 连接被拒绝 / 找不到这个主机名 / TLS …
    return f"HTTP {exc.status}" if exc.status else "回应不能用"


def _retried(exc):
    """'，已重试 2 次' when retries were made, else nothing (never claims a retry that did not happen)."""
    return f"，已重试 {exc.retries} 次" if exc.retries else ""


def describe_api_error(exc: APIError, chat: bool = False) -> str:
    """One Chinese sentence per failure class, for the person; most specific class first."""
    if isinstance(exc, DeadlineReached):
        return _deadline_description(exc)
    if exc.asked_wait is not None:
        return (f"错误：模型服务要求等待 {exc.asked_wait:.0f} 秒后再试（HTTP {exc.status}），"
                "超过了自动等待的上限 60 秒，所以没有重试。请过这段时间后再问。")
    for cls, describe in _DESCRIPTIONS:
        if isinstance(exc, cls):
            return describe(exc, chat)
    return f"错误：模型 API 出错，{_said(exc)}。请稍后再试。"


def _deadline_description(exc):
    before = f"最后一次失败是{failure_kind(exc.last)}{_retried(exc.last)}；" if exc.last is not None else ""
    if exc.wait is not None:
        stopped = f"下一次重试要先等 {exc.wait:.1f} 秒，而期限只剩 {max(exc.left, 0):.1f} 秒，所以没有再等，立即停下"
    else:
        stopped = "没有时间再发一次请求了"
    return (f"错误：这个问题已用完整个期限 {exc.seconds:g} 秒（含重试和工具的时间）。{before}{stopped}。"
            "请稍后再问；网络一直很慢时可以调大环境变量 DEEPSEEK_DEADLINE（秒）。")


def _status_description(exc, chat):
    status = exc.status or 0
    if 300 <= status < 400:
        where = exc.headers.get("location", "")
        if not where:
            return (f"错误：模型 API 返回重定向 {status}，没有跟随，也没有说指向哪里。请把 DEEPSEEK_BASE_URL 改成最终的地址"
                    "（例如 https:// 开头，不带 /chat/completions）。")
        return (f"错误：模型 API 返回重定向 {status}（指向 {shortened(where, MAX_DETAIL)}），没有跟随。"
                f"请把 DEEPSEEK_BASE_URL 改成 {base_url_of(where)}（程序会自己加上 /chat/completions）。")
    if status == 404:
        return (f"错误：模型 API 返回 404，{_said(exc)}。请检查 DEEPSEEK_BASE_URL"
                "（不要带 /chat/completions）和 DEEPSEEK_MODEL。")
    if 400 <= status < 500:
        return f"错误：请求被拒绝（{status}），{_said(exc)}。重试不会有用，请检查问题或设置。"
    return f"错误：模型 API 返回 {status}{_retried(exc)}，{_said(exc)}。请稍后再试。"


_DESCRIPTIONS = (
    (AuthenticationError, lambda exc, chat:
        "错误：API 密钥无效（401）。请检查环境变量 DEEPSEEK_API_KEY，或加 --offline 使用离线演示模型。"),
    (InsufficientBalanceError, lambda exc, chat:
        "错误：DeepSeek 账户余额不足（402）。请充值后再试，或加 --offline 使用离线演示模型。"),
    (RateLimitError, lambda exc, chat: "错误：" + (f"重试 {exc.retries} 次后仍" if exc.retries else "请求")
                                       + "被限流（429）。请等一会儿再试。"),
    (OverloadedError, lambda exc, chat:
        f"错误：模型服务繁忙（{exc.status}{_retried(exc)}）。请稍后再试。"),
    (ContextLengthError, lambda exc, chat: "错误：对话超过了模型的最大上下文长度（400）。"
        + ("可以用 /reset 清空对话后重来。" if chat else "请把问题改短后再试。")),
    (BadRequestError, lambda exc, chat:
        f"错误：请求被拒绝（400），{_said(exc)}。请检查 DEEPSEEK_MODEL 等设置。"),
    (APITimeoutError, lambda exc, chat:
        f"错误：模型 API {TIMED_OUT}（{exc.message}{_retried(exc)}）。请稍后再试，或调大环境变量 DEEPSEEK_TIMEOUT（秒）。"),
    (IncompleteResponseError, lambda exc, chat:
        f"错误：模型服务的{INCOMPLETE}（{exc.message}{_retried(exc)}）：回应在半路被切断了，多半是网络或中间的代理断开了连接。"
        "请稍后再试；一直这样请检查网络或代理。"),
    (MalformedResponseError, lambda exc, chat:
        f"错误：模型服务的回应不是有效的 HTTP（{exc.message}{_retried(exc)}）。请检查 DEEPSEEK_BASE_URL 指向的服务，"
        "或中间的代理。"),
    (APIConnectionError, lambda exc, chat:
        f"错误：连不上模型 API（{exc.message}{_retried(exc)}）。请检查网络和 DEEPSEEK_BASE_URL，或加 --offline。"),
    (APIStatusError, _status_description),
    (ServerReportedError, lambda exc, chat:
        f"错误：模型服务没有给出回答，而是返回了错误说明：{_quoted(exc)}。请稍后再试。"),
    (EmptyChoicesError, lambda exc, chat:
        "错误：模型服务回了 200，但 choices 是空的，没有任何回答。这常见于内容过滤（服务端把整个回答拦下了）；"
        "可以换个问法再试。这次没有重试：请求可能已经计费。"),
    (NotJSONError, lambda exc, chat: f"错误：模型服务回了 200，但{exc.message}。没有重试：这次请求可能已经计费。"
                                     "一直这样请检查 DEEPSEEK_BASE_URL 是否指向兼容 OpenAI 的 /chat/completions 服务。"),
    (EmptyReplyError, lambda exc, chat:
        "错误：模型返回了空回答（没有文字，也没有工具调用）。可以再问一次或换个问法；一直这样请检查 DEEPSEEK_MODEL。"),
    (ReplyError, lambda exc, chat: f"错误：模型服务的响应不能用：{exc.message}。请检查 DEEPSEEK_BASE_URL 是否指向"
                                   "兼容 OpenAI 的 /chat/completions 服务。"),
)
