"""The loop verifier's own copy of the rules, and how it reads a loop record and its shape.

Part of verify_loop (the command line); loop_check.py judges one loop with what is here and
class_check.py a whole class. Nothing here imports loop_lab.py, harness.py or export_review.py: the
checked programs never vouch for themselves. The rules are written from docs/harness/TASK.md and
docs/loop/TASK.md: the watched-file lists (`WATCHED_FILES`, `LOOP_FILES`; a test compares them with
the document), the name rule, the scenario table, the file hashing and the combined fingerprint, the
timestamp format and the shape of a loop record. What it shares: cli.py's plumbing (strict JSON
reading, paths shown from the current folder) and verify_harness's record reader.
"""
import hashlib
import json
import math
import os
import re
import stat
from datetime import datetime, timezone
from pathlib import Path

import verify_harness
from cli import display_path

# The 14 files a harness run depends on, as docs/harness/TASK.md lists them, and the loop's 16.
WATCHED_FILES = (
    "harness.py", "verify_harness.py", "export_review.py", "verify_export.py",
    "AGENTS.md", "docs/harness/TASK.md",
    "samples/valid.json", "samples/bad-quote.json", "samples/semantic.json",
    "project/notes/A01.md", "project/notes/A02.md", "project/notes/A03.md",
    "project/notes/A05.md", "project/notes/A07.md",
)
LOOP_FILES = WATCHED_FILES + ("loop_lab.py", "docs/loop/TASK.md")
SAMPLES = ("valid", "bad-quote", "semantic")
# The name rule of docs/loop/TASK.md: a loop's children are NAME-01 ... (a run name has at most 64 characters).
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
DEVICE_NAMES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}
MAX_LOOP_NAME = 61
CHILD_NAME = re.compile(r"(.+)-[0-9]{2}")  # NAME-NN, two ASCII digits: the loop's name is what comes before

# What each scenario's script exports, in order, and how it ends when the budgets allow it.
SCRIPT = {"repair": ("bad-quote", "valid"), "stuck": ("bad-quote", "bad-quote"),
          "semantic": ("semantic",), "permission": ()}
# What the permission scenario's script proposes instead of an export (and the loop must not run).
BLOCKED = {"permission": ("publish", "external-website")}
ENDING = {"repair": ("needs_review", "mechanical_pass"), "stuck": ("stalled", "repeated_failure"),
          "semantic": ("needs_review", "mechanical_pass"), "permission": ("needs_human", "permission_boundary")}
REASONS = {"running": (None,), "needs_review": ("mechanical_pass",), "stalled": ("repeated_failure",),
           "budget_exhausted": ("attempt_budget", "time_budget"),
           "needs_human": ("permission_boundary", "unexpected_error"),
           "interrupted": ("keyboard_interrupt", "terminated")}
DEFAULT_BUDGET = {"max_attempts": 3, "max_seconds": 30}
# The lesson's six cases: (name, scenario, budget). Other budget values stay at their defaults.
CASES = (("repair", "repair", {}), ("stuck", "stuck", {}),
         ("repair --max-attempts 1", "repair", {"max_attempts": 1}),
         ("repair --max-seconds 0", "repair", {"max_seconds": 0}),
         ("semantic", "semantic", {}), ("permission", "permission", {}))

LOOP_KEYS = ("schema", "run", "scenario", "budget", "status", "reason", "error_type", "semantic_review",
             "actual_api_calls", "context", "attempts", "blocked_proposal", "handoff", "elapsed_seconds",
             "started_at", "finished_at")
ATTEMPT_KEYS = ("attempt", "candidate", "child_run", "state", "status", "feedback")
HANDOFF_KEYS = ("stopped_at", "done", "inspect", "decide")
CHILD_STATUSES = ("running", "needs_review", "failed", "needs_human")
SHA256 = re.compile("[0-9a-f]{64}")
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
MIN_DECISION = 10  # characters: "请处理" is not a decision a person can act on
# Timestamps are whole seconds; beyond that precision, 1 s of tolerance for clocks and rounding.
PRECISION, TOLERANCE = 1, 1
LINK_TAGS = (0xA000000C, 0xA0000003)  # Windows reparse tags of a symbolic link and a junction (IO_REPARSE_TAG_*)


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
    """sha256 of a file's bytes with CRLF read as LF; "missing" when there is no file to read."""
    try:
        with open(path, "rb") as file:
            data = file.read()
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


def shown(value):
    """A value as the record's reader sees it in the file (JSON), not as Python prints it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def visible(text):
    """TEXT on one line as a person must see it: a newline, a control or an invisible character (in a folder
    name a student chose) is shown as its escape, so it cannot fake a line, a table row or a look-alike name."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text))



def parent_loop(run_name):
    """The loop a run named NAME-NN (two ASCII digits) would belong to, in lower case; None for other names."""
    match = CHILD_NAME.fullmatch(run_name)
    return match.group(1).lower() if match else None


def listing(folder):
    """{name: is a link} of FOLDER's entries, dot entries left out (a name being claimed is no run)."""
    try:
        with os.scandir(folder) as entries:
            return {entry.name: is_link(entry.path) for entry in entries if not entry.name.startswith(".")}
    except OSError:
        return {}



# --- where records are read ----------------------------------------------------------------------

class CourseFiles:
    """The reference copy of the course files a record is compared with; hashed once."""

    def __init__(self, root):
        self.root = Path(root)
        self._entries = None

    def label(self):
        """Where the reference copy is, as a person at this terminal would say it."""
        shown_root = display_path(self.root)
        return "老师工作区（当前文件夹）里的课程文件" if shown_root == "." else f"老师工作区 {shown_root} 里的课程文件"

    def entries(self):
        if self._entries is None:
            self._entries = {rel: file_sha256(self.root / rel) for rel in LOOP_FILES}
        return self._entries


class Workspace:
    """A folder holding loop-runs/ and runs/: its listings are read once for all its loops."""

    def __init__(self, root, course):
        self.root, self.course = Path(root), course
        self._runs = self._loops = None

    def show(self, rel):
        return display_path(self.root / rel)

    def runs(self):
        if self._runs is None:
            self._runs = listing(self.root / "runs")
        return self._runs

    def loops(self):
        if self._loops is None:
            self._loops = listing(self.root / "loop-runs")
        return self._loops

    def children(self, loop_name):
        """runs/ entries named NAME-NN for LOOP_NAME in any case, as a name is claimed."""
        return sorted(name for name in self.runs() if parent_loop(name) == loop_name.lower())

    def same_name_loops(self, loop_name):
        return sorted(name for name in self.loops() if name.lower() == loop_name.lower() and name != loop_name)

    def problems(self):
        """The record folders themselves must not be links to evidence kept elsewhere."""
        return [f"{self.show(folder)} 是符号链接或联接点：证据必须就在这个工作区里，链接可能指向别人的记录。"
                for folder in ("loop-runs", "runs") if is_link(self.root / folder)]



def child_state_text(child):
    """How far the child's own record got, as said to a person."""
    if child["status"] is None:
        return "run.json 不存在或读不出"
    return f"run.json 为 {child['status']}"


def child_view(child_dir):
    """What the loop summary must agree with, taken from the child's own run.json."""
    try:
        record = verify_harness.read_record_json(child_dir / "run.json")
    except (OSError, ValueError, RecursionError):
        record = None
    record = record if type(record) is dict else {}
    given, error = record.get("input"), record.get("error")
    error = error if type(error) is dict else None
    feedback = error and {"error_type": error.get("type"), "message": error.get("message")}
    sha256 = given.get("sha256") if type(given) is dict else None
    return {"run": record.get("run"), "sample": record.get("sample"), "sha256": sha256, "status": record.get("status"),
            "feedback": feedback, "key": repr((record.get("sample"), sha256, feedback)),
            "started_at": record.get("started_at"), "finished_at": record.get("finished_at")}


# --- the shape of a loop-run/1 record ------------------------------------------------------------

def shape_problems(record, name):
    """Types and fixed values of every field of a loop-run/1 record (Chinese, naming the field)."""
    if type(record) is not dict:
        return ["loop.json 应为一个 JSON 对象（loop-run/1 记录）。"]
    missing = [key for key in LOOP_KEYS if key not in record]
    if missing:
        return [f"loop.json 缺少字段：{'、'.join(missing)}。"]
    problems = [message for ok, message in field_checks(record, name) if not ok]
    if problems:
        return problems
    attempts = record["attempts"]
    found = (attempt_problem(number, entry, name, record["status"], number == len(attempts))
             for number, entry in enumerate(attempts, 1))
    first = next((problem for problem in found if problem), None)  # later ones follow from the first
    return [first] if first else []


def field_checks(record, name):
    """(holds, message) for every top-level field of a loop-run/1 record."""
    status, reason = record["status"], record["reason"]
    budget, context = record["budget"], record["context"]
    known_status = type(status) is str and status in REASONS
    return [
        (record["schema"] == "loop-run/1", f"schema 是 {shown(record['schema'])}，应为 loop-run/1。"),
        (record["run"] == name and is_loop_name(name),
         f"run 是 {shown(record['run'])}，与目录名 {shown(name)} 不符（或不是合法的循环名）。"),
        (type(record["scenario"]) is str and record["scenario"] in SCRIPT,
         f"scenario 是 {shown(record['scenario'])}，不是已知情景（{'、'.join(SCRIPT)}）。"),
        (budget_ok(budget), f"budget 是 {shown(budget)}：max_attempts 应为 1-5 的整数，max_seconds 应为 0-300 秒。"),
        (known_status, f"status 是 {shown(status)}，不是循环的状态（{'、'.join(REASONS)}）。"),
        (not known_status or reason in REASONS[status], f"reason 是 {shown(reason)}，与 status {shown(status)} 不配。"),
        (error_type_ok(record["error_type"], reason),
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


def error_type_ok(error_type, reason):
    """A name for an unexpected_error stop; null for every other stop (json.dumps of None, nothing else)."""
    if reason == "unexpected_error":
        return type(error_type) is str
    return error_type is None


def budget_ok(budget):
    return (type(budget) is dict and is_int(budget.get("max_attempts")) and 1 <= budget["max_attempts"] <= 5
            and is_number(budget.get("max_seconds")) and 0 <= budget["max_seconds"] <= 300)


def context_ok(context):
    if type(context) is not dict or not is_int(context.get("files")) or context["files"] != len(LOOP_FILES):
        return False
    entries = context.get("entries")
    if type(entries) is not dict or sorted(entries) != sorted(LOOP_FILES) or not all(
            type(sha) is str and (sha == "missing" or SHA256.fullmatch(sha)) for sha in entries.values()):
        return False
    return combined_fingerprint(entries) == context.get("fingerprint")


def timestamps_ok(started, finished, status):
    if moment(started) is None:
        return False
    if status == "running":
        return finished is None
    return moment(finished) is not None and moment(finished) >= moment(started)


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


def attempt_problem(number, entry, name, status, last):
    """The shape of attempt NUMBER; attempts are numbered 1..n in order, each with its own child."""
    where = f"attempts 第 {number} 项"
    if type(entry) is not dict or any(key not in entry for key in ATTEMPT_KEYS):
        return f"{where} 缺少字段（应有 {'、'.join(ATTEMPT_KEYS)}）。"
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
                      "unknown": last and status in ("interrupted", "needs_human")}
    if type(state) is not str or not allowed_states.get(state, False):
        return f"{where} 的 state 是 {shown(state)}：只有最后一次尝试可以是 running（记录仍在进行）或 unknown（被中断或意外停止）。"
    finished_child = entry["status"] in CHILD_STATUSES and entry["status"] != "running"
    if (state == "done") != finished_child or (state != "done" and entry["status"] is not None):
        return f"{where} 的 status 是 {shown(entry['status'])}，与 state {shown(state)} 不配。"
    return None
