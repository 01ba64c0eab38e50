"""The stop, the decisions and the timeouts of one loop record, re-derived from its children and its budgets.

Part of verify_loop (the command line): `Outcome` holds the checks verifier/check.py's LoopCheck makes once each
attempt has been compared with its child (it is mixed into LoopCheck, whose verdict, record, rounds and paths it
uses): the stop the children and the budgets support, by the lesson's order and the scenario table; each attempt's
decision by the rules of docs/loop/TASK.md「每一轮的顺序」; an attempt ended at its time limit. A time budget spent
mid-loop is judged on the record's monotonic readings (verifier/clocks.py). verifier/explain.py renders what these
derived. It does not import loop_lab.py, harness.py, export_review.py or machinery/; what it shares is cli.py's
glosses of error types and verifier/records.py's copy of the rules (the scenario table, the stops).
"""
from cli import gloss
from verifier.clocks import pauses
from verifier.records import (BLOCKED, CONTINUE, DECISION_STOPS, ROUNDING, SCHEMA, UNDECIDED, UNKNOWN_GOES_ON,
                              decision_pair, expected_outcome, is_number, one_line, shown)
from verifier.resumed import unknown_count


class Outcome:
    """The checks of a LoopCheck (verifier/check.py) that re-derive what its record concludes from its children."""

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
        problem = None if self.schema.calls_model else blocked_problem(record)  # a model's: verifier/proposals.py
        if problem:
            self.verdict.fail(problem)
        proposed = self.proposal_stop()
        if (status in ("running", "interrupted") or reason in ("unexpected_error", "attempt_timeout")) \
                and proposed != (status, reason, record["error_type"]):
            self.verdict.needs_person(self.undecided_note())
            return
        supported = stops[-1] if count and stops[-1] else proposed[:2] if proposed else boundary_stop(record, count)
        # a stop the children contradict is read first; when a child could not be read, the child comes first
        self.compare_stop(supported, count, first=all(status is not None for _, status in outcomes))

    def compare_stop(self, supported, count, first):
        record = self.record
        status, reason, budget = record["status"], record["reason"], record["budget"]
        if supported is None:
            self.verdict.fail(
                f"记录的停止 {status}/{one_line(reason)} 没有证据支持：{count} 次尝试之后，子运行既没有通过也没有重复失败，"
                f"尝试预算（max_attempts={budget['max_attempts']}）没有用完，"
                f"elapsed_seconds（{record['elapsed_seconds']}）也没有达到 max_seconds，循环本应继续。", first=first)
        elif supported != (status, reason):
            self.verdict.fail(f"子运行与预算支持的结果是 {'/'.join(supported)}，记录却是 {status}/{one_line(reason)}："
                              "状态或原因与证据不符。", first=first)
        elif reason == "time_budget" and budget["max_seconds"] > 0:
            # spent mid-loop: judged on the record's monotonic readings (check_times), not by the table; time the loop
            # spent where only its own steps run is for a person
            for text in pauses(record, self.durations, record["scenario"]):
                self.verdict.needs_person(text)
        elif unknown_count(record):
            return  # an attempt whose outcome a resume found unknown: judged by derivation (above), not by the table
        elif not self.schema.calls_model and (status, reason, count) != expected_outcome(record["scenario"], budget):
            expected = expected_outcome(record["scenario"], budget)
            self.verdict.fail(
                f"情景 {record['scenario']} 在预算 max_attempts={budget['max_attempts']}、max_seconds="
                f"{budget['max_seconds']} 下应为 {expected[0]}/{expected[1]}、{expected[2]} 次尝试，"
                f"记录却是 {status}/{one_line(reason)}、{count} 次：情景、预算或结果被改动过，"
                "或者 samples/ 已不是课程提供的版本（预期表只适用于原样的三个样例）。")

    def proposal_stop(self):
        """A model loop's stop its last proposal supports when no attempt carries it (status, reason, error_type), or
        None (verifier/proposals.py); a model loop's own stop: there is no script and no table to judge it by."""
        if not self.schema.calls_model or not self.proposals or self.record["proposal_not_run"] is None:
            return None
        from verifier.proposals import proposal_stop
        return proposal_stop(self.proposals[-1])

    def undecided_note(self):
        record = self.record
        if record["status"] == "running":
            why = "记录仍是 running：循环可能被强制结束，或保存记录失败"
        elif record["reason"] == "terminated":
            why = "循环被终止信号（SIGTERM 或 SIGHUP）结束"
        elif record["status"] == "interrupted":
            why = "循环被 Ctrl-C 中断"
        elif record["reason"] == "attempt_timeout":
            why = (f"第 {len(record['attempts'])} 次尝试超过单次时限 {record['budget']['attempt_timeout']} 秒被终止，"
                   "子运行的结果不知道")
        else:
            why = f"循环因意外情况停止（{gloss(record['error_type'])}，error_type {one_line(record['error_type'])}）"
        guide = "对照 loop.json 的 handoff " if record["handoff"] is not None else ""
        resume = (f"；要接着做，用 loop_lab.py --resume {self.name}（它先做这些核对）或新名称" if record["schema"] == SCHEMA
                  and record["status"] in ("running", "interrupted") else "")
        if not record["attempts"]:
            return (f"{why}，不能按固定情景的预期判断。循环还没有开始任何尝试，没有子运行：请{guide}核对"
                    f" {self.show(f'loop-runs/{self.name}/loop.json')} 记下的停止位置，然后"
                    + (f"用 loop_lab.py --resume {self.name} 续跑或用新名称重新运行。" if resume else "用新名称重新运行。"))
        return (f"{why}，不能按固定情景的预期判断。请{guide}核对 {self.child_list()} 里实际发生的动作和产物，"
                f"不能认定动作没做，也不要清空重跑{resume}。")

    def check_decisions(self, outcomes):
        """Each recorded decision must be one the attempt's evidence supports, by the rules of「每一轮的顺序」."""
        attempts = self.record["attempts"]
        for number, ((_key, child_status), stop) in enumerate(zip(outcomes, child_stops(outcomes)), 1):
            entry, last = attempts[number - 1], number == len(attempts)
            round_ = self.keep_round(number, derived=derived_decision(entry, child_status, stop))
            allowed = self.allowed_decisions(round_, last)
            recorded = decision_pair(entry["decision"])
            if allowed is not None and recorded not in allowed:
                self.verdict.fail(f"第 {number} 次尝试记录的决定是 {said(recorded)}，而它的证据支持的是"
                                  f" {said(round_.derived)}：决定与证据不符。")
            elif last and recorded and recorded[0] == "stop":
                self.check_last_stop(number, recorded)
        self.judged = True

    def allowed_decisions(self, round_, last):
        """The decisions an honest loop can record for this attempt; None when the evidence cannot say."""
        record, entry = self.record, round_.entry
        if entry.get("resume") and entry["state"] == "unknown":
            return {UNKNOWN_GOES_ON}  # a resume found its outcome unknown: it counts, and the loop goes on
        if entry["state"] in ("running", "unknown"):
            return {None}  # cut off before it was decided
        if round_.derived is None:
            return None  # no child record to judge by: reported where the child is compared
        allowed = {round_.derived}
        # the loop hands to a person what its check did not pass, and what it found outside the child
        if (round_.verdict or {}).get("result", "pass") != "pass" or (last and record["reason"] == "unexpected_error"):
            allowed.add(("stop", "unexpected_error"))
        if last and record["status"] in UNDECIDED:
            allowed.add(None)
        return allowed

    def check_last_stop(self, number, recorded):
        """A stop decided after the last attempt is the loop's stop, unless a signal or a lost write came first."""
        status, reason = self.record["status"], self.record["reason"]
        if status not in ("running", "interrupted") and DECISION_STOPS[recorded[1]] != (status, reason):
            self.verdict.fail(f"第 {number} 次尝试之后记录的决定是停止（{recorded[1]}），循环记录的停止却是 "
                              f"{status}/{one_line(reason)}：状态或原因与证据不符。")

    def check_timeouts(self):
        """attempt_timeout: the last attempt timed out, its child did not finish, and it waited the whole limit."""
        record = self.record
        timed_out = [round_ for round_ in self.rounds if round_.entry["state"] == "timed_out"]
        # a signal landing after the timeout was written down leaves the record interrupted, honestly
        stopped_by_it = record["reason"] == "attempt_timeout" or record["status"] == "interrupted"
        if (record["reason"] == "attempt_timeout" and not timed_out) or (timed_out and not stopped_by_it):
            self.verdict.fail(f"停止原因是 {one_line(record['reason'])}，记为 timed_out 的尝试有 {len(timed_out)} 次："
                              "以 attempt_timeout 停止的循环，最后一次尝试就是超时的那一次，别的停止没有超时的尝试。")
        for round_ in timed_out:
            self.check_timed_out(round_)

    def check_timed_out(self, round_):
        number, entry, child = round_.number, round_.entry, round_.child
        limit, where = entry["timeout"]["seconds"], self.show(entry["child_run"])
        if child and child["status"] in ("needs_review", "failed", "needs_human"):
            self.verdict.fail(f"第 {number} 次尝试记为 timed_out，而子运行 {where} 的 run.json 是已结束的记录"
                              f"（status {child['status']}）：子运行做完了，这次尝试不算超时，记录被改动过。")
        waits = [("timeout.waited_seconds", entry["timeout"]["waited_seconds"])]
        if is_number(entry.get("started_offset")) and is_number(entry.get("finished_offset")):
            waits.append(("finished_offset − started_offset", entry["finished_offset"] - entry["started_offset"]))
        for label, seconds in waits:
            if seconds < limit - ROUNDING:
                self.verdict.fail(f"第 {number} 次尝试记为超过单次时限 {limit} 秒，{label} 却只有 {seconds:.3f} 秒："
                                  "没到时限的尝试不会被终止，记录被改动过。")


def child_stops(outcomes):
    """For each attempt, the stop its child calls for by the lesson's rules; None to go on (or no child)."""
    seen, stops = set(), []
    for key, status in outcomes:
        if status in (None, "unknown"):  # no child record to judge by (already reported), or an outcome unknown
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


def derived_decision(entry, child_status, stop):
    """(next, reason) the evidence of one attempt calls for; None when no decision is due or none can be judged."""
    if entry["state"] == "timed_out":
        return "stop", "attempt_timeout"
    if entry.get("resume") and entry["state"] == "unknown":
        return UNKNOWN_GOES_ON
    if entry["state"] != "done" or child_status is None:
        return None
    return ("stop", stop[1]) if stop else CONTINUE


def said(pair):
    """A decision as a person reads it."""
    if pair is None:
        return "没有决定（null）"
    return f"继续（continue/{pair[1]}）" if pair[0] == "continue" else f"停止（stop/{pair[1]}）"


def boundary_stop(record, count):
    """The stop the next round's checks make, in the loop's order, when the last child asked to go on."""
    budget = record["budget"]
    if count == budget["max_attempts"]:
        return "budget_exhausted", "attempt_budget"
    if record["reason"] == "time_budget" and record["elapsed_seconds"] >= budget["max_seconds"]:  # the loop's `>=`
        return "budget_exhausted", "time_budget"
    if record["blocked_proposal"] is not None:
        return "needs_human", "permission_boundary"
    if record["reason"] == "api_call_budget" and record["actual_api_calls"] >= budget.get("max_api_calls", 0):
        return "budget_exhausted", "api_call_budget"  # a model loop's: no call left for the next proposal
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
