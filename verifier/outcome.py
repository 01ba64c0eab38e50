"""The stop, the decisions and the timeouts of one loop record, re-derived from its children and its budgets.

Part of verify_loop (the command line): `Outcome` holds the checks verifier/check.py's LoopCheck makes once each
attempt has been compared with its child (it is mixed into LoopCheck, whose verdict, record, rounds and paths it
uses): the stop the children and the budgets support, by the lesson's order and the scenario table; each attempt's
decision by the rules of docs/loop/TASK.md「每一轮的顺序」; an attempt ended at its time limit. A time budget spent
mid-loop is judged on the record's monotonic readings (verifier/clocks.py). verifier/explain.py renders what these
derived. It does not import loop_lab.py, harness.py, export_review.py or machinery/; what it shares is
verifier/records.py's copy of the rules (the scenario table, the stops); its findings' words are verifier/findings.py's.
"""
from verifier.clocks import pauses
from verifier.findings import Finding
from verifier.records import (BLOCKED, CONTINUE, DECISION_STOPS, ROUNDING, SCHEMA, UNDECIDED, UNKNOWN_GOES_ON,
                              decision_pair, expected_outcome, is_number)
from verifier.resumed import unknown_count


class Outcome:
    """The checks of a LoopCheck (verifier/check.py) that re-derive what its record concludes from its children."""

    def check_outcome(self, outcomes):
        """Re-derives the stop from the children with this file's own rules, then the table."""
        record = self.record
        status, reason, budget = record["status"], record["reason"], record["budget"]
        count = len(outcomes)
        if count > budget["max_attempts"]:
            self.verdict.add("too_many_attempts", count=count, most=budget["max_attempts"])
        stops = child_stops(outcomes)
        for number, stop in enumerate(stops, 1):
            if stop and number < count:
                self.verdict.add("went_on", number=number, stop="/".join(stop), next=number + 1)
        problem = None if self.schema.calls_model else blocked_problem(record)  # a model's: verifier/proposals.py
        if problem:
            self.verdict.keep(problem)
        proposed = self.proposal_stop()
        if (status in ("running", "interrupted") or reason in ("unexpected_error", "attempt_timeout")) \
                and proposed != (status, reason, record["error_type"]):
            self.verdict.keep(self.undecided_note())
            return
        supported = stops[-1] if count and stops[-1] else proposed[:2] if proposed else boundary_stop(record, count)
        # a stop the children contradict is read first; when a child could not be read, the child comes first
        self.compare_stop(supported, count, first=all(status is not None for _, status in outcomes))

    def compare_stop(self, supported, count, first):
        record = self.record
        status, reason, budget = record["status"], record["reason"], record["budget"]
        if supported is None:
            self.verdict.keep(Finding("stop_unsupported", status=status, reason=reason, count=count,
                                      most=budget["max_attempts"], elapsed=record["elapsed_seconds"]), first=first)
        elif supported != (status, reason):
            self.verdict.keep(Finding("stop_contradicted", supported="/".join(supported), status=status, reason=reason),
                              first=first)
        elif reason == "time_budget" and budget["max_seconds"] > 0:
            # spent mid-loop: judged on the record's monotonic readings (check_times), not by the table; time the loop
            # spent where only its own steps run is for a person
            for finding in pauses(record, self.durations, record["scenario"]):
                self.verdict.keep(finding)
        elif unknown_count(record):
            return  # an attempt whose outcome a resume found unknown: judged by derivation (above), not by the table
        elif not self.schema.calls_model and (status, reason, count) != expected_outcome(record["scenario"], budget):
            expected = expected_outcome(record["scenario"], budget)
            self.verdict.add("expected_mismatch", scenario=record["scenario"], most=budget["max_attempts"],
                             seconds=budget["max_seconds"], expected="/".join(expected[:2]), expected_count=expected[2],
                             status=status, reason=reason, count=count)

    def proposal_stop(self):
        """A model loop's stop its last proposal supports when no attempt carries it (status, reason, error_type), or
        None (verifier/proposals.py); a model loop's own stop: there is no script and no table to judge it by."""
        if not self.schema.calls_model or not self.proposals or self.record["proposal_not_run"] is None:
            return None
        from verifier.proposals import proposal_stop
        return proposal_stop(self.proposals[-1])

    def undecided_note(self):
        """The finding of a stop no table can judge: why it is undecided, and what to look at."""
        record = self.record
        if record["status"] == "running":
            why = Finding("why_running")
        elif record["reason"] == "terminated":
            why = Finding("why_terminated")
        elif record["status"] == "interrupted":
            why = Finding("why_interrupted")
        elif record["reason"] == "attempt_timeout":
            why = Finding("why_timeout", number=len(record["attempts"]), limit=record["budget"]["attempt_timeout"])
        else:
            why = Finding("why_error", error_type=record["error_type"])
        guide = Finding("handoff_guide") if record["handoff"] is not None else ""
        resume = (Finding("resume_hint", name=self.name) if record["schema"] == SCHEMA
                  and record["status"] in ("running", "interrupted") else "")
        if not record["attempts"]:
            return Finding("undecided_no_attempt", why=why, guide=guide, resume=resume,
                           record=self.show(f"loop-runs/{self.name}/loop.json"))
        return Finding("undecided", why=why, guide=guide, children=self.child_list(), resume=resume)

    def check_decisions(self, outcomes):
        """Each recorded decision must be one the attempt's evidence supports, by the rules of「每一轮的顺序」."""
        attempts = self.record["attempts"]
        for number, ((_key, child_status), stop) in enumerate(zip(outcomes, child_stops(outcomes)), 1):
            entry, last = attempts[number - 1], number == len(attempts)
            round_ = self.keep_round(number, derived=derived_decision(entry, child_status, stop))
            allowed = self.allowed_decisions(round_, last)
            recorded = decision_pair(entry["decision"])
            if allowed is not None and recorded not in allowed:
                self.verdict.add("decision_contradicted", number=number, recorded=said(recorded),
                                 derived=said(round_.derived))
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
            self.verdict.add("last_stop_contradicted", number=number, decided=recorded[1], status=status, reason=reason)

    def check_timeouts(self):
        """attempt_timeout: the last attempt timed out, its child did not finish, and it waited the whole limit."""
        record = self.record
        timed_out = [round_ for round_ in self.rounds if round_.entry["state"] == "timed_out"]
        # a signal landing after the timeout was written down leaves the record interrupted, honestly
        stopped_by_it = record["reason"] == "attempt_timeout" or record["status"] == "interrupted"
        if (record["reason"] == "attempt_timeout" and not timed_out) or (timed_out and not stopped_by_it):
            self.verdict.add("timeout_count_wrong", reason=record["reason"], count=len(timed_out))
        for round_ in timed_out:
            self.check_timed_out(round_)

    def check_timed_out(self, round_):
        number, entry, child = round_.number, round_.entry, round_.child
        limit, where = entry["timeout"]["seconds"], self.show(entry["child_run"])
        if child and child["status"] in ("needs_review", "failed", "needs_human"):
            self.verdict.add("timed_out_finished", number=number, child=where, status=child["status"])
        waits = [("timeout.waited_seconds", entry["timeout"]["waited_seconds"])]
        if is_number(entry.get("started_offset")) and is_number(entry.get("finished_offset")):
            waits.append(("finished_offset − started_offset", entry["finished_offset"] - entry["started_offset"]))
        for label, seconds in waits:
            if seconds < limit - ROUNDING:
                self.verdict.add("timeout_short", number=number, limit=limit, label=label, seconds=seconds)


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
    """A decision as a person reads it (a finding of kind `decision_*`)."""
    if pair is None:
        return Finding("decision_none")
    if pair[0] == "continue":
        return Finding("decision_continue" if pair == CONTINUE else "decision_unknown")
    return Finding("decision_stop", reason=pair[1])


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
    return Finding("blocked_wrong", proposed=list(proposed), scenario=record["scenario"],
                   expected=expected and list(expected))
