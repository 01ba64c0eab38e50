"""The independent check of one loop folder: does its stop follow from the evidence it left?

Part of verify_loop (the command line). It re-derives each attempt's outcome from the child runs, with
verifier/records.py's copy of the rules, and compares the recorded stop with what the children and the
budgets support (verifier/outcome.py); verifier/shape.py judges each field, verifier/clocks.py its clocks,
verifier/older.py what an older workspace wrote. A record of an older schema, or on an earlier release's course
files, is judged on the files it says it ran on: only what they change is for a person. Evidence is hostile
input: the loop folder and loop.json are looked at (lstat) before anything is opened, and records are read only
through records.read_record_file (plain files, capped, strict). It does not import loop_lab.py, harness.py,
export_review.py or machinery/. What it shares: cli.py's plumbing (paths shown from the current folder, the
glosses of error types, what is shown escaped) and verify_harness, the lesson-13 verifier: verify_run checks each
child (against a Course, as_recorded for an older version), and its words for a transport's changes
(TRANSPORT_NOTES) and a record's JSON type (json_kind) are reused.
"""
import os
from collections import Counter
from pathlib import Path

import verify_harness
from cli import DuplicateKeyError, NotRegularFile, RecordError, TooLarge, display_path, visible
from verifier.clocks import clock_events, offset_problems, wall_clock_finding
from verifier.findings import Finding, at_most
from verifier.older import old_child_finding, old_record_problems, old_shape_problems
from verifier.outcome import Outcome
from verifier.records import (CURRENT, MESSAGE_CHARS, OLD_SCHEMAS, PRECISION, SCHEMA, SCRIPT, SHIPPED_MODELS, TOLERANCE,
                              CourseFiles, Workspace, child_state, child_view, disk_key, kind_of, moment, one_line,
                              read_record_file, same_files, schema_of, scripted)
from verifier.resumed import judgement_problem
from verifier.shape import shape_problems


# --- one loop ------------------------------------------------------------------------------------

class Round:
    """What the checks derived for one recorded attempt; verifier/explain.py renders it for --explain.

    A plain class, not a dataclass: importing dataclasses costs every verify_loop call more than it saves.
    """

    def __init__(self, number, entry):
        self.number = number
        self.entry = entry    # the attempt as loop.json records it
        self.child = None     # child_view() of its run.json; None when the child folder is missing
        self.verdict = None   # verify_harness's verdict on the child; None when it was not checked
        self.derived = None   # (next, reason) its evidence supports; None: no decision is due


class Verdict:
    """What a check found, as findings (verifier/findings.py), each kept by its kind's severity: a problem (`fail`)
    makes the loop fail, a note (`human`) makes it need a person; a remark (`remark`: a benign transport change,
    such as line ends converted) is said for a person and changes no result."""

    def __init__(self):
        self.problems, self.notes, self.remarks = [], [], []

    def add(self, kind, /, **fields):
        """The finding KIND with FIELDS, kept where its severity says; returned."""
        return self.keep(Finding(kind, **fields))

    def keep(self, finding, first=False):
        """FIRST: the problem a reader must see before the others (a stop the evidence contradicts)."""
        found = {"fail": self.problems, "human": self.notes, "remark": self.remarks}[finding.severity]
        if finding.severity == "remark" and finding in found:
            return finding
        found.insert(0, finding) if first else found.append(finding)
        return finding

    def result(self):
        if self.problems:
            return "fail"
        if self.notes:
            return "needs_human"
        return "pass"


def verify_loop(loop_dir, workspaces=None, course=None, server_log=None):
    """{"result", "status", "attempts", "semantic_review", "run", "problems", ...} for one loop folder.

    WORKSPACES (root -> Workspace) lets many folders of one root share its listings; COURSE, the
    reference course files, defaults to the loop's own workspace; SERVER_LOG, the log of the server a model loop's
    development model answered from (--server-log), defaults to the one in its folder.
    """
    return checked_loop(loop_dir, workspaces, course, server_log).result()


def checked_loop(loop_dir, workspaces=None, course=None, server_log=None):
    """The LoopCheck of one loop folder after every check ran (its rounds feed --explain); as verify_loop()."""
    loop_dir = Path(os.path.abspath(loop_dir))  # not resolved: a linked folder keeps its own name
    root = loop_dir.parent.parent
    workspaces = {} if workspaces is None else workspaces
    if root not in workspaces:
        workspaces[root] = Workspace(root, course or CourseFiles(root))
    workspace = workspaces[root]
    check = check_loop(loop_dir, workspace, server_log)
    check.verdict.problems[:0] = workspace.problems()  # the folders first
    return check


def check_loop(loop_dir, workspace, server_log=None):
    """The LoopCheck of one folder after every check ran; a surprise is a failed check, not a crash."""
    check = LoopCheck(loop_dir, workspace, server_log)
    try:
        check.run()
    except Exception as exc:  # a record shaped in some way nobody foresaw is still just a failed check
        check.verdict.add("check_crashed", record=check.record_path, error_type=type(exc).__name__, error=str(exc))
    return check


class LoopCheck(Outcome):
    """The checks of one loop folder, in the order a reader would make them (the stop, decisions and timeouts they
    re-derive: verifier/outcome.py)."""

    def __init__(self, loop_dir, workspace, server_log=None):
        self.loop_dir, self.workspace, self.name = loop_dir, workspace, loop_dir.name
        self.server_log, self.schema = server_log, CURRENT
        self.proposals = []  # a model loop's proposals as verifier/proposals.py derived them
        self.folder = display_path(loop_dir)
        self.record_path = os.path.normpath(os.path.join(self.folder, "loop.json"))  # as display_path would say it
        self.record = None
        self.verdict = Verdict()
        self.child_times = []  # (attempt number, child run, started_at, finished_at, duration) of each child read
        self.durations = {}  # attempt number -> its child's own monotonic duration, as recorded
        self.child_clock_notes = []  # a child's notes that only its own clock step made (verify_harness)
        self.rounds = []  # a Round per recorded attempt, as far as the checks got
        self.judged = False  # every recorded decision was judged (the record was shaped well enough)
        self.version = None  # the older version that made the record (its schema, or its course's release), if any
        self.version_note = None  # what this check says of that version, once
        self.copy_of = None  # the loop folder this one is a byte copy of, as shown; None for a loop of its own
        self.reference = workspace.course.reference  # () -> the course files the children are checked against

    def show(self, rel):
        return self.workspace.show(rel)

    def result(self):
        record = self.record if type(self.record) is dict else {}
        attempts = record.get("attempts")
        # at most SHOWN_PROBLEMS of them, then how many more: a forged record cannot flood any output
        found, remarks = at_most(self.verdict.problems + self.verdict.notes), at_most(self.verdict.remarks)
        return {"result": self.verdict.result(), "status": record.get("status"),
                "attempts": len(attempts) if type(attempts) is list else None,
                "semantic_review": record.get("semantic_review"), "run": self.name,
                # one line each, whatever a record made them say (visible() leaves a printable message as it is)
                "problems": [visible(finding.sentence()) for finding in found],
                "notes": [visible(finding.sentence()) for finding in remarks],
                "findings": found, "remarks": remarks,  # the same, as findings (their kinds and fields)
                "scenario": record.get("scenario"), "budget": record.get("budget"),
                "folder": self.folder, "paths": self.paths(), "levels": self.levels()}

    def levels(self):
        """A model loop's three counts as its proposal records give them (attempts, model turns, HTTP requests
        sent), or None: the lesson's three levels, each counted on its own."""
        if not self.schema.calls_model or not self.judged and not self.proposals:
            return None
        results = [proposal.result for proposal in self.proposals if proposal.result is not None]
        return {"attempts": len(self.record["attempts"]), "model_turns": sum(r["turns"] for r in results),
                "actual_api_calls": sum(r["requests"] for r in results)}

    def paths(self):
        """Where a person looks: the loop folder and the child runs that exist."""
        return [self.folder] + [self.show(f"runs/{name}") for name in self.workspace.children(self.name)]

    def run(self):
        if not self.folder_is_a_folder():
            return
        others = self.workspace.same_name_loops(self.name)
        if others:
            self.verdict.add("loop_twins", folder=self.folder,
                             others=[self.show("loop-runs/" + other) for other in others])
        self.check_child_names()
        self.record = self.read_record()
        if self.record is None or self.is_a_copy():
            return
        if type(self.record.get("schema")) is str and self.record["schema"] in OLD_SCHEMAS:
            self.version = Finding("version_schema", schema=self.record["schema"])
            self.check_old_record()
            return
        self.schema = schema_of(self.record)
        blocking, other = shape_problems(self.record, self.name, self.schema)
        for problem in blocking:
            self.verdict.keep(problem)
        if not blocking:
            self.check_evidence()
        for problem in other:  # after what the evidence says: a stop it contradicts is the first thing to read
            self.verdict.keep(problem)

    def is_a_copy(self):
        """The folder is a byte copy of the loop its record names, beside it in loop-runs/ (cloud sync's
        `repair-01-DESKTOP-K3J2`, Explorer's `stuck-01 - 副本`): no loop of its own and no forgery, said for a
        person; the loop it copies is checked as itself."""
        run = self.record.get("run")
        if type(run) is not str or run == self.name or run not in self.workspace.loops() \
                or self.workspace.loops()[run] or not same_files(self.loop_dir, self.loop_dir.parent / run):
            return False
        self.copy_of = self.show(f"loop-runs/{run}")
        self.verdict.add("loop_copy", folder=self.folder, original=self.copy_of)
        return True

    def check_old_record(self):
        """An older workspace's record is for a person (today's rules cannot check it) only when it and every child
        are readable evidence of that version (verifier/older.py); what no older workspace wrote fails as it would
        in a record of today, and so does a stop its own children contradict or a child it leaves out."""
        schema = self.record["schema"]
        problems = old_record_problems(self.record, self.record_path)
        if problems:  # the record itself is no old record: its children cannot be read by its fields
            for problem in problems:
                self.verdict.keep(problem)
            return
        release = self.workspace.course.release(self.record["context"]["entries"])
        if release and self.swapped(release):
            return
        if release:
            self.version = Finding("version_schema_release", schema=schema, release=release[0])
        differ = self.judge_on_recorded_files()
        problems, outcomes = self.old_children_problems(schema)
        for problem in problems:
            self.verdict.keep(problem)
        self.check_unrecorded_children()
        self.check_old_evidence(outcomes)
        if not self.verdict.problems:
            self.version_note = self.verdict.add("older_schema", record=self.record_path, schema=schema,
                                                 lacks=Finding(OLD_SCHEMAS[schema].lacks), differ=differ)

    def old_children_problems(self, schema):
        """(problems, outcomes): an older record's children are readable records of that version; OUTCOMES, each
        child's (candidate+error key, status), are what its stop is re-derived from (check_old_evidence)."""
        problems, outcomes = [], []
        for number, entry in enumerate(self.record["attempts"], 1):
            child_run = entry.get("child_run") if type(entry) is dict else None
            name = child_run.rpartition("/")[2] if type(child_run) is str else None
            if child_run != f"runs/{self.name}-{number:02d}":
                problems.append(Finding("old_child_run_wrong", record=self.record_path, number=number, value=child_run,
                                        expected=f"runs/{self.name}-{number:02d}"))
            if name not in self.workspace.runs():
                outcomes.append((None, None))
                continue
            child_dir = self.workspace.root / "runs" / name
            finding = old_child_finding(child_dir, self.show(f"runs/{name}"), schema, self.reference())
            if finding and finding.severity == "fail":
                problems.append(finding)
            elif finding:
                self.verdict.keep(finding)
            child = child_view(child_dir)
            self.keep_round(number, child=child)
            self.child_times.append((number, child_run, child["started_at"], child["finished_at"], child["duration"]))
            outcomes.append((child["key"], child["status"]))
        return problems, outcomes

    def check_old_evidence(self, outcomes):
        """"Old" softens only what an older record cannot show. What it does show is judged as today's record is:
        its shape, each candidate and summary against its child, its monotonic readings (loop-run/2 on), and its stop
        and decisions re-derived from its children and budgets once every child could be read."""
        record = self.record
        blocking, other = old_shape_problems(record, self.name)
        for problem in blocking + other:
            self.verdict.add("in_record", record=self.record_path, finding=problem)
        if blocking:
            return
        for number, entry in enumerate(record["attempts"], 1):
            self.check_candidate(number, entry["candidate"])
            child = self.rounds[number - 1].child if number <= len(self.rounds) else None
            if child is None:
                self.child_missing(number, entry["child_run"], entry["state"])
            elif entry["state"] == "done" and child["status"] is not None:  # an unreadable old child: said above
                self.compare_with_child(number, entry, Path(entry["child_run"]).name, child)
        readings = "started_offset" in OLD_SCHEMAS[record["schema"]].attempt_keys
        if readings:
            self.check_times(OLD_SCHEMAS[record["schema"]])
        if self.children_unknown() or any(status is None for _, status in outcomes):
            return  # a child no one can read yet: its stop is for a person
        self.check_outcome(outcomes)
        if readings:
            self.check_decisions(outcomes)
            self.check_timeouts()

    def check_evidence(self):
        """Each attempt against its child, the course files and the clocks; then the stop, the decisions and
        the timeouts, as the children support them (not when runs/ cannot be listed: nothing to derive from)."""
        self.check_release()
        outcomes = [self.check_attempt(number, entry) for number, entry in enumerate(self.record["attempts"], 1)]
        self.check_unrecorded_children()
        self.check_context()
        self.check_times(self.schema)
        if self.schema.calls_model:  # each proposal from its own record, as verify_ask judges a question
            from verifier.proposals import ProposalCheck
            self.proposals = ProposalCheck(self.record, self.loop_dir, self.verdict, self.server_log).run() or []
        if self.children_unknown():
            return
        self.check_outcome(outcomes)
        self.check_decisions(outcomes)
        self.check_timeouts()

    def children_unknown(self):
        """runs/ is there but cannot be listed (no permission): whether a child exists is unknown, not "no"."""
        unreadable = self.workspace.runs_unreadable()
        return unreadable is not None and not isinstance(unreadable, NotADirectoryError)

    def folder_is_a_folder(self):
        """The loop folder is a folder here: a link, file, FIFO or device is named (never opened) and fails."""
        try:
            kind = kind_of(self.loop_dir)
        except OSError as exc:  # the folder holding it cannot be looked into
            self.verdict.add("loop_unlistable", folder=self.folder, error_type=type(exc).__name__)
            return False
        if kind in ("符号链接", "目录联接"):
            self.verdict.add("loop_link", folder=self.folder)
        elif kind not in (None, "文件夹"):
            self.verdict.add("loop_not_folder", folder=self.folder, entry=kind)
        return kind in (None, "文件夹")

    def read_record(self):
        """loop.json as an object, read as hostile input; None (with the verdict said) when there is none."""
        try:
            record, undone = read_record_file(self.loop_dir / "loop.json")
        except FileNotFoundError:
            self.no_record()
            return None
        except (OSError, RecordError) as exc:
            self.unusable_record(exc)
            return None
        if type(record) is not dict:
            self.verdict.add("record_not_object", record=self.record_path, json=verify_harness.json_kind(record),
                             schema=SCHEMA)
            return None
        self.say_transport(self.record_path, [text.format(files=self.record_path)
                                              for change, text in verify_harness.TRANSPORT_NOTES if change in undone])
        return record

    def unusable_record(self, exc):
        """Why loop.json cannot be taken: not a plain file, over its cap, not a strict JSON record (fail), or
        unreadable by this user (for a person: the file is there)."""
        where = self.record_path
        if isinstance(exc, NotRegularFile) and exc.kind in ("符号链接", "目录联接"):
            self.verdict.add("record_link", record=where, entry=exc.kind)
        elif isinstance(exc, NotRegularFile):
            self.verdict.add("record_not_plain", record=where, entry=exc.kind)
        elif isinstance(exc, TooLarge):
            self.verdict.add("record_too_large", record=where, mib=exc.cap // (1 << 20))
        elif isinstance(exc, DuplicateKeyError):
            self.verdict.add("record_duplicate_key", record=where, key=exc.key)
        elif isinstance(exc, RecordError):
            self.verdict.add("record_cut" if exc.kind in ("empty", "cut") else "record_not_json", record=where,
                             error=str(exc))
        else:  # PermissionError above all
            self.verdict.add("record_unreadable", record=where, error_type=type(exc).__name__)

    def say_transport(self, where, notes):
        """Remarks on evidence a transport changed as a whole (line ends, a BOM): same content, said once each."""
        for note in notes:
            self.verdict.add("transport" if where in note else "transport_at", where=where, note=note)

    def no_record(self):
        """The loop writes its first record before any child run: children without it mean a lost record."""
        children = self.workspace.children(self.name)
        if children:
            self.verdict.add("record_lost", record=self.record_path,
                             children=[self.show(f"runs/{name}") for name in children])
        else:
            self.verdict.add("record_missing", record=self.record_path, folder=self.folder)

    def check_attempt(self, number, entry):
        """Compares one attempt with its child run; returns the child's (candidate+error key, status): status "unknown"
        for an attempt a resume judged so, and its child, if any, stays evidence, checked as such."""
        child_run, state = entry["child_run"], entry["state"]
        self.check_candidate(number, entry["candidate"])
        child_name = Path(child_run).name
        judged = entry.get("resume")
        if child_name not in self.workspace.runs():
            if judged and not self.children_unknown():
                problem = judgement_problem(number, entry, None, self.show(child_run))
                if problem:
                    self.verdict.keep(problem)
                return None, "unknown" if state == "unknown" else None
            self.child_missing(number, child_run, state)
            return None, None
        child_dir = self.workspace.root / child_run
        child = child_view(child_dir)
        self.keep_round(number, child=child)
        self.child_times.append((number, child_run, child["started_at"], child["finished_at"], child["duration"]))
        problem = judged and judgement_problem(number, entry, child, self.show(child_run))
        if problem:
            self.verdict.keep(problem)
        if judged and state == "unknown":  # kept as evidence: an edit of it fails, what it left is no longer open
            verdict = verify_harness.verify_run(child_dir, course_root=self.reference())
            self.keep_round(number, verdict=verdict)
            if verdict["result"] == "fail":
                self.verdict.add("judged_child_failed", number=number, child=self.show(child_run),
                                 said=verdict_said(verdict))
            if child["status"] is not None:  # its first run.json names its run, sample and input as the attempt does
                self.compare_with_child(number, dict(entry, status=child["status"]), child_name, child)
            return child["key"], "unknown"
        if state != "done":
            self.check_unfinished_child(number, entry, child_dir, child)
            return child["key"], child["status"]
        self.check_child_verdict(number, child_run, child_dir, child)
        self.compare_with_child(number, entry, child_name, child)
        return child["key"], child["status"]

    def check_unfinished_child(self, number, entry, child_dir, child):
        """A child the loop did not see finish (interrupted, timed out, stopped unexpectedly) is checked all the same:
        however the loop ended, what the child left is evidence, and an edit of it fails, named. What it left is
        otherwise for a person: the attempt may have done more than the record knows."""
        child_run, state = entry["child_run"], entry["state"]
        verdict = verify_harness.verify_run(child_dir, course_root=self.reference())
        self.keep_round(number, verdict=verdict)
        if verdict["result"] == "fail":
            self.verdict.add("unfinished_child_failed", number=number, state=state, child=self.show(child_run),
                             said=verdict_said(verdict))
        self.verdict.add("attempt_unfinished", number=number, state=state, child=self.show(child_run),
                         child_state=child_state(child))

    def check_candidate(self, number, candidate):
        """The candidate is the script's choice given the feedback recorded before it (compared with the children);
        a model loop's is its proposal's (verifier/proposals.py)."""
        scenario, script = self.record["scenario"], SCRIPT.get(self.record["scenario"])
        choice = scripted(scenario, [entry["feedback"] for entry in self.record["attempts"][:number - 1]])
        if script is not None and candidate["sample"] != choice:
            self.verdict.add("candidate_not_scripted", number=number, sample=candidate["sample"], scenario=scenario,
                             script=list(script) or Finding("script_none"), choice=choice or Finding("script_none"))
        if candidate["sha256"] != self.record["context"]["entries"][f"samples/{candidate['sample']}.json"]:
            self.verdict.add("candidate_hash", number=number, file=f"samples/{candidate['sample']}.json")

    def child_missing(self, number, child_run, state):
        child = self.show(child_run)
        if self.children_unknown():
            self.verdict.add("children_unlistable", number=number, child=child, runs=self.show("runs"),
                             error_type=type(self.workspace.runs_unreadable()).__name__)
            return
        child_name = Path(child_run).name
        other_case = [name for name in self.workspace.runs() if name.lower() == child_name.lower()]
        if other_case:
            self.verdict.add("child_other_case", child=child, found=self.show("runs/" + other_case[0]))
        elif state == "done":
            self.verdict.add("child_deleted", number=number, child=child)
        else:
            self.verdict.add("attempt_unfinished_no_child", number=number, state=state, child=child,
                             runs=self.show("runs"), record=self.record_path)

    def check_child_verdict(self, number, child_run, child_dir, child):
        """The child's own verdict: a failed check fails the loop; what its verifier leaves to a person (a clock
        step, an unreadable file, an older record) is for a person here too; its remarks are kept."""
        verdict = verify_harness.verify_run(child_dir, course_root=self.reference())
        self.keep_round(number, verdict=verdict)
        if verdict.get("notes"):
            self.say_transport(self.show(child_run), verdict["notes"])
        said, shown_child = verdict_said(verdict), self.show(child_run)
        if verdict["result"] == "needs_human" and child["status"] in ("needs_review", "failed"):
            note = self.verdict.add("child_needs_human", child=shown_child, said=said)
            if verdict["problems"] == [verdict.get("clock_step")]:
                self.child_clock_notes.append(note)
        if verdict["result"] != "fail":
            return
        attempts = self.record["attempts"]
        stopped_by_it = number == len(attempts) and self.record["reason"] == "unexpected_error"
        # the very evidence that stopped the loop is for a person
        self.verdict.add("child_failed_at_stop" if stopped_by_it else "child_failed", child=shown_child, said=said)

    def compare_with_child(self, number, entry, child_name, child):
        candidate = entry["candidate"]
        mismatched = [Finding("mismatch", field=field, recorded=recorded, actual=actual)
                      for field, recorded, actual in (
                          ("run", child_name, child["run"]),  # a copy of another run's evidence keeps its name inside
                          ("candidate.sample", candidate["sample"], child["sample"]),
                          ("candidate.sha256", candidate["sha256"], child["sha256"]),
                          ("status", entry["status"], child["status"]),
                          ("feedback", entry["feedback"], child["feedback"])) if recorded != actual]
        if mismatched:
            self.verdict.add("summary_mismatch", number=number, child=self.show(entry["child_run"]),
                             fields=mismatched)

    def check_child_names(self):
        """Names as disks hold them: of two child runs a case-insensitive, normalising disk would take for one, one was
        made by hand (a hidden attempt beside a recorded one, say runs/X-03 by runs/x-03); a child that is a link
        may carry another run's evidence. Both fail, recorded or not, whatever the record says."""
        twins = {}
        for name in self.workspace.children(self.name):
            twins.setdefault(disk_key(name), []).append(name)
        for names in twins.values():
            if len(names) > 1:
                self.verdict.add("child_twins", twins=[self.show("runs/" + name) for name in names])
        runs = self.workspace.runs()
        linked = [self.show("runs/" + name) for name in self.workspace.children(self.name) if runs[name]]
        if linked:
            self.verdict.add("child_links", links=linked)

    def recorded_children(self):
        """The child run names the record's attempts give (runs/NAME-NN), those that are text."""
        attempts = self.record.get("attempts")
        entries = attempts if type(attempts) is list else []
        return [entry["child_run"].rpartition("/")[2] for entry in entries
                if type(entry) is dict and type(entry.get("child_run")) is str]

    def check_unrecorded_children(self):
        """A child run with this loop's prefix (in any case) that the summary leaves out is a hidden attempt,
        unless the loop could not have made it: a name taken before it tried, or a run begun after it ended.
        Twins and links are named by check_child_names; a recorded child in another case by child_missing."""
        recorded_names = self.recorded_children()
        recorded = {disk_key(name) for name in recorded_names}
        taken = disk_key(f"{self.name}-{len(recorded_names) + 1:02d}")  # a name already taken stops the loop uncounted
        children = self.workspace.children(self.name)
        keys = [disk_key(name) for name in children]
        twinned = {key for key, count in Counter(keys).items() if count > 1}
        runs = self.workspace.runs()
        for found, key in zip(children, keys):
            if found in recorded_names or key in recorded or key in twinned or runs[found]:
                continue
            shown_run = self.show("runs/" + found)
            if key == taken and self.record.get("error_type") in ("FileExistsError", "NameTaken"):
                self.verdict.add("run_name_taken", run=shown_run)
            elif self.began_after_loop(found):
                self.verdict.add("run_after_loop", run=shown_run, name=found)
            else:
                self.verdict.add("run_unrecorded", run=shown_run)

    def began_after_loop(self, run_name):
        """The run's own started_at lies beyond the loop's finished_at (precision and tolerance allowed)."""
        finished = moment(self.record.get("finished_at"))
        started = moment(child_view(self.workspace.root / "runs" / run_name)["started_at"])
        return None not in (finished, started) and started > finished + PRECISION + TOLERANCE

    def check_release(self):
        """A record of today's schema whose course files are an earlier release's (a table the reference course may
        know, classroom/releases.json) is judged on them, as an older schema is: only what its files change is for
        a person. A release whose loop wrote another schema did not make it: its context was swapped for that one."""
        entries = self.record["context"]["entries"]
        release = self.workspace.course.release(entries) if entries != self.workspace.course.entries() else None
        if release is None or self.swapped(release):
            return
        name, _ = release
        self.version = Finding("version_release", release=name)
        differ = self.judge_on_recorded_files()
        self.version_note = self.verdict.add("older_release", record=self.record_path, release=name, differ=differ)

    def swapped(self, release):
        """A record whose context is RELEASE's (name, schema), of a schema that release's loop never wrote: failed."""
        name, schema = release
        if schema == self.record["schema"] or (schema is None and self.record["schema"] in OLD_SCHEMAS):
            return False
        self.verdict.add("context_swapped", record=self.record_path, release=name,
                         wrote=schema or Finding("schema_v3_or_older"), schema=self.record["schema"])
        return True

    def judge_on_recorded_files(self):
        """The record's children are checked against the course files its context says they were made on (an older
        version's): a child made on others fails. Returns what the reference course cannot vouch for, for a person."""
        recorded = self.record["context"]["entries"]
        reference = self.workspace.course.reference().as_recorded(recorded)
        self.reference = lambda: reference
        current = self.workspace.course.entries()
        differ = [rel for rel in sorted(recorded) if rel in current and recorded[rel] != current[rel]]
        if not differ:
            return ""
        unread = Finding("unread", files=list(reference.unread)) if reference.unread else ""
        return Finding("course_differs", course=self.workspace.course.label(), files=differ, unread=unread)

    def check_context(self):
        recorded = self.record["context"]["entries"]
        current = self.workspace.course.entries_for(recorded, self.workspace.root)
        changed = [rel for rel in sorted(recorded) if recorded[rel] != current[rel]]
        own = self.record.get("model", {}).get("script") if self.schema.calls_model else None
        if own in changed and own not in SHIPPED_MODELS and current[own] == "missing":  # not handed in: unknown
            changed.remove(own)
            self.verdict.add("model_script_missing", script=own)
        if not changed or self.version:  # an earlier release's files: judge_on_recorded_files said which differ
            return
        if self.workspace.course.root == self.workspace.root:
            self.verdict.add("context_changed", files=changed)
        else:
            self.verdict.add("course_changed", course=self.workspace.course.label(), files=changed)

    def check_times(self, schema):
        """The monotonic readings judge the budgets and the order of events, the children's own durations among them
        (verifier/clocks.py); the wall times, the children's too, must agree with them, where SCHEMA's loop read
        them, but for one clock step, which is for a person. A monotonic contradiction is no clock step: then a
        child's own clock-step note (verify_harness) is not said as the explanation."""
        children = {}
        for number, child_run, started, finished, duration in self.child_times:
            for field, text in (("started_at", started), ("finished_at", finished)):
                if text is not None and moment(text) is None:
                    self.verdict.add("child_time_format", child=self.show(child_run), field=field, value=text)
            children[number] = (child_run, started, finished, duration)
        self.durations = {number: times[-1] for number, times in children.items()}
        problems = offset_problems(self.record, self.durations)
        for problem in problems:
            self.verdict.keep(problem)
        if problems:
            self.verdict.notes = [note for note in self.verdict.notes
                                  if not any(note is said for said in self.child_clock_notes)]
            return
        finding = wall_clock_finding(clock_events(self.record, children, schema.paired))
        if finding:  # said again with the children's paths as the person types them from here
            shown_children = {number: (self.show(run), *times) for number, (run, *times) in children.items()}
            self.verdict.keep(wall_clock_finding(clock_events(self.record, shown_children, schema.paired)))

    # --- each attempt's decision and timeout; what each round derived, kept for --explain ---------------

    def keep_round(self, number, **found):
        """The Round of attempt NUMBER, updated with what a check FOUND (its child, its verdict)."""
        attempts = self.record["attempts"]
        while len(self.rounds) < number:
            self.rounds.append(Round(len(self.rounds) + 1, attempts[len(self.rounds)]))
        for field, value in found.items():
            setattr(self.rounds[number - 1], field, value)
        return self.rounds[number - 1]

    def child_list(self):
        """The recorded child runs as paths (findings of kind `child_listed`); one that does not exist is said to be
        absent."""
        runs = self.workspace.runs()
        listed = [Finding("child_listed" if Path(entry["child_run"]).name in runs else "child_absent",
                          child=self.show(entry["child_run"])) for entry in self.record["attempts"]]
        return listed or [Finding("no_children", runs=self.show("runs"))]


def verdict_said(verdict):
    """The problems verify_harness found in a child, on one line each cut, joined into one sentence (the lesson-13
    verifier's own words: its findings are its own)."""
    return "；".join(one_line(str(problem), MESSAGE_CHARS).rstrip("。") for problem in at_most(verdict["problems"])) + "。"
