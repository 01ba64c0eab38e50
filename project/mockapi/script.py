"""The mock's script mode: replies and failures served in order, read from a JSON file (`--script FILE`).

FILE is a JSON list. Each item is a reply `{"content", "tool_calls": [{"name", "arguments": {...}}],
"finish_reason", "usage": true|false}` (every key optional: no calls, content "", finish_reason "tool_calls" when
there are calls and "stop" otherwise, usage true) or a failure `{"status": N, "error": "message", "headers":
{...}}` (status 400-599, headers optional). Request n of a session takes item n; the last item repeats.
`load_script` reads and checks a file, `script_problem` checks a list (a Chinese sentence naming the item and the
field); `item_for` picks a request's item. Part of project/mock_model.py, which turns an item into its reply.
"""
REPLY_KEYS = ("content", "tool_calls", "finish_reason", "usage")
FAILURE_KEYS = ("status", "error", "headers")
MAX_ITEMS = 1000


def load_script(path) -> list:
    """The script in PATH; ValueError with a Chinese message when it cannot be served."""
    from pathlib import Path

    from cli import RecordError, loads_record  # the workspace's strict JSON (mock_model.main puts it on the path)
    try:
        script = loads_record(Path(path).read_bytes())
    except OSError as exc:
        raise ValueError(f"读不出脚本文件 {path}（{exc.strerror or type(exc).__name__}）。") from None
    except RecordError as exc:
        raise ValueError(f"脚本文件 {path} {exc}。") from None
    problem = script_problem(script)
    if problem:
        raise ValueError(f"脚本文件 {path}：{problem}")
    return script


def script_problem(script):
    """Why SCRIPT (parsed JSON) cannot be served, in Chinese; None when it can."""
    if not isinstance(script, list) or not 1 <= len(script) <= MAX_ITEMS:
        return f"应是一个 JSON 列表，含 1 到 {MAX_ITEMS} 项（每项一个回答或一次失败）。"
    for number, item in enumerate(script, 1):
        problem = _item_problem(item)
        if problem:
            return f"第 {number} 项{problem}"
    return None


def _item_problem(item):
    if not isinstance(item, dict):
        return "不是 JSON 对象。"
    keys = FAILURE_KEYS if "status" in item else REPLY_KEYS
    extra = [key for key in item if key not in keys]
    if extra:
        return f"有不认识的键 {extra[0]!r}（{'失败' if 'status' in item else '回答'}只有 {'、'.join(keys)}）。"
    if "status" in item:
        return _failure_problem(item)
    if not isinstance(item.get("content", ""), (str, type(None))):
        return "的 content 应是文字或 null。"
    if not isinstance(item.get("finish_reason", "stop"), str) or not isinstance(item.get("usage", True), bool):
        return "的 finish_reason 应是文字、usage 应是 true 或 false。"
    calls = item.get("tool_calls", [])
    if not isinstance(calls, list) or not all(
            isinstance(call, dict) and set(call) <= {"name", "arguments"} and isinstance(call.get("name"), str)
            and isinstance(call.get("arguments", {}), dict) for call in calls):
        return "的 tool_calls 应是 [{\"name\": 工具名, \"arguments\": {...}}] 这样的列表。"
    return None


def _failure_problem(item):
    status = item["status"]
    if type(status) is not int or not 400 <= status <= 599:
        return "的 status 应是 400 到 599 的整数。"
    if not isinstance(item.get("error", ""), str):
        return "的 error 应是文字（服务端的说明）。"
    headers = item.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(value, str) and name.isascii() and name.strip()
                                                for name, value in headers.items()):
        return "的 headers 应是 {\"retry-after\": \"1\"} 这样名字和值都是文字的对象。"
    return None


def item_for(script, n):
    """The item request N (1-based) of a session takes: the N-th, or the last once the script has run out."""
    return script[min(n, len(script)) - 1]
