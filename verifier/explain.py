"""The verifier's own account of one loop, round by round: `verify_loop.py loop-runs/NAME --explain`.

Renders what check.LoopCheck derived and reads no file itself. For each round: the budget check
(attempt n of m, seconds used of the budget), the proposal, the scope check, the child run, the
independent verdict and the decision with its reason, with the round's monotonic readings; then the
stop. A resumed loop's segments are said where each began (how the one before ended, the gap, the budget used),
and the judgement of the attempt in flight inside its round, before its decision. Wherever the loop's record
claims something else, a line starting with "≠" puts its claim beside
the verifier's: that line is a finding (a `Differs`, its kind of severity `differs` in verifier/findings.py), so
whatever lays out the same rounds (`views()`) marks it by its kind. Plain Chinese for stderr;
every line is cut to under 100 characters and escaped (a student chose the folder names and could have edited any
recorded text).
Part of verify_loop: it imports nothing of loop_lab.py, harness.py, export_review.py or machinery/; it uses
cli.display_path, records.py's copy of the rules and outcome.py's re-derivation of the stop.
"""
import re
from unicodedata import east_asian_width

from cli import display_path
from verifier.findings import Finding
from verifier.outcome import boundary_stop, said
from verifier.records import (CONTINUE, DECISION_STOPS, MESSAGE_CHARS, ROUNDING, SCRIPT, decision_pair,
                              expected_outcome, is_number, one_line, scripted)
from verifier.resumed import FINISHED, Segments, unknown_count

WIDTH = 99  # columns per line at most (under 100 characters too): a terminal 100 wide shows each on one line
# The verifier's own reason for each decision the evidence of an attempt can call for.
DECISION_WHY = {
    CONTINUE: "继续：已确认的教学失败，第一次出现，带着反馈进入下一轮",
    "mechanical_pass": "停止 needs_review/mechanical_pass：机械检查通过，内容待人工审核",
    "repeated_failure": "停止 stalled/repeated_failure：同一候选（样例名与哈希）、同一错误在第 {earlier} 次出现过，没有进展",
    "outcome_unknown": "继续：续跑时这次尝试的结果不知道，计一次，没有反馈，下一次用新的子运行",
    "unexpected_error": "停止 needs_human/unexpected_error：子运行没有正常结束或证据对不上，交给人",
    "attempt_timeout": "停止 needs_human/attempt_timeout：超过单次时限被终止，子运行的结果不知道，交给人",
}
# Stops no table can judge: what happened is for a person to find out.
UNJUDGED = {"running": "记录仍是 running：循环可能被强制结束，或最后的记录没能写下",
            "interrupted": "循环被中断", "unexpected_error": "循环因意外情况停止",
            "attempt_timeout": "{child} 超过单次时限被终止，结果不知道"}


class Differs(str):
    """A "≠" line: its text, and FINDING, the record's claim the evidence does not support (kind and fields)."""

    def __new__(cls, finding, indent="  "):
        line = super().__new__(cls, f"{indent}≠ {finding.sentence()}")
        line.finding = finding
        return line


def account(check):
    """The account of CHECK (a LoopCheck after its checks ran), as text for stderr."""
    lines = [f"核对过程：{display_path(check.loop_dir)}（验证器按证据自己推导；“≠”后是循环记录里不同的说法）"]
    try:
        lines += rounds(check) if check.judged else ["  记录读不出、形状不对或核对没能做完，无法逐轮说明；问题见下。"]
    except Exception as exc:  # a record shaped in a way nobody foresaw: the verdict below still says what is wrong
        lines.append(f"  记录里有无法逐轮说明的内容（{type(exc).__name__}）；问题见下。")
    return "\n".join(part for line in lines for part in cut(one_line(line, MESSAGE_CHARS)))  # wrapped, then bounded


# How a segment that a resume followed ended, and what a resume found of the attempt in flight.
ENDED = {"keyboard_interrupt": "被 Ctrl-C 中断", "terminated": "被终止信号结束", "killed": "进程被强行结束（记录仍是 running）"}
FOUND_SAID = {"no_child": "{child} 不存在：unknown，计一次尝试，没有反馈，这个子运行以后也不会再建",
              "partial_child": "{child} 没做完（{status}）：unknown，计一次尝试，没有反馈，留作证据",
              "complete_child": "{child} 已做完（{status}）：采用它的结果，按平常的规则决定",
              "finished_undecided": "这次尝试已做完、还没有决定：按平常的规则决定"}


def views(check):
    """(the header lines, [(a Round, its lines)], the ending lines) of a judged CHECK: the account, round by round;
    a line is text, or a Differs. A resumed loop's segments begin where their resume found them: before a round,
    inside the round whose attempt was in flight (before its decision), or before the ending."""
    record, plan, said_segments = check.record, Segments(check.record), set()

    def began(count, upto=len(plan.list)):
        """The lines of the segments (up to UPTO) whose resume found COUNT attempts recorded, each said once."""
        ks = [k for k in range(1, min(upto + 1, len(plan.list))) if plan.after[k] == count and k not in said_segments]
        said_segments.update(ks)
        return [line for k in ks for line in segment_lines(record, k)]
    each = [(round_, began(round_.number - 1) + round_lines(check, round_, began)) for round_ in check.rounds]
    return header(record), each, began(len(check.rounds)) + ending(check)


def segment_lines(record, k):
    """Where segment K (from 0) began: how the one before ended, its monotonic time, the gap, the budget used."""
    before, segment = record["segments"][k - 1], record["segments"][k]
    bound = "（至少：到它最后记下的读数为止）" if before["lower_bound"] else ""
    return [f"第 {k + 1} 段：续跑（这时已有 {segment['after_attempt']} 次尝试）；上一段{ENDED[before['ended']]}，单调时钟"
            f"走了 {before['elapsed_seconds']:.3f} 秒{bound}",
            f"  两段之间日历时间隔了 {segment['gap_seconds']:.3f} 秒，不计入预算；预算接着用：已用 "
            f"{segment['started_offset']:.3f} 秒"]


def judgement_lines(check, round_):
    """What the resume found of this attempt in flight, and what the child shows, when they differ."""
    judged, child = round_.entry["resume"], round_.child
    where = check.show(round_.entry["child_run"])
    status = f"run.json 为 {one_line(judged['run_status'])}" if judged["run_status"] else "没有可读的 run.json"
    lines = ["  续跑时的判断：" + FOUND_SAID[judged["found"]].format(child=where, status=status)]
    if judged["found"] != "finished_undecided":
        shows = "no_child" if child is None else "complete_child" if child["status"] in FINISHED else "partial_child"
        if shows != judged["found"]:
            lines.append(Differs(Finding("differs_judgement", shows=shows, found=judged["found"])))
    return lines


def rounds(check):
    top, each, end = views(check)
    return [*top, *(line for _, lines in each for line in lines), *end]


def header(record):
    budget = record["budget"]
    limit = budget.get("attempt_timeout")
    timeout = f"单次时限 {limit} 秒（到时终止）" if limit is not None else "没有单次时限"
    calls = (f"；API 调用最多 {budget['max_api_calls']} 次（HTTP 请求，含重试，每次请求之前检查）"
             if "max_api_calls" in budget else "")
    return [f"情景 {record['scenario']}；预算：最多 {budget['max_attempts']} 次尝试，{budget['max_seconds']} 秒"
            f"（每轮开始前检查）；{timeout}{calls}"]


def readings(entry):
    """The round's monotonic readings, seconds since the loop's first record."""
    start, end = entry.get("started_offset"), entry.get("finished_offset")
    if not is_number(start):
        return "：没有单调时钟读数"
    return f"：单调时钟读数 {start:.3f}–{end:.3f} 秒" if is_number(end) else f"：单调时钟读数 {start:.3f} 秒起，没有结束读数"


def round_lines(check, round_, began):
    record, entry, number = check.record, round_.entry, round_.number
    judged_in = Segments(record).judged_in(number)
    budget, start = record["budget"], entry.get("started_offset")
    used = f"已用 {start:.3f} 秒" if is_number(start) else "没有读数"
    late = number > budget["max_attempts"] or (is_number(start) and start >= budget["max_seconds"])  # the loop's `>=`
    return [f"第 {number} 轮{readings(entry)}",
            f"  预算检查：第 {number} 次尝试，上限 {budget['max_attempts']} 次；{used}，"
            f"预算 {budget['max_seconds']} 秒{calls_used(check, number)}：" + ("预算已用完，不该开始" if late else "可以开始"),
            *([Differs(Finding("differs_started_late"))] if late else []),
            *(proposal_lines(record, number, entry["candidate"]) if not check.proposals else
              model_lines(check, number, entry["candidate"])),
            "  范围检查：export 三个已知样例之一，在允许范围内，执行",
            *child_lines(check, round_),
            *([*began(number, judged_in), *judgement_lines(check, round_)] if judged_in is not None else []),
            *decision_lines(check, round_)]


def proposal_lines(record, number, candidate):
    """The candidate, and whether the script proposes it given the feedback recorded before it."""
    sample, script = candidate["sample"], SCRIPT[record["scenario"]]
    choice = scripted(record["scenario"], [entry["feedback"] for entry in record["attempts"][:number - 1]])
    lines = [f"  提出候选：export {sample}（{digest(candidate['sha256'], sample)}）"
             + (f"：情景脚本的第 {number} 个候选" if choice == sample else "")]
    if choice != sample:
        lines.append(Differs(Finding("differs_not_scripted", scenario=record["scenario"], number=number,
                                     script=list(script) or Finding("script_none"),
                                     choice=choice or Finding("script_none"))))
    if candidate["sha256"] != record["context"]["entries"][f"samples/{sample}.json"]:
        lines.append(Differs(Finding("differs_hash", file=f"samples/{sample}.json")))
    return lines


def calls_used(check, number):
    """A model loop's API calls before proposal NUMBER, as its proposal records give them."""
    if not check.proposals:
        return ""
    used = sum(proposal.result["requests"] for proposal in check.proposals[:number - 1] if proposal.result)
    return f"；API 调用已用 {used} 次，预算 {check.record['budget']['max_api_calls']} 次"


# How a model loop's last proposal, which no attempt carries, ended the loop (its record's stop).
NOT_RUN = {"permission_boundary": "  范围检查：只允许 export 三个已知样例之一：拦下，没有执行，也不算一次尝试",
           "api_call_budget": "  API 调用预算：下一次 HTTP 请求之前已用完，请求没有发出，提议中途停下",
           "NotAProposal": "  最后的回答不是一个提议（一个 JSON 对象：action、sample 或 target、claim）：不猜它的意思，交给人",
           "ModelFailed": "  开发模型的服务按重试规则试过仍然失败：没有候选可以判断，交给人"}


def model_lines(check, number, candidate=None):
    """A model loop's proposal NUMBER in the lesson's three levels: one attempt of the development iteration, the
    model turns of the tool loop inside it, the HTTP requests the client's retries add; and the claim, which decides
    nothing."""
    proposal = check.proposals[number - 1] if number <= len(check.proposals) else None
    if proposal is None or proposal.result is None:
        return [f"  提出候选：第 {number} 次提议的记录读不出，无法说明"]
    record, result = proposal.record, proposal.result
    tools = [call["name"] for turn in record["turns"] if turn["reply"] for call in turn["reply"]["tool_calls"]]
    tokens = record["tokens"]
    retries = result["requests"] - result["turns"]
    proposed = proposal.proposed
    cut = type(record.get("cut")) is dict
    said = (f"{one_line(proposed['action'])} {one_line(proposed.get('sample', proposed.get('target')))}" if proposed
            else "没有提议（API 调用预算用完，提议中途停下）" if cut else f"没有提议（问题以 {record['stop']} 停下）")
    lines = [f"  提出候选：开发模型的第 {number} 次提议（{check.show(f'loop-runs/{check.name}/proposals/{number:02d}')}/）："
             f"{said}"
             + (f"（{digest(candidate['sha256'], candidate['sample'])}）" if candidate else ""),
             f"    三个层次：开发迭代的第 {number} 轮；应用工具循环 {result['turns']} 次模型交互"
             + (f"（调用了 {'、'.join(tools)}）" if tools else "")
             + f"；算上请求重试共 {result['requests']} 次 HTTP 请求" + (f"（{retries} 次是重试）" if retries > 0 else "")
             + ("；tokens 未知（有回应没报 usage，未知不是零）" if tokens["estimated"] else f"；tokens {tokens['used']}")]
    if proposed:
        lines.append(f"    模型自己说：“{one_line(proposed['claim'], 60)}”：不作数，由范围检查和独立核对决定")
    return lines


def digest(sha256, sample):
    """A candidate's recorded hash in words: its first 12 digits, or why there is none."""
    if sha256 == "missing":
        return f"当时 samples/{one_line(sample)}.json 不存在，没有哈希"
    return f"sha256 {one_line(sha256)[:12]}…" if isinstance(sha256, str) else "没有记录哈希"


def stop(status, reason):
    """A recorded stop as the loop writes it (status/reason); a record that never stopped has no reason."""
    return Finding("stop_pair", status=status, reason=reason) if isinstance(reason, str) else \
        Finding("stop_none", status=status)


def child_lines(check, round_):
    entry, child, verdict = round_.entry, round_.child, round_.verdict
    where = check.show(entry["child_run"])
    done = entry["state"] == "done"
    if child is None:
        return [f"  子运行：{where} 不存在" + ("" if done or entry.get("resume") else "（尝试没有做完，可能还没创建）"),
                *(differs_outcome("differs_done_without_child", entry["status"], entry["feedback"]) if done else []),
                *timeout_lines(entry, None), *verdict_lines(entry, verdict)]
    lines = outcome(f"  子运行：{where}，run.json ", child["status"], child["feedback"])
    if child["sample"] != entry["candidate"]["sample"]:
        lines.append(Differs(Finding("differs_child_sample", sample=child["sample"])))
    if done and (entry["status"], entry["feedback"]) != (child["status"], child["feedback"]):
        lines += differs_outcome("differs_summary", entry["status"], entry["feedback"])
    return lines + timeout_lines(entry, child) + verdict_lines(entry, verdict)


def timeout_lines(entry, child):
    """What the executor did to a timed-out attempt; a child that finished its record was not cut off."""
    timeout = entry.get("timeout")
    if not timeout:
        return []
    lines = [f"  执行器：到单次时限 {timeout['seconds']} 秒时终止（等了 {timeout['waited_seconds']:.3f} 秒）；"
             f"记下的遗留：{left(timeout['inventory'])}"]
    if child and child["status"] in ("needs_review", "failed", "needs_human"):
        lines.append(Differs(Finding("differs_timed_out_finished")))
    if timeout["waited_seconds"] < timeout["seconds"] - ROUNDING:
        lines.append(Differs(Finding("differs_wait_short")))
    return lines


def left(inventory):
    """What the loop found the ended child had left (timeout.inventory), as recorded."""
    if inventory.get("exists") is False:
        return "子运行目录不存在（终止时还没建立）"
    files, status = inventory.get("files"), inventory.get("run_status")
    count = f"{len(files)} 个文件" if type(files) is list else "文件数没有记录"
    return f"子运行目录里 {count}，" + (f"run.json 为 {one_line(status)}" if status else "没有可读的 run.json")


def verdict_lines(entry, verdict):
    """The lesson-13 verifier's verdict on the child, as verifier/check.py obtained it."""
    if verdict is None:
        return [f"  独立核对：没有核对：这次尝试没有做完（state {entry['state']}）"]
    if verdict["result"] == "pass":
        return ["  独立核对：verify_harness 为 pass，记录与证据一致"]
    return [f"  独立核对：verify_harness 为 {verdict['result']}：" + "；".join(verdict["problems"])]


def outcome(head, status, feedback):
    """HEAD with a child's status, its feedback on a line of its own."""
    said_status, feedback_line = outcome_said(status, feedback)
    return [f"{head}{said_status}", *feedback_line]


def differs_outcome(kind, status, feedback):
    """The "≠" line KIND naming a child's status as the record claims it, its feedback on a line of its own."""
    said_status, feedback_line = outcome_said(status, feedback)
    return [Differs(Finding(kind, outcome=said_status)), *feedback_line]


def outcome_said(status, feedback):
    """(a child's status as a finding, [its feedback as a line]) for outcome()."""
    if status is None:
        return Finding("outcome_none"), []
    if not feedback:
        return Finding("outcome_passed" if status == "needs_review" else "outcome", status=status), []
    return Finding("outcome", status=status), [
        f"    反馈：{one_line(feedback['error_type'])}：{one_line(feedback['message'])}"]


def decision_lines(check, round_):
    """The decision the evidence calls for; the recorded one beside it when it differs."""
    derived, recorded = round_.derived, decision_pair(round_.entry["decision"])
    if derived is None:
        lines = ["  决定：这次尝试没有做完，没有可判断的决定"]
    else:
        earlier = next((r.number for r in check.rounds[:round_.number - 1]
                        if r.child and round_.child and r.child["key"] == round_.child["key"]), "?")
        lines = ["  决定：" + DECISION_WHY[derived if derived == CONTINUE else derived[1]].format(earlier=earlier)]
    if recorded == derived:
        return lines
    allowed = check.allowed_decisions(round_, round_.number == len(check.rounds)) or set()
    if recorded in allowed:  # the loop stopped for a reason outside the child, or before it decided
        error_type = one_line(check.record["error_type"]) if check.record["error_type"] else "没有记录 error_type"
        why = (f"停止 {recorded[1]}（{error_type}）：依据不在子运行里" if recorded
               else "没有（null）：记录停在决定之前")
        return lines + [f"  循环记录的决定：{why}，成立"]
    return lines + [Differs(Finding("differs_decision", recorded=said(recorded)))]


def ending(check):
    """The round that stopped the loop without an attempt (budget, scope), then the stop itself."""
    record, count = check.record, len(check.rounds)
    status, reason = record["status"], record["reason"]
    last = check.rounds[-1].derived if check.rounds else None
    went_on = last is not None and last[0] == "continue" and decision_pair(check.rounds[-1].entry["decision"]) == last
    lines = boundary_round(record, count) if not check.rounds or went_on else []
    proposed = check.proposal_stop()
    if proposed and record["proposal_not_run"] is not None:
        ended = NOT_RUN.get(proposed[2] or proposed[1])
        lines = [f"第 {count + 1} 轮", f"  预算检查：第 {count + 1} 次尝试，上限 {record['budget']['max_attempts']} 次"
                 f"{calls_used(check, count + 1)}：可以开始", *model_lines(check, count + 1), *([ended] if ended else [])]
    lines += levels_line(check)
    judged, supported = evidence_stop(check)
    if judged == "proposed":
        return lines + [f"停止：{stop(status, reason)}，由最后一次提议的记录推出，与循环的记录相同", *expectation(record, count)]
    if judged == "unjudged":
        child = check.show(record["attempts"][-1]["child_run"]) if count else ""
        why = (UNJUDGED.get(status) or UNJUDGED[reason]).format(child=child)
        return lines + [f"停止：{stop(status, reason)}（{why}）：不按情景预期判断，交给人"]
    if supported is None:
        return lines + ["停止：证据不支持停下，循环本应继续",
                        Differs(Finding("differs_stop_went_on", stop=stop(status, reason), count=count), indent="")]
    if supported != (status, reason):
        return lines + [f"停止：证据支持 {'/'.join(supported)}",
                        Differs(Finding("differs_stop", stop=stop(status, reason)), indent="")]
    return lines + [f"停止：{stop(status, reason)}，共 {count} 次尝试，与循环的记录相同", *expectation(record, count)]


def evidence_stop(check):
    """What the evidence says of CHECK's stop, as (how, stop): ("proposed", (status, reason)) a model loop's last
    proposal supports the recorded stop; ("unjudged", None) no table can judge it (running, interrupted, unexpected, a
    timeout); ("supports", (status, reason)) the stop the children and budgets support; ("supports", None) none: the
    loop should have gone on."""
    record, count = check.record, len(check.rounds)
    status, reason = record["status"], record["reason"]
    proposed = check.proposal_stop()
    if proposed and proposed == (status, reason, record["error_type"]):
        return "proposed", (status, reason)
    if status in UNJUDGED or (type(reason) is str and reason in UNJUDGED):  # a forged reason may be any JSON
        return "unjudged", None
    last = check.rounds[-1].derived if check.rounds else None
    return "supports", DECISION_STOPS[last[1]] if last and last[0] == "stop" else boundary_stop(record, count)


def boundary_round(record, count):
    """The next round's checks, when they (not an attempt's evidence) stopped the loop."""
    budget, number, reason = record["budget"], count + 1, record["reason"]
    if reason == "attempt_budget":
        return [f"第 {number} 轮", f"  预算检查：第 {number} 次尝试超过上限 {budget['max_attempts']} 次：不再提出候选"]
    if reason == "time_budget":
        return [f"第 {number} 轮：单调时钟读数 {record['elapsed_seconds']:.3f} 秒",
                f"  预算检查：第 {number} 次尝试，上限 {budget['max_attempts']} 次；已用 {record['elapsed_seconds']:.3f} 秒"
                f" ≥ 预算 {budget['max_seconds']} 秒：不再提出候选"]
    if reason == "permission_boundary":
        blocked = record["blocked_proposal"] if type(record["blocked_proposal"]) is dict else {}  # its shape: a finding
        return [f"第 {number} 轮", f"  预算检查：第 {number} 次尝试，上限 {budget['max_attempts']} 次，"
                f"预算 {budget['max_seconds']} 秒：可以开始",
                f"  提出候选：{one_line(blocked.get('action'))} {one_line(blocked.get('target'))}",
                "  范围检查：只允许 export 三个已知样例之一：拦下，没有执行，也不算一次尝试"]
    if reason == "api_call_budget":
        return [f"第 {number} 轮", f"  预算检查：第 {number} 次尝试，上限 {budget['max_attempts']} 次；API 调用已用 "
                f"{record['actual_api_calls']} 次，达到预算 {budget['max_api_calls']} 次：不再请开发模型提出候选"]
    if reason == "unexpected_error":
        error_type = one_line(record["error_type"]) if record["error_type"] else "（没有记录哪一种）"
        return [f"第 {number} 轮", f"  循环记下 error_type {error_type} 后停止，这一轮没有记录尝试"]
    return []


def levels_line(check):
    """A model loop's three counts, each of its own level, summed over its proposals."""
    levels = check.levels()
    if not levels:
        return []
    return [f"三个层次合计：开发迭代 {levels['attempts']} 次尝试；应用工具循环 {levels['model_turns']} 次模型交互；"
            f"算上请求重试 {levels['actual_api_calls']} 次 HTTP 请求（= actual_api_calls，"
            f"API 调用预算 {check.record['budget']['max_api_calls']} 次）"]


def expectation(record, count):
    """What the scenario's table says under these budgets, or why a time budget is judged on readings."""
    if "max_api_calls" in record["budget"]:
        return ["情景预期：model 没有固定的预期表：每一轮的候选和停止由提议的记录、子运行和预算推出（见上）"]
    if record["reason"] == "time_budget" and record["budget"]["max_seconds"] > 0:
        return ["情景预期：时间预算在中途用完，次数取决于每轮开始时的读数；按记录的单调时钟读数判断（见上）"]
    if unknown_count(record):
        return [f"情景预期：有 {unknown_count(record)} 次尝试续跑时结果不知道（计数、没有反馈），不套用情景表，"
                "按上面逐轮的推导判断"]
    expected = expected_outcome(record["scenario"], record["budget"])
    lines = [f"情景预期：{record['scenario']} 在这些预算下是 {expected[0]}/{expected[1]}、{expected[2]} 次尝试"]
    if expected != (record["status"], record["reason"], count):
        lines.append(Differs(Finding("differs_expected", status=record["status"], reason=record["reason"],
                                     count=count), indent=""))
    return lines


def cut(line):
    """LINE in pieces at most WIDTH columns wide (a Chinese character takes two), broken after a punctuation
    mark where one is near; a continuation is indented under its line. A path is never cut (a person copies
    it): a path longer than a line stays whole on a longer one."""
    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    pieces, rest = [], line
    while columns(rest) > WIDTH:
        at = break_at(rest, fitting(rest), len(indent))
        if at is None:
            break
        pieces.append(rest[:at].rstrip())
        rest = indent + rest[at:].lstrip()
    return pieces + [rest]


def break_at(text, room, start):
    """Where a piece of TEXT may end: after a mark in the later half of its first ROOM characters, else at the
    last place before ROOM (after START) outside a path, else the first one after; None when there is none."""
    paths = [found.span() for found in PATH.finditer(text)]

    def free(at):
        return not any(begin < at < end for begin, end in paths)
    marked = [at for at in (text.rfind(mark, room // 2, room) + 1 for mark in "，；：、 ") if at and free(at)]
    if marked:
        return max(marked)
    return next((at for at in [*range(room, start, -1), *range(room + 1, len(text))] if free(at)), None)


PATH = re.compile(r"[^\s，；：、。（）“”]*/[^\s，；：、。（）“”]*")  # a word with a "/" in it


def columns(text):
    return sum(2 if east_asian_width(char) in "WF" else 1 for char in text)


def fitting(text):
    """How many of TEXT's first characters fit in WIDTH columns."""
    used = 0
    for count, char in enumerate(text):
        used += columns(char)
        if used > WIDTH:
            return count
    return len(text)
