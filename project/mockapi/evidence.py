"""The mock's own evidence (`--log FILE`): one JSON line per model request it receives, as it receives it.

A line is written once the reply is decided and before any byte of it is sent (a slow reply is logged before its
wait), and flushed at once, so what the server received is on disk whatever the client does next. It is the
server's word, shared with nobody: project/verify_ask.py reconciles a question record with it. Each line:
`number` (the server's count of model requests), `mode`, `session`, `run` (the x-question-run header, or null),
`at` (seconds on the server's own monotonic clock since it started, 3 decimals), `retry_count`
(x-stainless-retry-count as an integer, or null), `body_sha256`, `body_bytes`, `status` (what it sends), and of
the reply `finish_reason`, `tool_calls` [{id, name, arguments}] and `text_sha256` (of its content), plus
`tool_results` [{call_id, content_sha256, error}]: the tool messages of the request that answer its last tool
calls (`error` when the content begins with 错误：, the notes assistant's mark of a failed tool) and `delivery`
(null, trickle or cut-off). The file is opened for appending: earlier lines are never touched.
"""
import hashlib
import json
import threading
import time

FAILED_TOOL = "错误："  # how the notes assistant begins the result of a failed tool call


def sha256_text(text) -> str:
    return hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()


class RequestLog:
    """The log file, written one whole line at a time under a lock (requests are served by many threads)."""

    def __init__(self, path, clock=time.monotonic):
        self.file = open(path, "ab")  # bytes: "\n" on every system
        self.lock = threading.Lock()
        self.clock = clock
        self.started = clock()

    def write(self, **fields):
        with self.lock:  # read under the lock: the file's order is the order of the times
            fields["at"] = round(self.clock() - self.started, 3)
            self.file.write((json.dumps(fields, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass"))
            self.file.flush()

    def close(self):
        with self.lock:
            self.file.close()


def reply_view(payload) -> dict:
    """What the reply says, from the JSON the mock sends: finish reason, tool calls, the content's hash."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    calls = [{"id": call.get("id"), "name": call["function"].get("name"),
              "arguments": call["function"].get("arguments")}
             for call in message.get("tool_calls") or [] if isinstance(call.get("function"), dict)]
    content = message.get("content")
    return {"finish_reason": choice.get("finish_reason"), "tool_calls": calls,
            "text_sha256": sha256_text(content if isinstance(content, str) else "") if message else None}


def results_view(body) -> list:
    """The tool messages answering the request's last assistant tool calls (the round just run), in order."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return []
    last = max((index for index, message in enumerate(messages)
                if isinstance(message, dict) and message.get("role") == "assistant" and message.get("tool_calls")),
               default=None)
    if last is None:
        return []
    results = []
    for message in messages[last + 1:]:
        if not isinstance(message, dict) or message.get("role") != "tool":
            break
        content = message.get("content") if isinstance(message.get("content"), str) else ""
        results.append({"call_id": message.get("tool_call_id"), "content_sha256": sha256_text(content),
                        "error": content.startswith(FAILED_TOOL)})
    return results
