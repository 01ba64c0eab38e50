"""The real API's request validation, as the mock applies it before any mode: written from the API's behaviour,
independently of the client (the mock must catch the client's mistakes, so it shares no code with it).

`request_problem(body)` says why the real API would answer 400 to a parsed request body, or None. Part of
project/mock_model.py (which re-exports it).
"""
MAX_COMPLETION_TOKENS = 8192  # the real API's range for max_tokens is [1, 8192]
UNANSWERED_CALLS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. (insufficient tool messages following tool_calls message)")
ORPHAN_TOOL_MESSAGE = (
    "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'")


def request_problem(body):
    """Why the real API would answer 400 to this request body (parsed JSON), or None."""
    if not isinstance(body, dict):
        return "Request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "Missing required parameter: 'model'"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "Missing required parameter: 'messages' (a non-empty array)"
    problem = _parameters_problem(body)
    if problem:
        return problem
    pending = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"messages[{index}] must be an object"
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in pending:
                return ORPHAN_TOOL_MESSAGE
            if not isinstance(message.get("content"), str):
                return f"messages[{index}].content must be a string"
            pending.discard(call_id)
            continue
        if pending:
            return UNANSWERED_CALLS
        if role not in ("system", "user", "assistant"):
            return f"messages[{index}].role must be one of system, user, assistant, tool"
        problem = _content_problem(message, index)
        if problem:
            return problem
        if role == "assistant":
            calls = message.get("tool_calls") or []
            problem = _tool_calls_problem(calls, index)
            if problem:
                return problem
            pending = {call["id"] for call in calls}
    return UNANSWERED_CALLS if pending else None


def _parameters_problem(body):
    """The request's other parameters, as the real API checks them."""
    max_tokens = body.get("max_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool)
                                   or not 1 <= max_tokens <= MAX_COMPLETION_TOKENS):
        return f"Invalid max_tokens value, the valid range of max_tokens is [1, {MAX_COMPLETION_TOKENS}]"
    tools = body.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(
            isinstance(tool, dict) and isinstance(tool.get("function"), dict)
            and isinstance(tool["function"].get("name"), str) for tool in tools)):
        return "tools must be an array of {\"type\": \"function\", \"function\": {\"name\": ...}}"
    if body.get("stream") not in (None, False):
        return "This mock does not stream: send \"stream\": false (or leave it out)"
    return None


def _content_problem(message, index):
    """user/system: text or a list of parts; assistant: text, or null when it calls tools."""
    content = message.get("content")
    if isinstance(content, str) or (message.get("role") == "assistant" and content is None):
        return None
    if message.get("role") != "assistant" and isinstance(content, list) and content and all(
            isinstance(part, dict) and isinstance(part.get("type"), str) for part in content):
        return None
    return f"messages[{index}].content must be a string"


def _tool_calls_problem(calls, index):
    if not isinstance(calls, list):
        return f"messages[{index}].tool_calls must be an array"
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not (isinstance(function, dict) and isinstance(call.get("id"), str) and call["id"]
                and isinstance(function.get("name"), str)
                and isinstance(function.get("arguments"), str)):
            return f"messages[{index}].tool_calls: each call needs an id and a function name and arguments"
    ids = [call["id"] for call in calls]
    if len(set(ids)) < len(ids):
        return f"messages[{index}].tool_calls: duplicate tool_call id"
    return None
