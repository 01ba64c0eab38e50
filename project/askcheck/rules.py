"""verify_ask's own table of the notes assistant's rules, written from docs/assistant/DESIGN.md, never imported.

Re-implementing the rules here is on purpose: the checked program (project/assistant/) must not vouch for
itself. The stop reasons and how each is reached, the limits `app.py ask` and `chat` always ask with, the
retry policy of the official SDKs (which failures are retried, the backoff, a server's retry-after-ms /
retry-after in seconds or as an HTTP date, x-should-retry, the 60-second cap), the token charging rule, the
no-progress cycle rule and the reminder. Pure functions of recorded values; nothing here reads a file.
"""
import email.utils
import json
import math

SCHEMA = "question-run/1"
STOPS = ("answered", "max_turns", "tool_failures", "no_progress", "output_truncated", "context_full",
         "model_refused", "api_error", "interrupted", "token_budget")
ERRORS = ("timeout", "connection", "incomplete", "status", "context_length", "error_object", "not_json",
          "bad_reply", "empty_choices", "unknown")
GAVE_UP = ("limit", "not_retryable", "retry_after_cap", "deadline")
RESULT_STATES = ("done", "interrupted", "not_run")
NO_RESPONSE = ("timeout", "connection", "incomplete")  # no complete response came back: retried like the SDKs
STATUS_ERRORS = ("status", "context_length")  # the server answered an error status
UNREADABLE_2XX = ("not_json", "incomplete")  # a 2xx body that could not be read: charged its bound
TRUNCATED = ("length",)
REFUSED = ("content_filter", "insufficient_system_resource")
RETRIED_STATUSES = (408, 409, 429)  # and every status >= 500
INITIAL_RETRY_DELAY, MAX_RETRY_DELAY, JITTER = 0.5, 8.0, 0.25
MAX_RETRY_AFTER = 60.0
# What `app.py ask` and `chat` always ask with (the demo model sends no request: its client limits are null).
QUESTION_LIMITS = {"max_turns": 20, "max_tool_failures": 3, "cycle_repeats": 3, "max_cycle_period": 5}
API_LIMITS = {"max_retries": 2, "max_tokens": 2048}
MAX_SECONDS = 3600.0  # DEEPSEEK_TIMEOUT and DEEPSEEK_DEADLINE are in (0, 3600]
ROUNDING = 0.002  # offsets are kept to the millisecond
MAX_CLOCK_STEP = 0.016  # the coarsest monotonic clock a supported system has (Windows: 15.6 ms)
SLOW_MACHINE = 0.05  # seconds a busy machine may take between two steps of the client


def retryable(attempt) -> bool:
    """Would the SDKs' rule send this failed attempt again (retries left aside)?"""
    error = attempt["error"]
    if error in NO_RESPONSE:
        return True  # no headers came with it: x-should-retry cannot say otherwise
    if error not in STATUS_ERRORS:
        return False  # a 2xx that cannot be used may have been generated (and billed): never sent again
    verdict = (attempt["should_retry"] or "").strip().lower()
    if verdict in ("true", "false"):
        return verdict == "true"
    status = attempt["status"]
    return status in RETRIED_STATUSES or status >= 500


def server_hint(attempt):
    """The wait the server asked for, in seconds: retry-after-ms, else retry-after as seconds, else as an HTTP date
    counted from when the reply arrived; None when it asked nothing (only an error status carries one)."""
    if attempt["error"] not in STATUS_ERRORS:
        return None
    for value, scale in ((attempt["retry_after_ms"], 0.001), (attempt["retry_after"], 1.0)):
        try:
            seconds = float((value or "").strip()) * scale
        except ValueError:
            continue
        if math.isfinite(seconds):
            return seconds
    try:
        moment = email.utils.parsedate_tz(attempt["retry_after"] or "")
        if moment is None or attempt["received_at"] is None:
            return None
        return email.utils.mktime_tz(moment) - attempt["received_at"]
    except (TypeError, ValueError, OverflowError):
        return None


def backoff_range(retry):
    """(shortest, longest) wait before retry number RETRY (1 = the first retry) when the server asked for none."""
    longest = min(INITIAL_RETRY_DELAY * 2 ** (retry - 1), MAX_RETRY_DELAY)
    return longest * (1 - JITTER), longest


def wait_problem(wait, hint, retry):
    """Why WAIT cannot be what the client waited before retry RETRY after a failure whose server asked HINT (None:
    nothing asked), as (kind, fields); None when it can."""
    if hint is not None and 0 < hint <= MAX_RETRY_AFTER:
        return None if abs(wait - hint) <= ROUNDING else ("wait_not_hint", {"wait": wait, "hint": hint})
    shortest, longest = backoff_range(retry)
    if shortest - ROUNDING <= wait <= longest + ROUNDING:
        return None
    return "wait_not_backoff", {"wait": wait, "shortest": shortest, "longest": longest}


def charge(attempt, bound):
    """(tokens, estimated) the rule charges ATTEMPT whose bound is BOUND (body bytes + max_tokens)."""
    status, error = attempt["status"], attempt["error"]
    if status is None:  # no response: once connected the server may have worked on it
        return (bound, True) if attempt["connected"] else (0, False)
    if not 200 <= status < 300:
        return 0, False  # an error reply generated nothing
    total = (attempt["usage"] or {}).get("total_tokens")
    if error in UNREADABLE_2XX or type(total) is not int or not 0 <= total <= bound:
        return bound, True  # unknown use is not zero; more than the bound is not a count a server can make
    return total, False


def finish_stop(reply):
    """The stop a reply makes by itself (a cut or refused reply, no calls), or None when its calls run."""
    finish = str(reply["finish_reason"] or "").strip().lower()
    if finish in TRUNCATED:
        return "output_truncated"
    if finish in REFUSED:
        return "model_refused"
    if not reply["tool_calls"]:
        return "api_error" if reply["text_blank"] else "answered"
    return None


def canonical_arguments(arguments):
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(arguments)


def round_signature(reply, results):
    """A round's identity for the cycle rule: its calls in order (name, canonical arguments), each result's hash."""
    return tuple((call["name"], canonical_arguments(call["arguments"]), result["content_sha256"])
                 for call, result in zip(reply["tool_calls"], results))


def repeated_period(signatures, times, max_period):
    """The smallest p <= MAX_PERIOD whose last TIMES*p rounds are one block of p rounds repeated; None."""
    for period in range(1, max_period + 1):
        window = signatures[-times * period:]
        if times > 0 and len(window) == times * period and window == window[-period:] * times:
            return period
    return None
