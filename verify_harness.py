"""Independent check of one harness run: re-derives its status from the files it left.

    python3 verify_harness.py runs/NAME
    exit 0 pass, 1 fail or needs_human, 2 bad arguments, 130 Ctrl-C

It trusts nothing the run says about itself, and reads a submission as hostile input: every
evidence path is looked at (lstat) before it is opened, and only a plain file is read, up to its
cap (a link, junction, FIFO, device, socket, or a folder where a file belongs fails unopened).
run.json must be a strict JSON object (a key given twice, NaN or Infinity, an empty or cut file
fails) of schema harness-run/2 with each step written exactly as the harness writes it; the
input copy and the artifact are hashed again; the steps must be the ones the status implies; the
artifact is re-checked by verify_export.py (not by the exporter); a recorded rule failure must be
reproduced by those independent rules; and the recorded fingerprint is compared with the course
files (a difference names the files and is never rewritten). A consistent run passes whatever
its status: a correctly recorded `failed` run passes.

Only what no honest machine produces fails. What one can produce is said for a person instead:
evidence whose line ends were converted wholesale to CRLF, or that gained a BOM, is the same
content (pass, with a note); a wall clock that one step explains (NTP, a suspended laptop) is
`needs_human`; so are an unreadable file, a record of an older workspace, and a `needs_human` or
still `running` run. `verify_run()` is the function other verifiers call; a `Course` given to it is the
reference copy of the course files, each read once, so many runs are judged against one fixed reference.

Shared with other files: cli.py plumbing (safe capped reads, strict record parsing, line-end
helpers, console, arguments) and verify_export.py (the other verifier). Nothing of harness.py or
export_review.py is imported: the watched-file list (the one in docs/harness/TASK.md;
tests/test_watched_lists.py compares every copy), the record format, the samples and the
fingerprint hashing are this file's own.
"""
import cli  # first: it refuses a Python older than 3.11 before anything else runs

import hashlib
import json
import os
import re
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import verify_export

WATCHED_FILES = (
    "harness.py", "verify_harness.py", "export_review.py", "verify_export.py",
    "AGENTS.md", "docs/harness/TASK.md",
    "samples/valid.json", "samples/bad-quote.json", "samples/semantic.json",
    "project/notes/A01.md", "project/notes/A02.md", "project/notes/A03.md",
    "project/notes/A05.md", "project/notes/A07.md",
)
SAMPLES = ("valid", "bad-quote", "semantic")
# The watched files whose content the independent re-checks read: the notes a card cites and the rules of the
# exporter and of verify_export.py. A run made on other copies of them cannot be re-checked against these.
CONTENT_FILES = tuple(rel for rel in WATCHED_FILES if rel.startswith("project/notes/")) + ("export_review.py",
                                                                                         "verify_export.py")
SCHEMA = "harness-run/2"
RUN_KEYS = ("schema", "id", "run", "sample", "status", "semantic_review", "input", "context", "steps",
            "error", "artifact", "actual_api_calls", "started_at", "finished_at", "duration_seconds")
# The fields each older schema's run.json holds, exactly: such a run is for a person, unless it holds what its
# version never wrote (harness-run/2 added the id and the monotonic duration).
OLD_SCHEMAS = {"harness-run/1": tuple(key for key in RUN_KEYS if key not in ("id", "duration_seconds"))}
ARTIFACT_FILES = ("cards.json", "review.md")
INPUT_COPY = "input/candidate.json"
FOLDERS = ("", "input", "artifact")
# Each evidence file and the most it may hold: the harness writes a few kilobytes, a candidate is at most
# 20 cards of at most about 1000 characters; a file over its cap is not one a run wrote.
CAPS = {"run.json": 1 << 20, INPUT_COPY: 1 << 20, "artifact/cards.json": 1 << 20, "artifact/review.md": 1 << 20}
COURSE_FILE_CAP = 1 << 20
TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z", re.ASCII)
RUN_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)
# Timestamps are whole seconds: their difference is within 1 s of the true span, and 1 s more is tolerated.
CLOCK_TOLERANCE = 2
MAX_DURATION = 10 ** 9  # seconds, about 31 years: no run lasts longer (and 1e400 reads as infinity)
BOM = b"\xef\xbb\xbf"


def content_sha256(path):
    """sha256 of a course file's bytes with CRLF -> LF; "missing" when there is no plain file to read."""
    try:
        data = cli.read_evidence(path, COURSE_FILE_CAP)
    except OSError:  # absent, unreadable, too large, or not a plain file (never opened then)
        return "missing"
    return sha256(cli.to_lf(data))


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def combined(entries):
    """sha256 of the UTF-8 text made of one `PATH<TAB>SHA256<LF>` line per file, sorted by path."""
    return sha256("".join(f"{rel}\t{entries[rel]}\n" for rel in sorted(entries)).encode("utf-8"))


def entry_kind(path):
    """What PATH is, never following a link (cli.entry_kind's words); None when there is nothing there."""
    try:
        kind = cli.entry_kind(os.lstat(path))
    except FileNotFoundError:
        return None
    isjunction = getattr(os.path, "isjunction", None)  # Python 3.12+; 3.11 reads the reparse tag itself
    return "目录联接" if isjunction and kind == "文件夹" and isjunction(path) else kind


def as_listed(path):
    """PATH made absolute, its last part spelled as its folder lists it: where names ignore case (Windows,
    macOS) `runs/Demo-01` opens runs/demo-01, and the record names the folder as it was made."""
    path = Path(os.path.abspath(path))  # not resolved: a link keeps its own name
    try:
        names = os.listdir(path.parent)
    except OSError:
        return path
    same = [name for name in names if name.lower() == path.name.lower()]
    return path.with_name(same[0]) if path.name not in names and len(same) == 1 else path


FAIL, HUMAN = "fail", "needs_human"


class Course:
    """The course files (notes, samples, watched files) under ROOT as one fixed reference: the watched files are
    hashed and the notes folder looked at once, when it is made, and every run checked against it is judged
    against those same readings."""

    def __init__(self, root):
        self.root = Path(root)
        self.hashes = {rel: content_sha256(self.root / rel) for rel in WATCHED_FILES}
        self.odd_note = unsafe_note(self.root)
        self.recorded, self.unread = False, ()  # see as_recorded()

    def as_recorded(self, entries):
        """This reference for runs its caller knows were made on other course files, an earlier version's: ENTRIES
        (path -> sha256, as that caller's own record holds them) is the fingerprint each run must carry (one made
        on other files was made by other code than the record says: it fails), and the re-checks that read a
        content file that differs from this reference's (UNREAD: a note, the exporter's or verify_export.py's
        rules) are left out: the caller says so, once. The notes read are this reference's."""
        other = Course.__new__(Course)
        other.root, other.odd_note, other.recorded = self.root, self.odd_note, True
        other.hashes = {rel: entries.get(rel) if type(entries.get(rel)) is str else "missing" for rel in WATCHED_FILES}
        other.unread = tuple(rel for rel in CONTENT_FILES if other.hashes[rel] != self.hashes[rel])
        return other


def verify_run(run_dir, course_root=None):
    """{"result", "run", "status", "problems", "changed_files", "notes", "clock_step"} for one run folder.

    COURSE_ROOT holds the course files (notes, samples, watched files) the run is checked against;
    by default the workspace that holds the run (RUN_DIR/../..), or a teacher's reference copy; a
    Course when several runs are checked against one reference.
    PROBLEMS are what makes the result fail or needs_human; NOTES what a pass still tells a person; CLOCK_STEP,
    when checked, the one of them that a step of the wall clock explains (None: none).
    """
    # `.` or `../NAME` must name the same run as runs/NAME; a link keeps its own name
    run_dir = Path(os.path.abspath(run_dir))
    course = course_root if isinstance(course_root, Course) else Course(
        course_root if course_root is not None else run_dir.parent.parent)
    result = {"result": FAIL, "run": run_dir.name, "status": None, "problems": [], "changed_files": [], "notes": [],
              "clock_step": None}
    try:
        evidence = Evidence(run_dir)
        record = evidence.record()
    except Unusable as exc:
        return settled(result, [(exc.verdict, exc.text)])
    bad = next(filter(None, map(verify_export.lone_surrogate, verify_export.strings_of(record))), None)
    if bad:  # checked right after parsing: every rule after this one may encode what the record holds
        return settled(result, [(FAIL, f"run.json 含有无法用 UTF-8 保存的字符 \\u{ord(bad):04x}（JSON 里单独的代理项转义）："
                                       "harness 写的记录是 UTF-8，写不出它，记录被改动过。")])
    changed = changed_files(record, course) if course.recorded else []
    if changed:  # made on other files than the record it belongs to says: whatever it holds, it is not that run
        result["changed_files"] = changed
        return settled(result, [(FAIL, changed_files_note(changed, course, run_dir.parent.parent))])
    if type(record.get("schema")) is str and record["schema"] in OLD_SCHEMAS:
        return settled(result, [old_schema_finding(record)])
    problem = shape_problem(record, run_dir.name) or time_problem(record) or unsupported_stop(record)
    if problem:
        return settled(result, [(FAIL, problem)])
    result["status"] = record["status"]
    if record["status"] in ("running", "needs_human"):
        return settled(result, [(HUMAN, human_note(record, run_dir))])
    result["clock_step"] = clock_step(record)  # the loop verifier sets it aside when its own clocks contradict it
    findings = [(HUMAN, step) for step in [result["clock_step"]] if step]
    unsafe = course.odd_note  # the independent rules would open it
    problems = [unsafe] if unsafe else input_problems(record, evidence) or step_problems(record, evidence, course)
    findings += [(FAIL, problem) for problem in problems]
    result["changed_files"] = changed_files(record, course)  # a watched file that is no plain file: missing
    if result["changed_files"]:
        findings.append((FAIL, changed_files_note(result["changed_files"], course, run_dir.parent.parent)))
    result["notes"] = evidence.transport_notes()
    return settled(result, findings)


def settled(result, findings):
    """RESULT with FINDINGS ((verdict, text) pairs) as its problems: any fail fails, else any is for a person."""
    result["problems"] = [text for _, text in findings]
    verdicts = {verdict for verdict, _ in findings}
    result["result"] = FAIL if FAIL in verdicts else HUMAN if verdicts else "pass"
    return result


class Unusable(Exception):
    """Evidence that cannot be taken as it is: VERDICT (fail or needs_human) and the TEXT for a person."""

    def __init__(self, verdict, text):
        super().__init__(text)
        self.verdict, self.text = verdict, text


class Evidence:
    """A run folder's evidence files, each read once, and only when it is a plain file within its cap.

    Every path is looked at (lstat) before anything is opened: a link, junction, FIFO, device or socket,
    or a folder where a file belongs, is Unusable (fail) and never opened. An absent file reads as None.
    """

    def __init__(self, run_dir):
        self.run_dir = run_dir
        self.converted = {}  # file -> the transport changes undone to find the recorded bytes ("BOM", "CRLF")
        problem = kind_problem(run_dir)
        if problem:
            raise Unusable(FAIL, problem)
        self.data = {rel: self.read(rel) for rel in CAPS}

    def read(self, rel):
        path = self.run_dir / rel
        try:
            return cli.read_evidence(path, CAPS[rel])
        except FileNotFoundError:
            return None
        except cli.TooLarge as exc:
            raise Unusable(FAIL, f"{cli.display_path(path)} 超过了读取上限（{exc.cap // (1 << 20)} MiB）：harness 写下的文件远小于它，"
                                 "这不是运行留下的文件，核对时没有读完它；这次运行不能采信。") from None
        except cli.NotRegularFile as exc:  # swapped since kind_problem looked
            raise Unusable(FAIL, not_a_plain_file(path, exc.kind, "普通文件")) from None
        except OSError as exc:  # PermissionError above all: the file is there, this user cannot open it
            raise Unusable(HUMAN, f"{cli.display_path(path)} 无法读取（{cli.gloss(type(exc).__name__)}，{type(exc).__name__}）：文件在，"
                                  "但当前用户打不开它，这不等于文件缺失；请恢复读取权限后再核对。") from None

    def shown(self, rel):
        return cli.display_path(self.run_dir / rel)

    def record(self):
        """run.json as a dict; Unusable when it is absent, not strict JSON, or not an object."""
        data = self.data["run.json"]
        if data is None:
            raise Unusable(FAIL, f"{self.shown('run.json')} 不存在：这不是一个完整的运行目录。")
        try:
            record = cli.loads_record(data)
        except cli.DuplicateKeyError as exc:
            key = exc.key.encode("utf-8", "backslashreplace").decode("utf-8")
            raise Unusable(FAIL, f"{self.shown('run.json')} 里同一个对象中的键 {key} 出现了两次："
                                 "记录被改动过，不能采信。") from None
        except cli.RecordError as exc:
            why = ("harness 先把记录写到磁盘再改名，不会留下空的或被截断的记录，" if exc.kind in ("empty", "cut") else
                   "harness 写的记录是 UTF-8 的标准 JSON，")
            raise Unusable(FAIL, f"{self.shown('run.json')} {exc}：{why}记录被改动或损坏了，不能采信。") from None
        if type(record) is not dict:
            raise Unusable(FAIL, f"{self.shown('run.json')} 的顶层是{json_kind(record)}，不是 JSON 对象："
                                 "harness 写的记录是一个对象，记录被改动过，不能采信。")
        _, changes = undo_transport(data)
        if changes:
            self.converted["run.json"] = changes
        return record

    def as_written(self, rel, recorded):
        """REL's bytes as the harness wrote them: the file's own, or with a wholesale transport change
        (CRLF line ends, a BOM) undone when that gives the RECORDED sha256; None when the file is absent."""
        data = self.data[rel]
        if data is None or sha256(data) == recorded:
            return data
        undone, changes = undo_transport(data)
        if changes and sha256(undone) == recorded:
            self.converted[rel] = changes
            return undone
        return data

    def transport_notes(self):
        """What a transport did to the evidence without changing its content, said for a person."""
        notes = []
        for change, text in TRANSPORT_NOTES:
            files = [rel for rel, changes in self.converted.items() if change in changes]
            if files:
                notes.append(text.format(files="、".join(files)))
        return notes


TRANSPORT_NOTES = (
    ("CRLF", "行尾被转换过（CRLF）：{files} 的换行整体从 LF 变成了 CRLF（例如 Windows 上 git 的 core.autocrlf），"
             "换回 LF 后与记录一致，按同一份内容核对。"),
    ("BOM", "文件开头被加了 BOM：{files}（例如用记事本另存过），去掉后与记录一致，按同一份内容核对。"),
)


def undo_transport(data):
    """(DATA with a leading BOM and wholesale CRLF line ends undone, the changes undone). A mix of LF and
    CRLF is no transport's work but an edit: nothing is undone then but the BOM."""
    changes = []
    if data.startswith(BOM):
        data, changes = data[len(BOM):], ["BOM"]
    if cli.line_endings(data) == "crlf":
        data, changes = cli.to_lf(data), changes + ["CRLF"]
    return data, changes


def json_kind(value):
    """The JSON type of VALUE in Chinese, for a record that is not an object."""
    if value is None:
        return " null"
    if type(value) is bool:
        return f" {json.dumps(value)}"
    return {list: "数组", str: "字符串"}.get(type(value), "数字")


def kind_problem(run_dir):
    """The first evidence path that is not what the harness makes there, said for a person; None if none.

    Folders first: below a linked folder every path would lead somewhere else. Absent paths are judged later.
    """
    for rel in (*FOLDERS, *CAPS):
        path = run_dir / rel
        expected = "文件夹" if rel in FOLDERS else "普通文件"
        try:
            kind = entry_kind(path)
        except OSError:  # not even looked at (a folder without permission): reading it will say so
            continue
        if kind not in (None, expected):
            return not_a_plain_file(path, kind, expected)
    return None


def unsafe_note(course_root):
    """The first entry of project/notes/ that is neither a plain file nor a folder, said for a person; None if none.

    The independent rules (verify_export.py) open the notes a card cites as they are: a FIFO would block them.
    """
    try:
        with os.scandir(course_root / "project" / "notes") as entries:
            odd = sorted((entry for entry in entries if not entry.is_file(follow_symlinks=False)),
                         key=lambda entry: entry.name)
    except OSError:  # no notes folder: the rules will say so
        return None
    for entry in odd:
        try:
            kind = cli.entry_kind(entry.stat(follow_symlinks=False))
        except OSError:
            continue
        if kind != "文件夹":  # a folder is read as no note at all; a link, FIFO or device could be followed
            return (f"课程文件 project/notes/{entry.name} 是{kind}，不是普通文件：核对时没有打开它，"
                    "也就不能用独立规则核对这次运行；请从课程 ZIP 里取回原样的文件再核对。")
    return None


def not_a_plain_file(path, kind, expected):
    shown = cli.display_path(path)
    if kind in ("符号链接", "目录联接"):
        return (f"{shown} 是符号链接或目录联接：运行证据必须是运行目录里真实的文件和文件夹，"
                "请核对它指向哪里，这次运行不能采信。")
    return (f"{shown} 是{kind}，不是{expected}：harness 只写下普通的文件和文件夹，核对时没有打开它；"
            "这次运行不能采信。")


def old_schema_finding(record):
    """(needs_human, why) for a run.json of an older schema; (fail, why) when its fields are not its version's."""
    schema, known = record["schema"], OLD_SCHEMAS[record["schema"]]
    odd = [shown_text(key) for key in record if key not in known] + [f"缺少 {key}" for key in known if key not in record]
    if odd:
        return FAIL, (f"run.json 的 schema 是 {schema}，字段却与那个版本写的不同（{'、'.join(odd[:6])}）："
                      "那个版本的 harness 写不出这样的记录，schema 被改过，记录被改动过。")
    return HUMAN, (f"run.json 的 schema 是 {schema}：由旧版本的工作区生成，它没有 id 和单调时长，现在的规则核对不了它；"
                   "请由人对照当时的说明判断，或在现在的工作区里用新的运行名重跑。")


def shown_text(value, limit=60):
    """A recorded string inside a message: lone surrogates and controls escaped, cut after LIMIT characters."""
    text = json.dumps(value, ensure_ascii=False) if type(value) is not str else value
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    text = cli.visible(text)
    return text if len(text) <= limit else f"{text[:limit]}…（共 {len(text)} 个字符）"


def shape_problem(record, folder_name):
    if tuple(k for k in RUN_KEYS if k in record) != RUN_KEYS:
        return f"run.json 缺少必需的字段（应为 {SCHEMA} 记录）。"
    if record["schema"] != SCHEMA:
        return f"run.json 的 schema 是 {record['schema']!r}，应为 {SCHEMA}。"
    if type(record["id"]) is not str or not RUN_ID.fullmatch(record["id"]):
        return f"run.json 的 id {record['id']!r} 不是 32 位小写十六进制：harness 建立记录时随机生成它，记录被改动过。"
    if record["run"] != folder_name:
        return f"run.json 记录的运行名 {record['run']!r} 与目录名 {folder_name!r} 不符。"
    if record["sample"] not in SAMPLES:
        return f"run.json 的 sample {record['sample']!r} 不是已知样例。"
    if record["status"] not in ("running", "needs_review", "failed", "needs_human"):
        return f"run.json 的 status {record['status']!r} 不是 harness 的状态。"
    if type(record["actual_api_calls"]) is not int or record["actual_api_calls"] != 0:
        return f"run.json 的 actual_api_calls 是 {record['actual_api_calls']!r}：本任务不调用模型，只能是 0。"
    if type(record["steps"]) is not list or not all(type(s) is dict for s in record["steps"]):
        return "run.json 的 steps 应为步骤对象的数组。"
    return next(filter(None, map(step_problem, record["steps"], range(1, len(record["steps"]) + 1))), None)


def step_problem(step, number):
    """A step is {name, ok: true} or {name, ok: false, error_type, message}: exactly as the harness writes it."""
    where = f"run.json 的 steps 第 {number} 项"
    if type(step.get("ok")) is not bool:
        return f"{where}的 ok 是 {json.dumps(step.get('ok'), ensure_ascii=False)}：只能是 true 或 false（1、0 或字符串都不是），记录被改动过。"
    failure_fields = [key for key in ("error_type", "message") if key in step]
    if step["ok"] and failure_fields:
        return f"{where}成功了却带着 {'、'.join(failure_fields)}：只有失败的步骤才记录错误，记录被改动过。"
    if not step["ok"] and not all(type(step.get(key)) is str for key in ("error_type", "message")):
        return f"{where}失败了，却没有字符串 error_type 与 message：记录被改动过。"
    return None


def moment(value):
    """A recorded time `YYYY-MM-DDTHH:MM:SSZ` (UTC) as a datetime; None for anything else."""
    match = TIMESTAMP.fullmatch(value) if type(value) is str else None
    try:
        return datetime(*map(int, match.groups())) if match else None
    except ValueError:  # month 13, February 30 ...
        return None


def time_problem(record):
    """started_at is a time; unless the run is still `running`, finished_at too and duration_seconds a
    number of seconds, never negative (a monotonic clock never runs back). Their order is clock_step's."""
    started, finished = moment(record["started_at"]), moment(record["finished_at"])
    example = "形如 2026-01-31T08:00:00Z 的 UTC 时间"
    if started is None:
        return f"run.json 的 started_at {record['started_at']!r} 不是{example}：记录被改动过。"
    if record["status"] == "running" and record["finished_at"] is None:
        return None
    if finished is None:
        return f"run.json 的 finished_at {record['finished_at']!r} 不是{example}：记录被改动过。"
    duration = record["duration_seconds"]
    if type(duration) not in (int, float) or not 0 <= duration <= MAX_DURATION:
        return (f"run.json 的 duration_seconds {duration!r} 不是不小于 0 的秒数：它是单调时钟量出的运行时长，"
                "只会是这样的数，记录被改动过。")
    return None


def clock_step(record):
    """For a person: the wall-clock span disagrees with the monotonic duration; None when they agree.

    A run has two wall readings and one monotonic span between them, so any disagreement is one step of
    the wall clock between the readings (NTP, a suspended laptop, a clock set by hand): an honest machine
    can make it, so it is named for a person and never fails the run.
    """
    if record["finished_at"] is None:
        return None
    wall = int((moment(record["finished_at"]) - moment(record["started_at"])).total_seconds())
    step = wall - record["duration_seconds"]
    if abs(step) <= CLOCK_TOLERANCE:
        return None
    cause = (f"系统时钟在这两次读数之间被往回调了约 {round(-step)} 秒（例如 NTP 校时）" if step < 0 else
             f"在这两次读数之间电脑休眠过约 {round(step)} 秒，或系统时钟被往前调了这么多")
    return (f"run.json 的 started_at（{record['started_at']}）到 finished_at（{record['finished_at']}）相隔 {wall} 秒，"
            f"单调时钟量得运行用了 {record['duration_seconds']} 秒：{cause}。诚实的机器也会这样，这不是改动过的证据；"
            "请向运行者确认这台电脑的时钟，由人决定是否采信。")


def unsupported_stop(record):
    """A needs_human record must show the step that went wrong; a running one, no final step."""
    steps, error = record["steps"], record["error"]
    if record["status"] == "needs_human":
        failed = steps and steps[-1].get("ok") is False and type(error) is dict \
            and error.get("type") == steps[-1].get("error_type")
        if not failed:
            return "status 是 needs_human，但记录里没有出错的步骤与 error：状态与记录不符。"
    if record["status"] == "running" and (error is not None or record["finished_at"] is not None
                                          or record["duration_seconds"] is not None):
        return "status 是 running，但记录已有 error、finished_at 或 duration_seconds：状态被改动过。"
    return None


def changed_files_note(changed, course, workspace):
    """The files whose recorded fingerprint differs, said for the workspace, for a reference copy, or for the record
    that says which files its runs were made on (Course.as_recorded)."""
    files, course_root = "、".join(changed), course.root
    if course.recorded:
        return (f"这次运行记下的这些文件与它所属的记录记下的不同：{files}。同一次运行的课程文件只有一份：这次运行是另一份代码"
                "或另一份课程文件做的，不是那份记录里的尝试，记录被改动过。")
    if Path(os.path.abspath(course_root)) == Path(os.path.abspath(workspace)):
        return (f"这些文件在运行之后变了：{files}。请找到与记录对应的版本再核对（没有 git 时：从课程 ZIP 里重新取出"
                "原样的文件，或用改动前留的备份放回），不要改写运行记录里的指纹。")
    shown = cli.display_path(course_root)
    reference = "当前文件夹" if shown == "." else shown
    return (f"运行时用的这些文件与参照的课程文件（{reference}）不同：{files}。"
            "运行用的不是课程原样的文件：请让运行者用课程原样的文件换一个新名字重新运行，不要改写运行记录里的指纹。")


def human_note(record, run_dir):
    shown = cli.display_path(run_dir)
    if record["status"] == "running":
        return (f"{cli.display_path(run_dir / 'run.json')} 仍是 running：运行可能被中断，动作是否完成不明。"
                f"请核对 {shown} 里 input/ 与 artifact/ 实际留下的文件，再决定是否用新名字重跑。")
    error = record["error"] if type(record["error"]) is dict else {}
    return (f"运行以 needs_human 结束，出现了意外的异常（{error.get('type')}：{error.get('message')}）："
            f"请查看 {cli.display_path(run_dir / 'run.json')} 与 {shown} 里的 artifact/，由人判断原因。")


def input_problems(record, evidence):
    entry, context = record["input"], record["context"]
    if type(entry) is not dict or entry.get("path") != INPUT_COPY:
        return [f"run.json 的 input 记录不对：应指向 {INPUT_COPY}。"]
    # the harness writes the copy with LF line ends and hashes those very bytes: only a wholesale
    # conversion (every line CRLF, a BOM) is a transport's work; a mix is an edit
    data = evidence.as_written(INPUT_COPY, entry.get("sha256"))
    actual = sha256(data) if data is not None else "missing"
    if actual != entry.get("sha256"):
        return ["输入副本 input/candidate.json 的哈希与记录不符：输入被改动或删除了。"]
    entries = context.get("entries") if type(context) is dict else None
    sample_file = f"samples/{record['sample']}.json"
    if type(entries) is not dict or entries.get(sample_file) != actual:
        return [f"输入副本与运行时 {sample_file} 的指纹不符：sample 标签被改动过，或输入不是这个样例。"]
    return []


def step_problems(record, evidence, course):
    """The steps, error and artifact the recorded status implies, checked independently (the re-checks that read
    the notes and the rules only when COURSE holds the copies the run was made on: not course.unread)."""
    status, steps = record["status"], record["steps"]
    names = [(step.get("name"), step.get("ok")) for step in steps]
    notes_dir = course.root / "project" / "notes" if not course.unread else None
    if status == "needs_review":
        problems = [] if names == [("export", True), ("verify", True)] and record["error"] is None \
            else ["needs_review 的运行应有 export 与 verify 两个成功步骤且没有 error。"]
        if record["semantic_review"] != "pending":
            problems.append("needs_review 的运行 semantic_review 必须是 pending：机械通过不等于内容正确。")
        return problems + artifact_problems(record, evidence, notes_dir)
    if record["semantic_review"] != "not_applicable":
        return ["failed 的运行没有产物可审，semantic_review 应为 not_applicable。"]
    # failed: exactly one export step that the independent rules reproduce
    step = steps[0] if len(steps) == 1 else {}
    error = {"type": step.get("error_type"), "message": step.get("message")}
    if names != [("export", False)] or error["type"] != "ValidationError" or record["error"] != error:
        return ["failed 的运行应只有一个失败的 export 步骤，且 error 与它一致（ValidationError）。"]
    problems = []
    if record["artifact"] is not None or os.path.lexists(evidence.run_dir / "artifact"):
        problems.append("failed 的运行不应留下产物：artifact 应为空。")
    candidate, problem = verify_export.parse_candidate(evidence.as_written(INPUT_COPY, record["input"]["sha256"]))
    if notes_dir is None:  # made on other notes or rules: their message cannot be reproduced here
        return problems
    found = [problem] if problem else verify_export.candidate_problems(candidate, notes_dir)
    if not found or found[0] != error["message"]:
        problems.append(f"独立规则没有复现记录的失败「{error['message']}」"
                        f"（独立规则给出：{found[0] if found else '没有问题'}）。")
    return problems


def artifact_problems(record, evidence, notes_dir):
    artifact = record["artifact"]
    if type(artifact) is not dict or sorted(artifact) != list(ARTIFACT_FILES):
        return ["run.json 的 artifact 应记录 cards.json 与 review.md 的哈希。"]
    if not os.path.lexists(evidence.run_dir / "artifact"):  # one fact, not a problem per missing file
        return ["产物文件夹 artifact/ 不存在：记录说这次运行已导出并通过机械检查，产物却不见了（被移走或删除了）。"]
    written = {name: evidence.as_written(f"artifact/{name}", artifact[name]) for name in ARTIFACT_FILES}
    problems = [f"产物 artifact/{name} 被改动或删除了（与 run.json 记录的哈希不符）。"
                for name, data in written.items() if data is None or sha256(data) != artifact[name]]
    with artifact_as_written(evidence, written) as folder:
        problems += verify_export.check_artifact(folder, notes_dir) if notes_dir is not None else []
    cards = written["cards.json"]  # a missing cards.json is said above: no cards to compare with the input
    if cards is not None and not same_cards(cards, evidence.as_written(INPUT_COPY, record["input"]["sha256"])):
        problems.append("产物里的卡片与输入副本不一致：产物不是由这份输入导出的。")
    return problems


@contextmanager
def artifact_as_written(evidence, written):
    """The artifact folder verify_export.py checks: the run's own (its files were just found plain and
    within their caps), or, when a transport change was undone, a private copy of WRITTEN's bytes."""
    if not any(rel.startswith("artifact/") for rel in evidence.converted):
        yield evidence.run_dir / "artifact"
        return
    import tempfile  # only here: it drags shutil and random into every start otherwise
    with tempfile.TemporaryDirectory(prefix="verify-harness-") as scratch:
        folder = Path(scratch) / "artifact"
        folder.mkdir()
        for name, data in written.items():
            if data is not None:
                (folder / name).write_bytes(data)
        yield folder


def same_cards(cards_bytes, candidate_bytes):
    """cards.json holds exactly the input copy's title and cards (both read strictly)."""
    try:
        cards, candidate = cli.loads_record(cards_bytes), cli.loads_record(candidate_bytes)
        return cards["title"] == candidate["title"] and cards["cards"] == candidate["cards"]
    except (ValueError, TypeError, KeyError, AttributeError):
        return False


def changed_files(record, course):
    context = record.get("context")
    entries = context.get("entries") if type(context) is dict else None
    if type(entries) is not dict or sorted(entries) != sorted(WATCHED_FILES):
        return ["run.json 的 context（应列出 14 个受监视文件）"]
    if type(context.get("files")) is not int or context["files"] != len(WATCHED_FILES) \
            or not all(type(sha) is str for sha in entries.values()) or combined(entries) != context.get("fingerprint"):
        return ["run.json 的 context.fingerprint（与逐文件哈希不符）"]
    return [rel for rel in sorted(entries) if entries[rel] != course.hashes[rel]]


CONCLUSION = {
    "pass": "核对通过：记录与文件一致。",
    "fail": "核对失败：记录与文件不一致，这次运行不能采信；不要改写记录或产物，找到与记录对应的文件版本再核对，"
            "或用新的运行名重新运行。",
    "needs_human": "需要人工核查：这次运行没有正常结束，或它的证据有诚实的机器也会留下、程序却判断不了的情况；"
                   "按上面的提示查看，由人决定下一步。",
}


def main(argv=None):
    cli.use_safe_console()
    parser = cli.ChineseArgumentParser(
        usage=("[-h] RUN_DIR",),
        description="独立核对一次 harness 运行：从目录里的文件重新推导状态。",
        epilog="退出码：0 记录一致（pass）；1 发现问题（fail）或需要人工（needs_human）；2 参数错误；130 被 Ctrl-C 中断。",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="运行目录，例如 runs/valid-01（相对路径从当前文件夹算起）")
    run_dir = as_listed(parser.parse_args(argv).run_dir)  # `runs/VALID-01` names runs/valid-01 where case is ignored
    if not os.path.lexists(run_dir):
        parser.error(f"{cli.display_path(run_dir)} 不存在：请给出 runs/ 下的某个运行目录，例如 runs/valid-01。")
    if not os.path.isdir(run_dir) or Path(os.path.abspath(run_dir)).parent.name != "runs":
        parser.error(f"{cli.display_path(run_dir)} 不是运行目录：请给出 runs/ 下的某个目录，例如 runs/valid-01。")
    result = verify_run(run_dir)
    for problem in result["problems"]:
        cli.say(f"问题：{problem}")
    cli.say(CONCLUSION[result["result"]])
    for note in result["notes"]:
        cli.say(f"说明：{note}")
    out = {key: result[key] for key in ("result", "run", "status")}
    if result["result"] != "pass":
        out.update(problems=result["problems"], changed_files=result["changed_files"])
    if result["notes"]:
        out["notes"] = result["notes"]
    cli.print_json(out)
    return cli.EXIT_OK if result["result"] == "pass" else cli.EXIT_STOP


if __name__ == "__main__":
    cli.run(main, "已中断：没有完成核对，请重新运行这条命令。")
