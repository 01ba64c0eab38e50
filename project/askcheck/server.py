"""Reconcile a question record with the mock server's own log (`mock_model.py --log FILE`).

The log is the server's word: one JSON line per request it received, written before it answered. Every
recorded attempt that got a response must match, in order, one line of the record's `run` (the x-question-run
header) with the same body hash, retry count and status; a successful one, the same finish reason, tool calls
and text; the tool results a request carried must be the ones the record gives the round before; the server
must have seen each retry no sooner than the recorded wait; and no line of the record's run may be missing from
the record (a hidden retry). An attempt that never got a response (refused connection, timeout, Ctrl-C) may
have no line. `read_log` reads the file as hostile input (a plain file, capped, strict JSON per line).
What it shares: cli.py's plumbing only.
"""
import urllib.parse

from cli import RecordError, loads_record, read_evidence

LOG_CAP = 64 * 1024 * 1024
LINE_KEYS = {"number": (int, type(None)), "run": (str, type(None)), "at": (int, float),
             "retry_count": (int, type(None)), "body_sha256": (str,), "status": (int,),
             "finish_reason": (str, type(None)), "tool_calls": (list,), "text_sha256": (str, type(None)),
             "tool_results": (list,)}
NO_LINE_NEEDED = ("connection", "timeout", "unknown")  # the request may never have reached the server


class ServerLog:
    """The lines of one log file, or the finding that kept it from being read (every record then hears it)."""

    def __init__(self, path):
        self.path, self.lines, self.findings = str(path), [], []
        try:
            data = read_evidence(path, LOG_CAP)
        except OSError as exc:
            self.findings.append(("log_unreadable", {"where": self.path, "error": str(exc)}))
            return
        text_lines = data.split(b"\n")
        for number, raw in enumerate(text_lines, 1):
            if not raw.strip():
                continue
            line = self.parse(raw, number, last=number == len(text_lines))
            if line is not None:
                line["_line"] = number
                self.lines.append(line)
        self.check_order()

    def parse(self, raw, number, last):
        try:
            line = loads_record(raw)
        except RecordError as exc:
            if last and exc.kind == "cut":  # the mock killed while writing its last line
                self.findings.append(("log_cut", {"where": self.path}))
            else:
                self.findings.append(("log_line", {"where": self.path, "line": number, "why": str(exc)}))
            return None
        if type(line) is not dict or any(type(line.get(key, ...)) not in kinds for key, kinds in LINE_KEYS.items()):
            self.findings.append(("log_line", {"where": self.path, "line": number, "why": "缺少字段或类型不对"}))
            return None
        return line

    def check_order(self):
        numbers, before = set(), None
        for line in self.lines:
            if before is not None and line["at"] < before["at"]:
                self.findings.append(("log_backwards", {"line": line["_line"], "value": line["at"],
                                                        "before": before["at"]}))
            before = line
            if line["number"] is not None:
                if line["number"] in numbers:
                    self.findings.append(("log_number", {"value": line["number"]}))
                numbers.add(line["number"])

    def of_run(self, run):
        return [line for line in self.lines if line["run"] == run]


def reconcile(verdict, record, log, tolerance):
    """Add to VERDICT what the server's LOG says against RECORD (a record that passed its own checks or not)."""
    for kind, fields in log.findings:
        verdict.add(kind, **fields)
    lines = log.of_run(record["id"])
    where_from = _session_of(record["model"]["base_url"])
    position, previous = 0, None  # previous: (the attempt, its line)
    for number, turn in enumerate(record["turns"], 1):
        for index, attempt in enumerate(turn["attempts"], 1):
            where = f"第 {number} 轮第 {index} 次尝试（retry {attempt['retry']}）"
            line = lines[position] if position < len(lines) else None
            if line is not None and (line["body_sha256"], line["retry_count"]) == (attempt["body_sha256"],
                                                                                 attempt["retry"]):
                position += 1
                _compare(verdict, where, attempt, turn, line, where_from)
                _check_results(verdict, where, record["turns"][number - 2] if number > 1 else None, line)
                if previous is not None and attempt["retry"] > 0 and previous[0] is turn["attempts"][index - 2]:
                    gap = line["at"] - previous[1]["at"]
                    if gap < attempt["wait"] - tolerance:
                        verdict.add("log_gap", where=where, gap=gap, wait=attempt["wait"])
                previous = (attempt, line)
            elif attempt["status"] is not None or attempt["error"] not in NO_LINE_NEEDED:
                verdict.add("log_missing", where=where, status=attempt["status"], run=record["id"])
                previous = None
            else:
                previous = None
    for line in lines[position:]:
        kind = "log_extra_running" if record["stop"] == "running" else "log_extra"
        verdict.add(kind, line=line["_line"], run=record["id"], retry=line["retry_count"], status=line["status"])


def _session_of(base_url):
    """(mode, session) the base URL names for the mock (/mode/M/s/S), either None when it names none."""
    parts = [part for part in urllib.parse.urlsplit(base_url or "").path.split("/") if part]
    mode = parts[parts.index("mode") + 1] if "mode" in parts[:-1] else None
    session = parts[parts.index("s") + 1] if "s" in parts[:-1] else None
    return mode, session


def _compare(verdict, where, attempt, turn, line, where_from):
    differs = []
    if attempt["status"] is not None and attempt["status"] != line["status"]:
        differs.append(("status", attempt["status"], line["status"]))
    for field, value in zip(("mode", "session"), where_from):
        if value is not None and line.get(field) != value:
            differs.append((field, value, line.get(field)))
    reply = turn["reply"]
    if attempt is turn["attempts"][-1] and reply is not None and attempt["error"] is None:
        calls = [(call["id"], call["name"], call["arguments"]) for call in reply["tool_calls"]]
        sent = [(call.get("id"), call.get("name"), call.get("arguments")) for call in line["tool_calls"]
                if isinstance(call, dict)]
        differs += [(field, mine, theirs) for field, mine, theirs in (
            ("finish_reason", reply["finish_reason"], line["finish_reason"]), ("tool_calls", calls, sent),
            ("text_sha256", reply["text_sha256"], line["text_sha256"])) if mine != theirs]
    for field, mine, theirs in differs:
        verdict.add("log_differs", where=where, field=field, line=line["_line"], value=_short(mine),
                    expected=_short(theirs))


def _check_results(verdict, where, before, line):
    """The tool results this request carried (the server saw them) are the round before's, as recorded."""
    if before is None or before["guards"] is None:
        return
    mine = [(result["call_id"], result["content_sha256"], result["is_error"]) for result in before["results"]]
    theirs = [(result.get("call_id"), result.get("content_sha256"), result.get("error"))
              for result in line["tool_results"] if isinstance(result, dict)]
    if mine != theirs:
        verdict.add("log_differs", where=where, field="上一轮的工具结果（call_id、content_sha256、is_error）",
                    line=line["_line"], value=_short(mine), expected=_short(theirs))


def _short(value, limit=80):
    text = str(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"
