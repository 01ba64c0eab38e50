"""The shape of a loop record: every field there, of its type, within its range, and no field its loop never wrote.

Part of verify_loop (the command line); verifier/check.py asks `shape_problems` about a record of today's schema
(records.CURRENT) and verifier/older.py about one of an older schema of today's fields (loop-run/2 and /3). It
judges each field on its own; how the readings add up is verifier/clocks.py's, and what the record says against
its children is verifier/check.py's. It does not import loop_lab.py, harness.py, export_review.py or machinery/;
what it shares is verifier/records.py's copy of the rules (the schemas, scenarios, stops, name rule, hashing); its
findings' words are verifier/findings.py's.
"""
from verifier.findings import Finding
from verifier.records import (BUDGET_KEYS, CHILD_STATUSES, CURRENT, DECISIONS, DECISION_STOPS, ENDED_KEYS, ENDINGS,
                              FOUND, HANDOFF_KEYS, INNER_KEYS, MAX_ATTEMPTS, MAX_READING, MIN_DECISION, MODEL,
                              MODEL_ENTRY_KEYS, REASONS, RECORD_ID, RESUMED_KEYS, RESUME_KEYS, SAMPLES, SCRIPT,
                              SEGMENT_KEYS, SHA256, TIMEOUT_RANGE, UNDECIDED, combined_fingerprint, is_int,
                              is_loop_name, is_number, is_reading, moment, one_line)


def decision_problem(where, decision, last, status, keys=CURRENT.decision_keys):
    """The shape of an attempt's decision: null only where the loop may not have decided yet; KEYS, its fields
    (loop-run/4 on: the reading taken when it was made, decided_offset)."""
    if decision is None:
        if last and status in UNDECIDED:
            return None
        return Finding("decision_missing", where=where)
    shaped = type(decision) is dict and (decision.get("next"), decision.get("reason")) in DECISIONS
    read = "decided_offset" not in keys or (type(decision) is dict and is_reading(decision.get("decided_offset")))
    if not shaped or not read or type(decision.get("why")) is not str or not decision["why"].strip():
        return Finding("decision_shape" if "decided_offset" in keys else "decision_shape_old", where=where,
                       value=decision, keys=list(keys), stops=list(DECISION_STOPS))
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
    return Finding("timeout_wrong", where=where, value=timeout, state=entry["state"],
                   limit=budget.get("attempt_timeout"))


# --- the shape of a record ---------------------------------------------------------------------------

def shape_problems(record, name, schema=CURRENT):
    """(blocking, other): what is wrong with the shape of a record of SCHEMA (records.Schema: today's, or an older
    one of today's fields, over the watched files of its day), as findings naming the field.

    BLOCKING problems keep the record from being read further: the checks that follow rely on those
    fields. OTHER problems do not, so the recorded stop is still compared with the evidence.
    """
    if type(record) is not dict:
        return [Finding("shape_not_object", schema=schema.name)], []
    missing = [key for key in schema.keys if key not in record]
    if missing:
        return [Finding("fields_missing", fields=missing)], []
    checks = field_checks(record, name, schema)
    blocking = [Finding(kind, **fields) for holds, kind, fields, blocks in checks if blocks and not holds]
    other = [Finding(kind, **fields) for holds, kind, fields, blocks in checks if not blocks and not holds]
    inner = dict(INNER_KEYS, budget=schema.budget_keys)
    other += [problem for problem in [unknown_fields_problem("loop.json", record, schema.keys, inner,
                                                             schema.name)] if problem]
    if blocking:
        return blocking, other
    found = (attempt_problem(number, entry, record, schema) for number, entry in enumerate(record["attempts"], 1))
    first = next((problem for problem in found if problem), None)  # later ones follow from the first
    return ([first] if first else []), other


def field_checks(record, name, schema=CURRENT):
    """(holds, kind, fields, blocks) for every top-level field of a record of SCHEMA: the finding KIND with FIELDS
    where it does not hold; see shape_problems."""
    status, reason, files, reasons = record["status"], record["reason"], schema.files, schema.reasons
    budget, context, blocked, attempts = record["budget"], record["context"], record["blocked_proposal"], \
        record["attempts"]
    known_status = type(status) is str and status in reasons
    calls = record["actual_api_calls"]
    segments = [(segments_ok(record), "segments_wrong", {"value": record.get("segments")}, True)
                ] if "segments" in schema.keys else []
    if schema.calls_model and type(record.get("segments")) is list:  # its proposals lived in its one process
        segments.append((len(record["segments"]) <= 1, "model_segments", {"count": len(record["segments"])}, False))
    return segments + [
        (record["schema"] == schema.name, "schema_wrong", {"value": record["schema"], "expected": schema.name}, True),
        (type(record["id"]) is str and bool(RECORD_ID.fullmatch(record["id"])), "id_wrong", {"value": record["id"]},
         False),
        (record["run"] == name and is_loop_name(name), "run_wrong", {"value": record["run"], "folder": name}, True),
        (type(record["scenario"]) is str and record["scenario"] in schema.scenarios, "scenario_unknown",
         {"value": record["scenario"], "known": [*SCRIPT, MODEL]}, True),
        (budget_ok(budget), "budget_wrong", {"value": budget}, True),
        (known_status, "status_unknown", {"value": status, "known": list(reasons)}, True),
        (not known_status or reason in reasons[status], "reason_wrong", {"value": reason, "status": status}, False),
        (error_type_ok(record["error_type"], reason), "error_type_wrong", {"value": record["error_type"]}, True),
        (record["semantic_review"] == "pending", "semantic_review_wrong", {"value": record["semantic_review"]}, False),
        (is_int(calls) and (calls == 0 or schema.calls_model and calls > 0),
         "api_calls_not_count" if schema.calls_model else "api_calls_wrong", {"value": calls}, False),
        (context_ok(context, files), "context_wrong", {"files": len(files)}, True),
        (type(attempts) is list, "attempts_not_list", {}, True),
        (attempts_within_range(attempts), "attempts_too_many",
         {"count": len(attempts) if type(attempts) is list else 0, "most": MAX_ATTEMPTS}, True),
        ((blocked is None) == (reason != "permission_boundary"), "blocked_unexpected", {}, False),
        (blocked is None or (type(blocked) is dict and all(
            type(blocked.get(key)) is str for key in ("action", "target", "reason"))), "blocked_shape", {}, True),
        (handoff_ok(record, name), "handoff_wrong", {}, False),
        (is_reading(record["elapsed_seconds"]), "elapsed_wrong",
         {"value": record["elapsed_seconds"], "most": MAX_READING}, True),
        (moment(record["started_at"]) is not None and finished_ok(record["finished_at"], status == "running"),
         "times_wrong", {}, True),
    ]


def attempts_within_range(attempts):
    """Never more attempts than the top of the --max-attempts range: a longer list is judged at once, unread."""
    return type(attempts) is not list or len(attempts) <= MAX_ATTEMPTS


def unknown_fields_problem(where, fields, known, nested, schema=CURRENT.name):
    """A field the loop never writes (say "result": "pass" added for a reader to see, or a look-alike key such as
    budget.Max_seconds) is no field of its record: FIELDS beside KNOWN, and inside the objects NESTED names."""
    unknown = [one_line(key) for key in fields if key not in known] + [
        f"{key}.{one_line(inner)}" for key, inner_known in nested.items() if type(fields.get(key)) is dict
        for inner in fields[key] if inner not in inner_known]
    if not unknown:
        return None
    return Finding("unknown_fields", where=where, fields=unknown, schema=schema)


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
    where = Finding("attempt_entry", number=number)
    if type(entry) is not dict or any(key not in entry for key in schema.attempt_keys):
        return Finding("attempt_fields_missing", where=where, keys=list(schema.attempt_keys))
    inner = {"candidate": ("action", "sample", "sha256"), "decision": schema.decision_keys,
             "timeout": ("seconds", "waited_seconds", "inventory"), "model": MODEL_ENTRY_KEYS, "resume": RESUME_KEYS}
    optional = ("resume",) if schema is CURRENT else ()  # written only at a resume, on the attempt it judged
    unknown = unknown_fields_problem(where, entry, schema.attempt_keys + optional, inner, schema.name)
    if unknown:
        return unknown
    if not is_int(entry["attempt"]) or entry["attempt"] != number or entry["child_run"] != f"runs/{name}-{number:02d}":
        return Finding("attempt_numbering", where=where, value=entry["attempt"], child=entry["child_run"],
                       number=number, expected=f"runs/{name}-{number:02d}")
    candidate, feedback, state = entry["candidate"], entry["feedback"], entry["state"]
    if type(candidate) is not dict or candidate.get("action") != "export" \
            or candidate.get("sample") not in SAMPLES or type(candidate.get("sha256")) is not str:
        return Finding("candidate_shape", where=where)
    if feedback is not None and (type(feedback) is not dict or sorted(feedback) != ["error_type", "message"]):
        return Finding("feedback_shape", where=where)
    judged = entry.get("resume")
    problem = judged_problem(where, judged, state)
    if problem:
        return problem
    allowed_states = {"done": True, "running": last and status == "running",
                      "unknown": bool(judged) or (last and status in ("interrupted", "needs_human")),
                      "timed_out": last and status in ("interrupted", "needs_human")}
    if type(state) is not str or not allowed_states.get(state, False):
        return Finding("state_wrong", where=where, value=state)
    finished_child = entry["status"] in CHILD_STATUSES and entry["status"] != "running"
    if (state == "done") != finished_child or (state != "done" and entry["status"] is not None):
        return Finding("status_state", where=where, value=entry["status"], state=state)
    return (attempt_times_problem(where, entry)
            or decision_problem(where, entry["decision"], last, status, schema.decision_keys)
            or timeout_problem(where, entry, record["budget"]))


def judged_problem(where, judged, state):
    """A resume's judgement of the attempt in flight (`resume`, loop-run/4): what it found, the child's status it read,
    the segment (from 1) whose resume made it; and the state it leaves: unknown without a complete child, done when
    adopted, as it was for an attempt that had finished."""
    if judged is None:
        return None
    if not (type(judged) is dict and sorted(judged) == sorted(RESUME_KEYS) and type(judged["found"]) is str
            and judged["found"] in FOUND
            and (judged["run_status"] is None or judged["run_status"] in CHILD_STATUSES)
            and is_int(judged["segment"]) and judged["segment"] >= 2):
        return Finding("resume_shape", where=where, value=judged, keys=list(RESUME_KEYS), found=list(FOUND))
    if state not in ((FOUND[judged["found"]],) if FOUND[judged["found"]] else ("done", "timed_out")):
        return Finding("resume_state", where=where, state=state, found=judged["found"])
    return None


def attempt_times_problem(where, entry):
    """An attempt's wall times and monotonic offsets: both starts always, both finishes once it is done,
    neither while it runs. Their order is verifier/clocks.py's to judge."""
    finished = (entry["finished_at"], entry["finished_offset"])
    if moment(entry["started_at"]) is None or not is_reading(entry["started_offset"]):
        return Finding("attempt_start_wrong", where=where, started=entry["started_at"], offset=entry["started_offset"],
                       most=MAX_READING)
    if finished == (None, None) and entry["state"] != "done":
        return None
    if moment(finished[0]) is None or not is_reading(finished[1]) or entry["state"] == "running":
        return Finding("attempt_finish_wrong", where=where, finished=finished[0], offset=finished[1],
                       state=entry["state"])
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
                                 and is_number(segment["gap_seconds"])))  # a clock reset to 1970 is honest
