"""The clocks of one loop record: budgets and order on its monotonic readings, its wall clock explained.

Part of verify_loop (the command line); verifier/check.py calls `offset_problems` and `wall_clock_finding`
(over `clock_events`) for every record with monotonic readings (loop-run/3, and loop-run/2 of an older
workspace), and `budget_check_gap` for a time budget spent mid-loop. A loop keeps two clocks
(docs/loop/TASK.md): the monotonic offsets, seconds since its first record, which only go forward and judge
the budgets and the order of events; and wall times (UTC, whole seconds) for people. An honest machine's
wall clock may step once (NTP sets it back, a suspended laptop wakes up hours later while the monotonic clock
stood still): a disagreement that one step explains is for a person, named with where it happened; one that
no single step explains, and any offset going back, no honest machine makes. It does not import loop_lab.py,
harness.py, export_review.py or machinery/; it shares only verifier/records.py's copy of the rules (timestamps
and their precision).
"""
from verifier.records import PRECISION, ROUNDING, TOLERANCE, moment, shown

# Wall times are whole seconds (up to 1 s early), read a moment apart from their monotonic reading: events
# of one honest clock agree on "wall minus monotonic" within this much.
SLACK = PRECISION + TOLERANCE
# Seconds an honest loop may take between an attempt's end and the next budget check (writing its record).
CHECK_GAP = 2


def offset_problems(record):
    """What the monotonic offsets show that no honest loop records: a start beyond the time budget, an
    offset that goes back, an elapsed_seconds before the last reading. Chinese, naming the attempt."""
    max_seconds, problems, latest = record["budget"]["max_seconds"], [], (0, "循环的第一份记录")
    for number, entry in enumerate(record["attempts"], 1):
        started, finished = entry["started_offset"], entry["finished_offset"]
        if started - max_seconds > ROUNDING:
            problems.append(f"第 {number} 次尝试开始时的读数是 {shown(started)} 秒，已超过时间预算 max_seconds="
                            f"{shown(max_seconds)}：循环不会在预算用完后开始新的尝试，时间或预算被改动过。")
        for field, value in (("started_offset", started), ("finished_offset", finished)):
            if value is not None and value < latest[0]:
                problems.append(f"第 {number} 次尝试的 {field}（{shown(value)}）早于{latest[1]}（{shown(latest[0])}）："
                                "单调时钟不会倒退，时间被改动过。")
            if value is not None and value >= latest[0]:
                latest = (value, f"第 {number} 次尝试的 {field}")
    if record["status"] != "running" and record["elapsed_seconds"] < latest[0]:
        problems.append(f"elapsed_seconds（{shown(record['elapsed_seconds'])}）早于{latest[1]}（{shown(latest[0])}）："
                        "循环结束时的读数不会比这更早，用时被改动过。")
    return problems


def budget_check_gap(record):
    """For a time budget spent mid-loop: a text for a person when the reading of that budget check
    (elapsed_seconds) lies long after the last reading before it, else None. An honest loop checks the budget
    as soon as the attempt before is written down, a fraction of a second later; only a process paused
    meanwhile (Ctrl-Z, a debugger) leaves more, and so does an elapsed_seconds moved on with its finish time."""
    attempts, elapsed = record["attempts"], record["elapsed_seconds"]
    # loop-run/1 recorded no readings per attempt: its budget check cannot be timed against them
    last, label = (attempts[-1].get("finished_offset"), f"第 {len(attempts)} 次尝试结束时的读数") if attempts \
        else (0, "循环第一份记录时的读数")
    if last is None or elapsed - last <= CHECK_GAP:
        return None
    return (f"时间预算用完时的读数 elapsed_seconds（{shown(elapsed)}）比{label}（{shown(last)}）晚了 "
            f"{elapsed - last:.3f} 秒：诚实的循环记下一次尝试就立刻检查预算，中间不到一秒，只有进程被暂停过"
            "（例如 Ctrl-Z、调试器）才会这样，或者这两个读数被改过。请向运行者确认，由人决定是否采信这个 time_budget 停止。")


class Event:
    """A wall time of the record and the monotonic offsets it lies between (one offset when it has its own)."""

    def __init__(self, label, text, low, high):
        self.label, self.text, self.wall, self.low, self.high = label, text, moment(text), low, high

    def said(self):
        return f"{self.label}（{self.text}）"


def clock_events(record, children):
    """The record's wall times in the order they happened, each with its offsets; CHILDREN maps an attempt
    number to (child run as shown, its run.json started_at, finished_at). Times that are none are left out."""
    end = record["elapsed_seconds"] if record["status"] != "running" else float("inf")
    events = [Event("loop.json 的 started_at", record["started_at"], 0, 0)]
    for number, entry in enumerate(record["attempts"], 1):
        started, finished = entry["started_offset"], entry["finished_offset"]
        events.append(Event(f"第 {number} 次尝试的 started_at", entry["started_at"], started, started))
        child, child_started, child_finished = children.get(number, (None, None, None))
        until = finished if finished is not None else end  # the child ran inside its attempt
        events += [Event(f"{child}/run.json 的 {field}", text, started, until)
                   for field, text in (("started_at", child_started), ("finished_at", child_finished)) if child]
        if finished is not None:
            events.append(Event(f"第 {number} 次尝试的 finished_at", entry["finished_at"], finished, finished))
    if record["finished_at"] is not None:
        events.append(Event("loop.json 的 finished_at", record["finished_at"], end, end))
    return [event for event in events if event.wall is not None]


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
    """None when the wall times agree with the offsets; else ("needs_human", text) naming the one step of
    the wall clock that explains them, or ("fail", text) when no single step does."""
    beginnings, endings = agreeing(events), agreeing(events[::-1])[::-1]  # EVENTS[:k] agree, EVENTS[k:] agree
    if beginnings[-1]:
        return None
    splits = [k for k in range(1, len(events)) if beginnings[k] and endings[k]]
    if not splits:
        first = breaks(events)
        second = first + breaks(events[first:])
        places = "，又".join(f"在{spaced(events[k - 1].said())}与{spaced(events[k].said())}之间" for k in (first, second)
                            if k < len(events))
        return "fail", (f"墙上时间与单调时钟的读数至少{places}各对不上一次，一次时钟跳变解释不了："
                        "诚实的机器不会这样，时间被改动过。")
    before, after = events[:splits[0]], events[splits[-1]:]
    step = middle(after) - middle(before)
    where = f"在{spaced(before[-1].said())}与{spaced(after[0].said())}之间"
    gap = max(after[0].low - before[-1].high, 0)
    cause = (f"系统时钟{where}被往回调了约 {duration(-step)}（例如 NTP 校时）" if step < 0 else
             f"{where}电脑休眠过约 {duration(step)}，或系统时钟被往前调了这么多（单调时钟在这段只走了 {gap:.3f} 秒）")
    return "needs_human", (f"墙上时间与单调时钟的读数在一处对不上：{cause}。诚实的机器也会这样，这不是改动过的证据；"
                           "请向运行者确认这台电脑的时钟，由人决定是否采信。")


def breaks(events):
    """Where EVENTS stop agreeing: the length of their longest agreeing beginning."""
    beginnings = agreeing(events)
    return beginnings.index(False) - 1 if False in beginnings else len(events)


def spaced(text):
    """TEXT after a Chinese word: a space before a path or a field name, as the workspace writes them."""
    return f" {text}" if text[:1].isascii() else text


def duration(seconds):
    """SECONDS as a person reads a clock step: seconds, minutes, hours or days."""
    for unit, size in (("天", 86400), ("小时", 3600), ("分钟", 60)):
        if seconds >= 2 * size:
            return f"{round(seconds / size)} {unit}"
    return f"{round(seconds)} 秒"


def middle(events):
    low, high = skew_range(events)
    return (low + high) / 2
