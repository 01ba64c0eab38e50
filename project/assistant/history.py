"""The conversation history's rules: what the API accepts, sealing what Ctrl-C cut off, reminders.

The history sent is valid for the API at every request: every assistant tool call is followed
by its tool result before any other message. `seal_dangling_tool_calls` restores that after an
interrupt (results saying the state is unknown); `history_problems` says why a history would be
rejected. A loop reminder is a `user` message beginning with REMINDER_PREFIX; it is part of the
history but never a new question (`is_reminder`, `last_question_index`). Shared with: `agent`,
`demo_model` (finds the question), `app.py` (seals after Ctrl-C in chat).
"""
REMINDER_PREFIX = "【循环提醒】"
TOOL_STATE_UNKNOWN = "错误：用户中断，这个工具的执行状态不明；重试前请先检查现况。"


def is_reminder(message) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(REMINDER_PREFIX)


def last_question_index(messages) -> int:
    """Index of the last user message that is a question (not a reminder), or -1."""
    return max((index for index, message in enumerate(messages)
                if message.get("role") == "user" and not is_reminder(message)), default=-1)


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
