"""Independent check of lesson-14 loop runs, one at a time or a whole class's submissions.

    python3 verify_loop.py loop-runs/NAME [loop-runs/OTHER ...]
    python3 verify_loop.py --class SUBMISSIONS [--report FILE.md] [--csv FILE.csv]
    exit 0 every run (every student) passes, 1 otherwise, 2 bad arguments

Does each stop follow from the evidence it left? This file does not import loop_lab.py,
harness.py or export_review.py: the checked programs never vouch for themselves. It holds its
own copies of the rules it checks against, written from docs/harness/TASK.md and
docs/loop/TASK.md: the watched-file lists (`WATCHED_FILES`, `LOOP_FILES`; a test compares them
with the document), the name rule, the scenario table, the file hashing and the combined
fingerprint. What it shares: cli.py's plumbing (strict JSON reading, paths shown from the current
folder, Chinese arguments, output) and verify_harness.verify_run, the lesson-13 verifier, which
checks each child run; nothing else.

A loop folder's workspace root is the folder holding its `loop-runs/`: its children are read
there. The course files (notes, samples, watched files) are read there too, except in a class
check, where they come from the workspace holding this file, never from a submission.
A mid-run time stop, an interrupt, an unexpected error, a record still `running` or a folder
without a readable loop.json cannot be judged against the table: `needs_human`, saying what to
inspect. Dot entries under loop-runs/ and runs/ (a name being claimed) are not runs.
A class check never writes its report or CSV inside SUBMISSIONS or over a reference course file,
and shows every name a student chose with its control characters escaped (no faked lines or rows).
"""
try:  # Ctrl-C while Python is still loading this script: a Chinese line and 130, never a traceback
    import contextlib
    import hashlib
    import json
    import math
    import os
    import re
    import stat
    from datetime import datetime, timezone
    from pathlib import Path

    import verify_harness
    from cli import (EXIT_OK, EXIT_STOP, ChineseArgumentParser, DuplicateKeyError, display_path, print_json, run,
                     say, use_safe_console)
except KeyboardInterrupt:
    if __name__ != "__main__":
        raise
    import sys
    sys.stderr.write("已中断：还没有开始核对，什么都没有读写。\n")  # the console's encoding; escapes where it has no Chinese
    raise SystemExit(130) from None

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


def table_cell(text):
    return visible(text).replace("|", "\\|")


def spreadsheet_cell(text):
    """A CSV cell Excel shows as text: one starting with = + - @ would be run as a formula."""
    text = visible(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


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


# --- a whole class -------------------------------------------------------------------------------

def find_students(submissions):
    """(student folders, skipped (path, why)) in SUBMISSIONS, in code-point order of their names."""
    students, skipped = [], []
    try:
        names = sorted(os.listdir(submissions))
    except OSError as exc:  # no permission to list it: no student can be read
        return [], [(submissions, f"无法列出里面的内容（{type(exc).__name__}），请确认有读取权限")]
    for name in names:
        path = submissions / name
        if os.path.isdir(path / "loop-runs") or (is_link(path) and os.path.isdir(path)):
            students.append(path)  # a student folder that is a link is listed too, and fails
        elif os.path.isdir(path):
            skipped.append((path, "里面没有 loop-runs/ 文件夹" + deeper_hint(path)))
        else:
            skipped.append((path, "不是文件夹"))
    return students, skipped


def deeper_hint(folder):
    """Where a zip put the records one level too deep, if it did."""
    try:
        nested = sorted(entry.name for entry in os.scandir(folder)
                        if entry.is_dir() and os.path.isdir(os.path.join(entry.path, "loop-runs")))
    except OSError:
        return ""
    if not nested:
        return ""
    return f"（在更深一层的 {display_path(folder / nested[0])} 里找到了：请把 loop-runs/ 和 runs/ 直接放在学生文件夹下）"


def check_student(folder, course):
    """One student's summary line (with the loops' own results kept for the report) and stray entries."""
    if is_link(folder):
        refused = f"{display_path(folder)} 是符号链接或联接点：提交必须是学生自己的文件夹，没有核对里面的内容。"
        return student_summary(folder.name, [], [refused]), []
    workspace = Workspace(folder, course)
    loops, strays = [], []
    for name, linked in sorted(workspace.loops().items()):
        path = folder / "loop-runs" / name
        if linked or os.path.isdir(path):
            loops.append(check_loop(path, workspace).result())
        else:
            strays.append((path, "不是循环目录（loop-runs/ 里只应有循环文件夹）"))
    return student_summary(folder.name, loops, workspace.problems()), strays


def case_of(loop):
    """The lesson case a loop belongs to: its scenario and budget equal that row exactly, or None."""
    budget = loop["budget"] if type(loop["budget"]) is dict else {}
    recorded = (loop["scenario"], budget.get("max_attempts"), budget.get("max_seconds"))
    for case, scenario, options in CASES:
        wanted = {**DEFAULT_BUDGET, **options}
        if recorded == (scenario, wanted["max_attempts"], wanted["max_seconds"]):
            return case
    return None


def case_state(loops):
    """fail if a loop of the case fails, else pass if one passes, else needs_human, else missing."""
    results = {loop["result"] for loop in loops}
    for state in ("fail", "pass", "needs_human"):
        if state in results:
            return state
    return "missing"


def student_summary(student, loops, student_problems):
    cases = {case: case_state([loop for loop in loops if case_of(loop) == case]) for case, _, _ in CASES}
    missing = [case for case, state in cases.items() if state == "missing"]
    problems = list(student_problems)
    problems += [f"{loop['folder']}：{problem}" for loop in loops for problem in loop["problems"]]
    if not student_problems:  # a refused submission is not incomplete: it was not read
        problems += [f"缺少情景「{case}」：没有 scenario 与预算恰好是这一行的循环。" for case in missing]
    results = {loop["result"] for loop in loops}
    if student_problems or "fail" in results:
        result = "fail"
    elif "needs_human" in results:
        result = "needs_human"
    elif missing:
        result = "incomplete"
    else:
        result = "pass"
    return {"student": student, "result": result, "cases": cases, "loops": len(loops), "problems": problems,
            "detail": {"loops": loops, "student_problems": list(student_problems), "missing": missing}}


def class_table(students):
    """The student x case table, as Markdown (readable as plain text on a console too)."""
    header = ["学生", "结果", *(case for case, _, _ in CASES), "循环数"]
    rows = [[s["student"], s["result"], *s["cases"].values(), str(s["loops"])] for s in students]
    return ["| " + " | ".join(map(table_cell, cells)) + " |" for cells in [header, ["---"] * len(header), *rows]]


def class_totals(students):
    states = ("pass", "incomplete", "fail", "needs_human")
    counts = {state: sum(student["result"] == state for student in students) for state in states}
    return (f"全班 {len(students)} 人：pass {counts['pass']}，incomplete {counts['incomplete']}，"
            f"fail {counts['fail']}，needs_human {counts['needs_human']}。")


def student_section(student):
    """The report's section of one student: each loop's problems with the paths to look at."""
    detail = student["detail"]
    lines = [f"## {visible(student['student'])}：{student['result']}", ""]
    lines += [f"- {visible(problem)}" for problem in detail["student_problems"]]
    for loop in detail["loops"]:
        case = case_of(loop) or "不属于六个情景，不计入"
        if loop["result"] == "pass" and case_of(loop):
            continue
        lines.append(f"- `{visible(loop['folder'])}`（{case}）：{loop['result']}；查看 "
                     + "、".join(f"`{visible(path)}`" for path in loop["paths"]))
        lines += [f"  - {visible(problem)}" for problem in loop["problems"]]
    if not detail["student_problems"]:
        lines += [f"- 缺少情景「{case}」：请学生运行这一行的命令后重新提交。" for case in detail["missing"]]
    if len(lines) == 2:
        lines.append("六个情景都有通过的循环，没有问题。")
    return lines + [""]


def class_report(submissions, course, students):
    lines = [f"# 全班核对：{visible(display_path(submissions))}", "",
             f"对照的是{course.label()}（笔记、样例、受监视文件），不用学生提交里的副本。", "",
             class_totals(students), "", *class_table(students), ""]
    for student in students:
        lines += student_section(student)
    return "\n".join(lines).rstrip("\n") + "\n"


def class_csv(students):
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["student", "result", *(case for case, _, _ in CASES), "loops"])
    for student in students:
        writer.writerow([spreadsheet_cell(student["student"]), student["result"], *student["cases"].values(),
                         student["loops"]])
    return out.getvalue()


def write_text_atomic(path, text, encoding):
    """A derived report replaces the previous one whole: a reader never sees half of it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(text.encode(encoding))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):  # nothing half-written stays behind
            tmp.unlink()
        raise


def write_outputs(submissions, course, results, report, csv_file):
    """--report and --csv; False (said in Chinese) when one cannot be written."""
    outputs = ((report, lambda: class_report(submissions, course, results), "utf-8"),
               (csv_file, lambda: class_csv(results), "utf-8-sig"))
    for target, render, encoding in outputs:
        if not target:
            continue
        try:
            write_text_atomic(target, render(), encoding)
        except OSError as exc:
            say(f"无法写出 {display_path(Path(target))}（{exc.strerror or type(exc).__name__}）：核对结果已打印在上面，"
                "请换一个可以写入的路径再运行一次。")
            return False
    return True


def say_skipped(strays):
    for path, why in strays:
        say(f"跳过 {visible(display_path(path))}：{visible(why)}。")


def say_class(students, strays):
    say_skipped(strays)
    say("\n".join(class_table(students)))
    for student in students:
        if student["problems"]:
            say(f"{visible(student['student'])}：{student['result']}"
                + "".join(f"\n  - {visible(p)}" for p in student["problems"]))
    say(class_totals(students))


def check_class(parser, submissions, report, csv_file):
    """`--class`: every student folder of SUBMISSIONS against the course files beside this file."""
    course = CourseFiles(Path(__file__).resolve().parent)
    students, skipped = find_students(submissions)
    if not students:
        say_skipped(skipped)
        parser.error(f"{display_path(submissions)} 里没有学生的提交：每个学生一个文件夹，里面直接放 loop-runs/ 和 runs/"
                     "（如果给的是一个学生的工作区，请把它放进以学生命名的文件夹）。")
    results, strays = [], list(skipped)
    for folder in students:
        student, stray = check_student(folder, course)
        results.append(student)
        strays += stray
    for student in results:
        print_json({key: student[key] for key in ("student", "result", "cases", "loops", "problems")})
    say_class(results, strays)
    written = write_outputs(submissions, course, results, report, csv_file)
    return EXIT_OK if written and all(student["result"] == "pass" for student in results) else EXIT_STOP


# --- the command line ----------------------------------------------------------------------------

def print_result(result, several):
    out = {key: result[key] for key in ("result", "status", "attempts", "semantic_review")}
    if several or result["result"] != "pass":
        out["run"] = result["run"]
    if result["result"] != "pass":
        out["problems"] = result["problems"]
    print_json(out)
    if result["result"] == "pass" and result["status"] == "needs_review":
        say(f"{result['folder']}：pass，停止状态 {result['status']}、{result['attempts']} 次尝试与情景预期及子运行一致；"
            "内容仍待人工审核（semantic_review: pending）。")
    elif result["result"] == "pass":
        say(f"{result['folder']}：pass，停止状态 {result['status']}、{result['attempts']} 次尝试与情景预期及子运行一致；"
            "这表示循环按预期停下了，不表示资料导出成功。")
    else:
        say(f"{visible(result['folder'])}：{result['result']}"
            + "".join(f"\n  - {visible(problem)}" for problem in result["problems"]))


def output_file_problem(text, submissions):
    path = Path(text)
    if path.resolve().is_relative_to(Path(submissions).resolve()):
        return (f"{text} 在提交目录 {display_path(submissions)} 里面：报告不能写进学生的提交（可能覆盖证据），"
                "请把它写到提交目录之外，例如当前文件夹的 全班.md。")
    reference = Path(__file__).resolve().parent
    if path.resolve() in {(reference / rel).resolve() for rel in (*LOOP_FILES, "verify_loop.py", "cli.py")}:
        return f"{text} 是老师工作区里的课程文件：报告会把它整个替换掉，请换一个报告文件名。"
    if os.path.isdir(path):  # os.path answers False where pathlib would raise (a name too long, ...)
        return f"{text} 是一个文件夹：请给出报告文件的路径，例如 class-report.md。"
    if not os.path.isdir(path.parent):
        return f"{text} 所在的文件夹不存在：请先建好它，或换一个路径。"
    return None


def parse_arguments(argv):
    parser = ChineseArgumentParser(
        description="独立核对一个或多个循环记录（loop-runs/NAME），或用 --class 核对全班的提交："
                    "按情景预期、子运行和上下文指纹重新推导结果。",
        epilog="退出码：0 每个循环都通过（--class：每个学生都 pass）；1 有循环 fail 或 needs_human"
               "（--class：有学生不是 pass）；2 参数错误（例如给的不是 loop-runs/ 下的目录，或提交目录里没有学生）；"
               "130 被 Ctrl-C 中断。",
    )
    parser.add_argument("loop_dirs", nargs="*", metavar="LOOP_DIR", help="循环目录，例如 loop-runs/repair-01")
    parser.add_argument("--class", dest="submissions", metavar="SUBMISSIONS",
                        help="全班提交所在的文件夹：每个学生一个子文件夹，里面有 loop-runs/ 和 runs/")
    parser.add_argument("--report", metavar="FILE.md", help="（与 --class 一起）写出 Markdown 报告；已有的同名文件会被替换")
    parser.add_argument("--csv", dest="csv_file", metavar="FILE.csv",
                        help="（与 --class 一起）写出 CSV 表（UTF-8 带 BOM，Excel 可直接打开）；已有的同名文件会被替换")
    args = parser.parse_args(argv)
    if args.submissions is None and (args.report or args.csv_file):
        parser.error("--report 和 --csv 只能和 --class 一起用。")
    if args.submissions is not None and args.loop_dirs:
        parser.error("--class 核对全班时不再另给循环目录：请二选一。")
    if args.submissions is None and not args.loop_dirs:
        parser.error("请给出至少一个循环目录（例如 loop-runs/repair-01），或用 --class 给出全班提交的文件夹。")
    return parser, args


def class_arguments_problem(args):
    if not os.path.isdir(args.submissions):
        return f"{args.submissions} 不是文件夹：请给出全班提交所在的文件夹。"
    outputs = [text for text in (args.report, args.csv_file) if text]
    if len(outputs) == 2 and Path(os.path.abspath(args.report)) == Path(os.path.abspath(args.csv_file)):
        return "--report 和 --csv 不能是同一个文件。"
    return next((problem for text in outputs for problem in [output_file_problem(text, args.submissions)] if problem),
                None)


def loop_folders(parser, texts):
    """The loop folders named on the command line; a claim folder (`.lock-*`) is skipped, not checked."""
    folders = []
    for text in texts:
        path = verify_harness.as_listed(text)  # a link keeps its own name: it is checked, not followed
        if not os.path.lexists(path):
            parser.error(f"{text} 不存在：请给出 loop-runs/ 下的循环目录，例如 loop-runs/repair-01（这次没有核对任何目录）。")
        if not os.path.isdir(path) or path.parent.name != "loop-runs":
            parser.error(f"{text} 不是 loop-runs/ 下的循环目录：请给出例如 loop-runs/repair-01（这次没有核对任何目录）。"
                         "用通配符时写 loop-runs/*/，只列出文件夹。")
        if path.name.startswith("."):
            say(f"跳过 {display_path(path)}：以点开头的是认领名称时的临时目录，不是循环记录。")
            continue
        folders.append(path)
    if not folders:
        parser.error("给出的目录里没有循环记录：请给出 loop-runs/ 下的循环目录，例如 loop-runs/repair-01。")
    return folders


def main(argv=None):
    use_safe_console()
    parser, args = parse_arguments(argv)
    if args.submissions is not None:
        problem = class_arguments_problem(args)
        if problem:
            parser.error(problem)
        return check_class(parser, Path(args.submissions), args.report, args.csv_file)
    folders = loop_folders(parser, args.loop_dirs)
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
