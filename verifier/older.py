"""Records of an older workspace: for a person only when they hold nothing their own version could not write.

Part of verify_loop (the command line); verifier/check.py asks it about a loop record whose schema is in
records.OLD_SCHEMAS and about that record's children. Today's rules cannot check an older record (it has no id,
no monotonic readings), so an honest one is needs_human. But "old" softens only what an old record cannot show:
what no older workspace wrote is a forgery wearing the old label, and fails as it would in a record of today —
a field, an id or a value its version never wrote, a fingerprint that does not add up, the very loop code of
today (which writes only records.SCHEMA), a child of a newer schema, a child record that is no strict JSON (a key
twice, line ends changed in part), a child folder or file that is a link. An old child that is empty or cut off
stays for a person: older versions did not flush a record to disk before renaming it.

It does not import loop_lab.py, harness.py, export_review.py or machinery/. What it shares: cli.py's record errors, and
verify_harness (the lesson-13 verifier, which judges each old child run on its own) and verifier/records.py
(the table of older schemas, reading and hashing).
"""
from pathlib import Path

import verify_harness
from cli import NotRegularFile, RecordError, TooLarge
from verifier.records import (ATTEMPT_KEYS, CHILD_STATUSES, MAX_ATTEMPTS, OLD_SCHEMAS, SAMPLES, SCHEMA, CourseFiles,
                              combined_fingerprint, is_reading, one_line, read_record_file, shown)
from verifier.shape import budget_ok, shape_problems

CANDIDATE_KEYS, CONTEXT_KEYS = ("action", "sample", "sha256"), ("files", "fingerprint", "entries")
OWN_COURSE = CourseFiles(Path(__file__).resolve().parent.parent)  # the course this verifier ships with


def old_record_problems(record, where):
    """What in RECORD (of an older schema; WHERE names its file) no workspace of that version wrote; [] if none."""
    table = OLD_SCHEMAS[record["schema"]]
    fields = field_problems(record, table)
    if fields:
        return [f"{where} 的 schema 是 {record['schema']}，却{'；'.join(fields)}：那个版本的工作区写不出这样的记录，"
                "schema 被改过，记录被改动过。"]
    return value_problems(record, table, where)


def field_problems(record, table):
    """Fields beside, or missing from, those the older loop wrote: at the top, in the budget and in each attempt."""
    found = differing_fields("", record, table.keys)
    budget = record.get("budget")
    found += differing_fields("budget.", budget, table.budget_keys) if type(budget) is dict else []
    attempts = record.get("attempts")
    for entry in attempts if type(attempts) is list else []:
        if type(entry) is dict:
            found += [f for f in differing_fields("attempts[].", entry, table.attempt_keys) if f not in found]
            candidate = entry.get("candidate")
            if type(candidate) is dict:
                found += [f for f in differing_fields("attempts[].candidate.", candidate, CANDIDATE_KEYS)
                          if f not in found]
    return found


def differing_fields(prefix, fields, known):
    """["有它从不写的字段 …", "缺少字段 …"] for FIELDS (a dict) against the KNOWN ones; [] when they are the same."""
    extra = [prefix + one_line(key, 60) for key in fields if key not in known]
    missing = [prefix + key for key in known if key not in fields]
    return ([f"有它从不写的字段 {'、'.join(extra[:6])}"] if extra else []) + (
        [f"缺少它总会写的字段 {'、'.join(missing[:6])}"] if missing else [])


def value_problems(record, table, where):
    """Values the older loop never wrote, and a fingerprint it did not make."""
    problems, attempts = [], record["attempts"]
    if type(attempts) is not list or len(attempts) > MAX_ATTEMPTS:
        return [f"{where} 的 attempts 不是至多 {MAX_ATTEMPTS} 项的数组：循环从不这样记录，记录被改动过（没有逐项核对）。"]
    if record["scenario"] not in table.scenarios:
        problems.append(f"{where} 的 scenario 是 {shown(record['scenario'])}：{record['schema']} 的循环只有"
                        f"{'、'.join(table.scenarios)}，记录被改动过。")
    status, reason = record["status"], record["reason"]
    if type(status) is not str or reason not in table.reasons.get(status, ()):
        problems.append(f"{where} 的停止是 {shown(status)}/{shown(reason)}：{record['schema']} 的循环从不这样停止，"
                        "记录被改动过。")
    states = [entry.get("state") for entry in attempts if type(entry) is dict]
    if any(state not in table.states for state in states):
        problems.append(f"{where} 里有尝试的 state 不是 {'、'.join(table.states)} 之一：{record['schema']} 的循环"
                        "从不这样记录，记录被改动过。")
    return problems + context_problems(record, table, where)


def context_problems(record, table, where):
    """The recorded fingerprint is one the older loop made: its files, adding up, and not today's loop code."""
    context = record["context"]
    entries = context.get("entries") if type(context) is dict else None
    if type(entries) is not dict or sorted(context) != sorted(CONTEXT_KEYS) or sorted(entries) != sorted(table.files) \
            or context.get("files") != len(table.files) or not all(type(sha) is str for sha in entries.values()) \
            or combined_fingerprint(entries) != context.get("fingerprint"):
        extra = [one_line(rel, 60) for rel in entries if rel not in table.files] if type(entries) is dict else []
        named = f"，它记下了那个版本不监视的 {'、'.join(extra[:3])}{' 等' if len(extra) > 3 else ''}" if extra else ""
        return [f"{where} 的 context 不是 {record['schema']} 的循环记下的 {len(table.files)} 个文件的指纹"
                f"（文件、逐文件哈希或合并指纹对不上{named}）：记录被改动过。"]
    today = OWN_COURSE.entries()
    if all(entries[rel] == today.get(rel) for rel in table.writers):
        return [f"{where} 的 schema 是 {record['schema']}，而它记下的 {'、'.join(table.writers)} 就是现在课程里的版本："
                f"现在的循环只写 {SCHEMA} 记录，写不出 {record['schema']}，schema 被改过，记录被改动过。"]
    return []


def old_shape_problems(record, name):
    """(blocking, other) as shape.shape_problems says them, for an older record: BLOCKING keeps its stop, decisions
    and clocks from being re-derived as today's are. A schema of today's attempt fields over the watched files of
    its day (loop-run/2 and /3) is shaped by today's rules; for one of fewer fields (loop-run/1), the fields the
    derivation reads: the budget, the reading it has, each attempt."""
    table = OLD_SCHEMAS[record["schema"]]
    if table.attempt_keys == ATTEMPT_KEYS:
        return shape_problems(record, name, table)
    budget, blocked = record["budget"], record["blocked_proposal"]
    other = [f"run 是 {shown(record['run'])}，与目录名 {shown(name)} 不符。"] if record["run"] != name else []
    other += [f"attempts 第 {number} 项记录为第 {shown(entry.get('attempt'))} 次：尝试必须按 1..n 依次记录。"
              for number, entry in enumerate(record["attempts"], 1) if entry.get("attempt") != number]
    problems = [text for holds, text in (
        (budget_ok({**budget, "attempt_timeout": None}) if type(budget) is dict else False,
         f"budget 是 {shown(budget)}：max_attempts 应为 1-5 的整数，max_seconds 应为 0-300 秒。"),
        (is_reading(record["elapsed_seconds"]), f"elapsed_seconds 是 {shown(record['elapsed_seconds'])}，应为不小于 0 的秒数。"),
        (blocked is None or (type(blocked) is dict and all(type(blocked.get(key)) is str
                                                            for key in ("action", "target", "reason"))),
         "blocked_proposal 应为 null 或有字符串字段 action、target、reason。")) if not holds]
    for number, entry in enumerate(record["attempts"], 1):
        if not attempt_readable(entry):
            problems.append(f"attempts 第 {number} 项是 {shown(entry)}：应为 export 一个已知样例并带 sha256，"
                            "feedback 为 null 或 {error_type, message}，做完的尝试记录子运行的状态。")
    return problems, other


def attempt_readable(entry):
    candidate, feedback = entry.get("candidate"), entry.get("feedback")
    finished = entry.get("status") in CHILD_STATUSES and entry.get("status") != "running"
    return (type(candidate) is dict
            and candidate.get("action") == "export" and candidate.get("sample") in SAMPLES
            and type(candidate.get("sha256")) is str
            and (feedback is None or (type(feedback) is dict and sorted(feedback) == ["error_type", "message"]))
            and (entry.get("state") == "done") == finished)


def old_child_finding(child_dir, shown_child, schema, reference):
    """("fail" | "needs_human", text) for the child run CHILD_DIR of a record of the older SCHEMA, or None when it
    is readable old evidence: its run.json strict, of a child schema of that version, and verify_harness finding
    nothing but its age against REFERENCE (the course files the loop record says its children were made on,
    verify_harness.Course.as_recorded). SHOWN_CHILD is the folder as the person types it."""
    record_file = f"{shown_child}/run.json"
    try:
        run, _ = read_record_file(Path(child_dir) / "run.json")
    except FileNotFoundError:
        return "needs_human", (f"{record_file} 不存在：较早版本的 harness 先建目录、后写记录，中途停下时会这样；"
                               "请由人查看这个目录里留下了什么。")
    except RecordError as exc:
        if exc.kind in ("empty", "cut") and not OLD_SCHEMAS[schema].flushed:
            return "needs_human", (f"{record_file} {exc}：较早版本写记录时没有先写到磁盘，断电或强制结束时会这样，"
                                   "这不是改动过的证据；请由人查看这个目录里留下了什么。")
        return "fail", f"{record_file} {exc}：哪个版本的 harness 都不会这样写，记录被改动过。"
    except (NotRegularFile, TooLarge) as exc:
        return "fail", f"{exc}：哪个版本的 harness 都只写普通的、只有几 KiB 的记录，这不是它写的文件。"
    except OSError as exc:  # no permission: the file is there
        return "needs_human", f"{record_file} 无法读取（{type(exc).__name__}）：请恢复读取权限后再核对。"
    child_schemas = OLD_SCHEMAS[schema].child_schemas
    if type(run) is not dict or run.get("schema") not in child_schemas:
        said = one_line(run.get("schema"), 60) if type(run) is dict else "不是 JSON 对象"
        return "fail", (f"{record_file} 的 schema 是 {said}，循环记录却是 {schema}：那个版本的工作区写下的子运行是 "
                        f"{'、'.join(child_schemas)}，写不出别的，schema 被改过，记录被改动过。")
    verdict = verify_harness.verify_run(child_dir, course_root=reference)
    if verdict["result"] == "fail":
        return "fail", f"子运行 {shown_child} 没有通过独立核对：{one_line('；'.join(verdict['problems']), 600)}"
    return None
