"""The outer loop of lesson 14: decide, round by round, whether to try the export again or stop.

    python3 loop_lab.py --run NAME --scenario repair|stuck|semantic|permission|slow
                        [--max-attempts 1..5] [--max-seconds 0..300] [--attempt-timeout 0.1..300]

`OuterLoop.rounds()` is the lesson's flowchart, one numbered step per call, as in
docs/loop/TASK.md「每一轮的顺序」: 1 budget, 2 proposal, 3 scope, 4 fresh child, 5 independent
check, then the decision, which is written down with the attempt (continue or stop, and why).
Every way the loop can end is a `Stop` returned where it happens; only Ctrl-C / termination,
unexpected exceptions and a record that cannot be saved are raised. The proposals come from the
author's scripted choosers (data, not a model), so success, stall, budget exhaustion, the
permission boundary and a slow tool can be reproduced exactly. Everything the loop did is kept in
`loop-runs/NAME/loop.json`, written atomically when the name is claimed (folder and first record
appear as one step), before and after every attempt and at the end. A stop other than
`needs_review` carries a hand-off: where it stopped, what was done, what to inspect, what a
person decides. Budgets and the order of events are judged on the monotonic clock (offsets from
the first record); the record's `*_at` times are wall-clock readings beside them.

With `--attempt-timeout S` every attempt runs in a child process of its own (the executor, near
the end of this file): terminated when S seconds have passed, killed after a short grace, never
left running. Without it, attempts run in this process, as they always did.

Shared with others: harness.py runs each child and lends the watched-file list, the samples, the
name rule and the fingerprint; verify_harness.py checks each child (imported only when a child
has run); cli.py is the command-line plumbing and the one table of error glosses. `run_loop()` is
the in-process entry (clocks, sleep, child runner and checker can be injected); verify_loop.py
checks its records without importing it.
"""
# From the script's first line on, Ctrl-C or termination must end in one JSON line and exit 130. Until
# main() can answer them, the signals that arrive are only noted; main() raises the first one.
try:
    import signal
    SIGNALS_WHILE_STARTING = []

    def note_signal(number, frame):
        SIGNALS_WHILE_STARTING.append(number)

    SIGNALS_HELD = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
    BEFORE_START = {number: signal.signal(number, note_signal)
                    for number in SIGNALS_HELD} if __name__ == "__main__" else {}
except KeyboardInterrupt:  # in the instant before the handlers above were in place
    if __name__ != "__main__":
        raise
    import sys
    sys.stdout.write('{"status": "interrupted", "reason": "keyboard_interrupt", "semantic_review": "pending", '
                     '"attempts": 0, "actual_api_calls": 0}\n')
    try:
        sys.stderr.write("已中断：循环还没开始，没有创建任何记录。\n")
    except UnicodeEncodeError:  # a console that cannot show Chinese: the line above is what counts
        pass
    raise SystemExit(130)

import cli  # first: it refuses a Python older than 3.11 before anything else runs

import json
import math
import os
import sys
import time
from collections import namedtuple
from pathlib import Path

import harness
from cli import (EXIT_INTERRUPTED, EXIT_OK, EXIT_STOP, EXIT_USAGE, ChineseArgumentParser, NameTaken,
                 create_record_folder, display_path, print_json, say, use_safe_console, write_json_atomic)

ROOT = Path(__file__).resolve().parent
SCENARIOS = ("repair", "stuck", "semantic", "permission", "slow")
# The loop's context: what the harness watches, plus this script and the task it follows.
LOOP_FILES = harness.WATCHED_FILES + ("loop_lab.py", "docs/loop/TASK.md")
MAX_NAME = 61  # the children are NAME-01 ... and a harness run name has at most 64 characters
ATTEMPTS_RANGE = (1, 5)
SECONDS_RANGE = (0, 300)
ATTEMPT_TIMEOUT_RANGE = (0.1, 300)
STAND_IN_TOOL_SECONDS = 3  # slow: how long the stand-in tool takes to return, before the harness runs
GRACE_SECONDS = 0.5  # the executor's child may end by itself this long after it was asked to; then it is killed
TIMESTAMP = "%Y-%m-%dT%H:%M:%SZ"  # the harness's format: UTC, whole seconds
CONTINUE_WHY = "已确认的教学失败，第一次出现：带着反馈继续"


class Stop(namedtuple("Stop", "status reason handoff error_type why elapsed", defaults=(None, None, None))):
    """How the loop ends: STATUS/REASON, the HANDOFF for a person (None for needs_review), ERROR_TYPE.

    WHY is the decision in the lesson's terms when the stop follows an attempt; ELAPSED is the clock
    reading a time-budget stop judged (it becomes the record's elapsed_seconds).
    """


class RecordNotSaved(Exception):
    """loop.json could not be written: the last good record stays as it is."""


class AttemptTimedOut(Exception):
    """The executor ended an attempt at its limit of SECONDS after WAITED seconds; LEFT: what the child left."""

    def __init__(self, seconds, waited, left):
        super().__init__(f"超过单次时限 {seconds:g} 秒")
        self.seconds, self.waited, self.left = seconds, waited, left


def explain(error_type):
    return f"{cli.gloss(error_type)}（{error_type}）"


# The scenario choosers: the author's script. Each sees the feedback of the finished attempts
# (None for an attempt that did not fail) and proposes the next action.
def export(sample):
    return {"action": "export", "sample": sample}


def propose_repair(feedback):
    """bad-quote first; the prepared valid sample once the exporter has rejected it by its rules."""
    rejected = any(f and f["error_type"] == "ValidationError" for f in feedback)
    return export("valid" if rejected else "bad-quote")


CHOOSERS = {
    "repair": propose_repair,
    "stuck": lambda feedback: export("bad-quote"),
    "semantic": lambda feedback: export("semantic"),
    "permission": lambda feedback: {"action": "publish", "target": "external-website"},
    "slow": propose_repair,  # repair's script; each of its attempts first waits on the stand-in tool
}


def within_scope(proposal):
    """docs/loop/TASK.md allows one action: `export` of one of the three known samples."""
    return proposal.get("action") == "export" and proposal.get("sample") in harness.SAMPLES


def attempt_body(root, name, sample, tool_wait, sleep=time.sleep, run_child=harness.run_harness):
    """One attempt's work: slow's stand-in tool first (a request that takes TOOL_WAIT seconds to return;
    the harness itself never waits), then one harness run in ROOT/runs/NAME; its run.json record."""
    if tool_wait:
        sleep(tool_wait)
    return run_child(root, name, sample)


def check_child_run(run_dir):
    import verify_harness  # only once a child has run: budget and permission stops never need it
    return verify_harness.verify_run(run_dir)


def as_exception(number):
    """The exception a noted signal stands for: KeyboardInterrupt for Ctrl-C, cli.Terminated otherwise."""
    return KeyboardInterrupt() if number == signal.SIGINT else cli.Terminated(signal.Signals(number).name)


def answer_signals_from_now_on():
    """Ctrl-C and termination raise from here on; one that came while the script was starting, now.

    A signal whose handler cli.run() has installed meanwhile (termination) keeps that handler.
    """
    for number, handler in BEFORE_START.items():
        if signal.getsignal(number) is note_signal:
            signal.signal(number, handler)
    if SIGNALS_WHILE_STARTING:
        raise as_exception(SIGNALS_WHILE_STARTING[0])


class held_interrupts:
    """Ctrl-C and termination wait until the block is done, then are raised as usual.

    The claim of a name and the executor's clean-up are never cut in half: what is on disk matches
    what the loop holds when the interrupt is handled.
    """

    def __enter__(self):
        self.caught, self.previous = None, {}
        for number in SIGNALS_HELD:
            if signal.getsignal(number) is None:  # a handler set outside Python could not be put back
                continue
            try:
                self.previous[number] = signal.signal(number, self.hold)
            except (ValueError, OSError):  # not the main thread: nothing can be held there
                pass
        return self

    def hold(self, number, frame):
        self.caught = self.caught or number

    def __exit__(self, *exc_info):
        for number, handler in self.previous.items():
            signal.signal(number, handler)
        if self.caught and exc_info[0] is None:  # a block that failed reports its own exception
            raise as_exception(self.caught)
        return False


def settle_interrupts(previous):
    """Ignores Ctrl-C and termination from now on, noting in PREVIOUS the handlers to put back.

    Called as the final record is written: a signal after that changes neither the record, nor the
    printed line, nor the exit code. signal.signal() first raises a signal that has already landed,
    so one that came just before is still answered (and recorded) as usual.
    """
    for number in SIGNALS_HELD:
        if number in previous or signal.getsignal(number) is None:
            continue
        try:
            previous[number] = signal.signal(number, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread: nothing can be ignored there
            pass


def restore_interrupts(previous):
    """Puts back the handlers settle_interrupts() replaced (for callers that go on after the loop)."""
    while previous:
        number, handler = previous.popitem()
        signal.signal(number, handler)


def exit_code(status):
    return {"needs_review": EXIT_OK, "interrupted": EXIT_INTERRUPTED}.get(status, EXIT_STOP)


def shown_number(value):
    """A number as the person typed it: 1e9 shows as 1000000000, not 1e+09; nan and inf as themselves."""
    if type(value) not in (int, float):
        return repr(value)
    return str(as_given(value)) if math.isfinite(value) else str(value)


def as_given(seconds):
    """A number of seconds as the record keeps it: 30 rather than 30.0, 2.5 as it is."""
    return int(seconds) if seconds == int(seconds) else seconds


def in_range(value, limits, kinds=(int, float)):
    return type(value) in kinds and limits[0] <= value <= limits[1]  # NaN is in no range


def argument_problem(name, scenario, max_attempts, max_seconds, attempt_timeout=None):
    """Why these arguments cannot start a loop (Chinese), or None."""
    problem = harness.name_problem(name, MAX_NAME)
    if problem:
        return problem
    if scenario not in SCENARIOS:
        return f"--scenario 只能是 {'、'.join(SCENARIOS)} 之一，收到 {scenario!r}。"
    if not in_range(max_attempts, ATTEMPTS_RANGE, (int,)):
        return f"--max-attempts 应为 {ATTEMPTS_RANGE[0]}-{ATTEMPTS_RANGE[1]} 的整数（含第一次尝试），收到 {max_attempts!r}。"
    if not in_range(max_seconds, SECONDS_RANGE):
        return (f"--max-seconds 应为 {SECONDS_RANGE[0]}-{SECONDS_RANGE[1]} 秒（可以是小数，只在轮次边界检查），"
                f"收到 {shown_number(max_seconds)}。")
    if attempt_timeout is not None and not in_range(attempt_timeout, ATTEMPT_TIMEOUT_RANGE):
        return (f"--attempt-timeout 应为 {ATTEMPT_TIMEOUT_RANGE[0]:g}-{ATTEMPT_TIMEOUT_RANGE[1]:g} 秒（单次尝试的时限，"
                f"到时终止执行它的子进程），收到 {shown_number(attempt_timeout)}。")
    return None


def used_child_name(root, name):
    """`runs/NAME-NN` (any case) that makes NAME a used loop name, or None."""
    try:
        children = os.listdir(os.path.join(root, "runs"))
    except OSError:
        return None
    prefix = name.lower() + "-"
    return next((f"runs/{child}" for child in sorted(children)
                 if child.lower().startswith(prefix) and len(child) == len(prefix) + 2
                 and child[-2:].isascii() and child[-2:].isdigit()), None)


def used_name(root, name):
    """What makes NAME a used loop name (loop-runs/NAME or runs/NAME-NN, any case), or None."""
    try:
        loops = os.listdir(os.path.join(root, "loop-runs"))
    except OSError:
        loops = []
    same = next((entry for entry in loops if entry.lower() == name.lower()), None)
    return f"loop-runs/{same}" if same else used_child_name(root, name)


def unused_name(root, name):
    """A suggestion for the next loop name that nothing uses yet."""
    return harness.suggest_name(name, lambda other: used_name(root, other), MAX_NAME)


def new_loop(root, name, scenario, max_attempts=3, max_seconds=30, attempt_timeout=None, *,
             clock=time.monotonic, wall=time.time, sleep=time.sleep, tool_seconds=STAND_IN_TOOL_SECONDS,
             run_child=harness.run_harness, check_child=check_child_run):
    """An OuterLoop ready to run; ValueError (in Chinese) for arguments that cannot start one.

    CLOCK is the monotonic clock of budgets and offsets, WALL the calendar clock of the `*_at` times,
    SLEEP and TOOL_SECONDS the stand-in tool's wait (slow only; an attempt in a process of its own
    really waits TOOL_SECONDS). RUN_CHILD and CHECK_CHILD serve attempts run in this process.
    """
    problem = argument_problem(name, scenario, max_attempts, max_seconds, attempt_timeout)
    if problem:
        raise ValueError(problem)
    return OuterLoop(Path(root), name, scenario, (max_attempts, max_seconds, attempt_timeout),
                     dict(clock=clock, wall=wall, sleep=sleep, run_child=run_child, check_child=check_child,
                          tool_wait=tool_seconds if scenario == "slow" else 0))


def run_loop(root, name, scenario, **options):
    """Runs the loop in ROOT/loop-runs/NAME/; returns (loop.json record, exit code).

    ValueError for bad arguments, cli.NameTaken (a FileExistsError) for a used name and OSError
    when the first record cannot be made: nothing is created then. OPTIONS as for new_loop().
    """
    loop = new_loop(root, name, scenario, **options)
    try:
        code = loop.run()
    finally:
        restore_interrupts(loop.settled)  # the caller goes on: its Ctrl-C works again
    return loop.record, code


class OuterLoop:
    """One loop run: its record, the rounds, and how each kind of stop is written down."""

    def __init__(self, root, name, scenario, budget, tools):
        self.root, self.name, self.scenario = root, name, scenario
        self.max_attempts, self.max_seconds, self.attempt_timeout = budget
        self.clock, self.wall, self.sleep = tools["clock"], tools["wall"], tools["sleep"]
        self.run_child, self.check_child, self.tool_wait = tools["run_child"], tools["check_child"], tools["tool_wait"]
        self.folder = root / "loop-runs" / name
        self.claimed, self.start, self.settled = False, None, {}
        self.record = {
            "schema": "loop-run/2", "id": os.urandom(16).hex(), "run": name, "scenario": scenario,
            "budget": {"max_attempts": self.max_attempts, "max_seconds": as_given(self.max_seconds),
                       "attempt_timeout": None if self.attempt_timeout is None else as_given(self.attempt_timeout)},
            "status": "running", "reason": None, "error_type": None,
            "semantic_review": "pending", "actual_api_calls": 0,
            "context": harness.fingerprint(root, LOOP_FILES),
            "attempts": [], "blocked_proposal": None, "handoff": None,
            "elapsed_seconds": 0, "started_at": self.wall_time(), "finished_at": None,
        }

    @property
    def attempts(self):
        return self.record["attempts"]

    def run(self):
        """Claims the name with the first record, goes round until a Stop, writes it down; the exit code."""
        try:
            with held_interrupts():
                create_record_folder(self.folder.parent, self.name, self.write_first,
                                     lambda: used_child_name(self.root, self.name))
                self.claimed, self.start = True, self.clock()  # offsets and budgets count from the first record
            stop = self.rounds()
        except KeyboardInterrupt as exc:
            if not self.claimed:
                raise
            stop = self.interrupted(exc)
        except RecordNotSaved as exc:
            return self.record_not_saved(exc)
        except Exception as exc:  # anything unforeseen is for a person, never a retry
            if not self.claimed:
                raise
            stop = self.unexpected(exc)
        return self.finish(stop)

    def rounds(self):
        """The lesson's flowchart (docs/loop/TASK.md「每一轮的顺序」), round after round, until a Stop."""
        while True:
            number = len(self.attempts) + 1
            # 1. budget: is there an attempt left, and time to start one? (this reading starts the attempt)
            now = self.offset()
            stop = self.budget_stop(number, now)
            if stop:
                return stop
            # 2. proposal: the scenario's script chooses from the feedback so far
            proposal = CHOOSERS[self.scenario]([attempt["feedback"] for attempt in self.attempts])
            # 3. scope: only `export` of a known sample may run; anything else is not done
            if not within_scope(proposal):
                return self.permission_boundary(number, proposal)
            # 4. fresh child: the context is as it was at the start, then the attempt runs in runs/NAME-NN
            stop = self.context_stop(f"第 {number} 次尝试开始前")
            if stop:
                return stop
            attempt = self.start_attempt(number, proposal, now)
            try:
                child = self.run_attempt(attempt)
            except FileExistsError:  # someone else's runs/NAME-NN: this attempt did not run
                return self.child_name_taken(attempt)
            except AttemptTimedOut as timeout:  # ended by the executor: its outcome is unknown, never retried
                stop = self.timed_out(attempt, timeout)
                self.write_decision(attempt, stop)
                return stop
            # 5. independent check of the child's evidence, then of the context once more
            verdict = self.check_child(self.root / attempt["child_run"])
            self.finish_attempt(attempt, child)
            stop = self.context_stop(f"第 {number} 次尝试的子运行之后") or self.decide(attempt, verdict)
            # decision, written down with the attempt: a stop, or (a confirmed teaching failure seen for
            # the first time) its feedback goes into the next proposal
            self.write_decision(attempt, stop)
            if stop:
                return stop

    # --- the steps -------------------------------------------------------------------------------

    def offset(self):
        """Seconds on the loop's monotonic clock since its first record, as recorded (3 decimals)."""
        return round(self.clock() - self.start, 3)

    def wall_time(self):
        return time.strftime(TIMESTAMP, time.gmtime(self.wall()))

    def budget_stop(self, number, now):
        if number > self.max_attempts:
            return self.budget_exhausted(number, "attempt_budget",
                                         f"尝试次数预算已用完（最多 {self.max_attempts} 次，含第一次）")
        if now >= self.max_seconds:
            return self.budget_exhausted(number, "time_budget", f"已用 {now:.3f} 秒，达到时间预算 "
                                         f"{self.record['budget']['max_seconds']} 秒（轮次边界检查）", now)
        return None

    def context_stop(self, when):
        """A Stop when any of the 16 files differs from the start of the loop, else None."""
        recorded = self.record["context"]["entries"]
        current = harness.fingerprint(self.root, LOOP_FILES)["entries"]
        changed = [rel for rel in recorded if current[rel] != recorded[rel]]
        gone = [rel for rel in changed if current[rel] == "missing"]
        return self.context_changed(when, changed, gone) if changed else None

    def start_attempt(self, number, proposal, now):
        sample_file = f"samples/{proposal['sample']}.json"  # unchanged since the start: just checked
        candidate = dict(proposal, sha256=self.record["context"]["entries"][sample_file])
        attempt = {"attempt": number, "candidate": candidate, "child_run": f"runs/{self.child_name(number)}",
                   "state": "running", "status": None, "feedback": None,
                   "started_at": self.wall_time(), "finished_at": None,
                   "started_offset": now, "finished_offset": None, "decision": None, "timeout": None}
        self.attempts.append(attempt)
        self.save()
        self.say_start(attempt)
        return attempt

    def run_attempt(self, attempt):
        """The attempt: in a process of its own with --attempt-timeout (AttemptTimedOut when it had to be
        ended), else here; either way slow's stand-in tool first, then the harness in runs/NAME-NN."""
        name, sample = self.child_name(attempt["attempt"]), attempt["candidate"]["sample"]
        if self.attempt_timeout is None:
            return attempt_body(self.root, name, sample, self.tool_wait, self.sleep, self.run_child)
        return run_in_own_process(self.root, name, sample, self.tool_wait, self.attempt_timeout)

    def finish_attempt(self, attempt, child):
        error = child["error"]
        attempt.update(state="done", status=child["status"],
                       feedback=error and {"error_type": error["type"], "message": error["message"]},
                       finished_offset=self.offset(), finished_at=self.wall_time())
        self.say_round(attempt)

    def decide(self, attempt, verdict):
        """The flowchart's decision: evidence first, then mechanical pass, then repeat or keep going."""
        if verdict["result"] == "fail":
            return self.evidence_mismatch(attempt, verdict["problems"])
        if verdict["result"] != "pass" or attempt["status"] not in ("needs_review", "failed"):
            return self.child_needs_human(attempt)
        if attempt["status"] == "needs_review":
            return Stop("needs_review", "mechanical_pass", None, why="独立核对通过，子运行机械通过：停止，内容等待人工审核")
        earlier = next((a for a in self.attempts[:-1] if same_failure(a, attempt)), None)
        return self.stalled(attempt, earlier) if earlier else None

    def write_decision(self, attempt, stop):
        """What was decided after ATTEMPT, kept with it: go on with its feedback, or STOP and why."""
        attempt["decision"] = ({"next": "continue", "reason": "first_failure", "why": CONTINUE_WHY} if stop is None
                               else {"next": "stop", "reason": stop.reason, "why": stop.why})
        self.save()

    # --- stops: what a person needs in each case -----------------------------------------------

    def budget_exhausted(self, number, reason, why, elapsed=None):
        say(f"[第 {number} 轮] {why}：不再提出候选，停止（budget_exhausted/{reason}）。")
        if reason == "attempt_budget":
            decide = ("尝试次数是硬上限：用完就停，即使下一个候选可能通过也不多试（本课用 --max-attempts "
                      "限制尝试次数时，演示的正是这一点，这是预期结果）。"
                      f"最后一次反馈在 {self.attempts[-1]['child_run']}/run.json。"
                      "请决定是否值得给更多尝试（--max-attempts 最多 5）并用新名称重新运行；在真实项目里，若反馈指向"
                      "候选本身，由候选的作者修正候选后再用新名称运行。本记录保持不动。")
        elif self.attempts:
            decide = ("时间预算在两轮之间耗尽：先核对已完成的子运行是否与记录一致，再决定是否用更大的 "
                      "--max-seconds（最多 300）和新名称重新运行。本记录保持不动。") + self.slow_lesson(number)
        elif self.max_seconds == 0:
            decide = ("还没开始任何尝试。本课 --max-seconds 0 情景演示的正是“开始前预算已不足”，这是预期结果；"
                      "要真正运行，请给出大于 0 的 --max-seconds（最多 300）并用新名称运行。")
        else:
            decide = (f"还没开始任何尝试，也没有子运行：时间预算 {self.record['budget']['max_seconds']} 秒在第 1 轮"
                      "开始前就用完了（循环启动本身用掉了这些时间）。请用更大的 --max-seconds（最多 300）和新名称"
                      "重新运行。本记录保持不动。")
        return Stop("budget_exhausted", reason, self.handoff(f"第 {number} 轮开始前：{why}", decide), elapsed=elapsed)

    def slow_lesson(self, number):
        if self.scenario != "slow":
            return ""
        return (f"在本课中这是 slow 情景配小时间预算的预期结果：第 {number - 1} 次尝试开始时预算还够，它等替身工具"
                f" {self.tool_wait:g} 秒时没有被打断——轮次边界检查不是超时；要在动作进行中终止它，需要 --attempt-timeout。")

    def permission_boundary(self, number, proposal):
        action, target = proposal.get("action"), proposal.get("target") or proposal.get("sample")
        self.record["blocked_proposal"] = {
            "action": action, "target": target,
            "reason": "docs/loop/TASK.md 只允许 export 三个已知样例之一；这个动作不在本轮范围内，没有执行。",
        }
        say(f"[第 {number} 轮] 候选 {action} {target}：超出允许范围，已拦下，没有执行（needs_human/permission_boundary）。")
        before_export = "本轮尚未导出就" if not self.attempts else ""
        return Stop("needs_human", "permission_boundary", self.handoff(
            f"第 {number} 轮的范围检查：{before_export}提议 {action} 到 {target}，超出只允许本地导出的范围",
            f"先澄清任务目标：是否真的需要 {action}？循环不能执行它，也不能自己扩大范围。在本课中这是 permission "
            "情景的预期结果：越权提议被拦下并记在 blocked_proposal，没有执行。在真实项目里，是否授权这类动作由"
            "项目负责人决定，写进新的任务说明后再用新名称运行。"))

    def context_changed(self, when, changed, gone):
        files = "、".join(rel + ("（已不存在）" if rel in gone else "") for rel in changed)
        return self.needs_human("ContextChanged", f"{when}发现循环开始后这些文件变了：{files}", (
            f"请先弄清是谁、为什么改了 {files}。在本课中样例、笔记、验证器和任务文档都不应被改动：若改动不是有意的，"
            "把这些文件恢复为课程原样；在真实项目里，由负责这些文件的人确认改动是否应当保留。之后用新名称重新运行，"
            "让新记录对应新版本；本记录和已有子运行保持不动。"), changed,
            why=f"循环开始后上下文文件变了（{files}）：停止，交给人")

    def child_name_taken(self, attempt):
        self.attempts.remove(attempt)  # nothing of it ran: it is not counted
        child = attempt["child_run"]
        return self.needs_human("FileExistsError", f"第 {attempt['attempt']} 次尝试开始时，{child} 已被别的运行占用，"
                                "本次尝试没有执行、不计数", (
            f"{child} 不是本循环创建的，可能是别人的证据：不要删除或改写它。请换一个新名称重新运行整个循环。"), [child])

    def evidence_mismatch(self, attempt, problems):
        child = attempt["child_run"]
        found = "；".join(problem.rstrip("。") for problem in problems)
        artifact = [f"{child}/artifact/"] if (self.root / child / "artifact").is_dir() else []
        return self.needs_human("EvidenceMismatch", f"独立核对 {child} 没有通过：{found}", (
            f"子运行的记录与它留下的文件对不上：不要改写记录让它通过。请对照 {child}/run.json 和它的产物"
            "（artifact/，失败的运行没有这个目录）找出不一致的原因（被改动、磁盘问题或程序错误），保留这些证据，"
            "之后用新名称重新运行。"), artifact, why="独立核对没有通过，记录与文件对不上：不能当作反馈，停止，交给人")

    def child_needs_human(self, attempt):
        child, feedback = attempt["child_run"], attempt["feedback"] or {}
        error_type = feedback.get("error_type") or "ChildNeedsHuman"
        return self.needs_human(error_type, f"子运行 {child} 以 {attempt['status']} 结束："
                                f"{feedback.get('message') or '没有记录错误消息'}", (
            f"这不是规则拒绝，而是环境或程序的问题：请看 {child}/run.json 的 error，判断原因；不要为了让它通过而修改"
            "样例、笔记或验证器。处理后用新名称重新运行。"),
            why=f"子运行以 {attempt['status']} 结束（{error_type}），不是已确认的教学失败：停止，交给人")

    def stalled(self, attempt, earlier):
        feedback, sample = attempt["feedback"], attempt["candidate"]["sample"]
        return Stop("stalled", "repeated_failure", self.handoff(
            f"第 {attempt['attempt']} 次尝试之后：候选 {sample}（内容未变）再次得到与第 {earlier['attempt']} 次相同的"
            f"错误，{explain(feedback['error_type'])}：{feedback['message']}",
            "同一候选、同一错误重复出现，再试也不会有进展，所以循环停下。在本课中这正是 stuck 情景的预期结果："
            f"samples/{sample}.json 是固定的教学输入，不要修改它。在真实项目里，由候选的作者按错误消息修正候选，"
            "确认后用新名称重新运行。", [f"samples/{sample}.json"]),
            why=f"已确认的教学失败，与第 {earlier['attempt']} 次尝试的候选和错误都相同：没有进展，停止")

    def timed_out(self, attempt, timeout):
        """The executor ended ATTEMPT at its limit: `timed_out`, with what the child left, for a person."""
        child, sample, limit = attempt["child_run"], attempt["candidate"]["sample"], as_given(timeout.seconds)
        attempt.update(state="timed_out", finished_offset=self.offset(), finished_at=self.wall_time(),
                       timeout={"seconds": limit, "waited_seconds": round(timeout.waited, 3),
                                "inventory": timeout.left})
        self.say_round(attempt)
        tool = f"（slow 的替身工具要等 {self.tool_wait:g} 秒才返回）" if self.tool_wait else ""
        lesson = (f"在本课中这是 slow 情景配上比替身工具更短的 --attempt-timeout 的预期结果。"
                  if self.tool_wait > timeout.seconds else "")
        return Stop("needs_human", "attempt_timeout", self.handoff(
            f"第 {attempt['attempt']} 次尝试到单次时限 {limit} 秒仍未返回：子进程运行了 {timeout.waited:.1f} 秒后被终止",
            f"正在运行的是 export {sample} → {child}{tool}。它留下的：{left_text(child, timeout.left)}。"
            f"再运行之前请核对：{before_again(child, timeout.left)}被终止的尝试不会自动重试，循环也不删除它留下的任何东西。"
            f"确认这个动作确实需要更长时间后，再用更大的 --attempt-timeout（最多 300 秒）和新名称重新运行；本记录保持不动。"
            + lesson), why=f"超过单次时限 {limit} 秒，子进程已被终止，结果未知：不自动重试，停止，交给人")

    def needs_human(self, error_type, what, decide, inspect=(), why=None):
        say(f"意外情况，{explain(error_type)}：{what}。")
        return Stop("needs_human", "unexpected_error", self.handoff(f"{self.where()}：{what}", decide, inspect),
                    error_type, why)

    def interrupted(self, exc):
        by = "终止信号" if interrupt_reason(exc) == "terminated" else " Ctrl-C "
        in_flight = self.attempt_in_flight()
        mark_unknown(in_flight)
        if in_flight:
            decide = self.unknown_attempt_advice(in_flight["child_run"])
        elif self.attempts:
            decide = "已记录的尝试都已完成；"
        else:
            decide = "还没有开始任何尝试，也没有子运行；"
        say(f"已中断（{by.strip()}）：{self.where()}。")
        return Stop("interrupted", interrupt_reason(exc), self.handoff(
            f"被{by}中断于{self.where()}", decide + "核对后用新名称重新运行，本记录保持不动。"))

    def unexpected(self, exc):
        """Any exception nobody foresaw: for a person, with the file it names (if any) to inspect."""
        error_type = getattr(exc, "error_type", None) or type(exc).__name__  # a child process's keeps its own name
        missing = getattr(exc, "filename", None)
        if isinstance(exc, OSError) and missing:
            inspect = [self.relative(missing)]  # the record's paths are relative to the workspace
            what = f"读写 {inspect[0]} 时出错"
        else:
            what, inspect = str(exc) or repr(exc), []
        in_flight = self.attempt_in_flight()
        mark_unknown(in_flight)
        advice = self.unknown_attempt_advice(in_flight["child_run"]) if in_flight else ""
        return self.needs_human(error_type, what, advice + (
            "这不是可以自动重试的普通反馈：请按 error_type 核对“请核对”所列的文件，判断是环境、证据还是程序的问题；"
            "不要清空重跑，处理后用新名称重新运行。"), inspect)

    def relative(self, path):
        """PATH as the record writes paths: relative to the workspace when it is inside it."""
        return cli.workspace_path(path, self.root) or Path(path).as_posix()

    def unknown_attempt_advice(self, child):
        ended = "执行这次尝试的子进程已被结束，循环等它退出后才写下这份记录；" if self.attempt_timeout is not None else ""
        if (self.root / child / "run.json").is_file():
            return (f"{ended}先核对 {child}/ 里实际发生的动作和产物（run.json 可能仍是 running），不能认定这次动作没做。")
        return (f"{ended}{child}/run.json 不存在：子运行在留下记录之前就停了，但不能认定这次动作没做；"
                f"先确认 {child}/ 是否存在、里面有什么。")

    def record_not_saved(self, exc):
        cause = exc.__cause__
        self.record.update(status="needs_human", reason="unexpected_error", error_type=type(cause).__name__)
        say(f"无法写入 {self.shown(self.rel('loop.json'))}，原因是{explain(type(cause).__name__)}：{cause}。"
            f"保留上一次成功写入的记录（可能仍是 running），循环停止。请检查磁盘空间和目录权限，"
            f"核对 {self.shown('runs')}/{self.name}-NN 后用新名称重新运行。")
        return EXIT_STOP

    # --- where the loop is, and the hand-off -------------------------------------------------------

    def attempt_in_flight(self):
        """The attempt that started and never finished (`running`, or already marked `unknown`)."""
        return next((a for a in self.attempts if a["state"] in ("running", "unknown")), None)

    def where(self):
        in_flight = self.attempt_in_flight()
        if in_flight:
            return f"第 {in_flight['attempt']} 次尝试进行中（{in_flight['child_run']}，状态记为 unknown）"
        if self.attempts:
            return f"第 {len(self.attempts)} 次尝试完成之后"
        return "第一次尝试开始之前"

    def handoff(self, stopped_at, decide, inspect=()):
        """What a person needs to take over: where, what was done, what to look at, what to decide."""
        done = [done_line(a) for a in self.attempts] or ["还没有启动任何子运行。"]
        files = [self.rel("loop.json")] + [f"{a['child_run']}/run.json" for a in self.attempts]
        return {"stopped_at": stopped_at, "done": done,
                "inspect": files + [rel for rel in inspect if rel not in files], "decide": decide}

    # --- the end, records and what the person reads ------------------------------------------------

    def finish(self, stop):
        """Writes the final record and tells the person; the exit code.

        From here on Ctrl-C and termination are ignored: the record, the printed line and the exit code
        all give one outcome (STOP, or the interrupt that landed just before it could be written).
        """
        stop = self.final_stop(stop)
        elapsed = stop.elapsed if stop.elapsed is not None else self.offset() if self.start is not None else 0
        self.record.update(status=stop.status, reason=stop.reason, error_type=stop.error_type,
                           handoff=stop.handoff, elapsed_seconds=elapsed, finished_at=self.wall_time())
        try:
            self.save()
        except RecordNotSaved as exc:
            return self.record_not_saved(exc)
        self.tell(stop)
        return exit_code(stop.status)

    def final_stop(self, stop):
        """STOP, or the interrupt that landed just before it: from here on signals are ignored."""
        while True:
            try:
                settle_interrupts(self.settled)  # first raises a signal that has already landed
                return stop
            except KeyboardInterrupt as exc:
                stop = self.interrupted(exc)

    def tell(self, stop):
        say(f"循环结束：{stop.status}/{stop.reason}，共 {len(self.attempts)} 次尝试，"
            f"记录在 {self.shown(self.rel('loop.json'))}。")
        if stop.handoff:
            inspect = [self.shown(rel) + ("" if (self.root / rel).exists() else "（不存在）")
                       for rel in stop.handoff["inspect"]]
            workspace = display_path(self.root)
            elsewhere = "" if workspace == "." else f"\n  （其余各项里的路径都相对于工作区 {workspace}）"
            say("交接给人：\n  停在哪里：" + stop.handoff["stopped_at"] + "\n  已做的事：" + "；".join(stop.handoff["done"])
                + "\n  请核对：" + "、".join(inspect) + "\n  需要你决定：" + stop.handoff["decide"] + elsewhere)
        elif stop.status == "needs_review":
            say("机械检查通过，内容仍待人工审核（semantic_review: pending）：请阅读 "
                f"{self.shown(self.attempts[-1]['child_run'] + '/artifact/review.md')} 并对照原文。")

    def child_name(self, number):
        return f"{self.name}-{number:02d}"

    def rel(self, file_name):
        return f"loop-runs/{self.name}/{file_name}"

    def shown(self, rel):
        """A workspace path as the person can type it from the current folder."""
        return display_path(self.root / rel)

    def write_first(self, staging):
        write_json_atomic(Path(staging) / "loop.json", self.record)

    def save(self):
        try:
            write_json_atomic(self.folder / "loop.json", self.record)
        except OSError as exc:
            try:
                (self.folder / "loop.json.tmp").unlink(missing_ok=True)
            except OSError:  # a leftover that cannot even be removed changes nothing
                pass
            raise RecordNotSaved() from exc

    def say_start(self, attempt):
        """A line as a slow or separately run attempt starts: it will take a while, or may be ended."""
        notes = ([f"slow 的替身工具要等 {self.tool_wait:g} 秒才返回"] if self.tool_wait else []) + (
            [f"在自己的子进程里运行，单次时限 {self.attempt_timeout:g} 秒"] if self.attempt_timeout is not None else [])
        if notes:
            say(f"[第 {attempt['attempt']} 轮] 尝试 {attempt['attempt']}/{self.max_attempts} 开始：候选 export "
                f"{attempt['candidate']['sample']}；{'，'.join(notes)}。")

    def say_round(self, attempt):
        feedback, timeout = attempt["feedback"], attempt["timeout"]
        if timeout:
            outcome = (f"timed_out：到单次时限 {timeout['seconds']} 秒仍未返回，子进程已被终止"
                       f"（{left_text(attempt['child_run'], timeout['inventory'], short=True)}）")
        elif feedback:
            outcome = f"{attempt['status']}：{explain(feedback['error_type'])}：{feedback['message']}"
        else:
            outcome = f"{attempt['status']}：机械检查通过，内容待审"
        say(f"[第 {attempt['attempt']} 轮] 尝试 {attempt['attempt']}/{self.max_attempts}：候选 export "
            f"{attempt['candidate']['sample']}，子运行 {self.shown(attempt['child_run'])}，结果 {outcome}")


def done_line(attempt):
    """One attempt as the hand-off's 'what was done' says it."""
    line = f"第 {attempt['attempt']} 次：export {attempt['candidate']['sample']} → {attempt['child_run']}，"
    line += attempt["status"] or attempt["state"]
    feedback, timeout = attempt["feedback"], attempt.get("timeout")
    if feedback:
        line += f"，{explain(feedback['error_type'])}：{feedback['message'].rstrip('。')}"
    if timeout:
        line += f"，到单次时限 {timeout['seconds']} 秒被终止"
    return line


def left_text(child, left, short=False):
    """What an ended attempt's child left (its `timeout.inventory`), said for a person."""
    if not left["exists"]:
        return "没有留下子运行" if short else f"{child}/ 不存在：子进程在 Harness 建立子运行之前就被终止了，没有留下任何文件"
    status = f"run.json 为 {left['run_status']}" if left["run_status"] else "没有可读的 run.json"
    if short:
        return f"留下 {child}/，{status}"
    return f"{child}/ 里有 {len(left['files'])} 个文件（{'、'.join(left['files']) or '没有文件'}），{status}"


def before_again(child, left):
    """What to check before running again, after an attempt was ended at its limit."""
    if not left["exists"]:
        return f"{child}/ 确实不存在（它被终止时还没开始导出），也没有别的运行用了这个名称。"
    return (f"{child}/ 里的动作在被终止前可能已经做了一部分（run.json 仍可能是 running），不能认定它没做；"
            f"先用 verify_harness.py 核对 {child}，不要删除或改写它。")


def mark_unknown(attempt):
    """An attempt cut off mid-way may have done some, all or none of its work: `unknown`, never "not done"."""
    if attempt:
        attempt["state"] = "unknown"


def same_failure(earlier, attempt):
    """Stall: the same candidate (name and content hash) with the same error type and message."""
    return (earlier["state"] == "done" and earlier["status"] == "failed"
            and earlier["candidate"] == attempt["candidate"] and earlier["feedback"] == attempt["feedback"])


def summary(record):
    return {key: (len(record[key]) if key == "attempts" else record[key])
            for key in ("status", "reason", "semantic_review", "attempts", "actual_api_calls")}


def interrupt_reason(exc):
    return "terminated" if isinstance(exc, cli.Terminated) else "keyboard_interrupt"


def not_started(reason):
    """The line printed when the loop is interrupted before its first record."""
    return {"status": "interrupted", "reason": reason, "semantic_review": "pending", "attempts": 0,
            "actual_api_calls": 0}


# --- the executor: one attempt in a process of its own, ended at its time limit ----------------------

# The child's program: this file, imported from where it lies (its bytecode cache serves), then one attempt.
CHILD_PROGRAM = ("import sys; sys.path.insert(0, sys.argv[1]); import loop_lab; "
                 "loop_lab.attempt_in_child(*sys.argv[2:])")
CODE_FOLDER = os.path.dirname(os.path.abspath(__file__))


def own_group():
    """Popen options: on POSIX the child leads a session of its own, so its whole process group can be
    ended and a Ctrl-C typed at the terminal reaches only the loop; on Windows a process group of its
    own, outside Ctrl-C."""
    import subprocess
    return ({"start_new_session": True} if os.name == "posix"
            else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)})


def run_in_own_process(root, name, sample, tool_wait, seconds):
    """attempt_body() in a child process: its run.json record, the child's exception raised again here,
    or AttemptTimedOut when it had to be ended SECONDS after it started.

    The child is never left running: not at the limit, not on Ctrl-C or termination of the loop, and
    not when the loop itself is killed outright (its stdin, this process's pipe, then reads EOF).
    """
    import subprocess  # here, not at the top: attempts run in this process cost nothing for it
    lifeline, lifeline_end = os.pipe()
    try:
        try:
            program = [sys.executable, "-S", "-c", CHILD_PROGRAM, CODE_FOLDER, str(root), name, sample, repr(tool_wait)]
            child = subprocess.Popen(program, stdin=lifeline, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     **own_group())
        finally:
            os.close(lifeline)
        return outcome(child, seconds, Path(root) / "runs" / name)
    finally:
        os.close(lifeline_end)  # the child has ended by now


def outcome(child, seconds, run_dir):
    """Waits for CHILD at most SECONDS, ends it if need be; what it finished (see run_in_own_process)."""
    started = time.monotonic()
    try:
        output = output_by(child, started + seconds)
    except BaseException:  # Ctrl-C or termination of the loop: the child goes first
        with held_interrupts():
            end_process(child)
        raise
    waited = None if output else time.monotonic() - started
    out, err = output or end_process(child)
    record = finished_record(out, run_dir)  # a child that finished during the grace counts as finished
    if record is not None:
        return record
    if waited is not None:
        raise AttemptTimedOut(seconds, waited, left_behind(run_dir))
    last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["没有输出"]
    raise ChildProcessError(f"执行尝试的子进程以退出码 {child.returncode} 结束，没有留下结果（{last[0]}）")


def output_by(child, deadline):
    """CHILD's (stdout, stderr) once it has ended by DEADLINE (a time.monotonic() reading), else None.

    Waits in short steps: on Windows a long wait cannot be interrupted, and Ctrl-C must not wait for it.
    """
    import subprocess
    while True:
        try:
            return child.communicate(timeout=max(0, min(0.1, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:  # the output read so far is kept for the next call
            if time.monotonic() >= deadline:
                return None


def end_process(child):
    """Asks CHILD (and any process it started) to end, kills what is left after GRACE_SECONDS;
    returns its (stdout, stderr)."""
    import subprocess
    signal_group(child, "SIGTERM")
    try:
        out, err = child.communicate(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        out = err = None
    signal_group(child, "SIGKILL")  # the child if still there, and whatever it started in its group
    if out is None:
        out, err = child.communicate()
    return out, err


def signal_group(child, name):
    """SIGTERM / SIGKILL to the child's process group where there are groups; Popen.terminate / kill otherwise."""
    if hasattr(os, "killpg"):
        try:
            os.killpg(child.pid, getattr(signal, name))
            return
        except ProcessLookupError:  # nobody is left in the group
            return
        except OSError:  # not allowed: end at least the child itself
            pass
    if child.poll() is None:
        child.terminate() if name == "SIGTERM" else child.kill()


def finished_record(out, run_dir):
    """The child's finished run.json record (from its result line, or from disk when it was ended just
    after writing it), the child's exception raised again, or None when it finished nothing."""
    lines = (out or b"").decode("utf-8", "replace").strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        raise exception_from_child(answer["error"])
    if isinstance(answer, dict) and isinstance(answer.get("record"), dict):
        return answer["record"]
    record = read_run_record(run_dir)
    return record if record and record.get("status") not in (None, "running") else None


def read_run_record(run_dir):
    try:
        record = cli.read_json(run_dir / "run.json")
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def left_behind(run_dir):
    """What an ended child left (`timeout.inventory`): does its folder exist, its run.json status, its files."""
    if not run_dir.is_dir():
        return {"exists": False, "run_status": None, "files": []}
    files = sorted(os.path.relpath(os.path.join(folder, name), run_dir).replace(os.sep, "/")
                   for folder, _, names in os.walk(run_dir) for name in names)
    record = read_run_record(run_dir)
    return {"exists": True, "run_status": record.get("status") if record else None, "files": files[:50]}


def attempt_in_child(root, name, sample, tool_wait):
    """The executor's child process: one attempt; its outcome as one ASCII JSON line on stdout."""
    end_with_the_loop()
    try:
        answer = {"record": attempt_body(Path(root), name, sample, float(tool_wait))}
    except Exception as exc:  # raised again in the loop as the same kind of error
        answer = {"error": described(exc)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def end_with_the_loop():
    """Ends this process the moment the loop is gone: the loop holds our stdin's other end, which closes
    when it exits in any way (SIGKILL and the task manager included), so no attempt outlives its loop."""
    import threading

    def watch():
        try:
            while os.read(0, 512):  # the raw descriptor: a buffered sys.stdin would block the interpreter's exit
                pass
        except OSError:
            pass
        os._exit(EXIT_INTERRUPTED)

    threading.Thread(target=watch, daemon=True).start()


def described(exc):
    """EXC as the loop can raise it again: its name and message, the built-in classes it is (nearest
    first) and, for a file-system error, errno, strerror and filename."""
    import builtins
    return {"type": type(exc).__name__, "message": str(exc),
            "builtin": [kind.__name__ for kind in type(exc).__mro__
                        if issubclass(kind, BaseException) and getattr(builtins, kind.__name__, None) is kind],
            "errno": getattr(exc, "errno", None), "strerror": getattr(exc, "strerror", None),
            "filename": None if getattr(exc, "filename", None) is None else os.fsdecode(exc.filename)}


def exception_from_child(error):
    """The child's exception as the loop raises it: the nearest built-in class that can be rebuilt
    (cli.NameTaken arrives as a FileExistsError), the child's own type name kept as `error_type`."""
    import builtins
    for name in error.get("builtin", []):
        kind = getattr(builtins, name)
        try:
            exc = (kind(error["errno"], error["strerror"], error["filename"])
                   if issubclass(kind, OSError) and error.get("errno") is not None else kind(error["message"]))
        except TypeError:  # e.g. UnicodeDecodeError needs five arguments: its base class will do
            continue
        exc.error_type = error["type"]
        return exc
    return ChildProcessError(error.get("message"))


# --- the command --------------------------------------------------------------------------------------

def parse_arguments(argv):
    parser = ChineseArgumentParser(
        usage=("[-h] --run NAME --scenario", f"{{{','.join(SCENARIOS)}}} [--max-attempts N]",
               "[--max-seconds S] [--attempt-timeout S]"),
        description="第 14 篇的外层循环：在预算内根据反馈更换固定候选，停在 needs_review、停滞、预算耗尽或需要人工。",
        epilog="退出码：0 needs_review（机械通过，内容待审）；1 stalled / budget_exhausted / needs_human（受控停止，"
               "包括单次时限到了的 attempt_timeout）；2 参数错误或名称已用过；130 被 Ctrl-C 或终止信号中断。"
               "范围与预算见 docs/loop/TASK.md。",
    )
    parser.add_argument("--run", metavar="NAME", required=True,
                        help="新的循环名（1-61 个字符，不区分大小写；loop-runs/NAME 和 runs/NAME-NN 都不得已存在）")
    parser.add_argument("--scenario", choices=SCENARIOS, required=True,
                        help=f"作者预先写好的候选脚本（slow 与 repair 相同，但每次尝试先等替身工具 {STAND_IN_TOOL_SECONDS} 秒）")
    parser.add_argument("--max-attempts", type=int, default=3, metavar="N",
                        help="最多尝试次数，含第一次，1-5（默认 3）")
    parser.add_argument("--max-seconds", type=float, default=30, metavar="S",
                        help="轮次边界时间预算，0-300 秒，可为小数（默认 30）")
    parser.add_argument("--attempt-timeout", type=float, default=None, metavar="S",
                        help="单次尝试的时限，0.1-300 秒：每次尝试在自己的子进程里运行，到时终止（默认不限，在循环进程里运行）")
    args = parser.parse_args(argv)
    problem = argument_problem(args.run, args.scenario, args.max_attempts, args.max_seconds, args.attempt_timeout)
    if problem:
        parser.error(problem)
    return args


def name_taken_message(exc, args):
    """Why the name cannot be used (exit 2), with a command that would work."""
    in_way = display_path(ROOT / exc.path)
    if exc.busy:
        return (f"另一个进程正在用名称 {args.run}（不区分大小写）开始循环，认领目录 {in_way} 还在：请换一个新名称。"
                f"如果没有别的循环在运行，它是被强行结束的进程留下的，{cli.STALE_LOCK_SECONDS} 秒后会自动失效。")
    entry = exc.path.split("/", 1)[-1]
    same_case = args.run in (entry, entry[:-3])
    budgets = (f" --max-attempts {args.max_attempts}" if args.max_attempts != 3 else "") + (
        f" --max-seconds {args.max_seconds:g}" if args.max_seconds != 30 else "") + (
        f" --attempt-timeout {args.attempt_timeout:g}" if args.attempt_timeout is not None else "")
    example = cli.command(ROOT / "loop_lab.py", "--run", unused_name(ROOT, args.run), "--scenario", args.scenario)
    return (f"{in_way} 已存在：名称 {args.run} 已经用过{'' if same_case else '（名称不区分大小写）'}。"
            f"旧记录保持不动，请换一个新名称。例如：{example}{budgets}")


def main(argv=None):
    """The command; from here on every way out prints exactly one JSON line (none for bad arguments).

    Once the final record is being written, Ctrl-C and termination are ignored (OuterLoop.finish): the
    printed line and the exit code are the record's, never a mix of a result and 130.
    """
    loop = None
    try:
        answer_signals_from_now_on()
        use_safe_console()
        args = parse_arguments(argv)
        loop = new_loop(ROOT, args.run, args.scenario, args.max_attempts, args.max_seconds, args.attempt_timeout)
        code = loop.run()
    except NameTaken as exc:
        say(name_taken_message(exc, args))
        return EXIT_USAGE
    except OSError as exc:  # before the first record: the folder or a context file is not usable
        detail = f"{exc.strerror}：{display_path(exc.filename)}" if exc.strerror and exc.filename else str(exc)
        say(f"循环没能开始（{explain(type(exc).__name__)}：{detail}）：请检查工作区是否可写、文件是否可读，"
            "然后用新名称重新运行。")
        return EXIT_STOP
    except KeyboardInterrupt as exc:
        if loop is None or not loop.claimed:
            say("已中断：循环还没开始，没有创建任何记录。")
            with held_interrupts():
                print_json(not_started(interrupt_reason(exc)))
            return EXIT_INTERRUPTED
        if loop.record["status"] == "running":  # a second Ctrl-C while the first was being handled
            code = loop.finish(loop.interrupted(exc))
        else:  # the final record stands: its line and its code
            settle_interrupts(loop.settled)
            code = exit_code(loop.record["status"])
    print_json(summary(loop.record))
    return code


if __name__ == "__main__":
    cli.run(main, "已中断：以已经打印的结果行和 loop-runs/ 下的记录为准。")
