"""The clocks of one loop record: budgets and order on its monotonic readings, its wall clock explained.

Part of verify_loop (the command line); verifier/check.py calls `offset_problems`, `pauses` and
`wall_clock_finding` (over `clock_events`) for every record with monotonic readings (loop-run/4, and loop-run/2
and /3 of an older workspace). A loop keeps two clocks (docs/loop/TASK.md): the monotonic readings, seconds since
its first record, which only go forward and judge the budgets and the order of events; and wall times (UTC, whole
seconds) for people. Each wall time is judged where its loop read it: loop-run/4 reads it together with a
monotonic reading (a point), older loops read some of them a few steps before or after one (a window), so a
slow disk between the two readings is never taken for a clock step.

What no honest machine records fails: a reading that goes back, an attempt begun once the budget was spent, a
child whose own monotonic duration is longer than the attempt it ran in. What an honest machine can produce is for
a person, named for what it is: a wall clock that steps once (NTP sets it back, a suspended laptop wakes up hours
later while the monotonic clock stood still), and, where a time budget ran out mid-loop, a pause between two
readings that only the loop's own steps separate (a slow disk, a paused process, or readings moved on). It does
not import loop_lab.py, harness.py, export_review.py or machinery/; it shares only verifier/records.py's copy of
the rules (timestamps and their precision, the scenarios); its findings' words are verifier/findings.py's.
"""
from verifier.findings import Finding
from verifier.records import PRECISION, ROUNDING, TOLERANCE, is_reading, moment, shown
from verifier.resumed import Segments, segment_problems

# Wall times are whole seconds (up to 1 s early), read a moment apart from their monotonic reading: events
# of one honest clock agree on "wall minus monotonic" within this much.
SLACK = PRECISION + TOLERANCE
# Seconds an honest loop's own steps take between two readings that nothing else separates (reading its 23 watched
# files, writing its record, checking a child): far less on any machine this course runs on.
CHECK_GAP = 2
# Two spans on one monotonic clock, measured by two processes, compared: 3-decimal rounding and the 15.6 ms ticks
# of Windows' monotonic clock before Python 3.13 make an honest child look up to this much longer than its attempt.
COARSE = 0.05
# docs/loop/TASK.md: in each attempt of `slow` a stand-in tool waits this long before the harness runs.
TOOL_WAIT = {"slow": 3}
# What a resume found of the attempt in flight when its segment ended (verifier/resumed.py): that attempt's own
# finish was never read in the segment it ran in.
IN_FLIGHT = ("no_child", "partial_child", "complete_child")


class Reading:
    """One monotonic reading of the record, with how a person names it (a finding of kind `reading_*`)."""

    def __init__(self, label, value):
        self.label, self.value = label, value


def decided(entry):
    decision = entry.get("decision")
    return decision.get("decided_offset") if type(decision) is dict else None


def in_segments(record):
    """(Segments, [(segment k, the numbers of the attempts that started in it)] in the order the loop ran them); one
    segment (k None) for a record with none yet, or an older record."""
    plan = Segments(record)
    if not plan.list:
        return plan, [(None, list(range(1, len(record["attempts"]) + 1)))]
    return plan, [(k, [n for n in range(1, len(record["attempts"]) + 1) if plan.started_in(n) == k])
                  for k in range(len(plan.list))]


def readings(record):
    """Every monotonic reading of RECORD in the order the loop took them (those it has), segment after segment: a
    resume's judgement of the attempt in flight at the start of its segment, an adopted attempt's finish (the end of
    the segment it ran in) at that end."""
    (plan, grouped), found = in_segments(record), []
    for k, numbers in grouped:
        start = 0 if k is None else plan.start(k)
        origin = Finding("reading_origin") if not k else time_of(f"segments[{k}]", "started_offset")
        found.append(Reading(origin, start))
        found += [Reading(Finding("reading_judged", number=n), decided(plan.attempts[n - 1]))
                  for n in range(1, len(plan.attempts) + 1) if k and plan.judged_in(n) == k]
        for n in numbers:
            entry, later = plan.attempts[n - 1], plan.judged_in(n) is not None
            found += [Reading(Finding("reading_attempt", number=n, field=field), value) for field, value in (
                ("started_offset", entry["started_offset"]), ("finished_offset", entry["finished_offset"]),
                ("decision.decided_offset", None if later else decided(entry))) if value is not None]
        if (k is None or k == len(plan.list) - 1) and record["status"] != "running":
            found.append(Reading(Finding("reading_elapsed"), record["elapsed_seconds"]))
        if k is not None:
            found.append(Reading(time_of(f"segments[{k}]", "elapsed_seconds"), plan.end(k)))
    return found


def offset_problems(record, durations):
    """What the monotonic readings show that no honest loop records: an attempt begun at or beyond the time budget
    (the loop's own check is `>=`), a reading earlier than the one before it, a child (DURATIONS: attempt number ->
    its run.json's duration_seconds) whose own duration is longer than its attempt, a segment's wall reading apart
    from its start time, segments that do not add up (verifier/resumed.py; then nothing else is placed by them).
    Findings, naming the attempt."""
    problems = segment_problems(record)
    if problems:
        return problems
    max_seconds = record["budget"]["max_seconds"]
    for number, entry in enumerate(record["attempts"], 1):
        if entry["started_offset"] >= max_seconds:
            problems.append(Finding("started_past_budget", number=number, offset=entry["started_offset"],
                                    budget=max_seconds))
    latest = None
    for reading in readings(record):
        if latest and reading.value < latest.value:
            problems.append(Finding("reading_backwards", later=reading.label, value=reading.value,
                                    earlier=latest.label, before=latest.value))
        else:
            latest = reading
    return problems + child_problems(record, durations) + anchor_problems(record)


def child_problems(record, durations):
    """A child's own monotonic duration fits inside its attempt: the child ran between the attempt's two readings (an
    attempt cut off, up to the end of the segment it ran in)."""
    problems = []
    for number, entry in enumerate(record["attempts"], 1):
        duration = durations.get(number)
        finished = child_until(record, number)
        known = is_reading(duration) and finished is not None
        if not known or round(duration - finished + entry["started_offset"], 3) <= COARSE:
            continue
        problems.append(Finding("child_longer", number=number, duration=duration, started=entry["started_offset"],
                                finished=finished, span=finished - entry["started_offset"]))
    return problems


def last_reading(record):
    """The last monotonic reading the record holds (a loop's end; None while an older record is still running)."""
    plan = Segments(record)
    if plan.list:
        return plan.end(len(plan.list) - 1)
    return record["elapsed_seconds"] if record["status"] != "running" else None


def attempt_end(record, number):
    """The last reading attempt NUMBER can have run to: the end of the segment it started in (or of the record)."""
    plan = Segments(record)
    return plan.end(plan.started_in(number)) if plan.list else last_reading(record)


def child_until(record, number):
    """The last reading attempt NUMBER's child can have run to: the attempt's finish, or where it was cut off the end
    of its segment; None when not known (an older record still running, or the attempt ran on: ran_on)."""
    finished = record["attempts"][number - 1]["finished_offset"]
    if ran_on(record, number):
        return None
    return finished if finished is not None else attempt_end(record, number)


def ran_on(record, number):
    """Whether attempt NUMBER may have run on past the last reading of its segment: it was still in flight (judged at
    a resume for what its child left, or not finished while the record is still running) when its segment ended
    killed, the segment's elapsed_seconds then only a lower bound. Its child and its wait then took unknown time."""
    plan = Segments(record)
    if not plan.list:
        return False
    k, entry = plan.started_in(number), record["attempts"][number - 1]
    killed = plan.list[k].get("lower_bound") is True or (k == len(plan.list) - 1 and record["status"] == "running")
    found = (entry.get("resume") or {}).get("found")
    return killed and (found in IN_FLIGHT or found is None and entry["finished_offset"] is None)


def anchor_problems(record):
    """A segment's start time and its wall_minus_monotonic are one wall reading, written twice."""
    problems = []
    for k, segment in enumerate(Segments(record).list):
        wall = segment["wall_minus_monotonic"] + segment["started_offset"]
        if not wall - PRECISION - ROUNDING <= moment(segment["started_at"]) <= wall + ROUNDING:
            problems.append(Finding("segment_anchor", where=f"segments[{k}]", started=segment["started_at"], wall=wall))
    return problems


def pauses(record, durations, scenario):
    """For a time budget spent mid-loop: a finding for a person for each stretch between two readings that only the
    loop's own steps separate and that took longer than CHECK_GAP. The budget ran out on the monotonic clock, and
    time an honest loop does not spend there (a process paused, a very slow disk, or readings moved on) decides
    whether the stop is the table's or the machine's. DURATIONS as for offset_problems; SCENARIO's stand-in tool
    (TOOL_WAIT) waits inside each attempt."""
    (plan, grouped), found = in_segments(record), []
    for k, numbers in grouped:
        before = ((Finding("moment_origin"), 0, Finding("doing_nothing")) if not k else
                  (time_of(f"segments[{k}]", "started_offset"), plan.start(k), Finding("doing_judgement")))
        for n in range(1, len(plan.attempts) + 1):
            if k and plan.judged_in(n) == k:
                found += gap(before, Finding("moment_judged", number=n), decided(plan.attempts[n - 1]))
                before = (Finding("moment_judged", number=n), decided(plan.attempts[n - 1]), Finding("doing_write"))
        for n in numbers:
            found += gap(before, Finding("moment_budget_check", number=n), plan.attempts[n - 1]["started_offset"])
            found, before = attempt_pauses(found, n, plan, durations.get(n), TOOL_WAIT.get(scenario, 0))
            if before is None:  # the segment ended in this attempt: a resume judged it
                break
    return found + gap(before, Finding("moment_last_check"), record["elapsed_seconds"]) if before else found


def attempt_pauses(found, number, plan, duration, tool):
    """pauses() inside attempt NUMBER and up to its decision (DURATION: its child's own; TOOL: the stand-in tool's
    wait); (found, the reading the next stretch starts from, or None when the attempt ended its segment)."""
    entry = plan.attempts[number - 1]
    started, finished, decision = entry["started_offset"], entry["finished_offset"], decided(entry)
    if finished is None or entry["state"] == "unknown":  # cut off: what it did is not known
        return found, None
    child = duration if is_reading(duration) else 0
    waited = Finding("tool_wait", seconds=tool) if tool else ""
    found += stretch(Finding("pause_in_attempt", number=number, child=child, tool=waited),
                     finished - started - child - tool, Finding("doing_attempt"))
    if plan.judged_in(number) is not None:
        return found, None
    if decision is None:  # older loops: no reading between the attempt's end and the next budget check
        return found, (Finding("moment_attempt_end", number=number), finished, Finding("doing_check_and_write"))
    found += gap((Finding("moment_attempt_end", number=number), finished, Finding("doing_check")),
                 Finding("moment_decision"), decision)
    return found, (Finding("moment_decided", number=number), decision, Finding("doing_write"))


def gap(before, after, reading):
    """stretch() between the reading BEFORE (its label, value and what the loop does next) and READING."""
    label, value, did = before
    return stretch(Finding("pause_between", since=label, start=value, until=after, end=reading), reading - value, did)


def stretch(where, seconds, did):
    if round(seconds, 3) <= CHECK_GAP:  # readings have 3 decimals: their difference too
        return []
    return [Finding("pause", where=where, seconds=seconds, did=did, most=CHECK_GAP)]


class Event:
    """A wall time of the record and the monotonic readings it lies between (one when it was read with it); its LABEL
    a finding of kind `time_of`."""

    def __init__(self, label, text, low, high, wall=None, shift=0):
        self.label, self.text, self.low, self.high = label, text, low + shift, high + shift
        self.wall = moment(text) if wall is None else wall

    def said(self):
        return Finding("time_said", label=self.label, text=self.text)


def clock_events(record, children, paired):
    """The record's wall times in the order they happened, each with the readings it lies between; CHILDREN maps an
    attempt number to (child run as shown, its run.json started_at, finished_at, duration_seconds). PAIRED: the
    loop read each attempt's start and the segment's origin with their readings (loop-run/4); older loops read an
    attempt's start after its budget check, before its child. Every loop reads its own started_at before it claims
    its name, that is before its first reading. Times that are none are left out."""
    end, (plan, grouped) = last_reading(record), in_segments(record)
    end = float("inf") if end is None else end
    events = [Event(time_of("loop.json", "started_at"), record["started_at"], float("-inf"), 0)]
    for k, numbers in grouped:
        # a segment's own wall clock: shifted onto the first segment's, so the gap between them is no clock step
        shift = plan.list[k]["wall_minus_monotonic"] - plan.list[0]["wall_minus_monotonic"] if k else 0
        if k is not None:
            origin, segment = plan.start(k), plan.list[k]
            events += [Event(time_of(f"segments[{k}]", "started_at"), segment["started_at"], origin, origin,
                             shift=shift),
                       Event(time_of(f"segments[{k}]", "wall_minus_monotonic"), shown(segment["wall_minus_monotonic"]),
                             origin, origin, wall=segment["wall_minus_monotonic"] + origin, shift=shift)]
        for number in numbers:
            events += attempt_events(record, number, children, paired, shift)
    if record["finished_at"] is not None:
        stopped = end if paired or record["reason"] != "time_budget" else float("inf")  # read after its budget check
        shift = plan.list[-1]["wall_minus_monotonic"] - plan.list[0]["wall_minus_monotonic"] if plan.list else 0
        events.append(Event(time_of("loop.json", "finished_at"), record["finished_at"], end, stopped, shift=shift))
    return [event for event in events if event.wall is not None]


def attempt_events(record, number, children, paired, shift):
    """The wall times of attempt NUMBER and its child (see clock_events), on its segment's clock (SHIFT). An attempt
    adopted at a resume finished with its child: its finished_at is the child's, before the end of its segment."""
    entry = record["attempts"][number - 1]
    started, finished = entry["started_offset"], entry["finished_offset"]
    until = child_until(record, number)  # the child ran inside its attempt
    until = float("inf") if until is None else until
    child, child_started, child_finished, duration = children.get(number, (None, None, None, None))
    ran = duration if is_reading(duration) and duration <= until - started else 0
    events = [Event(Finding("reading_attempt", number=number, field="started_at"), entry["started_at"], started,
                    started if paired else until - ran, shift=shift)]
    if child:
        events += [Event(time_of(f"{child}/run.json", "started_at"), child_started, started, until - ran, shift=shift),
                   Event(time_of(f"{child}/run.json", "finished_at"), child_finished, started + ran, until,
                         shift=shift)]
    if finished is not None:
        adopted = (entry.get("resume") or {}).get("found") == "complete_child"
        events.append(Event(Finding("reading_attempt", number=number, field="finished_at"), entry["finished_at"],
                            started + ran if adopted else finished, until if adopted else finished, shift=shift))
    return events


def time_of(where, field):
    return Finding("time_of", where=where, field=field)


def skew_range(events):
    """(lowest, highest) "wall minus monotonic" every event of EVENTS allows; they agree when it is not empty."""
    return max(event.wall - event.high for event in events), min(event.wall - event.low for event in events)


def agreeing(events):
    """For k = 0..len(EVENTS): whether EVENTS[:k] agree. One pass (a running skew range), so finding the step
    stays linear in the number of times however many a record holds."""
    flags, low, high = [True], float("-inf"), float("inf")
    for event in events:
        wall = event.wall
        low, high = max(low, wall - event.high), min(high, wall - event.low)
        flags.append(low - high <= SLACK)
    return flags


def wall_clock_finding(events):
    """None when the wall times agree with the readings; else a finding for a person naming the one step of the
    wall clock that explains them (`clock_set_back`, `clock_slept`), or one that fails (`clock_breaks*`) when no
    single step does."""
    beginnings, endings = agreeing(events), agreeing(events[::-1])[::-1]  # EVENTS[:k] agree, EVENTS[k:] agree
    if beginnings[-1]:
        return None
    splits = [k for k in range(1, len(events)) if beginnings[k] and endings[k]]
    if not splits:
        first = breaks(events)
        second = first + breaks(events[first:])
        places = [between(events[k - 1], events[k]) for k in (first, second) if k < len(events)]
        return Finding("clock_breaks", first=places[0], second=places[1]) if len(places) > 1 else \
            Finding("clock_breaks_once", first=places[0])
    before, after = events[:splits[0]], events[splits[-1]:]
    step = middle(after) - middle(before)
    where = between(before[-1], after[0])
    if step < 0:
        return Finding("clock_set_back", where=where, seconds=-step)
    return Finding("clock_slept", where=where, seconds=step, gap=max(after[0].low - before[-1].high, 0))


def between(earlier, later):
    return Finding("between", first=earlier.said(), second=later.said())


def breaks(events):
    """Where EVENTS stop agreeing: the length of their longest agreeing beginning."""
    beginnings = agreeing(events)
    return beginnings.index(False) - 1 if False in beginnings else len(events)


def middle(events):
    """The skew EVENTS agree on: the middle of their range, or its one finite end (a time read before the claim)."""
    low, high = skew_range(events)
    return high if low == float("-inf") else low if high == float("inf") else (low + high) / 2
