"""The shape of a loop record: every field there, of its type, within its range, and no field its loop never wrote.

Part of verify_loop (the command line); verifier/check.py asks `shape_problems` about a record of today's schema
(records.CURRENT) and verifier/older.py about one of an older schema of today's fields (loop-run/2 and /3). It
judges each field on its own; how the readings add up is verifier/clocks.py's, and what the record says against
its children is verifier/check.py's. It does not import loop_lab.py, harness.py, export_review.py or machinery/;
what it shares is verifier/records.py's copy of the rules (the schemas, scenarios, stops, name rule, hashing).
"""
from verifier.records import (BUDGET_KEYS, CHILD_STATUSES, CURRENT, DECISION_STOPS, DECISIONS, ENDED_KEYS, ENDINGS,
                              FOUND, HANDOFF_KEYS, INNER_KEYS, MAX_ATTEMPTS, MAX_READING, MIN_DECISION, MODEL,
                              MODEL_ENTRY_KEYS, RECORD_ID, REASONS, RESUME_KEYS, RESUMED_KEYS, SAMPLES, SCRIPT,
                              SEGMENT_KEYS, SHA256, TIMEOUT_RANGE, UNDECIDED, combined_fingerprint, is_int,
                              is_loop_name, is_number, is_reading, moment, one_line, shown)


def decision_problem(where, decision, last, status, keys=CURRENT.decision_keys):
    """The shape of an attempt's decision: null only where the loop may not have decided yet; KEYS, its fields
    (loop-run/4 on: the reading taken when it was made, decided_offset)."""
    if decision is None:
        if last and status in UNDECIDED:
            return None
        return (f"{where} 没有记录决定（decision 为 null）：只有记录仍是 running、被中断或 needs_human 时，"
                "最后一次尝试才可以没有决定。")
    shaped = type(decision) is dict and (decision.get("next"), decision.get("reason")) in DECISIONS
    read = "decided_offset" not in keys or (type(decision) is dict and is_reading(decision.get("decided_offset")))
    if not shaped or not read or type(decision.get("why")) is not str or not decision["why"].strip():
        return (f"{where} 的 decision 是 {shown(decision)}：应为 {{{', '.join(keys)}}}，继续时是 continue/first_failure，"
                f"停止时是 stop 加上停止原因（{'、'.join(DECISION_STOPS)}），why 是不为空的说明"
                + ("，decided_offset 是做决定时单调时钟的读数。" if "decided_offset" in keys else "。"))
    return None


def attempt_timeout_ok(budget):
    """budget.attempt_timeout: null (attempts run in-process) or seconds within TIMEOUT_RANGE."""
    limit = budget.get("attempt_timeout")
    return limit is None or (is_number(limit) and TIMEOUT_RANGE[0] <= limit <= TIMEOUT_RANGE[1])


def timeout_problem(where, entry, budget):
    """A timeout is recorded exactly for a timed_out attempt, with the budget's limit, the wait and an inventory."""
    timeout, timed_out = entry["timeout"], entry["state"] == "timed_out"
    if timeout is None and not timed_out:
        return None
    if timed_out and type(timeout) is dict and is_number(timeout.get("seconds")) \
            and timeout["seconds"] == budget.get("attempt_timeout") \
            and is_number(timeout.get("waited_seconds")) and timeout["waited_seconds"] >= 0 \
            and type(timeout.get("inventory")) is dict:
        return None
    return (f"{where} 的 timeout 是 {shown(timeout)}、state 是 {shown(entry['state'])}：只有 timed_out 的尝试记录 timeout，"
            f"且必须有 seconds（等于 budget.attempt_timeout {shown(budget.get('attempt_timeout'))}）、"
            "waited_seconds 和 inventory。")


# --- the shape of a record ---------------------------------------------------------------------------

def shape_problems(record, name, schema=CURRENT):
    """(blocking, other): what is wrong with the shape of a record of SCHEMA (records.Schema: today's, or an older
    one of today's fields, over the watched files of its day), in Chinese naming the field.

    BLOCKING problems keep the record from being read further: the checks that follow rely on those
    fields. OTHER problems do not, so the recorded stop is still compared with the evidence.
    """
    if type(record) is not dict:
        return [f"loop.json 应为一个 JSON 对象（{schema.name} 记录）。"], []
    missing = [key for key in schema.keys if key not in record]
    if missing:
        return [f"loop.json 缺少字段：{'、'.join(missing)}。"], []
    checks, fields = field_checks(record, name, schema), ShownFields(record, folder=shown(name))
    blocking = [message.format_map(fields) for holds, message, blocks in checks if blocks and not holds]
    other = [message.format_map(fields) for holds, message, blocks in checks if not blocks and not holds]
    inner = dict(INNER_KEYS, budget=schema.budget_keys)
    other += [problem for problem in [unknown_fields_problem("loop.json", record, schema.keys, inner,
                                                             schema.name)] if problem]
    if blocking:
        return blocking, other
    found = (attempt_problem(number, entry, record, schema) for number, entry in enumerate(record["attempts"], 1))
    first = next((problem for problem in found if problem), None)  # later ones follow from the first
    return ([first] if first else []), other


def field_checks(record, name, schema=CURRENT):
    """(holds, message, blocks) for every top-level field of a record of SCHEMA; see shape_problems.

    A message names the record's fields as {field}: they are written out (as JSON) only for a check that fails.
    """
    status, reason, files, reasons = record["status"], record["reason"], schema.files, schema.reasons
    budget, context, blocked = record["budget"], record["context"], record["blocked_proposal"]
    known_status = type(status) is str and status in reasons
    calls = record["actual_api_calls"]
    segments = [(segments_ok(record), "segments 是 {segments}：应为循环的单调时钟运行过的各段（从未续跑的循环只有一段），"
                 "每段有 started_at（UTC 时间）、started_offset（第一段是 0）、wall_minus_monotonic（与单调时钟原点同时"
                 "读的日历时间，秒）和 elapsed_seconds；续跑过的，除最后一段外每段还有 ended（" + "、".join(ENDINGS)
                 + "）和 lower_bound（只有 killed 是 true），除第一段外每段还有 after_attempt 和 gap_seconds；"
                 "只有刚认领名称、还没有任何读数的 running 记录是空的。", True)
                ] if "segments" in schema.keys else []
    return segments + [
        (record["schema"] == schema.name, "schema 是 {schema}，应为 " + schema.name + "。", True),
        (type(record["id"]) is str and bool(RECORD_ID.fullmatch(record["id"])),
         "id 是 {id}：应为循环建立记录时随机生成的 32 位小写十六进制。", False),
        (record["run"] == name and is_loop_name(name), "run 是 {run}，与目录名 {folder} 不符（或不是合法的循环名）。", True),
        (type(record["scenario"]) is str and record["scenario"] in schema.scenarios,
         "scenario 是 {scenario}，不是已知情景（" + "、".join((*SCRIPT, MODEL)) + "）。", True),
        (budget_ok(budget), "budget 是 {budget}：max_attempts 应为 1-5 的整数，max_seconds 应为 0-300 秒，"
                            "attempt_timeout 为 null 或 0.1-300 秒。", True),
        (known_status, "status 是 {status}，不是循环的状态（" + "、".join(reasons) + "）。", True),
        (not known_status or reason in reasons[status], "reason 是 {reason}，与 status {status} 不配。", False),
        (error_type_ok(record["error_type"], reason),
         "error_type 是 {error_type}：只有 unexpected_error 才记录 error_type，且必须记录。", True),
        (record["semantic_review"] == "pending", "semantic_review 是 {semantic_review}：循环从不判断内容，只能是 pending。",
         False),
        (is_int(calls) and (calls == 0 or schema.calls_model and calls > 0),
         "actual_api_calls 是 {actual_api_calls}：" + ("应是发出的 HTTP 请求次数。" if schema.calls_model else
                                                      "循环不调用模型，只能是 0。"), False),
        (context_ok(context, files), f"context 应记录 {len(files)} 个受监视文件的逐文件哈希，且合并指纹与它们一致。", True),
        (type(record["attempts"]) is list, "attempts 应为尝试记录的数组。", True),
        (attempts_within_range(record["attempts"]), too_many_attempts(record["attempts"]), True),
        ((blocked is None) == (reason != "permission_boundary"),
         "blocked_proposal 只在 permission_boundary 停止时记录，且那时必须记录被拦下的提议。", False),
        (blocked is None or (type(blocked) is dict and all(
            type(blocked.get(key)) is str for key in ("action", "target", "reason"))),
         "blocked_proposal 应有字符串字段 action、target、reason。", True),
        (handoff_ok(record, name), "handoff：除 needs_review 外的每个停止都要写明 stopped_at、done、inspect"
                                   "（含 loop.json 与每个子运行的 run.json）和具体的 decide（不能只说“请处理”），"
                                   "needs_review 与 running 没有 handoff。", False),
        (is_reading(record["elapsed_seconds"]),
         "elapsed_seconds 是 {elapsed_seconds}，应为不小于 0 的秒数（单调时钟的读数，诚实的循环远不到 "
         + f"{MAX_READING} 秒）。", True),
        (moment(record["started_at"]) is not None and finished_ok(record["finished_at"], status == "running"),
         "started_at 应为 UTC 时间（如 2026-01-01T00:00:00Z）；finished_at 在结束后记录，running 时为 null。", True),
    ]


def attempts_within_range(attempts):
    """Never more attempts than the top of the --max-attempts range: a longer list is judged at once, unread."""
    return type(attempts) is not list or len(attempts) <= MAX_ATTEMPTS


def too_many_attempts(attempts):
    count = len(attempts) if type(attempts) is list else 0
    return (f"attempts 有 {count} 项：--max-attempts 最多是 {MAX_ATTEMPTS}，循环从不记录更多的尝试，记录被改动过"
            "（没有逐项核对）。")


def unknown_fields_problem(where, fields, known, nested, schema=CURRENT.name):
    """A field the loop never writes (say "result": "pass" added for a reader to see, or a look-alike key such as
    budget.Max_seconds) is no field of its record: FIELDS beside KNOWN, and inside the objects NESTED names."""
    unknown = [one_line(key) for key in fields if key not in known] + [
        f"{key}.{one_line(inner)}" for key, inner_known in nested.items() if type(fields.get(key)) is dict
        for inner in fields[key] if inner not in inner_known]
    if not unknown:
        return None
    return (f"{where} 有循环从不写的字段：{'、'.join(unknown)}：{schema} 记录里没有它们，记录被改动过；"
            "请用新名称重新运行循环，不要手改记录。")


class ShownFields(dict):
    """A record's fields as its reader sees them in the file (JSON), written out only when a message asks."""

    def __init__(self, record, **given):
        super().__init__(given)
        self.record = record

    def __missing__(self, field):
        return shown(self.record[field])


def error_type_ok(error_type, reason):
    """A name for an unexpected_error stop; null for every other stop (json.dumps of None, nothing else)."""
    if reason == "unexpected_error":
        return type(error_type) is str
    return error_type is None


def budget_ok(budget):
    return (type(budget) is dict and all(key in budget for key in BUDGET_KEYS)
            and is_int(budget["max_attempts"]) and 1 <= budget["max_attempts"] <= 5
            and is_number(budget["max_seconds"]) and 0 <= budget["max_seconds"] <= 300 and attempt_timeout_ok(budget))


def context_ok(context, files=CURRENT.files):
    if type(context) is not dict or not is_int(context.get("files")) or context["files"] != len(files):
        return False
    entries = context.get("entries")
    if type(entries) is not dict or sorted(entries) != sorted(files) or not all(
            type(sha) is str and (sha == "missing" or SHA256.fullmatch(sha)) for sha in entries.values()):
        return False
    return combined_fingerprint(entries) == context.get("fingerprint")


def finished_ok(finished, running):
    """A finish time once finished, null while running. Its order with the start is verifier/clocks.py's to judge:
    a wall clock stepped back can honestly make it earlier."""
    return finished is None if running else moment(finished) is not None


def is_text_list(value):
    return type(value) is list and all(type(item) is str for item in value)


def handoff_ok(record, name):
    """A stop handed to a person says where, what was done, what to inspect and what to decide.

    Never just "please handle": the decision must be spelled out, and the files to inspect
    include the loop record and every recorded child run.
    """
    handoff, status = record["handoff"], record["status"]
    if type(status) is not str or status not in REASONS:
        return True  # the status itself is reported
    if status in ("needs_review", "running"):
        return handoff is None
    if not (type(handoff) is dict and all(key in handoff for key in HANDOFF_KEYS)
            and all(is_text_list(handoff[key]) for key in ("done", "inspect"))
            and all(type(handoff[key]) is str for key in ("stopped_at", "decide"))):
        return False
    attempts = record["attempts"] if type(record["attempts"]) is list else []
    must_inspect = {f"loop-runs/{name}/loop.json"} | {
        f"{entry['child_run']}/run.json" for entry in attempts if type(entry) is dict and "child_run" in entry}
    return (len(handoff["decide"].strip()) >= MIN_DECISION and handoff["stopped_at"].strip() != ""
            and must_inspect <= set(handoff["inspect"]))


def attempt_problem(number, entry, record, schema=CURRENT):
    """The shape of attempt NUMBER; attempts are numbered 1..n in order, each with its own child."""
    name, status, last = record["run"], record["status"], number == len(record["attempts"])
    where = f"attempts 第 {number} 项"
    if type(entry) is not dict or any(key not in entry for key in schema.attempt_keys):
        return f"{where} 缺少字段（应有 {'、'.join(schema.attempt_keys)}）。"
    inner = {"candidate": ("action", "sample", "sha256"), "decision": schema.decision_keys,
             "timeout": ("seconds", "waited_seconds", "inventory"), "model": MODEL_ENTRY_KEYS, "resume": RESUME_KEYS}
    optional = ("resume",) if schema is CURRENT else ()  # written only at a resume, on the attempt it judged
    unknown = unknown_fields_problem(where, entry, schema.attempt_keys + optional, inner, schema.name)
    if unknown:
        return unknown
    if not is_int(entry["attempt"]) or entry["attempt"] != number or entry["child_run"] != f"runs/{name}-{number:02d}":
        return (f"{where} 记录为第 {shown(entry['attempt'])} 次、子运行 {shown(entry['child_run'])}：尝试必须按 1..n 依次记录，"
                f"第 {number} 次的子运行是 runs/{name}-{number:02d}（有尝试被删除、调换了顺序，或指向了别的循环的子运行）。")
    candidate, feedback, state = entry["candidate"], entry["feedback"], entry["state"]
    if type(candidate) is not dict or candidate.get("action") != "export" \
            or candidate.get("sample") not in SAMPLES or type(candidate.get("sha256")) is not str:
        return f"{where} 的 candidate 应为 export 一个已知样例，并带 sha256。"
    if feedback is not None and (type(feedback) is not dict or sorted(feedback) != ["error_type", "message"]):
        return f"{where} 的 feedback 应为 null 或 {{error_type, message}}。"
    judged = entry.get("resume")
    problem = judged_problem(where, judged, state)
    if problem:
        return problem
    allowed_states = {"done": True, "running": last and status == "running",
                      "unknown": bool(judged) or (last and status in ("interrupted", "needs_human")),
                      "timed_out": last and status in ("interrupted", "needs_human")}
    if type(state) is not str or not allowed_states.get(state, False):
        return (f"{where} 的 state 是 {shown(state)}：只有最后一次尝试可以是 running（记录仍在进行）、"
                "unknown（被中断或意外停止）或 timed_out（超过单次时限），续跑判断过的尝试可以是 unknown。")
    finished_child = entry["status"] in CHILD_STATUSES and entry["status"] != "running"
    if (state == "done") != finished_child or (state != "done" and entry["status"] is not None):
        return f"{where} 的 status 是 {shown(entry['status'])}，与 state {shown(state)} 不配。"
    return (attempt_times_problem(where, entry)
            or decision_problem(where, entry["decision"], last, status, schema.decision_keys)
            or timeout_problem(where, entry, record["budget"]))


def judged_problem(where, judged, state):
    """A resume's judgement of the attempt in flight (`resume`, loop-run/4): what it found, the child's status it read,
    the segment (from 1) whose resume made it; and the state it leaves: unknown without a complete child, done when
    adopted, as it was for an attempt that had finished."""
    if judged is None:
        return None
    if not (type(judged) is dict and sorted(judged) == sorted(RESUME_KEYS) and judged["found"] in FOUND
            and (judged["run_status"] is None or judged["run_status"] in CHILD_STATUSES)
            and is_int(judged["segment"]) and judged["segment"] >= 2):
        return (f"{where} 的 resume 是 {shown(judged)}：应为 {{{', '.join(RESUME_KEYS)}}}，found 是 "
                f"{'、'.join(FOUND)} 之一，run_status 是子运行 run.json 的状态或 null，segment 是做判断的那一段（从 2 起）。")
    if state not in ((FOUND[judged["found"]],) if FOUND[judged["found"]] else ("done", "timed_out")):
        return (f"{where} 的 state 是 {shown(state)}，而 resume.found 是 {judged['found']}：没有做完的子运行（no_child、"
                "partial_child）记为 unknown，采用的（complete_child）记为 done，已经做完的（finished_undecided）保持原样。")
    return None



def attempt_times_problem(where, entry):
    """An attempt's wall times and monotonic offsets: both starts always, both finishes once it is done,
    neither while it runs. Their order is verifier/clocks.py's to judge."""
    finished = (entry["finished_at"], entry["finished_offset"])
    if moment(entry["started_at"]) is None or not is_reading(entry["started_offset"]):
        return (f"{where} 的 started_at 是 {shown(entry['started_at'])}、started_offset 是 "
                f"{shown(entry['started_offset'])}：应为 UTC 时间与循环第一份记录之后不小于 0 的秒数"
                f"（诚实的循环远不到 {MAX_READING} 秒）。")
    if finished == (None, None) and entry["state"] != "done":
        return None
    if moment(finished[0]) is None or not is_reading(finished[1]) or entry["state"] == "running":
        return (f"{where} 的 finished_at 是 {shown(finished[0])}、finished_offset 是 {shown(finished[1])}"
                f"（state {shown(entry['state'])}）：结束的尝试两者都记录（UTC 时间与秒数），进行中的两者都是 null。")
    return None


def segments_ok(record):
    """The stretches of monotonic clock the record's readings were taken on. A loop never resumed runs in one, its
    origin read right after the first record; the first record itself, written before that, has none yet. Each
    resume adds one (verifier/resumed.py): the one before says how it ended, the new one what it began after."""
    segments = record["segments"]
    if segments == []:
        return record["status"] == "running" and record["attempts"] == [] and record["elapsed_seconds"] == 0
    if type(segments) is not list:
        return False
    last = len(segments) - 1
    return all(segment_ok(segment, k, last) for k, segment in enumerate(segments))


def segment_ok(segment, k, last):
    keys = SEGMENT_KEYS + (ENDED_KEYS if k < last else ()) + (RESUMED_KEYS if k > 0 else ())
    if not (type(segment) is dict and sorted(segment) == sorted(keys) and moment(segment["started_at"]) is not None
            and is_reading(segment["started_offset"]) and (k > 0 or segment["started_offset"] == 0)
            and is_number(segment["wall_minus_monotonic"]) and segment["wall_minus_monotonic"] >= 0
            and is_reading(segment["elapsed_seconds"])):
        return False
    ended = k == last or (segment["ended"] in ENDINGS and segment["lower_bound"] is (segment["ended"] == "killed"))
    return ended and (k == 0 or (is_int(segment["after_attempt"]) and 0 <= segment["after_attempt"] <= MAX_ATTEMPTS
                                 and is_number(segment["gap_seconds"]) and abs(segment["gap_seconds"]) <= MAX_READING))
