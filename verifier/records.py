"""The loop verifier's own copy of the rules, and how it reads a loop record.

Part of verify_loop (the command line); verifier/check.py judges one loop with what is here (each field with
verifier/shape.py, its clocks with verifier/clocks.py) and classroom/check.py a whole class. Nothing here imports
loop_lab.py, harness.py, export_review.py or machinery/: the checked programs never vouch for themselves. The rules
are written from docs/harness/TASK.md and docs/loop/TASK.md: the watched-file lists (`WATCHED_FILES`, `LOOP_FILES`;
a test compares them with the document), the name rule, the scenario table, the file hashing and the combined
fingerprint, the timestamp format, the fields of today's record schema (`CURRENT`, loop-run/4) and of each older one
(`OLD_SCHEMAS`). Evidence is read as hostile input: every path is looked at (lstat) before it is opened, only a
plain file is read, and only up to its cap. What it shares: cli.py's plumbing (capped reads of plain files, strict
record parsing, line-end helpers, paths shown from the current folder, what is shown escaped),
verify_harness.undo_transport (which changes of a whole file a transport makes), so both verifiers forgive the same
ones, and verify_harness.Course (the reference course files read once, so a loop and its children are judged
against the same reading).
"""
import hashlib
import math
import os
import re
import stat
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import verify_harness
from cli import RecordError, display_path, entry_kind, line_endings, loads_record, read_evidence
from verifier.findings import (SHOWN_CHARS, SHOWN_PROBLEMS, Finding, at_most, names_said, one_line,  # noqa: F401
                               said, shown)

# The 14 files a harness run depends on, as docs/harness/TASK.md lists them, and the loop's (docs/loop/TASK.md).
WATCHED_FILES = (
    "harness.py", "verify_harness.py", "export_review.py", "verify_export.py",
    "AGENTS.md", "docs/harness/TASK.md",
    "samples/valid.json", "samples/bad-quote.json", "samples/semantic.json",
    "project/notes/A01.md", "project/notes/A02.md", "project/notes/A03.md",
    "project/notes/A05.md", "project/notes/A07.md",
)
# The loop's: the 14, the script and its task, and every other module the loop runs.
LOOP_FILES = WATCHED_FILES + ("loop_lab.py", "docs/loop/TASK.md", "cli.py", "machinery/__init__.py",
                              "machinery/arguments.py", "machinery/executor.py", "machinery/interrupts.py",
                              "machinery/progress.py", "machinery/resume.py")
# The 22 files a loop-run/3 record carries: before the loop could be resumed (machinery/resume.py).
V3_LOOP_FILES = LOOP_FILES[:-1]
# What a model loop (--scenario model) runs beyond the 23: the proposal machinery, the notes assistant's client, loop
# and recorder, and with the local mock the mock's modules and the developer model it replays (docs/loop/TASK.md).
MODEL_PACKAGE = tuple(f"proposer/{name}.py" for name in ("__init__", "budget", "developer", "options", "proposal",
                                                           "scenario", "server"))
MODEL_CLIENT = tuple(f"project/assistant/{name}.py" for name in (
    "__init__", "agent", "budget", "client", "config", "cycle", "errors", "history", "notes", "ranking", "record",
    "retry", "text", "tools", "transport"))
MODEL_MOCK = ("project/mock_model.py", "project/workspace.py", "project/mockapi/__init__.py",
              "project/mockapi/evidence.py", "project/mockapi/requests.py", "project/mockapi/script.py")
SHIPPED_MODELS = tuple(f"samples/models/{name}.json" for name in ("developer", "repeat", "publish", "failing"))
# The 16 files a loop-run/1 or loop-run/2 record carries: before the loop's modules joined its watched list.
OLD_LOOP_FILES = WATCHED_FILES + ("loop_lab.py", "docs/loop/TASK.md")
SAMPLES = ("valid", "bad-quote", "semantic")
# The name rule of docs/loop/TASK.md: a loop's children are NAME-01 ... (a run name has at most 64 characters).
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
DEVICE_NAMES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}
MAX_LOOP_NAME = 61
CHILD_NAME = re.compile(r"(.+)-[0-9]{2}")  # NAME-NN, two ASCII digits: the loop's name is what comes before

# What each scenario's script exports, in order, and how it ends when the budgets allow it.
# `slow` is repair's script, each attempt first waiting on a stand-in tool (docs/loop/TASK.md).
SCRIPT = {"repair": ("bad-quote", "valid"), "stuck": ("bad-quote", "bad-quote"),
          "semantic": ("semantic",), "permission": (), "slow": ("bad-quote", "valid")}
# What the permission scenario's script proposes instead of an export (and the loop must not run).
BLOCKED = {"permission": ("publish", "external-website")}
ENDING = {"repair": ("needs_review", "mechanical_pass"), "stuck": ("stalled", "repeated_failure"),
          "semantic": ("needs_review", "mechanical_pass"), "permission": ("needs_human", "permission_boundary"),
          "slow": ("needs_review", "mechanical_pass")}
REASONS = {"running": (None,), "needs_review": ("mechanical_pass",), "stalled": ("repeated_failure",),
           "budget_exhausted": ("attempt_budget", "time_budget"),
           "needs_human": ("permission_boundary", "unexpected_error", "attempt_timeout"),
           "interrupted": ("keyboard_interrupt", "terminated")}
# The model scenario: its proposals come from a development model (verifier/proposals.py re-derives them), so it
# has no script and no table; its own stop is the API-call budget's.
MODEL = "model"
MODEL_REASONS = {**REASONS, "budget_exhausted": REASONS["budget_exhausted"] + ("api_call_budget",)}
MODEL_ENTRY_KEYS = ("proposal", "turns", "requests", "tokens", "claim", "stop")
DEFAULT_BUDGET = {"max_attempts": 3, "max_seconds": 30}
# The lesson's six cases: (name, scenario, budget). Other budget values stay at their defaults.
CASES = (("repair", "repair", {}), ("stuck", "stuck", {}),
         ("repair --max-attempts 1", "repair", {"max_attempts": 1}),
         ("repair --max-seconds 0", "repair", {"max_seconds": 0}),
         ("semantic", "semantic", {}), ("permission", "permission", {}))

SCHEMA = "loop-run/4"
# loop-run/3's fields; loop-run/4 adds the segments its monotonic clock ran in and each decision's reading
V3_KEYS = ("schema", "id", "run", "scenario", "budget", "status", "reason", "error_type", "semantic_review",
           "actual_api_calls", "context", "attempts", "blocked_proposal", "handoff", "elapsed_seconds",
           "started_at", "finished_at")
LOOP_KEYS = V3_KEYS[:14] + ("segments",) + V3_KEYS[14:]
ATTEMPT_KEYS = ("attempt", "candidate", "child_run", "state", "status", "feedback", "started_at", "finished_at",
                "started_offset", "finished_offset", "decision", "timeout")
BUDGET_KEYS = ("max_attempts", "max_seconds", "attempt_timeout")
HANDOFF_KEYS = ("stopped_at", "done", "inspect", "decide")
# A segment: a stretch of one monotonic clock (a loop never resumed runs in one), its origin read with the wall clock.
# A resumed record's segments carry more: each but the last how it ended (ENDED_KEYS), each but the first how many
# attempts the record held when it began and the wall-clock gap before it (RESUMED_KEYS).
SEGMENT_KEYS = ("started_at", "started_offset", "wall_minus_monotonic", "elapsed_seconds")
ENDED_KEYS, RESUMED_KEYS = ("ended", "lower_bound"), ("after_attempt", "gap_seconds")
ENDINGS = ("keyboard_interrupt", "terminated", "killed")  # how a segment a resume followed ended
# What a resume found of the attempt in flight (an attempt's `resume`), and the state each leaves it in.
RESUME_KEYS = ("found", "run_status", "segment")
FOUND = {"no_child": "unknown", "partial_child": "unknown", "complete_child": "done", "finished_undecided": None}
V3_DECISION_KEYS, DECISION_KEYS = ("next", "reason", "why"), ("next", "reason", "why", "decided_offset")
# The fields of the objects inside a record and inside an attempt (a timeout's inventory is the loop's free report).
INNER_KEYS = {"budget": BUDGET_KEYS, "context": ("files", "fingerprint", "entries"),
              "blocked_proposal": ("action", "target", "reason"), "handoff": HANDOFF_KEYS}
RECORD_ID = re.compile("[0-9a-f]{32}")
# The most a record or a course file may hold: an honest loop.json or run.json is a few KiB, a course file
# tens of KiB; a file over its cap is not one the course or a program wrote, and is not read beyond it.
RECORD_CAP = COURSE_FILE_CAP = 1 << 20
CHILD_STATUSES = ("running", "needs_review", "failed", "needs_human")
SHA256 = re.compile("[0-9a-f]{64}")
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
MIN_DECISION = 10  # characters: "请处理" is not a decision a person can act on
MESSAGE_CHARS = 2000  # of a message another verifier wrote (it may quote a value): the longest honest one is shorter
# Timestamps are whole seconds; beyond that precision, 1 s of tolerance for clocks and rounding.
PRECISION, TOLERANCE = 1, 1
MAX_ATTEMPTS = 5  # the top of the --max-attempts range: a record holding more attempts is none a loop wrote
MAX_READING = 10 ** 9  # seconds, about 31 years: no loop of this course records a monotonic reading beyond it
LINK_TAGS = (0xA000000C, 0xA0000003)  # Windows reparse tags of a symbolic link and a junction (IO_REPARSE_TAG_*)


class Schema:
    """What a loop record of one schema holds, exactly as that workspace's loop wrote it: its NAME, its fields, the
    fields inside its budget, its attempts and their decisions, its watched files, scenarios, stops and attempt
    states, the schema of its children, the files holding the code that wrote it (WRITERS: today's copies of them
    write SCHEMA), whether that version flushed a record to disk before renaming it (FLUSHED: then an empty or cut
    one is no accident of a power cut), what today's rules need and such a record cannot show (LACKS: the kind of
    the words said to a person, verifier/findings.py), and whether it read each wall time together with a monotonic
    reading
    (PAIRED: loop-run/4 on; loop-run/2 and /3 read an attempt's after its budget check and the loop's before its
    claim, so the clocks of such a record are judged on wider windows, verifier/clocks.py)."""

    def __init__(self, name, keys, attempt_keys, files, states, child_schemas, budget_keys=BUDGET_KEYS,
                 scenarios=tuple(SCRIPT), reasons=REASONS, writers=("loop_lab.py",), flushed=True,
                 decision_keys=V3_DECISION_KEYS, paired=False, lacks="", calls_model=False):
        self.name, self.keys, self.budget_keys, self.attempt_keys = name, keys, budget_keys, attempt_keys
        self.calls_model = calls_model  # a model loop: its API calls are counted, its proposals re-derived
        self.files = files
        self.scenarios, self.reasons, self.states, self.child_schemas = scenarios, reasons, states, child_schemas
        self.writers, self.flushed, self.decision_keys, self.paired = writers, flushed, decision_keys, paired
        self.lacks = lacks


STATES = ("running", "done", "unknown", "timed_out")
CURRENT = Schema(SCHEMA, LOOP_KEYS, ATTEMPT_KEYS, LOOP_FILES, STATES, ("harness-run/2",), decision_keys=DECISION_KEYS,
                 paired=True)


def schema_of(record):
    """The schema today's loop wrote RECORD in: CURRENT, or for a model loop CURRENT with the model's fields
    (budget.max_api_calls, `model`, `proposal_not_run`, each attempt's `model` entry) and its context of the 23 files
    plus the files it ran (the developer model's script among them when the local mock replayed one)."""
    if type(record) is not dict or record.get("scenario") != MODEL:
        return CURRENT
    model = record.get("model")
    script = model.get("script") if type(model) is dict else None
    ran = MODEL_PACKAGE + MODEL_CLIENT + ((*MODEL_MOCK, script) if is_workspace_file(script) else ())
    return Schema(SCHEMA, LOOP_KEYS + ("model", "proposal_not_run"), ATTEMPT_KEYS + ("model",), LOOP_FILES + ran,
                  STATES, ("harness-run/2",), budget_keys=BUDGET_KEYS + ("max_api_calls",), scenarios=(MODEL,),
                  reasons=MODEL_REASONS, decision_keys=DECISION_KEYS, paired=True, calls_model=True)


def is_workspace_file(rel):
    """REL names a JSON file inside a workspace as a record writes it (a developer model's script): a relative path
    with "/", no "." or ".." part, no drive; anything else is never hashed (it could point out of the workspace)."""
    parts = rel.split("/") if type(rel) is str else []
    return (bool(parts) and rel.endswith(".json") and rel.isprintable() and "\\" not in rel and ":" not in rel
            and all(part not in ("", ".", "..") for part in parts))


# Records of an older workspace, one entry per older schema: such a record is for a person (today's rules cannot
# check it) only when it holds nothing its own version could not write (verifier/older.py). When the schema
# changes, the schema before it joins this table with what it held (its fields, watched files, children).
OLD_SCHEMAS = {
    "loop-run/1": Schema(
        "loop-run/1", tuple(key for key in V3_KEYS if key != "id"),
        ("attempt", "candidate", "child_run", "state", "status", "feedback"), OLD_LOOP_FILES,
        ("running", "done", "unknown"), ("harness-run/1",), budget_keys=("max_attempts", "max_seconds"),
        scenarios=("repair", "stuck", "semantic", "permission"),
        reasons={**REASONS, "needs_human": ("permission_boundary", "unexpected_error")}, flushed=False,
        lacks="lacks_v1"),
    # loop-run/3 added no field: its context holds the loop's own modules beside the 16 files (V3_LOOP_FILES).
    "loop-run/2": Schema("loop-run/2", V3_KEYS, ATTEMPT_KEYS, OLD_LOOP_FILES, STATES, ("harness-run/2",),
                         lacks="lacks_v2"),
    # loop-run/4 added the segments and each decision's reading, and reads each attempt's wall time with its budget
    # check (loop-run/3 read it after the proposal and the context check).
    "loop-run/3": Schema("loop-run/3", V3_KEYS, ATTEMPT_KEYS, V3_LOOP_FILES, STATES, ("harness-run/2",),
                         lacks="lacks_v3"),
}


# --- the rules held here -------------------------------------------------------------------------

def is_loop_name(name):
    """The name rule of docs/loop/TASK.md: what loop_lab.py accepts as a loop name."""
    return (1 <= len(name) <= MAX_LOOP_NAME and not set(name) - NAME_CHARS and name[0] not in ".-"
            and not name.endswith(".") and ".." not in name and name.split(".")[0].upper() not in DEVICE_NAMES)


def scripted(scenario, feedback):
    """The sample SCENARIO's script exports next, given the FEEDBACK of the attempts before (as recorded, in order;
    None for an attempt that gave none): repair's (and slow's) bad-quote until the exporter's rules rejected one
    (ValidationError), then valid; None for the permission script, which exports nothing (docs/loop/TASK.md)."""
    if scenario in ("repair", "slow"):
        rejected = any(type(f) is dict and f.get("error_type") == "ValidationError" for f in feedback)
        return "valid" if rejected else "bad-quote"
    return {"stuck": "bad-quote", "semantic": "semantic"}.get(scenario)


def expected_outcome(scenario, budget):
    """(status, reason, attempts) the scenario must end with under these budgets (docs/loop/TASK.md)."""
    if budget["max_seconds"] == 0:
        return "budget_exhausted", "time_budget", 0
    if scenario == "permission":
        return "needs_human", "permission_boundary", 0
    needed = len(SCRIPT[scenario])
    if budget["max_attempts"] < needed:
        return "budget_exhausted", "attempt_budget", budget["max_attempts"]
    return (*ENDING[scenario], needed)


def file_sha256(path):
    """sha256 of a course file's bytes with CRLF read as LF; "missing" when there is no plain file to read
    (absent, unreadable, over its cap, or a link, FIFO or device, which is never opened)."""
    try:
        data = read_evidence(path, COURSE_FILE_CAP)
    except OSError:
        return "missing"
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def combined_fingerprint(entries):
    """sha256 of one `PATH<TAB>SHA256` line per file, sorted by path."""
    text = "".join(f"{rel}\t{entries[rel]}\n" for rel in sorted(entries))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def moment(text):
    """Seconds since the epoch of a recorded UTC time (whole seconds), or None when it is not one."""
    if type(text) is not str or not TIMESTAMP.fullmatch(text):
        return None
    try:
        return datetime.fromisoformat(text.removesuffix("Z")).replace(tzinfo=timezone.utc).timestamp()
    except ValueError:  # a month 13 or a 30 February
        return None


def is_link(path):
    """A symbolic link or a Windows junction: evidence must be the folder or file itself."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISLNK(info.st_mode) or getattr(info, "st_reparse_tag", 0) in LINK_TAGS


def is_int(value):
    return type(value) is int


def is_number(value):
    """A finite float, or an int a float holds exactly (a larger one is no recorded budget or duration)."""
    return (is_int(value) and abs(value) <= 2 ** 53) or (type(value) is float and math.isfinite(value))


def is_reading(value):
    """A monotonic reading a loop can record: seconds from its first record, never negative, and far below
    MAX_READING (a larger one overflows the clock arithmetic and no course loop runs for decades)."""
    return is_number(value) and 0 <= value <= MAX_READING


def disk_key(name):
    """NAME as a case-insensitive, Unicode-normalising disk compares it (Windows and macOS ignore case, macOS takes
    the composed and decomposed spellings of é for one name): two names with one key cannot stand side by side
    there, so where both are found one of them was made by hand."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def parent_loop(run_name):
    """The disk_key of the loop a run named NAME-NN (two ASCII digits) would belong to; None for other names."""
    match = CHILD_NAME.fullmatch(run_name)
    return disk_key(match.group(1)) if match else None


def listing(folder):
    """({name: is a link} of FOLDER's entries, the OSError that kept it from being listed or None).

    Dot entries are left out (a name being claimed is no run); an absent folder lists nothing, no error.
    """
    try:
        with os.scandir(folder) as entries:
            return {entry.name: is_link(entry.path) for entry in entries if not entry.name.startswith(".")}, None
    except FileNotFoundError:
        return {}, None
    except OSError as exc:  # no permission, or not a folder: a person must know the listing is unknown
        return {}, exc


def same_files(copy, original):
    """Whether every file of the folder COPY is the file of that name in the folder ORIGINAL, byte for byte (plain
    files of at most RECORD_CAP bytes, never a link or a folder: a loop folder holds its record alone)."""
    try:
        return all(read_evidence(Path(copy) / name, RECORD_CAP) == read_evidence(Path(original) / name, RECORD_CAP)
                   for name in os.listdir(copy))
    except OSError:  # not a plain file, over its cap, absent from ORIGINAL, or unreadable: not shown to be a copy
        return False


def kind_of(path):
    """What PATH is (cli.entry_kind's words, a link never followed); None when nothing is there."""
    try:
        return entry_kind(os.lstat(path))
    except FileNotFoundError:
        return None



# --- where records are read ----------------------------------------------------------------------

class CourseFiles:
    """The reference copy of the course files a record is compared with, read once: its children are checked
    against the same copy (`reference()`, verify_harness's Course of it), whose hashes of the 14 files a harness
    run watches serve the loop's list too (the same hashing, docs/harness/TASK.md); the others are hashed here."""

    def __init__(self, root):
        self.root = Path(root)
        self._entries = self._reference = None

    def reference(self):
        if self._reference is None:
            self._reference = verify_harness.Course(self.root)
        return self._reference

    def release(self, entries):
        """(name, schema) of the earlier release of the course whose files are ENTRIES, or None: a loop's own workspace
        knows none (its files are the ones it ran on); the teacher's reference does (classroom/check.py)."""
        return None

    def label(self):
        """Where the reference copy is, as a person at this terminal would say it (a finding of kind `course_*`)."""
        shown_root = display_path(self.root)
        return Finding("course_here") if shown_root == "." else Finding("course_at", root=shown_root)

    def entries(self):
        if self._entries is None:
            harness_files = self.reference().hashes
            self._entries = {rel: harness_files[rel] if rel in harness_files else file_sha256(self.root / rel)
                             for rel in LOOP_FILES}
        return self._entries

    def entries_for(self, files, workspace_root):
        """The hashes of FILES, a model loop's context: the course's for the course's own files, and for a developer
        model of the learner's own (a script the course does not ship) the one in WORKSPACE_ROOT, where it ran."""
        entries = self.entries()
        course = set(MODEL_PACKAGE + MODEL_CLIENT + MODEL_MOCK + SHIPPED_MODELS)
        return {rel: entries[rel] if rel in entries else file_sha256((self.root if rel in course else
                                                                      Path(workspace_root)) / rel) for rel in files}


class Workspace:
    """A folder holding loop-runs/ and runs/: each is listed once, and indexed, for all its loops.

    The indexes keep a check of many loops linear: a loop's children (runs/NAME-NN in any case) and the
    loop folders whose names differ only in case are looked up, never searched for.
    """

    def __init__(self, root, course):
        self.root, self.course = Path(root), course
        self._listed = {}  # folder -> ({name: is a link}, OSError or None)
        self._children = self._same_names = self._problems = self._shown_root = None

    def show(self, rel):
        """ROOT/REL as the person types it from here: the root as display_path says it, then REL as recorded."""
        if self._shown_root is None:
            self._shown_root = display_path(self.root)
        return os.path.normpath(os.path.join(self._shown_root, rel))

    def listed(self, folder):
        if folder not in self._listed:
            self._listed[folder] = listing(self.root / folder)
        return self._listed[folder]

    def runs(self):
        return self.listed("runs")[0]

    def loops(self):
        return self.listed("loop-runs")[0]

    def runs_unreadable(self):
        """The OSError that kept runs/ from being listed (its children are then unknown, not missing), or None."""
        return self.listed("runs")[1]

    def children(self, loop_name):
        """runs/ entries named NAME-NN for LOOP_NAME in any case or Unicode spelling (disk_key), as disks hold them."""
        if self._children is None:
            self._children = {}
            for name in sorted(self.runs()):
                self._children.setdefault(parent_loop(name), []).append(name)
        return self._children.get(disk_key(loop_name), [])

    def orphans(self):
        """{loop name, as its children spell it: [child names]} of the runs/NAME-NN whose loop has no folder in
        loop-runs/ in any case or spelling: what is left of a loop folder deleted or moved (or, rarely, lesson 13's
        runs named so)."""
        self.children("")
        loops = {disk_key(name) for name in self.loops()}
        return {names[0].rsplit("-", 1)[0]: names for key, names in sorted(
            (key, names) for key, names in self._children.items() if key is not None and key not in loops)}

    def same_name_loops(self, loop_name):
        """The other loop folders a case-insensitive, normalising disk would take for LOOP_NAME's own."""
        if self._same_names is None:
            self._same_names = {}
            for name in sorted(self.loops()):
                self._same_names.setdefault(disk_key(name), []).append(name)
        return [name for name in self._same_names.get(disk_key(loop_name), []) if name != loop_name]

    def links_problem(self):
        """The entries of loop-runs/ and runs/ that are links, as one problem of the whole workspace (the class check
        fails a submission holding one: no program of the course makes a link, and it may show another's evidence)."""
        links = [self.show(f"{folder}/{name}") for folder in ("loop-runs", "runs")
                 for name, linked in sorted(self.listed(folder)[0].items()) if linked]
        return Finding("workspace_links", links=links) if links else None

    def problems(self):
        """The record folders themselves must be folders of this workspace: not links to evidence kept
        elsewhere, not a file, FIFO or device where the folder belongs (never opened then). Looked at once."""
        if self._problems is None:
            self._problems = self.folder_problems()
        return list(self._problems)

    def folder_problems(self):
        problems = []
        for folder in ("loop-runs", "runs"):
            try:
                kind = kind_of(self.root / folder)
            except OSError:  # the workspace itself cannot be looked into: each loop says what it cannot read
                continue
            if kind in ("符号链接", "目录联接"):
                problems.append(Finding("evidence_folder_link", folder=self.show(folder)))
            elif kind not in (None, "文件夹"):
                problems.append(Finding("evidence_folder_not_folder", folder=self.show(folder), entry=kind))
        return problems



def child_state(child):
    """How far the child's own record got, as said to a person (a finding of kind `child_state*`)."""
    if child["status"] is None:
        return Finding("child_state_none")
    return Finding("child_state", status=child["status"])


def read_record_file(path):
    """(the record in PATH, the transport changes undone to read it: "BOM", "CRLF"), read as hostile input.

    Only a plain file of at most RECORD_CAP bytes is read (a link, FIFO, device or folder is never opened).
    Raises OSError (cli.NotRegularFile, cli.TooLarge, FileNotFoundError, PermissionError ...) or
    cli.RecordError: not strict JSON, empty, cut, too deep, or line ends partly changed (kind "mixed"),
    which no transport does (it converts a whole file) and an editor does. The top level may be anything.
    """
    data = read_evidence(path, RECORD_CAP)
    record = loads_record(data)
    if line_endings(data) == "mixed":
        raise RecordError(said("mixed_line_ends"), "mixed")
    return record, verify_harness.undo_transport(data)[1]


def child_view(child_dir):
    """What the loop summary must agree with, taken from the child's own run.json."""
    try:
        record, _ = read_record_file(child_dir / "run.json")
    except (OSError, ValueError):  # said by verify_harness, which checks the child
        record = None
    record = record if type(record) is dict else {}
    given, error = record.get("input"), record.get("error")
    error = error if type(error) is dict else None
    feedback = error and {"error_type": error.get("type"), "message": error.get("message")}
    sha256 = given.get("sha256") if type(given) is dict else None
    return {"run": record.get("run"), "sample": record.get("sample"), "sha256": sha256, "status": record.get("status"),
            "feedback": feedback, "key": repr((record.get("sample"), sha256, feedback)),
            "started_at": record.get("started_at"), "finished_at": record.get("finished_at"),
            "duration": record.get("duration_seconds"), "context": record.get("context")}


# --- an attempt's decision and timeout (loop-run/2 on) ---------------------------------------------

# What the evidence of one attempt can call for (docs/loop/TASK.md「每一轮的顺序」): go on with the
# feedback, or one of these stops. Budget and permission stops come at the next round's checks instead.
DECISION_STOPS = {"mechanical_pass": ("needs_review", "mechanical_pass"),
                  "repeated_failure": ("stalled", "repeated_failure"),
                  "unexpected_error": ("needs_human", "unexpected_error"),
                  "attempt_timeout": ("needs_human", "attempt_timeout")}
CONTINUE = ("continue", "first_failure")
UNKNOWN_GOES_ON = ("continue", "outcome_unknown")  # a resume found its outcome unknown: it counts, no feedback
DECISIONS = (CONTINUE, UNKNOWN_GOES_ON, *(("stop", reason) for reason in DECISION_STOPS))
UNDECIDED = ("running", "interrupted", "needs_human")  # a record whose last attempt may lack its decision
TIMEOUT_RANGE = (0.1, 300)  # --attempt-timeout, in seconds
ROUNDING = 0.001  # offsets and durations are recorded to 3 decimals


def decision_pair(decision):
    """(next, reason) of a recorded decision; None for no decision."""
    return None if decision is None else (decision["next"], decision["reason"])
