"""One HTTP POST to the model API within a whole-request deadline, over urllib (proxies as usual).

`post_json` sends a body and returns `Reply(status, headers, body)` for any HTTP answer
(error statuses included: what they mean is the client's business); when no complete answer
arrives it raises `errors.APITimeoutError`, `errors.IncompleteResponseError`,
`errors.MalformedResponseError` (a chunk size that is not a number) or `errors.APIConnectionError`
with a Chinese `message` and the raw exception text in `detail`.

The deadline (`DEEPSEEK_TIMEOUT`) bounds one whole attempt, however slowly the bytes come:
connecting, a proxy tunnel, TLS, the status line and headers, and the body. A socket timeout
alone would only bound each read (a server trickling one byte a second would hold the request
forever), so a watchdog timer shuts the socket down when the attempt's time is up, and the
socket's own timeout is the time left. Name resolution (DNS) happens before there is a socket
and cannot be bounded portably: it stays outside the deadline. Redirects are not followed (a
POST must not silently become a GET elsewhere). Loopback addresses never go through a proxy. The TLS context
is built once per process, and only for an https:// request (`tls_context`).
Once the watchdog has shut the socket, whatever arrived is not the answer: the attempt is a timeout.
A gzip or deflate body is inflated (within MAX_BODY_BYTES); `Reply.ended_by_close` says when only
the connection closing ended the body, so the client can tell a cut-off JSON from a complete one.
Shared with: `client` (calls `post_json`, reads `Attempt.connected`), `errors` (the classes).
"""
import ast
import functools
import http.client
import ipaddress
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from dataclasses import dataclass, field

from . import errors

MAX_BODY_BYTES = 16 * 1024 * 1024  # a completion is a few KB; more than this is not an answer


class EndedEarly(http.client.HTTPException):
    """A 2xx whose headers or body the closing connection may have cut (nothing says it was whole)."""


@dataclass
class Reply:
    """An HTTP answer: its status, headers (lower-case names) and raw body."""

    status: int
    headers: dict
    body: bytes
    ended_by_close: bool = False  # no Content-Length, no chunks: a cut-off body looks complete


@dataclass
class Attempt:
    """One attempt's deadline and watchdog; `connected` once a socket to the server exists."""

    seconds: float
    clock: object = time.monotonic
    connected: bool = False
    expired: bool = False
    ends: float = field(init=False)

    def __post_init__(self):
        self.ends = self.clock() + self.seconds
        self._lock = threading.Lock()
        self._sockets = []
        self._finished = False
        self._timer = None

    def remaining(self) -> float:
        left = self.ends - self.clock()
        if left <= 0:
            self.expired = True
            raise TimeoutError("deadline reached before the next step")
        return left

    def watch(self, sock):
        """Shut SOCK down when the time is up, whatever it is doing then."""
        with self._lock:
            self.connected = True
            self._sockets.append(sock)
            if self._timer is None and not self._finished:
                self._timer = threading.Timer(max(self.ends - self.clock(), 0.0), self._expire)
                self._timer.daemon = True
                self._timer.start()

    def _expire(self):
        with self._lock:
            if self._finished:
                return
            self.expired = True
            for sock in self._sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # a blocked read returns at once
                except OSError:
                    pass  # already closed, or handed over to TLS: its timeout is the time left

    def finish(self):
        """Stop the watchdog; afterwards it never touches a socket again."""
        with self._lock:
            self._finished = True
            if self._timer is not None:
                self._timer.cancel()


class _Watched:
    """A connection whose every socket (to the server or to a proxy) is watched by the attempt."""

    def __init__(self, *args, attempt, **kwargs):
        super().__init__(*args, **kwargs)
        self._attempt = attempt
        self._create_connection = self._watched_socket

    def _watched_socket(self, address, timeout=None, source_address=None, *args):
        sock = socket.create_connection(address, self._attempt.remaining(), source_address)
        self._attempt.watch(sock)
        return sock


class _WatchedHTTP(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPS(_Watched, http.client.HTTPSConnection):
    def connect(self):
        super().connect()
        self._attempt.watch(self.sock)  # the TLS socket: shutting it down ends a blocked read


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, attempt):
        super().__init__()
        self.attempt = attempt

    def http_open(self, request):
        return self.do_open(functools.partial(_WatchedHTTP, attempt=self.attempt), request)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, attempt):
        super().__init__(context=tls_context())  # given one: urllib builds none of its own
        self.attempt = attempt

    def https_open(self, request):
        return self.do_open(functools.partial(_WatchedHTTPS, attempt=self.attempt), request,
                            context=self._context)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 3xx comes back as an HTTP error the client can explain


def is_loopback(host) -> bool:
    if (host or "").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The one TLS context of the process, built on the first https:// request.

    Loading the system's certificates takes tens of milliseconds; since Python 3.12 urllib's
    HTTPSHandler builds a fresh context whenever it is given none, which made every request
    (even an http:// one, through build_opener's default handler) that much slower.
    """
    context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


def _opener(parts, attempt) -> urllib.request.OpenerDirector:
    """An opener with only what one POST needs: the scheme's own watched handler (so an http:// request
    never builds a TLS context), proxies (none for a loopback host), error statuses as answers, no redirects."""
    opener = urllib.request.OpenerDirector()
    proxies = {} if is_loopback(parts.hostname) else None  # None: the environment's proxies, as usual
    handler = _HTTPSHandler if parts.scheme == "https" else _HTTPHandler
    for each in (urllib.request.ProxyHandler(proxies), handler(attempt), _NoRedirect(),
                 urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor()):
        opener.add_handler(each)
    return opener


def post_json(url, body: bytes, headers: dict, attempt: Attempt) -> Reply:
    """POST BODY to URL within ATTEMPT's deadline; the Reply, or the network APIError subclass."""
    opener = _opener(urllib.parse.urlsplit(url), attempt)
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        try:
            with opener.open(request, timeout=attempt.remaining()) as response:
                reply = _reply(response, response.status, whole=True)
        except urllib.error.HTTPError as answer:
            with answer:  # the status says what happened; a short error text is still worth showing
                reply = _reply(answer, answer.code, whole=False)
    except errors.APIError:
        raise
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise network_error(exc, attempt) from None
    finally:
        attempt.finish()
    if attempt.expired:  # the watchdog shut the socket: what was read before it is not the whole answer
        raise network_error(TimeoutError("the watchdog closed the socket at the deadline"), attempt)
    return reply


def _reply(response, status, whole):
    """The Reply of an HTTP answer; a 2xx whose body ended with the connection and is empty is incomplete."""
    headers = _header_dict(response.headers)
    body = _read_body(response, whole)
    if whole and not body and _ends_with_connection(response):
        # headers cut off, or the status line alone: nothing tells a complete empty answer from a cut one
        raise EndedEarly("the connection closed before any body (no Content-Length, not chunked)")
    return Reply(status, headers, _decoded(body, headers, strict=whole), _ends_with_connection(response))


def _ends_with_connection(response):
    """True when the body had no Content-Length and no chunks: only the connection closing ended it."""
    return getattr(response, "length", None) is None and not getattr(response, "chunked", False)


def _decoded(body, headers, strict):
    """The body without its Content-Encoding (gzip, deflate); one that cannot be undone is a ReplyError when
    STRICT (a 2xx), else the body stays as it came (an error status's text is only shown)."""
    for coding in reversed([part.strip().lower() for part in headers.get("content-encoding", "").split(",")]):
        if coding in ("", "identity"):
            continue
        inflated = _inflated(body, coding)
        if isinstance(inflated, str):
            if strict:
                raise errors.ReplyError(inflated, 200)
            return body
        body = inflated
    return body


def _inflated(body, coding):
    """BODY inflated, or a Chinese sentence saying why it cannot be."""
    if coding not in ("gzip", "x-gzip", "deflate"):
        return f"回应用了不支持的压缩格式（Content-Encoding: {coding}）"
    wbits = 47 if coding != "deflate" else (15 if body[:1] == b"\x78" else -15)  # 47: a gzip or zlib header
    inflater = zlib.decompressobj(wbits)
    try:
        inflated = inflater.decompress(body, MAX_BODY_BYTES + 1)
    except zlib.error:
        inflated = None
    if inflated is not None and len(inflated) > MAX_BODY_BYTES:
        return f"回应解压后超过 {MAX_BODY_BYTES // (1024 * 1024)} MB，不像一次回答"
    if inflated is None or not inflater.eof:
        return f"回应的压缩格式（Content-Encoding: {coding}）无法解开"
    return inflated
    return body


def _header_dict(headers):
    """Lower-case names; a repeated header keeps its last value (as the SDKs read them)."""
    return {str(name).lower(): str(value) for name, value in (headers or {}).items()}


def _read_body(response, whole):
    """The body; when WHOLE, a body shorter than its Content-Length is an IncompleteRead."""
    chunks, size = [], 0
    while True:
        chunk = response.read(65536)
        if not chunk:
            missing = getattr(response, "length", None)  # http.client's count of bytes still due
            if whole and missing:
                raise http.client.IncompleteRead(b"".join(chunks), missing)
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise errors.ReplyError(f"回应超过 {MAX_BODY_BYTES // (1024 * 1024)} MB，不像一次回答", 200)
        chunks.append(chunk)


def network_error(exc, attempt) -> errors.APIConnectionError:
    """The Chinese class of a network failure; the raw exception text stays in `detail`."""
    reason = getattr(exc, "reason", None)
    cause = reason if isinstance(reason, BaseException) else exc
    detail = f"{type(cause).__name__}: {cause}"
    if attempt.expired or isinstance(cause, TimeoutError):
        if attempt.expired:  # what the socket reported after the watchdog shut it says nothing more
            detail = f"TimeoutError: the {attempt.seconds:g} s deadline of the whole request was reached"
        return errors.APITimeoutError(f"{round(attempt.seconds, 1):g} 秒内没有收到完整回应", attempt.seconds, detail)
    bad_size = bad_chunk_size(cause)
    if bad_size is not None:
        return errors.MalformedResponseError(f"分块编码（chunked）的分块大小应是十六进制数，收到的是“{bad_size}”",
                                             detail=detail)
    if isinstance(cause, (http.client.IncompleteRead, http.client.RemoteDisconnected, EndedEarly)):
        what = {http.client.IncompleteRead: "回应正文只收到一部分连接就断了",
                EndedEarly: "响应头没发完或还没有正文，连接就关闭了"}.get(type(cause), "服务器收下请求后没有回应就关闭了连接")
        return errors.IncompleteResponseError(what, detail=detail)
    if isinstance(cause, http.client.HTTPException) or (attempt.connected and not isinstance(
            cause, (ConnectionRefusedError, socket.gaierror, ssl.SSLError))):
        return errors.IncompleteResponseError("连接建立后回应中断或不是有效的 HTTP 回应", detail=detail)
    return errors.APIConnectionError(_connection_reason(cause), detail=detail)


def bad_chunk_size(exc):
    """The chunk-size line of a chunked body that is not a hexadecimal number, shortened; None otherwise.

    http.client reports it as an IncompleteRead caused by int()'s ValueError; a connection that closed
    where a size was due reads as an empty line, which is a cut-off body, not a bad size.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ValueError) and "base 16" in str(exc):
            try:
                line = ast.literal_eval(str(exc).rpartition(": ")[2]).decode("latin-1").strip()
            except (ValueError, SyntaxError, AttributeError):
                line = "?"
            return errors.shortened(line, 20) if line else None
        if isinstance(exc, http.client.LineTooLong) and "chunk size" in str(exc):
            return "一行超过 64 KB"
        exc = exc.__cause__ or exc.__context__
    return None


def _connection_reason(cause):
    if isinstance(cause, ConnectionRefusedError):
        return "连接被拒绝：这个地址和端口上没有服务在监听"
    if isinstance(cause, socket.gaierror):
        return "找不到这个主机名（DNS 解析失败）"
    if isinstance(cause, ssl.SSLCertVerificationError):
        return "服务器的 TLS 证书验证失败"
    if isinstance(cause, ssl.SSLError):
        return "TLS 加密连接没有建立起来"
    if isinstance(cause, ConnectionResetError):
        return "连接被对方重置"
    return "网络出错，没有建立连接"
