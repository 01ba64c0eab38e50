"""The outer loop of lesson 14: decide, round by round, whether to try the export again or stop.

    python3 loop_lab.py --run NAME --scenario repair|stuck|semantic|permission|slow|model
                        [--max-attempts 1..5] [--max-seconds 0..300] [--attempt-timeout 0.1..300]
                        [--max-api-calls 1..100] [--model-url URL | --model-script FILE]   (model only)
    python3 loop_lab.py --resume NAME

`OuterLoop.rounds()` is the lesson's flowchart, one numbered step per call, as in docs/loop/TASK.md
「每一轮的顺序」: 1 budget, 2 proposal, 3 scope, 4 fresh child, 5 independent check, then the decision,
written down with the attempt. Every way the loop can end is a `Stop` returned where it happens, with a
hand-off for a person (where it stopped, what was done, what to inspect, what to decide); only Ctrl-C /
termination, unexpected exceptions and a record that cannot be saved are raised. The proposals come from the
author's scripted choosers (data, not a model), so every stop can be reproduced exactly; only `--scenario model`
asks a development model (proposer/, loaded for it alone), whose claim decides nothing. The record,
`loop-runs/NAME/loop.json`, is written atomically when the name is claimed, before and after every attempt
and at the end. Budgets and the order of events are judged on the monotonic clock; `*_at` times are wall-clock.
A resume (step 0,「续跑」) checks first, judges the attempt in flight once, and goes on in a new clock segment.

The machinery is in machinery/ (its docstring lists each module and what it guarantees; `--attempt-timeout` runs
an attempt in a process of its own, ended within S + grace; resume.py holds the loop's lock and a resume's checks).
Shared: harness.py runs each child and lends the watched files, samples, name rule and fingerprint;
verify_harness.py checks each child; cli.py is the plumbing. `run_loop()` is the in-process entry (clocks, sleep,
child runner and checker, the development model can be injected); verify_loop.py checks records importing none of it.
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

import contextlib
import os
import time
from collections import namedtuple
from pathlib import Path

import harness
from cli import (EXIT_INTERRUPTED, EXIT_OK, EXIT_STOP, EXIT_USAGE, create_record_folder, print_json, say,
                 write_json_atomic)
from machinery import arguments, executor, interrupts, progress, resume
from machinery.arguments import as_given
from machinery.progress import DECIDE, before_again, done_line, explain, left_text

ROOT = Path(__file__).resolve().parent
SCHEMA = "loop-run/4"
SCENARIOS = ("repair", "stuck", "semantic", "permission", "slow", arguments.MODEL_SCENARIO)
# The loop's context: the 14 files the harness watches, this script and the task it follows, and every
# other module the loop runs (its machinery and the command-line plumbing): a record names the code that made it.
LOOP_FILES = harness.WATCHED_FILES + ("loop_lab.py", "docs/loop/TASK.md", "cli.py", "machinery/__init__.py",
                                      "machinery/arguments.py", "machinery/executor.py", "machinery/interrupts.py",
                                      "machinery/progress.py", "machinery/resume.py")
STAND_IN_TOOL_SECONDS = 3  # slow: how long the stand-in tool takes to return, before the harness runs
TIMESTAMP = "%Y-%m-%dT%H:%M:%SZ"  # the harness's format: UTC, whole seconds
CONTINUE_WHY = "已确认的教学失败，第一次出现：带着反馈继续"


class Stop(namedtuple("Stop", "status reason handoff error_type why elapsed", defaults=(None, None, None))):
    """How the loop ends: STATUS/REASON, the HANDOFF for a person (None for needs_review), ERROR_TYPE; WHY, the
    decision in the lesson's terms after an attempt; ELAPSED, the reading a time-budget stop judged."""


class RecordNotSaved(Exception):
    """loop.json could not be written: the last good record stays as it is."""


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
    the harness itself never waits), then one harness run in ROOT/runs/NAME; its run.json record.
    The executor runs it in a process of its own as "loop_lab:attempt_body"."""
    if tool_wait:
        sleep(tool_wait)
    return run_child(root, name, sample)


def new_loop(root, name, scenario, max_attempts=3, max_seconds=30, attempt_timeout=None, max_api_calls=None,
             model_url=None, model_script=None, *, clock=time.monotonic, wall=time.time, sleep=time.sleep,
             tool_seconds=STAND_IN_TOOL_SECONDS, run_child=harness.run_harness, check_child=None, open_model=None,
             resumed=None):
    """An OuterLoop ready to run; ValueError (in Chinese) for arguments that cannot start one.

    CLOCK is the monotonic clock of budgets and offsets, WALL the calendar clock of the `*_at` times, SLEEP
    and TOOL_SECONDS the stand-in tool's wait (slow only; in a process of its own it really waits TOOL_SECONDS).
    RUN_CHILD and CHECK_CHILD (verify_harness by default) serve in-process attempts; OPEN_MODEL, the model's.
    RESUMED: (record, its lock held) of a loop to resume."""
    problem = arguments.argument_problem(SCENARIOS, name, scenario, max_attempts, max_seconds, attempt_timeout,
                                         max_api_calls, model_url, model_script)
    model = None
    if not problem and scenario == arguments.MODEL_SCENARIO:
        from proposer.scenario import ModelScenario  # the development model and its client: this scenario only
        model = ModelScenario(Path(root), name, max_api_calls, model_url, model_script, open_model=open_model)
        problem = model.problem
    if problem:
        raise ValueError(problem)
    return OuterLoop(Path(root), name, scenario, (max_attempts, max_seconds, attempt_timeout),
                     dict(clock=clock, wall=wall, sleep=sleep, run_child=run_child, check_child=check_child,
                          tool_wait=tool_seconds if scenario == "slow" else 0, model=model), resumed)


def resumed_loop(root, name, **options):
    """The OuterLoop resuming the loop NAME of ROOT (machinery/resume.py: resume.Refused when it may not)."""
    return resume.resumed(new_loop, Path(root), name, SCHEMA, lambda: harness.fingerprint(root, LOOP_FILES), **options)


def run_loop(root, name, scenario=None, **options):
    """Runs the loop in ROOT/loop-runs/NAME/ (SCENARIO None: resumes it); returns (loop.json record, exit code).
    ValueError for bad arguments, cli.NameTaken (a FileExistsError) for a used name and OSError when the first
    record cannot be made, resume.Refused when it cannot be resumed: nothing is created then. OPTIONS: new_loop()'s."""
    loop = new_loop(root, name, scenario, **options) if scenario else resumed_loop(root, name, **options)
    try:
        code = loop.run()
    finally:
        interrupts.restore(loop.settled)  # the caller goes on: its Ctrl-C works again
        if loop.lock:  # and the loop may be resumed (the process would let go of its lock as it ends)
            loop.lock.release()
    return loop.record, code


class OuterLoop(resume.Resuming):
    """One loop run: its record, the rounds, and how each kind of stop is written down (a resume first takes the step
    machinery/resume.py's Resuming adds)."""

    def __init__(self, root, name, scenario, budget, tools, resumed=None):
        self.root, self.name, self.scenario = root, name, scenario
        self.max_attempts, self.max_seconds, self.attempt_timeout = budget
        self.clock, self.wall, self.sleep = tools["clock"], tools["wall"], tools["sleep"]
        self.run_child, self.tool_wait, self.model = tools["run_child"], tools["tool_wait"], tools["model"]
        self.check_child, self.course = tools["check_child"] or self.check_independently, None
        self.folder = root / "loop-runs" / name
        self.claimed, self.start, self.base, self.settled = False, None, 0, {}
        self.record, self.lock = resumed or (None, None)
        self.resumed = resumed is not None
        self.record = self.record or {
            "schema": SCHEMA, "id": os.urandom(16).hex(), "run": name, "scenario": scenario,
            "budget": {"max_attempts": self.max_attempts, "max_seconds": as_given(self.max_seconds),
                       "attempt_timeout": None if self.attempt_timeout is None else as_given(self.attempt_timeout)},
            "status": "running", "reason": None, "error_type": None,
            "semantic_review": "pending", "actual_api_calls": 0,
            "context": harness.fingerprint(root, LOOP_FILES + (self.model.files if self.model else ())),
            "attempts": [], "blocked_proposal": None, "handoff": None, "segments": [],
            "elapsed_seconds": 0, "started_at": self.wall_time(), "finished_at": None,
        }
        if self.model:  # budget.max_api_calls, where the model came from, the proposal not run
            self.model.extend(self.record)

    @property
    def attempts(self):
        return self.record["attempts"]

    def run(self):
        """Claims the name with the first record (or resumes), goes round until a Stop, writes it down; exit code."""
        try:
            with interrupts.held():
                self.begin()
            stop = (self.carry_on() if self.resumed else None) or self.rounds()
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
        finally:
            if self.model:  # the local model server ends with the loop, whatever ends the loop
                self.model.close()
        return self.finish(stop)

    def begin(self):
        """The first record, claiming the name, then the origin of the loop's monotonic clock (offsets count from the
        first record); resuming, the origin of a new segment (machinery/resume.py's Resuming)."""
        if self.resumed:
            return self.open_segment()
        create_record_folder(self.folder.parent, self.name, self.write_first,
                             lambda: arguments.used_child_name(self.root, self.name))
        self.claimed, self.start, wall = True, self.clock(), self.wall()
        self.record["segments"].append({"started_at": self.wall_time(wall), "started_offset": 0,  # one reading
                                        "wall_minus_monotonic": round(wall, 3), "elapsed_seconds": 0})

    def rounds(self):
        """The lesson's flowchart (docs/loop/TASK.md「每一轮的顺序」), round after round, until a Stop."""
        while True:
            number = len(self.attempts) + 1
            # 1. budget: is there an attempt left, and time to start one? (this reading starts the attempt)
            now, wall = self.offset(), self.wall_time()
            stop = self.budget_stop(number, now)
            if stop:
                return stop
            # 2. proposal: the scenario's script (or the development model) chooses from the feedback so far
            proposal, stopped = (self.model.propose(number, self.attempts) if self.model else
                                 (CHOOSERS[self.scenario]([attempt["feedback"] for attempt in self.attempts]), None))
            if stopped:
                return self.proposal_stopped(number, stopped)
            # 3. scope: only `export` of a known sample may run; anything else is not done
            if not within_scope(proposal):
                return self.permission_boundary(number, proposal)
            # 4. fresh child: the context is as it was at the start, then the attempt runs in runs/NAME-NN
            stop = self.context_stop(f"第 {number} 次尝试开始前")
            if stop:
                return stop
            attempt = self.start_attempt(number, proposal, now, wall)
            try:
                child = self.run_attempt(attempt)
            except FileExistsError:  # someone else's runs/NAME-NN: this attempt did not run
                return self.child_name_taken(attempt)
            except executor.AttemptTimedOut as timeout:  # ended by the executor: its outcome is unknown, never retried
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
        """Seconds on the loop's monotonic clock since its first record, as recorded (3 decimals; BASE: the segments
        before a resume's). The segment's elapsed_seconds follows every reading: a record says how far its clock got."""
        reading = round(self.base + (self.clock() - self.start), 3)
        for segment in self.record["segments"][-1:]:
            segment["elapsed_seconds"] = round(reading - segment["started_offset"], 3)
        return reading

    def wall_time(self, wall=None):
        return time.strftime(TIMESTAMP, time.gmtime(self.wall() if wall is None else wall))

    def budget_stop(self, number, now):
        if number > self.max_attempts:
            return self.budget_exhausted(number, "attempt_budget",
                                         f"尝试次数预算已用完（最多 {self.max_attempts} 次，含第一次）")
        if now >= self.max_seconds:
            return self.budget_exhausted(number, "time_budget", f"已用 {now:.3f} 秒，达到时间预算 "
                                         f"{self.record['budget']['max_seconds']} 秒（轮次边界检查）", now)
        return None

    def context_stop(self, when):
        """A Stop when any watched file (the record's context: LOOP_FILES, a model's too) has changed, else None."""
        recorded = self.record["context"]["entries"]
        current = harness.fingerprint(self.root, recorded)["entries"]
        changed = [rel for rel in recorded if current[rel] != recorded[rel]]
        gone = [rel for rel in changed if current[rel] == "missing"]
        return self.context_changed(when, changed, gone) if changed else None

    def start_attempt(self, number, proposal, now, wall):
        sample_file = f"samples/{proposal['sample']}.json"  # unchanged since the start: just checked
        candidate = dict(proposal, sha256=self.record["context"]["entries"][sample_file])
        attempt = {"attempt": number, "candidate": candidate, "child_run": f"runs/{self.child_name(number)}",
                   "state": "running", "status": None, "feedback": None,
                   "started_at": wall, "finished_at": None,  # both read at the budget check
                   "started_offset": now, "finished_offset": None, "decision": None, "timeout": None}
        if self.model:
            self.model.run_as_attempt(attempt)
        self.attempts.append(attempt)
        self.save()
        progress.say_start(attempt, self.max_attempts, self.tool_wait, self.attempt_timeout)
        return attempt

    def run_attempt(self, attempt):
        """The attempt: in a process of its own with --attempt-timeout (AttemptTimedOut when it had to be
        ended), else here; either way slow's stand-in tool first, then the harness in runs/NAME-NN."""
        name, sample = self.child_name(attempt["attempt"]), attempt["candidate"]["sample"]
        if self.attempt_timeout is None:
            return attempt_body(self.root, name, sample, self.tool_wait, self.sleep, self.run_child)
        return executor.run_in_own_process("loop_lab:attempt_body", [str(self.root), name, sample, self.tool_wait],
                                           self.attempt_timeout, self.root / attempt["child_run"])

    def check_independently(self, run_dir):
        """verify_harness's check of a child, against the course files as read at the loop's first check: one
        reference for the whole loop (the loop's own context check says whether they changed since)."""
        import verify_harness  # only once a child has run: budget and permission stops never need it
        if self.course is None:
            self.course = verify_harness.Course(self.root)
        return verify_harness.verify_run(run_dir, self.course)

    def finish_attempt(self, attempt, child, finished=None):
        """ATTEMPT done as CHILD (its run.json record) says; FINISHED, for one adopted at a resume: the end of the
        segment it ran in (an upper bound) and the child's own finish time."""
        error = child["error"]
        offset, at = finished or (self.offset(), self.wall_time())
        attempt.update(state="done", status=child["status"],
                       feedback=error and {"error_type": error["type"], "message": error["message"]},
                       finished_offset=offset, finished_at=at)
        progress.say_round(attempt, self.max_attempts, self.root)

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

    def write_decision(self, attempt, stop, going_on=("first_failure", CONTINUE_WHY)):
        """What was decided after ATTEMPT, kept with it: go on (its feedback, or as GOING_ON says), or STOP and why."""
        attempt["decision"] = dict({"next": "continue", "reason": going_on[0], "why": going_on[1]} if stop is None
                                   else {"next": "stop", "reason": stop.reason, "why": stop.why},
                                   decided_offset=self.offset())
        self.save()

    # --- stops: what a person needs in each case -----------------------------------------------

    def budget_exhausted(self, number, reason, why, elapsed=None):
        say(f"[第 {number} 轮] {why}：不再提出候选，停止（budget_exhausted/{reason}）。")
        decide = progress.budget_decide(reason, self.attempts, self.record["budget"]["max_seconds"],
                                        self.scenario == "slow" and self.tool_wait)
        return Stop("budget_exhausted", reason, self.handoff(f"第 {number} 轮开始前：{why}", decide), elapsed=elapsed)

    def proposal_stopped(self, number, stopped):
        """The development model gave no candidate to run: out of API calls, or (for a person) no proposal."""
        if stopped.kind != "api_call_budget":
            return self.needs_human(*stopped)
        say(f"[第 {number} 轮] {stopped.what}：不再请求候选，停止（budget_exhausted/api_call_budget）。")
        return Stop("budget_exhausted", stopped.kind, self.handoff(f"第 {number} 轮：{stopped.what}", *stopped[2:]))

    def permission_boundary(self, number, proposal):
        action, target = proposal.get("action"), proposal.get("target") or proposal.get("sample")
        self.record["blocked_proposal"] = {"action": action, "target": target, "reason": DECIDE["out_of_scope"]}
        say(f"[第 {number} 轮] 候选 {action} {target}：超出允许范围，已拦下，没有执行（needs_human/permission_boundary）。")
        before_export = "本轮尚未导出就" if not self.attempts else ""
        return Stop("needs_human", "permission_boundary", self.handoff(
            f"第 {number} 轮的范围检查：{before_export}提议 {action} 到 {target}，超出只允许本地导出的范围",
            DECIDE["permission_boundary"].format(action=action)))

    def context_changed(self, when, changed, gone):
        files = "、".join(rel + ("（已不存在）" if rel in gone else "") for rel in changed)
        return self.needs_human("ContextChanged", f"{when}发现循环开始后这些文件变了：{files}",
                                DECIDE["context_changed"].format(files=files), changed,
                                why=f"循环开始后上下文文件变了（{files}）：停止，交给人")

    def child_name_taken(self, attempt):
        self.attempts.remove(attempt)  # nothing of it ran: it is not counted
        child = attempt["child_run"]
        return self.needs_human("FileExistsError", f"第 {attempt['attempt']} 次尝试开始时，{child} 已被别的运行占用，"
                                "本次尝试没有执行、不计数", DECIDE["child_name_taken"].format(child=child), [child])

    def evidence_mismatch(self, attempt, problems):
        child = attempt["child_run"]
        found = "；".join(problem.rstrip("。") for problem in problems)
        artifact = [f"{child}/artifact/"] if (self.root / child / "artifact").is_dir() else []
        return self.needs_human("EvidenceMismatch", f"独立核对 {child} 没有通过：{found}",
                                DECIDE["evidence_mismatch"].format(child=child), artifact,
                                why="独立核对没有通过，记录与文件对不上：不能当作反馈，停止，交给人")

    def child_needs_human(self, attempt):
        child, feedback = attempt["child_run"], attempt["feedback"] or {}
        error_type = feedback.get("error_type") or "ChildNeedsHuman"
        return self.needs_human(error_type, f"子运行 {child} 以 {attempt['status']} 结束："
                                f"{feedback.get('message') or '没有记录错误消息'}",
                                DECIDE["child_needs_human"].format(child=child),
            why=f"子运行以 {attempt['status']} 结束（{error_type}），不是已确认的教学失败：停止，交给人")

    def stalled(self, attempt, earlier):
        feedback, sample = attempt["feedback"], attempt["candidate"]["sample"]
        return Stop("stalled", "repeated_failure", self.handoff(
            f"第 {attempt['attempt']} 次尝试之后：候选 {sample}（内容未变）再次得到与第 {earlier['attempt']} 次相同的"
            f"错误，{explain(feedback['error_type'])}：{feedback['message']}",
            DECIDE["stalled"].format(sample=sample), [f"samples/{sample}.json"]),
            why=f"已确认的教学失败，与第 {earlier['attempt']} 次尝试的候选和错误都相同：没有进展，停止")

    def timed_out(self, attempt, timeout):
        """The executor ended ATTEMPT at its limit: `timed_out`, with what the child left, for a person."""
        attempt.update(state="timed_out", finished_offset=self.offset(), finished_at=self.wall_time(),
                       timeout={"seconds": as_given(timeout.seconds), "waited_seconds": round(timeout.waited, 3),
                                "inventory": timeout.left})
        progress.say_round(attempt, self.max_attempts, self.root)
        return self.timeout_stop(attempt)

    def timeout_stop(self, attempt):
        child, sample, timeout = attempt["child_run"], attempt["candidate"]["sample"], attempt["timeout"]
        limit, left = timeout["seconds"], timeout["inventory"]
        tool = f"（slow 的替身工具要等 {self.tool_wait:g} 秒才返回）" if self.tool_wait else ""
        lesson = DECIDE["slow_timeout_lesson"] if self.tool_wait > limit else ""
        return Stop("needs_human", "attempt_timeout", self.handoff(
            f"第 {attempt['attempt']} 次尝试到单次时限 {limit} 秒仍未返回：子进程运行了 {timeout['waited_seconds']:.1f} 秒"
            "后被终止", DECIDE["timed_out"].format(sample=sample, child=child, tool=tool, left=left_text(child, left),
                                                check=before_again(child, left)) + lesson),
            why=f"超过单次时限 {limit} 秒，子进程已被终止，结果未知：不自动重试，停止，交给人")

    def needs_human(self, error_type, what, decide, inspect=(), why=None):
        say(f"意外情况，{explain(error_type)}：{what}。")
        return Stop("needs_human", "unexpected_error", self.handoff(f"{self.where()}：{what}", decide, inspect),
                    error_type, why)

    def interrupted(self, exc):
        by = "终止信号" if interrupts.reason(exc) == "terminated" else " Ctrl-C "
        in_flight = self.attempt_in_flight()
        if in_flight:
            in_flight["state"] = "unknown"  # it may have done some, all or none of its work: never "not done"
        decide = (progress.unknown_advice(self.root, in_flight, self.attempt_timeout) if in_flight else
                  "已记录的尝试都已完成；" if self.attempts else "还没有开始任何尝试，也没有子运行；")
        say(f"已中断（{by.strip()}）：{self.where()}。")
        return Stop("interrupted", interrupts.reason(exc), self.handoff(
            f"被{by}中断于{self.where()}", decide + DECIDE["resume_or_new_name"].format(name=self.name)))

    def unexpected(self, exc):
        """Any exception nobody foresaw: for a person, with the file it names (if any) to inspect."""
        error_type = getattr(exc, "error_type", None) or type(exc).__name__  # a child process's keeps its own name
        missing = getattr(exc, "filename", None)
        if isinstance(exc, OSError) and missing:
            inspect = [cli.workspace_path(missing, self.root) or Path(missing).as_posix()]  # as records say paths
            what = f"读写 {inspect[0]} 时出错"
        else:
            what, inspect = str(exc) or repr(exc), []
        in_flight = self.attempt_in_flight()
        if in_flight:
            in_flight["state"] = "unknown"
        advice = progress.unknown_advice(self.root, in_flight, self.attempt_timeout) if in_flight else ""
        return self.needs_human(error_type, what, advice + DECIDE["unexpected"], inspect)

    def record_not_saved(self, exc):
        self.record.update(status="needs_human", reason="unexpected_error", error_type=type(exc.__cause__).__name__)
        progress.say_not_saved(exc.__cause__, self.folder, self.root / "runs" / f"{self.name}-NN")
        return EXIT_STOP

    # --- where the loop is, and the hand-off -------------------------------------------------------

    def attempt_in_flight(self):
        """The attempt that started and was never decided (`running`, or already marked `unknown`): the last."""
        last = self.attempts[-1] if self.attempts else None
        return last if last and last["state"] in ("running", "unknown") and last["decision"] is None else None

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
        end = self.offset()  # with finished_at: the segment's last reading (a time budget keeps the one it judged)
        self.record.update(status=stop.status, reason=stop.reason, error_type=stop.error_type, handoff=stop.handoff,
                           elapsed_seconds=end if stop.elapsed is None else stop.elapsed, finished_at=self.wall_time())
        try:
            self.save()
        except RecordNotSaved as exc:
            return self.record_not_saved(exc)
        progress.say_end(self.record, self.root, self.rel("loop.json"))
        return exit_code(stop.status)

    def final_stop(self, stop):
        """STOP, or the interrupt that landed just before it: from here on signals are ignored."""
        while True:
            try:
                interrupts.settle(self.settled)  # first raises a signal that has already landed
                return stop
            except KeyboardInterrupt as exc:
                stop = self.interrupted(exc)

    def child_name(self, number):
        return f"{self.name}-{number:02d}"

    def rel(self, file_name):
        return f"loop-runs/{self.name}/{file_name}"

    def write_first(self, staging):
        """The first record, in the claim folder; the loop's lock is taken first, before the folder gets its name."""
        self.lock = resume.LoopLock(self.folder)
        if not self.lock.acquire():  # a loop of this name still runs, its folder gone: the name is busy
            raise cli.NameTaken(f"loop-runs/{self.lock.path.name}", busy=True)
        write_json_atomic(Path(staging) / "loop.json", self.record)

    def save(self):
        try:
            write_json_atomic(self.folder / "loop.json", self.record)
        except OSError as exc:
            with contextlib.suppress(OSError):  # a leftover that cannot even be removed changes nothing
                (self.folder / "loop.json.tmp").unlink(missing_ok=True)
            raise RecordNotSaved() from exc


def same_failure(earlier, attempt):
    """Stall: the same candidate (name and content hash) with the same error type and message."""
    return (earlier["state"] == "done" and earlier["status"] == "failed"
            and earlier["candidate"] == attempt["candidate"] and earlier["feedback"] == attempt["feedback"])


def summary(record):
    keys = ("status", "reason", "semantic_review", "attempts", "actual_api_calls")
    return {key: (len(record[key]) if key == "attempts" else record[key]) for key in keys}


def exit_code(status):
    return {"needs_review": EXIT_OK, "interrupted": EXIT_INTERRUPTED}.get(status, EXIT_STOP)


def main(argv=None):
    """The command; from here on every way out prints exactly one JSON line (none for bad arguments).

    Once the final record is being written, Ctrl-C and termination are ignored (OuterLoop.finish): the
    printed line and the exit code are the record's, never a mix of a result and 130.
    """
    loop = args = None
    try:
        interrupts.answer_from_now_on(BEFORE_START, note_signal, SIGNALS_WHILE_STARTING)
        cli.use_safe_console()
        args = arguments.parse_arguments(argv, SCENARIOS, STAND_IN_TOOL_SECONDS)
        loop = resumed_loop(ROOT, args.resume) if args.resume else new_loop(
            ROOT, args.run, args.scenario, args.max_attempts, args.max_seconds, args.attempt_timeout,
            args.max_api_calls, args.model_url, args.model_script)
        code = loop.run()
    except resume.Refused as exc:  # nothing written: the record stays as it was
        say(str(exc))
        return EXIT_USAGE
    except cli.NameTaken as exc:
        say(arguments.name_taken_message(exc, args, ROOT))
        return EXIT_USAGE
    except OSError as exc:  # before the first record: the folder or a context file is not usable
        progress.say_not_started(exc, getattr(args, "resume", None))
        with interrupts.held():
            print_json(dict(interrupts.not_started("unexpected_error"), status="needs_human"))
        return EXIT_STOP
    except KeyboardInterrupt as exc:
        if loop is None or not loop.claimed:
            progress.say_interrupted_before_start(getattr(args, "resume", None))
            with interrupts.held():
                print_json(interrupts.not_started(interrupts.reason(exc)))
            return EXIT_INTERRUPTED
        if loop.record["status"] == "running":  # a second Ctrl-C while the first was being handled
            code = loop.finish(loop.interrupted(exc))
        else:  # the final record stands: its line and its code
            interrupts.settle(loop.settled)
            code = exit_code(loop.record["status"])
    print_json(summary(loop.record))
    return code


if __name__ == "__main__":
    cli.run(main, "已中断：以已经打印的结果行和 loop-runs/ 下的记录为准。")
