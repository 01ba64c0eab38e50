"""The shape of a question-run/1 record, and how verify_ask reads one: as hostile input, strictly.

`read_record` reads question.json only if it is a plain file within RECORD_CAP (cli.read_evidence: never a link,
FIFO or device) and parses it strictly (cli.loads_record: a repeated key, NaN, broken or cut JSON are refused);
`shape_findings` says every field that is missing or of the wrong type, naming the turn, the attempt and the
field. Extra keys are welcome; the names below are fixed. What it shares: cli.py's plumbing only.
"""
import re

from cli import DuplicateKeyError, NotRegularFile, RecordError, TooLarge, loads_record, read_evidence

from .rules import ERRORS, GAVE_UP, RESULT_STATES, SCHEMA, STOPS

RECORD_FILE = "question.json"
RECORD_CAP = 8 * 1024 * 1024  # a question's record is tens of KiB (20 turns of a few calls each)
SHA256 = re.compile(r"[0-9a-f]{64}")
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def _number(value):
    return type(value) in (int, float)


def _integer(low=0):
    return lambda value: type(value) is int and value >= low


def _text(value):
    return type(value) is str


def _maybe(check):
    return lambda value: value is None or check(value)


def _one_of(choices):
    return lambda value: value in choices


# field -> (check, what it should be, in Chinese)
TOP = {"schema": (_text, "文字"), "id": (lambda v: _text(v) and v.isascii() and v.isprintable() and v != "", "ASCII 文字"),
       "question": (_text, "文字"), "model": (lambda v: type(v) is dict, "对象"), "limits": (lambda v: type(v) is dict,
                                                                                        "对象"),
       "started_at": (lambda v: _text(v) and bool(TIMESTAMP.fullmatch(v)), "UTC 时刻（YYYY-MM-DDTHH:MM:SSZ）"),
       "ended_at": (_maybe(lambda v: _text(v) and bool(TIMESTAMP.fullmatch(v))), "UTC 时刻或 null"),
       "turns": (lambda v: type(v) is list, "列表"), "refused": (_maybe(lambda v: type(v) is dict), "对象或 null"),
       "stop": (_one_of(STOPS + ("running",)), "十种停止原因之一或 running"),
       "answer_sha256": (_maybe(lambda v: _text(v) and bool(SHA256.fullmatch(v))), "sha256 或 null"),
       "tokens": (lambda v: type(v) is dict, "对象"), "elapsed": (_maybe(lambda v: _number(v) and v >= 0), "秒数或 null")}
MODEL = {"kind": (_one_of(("api", "demo")), "api 或 demo"), "name": (_text, "文字"), "base_url": (_maybe(_text),
                                                                                            "文字或 null")}
LIMITS = {"max_turns": (_integer(1), "正整数"), "max_tool_failures": (_integer(1), "正整数"),
          "cycle_repeats": (_integer(1), "正整数"), "max_cycle_period": (_integer(1), "正整数"),
          "token_budget": (_maybe(_integer(1)), "正整数或 null"),
          "deadline": (_maybe(lambda v: _number(v) and v > 0), "正的秒数或 null"),
          "timeout": (_maybe(lambda v: _number(v) and v > 0), "正的秒数或 null"),
          "max_retries": (_maybe(_integer(0)), "整数或 null"), "max_tokens": (_maybe(_integer(1)), "正整数或 null")}
TOKENS = {"used": (_integer(0), "非负整数"), "estimated": (lambda v: type(v) is bool, "true 或 false"),
          "budget": (_maybe(_integer(1)), "正整数或 null")}
REFUSED = {"turn": (_integer(1), "正整数"), "bound": (_integer(1), "正整数"), "used": (_integer(0), "非负整数")}
TURN = {"turn": (_integer(1), "正整数"), "attempts": (lambda v: type(v) is list, "列表"),
        "reply": (_maybe(lambda v: type(v) is dict), "对象或 null"), "usage": (_maybe(lambda v: type(v) is dict),
                                                                            "对象或 null"),
        "results": (lambda v: type(v) is list, "列表"), "guards": (_maybe(lambda v: type(v) is dict), "对象或 null"),
        "gave_up": (_maybe(lambda v: type(v) is dict), "对象或 null")}
ATTEMPT = {"retry": (_integer(0), "非负整数"), "body_sha256": (lambda v: _text(v) and bool(SHA256.fullmatch(v)), "sha256"),
           "body_bytes": (_integer(1), "正整数"), "wait": (lambda v: _number(v) and v >= 0, "非负的秒数"),
           "start": (lambda v: _number(v) and v >= 0, "非负的秒数"), "end": (lambda v: _number(v) and v >= 0, "非负的秒数"),
           "limit": (lambda v: _number(v) and v > 0, "正的秒数"), "connected": (lambda v: type(v) is bool, "true 或 false"),
           "status": (_maybe(lambda v: type(v) is int and 100 <= v <= 999), "HTTP 状态码或 null"),
           "error": (_maybe(_one_of(ERRORS)), f"{'、'.join(ERRORS)} 之一或 null"),
           "retry_after": (_maybe(_text), "文字或 null"), "retry_after_ms": (_maybe(_text), "文字或 null"),
           "should_retry": (_maybe(_text), "文字或 null"), "received_at": (_maybe(_number), "秒数或 null"),
           "usage": (_maybe(lambda v: type(v) is dict), "对象或 null"), "charged": (lambda v: type(v) is dict, "对象")}
CHARGED = {"tokens": (_integer(0), "非负整数"), "estimated": (lambda v: type(v) is bool, "true 或 false")}
REPLY = {"finish_reason": (_maybe(_text), "文字或 null"),
         "text_sha256": (lambda v: _text(v) and bool(SHA256.fullmatch(v)), "sha256"),
         "text_blank": (lambda v: type(v) is bool, "true 或 false"), "tool_calls": (lambda v: type(v) is list, "列表")}
CALL = {"id": (lambda v: _text(v) and v != "", "非空文字"), "name": (_text, "文字"), "arguments": (_text, "文字（JSON）")}
RESULT = {"call_id": (_text, "文字"), "name": (_text, "文字"), "is_error": (lambda v: type(v) is bool, "true 或 false"),
          "content_sha256": (lambda v: _text(v) and bool(SHA256.fullmatch(v)), "sha256"),
          "state": (_one_of(RESULT_STATES), "done、interrupted 或 not_run")}
GUARDS = {"failures": (_integer(0), "非负整数"), "cycle_period": (_maybe(_integer(1)), "正整数或 null"),
          "repeat_seen": (_maybe(_integer(1)), "正整数或 null"), "reminded": (lambda v: type(v) is bool, "true 或 false")}
GAVE_UP_FIELDS = {"why": (_one_of(GAVE_UP), f"{'、'.join(GAVE_UP)} 之一"),
                  "wait": (_maybe(lambda v: _number(v) and v >= 0), "非负的秒数或 null"), "left": (_number, "秒数")}


def read_record(path):
    """(record, None) or (None, (kind, fields)): the record in PATH, read as hostile input."""
    where = str(path)
    try:
        record = loads_record(read_evidence(path, RECORD_CAP))
    except NotRegularFile as exc:
        return None, ("not_plain", {"where": where, "kind": exc.kind})
    except TooLarge as exc:
        return None, ("too_large", {"where": where, "cap": exc.cap})
    except DuplicateKeyError as exc:
        return None, ("duplicate_key", {"where": where, "key": repr(exc.key)})
    except RecordError as exc:
        return None, ("not_json", {"where": where, "error": str(exc)})
    except OSError as exc:
        return None, ("unreadable", {"where": where, "error": exc.strerror or type(exc).__name__})
    if type(record) is not dict:
        return None, ("not_object", {"where": where})
    if record.get("schema") != SCHEMA:
        return None, ("schema", {"where": where, "value": shown(record.get("schema"))})
    return record, None


def shown(value, limit=60):
    """VALUE as the record has it, short and on one line (a record is hostile: never echo it whole)."""
    import json
    text = json.dumps(value, ensure_ascii=False) if value is not ... else "（缺少这个键）"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _fields(verdict, obj, table, where):
    """Each key of TABLE that OBJ lacks or holds with the wrong type; True when all are right."""
    right = True
    for key, (check, expected) in table.items():
        value = obj.get(key, ...)
        if value is ... or not check(value):
            verdict.add("field", where=f"{where}{key}", expected=expected, value=shown(value))
            right = False
    return right


def shape_findings(verdict, record):
    """Add a `field` finding for every field of RECORD that is missing or of the wrong type; True when none is."""
    right = _fields(verdict, record, TOP, "")
    for key, table in (("model", MODEL), ("limits", LIMITS), ("tokens", TOKENS), ("refused", REFUSED)):
        if type(record.get(key)) is dict:
            right = _fields(verdict, record[key], table, f"{key}.") and right
    for number, turn in enumerate(record.get("turns") if type(record.get("turns")) is list else [], 1):
        right = _turn_shape(verdict, turn, f"第 {number} 轮的 ") and right
    return right


def _turn_shape(verdict, turn, where):
    if type(turn) is not dict:
        verdict.add("field", where=where.rstrip("的 "), expected="对象", value=shown(turn))
        return False
    right = _fields(verdict, turn, TURN, where)
    for index, attempt in enumerate(turn.get("attempts") if type(turn.get("attempts")) is list else [], 1):
        at = f"{where.removesuffix('的 ')}第 {index} 次尝试的 "
        right = _object(verdict, attempt, ATTEMPT, at) and right
        if type(attempt) is dict and type(attempt.get("charged")) is dict:
            right = _fields(verdict, attempt["charged"], CHARGED, f"{at}charged.") and right
    reply = turn.get("reply")
    if type(reply) is dict:
        right = _fields(verdict, reply, REPLY, f"{where}reply.") and right
        for index, call in enumerate(reply.get("tool_calls") if type(reply.get("tool_calls")) is list else [], 1):
            right = _object(verdict, call, CALL, f"{where}reply.tool_calls[{index - 1}].") and right
    for index, result in enumerate(turn.get("results") if type(turn.get("results")) is list else [], 1):
        right = _object(verdict, result, RESULT, f"{where}results[{index - 1}].") and right
    for key, table in (("guards", GUARDS), ("gave_up", GAVE_UP_FIELDS)):
        if type(turn.get(key)) is dict:
            right = _fields(verdict, turn[key], table, f"{where}{key}.") and right
    return right


def _object(verdict, obj, table, where):
    if type(obj) is not dict:
        verdict.add("field", where=where.rstrip("的. "), expected="对象", value=shown(obj))
        return False
    return _fields(verdict, obj, table, where)
