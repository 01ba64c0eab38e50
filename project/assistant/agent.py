"""The guarded tool loop: one question in, rounds of model request + tool calls, one Outcome out.

`run_question` is the loop; each guard is a named check that returns an Outcome (a stop) or
None (go on). Every way out is one of STOP_REASONS, checked where an Outcome is made. Guards
run where the history is whole (before a request, or after every call of a round has its
result), so a stop never leaves an assistant tool call without its result. A guard stop
(GUARD_STOPS) appends one assistant message saying why, so both the person and the model see it
next time; an API failure or an interrupt appends nothing more. The rules are written out in
docs/assistant/DESIGN.md. What happens is told to `on_event(kind, data)` as it happens, in this order per
round: "request" {turn}, "reply" {turn, finish_reason, content, tool_calls (as sent back)}, "tool_call" and
"tool_result" {id, name, ..., state: done|interrupted|not_run} per call, "round" {turn, failures, cycle_period,
repeat_seen, reminded}, "reminder"; "refused" {turn, bound, used} when the token budget did not admit a
request; "stop" {stop, turns} last. The question's recorder (`record.py`) keeps them. Shared with: `app.py` and
`check_loop_guards.py` (run_question, Limits, Outcome), `cycle` (the detector), `history` (validity,
reminders), `budget`.
"""
import json
from dataclasses import dataclass, field

from .budget import BudgetExceeded, TokenBudget
from .cycle import CycleDetector, reminder_text, round_signature
from .errors import APIError, ContextLengthError, EmptyReplyError, describe_api_error
from .history import seal_dangling_tool_calls
from .tools import TOOL_SCHEMAS, crash_message, run_tool

STOP_REASONS = ("answered", "max_turns", "tool_failures", "no_progress", "output_truncated",
                "context_full", "model_refused", "api_error", "interrupted", "token_budget")
GUARD_STOPS = ("max_turns", "tool_failures", "no_progress", "output_truncated", "model_refused", "token_budget")
REFUSALS = {
    "content_filter": "已停止：模型因内容过滤拒绝了这次回答，本轮没有执行工具。可以换个问法再试。",
    "insufficient_system_resource": "已停止：模型服务资源不足，回答被中断，本轮没有执行工具。请稍后再试。",
}
TRUNCATED = "已停止：模型输出达到长度上限，本轮没有执行工具。可以把问题拆小，或要求更简短的回答。"
TOOL_INTERRUPTED = "错误：用户中断了这个工具。"
TOOL_NOT_RUN = "错误：这一轮已中断，工具没有执行。"


@dataclass(frozen=True)
class Limits:
    """The loop's budgets per question; `max_tokens` None means no token budget."""

    max_turns: int = 20
    max_tool_failures: int = 3
    cycle_repeats: int = 3
    max_cycle_period: int = 5
    max_tokens: int | None = None


@dataclass
class Outcome:
    """How one question ended: `stop` (one of STOP_REASONS), the answer or the stop message, ..."""

    stop: str
    answer: str
    tool_calls: list
    turns: int
    error: APIError | None = None
    tokens: TokenBudget = field(default_factory=TokenBudget)

    def __post_init__(self):
        if self.stop not in STOP_REASONS:
            raise ValueError(f"unknown stop reason {self.stop!r}; the fixed set is {STOP_REASONS}")


@dataclass
class Question:
    """The state of one question's loop (everything the guards look at)."""

    model: object
    history: list
    limits: Limits
    tools: list
    tool_runner: object
    notify: object
    chat: bool
    detector: CycleDetector
    budget: TokenBudget
    names: list = field(default_factory=list)
    turns: int = 0
    failures: int = 0
    reminded: bool = False

    def stop(self, reason, message, error=None) -> Outcome:
        if reason in GUARD_STOPS:
            self.history.append({"role": "assistant", "content": message})
        self.notify("stop", {"stop": reason, "turns": self.turns})
        return Outcome(reason, message, self.names, self.turns, error, self.budget)

    def start_over(self):
        # only chat has /reset; a single question is simply asked again
        return "可以换个问法、把问题拆小，或用 /reset 重来。" if self.chat else "可以换个问法、把问题拆小后重新提问。"

    def next_step(self):
        return "可以接着问下一句。" if self.chat else "可以重新运行这条命令再问一次。"


def _ignore_event(kind, data):
    return None


def run_question(model, history: list, question: str, *, limits=None, tool_runner=run_tool,
                 tools=TOOL_SCHEMAS, on_event=None, chat=False) -> Outcome:
    """Ask `question` on top of `history` (changed in place) until a stop reason is reached."""
    limits = limits or Limits()
    state = Question(model, history, limits, tools, tool_runner, on_event or _ignore_event, chat,
                     CycleDetector(limits.cycle_repeats, limits.max_cycle_period), TokenBudget(limits.max_tokens))
    seal_dangling_tool_calls(history)
    history.append({"role": "user", "content": question})
    start_clock = getattr(model, "start_question", None)  # the real client's deadline: tool time counts too
    if start_clock:
        start_clock()
    while True:
        stopped = check_turn_cap(state)
        if stopped:
            return stopped
        choice = ask_model(state)
        if isinstance(choice, Outcome):
            return choice
        message = choice.get("message") or {}
        calls = _normalized_calls(message.get("tool_calls"), state.turns, history)
        state.notify("reply", {"turn": state.turns, "finish_reason": choice.get("finish_reason"),
                               "content": message.get("content"), "tool_calls": calls})
        stopped = check_finish_reason(state, choice) or answer_without_calls(state, choice, calls)
        if stopped:
            return stopped
        results = run_round(state, choice, calls)
        if isinstance(results, Outcome):
            return results
        stopped = check_round(state, calls, results)
        if stopped:
            return stopped


def check_turn_cap(state):
    """max_turns: the question has used its model requests (retries not counted)."""
    if state.turns >= state.limits.max_turns:
        return state.stop("max_turns", f"已停止：这个问题已用掉 {state.turns} 次模型请求仍没有结论。{state.start_over()}")
    return None


def ask_model(state):
    """One model request (the client retries inside); the choice, or the Outcome of a failure."""
    state.turns += 1
    state.notify("request", {"turn": state.turns})
    try:
        return state.model.complete(state.history, state.tools, budget=state.budget)
    except BudgetExceeded as exc:
        state.notify("refused", {"turn": state.turns, "bound": exc.bound, "used": exc.budget.used})
        if not exc.retries:
            state.turns -= 1  # this request was never sent: it is not a round trip
        return state.stop("token_budget", _budget_message(state, exc))
    except APIError as exc:
        reason = "context_full" if isinstance(exc, ContextLengthError) else "api_error"
        return state.stop(reason, describe_api_error(exc, chat=state.chat), exc)
    except KeyboardInterrupt as exc:
        return state.stop("interrupted", f"已中断：{waiting_for(exc)}时{interrupt_cause(exc)}，这个问题没有结论。"
                                         f"{state.next_step()}")


def waiting_for(exc) -> str:
    """What the loop was waiting for when EXC came: a model reply, or the wait before a retry (the client says)."""
    waiting = getattr(exc, "waiting_to_retry", None)
    if not waiting:
        return "等待模型回应"
    number, wait, asked = waiting
    why = f"服务端要求等待 {asked:g} 秒" if asked is not None else f"{wait:.2f} 秒后重试"
    return f"等待第 {number} 次重试（{why}）"


def interrupt_cause(exc) -> str:
    """Ctrl-C, or a termination signal (the workspace's cli raises a KeyboardInterrupt subclass for SIGTERM/SIGHUP)."""
    return "按下了 Ctrl-C" if type(exc) is KeyboardInterrupt else "收到了终止信号（SIGTERM 或 SIGHUP）"


def _budget_message(state, exc):
    budget = exc.budget
    if not budget.used:  # not even the first request fits: asking differently cannot help, a bigger budget can
        return (f"已停止：这个问题的 token 预算是 {budget.limit}，而一次请求（系统提示词、工具说明、对话和问题的字节数，"
                f"加上回复上限 max_tokens）最多可能用到 {exc.bound}，所以一次也没有发送。--max-tokens 至少要 {exc.bound}。")
    used = f"{budget.used}{'（含估计值）' if budget.estimated else ''}"
    return (f"已停止：这个问题的 token 预算是 {budget.limit}，已用 {used}，下一次请求最多可能用 {exc.bound}"
            f"（请求体 + max_tokens），超出了预算，所以没有发送。可以用 --max-tokens 调大预算；也{state.start_over()}")


def check_finish_reason(state, choice):
    """output_truncated / model_refused: the response is discarded and no tool of it runs.

    Compared without case or surrounding spaces: a compatible server saying "LENGTH" cut the reply all the same.
    """
    finish = str(choice.get("finish_reason") or "").strip().lower()
    if finish == "length":
        return state.stop("output_truncated", TRUNCATED)
    if finish in REFUSALS:
        return state.stop("model_refused", REFUSALS[finish])
    return None


def answer_without_calls(state, choice, calls):
    """answered when the model calls no tool; an empty text is not an answer (api_error)."""
    if calls:
        return None
    answer = (choice.get("message") or {}).get("content") or ""
    if not answer.strip():
        error = EmptyReplyError("模型返回了空回答", 200)
        return state.stop("api_error", describe_api_error(error, chat=state.chat), error)
    state.history.append({"role": "assistant", "content": answer})
    return state.stop("answered", answer)


def run_round(state, choice, calls):
    """Run every call of the round; the (content, is_error) results, or the Outcome of a Ctrl-C."""
    state.history.append({"role": "assistant", "content": (choice.get("message") or {}).get("content") or "",
                          "tool_calls": calls})
    state.names.extend(call["function"]["name"] for call in calls)
    interrupted_message = f"已中断：执行工具时按下了 Ctrl-C，这一轮的每个工具调用都已记下结果。{state.next_step()}"
    try:
        results, interrupted = _run_calls(calls, state.tool_runner, state.notify)
        state.history.extend({"role": "tool", "tool_call_id": call["id"], "content": content}
                             for call, (content, _) in zip(calls, results))
    except KeyboardInterrupt:  # landed between statements: whatever is missing gets sealed
        seal_dangling_tool_calls(state.history)
        return state.stop("interrupted", interrupted_message)
    if interrupted:
        return state.stop("interrupted", interrupted_message)
    return results


def check_round(state, calls, results):
    """After a round whose every call has its result: count it, report the counters ("round"), then stop with
    tool_failures (it wins when both fire), no_progress, or add the one reminder."""
    state.failures = state.failures + 1 if all(is_error for _, is_error in results) else 0
    detector = state.detector
    period = detector.add(round_signature(calls, results))
    warn_at = detector.repeats - 1
    seen = detector.repeating(warn_at) if warn_at >= 2 else None  # a block seen one repeat before the stop
    failed = state.failures >= state.limits.max_tool_failures
    remind = seen is not None and not state.reminded and not failed and not period
    state.notify("round", {"turn": state.turns, "failures": state.failures, "cycle_period": period,
                           "repeat_seen": seen, "reminded": remind})
    if failed:
        return state.stop("tool_failures", f"已停止：工具连续 {state.failures} 轮全部失败（第 {state.turns} 轮），"
                                           "请换个方式再试。")
    if period:
        return state.stop("no_progress", f"已停止：第 {state.turns} 轮发现原地打转：{detector.describe_block(period)}"
                                         f"（每 {period} 轮一个循环，已连续重复 {detector.repeats} 次，结果也没有变化）。"
                                         + state.start_over())
    if remind:
        state.reminded = True
        state.history.append({"role": "user", "content": reminder_text(detector, seen, warn_at)})
        state.notify("reminder", {"turn": state.turns, "period": seen})
    return None


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
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        if interrupted:
            content, is_error, state = TOOL_NOT_RUN, True, "not_run"
        else:
            state = "done"
            try:
                notify("tool_call", {"id": call["id"], "name": name, "arguments": arguments})
                content, is_error = tool_runner(name, arguments)
            except KeyboardInterrupt:
                interrupted = True
                content, is_error, state = TOOL_INTERRUPTED, True, "interrupted"
            except Exception as exc:  # a broken runner still owes the call a result
                content, is_error = crash_message(name, exc), True
        results.append((content, is_error))
        notify("tool_result", {"id": call["id"], "name": name, "is_error": is_error, "content": content,
                               "state": state})
    return results, interrupted
