"""The loop verifier's own copy of the rules, and how it reads a loop record and its shape.

Part of verify_loop (the command line); verifier/check.py judges one loop with what is here (its clocks
with verifier/clocks.py) and classroom/check.py a whole class. Nothing here imports loop_lab.py, harness.py,
export_review.py or machinery/: the checked programs never vouch for themselves. The rules are written from
docs/harness/TASK.md and docs/loop/TASK.md: the watched-file lists (`WATCHED_FILES`, `LOOP_FILES`; a
test compares them with the document), the name rule, the scenario table, the file hashing and the
combined fingerprint, the timestamp format and the shape of a loop-run/3 record. Evidence is read as
hostile input: every path is looked at (lstat) before it is opened, only a plain file is read, and
only up to its cap. What it shares: cli.py's plumbing (capped reads of plain files, strict record
parsing, line-end helpers, paths shown from the current folder), verify_harness.undo_transport (which
changes of a whole file a transport makes), so both verifiers forgive the same ones, and verify_harness.Course
(the reference course files read once, so a loop and its children are judged against the same reading).
"""
import hashlib
import json
import math
import os
import re
import stat
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import verify_harness
from cli import RecordError, display_path, entry_kind, line_endings, loads_record, read_evidence

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
                              "machinery/progress.py")
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
DEFAULT_BUDGET = {"max_attempts": 3, "max_seconds": 30}
# The lesson's six cases: (name, scenario, budget). Other budget values stay at their defaults.
CASES = (("repair", "repair", {}), ("stuck", "stuck", {}),
         ("repair --max-attempts 1", "repair", {"max_attempts": 1}),
         ("repair --max-seconds 0", "repair", {"max_seconds": 0}),
         ("semantic", "semantic", {}), ("permission", "permission", {}))

SCHEMA = "loop-run/3"
LOOP_KEYS = ("schema", "id", "run", "scenario", "budget", "status", "reason", "error_type", "semantic_review",
             "actual_api_calls", "context", "attempts", "blocked_proposal", "handoff", "elapsed_seconds",
             "started_at", "finished_at")
ATTEMPT_KEYS = ("attempt", "candidate", "child_run", "state", "status", "feedback", "started_at", "finished_at",
                "started_offset", "finished_offset", "decision", "timeout")
BUDGET_KEYS = ("max_attempts", "max_seconds", "attempt_timeout")
HANDOFF_KEYS = ("stopped_at", "done", "inspect", "decide")
# The fields of the objects inside a record and inside an attempt (a timeout's inventory is the loop's free report).
INNER_KEYS = {"budget": BUDGET_KEYS, "context": ("files", "fingerprint", "entries"),
              "blocked_proposal": ("action", "target", "reason"), "handoff": HANDOFF_KEYS}
ATTEMPT_INNER_KEYS = {"candidate": ("action", "sample", "sha256"), "decision": ("next", "reason", "why"),
                      "timeout": ("seconds", "waited_seconds", "inventory")}
RECORD_ID = re.compile("[0-9a-f]{32}")
# The most a record or a course file may hold: an honest loop.json or run.json is a few KiB, a course file
# tens of KiB; a file over its cap is not one the course or a program wrote, and is not read beyond it.
RECORD_CAP = COURSE_FILE_CAP = 1 << 20
CHILD_STATUSES = ("running", "needs_review", "failed", "needs_human")
SHA256 = re.compile("[0-9a-f]{64}")
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
MIN_DECISION = 10  # characters: "请处理" is not a decision a person can act on
SHOWN_CHARS = 300  # of a recorded value inside a message: an honest one is far shorter
MESSAGE_CHARS = 2000  # of a message another verifier wrote (it may quote a value): the longest honest one is shorter
# Timestamps are whole seconds; beyond that precision, 1 s of tolerance for clocks and rounding.
PRECISION, TOLERANCE = 1, 1
MAX_ATTEMPTS = 5  # the top of the --max-attempts range: a record holding more attempts is none a loop wrote
SHOWN_PROBLEMS = 10  # problem lines said per loop (and per student in a class): the rest are counted, not listed
MAX_READING = 10 ** 9  # seconds, about 31 years: no loop of this course records a monotonic reading beyond it
LINK_TAGS = (0xA000000C, 0xA0000003)  # Windows reparse tags of a symbolic link and a junction (IO_REPARSE_TAG_*)


class OldSchema:
    """What a loop record of an older schema holds, exactly as that workspace's loop wrote it: its fields, the
    fields inside its budget and its attempts, its watched files, scenarios, stops and attempt states, the schema
    of its children, the files holding the code that wrote it (WRITERS: today's copies of them write SCHEMA), and
    whether that version flushed a record to disk before renaming it (FLUSHED: then an empty or cut one is no
    accident of a power cut)."""

    def __init__(self, keys, budget_keys, attempt_keys, files, scenarios, reasons, states, child_schemas,
                 writers=("loop_lab.py",), flushed=False):
        self.keys, self.budget_keys, self.attempt_keys, self.files = keys, budget_keys, attempt_keys, files
        self.scenarios, self.reasons, self.states, self.child_schemas = scenarios, reasons, states, child_schemas
        self.writers, self.flushed = writers, flushed


# Records of an older workspace, one entry per older schema: such a record is for a person (today's rules cannot
# check it) only when it holds nothing its own version could not write (verifier/older.py). When the schema
# changes, the schema before it joins this table with what it held (its fields, watched files, children).
OLD_SCHEMAS = {
    "loop-run/1": OldSchema(
        keys=tuple(key for key in LOOP_KEYS if key != "id"), budget_keys=("max_attempts", "max_seconds"),
        attempt_keys=("attempt", "candidate", "child_run", "state", "status", "feedback"), files=OLD_LOOP_FILES,
        scenarios=("repair", "stuck", "semantic", "permission"),
        reasons={**REASONS, "needs_human": ("permission_boundary", "unexpected_error")},
        states=("running", "done", "unknown"), child_schemas=("harness-run/1",)),
    # loop-run/3 added no field: its context holds the loop's own modules beside the 16 files (LOOP_FILES).
    "loop-run/2": OldSchema(
        keys=LOOP_KEYS, budget_keys=BUDGET_KEYS, attempt_keys=ATTEMPT_KEYS, files=OLD_LOOP_FILES,
        scenarios=tuple(SCRIPT), reasons=REASONS, states=("running", "done", "unknown", "timed_out"),
        child_schemas=("harness-run/2",), flushed=True),
}


# --- the rules held here -------------------------------------------------------------------------

def is_loop_name(name):
    """The name rule of docs/loop/TASK.md: what loop_lab.py accepts as a loop name."""
    return (1 <= len(name) <= MAX_LOOP_NAME and not set(name) - NAME_CHARS and name[0] not in ".-"
            and not name.endswith(".") and ".." not in name and name.split(".")[0].upper() not in DEVICE_NAMES)


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


def shown(value):
    """A value as the record's reader sees it in the file (JSON), not as Python prints it; as one_line() says it."""
    try:
        return one_line(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return one_line(str(value))


def visible(text):
    """TEXT on one line as a person must see it: a newline, a control or an invisible character (in a folder
    name a student chose) is shown as its escape, so it cannot fake a line, a table row or a look-alike name."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def one_line(text, limit=SHOWN_CHARS):
    """Recorded TEXT inside a message (or a whole message quoting one): visible(), and cut after LIMIT characters
    with its length said, so a record (up to 1 MiB) can neither fake a line (U+2028 splits a line for many
    readers) nor flood the output."""
    text = visible(text)
    return text if len(text) <= limit else f"{text[:limit]}…（共 {len(text)} 个字符）"



def disk_key(name):
    """NAME as a case-insensitive, Unicode-normalising disk compares it (Windows and macOS ignore case, macOS takes
    the composed and decomposed spellings of é for one name): two names with one key cannot stand side by side
    there, so where both are found one of them was made by hand."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def parent_loop(run_name):
    """The disk_key of the loop a run named NAME-NN (two ASCII digits) would belong to; None for other names."""
    match = CHILD_NAME.fullmatch(run_name)
    return disk_key(match.group(1)) if match else None


def at_most(lines, most=SHOWN_PROBLEMS):
    """LINES as a person is shown them: the first MOST, then one line counting the others."""
    lines = list(lines)
    if len(lines) <= most:
        return lines
    return lines[:most] + [f"…以及另外 {len(lines) - most} 条"]


def names_said(names, most=3):
    """A few NAMES, then how many there are in all: a list a person reads, however many a submission holds."""
    return "、".join(names[:most]) + (f" 等 {len(names)} 个" if len(names) > most else "")


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

    def label(self):
        """Where the reference copy is, as a person at this terminal would say it."""
        shown_root = display_path(self.root)
        return "老师工作区（当前文件夹）里的课程文件" if shown_root == "." else f"老师工作区 {shown_root} 里的课程文件"

    def entries(self):
        if self._entries is None:
            harness_files = self.reference().hashes
            self._entries = {rel: harness_files[rel] if rel in harness_files else file_sha256(self.root / rel)
                             for rel in LOOP_FILES}
        return self._entries


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
        if not links:
            return None
        return (f"{names_said(links)} 是符号链接或联接点：循环和运行的证据必须就在这个工作区里，课程的程序从不做链接，"
                "链接可能指向别人的记录。")

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
                problems.append(f"{self.show(folder)} 是符号链接或联接点：证据必须就在这个工作区里，链接可能指向别人的记录。")
            elif kind not in (None, "文件夹"):
                problems.append(f"{self.show(folder)} 是{kind}，不是文件夹：程序只会在这里建文件夹，核对时没有打开它。")
        return problems



def child_state_text(child):
    """How far the child's own record got, as said to a person."""
    if child["status"] is None:
        return "run.json 不存在或读不出"
    return f"run.json 为 {one_line(child['status'])}"


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
        raise RecordError("行尾有的是 LF、有的是 CRLF：整体转换行尾不会这样，是有人改动过其中几行", "mixed")
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
            "started_at": record.get("started_at"), "finished_at": record.get("finished_at")}


# --- an attempt's decision and timeout (loop-run/2 on) ---------------------------------------------

# What the evidence of one attempt can call for (docs/loop/TASK.md「每一轮的顺序」): go on with the
# feedback, or one of these stops. Budget and permission stops come at the next round's checks instead.
DECISION_STOPS = {"mechanical_pass": ("needs_review", "mechanical_pass"),
                  "repeated_failure": ("stalled", "repeated_failure"),
                  "unexpected_error": ("needs_human", "unexpected_error"),
                  "attempt_timeout": ("needs_human", "attempt_timeout")}
CONTINUE = ("continue", "first_failure")
DECISIONS = (CONTINUE, *(("stop", reason) for reason in DECISION_STOPS))
UNDECIDED = ("running", "interrupted", "needs_human")  # a record whose last attempt may lack its decision
TIMEOUT_RANGE = (0.1, 300)  # --attempt-timeout, in seconds
ROUNDING = 0.001  # offsets and durations are recorded to 3 decimals


def decision_pair(decision):
    """(next, reason) of a recorded decision; None for no decision."""
    return None if decision is None else (decision["next"], decision["reason"])


def decision_problem(where, decision, last, status):
    """The shape of an attempt's decision: null only where the loop may not have decided yet."""
    if decision is None:
        if last and status in UNDECIDED:
            return None
        return (f"{where} 没有记录决定（decision 为 null）：只有记录仍是 running、被中断或 needs_human 时，"
                "最后一次尝试才可以没有决定。")
    shaped = type(decision) is dict and (decision.get("next"), decision.get("reason")) in DECISIONS
    if not shaped or type(decision.get("why")) is not str or not decision["why"].strip():
        return (f"{where} 的 decision 是 {shown(decision)}：应为 {{next, reason, why}}，继续时是 continue/first_failure，"
                f"停止时是 stop 加上停止原因（{'、'.join(DECISION_STOPS)}），why 是不为空的说明。")
    return None


def attempt_timeout_ok(budget):
    """budget.attempt_timeout: null (attempts run in-process) or seconds within TIMEOUT_RANGE."""
    limit = budget.get("attempt_timeout")
    return limit is None or (is_number(limit) and TIMEOUT_RANGE[0] <= limit <= TIMEOUT_RANGE[1])


def timeout_problem(where, entry, budget):
    """A timeout is recorded exactly for a timed_out attempt, with the budget's limit, the wait and an inventory."""
    timeout, timed_out = entry["timeout"], entry["state"] == "timed_out"
    if timeout is None and not timed_out:
        return None
    if timed_out and type(timeout) is dict and is_number(timeout.get("seconds")) \
            and timeout["seconds"] == budget.get("attempt_timeout") \
            and is_number(timeout.get("waited_seconds")) and timeout["waited_seconds"] >= 0 \
            and type(timeout.get("inventory")) is dict:
        return None
    return (f"{where} 的 timeout 是 {shown(timeout)}、state 是 {shown(entry['state'])}：只有 timed_out 的尝试记录 timeout，"
            f"且必须有 seconds（等于 budget.attempt_timeout {shown(budget.get('attempt_timeout'))}）、"
            "waited_seconds 和 inventory。")


# --- the shape of a loop-run/3 record ------------------------------------------------------------

def shape_problems(record, name, schema=SCHEMA, files=LOOP_FILES):
    """(blocking, other): what is wrong with the shape of a loop-run/3 record, in Chinese naming the field.

    BLOCKING problems keep the record from being read further: the checks that follow rely on those
    fields. OTHER problems do not, so the recorded stop is still compared with the evidence. SCHEMA and FILES:
    an older schema of the same fields (loop-run/2) is shaped alike, over the watched files of its day.
    """
    if type(record) is not dict:
        return [f"loop.json 应为一个 JSON 对象（{SCHEMA} 记录）。"], []
    missing = [key for key in LOOP_KEYS if key not in record]
    if missing:
        return [f"loop.json 缺少字段：{'、'.join(missing)}。"], []
    checks, fields = field_checks(record, name, schema, files), ShownFields(record, folder=shown(name))
    blocking = [message.format_map(fields) for holds, message, blocks in checks if blocks and not holds]
    other = [message.format_map(fields) for holds, message, blocks in checks if not blocks and not holds]
    other += [problem for problem in [unknown_fields_problem("loop.json", record, LOOP_KEYS, INNER_KEYS)] if problem]
    if blocking:
        return blocking, other
    found = (attempt_problem(number, entry, record) for number, entry in enumerate(record["attempts"], 1))
    first = next((problem for problem in found if problem), None)  # later ones follow from the first
    return ([first] if first else []), other


def field_checks(record, name, schema=SCHEMA, files=LOOP_FILES):
    """(holds, message, blocks) for every top-level field of a loop-run/3 record; see shape_problems.

    A message names the record's fields as {field}: they are written out (as JSON) only for a check that fails.
    """
    status, reason = record["status"], record["reason"]
    budget, context, blocked = record["budget"], record["context"], record["blocked_proposal"]
    known_status = type(status) is str and status in REASONS
    return [
        (record["schema"] == schema, "schema 是 {schema}，应为 " + schema + "。", True),
        (type(record["id"]) is str and bool(RECORD_ID.fullmatch(record["id"])),
         "id 是 {id}：应为循环建立记录时随机生成的 32 位小写十六进制。", False),
        (record["run"] == name and is_loop_name(name), "run 是 {run}，与目录名 {folder} 不符（或不是合法的循环名）。", True),
        (type(record["scenario"]) is str and record["scenario"] in SCRIPT,
         "scenario 是 {scenario}，不是已知情景（" + "、".join(SCRIPT) + "）。", True),
        (budget_ok(budget), "budget 是 {budget}：max_attempts 应为 1-5 的整数，max_seconds 应为 0-300 秒，"
                            "attempt_timeout 为 null 或 0.1-300 秒。", True),
        (known_status, "status 是 {status}，不是循环的状态（" + "、".join(REASONS) + "）。", True),
        (not known_status or reason in REASONS[status], "reason 是 {reason}，与 status {status} 不配。", False),
        (error_type_ok(record["error_type"], reason),
         "error_type 是 {error_type}：只有 unexpected_error 才记录 error_type，且必须记录。", True),
        (record["semantic_review"] == "pending", "semantic_review 是 {semantic_review}：循环从不判断内容，只能是 pending。",
         False),
        (is_int(record["actual_api_calls"]) and record["actual_api_calls"] == 0,
         "actual_api_calls 是 {actual_api_calls}：循环不调用模型，只能是 0。", False),
        (context_ok(context, files), f"context 应记录 {len(files)} 个受监视文件的逐文件哈希，且合并指纹与它们一致。", True),
        (type(record["attempts"]) is list, "attempts 应为尝试记录的数组。", True),
        (attempts_within_range(record["attempts"]), too_many_attempts(record["attempts"]), True),
        ((blocked is None) == (reason != "permission_boundary"),
         "blocked_proposal 只在 permission_boundary 停止时记录，且那时必须记录被拦下的提议。", False),
        (blocked is None or (type(blocked) is dict and all(
            type(blocked.get(key)) is str for key in ("action", "target", "reason"))),
         "blocked_proposal 应有字符串字段 action、target、reason。", True),
        (handoff_ok(record, name), "handoff：除 needs_review 外的每个停止都要写明 stopped_at、done、inspect"
                                   "（含 loop.json 与每个子运行的 run.json）和具体的 decide（不能只说“请处理”），"
                                   "needs_review 与 running 没有 handoff。", False),
        (is_reading(record["elapsed_seconds"]),
         "elapsed_seconds 是 {elapsed_seconds}，应为不小于 0 的秒数（单调时钟的读数，诚实的循环远不到 "
         + f"{MAX_READING} 秒）。", True),
        (moment(record["started_at"]) is not None and finished_ok(record["finished_at"], status == "running"),
         "started_at 应为 UTC 时间（如 2026-01-01T00:00:00Z）；finished_at 在结束后记录，running 时为 null。", True),
    ]


def attempts_within_range(attempts):
    """Never more attempts than the top of the --max-attempts range: a longer list is judged at once, unread."""
    return type(attempts) is not list or len(attempts) <= MAX_ATTEMPTS


def too_many_attempts(attempts):
    count = len(attempts) if type(attempts) is list else 0
    return (f"attempts 有 {count} 项：--max-attempts 最多是 {MAX_ATTEMPTS}，循环从不记录更多的尝试，记录被改动过"
            "（没有逐项核对）。")


def unknown_fields_problem(where, fields, known, nested):
    """A field the loop never writes (say "result": "pass" added for a reader to see, or a look-alike key such as
    budget.Max_seconds) is no field of its record: FIELDS beside KNOWN, and inside the objects NESTED names."""
    unknown = [one_line(key) for key in fields if key not in known] + [
        f"{key}.{one_line(inner)}" for key, inner_known in nested.items() if type(fields.get(key)) is dict
        for inner in fields[key] if inner not in inner_known]
    if not unknown:
        return None
    return (f"{where} 有循环从不写的字段：{'、'.join(unknown)}：{SCHEMA} 记录里没有它们，记录被改动过；"
            "请用新名称重新运行循环，不要手改记录。")


class ShownFields(dict):
    """A record's fields as its reader sees them in the file (JSON), written out only when a message asks."""

    def __init__(self, record, **given):
        super().__init__(given)
        self.record = record

    def __missing__(self, field):
        return shown(self.record[field])


def error_type_ok(error_type, reason):
    """A name for an unexpected_error stop; null for every other stop (json.dumps of None, nothing else)."""
    if reason == "unexpected_error":
        return type(error_type) is str
    return error_type is None


def budget_ok(budget):
    return (type(budget) is dict and all(key in budget for key in BUDGET_KEYS)
            and is_int(budget["max_attempts"]) and 1 <= budget["max_attempts"] <= 5
            and is_number(budget["max_seconds"]) and 0 <= budget["max_seconds"] <= 300 and attempt_timeout_ok(budget))


def context_ok(context, files=LOOP_FILES):
    if type(context) is not dict or not is_int(context.get("files")) or context["files"] != len(files):
        return False
    entries = context.get("entries")
    if type(entries) is not dict or sorted(entries) != sorted(files) or not all(
            type(sha) is str and (sha == "missing" or SHA256.fullmatch(sha)) for sha in entries.values()):
        return False
    return combined_fingerprint(entries) == context.get("fingerprint")


def finished_ok(finished, running):
    """A finish time once finished, null while running. Its order with the start is verifier/clocks.py's to judge:
    a wall clock stepped back can honestly make it earlier."""
    return finished is None if running else moment(finished) is not None


def is_text_list(value):
    return type(value) is list and all(type(item) is str for item in value)


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
            and all(is_text_list(handoff[key]) for key in ("done", "inspect"))
            and all(type(handoff[key]) is str for key in ("stopped_at", "decide"))):
        return False
    attempts = record["attempts"] if type(record["attempts"]) is list else []
    must_inspect = {f"loop-runs/{name}/loop.json"} | {
        f"{entry['child_run']}/run.json" for entry in attempts if type(entry) is dict and "child_run" in entry}
    return (len(handoff["decide"].strip()) >= MIN_DECISION and handoff["stopped_at"].strip() != ""
            and must_inspect <= set(handoff["inspect"]))


def attempt_problem(number, entry, record):
    """The shape of attempt NUMBER; attempts are numbered 1..n in order, each with its own child."""
    name, status, last = record["run"], record["status"], number == len(record["attempts"])
    where = f"attempts 第 {number} 项"
    if type(entry) is not dict or any(key not in entry for key in ATTEMPT_KEYS):
        return f"{where} 缺少字段（应有 {'、'.join(ATTEMPT_KEYS)}）。"
    unknown = unknown_fields_problem(where, entry, ATTEMPT_KEYS, ATTEMPT_INNER_KEYS)
    if unknown:
        return unknown
    if not is_int(entry["attempt"]) or entry["attempt"] != number or entry["child_run"] != f"runs/{name}-{number:02d}":
        return (f"{where} 记录为第 {shown(entry['attempt'])} 次、子运行 {shown(entry['child_run'])}：尝试必须按 1..n 依次记录，"
                f"第 {number} 次的子运行是 runs/{name}-{number:02d}（有尝试被删除、调换了顺序，或指向了别的循环的子运行）。")
    candidate, feedback, state = entry["candidate"], entry["feedback"], entry["state"]
    if type(candidate) is not dict or candidate.get("action") != "export" \
            or candidate.get("sample") not in SAMPLES or type(candidate.get("sha256")) is not str:
        return f"{where} 的 candidate 应为 export 一个已知样例，并带 sha256。"
    if feedback is not None and (type(feedback) is not dict or sorted(feedback) != ["error_type", "message"]):
        return f"{where} 的 feedback 应为 null 或 {{error_type, message}}。"
    allowed_states = {"done": True, "running": last and status == "running",
                      "unknown": last and status in ("interrupted", "needs_human"),
                      "timed_out": last and status in ("interrupted", "needs_human")}
    if type(state) is not str or not allowed_states.get(state, False):
        return (f"{where} 的 state 是 {shown(state)}：只有最后一次尝试可以是 running（记录仍在进行）、"
                "unknown（被中断或意外停止）或 timed_out（超过单次时限）。")
    finished_child = entry["status"] in CHILD_STATUSES and entry["status"] != "running"
    if (state == "done") != finished_child or (state != "done" and entry["status"] is not None):
        return f"{where} 的 status 是 {shown(entry['status'])}，与 state {shown(state)} 不配。"
    return (attempt_times_problem(where, entry) or decision_problem(where, entry["decision"], last, status)
            or timeout_problem(where, entry, record["budget"]))


def attempt_times_problem(where, entry):
    """An attempt's wall times and monotonic offsets: both starts always, both finishes once it is done,
    neither while it runs. Their order is verifier/clocks.py's to judge."""
    finished = (entry["finished_at"], entry["finished_offset"])
    if moment(entry["started_at"]) is None or not is_reading(entry["started_offset"]):
        return (f"{where} 的 started_at 是 {shown(entry['started_at'])}、started_offset 是 "
                f"{shown(entry['started_offset'])}：应为 UTC 时间与循环第一份记录之后不小于 0 的秒数"
                f"（诚实的循环远不到 {MAX_READING} 秒）。")
    if finished == (None, None) and entry["state"] != "done":
        return None
    if moment(finished[0]) is None or not is_reading(finished[1]) or entry["state"] == "running":
        return (f"{where} 的 finished_at 是 {shown(finished[0])}、finished_offset 是 {shown(finished[1])}"
                f"（state {shown(entry['state'])}）：结束的尝试两者都记录（UTC 时间与秒数），进行中的两者都是 null。")
    return None
