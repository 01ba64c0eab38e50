"""Independent check of lesson-14 loop runs: does each stop follow from the evidence it left?

    python3 verify_loop.py loop-runs/NAME [loop-runs/OTHER ...]
    exit 0 every run passes, 1 a run fails or needs a person, 2 bad arguments

This file does not import loop_lab.py: the checked program never vouches for itself. It keeps
its own table of what each scenario must produce under the recorded budgets, re-derives the
outcome from the child runs (each re-checked with verify_harness.py), and looks for what the
loop must not have done: a child run with the loop's prefix that the summary does not record.
From harness.py it takes only data and plumbing (the watched-file list, the name rule, hashing).
A loop folder's workspace root is the folder holding its `loop-runs/`, so a teacher can check a
learner's folder from anywhere; file hashes and the `runs/` listing are read once per root.
A mid-run time stop, an interrupt, an unexpected error or a record still `running` cannot be
judged against the table: `needs_human`, saying what to inspect.
"""
import json
import math
import os
import re
import sys
from pathlib import Path

import harness
import verify_harness
from cli import EXIT_OK, EXIT_STOP, ChineseArgumentParser, print_json, read_json, run, say, use_safe_console

LOOP_FILES = harness.WATCHED_FILES + ("loop_lab.py", "docs/loop/TASK.md")
# What each scenario's script exports, in order, and how it ends when the budgets allow it.
SCRIPT = {"repair": ("bad-quote", "valid"), "stuck": ("bad-quote", "bad-quote"),
          "semantic": ("semantic",), "permission": ()}
# What the permission scenario's script proposes instead of an export (and the loop must not run).
BLOCKED = {"permission": ("publish", "external-website")}
ENDING = {"repair": ("needs_review", "mechanical_pass"), "stuck": ("stalled", "repeated_failure"),
          "semantic": ("needs_review", "mechanical_pass"), "permission": ("needs_human", "permission_boundary")}
REASONS = {"running": (None,), "needs_review": ("mechanical_pass",), "stalled": ("repeated_failure",),
           "budget_exhausted": ("attempt_budget", "time_budget"),
           "needs_human": ("permission_boundary", "unexpected_error"), "interrupted": ("keyboard_interrupt",)}
LOOP_KEYS = ("schema", "run", "scenario", "budget", "status", "reason", "error_type", "semantic_review",
             "actual_api_calls", "context", "attempts", "blocked_proposal", "handoff", "elapsed_seconds",
             "started_at", "finished_at")
ATTEMPT_KEYS = ("attempt", "candidate", "child_run", "state", "status", "feedback")
HANDOFF_KEYS = ("stopped_at", "done", "inspect", "decide")
CHILD_STATUSES = ("running", "needs_review", "failed", "needs_human")
SHA256 = re.compile("[0-9a-f]{64}")
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
MIN_DECISION = 10  # characters: "请处理" is not a decision a person can act on
CHILD_NAME = re.compile(r"(.+)-[0-9]{2}")  # NAME-NN: the loop's name is everything before the last -NN


def expected_outcome(scenario, budget):
    """(status, reason, attempts) the scenario must end with under these budgets (SPEC §5)."""
    if budget["max_seconds"] == 0:
        return "budget_exhausted", "time_budget", 0
    if scenario == "permission":
        return "needs_human", "permission_boundary", 0
    needed = len(SCRIPT[scenario])
    if budget["max_attempts"] < needed:
        return "budget_exhausted", "attempt_budget", budget["max_attempts"]
    return (*ENDING[scenario], needed)


def is_int(value):
    return type(value) is int


def shown(value):
    """A value as the record's reader sees it in the file (JSON), not as Python prints it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def is_number(value):
    return type(value) in (int, float) and math.isfinite(value)


class Workspace:
    """A workspace root shared by many loop folders: its file hashes and runs/ are read once."""

    def __init__(self, root):
        self.root = root
        self.hashes = {}
        self._context = self._children = None

    def context(self):
        if self._context is None:
            self._context = harness.fingerprint(self.root, LOOP_FILES, cache=self.hashes)["entries"]
        return self._context

    def children(self, loop_name):
        """The folders runs/LOOP_NAME-NN (exactly two digits), from one listing of runs/ per root."""
        if self._children is None:
            self._children = {}
            try:
                with os.scandir(self.root / "runs") as found:
                    names = sorted(entry.name for entry in found if entry.is_dir())
            except OSError:
                names = []
            for name in names:
                match = CHILD_NAME.fullmatch(name)
                if match:  # casefolded: on Windows and macOS `A-03` and `a-03` are one folder
                    self._children.setdefault(match.group(1).casefold(), []).append(name)
        return self._children.get(loop_name.casefold(), [])


def verify_loop(loop_dir, workspaces=None):
    """{"result", "status", "attempts", "semantic_review", "run", "problems"} for one loop folder."""
    loop_dir = Path(loop_dir).resolve()
    root = loop_dir.parent.parent
    workspaces = {} if workspaces is None else workspaces
    workspace = workspaces.setdefault(root, Workspace(root))
    check = LoopCheck(loop_dir, workspace)
    try:
        check.run()
    except Exception as exc:  # a record shaped in some way nobody foresaw is still just a failed check
        check.problems.append(f"核对 {check.where} 时遇到无法解释的内容（{type(exc).__name__}：{exc}）：记录可能被改动过。")
    return check.result()


class LoopCheck:
    """The checks of one loop folder; PROBLEMS make it fail, NOTES make it need a person."""

    def __init__(self, loop_dir, workspace):
        self.name, self.workspace = loop_dir.name, workspace
        self.where = f"loop-runs/{self.name}/loop.json"
        self.loop_dir = loop_dir
        self.record, self.problems, self.notes = None, [], []

    def result(self):
        record = self.record if type(self.record) is dict else {}
        attempts = record.get("attempts")
        verdict = "fail" if self.problems else "needs_human" if self.notes else "pass"
        return {"result": verdict, "status": record.get("status"),
                "attempts": len(attempts) if type(attempts) is list else None,
                "semantic_review": record.get("semantic_review"), "run": self.name,
                "problems": self.problems + self.notes}

    def run(self):
        try:
            self.record = read_json(self.loop_dir / "loop.json")
        except FileNotFoundError:
            return self.problems.append(f"{self.where} 不存在：这个目录里没有循环记录。")
        except (OSError, ValueError, RecursionError) as exc:
            return self.problems.append(f"{self.where} 无法读取或不是合法的 JSON（{type(exc).__name__}）：记录损坏或被改动过。")
        self.problems += shape_problems(self.record, self.name)
        if self.problems:
            return
        outcomes = [self.check_attempt(number, entry) for number, entry in enumerate(self.record["attempts"], 1)]
        self.check_unrecorded_children()
        self.check_context()
        self.check_outcome(outcomes)

    def check_attempt(self, number, entry):
        """Compares one attempt with its child run; returns the child's (candidate+error key, status)."""
        child_run, candidate, state = entry["child_run"], entry["candidate"], entry["state"]
        child_dir = self.workspace.root / child_run
        script = SCRIPT[self.record["scenario"]]
        if number > len(script) or candidate["sample"] != script[number - 1]:
            self.problems.append(f"第 {number} 次尝试的候选 {candidate['sample']} 不是情景 {self.record['scenario']} "
                                 f"的脚本会提出的（脚本依次为：{'、'.join(script) or '不导出'}）。")
        if candidate["sha256"] != self.record["context"]["entries"][f"samples/{candidate['sample']}.json"]:
            self.problems.append(f"第 {number} 次尝试的候选哈希与循环开始时 samples/{candidate['sample']}.json 的指纹不符。")
        if not child_dir.is_dir():
            if state == "done":
                self.problems.append(f"第 {number} 次尝试记录的子运行 {child_run} 不存在：证据被删除或移走了。")
            else:
                self.notes.append(f"第 {number} 次尝试状态为 {state}，而 {child_run} 不存在：这次尝试可能还没开始，"
                                  "请核对 runs/ 与 loop.json 后再决定。")
            return None, None
        verdict = verify_harness.verify_run(child_dir, cache=self.workspace.hashes)
        child = child_view(child_dir)
        if state != "done":
            self.notes.append(f"第 {number} 次尝试状态为 {state}（子运行 {child_run} 的 run.json 为 {child['status']}）："
                              f"请核对 {child_run}/ 里实际留下的输入与产物，不能认定这次动作没做。")
            return child["key"], child["status"]
        if verdict["result"] == "fail":
            last_unexpected = number == len(self.record["attempts"]) and self.record["reason"] == "unexpected_error"
            (self.notes if last_unexpected else self.problems).append(
                f"子运行 {child_run} 没有通过独立核对：" + "；".join(p.rstrip("。") for p in verdict["problems"]) + "。")
        mismatched = [f"{field}（摘要 {shown(recorded)}，子运行 {shown(actual)}）" for field, recorded, actual in (
            ("run", child_dir.name, child["run"]),  # a folder linked to another run's evidence
            ("candidate.sample", candidate["sample"], child["sample"]),
            ("candidate.sha256", candidate["sha256"], child["sha256"]),
            ("status", entry["status"], child["status"]),
            ("feedback", entry["feedback"], child["feedback"])) if recorded != actual]
        if mismatched:
            self.problems.append(f"第 {number} 次尝试的摘要与子运行 {child_run}/run.json 不符：{'；'.join(mismatched)}。"
                                 "摘要被改动过，或指向了别的运行。")
        return child["key"], child["status"]

    def check_unrecorded_children(self):
        """A child run with this loop's exact prefix that the summary leaves out is a hidden attempt."""
        recorded = {entry["child_run"] for entry in self.record["attempts"]}
        taken = f"runs/{self.name}-{len(recorded) + 1:02d}"  # a name already taken stops the loop uncounted
        for found in self.workspace.children(self.name):
            child_run = f"runs/{found}"
            if child_run in recorded:
                continue
            if child_run == taken and self.record["error_type"] == "FileExistsError":
                self.notes.append(f"{child_run} 在循环开始尝试时已被占用（不是本循环创建的）：请核对它来自哪里。")
            else:
                self.problems.append(f"{child_run} 以本循环的名称为前缀，但 loop.json 没有记录它："
                                     "可能多执行了一次却从摘要里抹掉了。")

    def check_context(self):
        recorded = self.record["context"]["entries"]
        current = self.workspace.context()
        changed = [rel for rel in sorted(recorded) if recorded[rel] != current[rel]]
        if changed:
            self.problems.append("这些文件与循环开始时的指纹不同：" + "、".join(changed)
                                 + "。请找到与记录相符的版本再核对，不要改写记录里的指纹。")

    def check_outcome(self, outcomes):
        """Re-derives the stop from the children with this file's own rules, then the table."""
        record = self.record
        status, reason, budget = record["status"], record["reason"], record["budget"]
        count = len(outcomes)
        if count > budget["max_attempts"]:
            self.problems.append(f"记录了 {count} 次尝试，超过了 budget.max_attempts={budget['max_attempts']}。")
        supported = self.derived_stop(outcomes)
        if status in ("running", "interrupted") or reason == "unexpected_error":
            return self.notes.append(undecided_note(record))
        if supported is None:
            return self.problems.append(
                f"记录的停止 {status}/{reason} 没有证据支持：{count} 次尝试之后，子运行既没有通过也没有重复失败，"
                f"尝试预算（max_attempts={budget['max_attempts']}）没有用完，"
                f"elapsed_seconds（{record['elapsed_seconds']}）也没有达到 max_seconds，循环本应继续。")
        if supported != (status, reason):
            return self.problems.append(f"子运行与预算支持的结果是 {'/'.join(supported)}，记录却是 {status}/{reason}："
                                        "状态或原因与证据不符。")
        if reason == "time_budget" and budget["max_seconds"] > 0:
            return self.notes.append(
                f"时间预算（{budget['max_seconds']} 秒）在第 {count + 1} 轮开始前耗尽：这取决于当时的机器，"
                f"不能按固定情景的预期判断。请核对 elapsed_seconds（{record['elapsed_seconds']}）与已完成的子运行"
                f"（{child_runs(record)}），再决定是否用更大的 --max-seconds 重新运行。")
        expected = expected_outcome(record["scenario"], budget)
        if (status, reason, count) != expected:
            self.problems.append(
                f"情景 {record['scenario']} 在预算 max_attempts={budget['max_attempts']}、max_seconds="
                f"{budget['max_seconds']} 下应为 {expected[0]}/{expected[1]}、{expected[2]} 次尝试，"
                f"记录却是 {status}/{reason}、{count} 次：情景、预算或结果被改动过，"
                "或者 samples/ 已不是课程提供的版本（预期表只适用于原样的三个样例）。")

    def derived_stop(self, outcomes):
        """The stop the children and budgets support, by the lesson's rules; None if the loop must go on."""
        seen = set()
        for number, (key, status) in enumerate(outcomes, 1):
            if status is None:  # no child record to judge by: already reported
                continue
            stop = ("needs_review", "mechanical_pass") if status == "needs_review" else \
                ("stalled", "repeated_failure") if status == "failed" and key in seen else \
                None if status == "failed" else ("needs_human", "unexpected_error")
            seen.add(key)
            if stop and number < len(outcomes):
                self.problems.append(f"第 {number} 次尝试之后循环就应停止（{'/'.join(stop)}），记录里却还有第 "
                                     f"{number + 1} 次尝试。")
            if stop and number == len(outcomes):
                return stop
        # the last child asked to go on: the next round's checks, in the loop's order, decide
        record, budget, blocked = self.record, self.record["budget"], self.record["blocked_proposal"]
        if len(outcomes) == budget["max_attempts"]:
            return "budget_exhausted", "attempt_budget"
        if record["reason"] == "time_budget" and record["elapsed_seconds"] >= budget["max_seconds"]:
            return "budget_exhausted", "time_budget"
        if blocked is not None:
            proposed, expected = (blocked["action"], blocked["target"]), BLOCKED.get(record["scenario"])
            if proposed != expected or not blocked["reason"].strip():
                self.problems.append(
                    f"blocked_proposal 记录的是 {shown(list(proposed))}，情景 {record['scenario']} 的脚本提议的却是 "
                    f"{shown(expected and list(expected))}（reason 也不能为空）：被拦下的提议被改动过。")
            return "needs_human", "permission_boundary"
        return None


def undecided_note(record):
    status, error_type = record["status"], record["error_type"]
    inspect = child_runs(record)
    if status == "running":
        why = "记录仍是 running：循环可能被强制结束，或保存记录失败"
    elif status == "interrupted":
        why = "循环被 Ctrl-C 中断"
    else:
        why = f"循环因意外情况 {error_type} 停止"
    return (f"{why}，不能按固定情景的预期判断。请对照 loop.json 的 handoff 核对 {inspect} 里实际发生的动作"
            "和产物，不能认定动作没做，也不要清空重跑。")


def child_runs(record):
    return "、".join(f"{entry['child_run']}/" for entry in record["attempts"]) or "runs/（没有子运行）"


def child_view(child_dir):
    """What the loop summary must agree with, taken from the child's own run.json."""
    try:
        record = read_json(child_dir / "run.json")
    except (OSError, ValueError, RecursionError):
        record = None
    record = record if type(record) is dict else {}
    given = record.get("input")
    error = record.get("error")
    error = error if type(error) is dict else None
    feedback = error and {"error_type": error.get("type"), "message": error.get("message")}
    sha256 = given.get("sha256") if type(given) is dict else None
    key = (record.get("sample"), sha256, repr(feedback))
    return {"run": record.get("run"), "sample": record.get("sample"), "sha256": sha256, "status": record.get("status"),
            "feedback": feedback, "key": key}


def shape_problems(record, name):
    """Types and fixed values of every field of a loop-run/1 record (Chinese, naming the field)."""
    if type(record) is not dict:
        return ["loop.json 应为一个 JSON 对象（loop-run/1 记录）。"]
    missing = [key for key in LOOP_KEYS if key not in record]
    if missing:
        return [f"loop.json 缺少字段：{'、'.join(missing)}。"]
    status, reason = record["status"], record["reason"]
    budget, context = record["budget"], record["context"]
    checks = [
        (record["schema"] == "loop-run/1", f"schema 是 {shown(record['schema'])}，应为 loop-run/1。"),
        (record["run"] == name and harness.name_problem(name, 61) is None,
         f"run 是 {shown(record['run'])}，与目录名 {shown(name)} 不符（或不是合法的循环名）。"),
        (type(record["scenario"]) is str and record["scenario"] in SCRIPT, f"scenario 是 {shown(record['scenario'])}，不是已知情景（{'、'.join(SCRIPT)}）。"),
        (type(budget) is dict and is_int(budget.get("max_attempts")) and 1 <= budget["max_attempts"] <= 5
         and is_number(budget.get("max_seconds")) and 0 <= budget["max_seconds"] <= 300,
         f"budget 是 {shown(budget)}：max_attempts 应为 1-5 的整数，max_seconds 应为 0-300 秒。"),
        (type(status) is str and status in REASONS, f"status 是 {shown(status)}，不是循环的状态（{'、'.join(REASONS)}）。"),
        (type(status) is not str or status not in REASONS or reason in REASONS[status], f"reason 是 {shown(reason)}，与 status {shown(status)} 不配。"),
        ((type(record["error_type"]) is str) == (reason == "unexpected_error"),
         f"error_type 是 {shown(record['error_type'])}：只有 unexpected_error 才记录 error_type，且必须记录。"),
        (record["semantic_review"] == "pending",
         f"semantic_review 是 {shown(record['semantic_review'])}：循环从不判断内容，只能是 pending。"),
        (is_int(record["actual_api_calls"]) and record["actual_api_calls"] == 0,
         f"actual_api_calls 是 {shown(record['actual_api_calls'])}：循环不调用模型，只能是 0。"),
        (context_ok(context), "context 应记录 16 个文件的逐文件哈希，且合并指纹与它们一致。"),
        (type(record["attempts"]) is list, "attempts 应为尝试记录的数组。"),
        ((record["blocked_proposal"] is None) == (reason != "permission_boundary"),
         "blocked_proposal 只在 permission_boundary 停止时记录，且那时必须记录被拦下的提议。"),
        (record["blocked_proposal"] is None or (type(record["blocked_proposal"]) is dict and all(
            type(record["blocked_proposal"].get(key)) is str for key in ("action", "target", "reason"))),
         "blocked_proposal 应有字符串字段 action、target、reason。"),
        (handoff_ok(record, name), "handoff：除 needs_review 外的每个停止都要写明 stopped_at、done、inspect"
                                   "（含 loop.json 与每个子运行的 run.json）和具体的 decide（不能只说“请处理”），"
                                   "needs_review 与 running 没有 handoff。"),
        (is_number(record["elapsed_seconds"]) and record["elapsed_seconds"] >= 0,
         f"elapsed_seconds 是 {shown(record['elapsed_seconds'])}，应为不小于 0 的秒数。"),
        (timestamps_ok(record["started_at"], record["finished_at"], status),
         "started_at 应为 UTC 时间（如 2026-01-01T00:00:00Z）；finished_at 在结束后记录且不早于 started_at，"
         "running 时为 null。"),
    ]
    problems = [message for ok, message in checks if not ok]
    if problems:
        return problems
    attempts = record["attempts"]
    for number, entry in enumerate(attempts, 1):
        problem = attempt_problem(number, entry, name, status, number == len(attempts))
        if problem:
            return [problem]
    return []


def context_ok(context):
    if type(context) is not dict or not is_int(context.get("files")) or context["files"] != len(LOOP_FILES):
        return False
    entries = context.get("entries")
    if type(entries) is not dict or sorted(entries) != sorted(LOOP_FILES) or not all(
            type(sha) is str and (sha == "missing" or SHA256.fullmatch(sha)) for sha in entries.values()):
        return False
    return harness.combined_fingerprint(entries) == context.get("fingerprint")


def timestamps_ok(started, finished, status):
    if type(started) is not str or not TIMESTAMP.fullmatch(started):
        return False
    if status == "running":
        return finished is None
    # same fixed-width UTC format, so text order is time order
    return type(finished) is str and TIMESTAMP.fullmatch(finished) is not None and finished >= started


def handoff_ok(record, name):
    """A stop handed to a person says where, what was done, what to inspect and what to decide.

    Never just "please handle": the decision must be spelled out, and the files to inspect
    include the loop record and every recorded child run.
    """
    handoff, status = record["handoff"], record["status"]
    if type(status) is not str or status not in REASONS:
        return True  # the status itself is reported
    if status in ("needs_review", "running"):
        return handoff is None
    if not (type(handoff) is dict and all(key in handoff for key in HANDOFF_KEYS)
            and type(handoff["done"]) is list and type(handoff["inspect"]) is list
            and all(type(handoff[key]) is str for key in ("stopped_at", "decide"))):
        return False
    attempts = record["attempts"] if type(record["attempts"]) is list else []
    must_inspect = {f"loop-runs/{name}/loop.json"} | {
        f"{entry['child_run']}/run.json" for entry in attempts if type(entry) is dict and "child_run" in entry}
    return (len(handoff["decide"].strip()) >= MIN_DECISION and handoff["stopped_at"].strip() != ""
            and must_inspect <= set(handoff["inspect"]))


def attempt_problem(number, entry, name, status, last):
    """The shape of attempt NUMBER; attempts are numbered 1..n in order, each with its own child."""
    where = f"attempts 第 {number} 项"
    if type(entry) is not dict or any(key not in entry for key in ATTEMPT_KEYS):
        return f"{where} 缺少字段（应有 {'、'.join(ATTEMPT_KEYS)}）。"
    if not is_int(entry["attempt"]) or entry["attempt"] != number or entry["child_run"] != f"runs/{name}-{number:02d}":
        return (f"{where} 记录为第 {shown(entry['attempt'])} 次、子运行 {shown(entry['child_run'])}：尝试必须按 1..n 依次记录，"
                f"第 {number} 次的子运行是 runs/{name}-{number:02d}（有尝试被删除或调换了顺序）。")
    candidate, feedback, state = entry["candidate"], entry["feedback"], entry["state"]
    if type(candidate) is not dict or candidate.get("action") != "export" \
            or candidate.get("sample") not in harness.SAMPLES or type(candidate.get("sha256")) is not str:
        return f"{where} 的 candidate 应为 export 一个已知样例，并带 sha256。"
    if feedback is not None and (type(feedback) is not dict or sorted(feedback) != ["error_type", "message"]):
        return f"{where} 的 feedback 应为 null 或 {{error_type, message}}。"
    allowed_states = {"done": True, "running": last and status == "running",
                      "unknown": last and status in ("interrupted", "needs_human")}
    if type(state) is not str or not allowed_states.get(state, False):
        return f"{where} 的 state 是 {shown(state)}：只有最后一次尝试可以是 running（记录仍在进行）或 unknown（被中断或意外停止）。"
    if (state == "done") != (entry["status"] in CHILD_STATUSES[1:]) or \
            (state != "done" and entry["status"] is not None):
        return f"{where} 的 status 是 {shown(entry['status'])}，与 state {shown(state)} 不配。"
    return None


def print_result(result, several):
    out = {key: result[key] for key in ("result", "status", "attempts", "semantic_review")}
    if several or result["result"] != "pass":
        out["run"] = result["run"]
    if result["result"] != "pass":
        out["problems"] = result["problems"]
    print_json(out)
    label = f"loop-runs/{result['run']}"
    if result["result"] == "pass":
        meaning = "内容仍待人工审核（semantic_review: pending）" if result["status"] == "needs_review" \
            else "这表示循环按预期停下了，不表示资料导出成功"
        say(f"{label}：pass，停止状态 {result['status']}、{result['attempts']} 次尝试与情景预期及子运行一致；{meaning}。")
    else:
        say(f"{label}：{result['result']}" + "".join(f"\n  - {problem}" for problem in result["problems"]))


def main(argv=None):
    use_safe_console()
    parser = ChineseArgumentParser(
        description="独立核对一个或多个循环记录（loop-runs/NAME）：按情景预期、子运行和上下文指纹重新推导结果。",
        epilog="退出码：0 每个循环都通过；1 有循环 fail 或 needs_human；2 参数错误（例如给的不是 loop-runs/ 下的目录）；130 被 Ctrl-C 中断。",
    )
    parser.add_argument("loop_dirs", nargs="+", metavar="LOOP_DIR", help="循环目录，例如 loop-runs/repair-01")
    args = parser.parse_args(argv)
    folders = []
    for text in args.loop_dirs:
        path = Path(text)
        if not path.is_dir() or path.resolve().parent.name != "loop-runs":
            parser.error(f"{text} 不是循环记录目录：请给出 loop-runs/ 下的目录，例如 loop-runs/repair-01"
                         "（这次没有核对任何目录；用通配符时请先移走 loop-runs/ 里的其他文件）。")
        folders.append(path)
    workspaces, counts = {}, {"pass": 0, "fail": 0, "needs_human": 0}
    for folder in folders:
        result = verify_loop(folder, workspaces)
        counts[result["result"]] += 1
        print_result(result, len(folders) > 1)
    if len(folders) > 1:
        say(f"共核对 {len(folders)} 个循环：pass {counts['pass']}，fail {counts['fail']}，"
            f"needs_human {counts['needs_human']}。")
    return EXIT_OK if counts["pass"] == len(folders) else EXIT_STOP


if __name__ == "__main__":
    run(main, "已中断：没有完成核对，已打印的结果仍然有效。")
