"""The outer loop of lesson 14: decide, round by round, whether to try the export again or stop.

    python3 loop_lab.py --run NAME --scenario repair|stuck|semantic|permission
                        [--max-attempts 1..5] [--max-seconds 0..300]

`OuterLoop.rounds()` is the lesson's flowchart, one numbered step per call, as in
docs/loop/TASK.md「每一轮的顺序」: 1 budget, 2 proposal, 3 scope, 4 fresh child, 5 independent
check, then the decision. Every way the loop can end is a `Stop` returned where it happens; only
Ctrl-C / termination, unexpected exceptions and a record that cannot be saved are raised.
The proposals come from the author's scripted choosers (data, not a model), so success, stall,
budget exhaustion and the permission boundary can be reproduced exactly. Everything the loop did
is kept in `loop-runs/NAME/loop.json`, written atomically when the name is claimed (folder and
first record appear as one step), before and after every attempt and at the end. A stop other
than `needs_review` carries a hand-off: where it stopped, what was done, what to inspect, what a
person decides. One clock serves the budget and the record's times (see `OuterLoop.timestamp`).

Shared with others: harness.py runs each child and lends the watched-file list, the samples, the
name rule and the fingerprint; verify_harness.py checks each child (imported only when a child
has run); cli.py is the command-line plumbing. `run_loop()` is the in-process entry (clock,
child runner and checker can be injected); verify_loop.py checks its records without importing it.
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

import os
import time
from collections import namedtuple
from pathlib import Path

import cli
import harness
from cli import (EXIT_INTERRUPTED, EXIT_OK, EXIT_STOP, EXIT_USAGE, ChineseArgumentParser, NameTaken,
                 create_record_folder, display_path, print_json, say, use_safe_console, write_json_atomic)

ROOT = Path(__file__).resolve().parent
SCENARIOS = ("repair", "stuck", "semantic", "permission")
# The loop's context: what the harness watches, plus this script and the task it follows.
LOOP_FILES = harness.WATCHED_FILES + ("loop_lab.py", "docs/loop/TASK.md")
MAX_NAME = 61  # the children are NAME-01 ... and a harness run name has at most 64 characters
ATTEMPTS_RANGE = (1, 5)
SECONDS_RANGE = (0, 300)
TIMESTAMP = "%Y-%m-%dT%H:%M:%SZ"  # the harness's format: UTC, whole seconds
# Each error_type a person may read, with what it means in Chinese.
# The harness's own glosses (file-system errors, VerificationError) serve here too.
ERROR_MEANING = {
    **harness.ERROR_GLOSS, "ValidationError": "导出规则拒绝了候选", "ContextChanged": "上下文文件被改动",
    "EvidenceMismatch": "证据不一致", "FileExistsError": "子运行目录已被占用", "ChildNeedsHuman": "子运行需要人工查看",
    "OSError": "文件读写出错",
}


class Stop(namedtuple("Stop", "status reason handoff error_type", defaults=(None,))):
    """How the loop ends: STATUS/REASON, the HANDOFF for a person (None for needs_review), ERROR_TYPE."""


class RecordNotSaved(Exception):
    """loop.json could not be written: the last good record stays as it is."""


def explain(error_type):
    return f"{ERROR_MEANING.get(error_type, '意外异常')}（{error_type}）"


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
}


def within_scope(proposal):
    """docs/loop/TASK.md allows one action: `export` of one of the three known samples."""
    return proposal.get("action") == "export" and proposal.get("sample") in harness.SAMPLES


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

    The claim of a name, the final record and the result line are never cut in half: what is on
    disk and on stdout is whole and matches what the loop holds when the interrupt is handled.
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


def argument_problem(name, scenario, max_attempts, max_seconds):
    """Why these arguments cannot start a loop (Chinese), or None."""
    problem = harness.name_problem(name, MAX_NAME)
    if problem:
        return problem
    if scenario not in SCENARIOS:
        return f"--scenario 只能是 {'、'.join(SCENARIOS)} 之一，收到 {scenario!r}。"
    if type(max_attempts) is not int or not ATTEMPTS_RANGE[0] <= max_attempts <= ATTEMPTS_RANGE[1]:
        return f"--max-attempts 应为 {ATTEMPTS_RANGE[0]}-{ATTEMPTS_RANGE[1]} 的整数（含第一次尝试），收到 {max_attempts!r}。"
    if type(max_seconds) not in (int, float) or not SECONDS_RANGE[0] <= max_seconds <= SECONDS_RANGE[1]:
        return (f"--max-seconds 应为 {SECONDS_RANGE[0]}-{SECONDS_RANGE[1]} 秒（可以是小数，只在轮次边界检查），"
                f"收到 {max_seconds:g}。")
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


def new_loop(root, name, scenario, max_attempts=3, max_seconds=30, clock=time.monotonic,
             run_child=harness.run_harness, check_child=check_child_run):
    """An OuterLoop ready to run; ValueError (in Chinese) for arguments that cannot start one."""
    problem = argument_problem(name, scenario, max_attempts, max_seconds)
    if problem:
        raise ValueError(problem)
    return OuterLoop(Path(root), name, scenario, max_attempts, max_seconds, clock, run_child, check_child)


def run_loop(root, name, scenario, **options):
    """Runs the loop in ROOT/loop-runs/NAME/; returns (loop.json record, exit code).

    ValueError for bad arguments, cli.NameTaken (a FileExistsError) for a used name and OSError
    when the first record cannot be made: nothing is created then. OPTIONS as for new_loop().
    """
    loop = new_loop(root, name, scenario, **options)
    code = loop.run()
    return loop.record, code


class OuterLoop:
    """One loop run: its record, the rounds, and how each kind of stop is written down."""

    def __init__(self, root, name, scenario, max_attempts, max_seconds, clock, run_child, check_child):
        self.root, self.name, self.scenario = root, name, scenario
        self.max_attempts, self.max_seconds = max_attempts, max_seconds
        self.clock, self.run_child, self.check_child = clock, run_child, check_child
        self.folder = root / "loop-runs" / name
        self.claimed, self.start, self.started_wall = False, None, time.time()
        self.record = {
            "schema": "loop-run/1", "run": name, "scenario": scenario,
            "budget": {"max_attempts": max_attempts,
                       "max_seconds": int(max_seconds) if max_seconds == int(max_seconds) else max_seconds},
            "status": "running", "reason": None, "error_type": None,
            "semantic_review": "pending", "actual_api_calls": 0,
            "context": harness.fingerprint(root, LOOP_FILES),
            "attempts": [], "blocked_proposal": None, "handoff": None,
            "elapsed_seconds": 0, "started_at": time.strftime(TIMESTAMP, time.gmtime(self.started_wall)),
            "finished_at": None,
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
                self.claimed, self.start = True, self.clock()  # the budget counts from the first record
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
        try:
            return self.finish(stop)
        except RecordNotSaved as exc:
            return self.record_not_saved(exc)

    def rounds(self):
        """The lesson's flowchart (docs/loop/TASK.md「每一轮的顺序」), round after round, until a Stop."""
        while True:
            number = len(self.attempts) + 1
            # 1. budget: is there an attempt left, and time to start one?
            stop = self.budget_stop(number)
            if stop:
                return stop
            # 2. proposal: the scenario's script chooses from the feedback so far
            proposal = CHOOSERS[self.scenario]([attempt["feedback"] for attempt in self.attempts])
            # 3. scope: only `export` of a known sample may run; anything else is not done
            if not within_scope(proposal):
                return self.permission_boundary(number, proposal)
            # 4. fresh child: the context is as it was at the start, then the harness runs in runs/NAME-NN
            stop = self.context_stop(f"第 {number} 次尝试开始前")
            if stop:
                return stop
            attempt = self.start_attempt(number, proposal)
            try:
                child = self.run_child(self.root, self.child_name(number), proposal["sample"])
            except FileExistsError:  # someone else's runs/NAME-NN: this attempt did not run
                return self.child_name_taken(attempt)
            # 5. independent check of the child's evidence, then of the context once more
            verdict = self.check_child(self.root / attempt["child_run"])
            self.finish_attempt(attempt, child)
            stop = self.context_stop(f"第 {number} 次尝试的子运行之后")
            if stop:
                return stop
            # decision: the independent verdict first, then the child's own status, then the stall rule
            stop = self.decide(attempt, verdict)
            if stop:
                return stop
            # a confirmed teaching failure, not seen before: its feedback goes into the next proposal

    # --- the steps -------------------------------------------------------------------------------

    def budget_stop(self, number):
        if number > self.max_attempts:
            return self.budget_exhausted(number, "attempt_budget",
                                         f"尝试次数预算已用完（最多 {self.max_attempts} 次，含第一次）")
        elapsed = self.clock() - self.start
        if elapsed >= self.max_seconds:
            return self.budget_exhausted(number, "time_budget", f"已用 {elapsed:.3f} 秒，达到时间预算 "
                                         f"{self.record['budget']['max_seconds']} 秒（轮次边界检查）")
        return None

    def context_stop(self, when):
        """A Stop when any of the 16 files differs from the start of the loop, else None."""
        recorded = self.record["context"]["entries"]
        current = harness.fingerprint(self.root, LOOP_FILES)["entries"]
        changed = [rel for rel in recorded if current[rel] != recorded[rel]]
        gone = [rel for rel in changed if current[rel] == "missing"]
        return self.context_changed(when, changed, gone) if changed else None

    def start_attempt(self, number, proposal):
        sample_file = f"samples/{proposal['sample']}.json"  # unchanged since the start: just checked
        candidate = dict(proposal, sha256=self.record["context"]["entries"][sample_file])
        attempt = {"attempt": number, "candidate": candidate, "child_run": f"runs/{self.child_name(number)}",
                   "state": "running", "status": None, "feedback": None}
        self.attempts.append(attempt)
        self.save()
        return attempt

    def finish_attempt(self, attempt, child):
        error = child["error"]
        attempt.update(state="done", status=child["status"],
                       feedback=error and {"error_type": error["type"], "message": error["message"]})
        self.save()
        self.say_round(attempt)

    def decide(self, attempt, verdict):
        """The flowchart's decision: evidence first, then mechanical pass, then repeat or keep going."""
        if verdict["result"] == "fail":
            return self.evidence_mismatch(attempt, verdict["problems"])
        if verdict["result"] != "pass" or attempt["status"] not in ("needs_review", "failed"):
            return self.child_needs_human(attempt)
        if attempt["status"] == "needs_review":
            return Stop("needs_review", "mechanical_pass", None)
        earlier = next((a for a in self.attempts[:-1] if same_failure(a, attempt)), None)
        return self.stalled(attempt, earlier) if earlier else None

    # --- stops: what a person needs in each case -----------------------------------------------

    def budget_exhausted(self, number, reason, why):
        say(f"[第 {number} 轮] {why}：不再提出候选，停止（budget_exhausted/{reason}）。")
        if reason == "attempt_budget":
            decide = ("尝试次数是硬上限：用完就停，即使下一个候选可能通过也不多试（本课用 --max-attempts "
                      "限制尝试次数时，演示的正是这一点，这是预期结果）。"
                      f"最后一次反馈在 {self.attempts[-1]['child_run']}/run.json。"
                      "请决定是否值得给更多尝试（--max-attempts 最多 5）并用新名称重新运行；在真实项目里，若反馈指向"
                      "候选本身，由候选的作者修正候选后再用新名称运行。本记录保持不动。")
        elif self.attempts:
            decide = ("时间预算在两轮之间耗尽：先核对已完成的子运行是否与记录一致，再决定是否用更大的 "
                      "--max-seconds（最多 300）和新名称重新运行。本记录保持不动。")
        else:
            decide = ("还没开始任何尝试。本课 --max-seconds 0 情景演示的正是“开始前预算已不足”，这是预期结果；"
                      "要真正运行，请给出大于 0 的 --max-seconds（最多 300）并用新名称运行。")
        return Stop("budget_exhausted", reason, self.handoff(f"第 {number} 轮开始前：{why}", decide))

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
            "让新记录对应新版本；本记录和已有子运行保持不动。"), changed)

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
            "之后用新名称重新运行。"), artifact)

    def child_needs_human(self, attempt):
        child, feedback = attempt["child_run"], attempt["feedback"] or {}
        error_type = feedback.get("error_type") or "ChildNeedsHuman"
        return self.needs_human(error_type, f"子运行 {child} 以 {attempt['status']} 结束："
                                f"{feedback.get('message') or '没有记录错误消息'}", (
            f"这不是规则拒绝，而是环境或程序的问题：请看 {child}/run.json 的 error，判断原因；不要为了让它通过而修改"
            "样例、笔记或验证器。处理后用新名称重新运行。"))

    def stalled(self, attempt, earlier):
        feedback, sample = attempt["feedback"], attempt["candidate"]["sample"]
        return Stop("stalled", "repeated_failure", self.handoff(
            f"第 {attempt['attempt']} 次尝试之后：候选 {sample}（内容未变）再次得到与第 {earlier['attempt']} 次相同的"
            f"错误，{explain(feedback['error_type'])}：{feedback['message']}",
            "同一候选、同一错误重复出现，再试也不会有进展，所以循环停下。在本课中这正是 stuck 情景的预期结果："
            f"samples/{sample}.json 是固定的教学输入，不要修改它。在真实项目里，由候选的作者按错误消息修正候选，"
            "确认后用新名称重新运行。", [f"samples/{sample}.json"]))

    def needs_human(self, error_type, what, decide, inspect=()):
        say(f"意外情况，{explain(error_type)}：{what}。")
        return Stop("needs_human", "unexpected_error", self.handoff(f"{self.where()}：{what}", decide, inspect),
                    error_type)

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
        error_type = type(exc).__name__
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
        if (self.root / child / "run.json").is_file():
            return (f"先核对 {child}/ 里实际发生的动作和产物（run.json 可能仍是 running），不能认定这次动作没做。")
        return (f"{child}/run.json 不存在：子运行在留下记录之前就停了，但不能认定这次动作没做；"
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
        return next((a for a in self.attempts if a["state"] != "done"), None)

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
        """Writes the final record and tells the person; Ctrl-C after the record keeps it (exit 130)."""
        try:
            with held_interrupts():  # status, times and the file change together or not at all
                elapsed = self.clock() - self.start if self.start is not None else 0
                self.record.update(status=stop.status, reason=stop.reason, error_type=stop.error_type,
                                   handoff=stop.handoff, elapsed_seconds=round(elapsed, 3),
                                   finished_at=self.timestamp(elapsed))
                self.save()
            self.tell(stop)
        except KeyboardInterrupt:
            say(f"已中断：最终记录 {self.shown(self.rel('loop.json'))}（{stop.status}）已经写好，保持不动。")
            return EXIT_INTERRUPTED
        return {"needs_review": EXIT_OK, "interrupted": EXIT_INTERRUPTED}.get(stop.status, EXIT_STOP)

    def timestamp(self, elapsed):
        """The wall-clock time ELAPSED seconds of the loop's clock after started_at.

        One clock: the record's times and elapsed_seconds come from the same readings as the
        budget, so they agree with each other (and with an injected clock in tests).
        """
        return time.strftime(TIMESTAMP, time.gmtime(self.started_wall + elapsed))

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

    def say_round(self, attempt):
        feedback = attempt["feedback"]
        outcome = (f"{attempt['status']}：{explain(feedback['error_type'])}：{feedback['message']}" if feedback
                   else f"{attempt['status']}：机械检查通过，内容待审")
        say(f"[第 {attempt['attempt']} 轮] 尝试 {attempt['attempt']}/{self.max_attempts}：候选 export "
            f"{attempt['candidate']['sample']}，子运行 {self.shown(attempt['child_run'])}，结果 {outcome}")


def done_line(attempt):
    """One attempt as the hand-off's 'what was done' says it."""
    line = f"第 {attempt['attempt']} 次：export {attempt['candidate']['sample']} → {attempt['child_run']}，"
    line += attempt["status"] or attempt["state"]
    feedback = attempt["feedback"]
    if feedback:
        line += f"，{explain(feedback['error_type'])}：{feedback['message'].rstrip('。')}"
    return line


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


def parse_arguments(argv):
    parser = ChineseArgumentParser(
        description="第 14 篇的外层循环：在预算内根据反馈更换固定候选，停在 needs_review、停滞、预算耗尽或需要人工。",
        epilog="退出码：0 needs_review（机械通过，内容待审）；1 stalled / budget_exhausted / needs_human（受控停止）；"
               "2 参数错误或名称已用过；130 被 Ctrl-C 或终止信号中断。范围与预算见 docs/loop/TASK.md。",
    )
    parser.add_argument("--run", metavar="NAME", required=True,
                        help="新的循环名（1-61 个字符，不区分大小写；loop-runs/NAME 和 runs/NAME-NN 都不得已存在）")
    parser.add_argument("--scenario", choices=SCENARIOS, required=True, help="作者预先写好的候选脚本")
    parser.add_argument("--max-attempts", type=int, default=3, metavar="N",
                        help="最多尝试次数，含第一次，1-5（默认 3）")
    parser.add_argument("--max-seconds", type=float, default=30, metavar="S",
                        help="轮次边界时间预算，0-300 秒，可为小数（默认 30）")
    args = parser.parse_args(argv)
    problem = argument_problem(args.run, args.scenario, args.max_attempts, args.max_seconds)
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
        f" --max-seconds {args.max_seconds:g}" if args.max_seconds != 30 else "")
    example = cli.command(ROOT / "loop_lab.py", "--run", unused_name(ROOT, args.run), "--scenario", args.scenario)
    return (f"{in_way} 已存在：名称 {args.run} 已经用过{'' if same_case else '（名称不区分大小写）'}。"
            f"旧记录保持不动，请换一个新名称。例如：{example}{budgets}")


def main(argv=None):
    """The command; from here on every way out prints exactly one JSON line (none for bad arguments)."""
    loop = None
    try:
        answer_signals_from_now_on()
        use_safe_console()
        args = parse_arguments(argv)
        loop = new_loop(ROOT, args.run, args.scenario, args.max_attempts, args.max_seconds)
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
            loop.finish(loop.interrupted(exc))
        code = EXIT_INTERRUPTED
    with held_interrupts():  # the line is printed whole; a Ctrl-C meanwhile still ends with 130
        print_json(summary(loop.record))
    return code


if __name__ == "__main__":
    cli.run(main, "已中断：以已经打印的结果行和 loop-runs/ 下的记录为准。")
