"""When to send a failed model request again, and after how long: the official SDKs' rule, except the cap
on a server's wait (60 s here, stopping above it; the current openai-python waits up to 120 s; why: DESIGN.md).

At most `max_retries` retries. Retried: no response at all (connection failure, timeout,
incomplete response), 408, 409, 429 and >= 500, unless `x-should-retry: true|false` says
otherwise (never beyond the retry budget). Before retry n (n = retries already made, 0 first)
wait `min(0.5 * 2**n, 8) * (1 - 0.25 * random())`; a server hint (`retry-after-ms`, else
`retry-after` in seconds or as an HTTP date) of 0 < wait <= 60 s is waited exactly instead; a
hint above 60 s is not cut short: the request stops and the person is told how long the
server asked to wait. Pure functions: the client (`client.ChatClient`) applies them, with the
randomness and the clock injected.
"""
import email.utils
import time
from dataclasses import dataclass

INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER = 60.0


@dataclass(frozen=True)
class RetryPlan:
    """`wait` seconds before the next attempt, or None to stop; `asked` is the server's hint if any."""

    wait: float | None
    asked: float | None = None


def lower_keys(headers) -> dict:
    return {str(key).lower(): str(value) for key, value in (headers or {}).items()}


def server_wait(headers, now=time.time):
    """The server's hint in seconds: retry-after-ms, else retry-after (seconds or HTTP date); None if absent."""
    headers = lower_keys(headers)
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name, "").strip()
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds == seconds and abs(seconds) != float("inf"):  # NaN and infinity say nothing
            return seconds
    try:
        moment = email.utils.parsedate_tz(headers.get("retry-after", ""))
        return None if moment is None else email.utils.mktime_tz(moment) - now()
    except (TypeError, ValueError, OverflowError):
        return None


def retry_delay(retries_made: int, headers: dict, random, *, now=time.time) -> float:
    """Seconds to wait before the next retry: a server hint within (0, 60] wins, else the backoff."""
    hint = server_wait(headers, now)
    if hint is not None and 0 < hint <= MAX_RETRY_AFTER:
        return hint
    backoff = min(INITIAL_RETRY_DELAY * 2 ** retries_made, MAX_RETRY_DELAY)
    return max(backoff * (1 - 0.25 * random()), 0.0)


def should_retry(status, headers: dict) -> bool:
    """x-should-retry true/false decides first; else no response (None), 408, 409, 429, >= 500."""
    verdict = lower_keys(headers).get("x-should-retry", "").strip().lower()
    if verdict in ("true", "false"):
        return verdict == "true"
    return status is None or status in (408, 409, 429) or status >= 500


def plan_retry(retries_made, max_retries, status, headers, random, now=time.time) -> RetryPlan:
    """What to do after a failed attempt: wait and retry, or stop (naming a wait the server asked for)."""
    if retries_made >= max_retries or not should_retry(status, headers):
        return RetryPlan(None)
    hint = server_wait(headers, now)
    if hint is not None and hint > MAX_RETRY_AFTER:
        return RetryPlan(None, hint)  # retrying earlier than the server asked only earns more refusals
    asked = hint if hint is not None and hint > 0 else None
    return RetryPlan(retry_delay(retries_made, headers, random, now=now), asked)
