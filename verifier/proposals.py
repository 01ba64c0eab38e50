"""The model scenario's proposals (loop_lab.py --scenario model), each re-derived from its own question record.

Part of verify_loop. A model loop's attempts carry `model` entries, and its last proposal that no attempt carries is
`proposal_not_run`; each names its question record, loop-runs/NAME/proposals/NN/question.json (NN: the round). Every
record present must be recorded and every recorded one present; each is checked by project/verify_ask.py's rules
against the limits a proposal is always asked with (PROPOSAL_LIMITS, this file's own copy of docs/loop/TASK.md's) and,
with the server's own log (loop-runs/NAME/server-log.jsonl, or --server-log FILE), against what the server received.
From the records alone it re-derives: each attempt's model turns, HTTP requests, tokens (unknown usage is no count),
stop and claim; that each candidate is what the model's final reply proposed (this file's own copy of the proposal
rule), and that each question carried every earlier attempt's feedback verbatim; `actual_api_calls` as the sum of
the requests, never above `budget.max_api_calls`, and equal to it when the loop says the API-call budget stopped
it; the stop the last proposal supports when no attempt followed it (`proposal_stop`). The server's count of this
loop's requests proves the budget too. It imports nothing of what it checks: verify_ask is a verifier (as
verify_harness is), loaded from project/ only for a model loop: its words for a question's problems are its own.
Shared: cli.py's plumbing; this file's findings are kinds of verifier/findings.py's table.
"""
import hashlib
import os
import sys
from pathlib import Path

from cli import loads_strict
from verifier.findings import Finding
from verifier.records import MODEL_ENTRY_KEYS as ENTRY_KEYS
from verifier.records import SAMPLES, is_workspace_file

PROJECT = Path(__file__).resolve().parent.parent / "project"
PROPOSAL_LIMITS = {"max_turns": 4, "max_tool_failures": 3, "cycle_repeats": 3, "max_cycle_period": 5,
                   "token_budget": None, "deadline": 60.0, "timeout": 30.0, "max_retries": 2, "max_tokens": 512}
API_CALLS_RANGE = (1, 100)
MODEL_KEYS = ("source", "script", "url", "server_log")
FAILED_STOPS = ("api_error", "context_full")  # the notes assistant's stops for a failing model service


def proposal_of(text):
    """The proposal in a final reply TEXT ({"action", "sample" | "target", "claim"}), or None: one strict JSON object
    with exactly those keys, every value non-empty text, the claim at most 500 characters."""
    try:
        value = loads_strict(text)
    except ValueError:
        return None
    if type(value) is not dict:
        return None
    keys = {"action", "sample" if value.get("action") == "export" else "target", "claim"}
    if set(value) != keys or not all(type(value[key]) is str and value[key].strip() for key in keys):
        return None
    return value if len(value["claim"]) <= 500 else None


def entry_problem(entry, expected_path):
    """Why a recorded model ENTRY is not one the loop writes (a finding), or None."""
    if type(entry) is not dict or list(entry) != list(ENTRY_KEYS):
        return Finding("entry_not_object", keys=list(ENTRY_KEYS))
    if entry["proposal"] != expected_path:
        return Finding("entry_proposal", expected=expected_path)
    if any(type(entry[key]) is not int or entry[key] < 0 for key in ("turns", "requests")):
        return Finding("entry_counts")
    if entry["tokens"] is not None and (type(entry["tokens"]) is not int or entry["tokens"] < 0):
        return Finding("entry_tokens")
    if not (entry["claim"] is None or type(entry["claim"]) is str) or type(entry["stop"]) is not str:
        return Finding("entry_claim_stop")
    return None


class Proposal:
    """One proposal as derived: its NUMBER, the loop's ENTRY, its question RECORD, verify_ask's RESULT, what its final
    reply PROPOSED (None: no proposal)."""

    def __init__(self, number, entry):
        self.number, self.entry = number, entry
        self.record = self.result = self.proposed = None


class ProposalCheck:
    """The proposals of one model loop RECORD in LOOP_DIR; findings go to VERDICT (verifier/check.py's)."""

    def __init__(self, record, loop_dir, verdict, server_log=None):
        self.record, self.loop_dir, self.verdict = record, Path(loop_dir), verdict
        self.name = self.loop_dir.name
        self.server_log, self.proposals, self.log = server_log, [], None

    def rel(self, number):
        return f"loop-runs/{self.name}/proposals/{number:02d}/question.json"

    def run(self):
        """Every check above; the Proposal objects (for --explain), or None when the record's shape stopped it."""
        if not self.shape():
            return None
        attempts, last = self.record["attempts"], self.record["proposal_not_run"]
        entries = [attempt["model"] for attempt in attempts] + ([last] if last is not None else [])
        self.proposals = [Proposal(number, entry) for number, entry in enumerate(entries, 1)]
        self.check_folders()
        self.open_log()
        for proposal in self.proposals:
            self.check_proposal(proposal)
        self.check_totals()
        self.check_stop()
        return self.proposals

    # ---- the record's own entries ----

    def shape(self):
        record, fine = self.record, True
        budget, model = record.get("budget"), record.get("model")
        calls = budget.get("max_api_calls") if type(budget) is dict else None
        if type(calls) is not int or not API_CALLS_RANGE[0] <= calls <= API_CALLS_RANGE[1]:
            fine = self.fail("api_calls_budget_wrong", value=calls)
        if type(model) is not dict or list(model) != list(MODEL_KEYS) or not self.source_fits(model):
            fine = self.fail("model_wrong", value=model)
        if type(record.get("actual_api_calls")) is not int:
            fine = self.fail("api_calls_not_int")
        attempts = record.get("attempts") if type(record.get("attempts")) is list else []
        for number, attempt in enumerate(attempts, 1):
            problem = entry_problem(attempt.get("model") if type(attempt) is dict else None, self.rel(number))
            if problem:
                fine = self.fail("attempt_model_wrong", number=number, problem=problem)
        last = record.get("proposal_not_run", ...)
        if last is not None:
            problem = entry_problem(last, self.rel(len(attempts) + 1))
            if problem:
                fine = self.fail("not_run_wrong", problem=problem)
        return fine

    def source_fits(self, model):
        if model["source"] == "local_mock":
            return (is_workspace_file(model["script"]) and model["url"] is None
                    and model["server_log"] == f"loop-runs/{self.name}/server-log.jsonl")
        return model["source"] == "url" and type(model["url"]) is str and model["script"] is model["server_log"] is None

    # ---- the records on disk ----

    def check_folders(self):
        folder = self.loop_dir / "proposals"
        try:
            present = sorted(os.listdir(folder))
        except OSError:
            present = []
        expected = [f"{proposal.number:02d}" for proposal in self.proposals]
        for name in expected:
            if name not in present:
                self.fail("proposal_record_missing", number=int(name), record=self.rel(int(name)))
        extra = [name for name in present if name not in expected]
        if extra:
            self.fail("proposals_extra", names=extra)

    def open_log(self):
        path = self.server_log
        if path is None and self.record["model"]["server_log"] is not None:
            path = self.loop_dir / "server-log.jsonl"
            if not os.path.lexists(path):
                self.fail("server_log_missing", log=f"loop-runs/{self.name}/server-log.jsonl")
                return
        if path is not None:
            load_verify_ask()
            from askcheck.server import ServerLog
            self.log = ServerLog(path)

    def check_proposal(self, proposal):
        verify_ask = load_verify_ask()
        from askcheck.shape import read_record
        folder = self.loop_dir / "proposals" / f"{proposal.number:02d}"
        record, unusable = read_record(folder / "question.json")
        result = verify_ask.check_record(record, self.log, PROPOSAL_LIMITS, self.rel(proposal.number), unusable)
        proposal.record, proposal.result = record, result
        where = Finding("proposal_at", number=proposal.number, record=self.rel(proposal.number))
        for problem in result["problems"]:  # the question verifier's own words
            self.fail("proposal_failed", where=where, said=problem)
        if result["result"] == "fail" or type(record) is not dict:
            return
        if result["result"] == "needs_human" and not self.may_be_cut(proposal, result):
            for note in result["notes"]:
                self.verdict.add("proposal_needs_human", where=where, said=note)
        self.check_identity(where, proposal)
        self.check_counts(where, proposal)
        self.check_reply(where, proposal)
        self.check_feedback(where, proposal)

    def may_be_cut(self, proposal, result):
        """A last proposal the loop itself cut (its API-call budget, an interrupt): stop `interrupted` is its honest
        end, not a person's question; anything else verify_ask left for a person stays so."""
        loop = self.record
        cut = proposal.record.get("cut")
        ended_so = (loop["reason"] == "api_call_budget" and type(cut) is dict and cut.get("by") == "api_call_budget"
                    or loop["status"] in ("interrupted", "running") and cut is None)
        return (result["findings"] == ["interrupted"] and proposal is self.proposals[-1]
                and proposal.entry is loop["proposal_not_run"] and ended_so)

    def check_identity(self, where, proposal):
        record = proposal.record
        expected = f"{self.name}/proposals/{proposal.number:02d}"
        if record.get("id") != expected or record.get("kind") != "proposal":
            self.fail("proposal_identity", where=where, id=record.get("id"), kind=record.get("kind"), expected=expected)

    def check_counts(self, where, proposal):
        record, entry = proposal.record, proposal.entry
        tokens = record["tokens"]
        derived = {"turns": len(record["turns"]), "requests": proposal.result["requests"], "stop": record["stop"],
                   "tokens": None if tokens["estimated"] else tokens["used"]}
        for field, value in derived.items():
            if entry[field] != value:
                self.fail("proposal_count_wrong", place=self.entry_place(proposal), field=field, value=entry[field],
                          where=where, derived=value)

    def entry_place(self, proposal):
        if proposal.number <= len(self.record["attempts"]):
            return Finding("entry_of_attempt", number=proposal.number)
        return Finding("entry_not_run")

    def check_reply(self, where, proposal):
        """The final reply's text (the model's own words) behind its hash; the candidate and the claim it proposed."""
        record, entry = proposal.record, proposal.entry
        text, complete = record.get("reply_text"), record.get("reply_text_complete")
        if record["stop"] != "answered":
            if text is not None:
                self.fail("reply_text_extra", where=where, stop=record["stop"])
            proposed = None
        elif type(text) is not str or complete is not True and complete is not False:
            return self.fail("reply_text_shape", where=where)
        elif complete and hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() != record["answer_sha256"]:
            return self.fail("reply_text_hash", where=where)
        else:
            proposed = proposal_of(text) if complete else None
        proposal.proposed = proposed
        claim = proposed["claim"] if proposed else None
        if entry["claim"] != claim:
            self.fail("claim_wrong", place=self.entry_place(proposal), value=entry["claim"], said=claim)
        if proposal.number <= len(self.record["attempts"]):
            candidate = self.record["attempts"][proposal.number - 1].get("candidate") or {}
            if not proposed or (proposed["action"], proposed.get("sample")) != (candidate.get("action"),
                                                                                 candidate.get("sample")):
                self.fail("candidate_not_proposed", number=proposal.number, sample=candidate.get("sample"), where=where,
                          proposed=proposed and proposed.get("sample") or proposed)
        return None

    def check_feedback(self, where, proposal):
        question = proposal.record.get("question")
        for attempt in self.record["attempts"][:proposal.number - 1]:
            said = attempt.get("feedback") if type(attempt) is dict else None
            if type(said) is not dict:
                continue
            if type(question) is not str or not all(type(said.get(key)) is str and said[key] in question
                                                    for key in ("error_type", "message")):
                self.fail("feedback_not_carried", where=where, attempt=attempt.get("attempt"))

    # ---- the loop's totals ----

    def check_totals(self):
        record = self.record
        sent = sum(proposal.entry["requests"] for proposal in self.proposals)
        limit, reason = record["budget"]["max_api_calls"], record["reason"]
        if record["actual_api_calls"] != sent:
            self.fail("api_calls_sum", value=record["actual_api_calls"], sent=sent)
        if sent > limit:
            self.fail("api_calls_over", sent=sent, limit=limit)
        if reason == "api_call_budget" and sent != limit:
            self.fail("api_budget_unspent", sent=sent, limit=limit)
        if self.log is not None:
            ours = [line for line in self.log.lines if str(line["run"]).startswith(f"{self.name}/proposals/")]
            known = {f"{self.name}/proposals/{proposal.number:02d}" for proposal in self.proposals}
            strays = sorted({line["run"] for line in ours if line["run"] not in known})
            if strays:
                self.fail("server_log_strays", runs=strays)
            if len(ours) > limit:
                self.fail("server_log_over", count=len(ours), limit=limit)

    def check_stop(self):
        """A last proposal no attempt carries supports one stop only (where the proposal alone decides it)."""
        last = self.proposals[-1] if self.proposals and self.record["proposal_not_run"] is not None else None
        supported = proposal_stop(last) if last is not None and type(last.record) is dict else None
        recorded = (self.record["status"], self.record["reason"], self.record["error_type"])
        if supported is not None and supported != recorded:
            self.fail("proposal_stop_wrong", record=self.rel(last.number), supported="/".join(filter(None, supported)),
                      recorded=[part for part in recorded if part])
        blocked = self.record["blocked_proposal"]
        if type(blocked) is dict and (last is None or last.proposed is None or (blocked.get("action"), blocked.get(
                "target")) != (last.proposed["action"], last.proposed.get("target", last.proposed.get("sample")))):
            self.fail("blocked_not_proposed", value=blocked)

    def fail(self, kind, /, **fields):
        """The finding KIND (of severity fail) with FIELDS for the loop's verdict; False, for shape(). KIND is
        positional only: a finding may have a field named `kind` (proposal_identity's)."""
        self.verdict.add(kind, **fields)
        return False


def proposal_stop(proposal):
    """The stop a last PROPOSAL no attempt followed supports (status, reason, error_type), or None when the loop could
    have stopped there for reasons of its own (a changed context, an interrupt): verifier/outcome.py's to judge."""
    record = proposal.record
    cut = record.get("cut") if type(record) is dict else None
    if type(cut) is dict and cut.get("by") == "api_call_budget":
        return "budget_exhausted", "api_call_budget", None
    if record is None or record.get("stop") in ("interrupted", "running"):
        return None
    if record["stop"] in FAILED_STOPS:
        return "needs_human", "unexpected_error", "ModelFailed"
    proposed = proposal.proposed
    if proposed is None:
        return "needs_human", "unexpected_error", "NotAProposal"
    if proposed["action"] != "export" or proposed["sample"] not in SAMPLES:
        return "needs_human", "permission_boundary", None
    return None


def load_verify_ask():
    """project/verify_ask.py, the notes assistant's verifier (it puts its askcheck/ on the path itself)."""
    if str(PROJECT) not in sys.path:
        sys.path.insert(0, str(PROJECT))
    import verify_ask
    return verify_ask
