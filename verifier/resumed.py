"""A resumed loop record: its segments add up, each reading lies in the segment that took it, and each judgement a
resume made of the attempt in flight agrees with what that attempt's child left.

Part of verify_loop (the command line). A loop never resumed runs in one segment of monotonic clock; each
`loop_lab.py --resume` opens another (docs/loop/TASK.md「续跑」): its origin continues where the segment before
ended (the segments add up, so every reading of the record is seconds of the loop's own running, summed), it says
how many attempts the record held when it began (`after_attempt`) and the wall-clock gap before it (`gap_seconds`,
recorded, never counted); the segment before says how it ended (`ended`; `killed` when its record was left
`running`, its elapsed_seconds then a lower bound). The one attempt in flight is judged once, at the resume whose
segment its `resume.segment` names, from what its child folder held: no folder (`unknown`, it counts), a partial
child (`unknown`, kept as evidence), a complete child (adopted), or an attempt finished but not decided.
verifier/shape.py checks each of these fields on its own; verifier/clocks.py places the readings with `Segments`;
verifier/check.py asks `judgement_problem` of each judged attempt. It imports nothing of loop_lab.py, harness.py,
export_review.py or machinery/; it shares verifier/records.py's copy of the rules; its findings' words are
verifier/findings.py's.
"""
from verifier.findings import Finding
from verifier.records import CHILD_STATUSES

FINISHED = tuple(status for status in CHILD_STATUSES if status != "running")


class Segments:
    """Where each reading of a record was taken: the segments, and for each attempt the segment it started in and
    the one a resume judged it in. Segments are counted from 0 here, as `segments[k]` names them."""

    def __init__(self, record):
        segments = record.get("segments")
        self.list = segments if type(segments) is list else []
        self.after = [0] + [segment["after_attempt"] for segment in self.list[1:]]
        self.attempts = record["attempts"]

    def started_in(self, number):
        """The segment attempt NUMBER started in: the last whose resume found fewer attempts recorded."""
        return max((k for k, after in enumerate(self.after) if after < number), default=0)

    def judged_in(self, number):
        """The segment whose resume judged attempt NUMBER (its `resume.segment`, counted from 1), or None."""
        judged = self.attempts[number - 1].get("resume")
        return judged["segment"] - 1 if judged else None

    def start(self, k):
        return self.list[k]["started_offset"]

    def end(self, k):
        """The last reading of segment K, to the 3 decimals the loop records readings with."""
        return round(self.list[k]["started_offset"] + self.list[k]["elapsed_seconds"], 3)

    def resumed(self):
        return len(self.list) > 1


def unknown_count(record):
    """The attempts a resume judged `unknown`: they count against the attempt budget and gave no feedback."""
    return sum(1 for entry in record["attempts"] if entry.get("resume") and entry["state"] == "unknown")


def segment_problems(record):
    """What no honest resume writes into the segments and their judged attempts (fail): segments that do not add up,
    a gap that is not the difference of the segments' own wall clocks, a judgement made where no resume found the
    attempt in flight, an adopted attempt's finish that is not the end of its segment. Findings, naming the field.
    A segment's after_attempt needs no rule of its own: it places each attempt's readings (Segments), whose order
    and judgements are checked."""
    plan, problems = Segments(record), []
    for k in range(1, len(plan.list)):
        before, segment = plan.list[k - 1], plan.list[k]
        if segment["started_offset"] != plan.end(k - 1):  # the loop adds them up to 3 decimals, as here
            problems.append(Finding("segments_apart", k=k, started=segment["started_offset"],
                                    before=before["started_offset"], elapsed=before["elapsed_seconds"]))
        gap = segment["wall_minus_monotonic"] - before["wall_minus_monotonic"]
        if segment["gap_seconds"] != round(gap, 3):
            problems.append(Finding("segment_gap", k=k, value=segment["gap_seconds"], gap=gap))
    for number, entry in enumerate(record["attempts"], 1):
        problems += judged_problems(plan, number, entry)
    return problems


def judged_problems(plan, number, entry):
    """An attempt's judgement lies where a resume found it in flight: at the start of a segment that began with it
    as the last attempt, after it started; an adopted attempt finished at the end of the segment it ran in."""
    judged = entry.get("resume")
    if not judged:
        return []
    k = judged["segment"] - 1
    if not 1 <= k < len(plan.list) or plan.after[k] != number or plan.started_in(number) >= k:
        return [Finding("judged_elsewhere", number=number, segment=judged["segment"])]
    end = plan.end(plan.started_in(number))
    if judged["found"] == "complete_child" and entry["finished_offset"] != end:
        return [Finding("adopted_finish", number=number, finished=entry["finished_offset"], end=end)]
    return []


def judgement_problem(number, entry, child, shown_child):
    """Whether what the resume found (ENTRY's `resume`) is what the child SHOWN_CHILD left: CHILD is its
    child_view() (None when its folder does not exist). A judgement the child contradicts fails: a finding, or None."""
    found, run_status = entry["resume"]["found"], entry["resume"]["run_status"]
    status = child["status"] if child else None
    fields = {"number": number, "found": found, "child": shown_child}
    if found == "no_child" and child is not None:
        return Finding("judged_no_child", **fields)
    if found == "partial_child" and child is None:
        return Finding("judged_partial_gone", **fields)
    if found == "partial_child" and status in FINISHED:
        return Finding("judged_partial_finished", status=status, **fields)
    if found == "complete_child" and status not in FINISHED:
        return Finding("judged_complete_unfinished", status=status, **fields)
    if found == "complete_child" and entry["finished_at"] != child["finished_at"]:
        return Finding("judged_finish_time", recorded=entry["finished_at"], actual=child["finished_at"], **fields)
    if run_status != status:
        return Finding("judged_run_status", recorded=run_status, actual=status, **fields)
    return None
