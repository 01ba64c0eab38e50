"""The guarded tool loop: one question in, rounds of model request + tool calls, one Outcome out.

Every way out is one of STOP_REASONS. Guards are checked where the history is whole (before
a request, or after every call of a round has its result), so a stop never leaves an
assistant tool call without its result: the history stays valid for the API. A guard stop
appends one assistant message saying why, so both the person and the model see it next time;
an API failure appends nothing.
"""
import hashlib
import json

from .client import APIError, ContextLengthError, describe_api_error
from .tools import TOOL_SCHEMAS, crash_message, run_tool

STOP_REASONS = ("answered", "max_turns", "tool_failures", "no_progress", "output_truncated",
                "context_full", "model_refused", "api_error", "interrupted")
REFUSALS = {
    "content_filter": "已停止：模型因内容过滤拒绝了这次回答，本轮没有执行工具。可以换个问法再试。",
    "insufficient_system_resource": "已停止：模型服务资源不足，回答被中断，本轮没有执行工具。请稍后再试。",
}
TRUNCATED = "已停止：模型输出达到长度上限，本轮没有执行工具。可以把问题拆小，或要求更简短的回答。"
INTERRUPTED_WAITING = "已中断：等待模型回应时按下了 Ctrl-C，这个问题没有结论。可以接着问下一句。"
INTERRUPTED_TOOL = "已中断：执行工具时按下了 Ctrl-C，这一轮的每个工具调用都已记下结果。可以接着问下一句。"
TOOL_INTERRUPTED = "错误：用户中断了这个工具。"
TOOL_NOT_RUN = "错误：这一轮已中断，工具没有执行。"
TOOL_STATE_UNKNOWN = "错误：用户中断，这个工具的执行状态不明；重试前请先检查现况。"


class Limits:
    """The loop's budgets per question."""

    def __init__(self, max_turns=20, max_tool_failures=3, cycle_repeats=3, max_cycle_period=5):
        self.max_turns = max_turns
        self.max_tool_failures = max_tool_failures
        self.cycle_repeats = cycle_repeats
        self.max_cycle_period = max_cycle_period


class Outcome:
    """How one question ended: `stop` (a STOP_REASONS value), the answer or stop message, ..."""

    def __init__(self, stop, answer, tool_calls, turns, error=None):
        self.stop = stop
        self.answer = answer
        self.tool_calls = tool_calls
        self.turns = turns
        self.error = error

    def __repr__(self):
        return f"Outcome(stop={self.stop!r}, turns={self.turns}, tool_calls={self.tool_calls!r})"


def run_question(model, history: list, question: str, *, limits=None, tool_runner=run_tool,
                 tools=TOOL_SCHEMAS, on_event=None, chat=False) -> Outcome:
    """Ask `question` on top of `history` (changed in place) until a stop reason is reached."""
    limits = limits or Limits()
    notify = on_event or (lambda kind, data: None)
    seal_dangling_tool_calls(history)
    history.append({"role": "user", "content": question})
    detector = CycleDetector(limits.cycle_repeats, limits.max_cycle_period)
    names, turns, failures = [], 0, 0

    # only chat has /reset; a single question is simply asked again
    start_over = "可以换个问法、把问题拆小，或用 /reset 重来。" if chat else "可以换个问法、把问题拆小后重新提问。"

    def stop(reason, message, error=None, record=True):
        if record:
            history.append({"role": "assistant", "content": message})
        notify("stop", {"stop": reason, "turns": turns})
        return Outcome(reason, message, names, turns, error)

    while True:
        if turns >= limits.max_turns:
            return stop("max_turns", f"已停止：这个问题已用掉 {turns} 次模型请求仍没有结论。{start_over}")
        turns += 1
        notify("request", {"turn": turns})
        try:
            choice = model.complete(history, tools)
        except APIError as exc:
            reason = "context_full" if isinstance(exc, ContextLengthError) else "api_error"
            return stop(reason, describe_api_error(exc, chat=chat), exc, record=False)
        except KeyboardInterrupt:
            return stop("interrupted", INTERRUPTED_WAITING, record=False)
        finish = choice.get("finish_reason")
        if finish == "length":
            return stop("output_truncated", TRUNCATED)
        if finish in REFUSALS:
            return stop("model_refused", REFUSALS[finish])
        message = choice.get("message") or {}
        calls = _normalized_calls(message.get("tool_calls"), turns, history)
        if not calls:
            answer = message.get("content") or ""
            history.append({"role": "assistant", "content": answer})
            return stop("answered", answer, record=False)
        history.append({"role": "assistant", "content": message.get("content") or "",
                        "tool_calls": calls})
        names.extend(call["function"]["name"] for call in calls)
        try:
            results, interrupted = _run_calls(calls, tool_runner, notify)
            history.extend({"role": "tool", "tool_call_id": call["id"], "content": content}
                           for call, (content, _) in zip(calls, results))
        except KeyboardInterrupt:  # landed between statements: whatever is missing gets sealed
            seal_dangling_tool_calls(history)
            return stop("interrupted", INTERRUPTED_TOOL, record=False)
        if interrupted:
            return stop("interrupted", INTERRUPTED_TOOL, record=False)
        failures = failures + 1 if all(is_error for _, is_error in results) else 0
        period = detector.add(round_signature(calls, results))
        if failures >= limits.max_tool_failures:
            return stop("tool_failures", f"已停止：工具连续 {failures} 轮全部失败（第 {turns} 轮），"
                                         "请换个方式再试。")
        if period:
            return stop("no_progress", _no_progress_message(detector, period, turns) + start_over)


def _normalized_calls(raw_calls, turn, history):
    """The model's tool calls in the exact shape sent back.

    An id that is missing or already used (in this message or earlier) is replaced, because
    the API pairs each result with exactly one call.
    """
    used = {call.get("id") for message in history for call in message.get("tool_calls") or []}
    calls = []
    for index, call in enumerate(raw_calls or [], 1):
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or call_id in used:
            call_id = next(f"call_{turn}_{index}{suffix}" for suffix in ("", *map(str, range(1, 99)))
                           if f"call_{turn}_{index}{suffix}" not in used)
        used.add(call_id)
        calls.append({"id": call_id, "type": "function",
                      "function": {"name": str(function.get("name") or ""), "arguments": arguments}})
    return calls


def _run_calls(calls, tool_runner, notify):
    """(content, is_error) for every call in order; after a Ctrl-C the rest are marked not run."""
    results, interrupted = [], False
    for call in calls:
        if interrupted:
            results.append((TOOL_NOT_RUN, True))
            continue
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        try:
            notify("tool_call", {"id": call["id"], "name": name, "arguments": arguments})
            content, is_error = tool_runner(name, arguments)
        except KeyboardInterrupt:
            interrupted = True
            content, is_error = TOOL_INTERRUPTED, True
        except Exception as exc:  # a broken runner still owes the call a result
            content, is_error = crash_message(name, exc), True
        results.append((content, is_error))
        notify("tool_result", {"id": call["id"], "name": name, "is_error": is_error, "content": content})
    return results, interrupted


def _no_progress_message(detector, period, turn):
    block = " → ".join(_describe_call(call) for call in detector.last_block_calls(period))
    return (f"已停止：第 {turn} 轮发现原地打转：{block}"
            f"（每 {period} 轮一个循环，已连续重复 {detector.repeats} 次，结果也没有变化）。")


def _describe_call(signature_call):
    name, arguments = signature_call
    return f"{name}({arguments if len(arguments) <= 60 else arguments[:57] + '...'})"


def _canonical_arguments(arguments):
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, sort_keys=True,
                          separators=(",", ":"))
    except (TypeError, ValueError):
        return str(arguments)


def round_signature(calls, results) -> str:
    """A round's identity: ordered calls (name + canonical JSON arguments) + sha256 of each result.

    `calls` are tool-call dicts as sent by the model (or (name, arguments) pairs); `results`
    are (content, is_error) pairs or contents.
    """
    parts = []
    for call, result in zip(calls, results):
        name, arguments = ((call["function"]["name"], call["function"]["arguments"])
                           if isinstance(call, dict) else call)
        content = result[0] if isinstance(result, tuple) else result
        parts.append([name, _canonical_arguments(arguments),
                      hashlib.sha256(str(content).encode("utf-8")).hexdigest()])
    return json.dumps(parts, ensure_ascii=False)


class CycleDetector:
    """Fires when the last repeats*p round signatures are one block of p rounds repeated, p <= max_period."""

    def __init__(self, repeats=3, max_period=5):
        self.repeats = repeats
        self.max_period = max_period
        self.signatures = []

    def add(self, signature):
        """Record one round; the period that fired, or None."""
        keep = self.repeats * self.max_period  # the longest window any period can need
        self.signatures = (self.signatures + [signature])[-keep:] if keep > 0 else []
        for period in range(1, self.max_period + 1):
            window = self.signatures[-self.repeats * period:]
            if len(window) == self.repeats * period and window == window[-period:] * self.repeats:
                return period
        return None

    def reset(self):
        self.signatures = []

    def last_block_calls(self, period):
        """The (name, canonical arguments) of the calls in the last `period` rounds, in order."""
        return [(name, arguments) for signature in self.signatures[-period:]
                for name, arguments, _ in json.loads(signature)]


def seal_dangling_tool_calls(history) -> bool:
    """Give every unanswered call of the trailing assistant message a 'state unknown' result."""
    start = len(history)
    while start > 0 and history[start - 1].get("role") == "tool":
        start -= 1
    if start == 0 or history[start - 1].get("role") != "assistant":
        return False
    answered = {message.get("tool_call_id") for message in history[start:]}
    missing = [call for call in history[start - 1].get("tool_calls") or []
               if call.get("id") not in answered]
    history.extend({"role": "tool", "tool_call_id": call.get("id"), "content": TOOL_STATE_UNKNOWN}
                   for call in missing)
    return bool(missing)


def history_problems(history) -> list:
    """Why the API would reject this history (tool calls and results out of step); [] when valid."""
    problems, pending = [], []
    for number, message in enumerate(history, 1):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                pending.remove(call_id)
            else:
                problems.append(f"第 {number} 条消息是工具结果（tool_call_id={call_id!r}），"
                                "前面没有对应的工具调用。")
            continue
        if pending:
            problems.append(f"第 {number} 条消息（{role}）之前，工具调用 {'、'.join(map(str, pending))} 还没有结果。")
        pending = [call.get("id") for call in message.get("tool_calls") or []] if role == "assistant" else []
        if len(set(pending)) < len(pending):
            problems.append(f"第 {number} 条消息里有重复的工具调用 id：每个结果只能对应一个调用。")
    if pending:
        problems.append(f"历史结尾的工具调用 {'、'.join(map(str, pending))} 没有结果。")
    return problems
