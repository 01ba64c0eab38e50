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
(the table of older schemas, reading and hashing); its findings' words are verifier/findings.py's.
"""
from pathlib import Path

import verify_harness
from cli import NotRegularFile, RecordError, TooLarge
from verifier.findings import Finding
from verifier.records import (ATTEMPT_KEYS, CHILD_STATUSES, MAX_ATTEMPTS, OLD_SCHEMAS, SAMPLES, SCHEMA, CourseFiles,
                              combined_fingerprint, is_reading, one_line, read_record_file)
from verifier.shape import budget_ok, shape_problems

CANDIDATE_KEYS, CONTEXT_KEYS = ("action", "sample", "sha256"), ("files", "fingerprint", "entries")
OWN_COURSE = CourseFiles(Path(__file__).resolve().parent.parent)  # the course this verifier ships with


def old_record_problems(record, where):
    """What in RECORD (of an older schema; WHERE names its file) no workspace of that version wrote; [] if none."""
    table = OLD_SCHEMAS[record["schema"]]
    fields = field_problems(record, table)
    if fields:
        return [Finding("old_fields", record=where, schema=record["schema"], fields=fields)]
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
    """The fields beside and missing from the KNOWN ones in FIELDS (a dict), as findings; [] when they are the same."""
    extra = [prefix + one_line(key, 60) for key in fields if key not in known]
    missing = [prefix + key for key in known if key not in fields]
    return ([Finding("old_extra_fields", fields=extra[:6])] if extra else []) + (
        [Finding("old_missing_fields", fields=missing[:6])] if missing else [])


def value_problems(record, table, where):
    """Values the older loop never wrote, and a fingerprint it did not make."""
    problems, attempts = [], record["attempts"]
    if type(attempts) is not list or len(attempts) > MAX_ATTEMPTS:
        return [Finding("old_attempts_wrong", record=where, most=MAX_ATTEMPTS)]
    schema = record["schema"]
    if record["scenario"] not in table.scenarios:
        problems.append(Finding("old_scenario", record=where, value=record["scenario"], schema=schema,
                                known=list(table.scenarios)))
    status, reason = record["status"], record["reason"]
    if type(status) is not str or reason not in table.reasons.get(status, ()):
        problems.append(Finding("old_stop", record=where, status=status, reason=reason, schema=schema))
    states = [entry.get("state") for entry in attempts if type(entry) is dict]
    if any(state not in table.states for state in states):
        problems.append(Finding("old_state", record=where, known=list(table.states), schema=schema))
    return problems + context_problems(record, table, where)


def context_problems(record, table, where):
    """The recorded fingerprint is one the older loop made: its files, adding up, and not today's loop code."""
    context = record["context"]
    entries = context.get("entries") if type(context) is dict else None
    if type(entries) is not dict or sorted(context) != sorted(CONTEXT_KEYS) or sorted(entries) != sorted(table.files) \
            or context.get("files") != len(table.files) or not all(type(sha) is str for sha in entries.values()) \
            or combined_fingerprint(entries) != context.get("fingerprint"):
        extra = [one_line(rel, 60) for rel in entries if rel not in table.files] if type(entries) is dict else []
        named = Finding("old_context_extra_more" if len(extra) > 3 else "old_context_extra", files=extra[:3]) \
            if extra else ""
        return [Finding("old_context", record=where, schema=record["schema"], count=len(table.files), named=named)]
    today = OWN_COURSE.entries()
    if all(entries[rel] == today.get(rel) for rel in table.writers):
        return [Finding("old_today_code", record=where, schema=record["schema"], writers=list(table.writers),
                        current=SCHEMA)]
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
    other = [Finding("old_run_wrong", value=record["run"], folder=name)] if record["run"] != name else []
    other += [Finding("old_attempt_number", number=number, value=entry.get("attempt"))
              for number, entry in enumerate(record["attempts"], 1) if entry.get("attempt") != number]
    problems = [finding for holds, finding in (
        (budget_ok({**budget, "attempt_timeout": None}) if type(budget) is dict else False,
         Finding("old_budget", value=budget)),
        (is_reading(record["elapsed_seconds"]), Finding("old_elapsed", value=record["elapsed_seconds"])),
        (blocked is None or (type(blocked) is dict and all(type(blocked.get(key)) is str
                                                            for key in ("action", "target", "reason"))),
         Finding("old_blocked"))) if not holds]
    for number, entry in enumerate(record["attempts"], 1):
        if not attempt_readable(entry):
            problems.append(Finding("old_attempt_unreadable", number=number, value=entry))
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
    """The finding (of severity fail or human) for the child run CHILD_DIR of a record of the older SCHEMA, or None when
    it is readable old evidence: its run.json strict, of a child schema of that version, and verify_harness finding
    nothing but its age against REFERENCE (the course files the loop record says its children were made on,
    verify_harness.Course.as_recorded). SHOWN_CHILD is the folder as the person types it."""
    record_file = f"{shown_child}/run.json"
    try:
        run, _ = read_record_file(Path(child_dir) / "run.json")
    except FileNotFoundError:
        return Finding("old_child_no_record", file=record_file)
    except RecordError as exc:
        if exc.kind in ("empty", "cut") and not OLD_SCHEMAS[schema].flushed:
            return Finding("old_child_cut", file=record_file, error=str(exc))
        return Finding("old_child_not_json", file=record_file, error=str(exc))
    except (NotRegularFile, TooLarge) as exc:
        return Finding("old_child_not_plain", error=str(exc))
    except OSError as exc:  # no permission: the file is there
        return Finding("old_child_unreadable", file=record_file, error_type=type(exc).__name__)
    child_schemas = OLD_SCHEMAS[schema].child_schemas
    if type(run) is not dict or run.get("schema") not in child_schemas:
        said = one_line(run.get("schema"), 60) if type(run) is dict else Finding("not_an_object")
        return Finding("old_child_schema", file=record_file, value=said, schema=schema, schemas=list(child_schemas))
    verdict = verify_harness.verify_run(child_dir, course_root=reference)
    if verdict["result"] == "fail":
        return Finding("child_failed", child=shown_child, said=one_line("；".join(verdict["problems"]), 600))
    return None
