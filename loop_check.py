"""The independent check of one loop folder: does its stop follow from the evidence it left?

Part of verify_loop (the command line). It re-derives each attempt's outcome from the child runs, with
loop_records.py's copy of the rules, and compares the recorded stop with what the children and the
budgets support. It does not import loop_lab.py, harness.py or export_review.py. What it shares:
cli.py's plumbing (paths shown from the current folder, strict JSON) and verify_harness.verify_run,
the lesson-13 verifier, which checks each child run.
"""
import os
from pathlib import Path

import verify_harness
from cli import DuplicateKeyError, display_path
from loop_records import (BLOCKED, PRECISION, SCRIPT, TOLERANCE, CourseFiles, Workspace, child_state_text,
                          child_view, expected_outcome, is_link, moment, shape_problems, shown)


# --- one loop ------------------------------------------------------------------------------------

class Verdict:
    """What a check found: a problem makes it fail, a note makes it need a person."""

    def __init__(self):
        self.problems, self.notes = [], []

    def fail(self, message):
        self.problems.append(message)

    def needs_person(self, message):
        self.notes.append(message)

    def result(self):
        if self.problems:
            return "fail"
        if self.notes:
            return "needs_human"
        return "pass"


def verify_loop(loop_dir, workspaces=None, course=None):
    """{"result", "status", "attempts", "semantic_review", "run", "problems", ...} for one loop folder.

    WORKSPACES (root -> Workspace) lets many folders of one root share its listings; COURSE, the
    reference course files, defaults to the loop's own workspace.
    """
    loop_dir = Path(os.path.abspath(loop_dir))  # not resolved: a linked folder keeps its own name
    root = loop_dir.parent.parent
    workspaces = {} if workspaces is None else workspaces
    if root not in workspaces:
        workspaces[root] = Workspace(root, course or CourseFiles(root))
    workspace = workspaces[root]
    check = check_loop(loop_dir, workspace)
    check.verdict.problems = workspace.problems() + check.verdict.problems  # the folders first
    return check.result()


def check_loop(loop_dir, workspace):
    """The LoopCheck of one folder after every check ran; a surprise is a failed check, not a crash."""
    check = LoopCheck(loop_dir, workspace)
    try:
        check.run()
    except Exception as exc:  # a record shaped in some way nobody foresaw is still just a failed check
        check.verdict.fail(f"核对 {check.record_path} 时遇到无法解释的内容（{type(exc).__name__}：{exc}）："
                           "记录可能被改动过。")
    return check


class LoopCheck:
    """The checks of one loop folder, in the order a reader would make them."""

    def __init__(self, loop_dir, workspace):
        self.loop_dir, self.workspace, self.name = loop_dir, workspace, loop_dir.name
        self.record_path = display_path(loop_dir / "loop.json")
        self.record = None
        self.verdict = Verdict()
        self.child_times = []  # (attempt number, child run, started_at, finished_at) of each child read

    def show(self, rel):
        return self.workspace.show(rel)

    def result(self):
        record = self.record if type(self.record) is dict else {}
        attempts = record.get("attempts")
        return {"result": self.verdict.result(), "status": record.get("status"),
                "attempts": len(attempts) if type(attempts) is list else None,
                "semantic_review": record.get("semantic_review"), "run": self.name,
                "problems": self.verdict.problems + self.verdict.notes,
                "scenario": record.get("scenario"), "budget": record.get("budget"),
                "folder": display_path(self.loop_dir), "paths": self.paths()}

    def paths(self):
        """Where a person looks: the loop folder and the child runs that exist."""
        children = [self.show(f"runs/{name}") for name in self.workspace.children(self.name)]
        return [display_path(self.loop_dir)] + children

    def run(self):
        if is_link(self.loop_dir):
            self.verdict.fail(f"{display_path(self.loop_dir)} 是符号链接或联接点：循环目录必须是记录本身，"
                              "链接可能指向另一个循环的证据。")
            return
        for other in self.workspace.same_name_loops(self.name):
            self.verdict.fail(f"{display_path(self.loop_dir)} 与 {self.show('loop-runs/' + other)} 的名称只差大小写："
                              "在 Windows 和 macOS 上它们是同一个文件夹，子运行也无法分清属于哪一个。")
        self.record = self.read_record()
        if self.record is None:
            return
        for problem in shape_problems(self.record, self.name):
            self.verdict.fail(problem)
        if self.verdict.problems:
            return
        outcomes = [self.check_attempt(number, entry) for number, entry in enumerate(self.record["attempts"], 1)]
        self.check_unrecorded_children()
        self.check_context()
        self.check_times()
        self.check_outcome(outcomes)

    def read_record(self):
        """loop.json, strictly; None (with the verdict said) when there is no record to check."""
        path = self.loop_dir / "loop.json"
        if is_link(path):
            self.verdict.fail(f"{self.record_path} 是符号链接：记录必须是这个文件本身。")
            return None
        try:
            return verify_harness.read_record_json(path)
        except DuplicateKeyError as exc:
            self.verdict.fail(f"{self.record_path} 里键 {shown(exc.key)} 出现了不止一次：哪个值算数说不准，"
                              "程序从不这样写，记录被改动过。")
        except verify_harness.NonStandardNumber as exc:
            self.verdict.fail(f"{self.record_path} 里有 {exc}：标准 JSON 没有这样的数，程序从不这样写，记录被改动过。")
        except FileNotFoundError:
            self.no_record("不存在")
        except (OSError, ValueError, RecursionError) as exc:  # unreadable, not UTF-8, not JSON, absurdly nested
            self.no_record(f"无法读取或不是合法的 JSON（{type(exc).__name__}）")
        return None

    def no_record(self, why):
        """The loop writes its first record before any child run: children without it mean a lost record."""
        children = self.workspace.children(self.name)
        if children:
            shown_children = "、".join(self.show(f"runs/{name}") for name in children)
            self.verdict.fail(f"{self.record_path} {why}，而已有本循环的子运行 {shown_children}：循环在启动子运行之前"
                              "就写好了记录，记录被删除或损坏了。")
        else:
            self.verdict.needs_person(f"{self.record_path} {why}：循环可能在写下第一份记录之前就被中断了，没有子运行。"
                                      f"请看看 {display_path(self.loop_dir)} 里还剩什么；这个名称已用过，请用新名称重新运行。")

    def check_attempt(self, number, entry):
        """Compares one attempt with its child run; returns the child's (candidate+error key, status)."""
        child_run, state = entry["child_run"], entry["state"]
        self.check_candidate(number, entry["candidate"])
        child_name = Path(child_run).name
        if child_name not in self.workspace.runs():
            self.child_missing(number, child_run, state)
            return None, None
        child_dir = self.workspace.root / child_run
        child = child_view(child_dir)
        self.child_times.append((number, child_run, child["started_at"], child["finished_at"]))
        if state != "done":
            self.verdict.needs_person(
                f"第 {number} 次尝试状态为 {state}（子运行 {self.show(child_run)} 的 {child_state_text(child)}）："
                f"请核对 {self.show(child_run)}/ 里实际留下的输入与产物，不能认定这次动作没做。")
            return child["key"], child["status"]
        self.check_child_verdict(number, child_run, child_dir)
        self.compare_with_child(number, entry, child_name, child)
        return child["key"], child["status"]

    def check_candidate(self, number, candidate):
        script = SCRIPT[self.record["scenario"]]
        if number > len(script) or candidate["sample"] != script[number - 1]:
            self.verdict.fail(f"第 {number} 次尝试的候选 {candidate['sample']} 不是情景 {self.record['scenario']} "
                              f"的脚本会提出的（脚本依次为：{'、'.join(script) or '不导出'}）。")
        if candidate["sha256"] != self.record["context"]["entries"][f"samples/{candidate['sample']}.json"]:
            self.verdict.fail(f"第 {number} 次尝试的候选哈希与循环开始时 samples/{candidate['sample']}.json 的指纹不符。")

    def child_missing(self, number, child_run, state):
        child_name = Path(child_run).name
        other_case = [name for name in self.workspace.runs() if name.lower() == child_name.lower()]
        if other_case:
            self.verdict.fail(f"记录的子运行 {self.show(child_run)} 不存在，只有名称只差大小写的 "
                              f"{self.show('runs/' + other_case[0])}：目录被改名或换过。")
        elif state == "done":
            self.verdict.fail(f"第 {number} 次尝试记录的子运行 {self.show(child_run)} 不存在：证据被删除或移走了。")
        else:
            self.verdict.needs_person(f"第 {number} 次尝试状态为 {state}，而 {self.show(child_run)} 不存在：这次尝试"
                                      f"可能还没来得及创建子运行。请核对 {self.show('runs')}/ 与 {self.record_path} 后再决定。")

    def check_child_verdict(self, number, child_run, child_dir):
        verdict = verify_harness.verify_run(child_dir, course_root=self.workspace.course.root)
        if verdict["result"] != "fail":
            return
        message = (f"子运行 {self.show(child_run)} 没有通过独立核对："
                   + "；".join(problem.rstrip("。") for problem in verdict["problems"]) + "。")
        attempts = self.record["attempts"]
        if number == len(attempts) and self.record["reason"] == "unexpected_error":
            self.verdict.needs_person(message)  # the very evidence that stopped the loop
        else:
            self.verdict.fail(message)

    def compare_with_child(self, number, entry, child_name, child):
        candidate = entry["candidate"]
        mismatched = [f"{field}（摘要 {shown(recorded)}，子运行 {shown(actual)}）" for field, recorded, actual in (
            ("run", child_name, child["run"]),  # a copy of another run's evidence keeps its name inside
            ("candidate.sample", candidate["sample"], child["sample"]),
            ("candidate.sha256", candidate["sha256"], child["sha256"]),
            ("status", entry["status"], child["status"]),
            ("feedback", entry["feedback"], child["feedback"])) if recorded != actual]
        if mismatched:
            self.verdict.fail(f"第 {number} 次尝试的摘要与子运行 {self.show(entry['child_run'])}/run.json 不符："
                              f"{'；'.join(mismatched)}。摘要被改动过，或指向了别的运行。")

    def check_unrecorded_children(self):
        """A child run with this loop's prefix (in any case) that the summary leaves out is a hidden attempt,
        unless the loop could not have made it: a name taken before it tried, or a run begun after it ended."""
        recorded = {Path(entry["child_run"]).name.lower() for entry in self.record["attempts"]}
        taken = f"{self.name}-{len(recorded) + 1:02d}".lower()  # a name already taken stops the loop uncounted
        for found in self.workspace.children(self.name):
            shown_run = self.show("runs/" + found)
            if found.lower() in recorded:
                continue
            if found.lower() == taken and self.record["error_type"] in ("FileExistsError", "NameTaken"):
                self.verdict.needs_person(f"{shown_run} 在循环开始尝试时已被占用（不是本循环创建的）：请核对它来自哪里。")
            elif self.began_after_loop(found):
                self.verdict.needs_person(
                    f"{shown_run} 以本循环的名称为前缀、loop.json 没有记录它，但它在循环结束之后才开始，不是本循环的尝试"
                    f"（可能是之后用 harness.py --run {found} 单独运行的）：请核对它的来历；以后单独运行请换一个不像子运行的名称。")
            else:
                self.verdict.fail(f"{shown_run} 以本循环的名称为前缀，但 loop.json 没有记录它："
                                  "可能多执行了一次却从摘要里抹掉了。")

    def began_after_loop(self, run_name):
        """The run's own started_at lies beyond the loop's finished_at (precision and tolerance allowed)."""
        finished = moment(self.record["finished_at"])
        started = moment(child_view(self.workspace.root / "runs" / run_name)["started_at"])
        return None not in (finished, started) and started > finished + PRECISION + TOLERANCE

    def check_context(self):
        recorded = self.record["context"]["entries"]
        current = self.workspace.course.entries()
        changed = [rel for rel in sorted(recorded) if recorded[rel] != current[rel]]
        if not changed:
            return
        if self.workspace.course.root == self.workspace.root:
            self.verdict.fail("这些文件与循环开始时的指纹不同：" + "、".join(changed)
                              + "。请找到与记录相符的版本再核对（没有 git 时：从课程 ZIP 里重新取出原样的文件，"
                                "或用改动前留的备份放回），不要改写记录里的指纹。")
        else:
            self.verdict.fail(f"循环开始时这些文件与{self.workspace.course.label()}不同：" + "、".join(changed)
                              + "。学生用的课程文件被改过，这个循环不能算数；请学生换回课程原版文件后用新名称重新运行。")

    def check_times(self):
        """Loop start <= each child's start <= its finish <= the next child's start <= loop finish."""
        record, budget = self.record, self.record["budget"]
        started, finished = moment(record["started_at"]), moment(record["finished_at"])
        events = [("loop.json 的 started_at", record["started_at"], started)]
        for number, child_run, child_started, child_finished in self.child_times:
            where = f"{self.show(child_run)}/run.json"
            for field, text in (("started_at", child_started), ("finished_at", child_finished)):
                if text is not None and moment(text) is None:
                    self.verdict.fail(f"{where} 的 {field} 是 {shown(text)}，不是 UTC 时间（如 2026-01-01T00:00:00Z）。")
                events.append((f"{where} 的 {field}", text, moment(text)))
            self.check_began_in_budget(number, started, moment(child_started))
        events.append(("loop.json 的 finished_at", record["finished_at"], finished))
        for problem in order_problems(events):
            self.verdict.fail(problem)
        if finished is not None:
            self.check_elapsed(finished - started)

    def check_began_in_budget(self, number, loop_started, child_started):
        """An attempt begins only while time is left: the round's check comes just before its child."""
        max_seconds = self.record["budget"]["max_seconds"]
        if child_started is not None and child_started - loop_started > max_seconds + PRECISION + TOLERANCE:
            self.verdict.fail(f"第 {number} 次尝试在循环开始 {child_started - loop_started:.0f} 秒后才开始，"
                              f"超过了时间预算 max_seconds={max_seconds}：循环不会在预算用完后开始新的尝试。")

    def check_elapsed(self, span):
        """elapsed_seconds agrees with the times; with it, a time-budget stop agrees with them too."""
        elapsed = self.record["elapsed_seconds"]
        if abs(span - elapsed) > PRECISION + TOLERANCE:
            self.verdict.fail(f"elapsed_seconds 是 {shown(elapsed)}，而 started_at 到 finished_at 相隔 {span:.0f} 秒："
                              "两者对不上，用时被改动过。")

    def check_outcome(self, outcomes):
        """Re-derives the stop from the children with this file's own rules, then the table."""
        record = self.record
        status, reason, budget = record["status"], record["reason"], record["budget"]
        count = len(outcomes)
        if count > budget["max_attempts"]:
            self.verdict.fail(f"记录了 {count} 次尝试，超过了 budget.max_attempts={budget['max_attempts']}。")
        stops = child_stops(outcomes)
        for number, stop in enumerate(stops, 1):
            if stop and number < count:
                self.verdict.fail(f"第 {number} 次尝试之后循环就应停止（{'/'.join(stop)}），记录里却还有第 "
                                  f"{number + 1} 次尝试。")
        problem = blocked_problem(record)
        if problem:
            self.verdict.fail(problem)
        if status in ("running", "interrupted") or reason == "unexpected_error":
            self.verdict.needs_person(self.undecided_note())
            return
        supported = stops[-1] if count and stops[-1] else boundary_stop(record, count)
        self.compare_stop(supported, count)

    def compare_stop(self, supported, count):
        record = self.record
        status, reason, budget = record["status"], record["reason"], record["budget"]
        if supported is None:
            self.verdict.fail(
                f"记录的停止 {status}/{reason} 没有证据支持：{count} 次尝试之后，子运行既没有通过也没有重复失败，"
                f"尝试预算（max_attempts={budget['max_attempts']}）没有用完，"
                f"elapsed_seconds（{record['elapsed_seconds']}）也没有达到 max_seconds，循环本应继续。")
        elif supported != (status, reason):
            self.verdict.fail(f"子运行与预算支持的结果是 {'/'.join(supported)}，记录却是 {status}/{reason}："
                              "状态或原因与证据不符。")
        elif reason == "time_budget" and budget["max_seconds"] > 0:
            self.verdict.needs_person(
                f"时间预算（{budget['max_seconds']} 秒）在第 {count + 1} 轮开始前耗尽：这取决于当时的机器，"
                f"不能按固定情景的预期判断。请核对 elapsed_seconds（{record['elapsed_seconds']}）与已完成的子运行"
                f"（{self.child_list()}），再决定是否用更大的 --max-seconds 和新名称重新运行。")
        elif (status, reason, count) != expected_outcome(record["scenario"], budget):
            expected = expected_outcome(record["scenario"], budget)
            self.verdict.fail(
                f"情景 {record['scenario']} 在预算 max_attempts={budget['max_attempts']}、max_seconds="
                f"{budget['max_seconds']} 下应为 {expected[0]}/{expected[1]}、{expected[2]} 次尝试，"
                f"记录却是 {status}/{reason}、{count} 次：情景、预算或结果被改动过，"
                "或者 samples/ 已不是课程提供的版本（预期表只适用于原样的三个样例）。")

    def undecided_note(self):
        record = self.record
        if record["status"] == "running":
            why = "记录仍是 running：循环可能被强制结束，或保存记录失败"
        elif record["reason"] == "terminated":
            why = "循环被终止信号（SIGTERM 或 SIGHUP）结束"
        elif record["status"] == "interrupted":
            why = "循环被 Ctrl-C 中断"
        else:
            why = f"循环因意外情况停止（{gloss(record['error_type'])}）"
        guide = "对照 loop.json 的 handoff " if record["handoff"] is not None else ""
        if not record["attempts"]:
            return (f"{why}，不能按固定情景的预期判断。循环还没有开始任何尝试，没有子运行：请{guide}核对"
                    f" {self.show(f'loop-runs/{self.name}/loop.json')} 记下的停止位置，然后用新名称重新运行。")
        return (f"{why}，不能按固定情景的预期判断。请{guide}核对 {self.child_list()} 里实际发生的动作和产物，"
                "不能认定动作没做，也不要清空重跑。")

    def child_list(self):
        """The recorded child runs as paths; one that does not exist is said to be absent."""
        runs = self.workspace.runs()
        shown_runs = [self.show(entry["child_run"]) + "/" + ("" if Path(entry["child_run"]).name in runs
                                                              else "（不存在，可能还没创建）")
                      for entry in self.record["attempts"]]
        return "、".join(shown_runs) or f"{self.show('runs')}/（没有子运行）"


# What each error_type a loop records means, for the person reading a verdict (the loop's own list
# is not imported: this copy only explains, it decides nothing).
ERROR_MEANING = {
    "ContextChanged": "上下文文件被改动", "EvidenceMismatch": "证据不一致", "FileExistsError": "子运行目录已被占用",
    "NameTaken": "子运行目录已被占用", "ChildNeedsHuman": "子运行需要人工查看", "ValidationError": "导出规则拒绝了候选",
    "VerificationError": "产物没有通过独立检查", "PermissionError": "没有读写权限", "FileNotFoundError": "找不到文件",
    "OSError": "文件读写出错",
}


def gloss(error_type):
    return f"{ERROR_MEANING.get(error_type, '意外异常')}，error_type {error_type}"


def order_problems(events):
    """EVENTS (label, text, seconds) must happen in the listed order, each within the tolerance."""
    problems, latest = [], None
    for label, text, seconds in events:
        if seconds is None:
            continue
        if latest is not None and seconds < latest[2] - TOLERANCE:
            problems.append(f"{label}（{text}）早于 {latest[0]}（{latest[1]}）：这个先后顺序不可能发生，时间被改动过。")
        if latest is None or seconds > latest[2]:
            latest = (label, text, seconds)
    return problems


def child_stops(outcomes):
    """For each attempt, the stop its child calls for by the lesson's rules; None to go on (or no child)."""
    seen, stops = set(), []
    for key, status in outcomes:
        if status is None:  # no child record to judge by: already reported
            stops.append(None)
        elif status == "needs_review":
            stops.append(("needs_review", "mechanical_pass"))
        elif status == "failed" and key in seen:
            stops.append(("stalled", "repeated_failure"))
        elif status == "failed":
            stops.append(None)
        else:
            stops.append(("needs_human", "unexpected_error"))
        seen.add(key)
    return stops


def boundary_stop(record, count):
    """The stop the next round's checks make, in the loop's order, when the last child asked to go on."""
    budget = record["budget"]
    if count == budget["max_attempts"]:
        return "budget_exhausted", "attempt_budget"
    if record["reason"] == "time_budget" and record["elapsed_seconds"] >= budget["max_seconds"]:
        return "budget_exhausted", "time_budget"
    if record["blocked_proposal"] is not None:
        return "needs_human", "permission_boundary"
    return None


def blocked_problem(record):
    """A blocked proposal must be the one the scenario's script makes, with a reason."""
    blocked = record["blocked_proposal"]
    if blocked is None:
        return None
    proposed, expected = (blocked["action"], blocked["target"]), BLOCKED.get(record["scenario"])
    if proposed == expected and blocked["reason"].strip():
        return None
    return (f"blocked_proposal 记录的是 {shown(list(proposed))}，情景 {record['scenario']} 的脚本提议的却是 "
            f"{shown(expected and list(expected))}（reason 也不能为空）：被拦下的提议被改动过。")
