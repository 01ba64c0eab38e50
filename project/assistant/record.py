"""A question's record (schema question-run/1): what its loop did, kept on disk as it happens.

`QuestionRecorder` listens to the loop (`on_event`, the agent's events) and to the real client's HTTP attempts
(`on_attempt`, the client's hook) and keeps the record of one question: every turn, every attempt with its retry
number, body hash and size, wait, offsets, status and what it was charged, the reply (hashes, finish reason, tool
calls), each call's result, the guards' counters, why no further attempt was made, the stop. It is written
atomically (cli.write_json_atomic) when the question starts, after every reply and every round, and at the end;
until then `stop` is "running". After a Ctrl-C the attempt in flight ends "unknown"; the results recorded are
the ones the loop gave (a call it sealed after a Ctrl-C has none here). The tokens recorded are what the
attempts were charged. docs/assistant/DESIGN.md
describes the record; project/verify_ask.py checks it without importing any of this.

Another caller (a loop that asks a model) gives its own path and kind: `QuestionRecorder(path, record_id,
question, model, limits, kind="proposal")`, then `attach(model)` (the client's hook and its x-question-run
header; a caller's own hook before each request wraps `recorder.on_attempt`), `start()`, the loop with
`on_event=recorder.listener()`, and `finish(outcome)`. `open_record` is the app's way: it claims ask-runs/NAME
under the workspace's name rule and writes the first record there.
Shared with: `app.py` (open_record, records_root), `client` (its on_attempt hook and run_id).
"""
import hashlib
import os
import time
import urllib.parse
from pathlib import Path

SCHEMA = "question-run/1"
RECORD_FILE = "question.json"
MAX_CHAT_RECORDS = 99  # NAME-01 ... NAME-99
ROUND_TO = 3  # offsets in seconds, to the millisecond
ATTEMPT_FIELDS = ("end", "connected", "status", "error", "retry_after", "retry_after_ms", "should_retry",
                  "received_at", "usage", "charged")


class RecordNameError(ValueError):
    """A --record name that cannot be used (its rule, or already used): the message is Chinese."""


def records_root() -> Path:
    """Where question records go: ask-runs/ at the workspace root (ASK_RUNS_DIR elsewhere, for the acceptance check)."""
    return Path(os.environ.get("ASK_RUNS_DIR") or Path(__file__).resolve().parents[2] / "ask-runs")


def sha256_text(text) -> str:
    return hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()


def _rounded(value):
    return round(value, ROUND_TO) if isinstance(value, float) else value


def _wall(moment) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def model_view(model) -> dict:
    """Which model answered: kind, name and the base URL without key, query or fragment."""
    if model.offline:
        return {"kind": "demo", "name": model.name, "base_url": None}
    parts = urllib.parse.urlsplit(model.base_url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{parts.port}" if parts.port else ""
    base_url = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return {"kind": "api", "name": model.name, "base_url": base_url}


def limits_view(model, limits) -> dict:
    """The limits this question is judged against: the loop's and (for the real API) the client's."""
    client = (lambda name: None) if model.offline else (lambda name: getattr(model, name))
    return {"max_turns": limits.max_turns, "max_tool_failures": limits.max_tool_failures,
            "cycle_repeats": limits.cycle_repeats, "max_cycle_period": limits.max_cycle_period,
            "token_budget": limits.max_tokens, "deadline": client("deadline"), "timeout": client("timeout"),
            "max_retries": client("max_retries"), "max_tokens": client("max_tokens")}


def write_replacing(path, record):
    """RECORD as UTF-8 JSON on one line, renamed into place, without the sync: the writes between the first and the
    last. One line, because json's C encoder only writes it so: indented, a 20-turn record costs ~5 ms a write."""
    import json
    tmp = Path(f"{path}.tmp")
    with open(tmp, "wb") as file:
        file.write((json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
    os.replace(tmp, path)


class QuestionRecorder:
    """One question's record at PATH (written by WRITE, cli.write_json_atomic by default)."""

    def __init__(self, path, record_id, question, model, limits, *, kind="question", wall=time.time, write=None):
        if write is None:
            from cli import write_json_atomic
            self.write, self.write_unsynced = write_json_atomic, write_replacing
        else:  # the caller's own (e.g. kept in memory)
            self.write = self.write_unsynced = write
        self.path, self.wall, self.model = path, wall, model
        began = time.monotonic()
        # the real client counts from the question's deadline; the demo model has none, so its own clock
        self.offset = (lambda: time.monotonic() - began) if model.offline else model.offset
        self.turn, self.write_error = None, None
        self.record = {"schema": SCHEMA, "id": record_id, "kind": kind, "question": question,
                       "model": model_view(model), "limits": limits_view(model, limits),
                       "started_at": _wall(wall()), "ended_at": None, "turns": [], "refused": None, "stop": "running",
                       "answer_sha256": None, "requests": 0,
                       "clock_resolution": time.get_clock_info("monotonic").resolution,
                       "tokens": {"used": 0, "estimated": False, "budget": limits.max_tokens}, "elapsed": None}

    def attach(self, model):
        """Hear MODEL's HTTP attempts and name this record in its requests (the demo model sends none)."""
        if not model.offline:
            model.on_attempt, model.run_id = self.on_attempt, self.record["id"]

    def detach(self, model):
        if not model.offline:
            model.on_attempt = model.run_id = None

    def start(self, path=None):
        self.save(path)

    def save(self, path=None, synced=False):
        """Write the record; a later write that fails (a full disk) is said at the end, the question goes on.

        The first and the last write are synced to disk (cli.write_json_atomic); the ones between are whole files
        renamed into place but not synced: a killed process leaves the last one whole, and a sync costs a disk
        ~10 ms (twice a turn). Only a crash of the whole system could lose the writes since the first.
        """
        if path is not None:  # the first record: a failure here is the caller's (nothing was asked yet)
            return self.write(path, self.record)
        try:
            (self.write if synced else self.write_unsynced)(self.path, self.record)
        except OSError as exc:
            self.write_error = exc

    def listener(self, also=None):
        """The loop's on_event: this record's, then ALSO's (the terminal's, say)."""
        def hear(kind, data):
            self.on_event(kind, data)
            if also is not None:
                also(kind, data)
        return hear

    # ---- the loop's events ----

    def on_event(self, kind, data):
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(data)

    def _on_request(self, data):
        self.turn = {"turn": data["turn"], "attempts": [], "reply": None, "usage": None, "results": [],
                     "guards": None, "gave_up": None}
        self.record["turns"].append(self.turn)

    def _on_reply(self, data):
        text = data["content"] if isinstance(data["content"], str) else ""
        self.turn["reply"] = {"finish_reason": data["finish_reason"], "text_sha256": sha256_text(text),
                              "text_blank": not text.strip(),
                              "tool_calls": [{"id": call["id"], "name": call["function"]["name"],
                                              "arguments": call["function"]["arguments"]}
                                             for call in data["tool_calls"]]}
        attempts = self.turn["attempts"]
        self.turn["usage"] = attempts[-1]["usage"] if attempts else None
        self.save()

    def _on_tool_result(self, data):
        self.turn["results"].append({"call_id": data["id"], "name": data["name"], "is_error": data["is_error"],
                                     "content_sha256": sha256_text(data["content"]), "state": data["state"]})

    def _on_round(self, data):
        self.turn["guards"] = {key: data[key] for key in ("failures", "cycle_period", "repeat_seen", "reminded")}
        self.save()

    def _on_refused(self, data):
        """The token budget did not admit a request: a first attempt never sent is no turn at all."""
        self.record["refused"] = dict(data)
        if self.turn is not None and self.turn["turn"] == data["turn"]:
            self.drop_unsent_turn()

    def drop_unsent_turn(self):
        """A budget kept the current turn's first request unsent (the token budget, or a caller's own budget of
        requests): a turn without a single attempt is no turn at all."""
        turn = self.turn
        if turn is not None and not turn["attempts"] and turn["reply"] is None:
            self.record["turns"].remove(turn)
            self.turn = None

    # ---- the client's attempts ----

    def on_attempt(self, kind, data):
        if self.turn is None:
            return
        attempts = self.turn["attempts"]
        if kind == "before":
            attempts.append({"retry": data["retry"], "body_sha256": data["body_sha256"],
                             "body_bytes": data["body_bytes"], "wait": _rounded(data["wait"]),
                             "start": _rounded(data["start"]), "limit": _rounded(data["limit"]),
                             **dict.fromkeys(ATTEMPT_FIELDS), "connected": False,
                             "charged": {"tokens": 0, "estimated": False}})
            self.record["requests"] += 1
        elif kind == "after" and attempts:
            attempts[-1].update({key: _rounded(data[key]) for key in ATTEMPT_FIELDS if key in data})
        elif kind == "gave_up":
            self.turn["gave_up"] = {key: _rounded(data[key]) for key in ("why", "wait", "left")}

    # ---- the end ----

    def finish(self, outcome) -> str:
        """The last write (the stop, the answer's hash, the tokens the attempts were charged, the time taken), the
        model detached; the line that tells the person where the record is (or that it could not be written)."""
        self._seal()
        attempts = [attempt for turn in self.record["turns"] for attempt in turn["attempts"]]
        self.record.update(stop=outcome.stop, ended_at=_wall(self.wall()), answer_sha256=sha256_text(outcome.answer),
                           elapsed=_rounded(self.offset()))
        self.record["tokens"].update(used=sum(attempt["charged"]["tokens"] for attempt in attempts),
                                     estimated=any(attempt["charged"]["estimated"] for attempt in attempts))
        self.detach(self.model)
        self.save(synced=True)
        if self.path is None:  # kept in memory only (the stop corpus)
            return None
        from cli import command, display_path
        if self.write_error is not None:
            return (f"注意：记录 {display_path(self.path)} 没能写完（{self.write_error.strerror or '写入出错'}），"
                    "里面是最后一次写成的样子。")
        checker = Path(__file__).resolve().parents[1] / "verify_ask.py"
        return f"记录：{display_path(self.path)}（核对：{command(checker, self.path.parent)}）"

    def _seal(self):
        """An attempt a Ctrl-C (or a defect) cut off has no end: it ends now, its outcome unknown."""
        for attempt in self.turn["attempts"] if self.turn is not None else ():
            if attempt["end"] is None:
                attempt.update(end=_rounded(self.offset()), error=attempt["error"] or "unknown")


def open_record(name, question, model, max_tokens=None, chat=False):
    """ask / chat --record NAME: the question's recorder, attached to MODEL, its first record written in
    ask-runs/NAME (in a chat, the next free NAME-NN). With MODEL None, only says (RecordNameError) whether NAME can
    be used, before anything is asked. The folder is claimed as one step (cli.create_record_folder): a name used in
    any case is refused, and nothing is overwritten."""
    from cli import NameTaken, create_record_folder
    from .agent import Limits
    root = records_root()
    if model is None:
        problem = record_name_problem(root, name, chat)
        if problem:
            raise RecordNameError(problem)
        return None
    if chat:
        name = next_chat_name(root, name)
    recorder = QuestionRecorder(None, name, question, model, Limits(max_tokens=max_tokens))
    try:
        folder = create_record_folder(root, name, lambda claim: recorder.start(claim / RECORD_FILE))
    except NameTaken as exc:
        raise RecordNameError(f"--record：{name_in_use(exc)}") from None
    except OSError as exc:
        raise RecordNameError(f"--record：无法在 {root} 里建记录（{exc.strerror or type(exc).__name__}）。") from None
    recorder.path = folder / RECORD_FILE
    recorder.attach(model)
    return recorder


def next_chat_name(root, name):
    """The chat's next record name: NAME-01, NAME-02 ... the first one not yet used, at most NAME-99."""
    try:
        used = {entry.lower() for entry in os.listdir(root)}
    except OSError:
        used = set()
    free = (f"{name}-{number:02d}" for number in range(1, MAX_CHAT_RECORDS + 1))
    found = next((candidate for candidate in free if candidate.lower() not in used), None)
    if found is None:
        raise RecordNameError(f"--record：一段对话最多记录 {MAX_CHAT_RECORDS} 个问题（{name}-01 到 {name}-{MAX_CHAT_RECORDS}），"
                              "这一问没有提出；请用新的 --record 名称重新开始对话。")
    return found


def record_name_problem(root, name, chat=False):
    """Why --record NAME cannot be used (its rule; NAME used in any case; for a chat, also a NAME-NN), in Chinese;
    None when it can. Claiming the folder checks again: this only says it before anything is asked."""
    from harness import name_problem
    problem = name_problem(name, 64 - len("-NN") if chat else 64)
    if problem:
        return f"--record：{problem}"
    try:
        entries = os.listdir(root)
    except OSError:  # no ask-runs/ yet: nothing is used
        return None
    wanted = name.lower()
    used = sorted(entry for entry in entries if entry.lower() == wanted or chat and (
        entry.lower()[:-3] == wanted and entry[-3] == "-" and entry[-2:].isascii() and entry[-2:].isdigit()))
    if not used:
        return None
    said = f"这段对话的记录会叫 {name}-01、{name}-02……，" if chat else ""
    return f"--record：{Path(root).name}/{used[0]} 已经存在：记录是证据，不会被覆盖；{said}请换一个名称。"


def name_in_use(exc) -> str:
    if exc.busy:
        return "另一个程序正在用这个名称建记录，请换一个名称。"
    return f"{exc.path} 已经存在：记录是证据，不会被覆盖，请换一个名称。"
