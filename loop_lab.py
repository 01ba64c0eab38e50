"""The outer loop of lesson 14: decide, round by round, whether to try the export again or stop.

    python3 loop_lab.py --run NAME --scenario repair|stuck|semantic|permission
                        [--max-attempts 1..5] [--max-seconds 0..300]

Each round, in the lesson's order: budget, a proposal from the feedback so far, scope check,
a fresh harness run `runs/NAME-NN`, an independent check of that run, a decision. The
proposals come from the author's scripted choosers (data, not a model), so success, stall,
budget exhaustion and the permission boundary can be reproduced exactly. Everything the loop
did is kept in `loop-runs/NAME/loop.json`, written atomically at the start, before and after every
attempt and at the end, so the record is whole wherever the loop stops. A stop that needs a
person carries a handoff saying what to inspect and decide.
`run_loop()` is the in-process entry (clock, child runner and checker can be injected).
"""
import contextlib
import os
import sys
import time
from pathlib import Path

import harness
from cli import (EXIT_INTERRUPTED, EXIT_OK, EXIT_STOP, EXIT_USAGE, ChineseArgumentParser,
                 print_json, run, say, use_safe_console, write_json_atomic)

ROOT = Path(__file__).resolve().parent
SCENARIOS = ("repair", "stuck", "semantic", "permission")
# The loop's context: what the harness watches, plus this script and the task it follows.
LOOP_FILES = harness.WATCHED_FILES + ("loop_lab.py", "docs/loop/TASK.md")
MAX_NAME = 61  # the children are NAME-01 ... and a harness run name has at most 64 characters
ATTEMPTS_RANGE = (1, 5)
SECONDS_RANGE = (0, 300)
QUOTE_ERROR = "引文不在对应笔记原文中"


# The scenario choosers: the author's script. Each sees the feedback of the finished attempts
# (None for an attempt that did not fail) and proposes the next action.
def export(sample):
    return {"action": "export", "sample": sample}


def propose_repair(feedback):
    saw_quote_error = any(f and QUOTE_ERROR in f["message"] for f in feedback)
    return export("valid" if saw_quote_error else "bad-quote")


CHOOSERS = {
    "repair": propose_repair,
    "stuck": lambda feedback: export("bad-quote"),
    "semantic": lambda feedback: export("semantic"),
    "permission": lambda feedback: {"action": "publish", "target": "external-website"},
}


class NeedsHuman(Exception):
    """A stop only a person can resolve; ERROR_TYPE names what happened, INSPECT where to look."""

    def __init__(self, error_type, message, inspect=()):
        super().__init__(message)
        self.error_type, self.inspect = error_type, list(inspect)


class RecordNotSaved(Exception):
    """loop.json could not be written: the last good record stays as it is."""


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
                f"收到 {max_seconds!r}。")
    return None


def used_name(root, name):
    """The existing folder that makes NAME a used loop name, or None.

    Names are compared case-insensitively, as Windows and macOS file systems would.
    """
    if os.path.exists(os.path.join(root, "loop-runs", name)):
        return f"loop-runs/{name}"
    try:
        children = os.listdir(os.path.join(root, "runs"))
    except OSError:
        return None
    prefix = name.casefold() + "-"
    return next((f"runs/{child}" for child in sorted(children)
                 if child.casefold().startswith(prefix) and len(child) == len(prefix) + 2
                 and child[-2:].isascii() and child[-2:].isdigit()), None)


def unused_name(root, name):
    """A suggestion for the next name: NAME-01 -> NAME-02 ..., otherwise NAME-2, NAME-3 ..."""
    stem, dash, number = name.rpartition("-")
    stem, start = (stem, int(number) + 1) if dash and number.isdigit() else (name, 2)
    width = len(number) if dash and number.isdigit() else 1
    for k in range(start, start + 100):
        candidate = f"{stem}-{k:0{width}d}"
        if not harness.name_problem(candidate, MAX_NAME) and not used_name(root, candidate):
            return candidate
    return f"{name}-new"


def run_loop(root, name, scenario, max_attempts=3, max_seconds=30, clock=time.monotonic,
             run_child=harness.run_harness, check_child=None):
    """Runs the loop in ROOT/loop-runs/NAME/; returns (loop.json record, exit code).

    ValueError for bad arguments, FileExistsError for a used name: nothing is created then.
    """
    problem = argument_problem(name, scenario, max_attempts, max_seconds)
    if problem:
        raise ValueError(problem)
    root = Path(root)
    taken = used_name(root, name)
    if taken:
        raise FileExistsError(f"{taken} 已存在：名称 {name} 已经用过。旧记录保持不动，请换一个新名称。")
    if check_child is None:
        from verify_harness import verify_run as check_child
    loop = OuterLoop(root, name, scenario, max_attempts, max_seconds, clock, run_child, check_child)
    return loop.run()


class OuterLoop:
    """One loop run: its record, the rounds, and how each kind of stop is written down."""

    def __init__(self, root, name, scenario, max_attempts, max_seconds, clock, run_child, check_child):
        self.root, self.name, self.scenario = root, name, scenario
        self.max_attempts, self.max_seconds = max_attempts, max_seconds
        self.clock, self.run_child, self.check_child = clock, run_child, check_child
        self.folder = root / "loop-runs" / name
        self.start = None
        self.record = {
            "schema": "loop-run/1", "run": name, "scenario": scenario,
            "budget": {"max_attempts": max_attempts,
                       "max_seconds": int(max_seconds) if max_seconds == int(max_seconds) else max_seconds},
            "status": "running", "reason": None, "error_type": None,
            "semantic_review": "pending", "actual_api_calls": 0,
            "context": harness.fingerprint(root, LOOP_FILES),
            "attempts": [], "blocked_proposal": None, "handoff": None,
            "elapsed_seconds": 0, "started_at": harness.now_iso(), "finished_at": None,
        }

    @property
    def attempts(self):
        return self.record["attempts"]

    def run(self):
        harness.make_folder(self.folder.parent)
        try:
            self.folder.mkdir()
        except FileExistsError:  # taken between the name check and now
            raise FileExistsError(f"loop-runs/{self.name} 已存在：名称 {self.name} 已经用过。"
                                  "旧记录保持不动，请换一个新名称。") from None
        try:
            try:
                self.save()
                self.start = self.clock()
                stop = self.rounds()
            except RecordNotSaved:
                raise
            except KeyboardInterrupt:
                stop = self.interrupted()
            except NeedsHuman as exc:
                stop = self.unexpected(exc.error_type, str(exc), exc.inspect)
            except Exception as exc:  # anything unforeseen is for a person, never a retry
                stop = self.unexpected(type(exc).__name__, str(exc) or repr(exc))
            try:
                self.finish(*stop)
            except KeyboardInterrupt:  # Ctrl-C while the final record was being written
                self.finish(*self.interrupted())
        except RecordNotSaved as exc:
            self.record.update(status="needs_human", reason="unexpected_error",
                               error_type=exc.__cause__.__class__.__name__)
            say(f"无法写入 {self.rel('loop.json')}（{exc.__cause__}）：保留上一次成功写入的记录"
                f"（可能仍是 running），循环停止。请检查磁盘空间和目录权限，核对 runs/{self.name}-NN 后用新名称重试。")
            return self.record, EXIT_STOP
        return self.record, {"needs_review": EXIT_OK, "interrupted": EXIT_INTERRUPTED}.get(
            self.record["status"], EXIT_STOP)

    def rounds(self):
        """The lesson's flowchart; returns (status, reason, handoff) when the loop must stop."""
        while True:
            number = len(self.attempts) + 1
            if number > self.max_attempts:
                return self.budget_stop(number, "attempt_budget",
                                        f"尝试次数预算已用完（最多 {self.max_attempts} 次，含第一次）")
            elapsed = self.clock() - self.start
            if elapsed >= self.max_seconds:
                return self.budget_stop(number, "time_budget",
                                        f"已用 {elapsed:.3f} 秒，达到时间预算 {self.record['budget']['max_seconds']} 秒（轮次边界检查）")
            proposal = CHOOSERS[self.scenario]([a["feedback"] for a in self.attempts])
            if proposal.get("action") != "export" or proposal.get("sample") not in harness.SAMPLES:
                return self.blocked(number, proposal)
            hashes = {}  # one reading of the files serves this check and the child's fingerprint
            self.check_context(hashes)
            stop = self.attempt(number, proposal["sample"], hashes)
            if stop:
                return stop

    def attempt(self, number, sample, hashes):
        """One harness run in a fresh child folder, checked independently; a stop or None."""
        child = f"{self.name}-{number:02d}"
        sample_file = f"samples/{sample}.json"  # read a moment ago by the context check
        candidate = {"action": "export", "sample": sample,
                     "sha256": harness.fingerprint(self.root, (sample_file,), cache=hashes)["entries"][sample_file]}
        entry = {"attempt": number, "candidate": candidate, "child_run": f"runs/{child}",
                 "state": "running", "status": None, "feedback": None}
        self.attempts.append(entry)
        self.save()
        try:
            result = self.run_child(self.root, child, sample, cache=hashes)
        except FileExistsError:
            self.attempts.pop()  # nothing of this attempt ran: it is not counted
            raise NeedsHuman("FileExistsError", f"子运行目录 runs/{child} 在第 {number} 次尝试开始时已被占用，"
                             "本次尝试没有执行。", [f"runs/{child}"]) from None
        after = {}  # the child's check and the loop's own check read the files once
        check = self.check_child(self.root / "runs" / child, cache=after)
        error = result["error"]
        entry.update(state="done", status=result["status"],
                     feedback=error and {"error_type": error["type"], "message": error["message"]})
        self.save()
        self.say_round(entry)
        self.check_context(after)
        return self.decide(entry, check)

    def decide(self, entry, check):
        child, status, feedback = entry["child_run"], entry["status"], entry["feedback"]
        if status == "needs_human":
            raise NeedsHuman(feedback["error_type"] if feedback else "ChildNeedsHuman",
                             f"子运行 {child} 以 needs_human 结束：{feedback and feedback['message']}",
                             [f"{child}/run.json"])
        if check["result"] != "pass":
            raise NeedsHuman("EvidenceMismatch", f"独立核对 {child} 没有通过："
                             + "；".join(problem.rstrip("。") for problem in check["problems"]) + "。",
                             [f"{child}/run.json", f"{child}/artifact/"])
        if status == "needs_review":
            return "needs_review", "mechanical_pass", None
        if status != "failed":
            raise NeedsHuman("UnknownChildStatus", f"子运行 {child} 的状态 {status!r} 不是已知状态。",
                             [f"{child}/run.json"])
        earlier = next((a for a in self.attempts[:-1] if same_failure(a, entry)), None)
        if earlier:
            return "stalled", "repeated_failure", self.handoff(
                f"第 {entry['attempt']} 次尝试之后：候选 {entry['candidate']['sample']}（内容未变）再次得到"
                f"与第 {earlier['attempt']} 次相同的错误 {feedback['error_type']}：{feedback['message']}",
                f"同一候选、同一错误重复出现，再试也不会有进展。请决定：修改候选 samples/"
                f"{entry['candidate']['sample']}.json（按错误消息找到那张卡），还是调整任务范围；之后用新名称重新运行。",
                [f"samples/{entry['candidate']['sample']}.json"])
        return None

    def check_context(self, hashes):
        """The 16 files must be as they were when the loop started (HASHES keeps what was read)."""
        recorded = self.record["context"]["entries"]
        current = harness.fingerprint(self.root, LOOP_FILES, cache=hashes)["entries"]
        changed = [rel for rel in recorded if current[rel] != recorded[rel]]
        if changed:
            raise NeedsHuman("ContextChanged", "循环开始后这些文件变了：" + "、".join(changed), changed)

    # --- stops -------------------------------------------------------------------------------

    def budget_stop(self, number, reason, why):
        say(f"[第 {number} 轮] {why}：不再提出候选，停止（budget_exhausted/{reason}）。")
        if reason == "attempt_budget":
            decide = (f"最后一次反馈见上面的子运行。请决定是否值得给更多尝试（--max-attempts 最多 5），"
                      "或先按反馈修改候选；之后用新名称重新运行，不要改写本记录。")
        elif self.attempts:
            decide = ("时间预算在中途耗尽：先核对已完成的子运行是否与记录一致，再决定是否用更大的 "
                      "--max-seconds（最多 300）和新名称重新运行。")
        else:
            decide = "还没开始任何尝试。请给出足够的 --max-seconds（0-300 秒）后用新名称重新运行。"
        return "budget_exhausted", reason, self.handoff(f"第 {number} 轮开始前：{why}", decide)

    def blocked(self, number, proposal):
        action, target = proposal.get("action"), proposal.get("target") or proposal.get("sample")
        self.record["blocked_proposal"] = {
            "action": action, "target": target,
            "reason": "docs/loop/TASK.md 只允许 export 三个已知样例之一；这个动作不在本轮范围内，没有执行。",
        }
        say(f"[第 {number} 轮] 候选 {action} {target}：超出允许范围，已拦下，没有执行（needs_human/permission_boundary）。")
        before_export = "本轮尚未导出就" if not self.attempts else ""
        return "needs_human", "permission_boundary", self.handoff(
            f"第 {number} 轮的范围检查：{before_export}提议 {action} 到 {target}，超出只允许本地导出的范围",
            f"先澄清任务目标：是否真的需要 {action}？它不能由循环直接执行；如需要，应先在 "
            "docs/loop/TASK.md 中重新定义允许的动作和授权，再用新名称运行。")

    def interrupted(self):
        where, in_flight = self.position()
        if in_flight:
            child = in_flight["child_run"]
            decide = (f"先核对 {child}/ 里实际发生的动作和产物（run.json 可能仍是 running），"
                      "不能认定这次动作没做；核对后用新名称重新运行。")
            inspect = [f"{child}/"]
        else:
            decide, inspect = "已记录的尝试都已完成；核对它们后，用新名称重新运行。", []
        say(f"已中断：{where}。")
        return "interrupted", "keyboard_interrupt", self.handoff(f"被 Ctrl-C 中断于{where}", decide, inspect)

    def unexpected(self, error_type, message, inspect=()):
        where, _ = self.position()
        self.record["error_type"] = error_type
        say(f"意外情况（{error_type}）：{message}")
        return "needs_human", "unexpected_error", self.handoff(
            f"{where}遇到意外情况 {error_type}：{message}",
            "这不是可以自动重试的普通反馈。请按 error_type 核对下面的文件，判断是环境、证据还是程序的问题；"
            "不要清空重跑，处理后用新名称重新运行。", inspect)

    def position(self):
        """Where the loop is, in words, and the attempt in flight (now marked `unknown`) if any."""
        for entry in self.attempts:
            if entry["state"] == "running":
                entry["state"] = "unknown"  # it may have done some or all of its work
                return f"第 {entry['attempt']} 次尝试进行中（{entry['child_run']}，状态 unknown）", entry
        if self.attempts:
            return f"第 {len(self.attempts)} 次尝试完成之后", None
        return "第一次尝试开始之前", None

    def handoff(self, stopped_at, decide, inspect=()):
        """What a person needs to take over: where, what was done, what to look at, what to decide."""
        done = [f"第 {a['attempt']} 次：export {a['candidate']['sample']} → {a['child_run']}，"
                f"{a['status'] or a['state']}" + (f"（{a['feedback']['error_type']}：{a['feedback']['message']}）"
                                                 if a["feedback"] else "")
                for a in self.attempts] or ["还没有启动任何子运行。"]
        files = [self.rel("loop.json")] + [f"{a['child_run']}/run.json" for a in self.attempts]
        return {"stopped_at": stopped_at, "done": done,
                "inspect": files + [rel for rel in inspect if rel not in files], "decide": decide}

    def finish(self, status, reason, handoff):
        elapsed = self.clock() - self.start if self.start is not None else 0
        self.record.update(status=status, reason=reason, handoff=handoff,
                           elapsed_seconds=round(elapsed, 3), finished_at=harness.now_iso())
        self.save()
        say(f"循环结束：{status}/{reason}，共 {len(self.attempts)} 次尝试，记录在 {self.rel('loop.json')}。")
        if handoff:
            say("交接给人：\n  停在哪里：" + handoff["stopped_at"] + "\n  已做的事：" + "；".join(handoff["done"])
                + "\n  请核对：" + "、".join(handoff["inspect"]) + "\n  需要你决定：" + handoff["decide"])
        elif status == "needs_review":
            say(f"机械检查通过，内容仍待人工审核（semantic_review: pending）：请阅读 "
                f"{self.attempts[-1]['child_run']}/artifact/review.md 并对照原文。")

    # --- records and progress -----------------------------------------------------------------

    def rel(self, file_name):
        return f"loop-runs/{self.name}/{file_name}"

    def save(self):
        try:
            write_json_atomic(self.folder / "loop.json", self.record)
        except OSError as exc:
            with contextlib.suppress(OSError):  # a leftover that cannot even be removed changes nothing
                (self.folder / "loop.json.tmp").unlink(missing_ok=True)
            raise RecordNotSaved() from exc

    def say_round(self, entry):
        feedback = entry["feedback"]
        outcome = (f"{entry['status']}：{feedback['error_type']}：{feedback['message']}" if feedback
                   else f"{entry['status']}：机械检查通过，内容待审")
        say(f"[第 {entry['attempt']} 轮] 尝试 {entry['attempt']}/{self.max_attempts}：候选 export "
            f"{entry['candidate']['sample']}，子运行 {entry['child_run']}，结果 {outcome}")


def same_failure(earlier, entry):
    """Stall: the same candidate (name and content hash) with the same error type and message."""
    return (earlier["state"] == "done" and earlier["status"] == "failed"
            and earlier["candidate"] == entry["candidate"] and earlier["feedback"] == entry["feedback"])


def summary(record):
    return {key: (len(record[key]) if key == "attempts" else record[key])
            for key in ("status", "reason", "semantic_review", "attempts", "actual_api_calls")}


def main(argv=None):
    use_safe_console()
    parser = ChineseArgumentParser(
        description="第 14 篇的外层循环：在预算内根据反馈更换固定候选，停在 needs_review、停滞、预算耗尽或需要人工。",
        epilog="退出码：0 needs_review（机械通过，内容待审）；1 stalled / budget_exhausted / needs_human（受控停止）；"
               "2 参数错误或名称已用过；130 被 Ctrl-C 中断。范围与预算见 docs/loop/TASK.md。",
    )
    parser.add_argument("--run", metavar="NAME", required=True,
                        help="新的循环名（1-61 个字符；loop-runs/NAME 和 runs/NAME-NN 都不得已存在）")
    parser.add_argument("--scenario", choices=SCENARIOS, required=True, help="作者预先写好的候选脚本")
    parser.add_argument("--max-attempts", type=int, default=3, metavar="N",
                        help="最多尝试次数，含第一次，1-5（默认 3）")
    parser.add_argument("--max-seconds", type=float, default=30, metavar="S",
                        help="轮次边界时间预算，0-300 秒，可为小数（默认 30）")
    args = parser.parse_args(argv)
    problem = argument_problem(args.run, args.scenario, args.max_attempts, args.max_seconds)
    if problem:
        parser.error(problem)
    try:
        record, code = run_loop(ROOT, args.run, args.scenario, args.max_attempts, args.max_seconds)
    except FileExistsError as exc:
        budgets = (f" --max-attempts {args.max_attempts}" if args.max_attempts != 3 else "") + (
            f" --max-seconds {args.max_seconds:g}" if args.max_seconds != 30 else "")
        python = "py -3" if os.name == "nt" else "python3"
        say(f"{exc}例如：{python} loop_lab.py --run {unused_name(ROOT, args.run)} --scenario {args.scenario}{budgets}")
        return EXIT_USAGE
    except OSError as exc:  # before the first record: the folder or a context file is not usable
        detail = f"{exc.strerror}：{exc.filename}" if exc.strerror and exc.filename else str(exc)
        say(f"循环没能开始（{detail}）：请检查工作区是否可写、文件是否可读，然后用新名称重新运行。")
        return EXIT_STOP
    print_json(summary(record))
    return code


if __name__ == "__main__":
    run(main, "已中断：最终记录可能没有写完，请先核对 loop-runs/ 与 runs/ 里的实际文件。")
