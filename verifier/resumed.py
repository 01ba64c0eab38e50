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
export_review.py or machinery/; it shares verifier/records.py's copy of the rules.
"""
from verifier.records import CHILD_STATUSES, shown

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
    attempt in flight, an adopted attempt's finish that is not the end of its segment. Chinese, naming the field.
    A segment's after_attempt needs no rule of its own: it places each attempt's readings (Segments), whose order
    and judgements are checked."""
    plan, problems = Segments(record), []
    for k in range(1, len(plan.list)):
        before, segment = plan.list[k - 1], plan.list[k]
        if segment["started_offset"] != plan.end(k - 1):  # the loop adds them up to 3 decimals, as here
            problems.append(f"segments[{k}] 的 started_offset（{shown(segment['started_offset'])}）不等于上一段的 "
                            f"started_offset 加 elapsed_seconds（{shown(before['started_offset'])} + "
                            f"{shown(before['elapsed_seconds'])}）：续跑从上一段最后的读数接着计时，各段首尾相接，"
                            "段的时间被改动过。")
        gap = segment["wall_minus_monotonic"] - before["wall_minus_monotonic"]
        if segment["gap_seconds"] != round(gap, 3):
            problems.append(f"segments[{k}] 的 gap_seconds（{shown(segment['gap_seconds'])}）不是这一段与上一段"
                            f"wall_minus_monotonic 之差（{gap:.3f}）：两段之间的日历时间间隔就是这个差，记录被改动过。")
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
        return [f"第 {number} 次尝试的 resume 说它在第 {shown(judged['segment'])} 段开始时被判断，而那一段开始时它不是"
                "进行中的最后一次尝试（或没有这一段）：续跑只判断它找到的那一次尝试，尝试被重新编号、删除，或记录被改动过。"]
    if judged["found"] == "complete_child" and entry["finished_offset"] != plan.end(plan.started_in(number)):
        return [f"第 {number} 次尝试是续跑时采用的子运行，它的 finished_offset（{shown(entry['finished_offset'])}）应是它所在"
                f"那一段的结束读数（{plan.end(plan.started_in(number)):.3f}，一个上限）：记录被改动过。"]
    return []


def judgement_problem(number, entry, child, shown_child):
    """Whether what the resume found (ENTRY's `resume`) is what the child SHOWN_CHILD left: CHILD is its
    child_view() (None when its folder does not exist). A judgement the child contradicts fails."""
    found, run_status = entry["resume"]["found"], entry["resume"]["run_status"]
    status = child["status"] if child else None
    said = f"第 {number} 次尝试在续跑时被判断为 {found}"
    if found == "no_child" and child is not None:
        return (f"{said}（子运行不存在），而 {shown_child} 在：续跑之后不会再建这个子运行，判断与证据矛盾，"
                "记录或子运行被改动过。")
    if found == "partial_child" and child is None:
        return f"{said}（子运行没做完，保留为证据），而 {shown_child} 不在了：证据被删除或移走了。"
    if found == "partial_child" and status in FINISHED:
        return (f"{said}（子运行没做完），而 {shown_child}/run.json 是已结束的记录（status {shown(status)}）："
                "做完了的子运行会被采用，判断与证据矛盾，记录被改动过。")
    if found == "complete_child" and status not in FINISHED:
        return (f"{said}（采用做完了的子运行），而 {shown_child} 的 run.json 不是已结束的记录"
                f"（status {shown(status)}）：判断与证据矛盾，记录被改动过。")
    if found == "complete_child" and entry["finished_at"] != child["finished_at"]:
        return (f"{said}，它的 finished_at（{shown(entry['finished_at'])}）应是子运行自己的结束时间"
                f"（{shown(child['finished_at'])}）：记录被改动过。")
    if run_status != status:
        return (f"{said}时记下 run.json 的状态是 {shown(run_status)}，而 {shown_child} 的是 {shown(status)}："
                "判断与证据矛盾，记录或子运行被改动过。")
    return None
