"""Single run of the export task (lesson 13): input copy, fingerprint, export, verify, record.

    python3 harness.py --check
    python3 harness.py --run NAME --sample valid|bad-quote|semantic

A run creates a fresh `runs/NAME/` holding the input copy, the context fingerprint of the
watched files, the steps taken, the error when a step failed, the artifact when export
succeeded, a random id, the wall-clock start and finish with the monotonic duration between
them, and a status: `needs_review` (mechanical pass, content review pending), `failed`
(a ValidationError: a known, teachable rejection) or `needs_human` (anything unexpected).
One run, no retry: an error stops it. Run names are one name whatever their case: `runs/Demo`
makes `demo` used. On the command line a name shaped like a loop's child (`LOOP-NN` where loop-runs/LOOP exists,
or is being claimed) is refused too: it would read as that loop's attempt. `runs/NAME` appears only together with
its input copy and first run.json.
Ctrl-C (or SIGTERM/SIGHUP) at any moment prints one JSON line and exits 130.

Shared with other files: cli.py plumbing (console, arguments, strict JSON, atomic records, the
claim of a record folder, the Chinese glosses of error types). export_review.py and
verify_export.py are imported only when a run exports. `run_harness()` is the public function
other programs call in-process; this file knows nothing of what calls it. The verifier
(verify_harness.py) keeps its own copy of the watched-file list and its own hashing;
tests/test_watched_lists.py compares every copy with docs/harness/TASK.md.
"""
try:
    import cli  # first: it refuses a Python older than 3.11 before anything else runs

    import hashlib
    import os
    import sys
    import time
    from pathlib import Path
except KeyboardInterrupt:  # Ctrl-C while Python is still loading this script: nothing exists yet
    if __name__ != "__main__":
        raise
    import sys
    sys.stdout.write('{"run": null, "sample": null, "status": "interrupted"}\n')
    try:
        sys.stderr.reconfigure(errors="backslashreplace")  # a console without Chinese gets escapes
    except (AttributeError, ValueError):
        pass
    sys.stderr.write("已中断：harness.py 还在启动，没有创建任何文件。\n")
    raise SystemExit(130)

ROOT = Path(__file__).resolve().parent
SAMPLES = ("valid", "bad-quote", "semantic")
# The files a run depends on: the list of docs/harness/TASK.md (tests/test_watched_lists.py compares).
WATCHED_FILES = (
    "harness.py", "verify_harness.py", "export_review.py", "verify_export.py",
    "AGENTS.md", "docs/harness/TASK.md",
    "samples/valid.json", "samples/bad-quote.json", "samples/semantic.json",
    "project/notes/A01.md", "project/notes/A02.md", "project/notes/A03.md",
    "project/notes/A05.md", "project/notes/A07.md",
)
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
DEVICE_NAMES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                *(f"LPT{i}" for i in range(1, 10))}
INPUT_COPY = "input/candidate.json"


def name_problem(name, max_len=64):
    """Why NAME cannot be a run folder name (docs/harness/TASK.md), in Chinese; None when it can."""
    if not 1 <= len(name) <= max_len:
        return f"运行名「{name}」长度应为 1-{max_len} 个字符。"
    bad = "".join(dict.fromkeys(ch for ch in name if ch not in NAME_CHARS))  # in the order typed
    if bad:
        return f"运行名「{name}」含有不允许的字符「{bad}」：只能用字母、数字、点、下划线和连字符。"
    if name[0] in ".-" or name.endswith(".") or ".." in name:
        return f"运行名「{name}」不能以点或连字符开头、不能以点结尾、不能含“..”。"
    if name.split(".")[0].upper() in DEVICE_NAMES:
        return f"运行名「{name}」是 Windows 设备名，不能用作文件夹名。"
    return None


def file_sha256(path):
    """sha256 of the file's bytes with CRLF -> LF (a Windows checkout hashes the same)."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:  # absent, a folder, or locked: there is no file content to vouch for
        return "missing"
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def fingerprint(root, files=WATCHED_FILES):
    """Per-file and combined fingerprint of FILES (paths relative to ROOT)."""
    entries = {rel: file_sha256(os.path.join(root, rel)) for rel in sorted(files)}
    return {"files": len(entries), "fingerprint": combined_fingerprint(entries), "entries": entries}


def combined_fingerprint(entries):
    """sha256 of one `PATH<TAB>SHA256` line per file, sorted by path."""
    text = "".join(f"{rel}\t{entries[rel]}\n" for rel in sorted(entries))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_harness(root, name, sample):
    """Runs one export of SAMPLE in a fresh ROOT/runs/NAME/ and returns its run.json record.

    ValueError for a bad name or sample, cli.NameTaken (a FileExistsError) when the name is used
    in any case or being claimed: nothing is created then. runs/NAME appears with its input copy
    and first record at once. A KeyboardInterrupt propagates and leaves run.json `running`.
    """
    problem = name_problem(name) or (None if sample in SAMPLES else
                                     f"未知样例「{sample}」：可选 {', '.join(SAMPLES)}。")
    if problem:
        raise ValueError(problem)
    root = Path(root)
    data = (root / "samples" / f"{sample}.json").read_bytes().replace(b"\r\n", b"\n")
    record = {
        "schema": "harness-run/2", "id": os.urandom(16).hex(), "run": name, "sample": sample,
        "status": "running", "semantic_review": "not_applicable",
        "input": {"path": INPUT_COPY, "sha256": hashlib.sha256(data).hexdigest()},
        "context": fingerprint(root), "steps": [], "error": None, "artifact": None,
        "actual_api_calls": 0, "started_at": now_iso(), "finished_at": None, "duration_seconds": None,
    }
    start = time.monotonic()  # the wall clock may be stepped (NTP) during the run; this one never is

    def write_first(staging):
        (staging / "input").mkdir()
        (staging / INPUT_COPY).write_bytes(data)
        cli.write_json_atomic(staging / "run.json", record)

    run_dir = cli.create_record_folder(root / "runs", name, write_first)
    run_steps(record, run_dir)
    record["finished_at"] = now_iso()
    record["duration_seconds"] = round(time.monotonic() - start, 3)
    cli.write_json_atomic(run_dir / "run.json", record)
    return record


def run_steps(record, run_dir):
    """Export, then verify; the first failed step decides the status and stops the run."""
    import export_review
    import verify_export

    notes_dir = run_dir.parent.parent / "project" / "notes"
    try:
        record["artifact"] = export_review.export_candidate(
            run_dir / INPUT_COPY, run_dir / "artifact", notes_dir)
    except export_review.ValidationError as exc:
        return fail(record, "export", "failed", "ValidationError", str(exc))
    except Exception as exc:  # anything but a rule violation is not ours to explain away
        return fail(record, "export", "needs_human", type(exc).__name__, str(exc))
    record["steps"].append({"name": "export", "ok": True})
    problems = verify_export.check_artifact(run_dir / "artifact", notes_dir)
    if problems:
        return fail(record, "verify", "needs_human", "VerificationError", " ".join(problems))
    record["steps"].append({"name": "verify", "ok": True})
    record["status"], record["semantic_review"] = "needs_review", "pending"


def fail(record, step, status, error_type, message):
    record["steps"].append({"name": step, "ok": False, "error_type": error_type, "message": message})
    record["error"] = {"type": error_type, "message": message}
    record["status"] = status


def check(root=ROOT):
    """What --check prints: are the watched files here, and can the records be written? (A Python older than
    3.11 never gets this far: importing cli refused it, in the one line every program says.)"""
    missing = [rel for rel in WATCHED_FILES if not (Path(root) / rel).is_file()]
    read_only = read_only_folders(root)
    return {"ready": not missing and not read_only, "missing": missing,
            "watched_files": len(WATCHED_FILES), "python": "%d.%d.%d" % sys.version_info[:3], "read_only": read_only}


def read_only_folders(root):
    """The folders a run or a loop writes its records in that cannot be written: runs/ and loop-runs/ where they
    exist, the workspace itself ("." ) where one of them is still to be made. A read-only workspace (opened inside
    a ZIP, a read-only share) is not ready: its first run would fail."""
    found = [f"{name}/" for name in ("runs", "loop-runs")
             if os.path.isdir(Path(root) / name) and not os.access(Path(root) / name, os.W_OK)]
    to_make = not all(os.path.isdir(Path(root) / name) for name in ("runs", "loop-runs"))
    return (["."] if to_make and not os.access(root, os.W_OK) else []) + found


EXIT_FOR = {"needs_review": cli.EXIT_OK, "failed": cli.EXIT_STOP, "needs_human": cli.EXIT_STOP}


def status_text(record, run_dir):
    """The Chinese conclusion of a finished run, with paths usable from the current folder."""
    error = record["error"] or {}
    if record["status"] == "needs_review":
        return (f"机械检查通过，内容仍待人工审核：请阅读 {cli.display_path(run_dir / 'artifact' / 'review.md')}"
                "，对照引文逐张判断答案是否正确。")
    if record["status"] == "failed":
        return (f"导出被规则拒绝（这是一次已记录的失败，不会自动重试）：{error['message']}"
                f"可以用 {cli.command(ROOT / 'verify_harness.py', run_dir)} 独立核对这条记录。")
    return (f"出现意外情况：{cli.gloss(error['type'])}（{error['type']}：{error['message']}），没有自动重试；"
            f"请查看 {cli.display_path(run_dir / 'run.json')} 里的 error，由人判断原因后用新的运行名重跑。")


class Session:
    """What an interrupt must know: the run asked for, its record once finished, whether a line is out."""

    def __init__(self):
        self.run = self.sample = self.record = None
        self.printed = False

    def print_line(self, line):
        cli.print_json(line)
        self.printed = True


def parse_arguments(argv):
    parser = cli.ChineseArgumentParser(
        usage=("[-h] (--check | --run NAME)", f"[--sample {{{','.join(SAMPLES)}}}]"),
        description="导出任务的单次 Harness：检查环境，或在新的 runs/NAME/ 中运行一次导出与验证。",
        epilog="退出码：0 就绪 / needs_review；1 未就绪 / failed / needs_human；"
               "2 参数错误、运行名已被使用（不区分大小写）或像某个循环的子运行；130 被 Ctrl-C 中断。",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="检查 14 个受监视文件（Python 低于 3.11 时每个脚本都会先拒绝运行）")
    mode.add_argument("--run", metavar="NAME",
                      help="新的运行名（runs/NAME/ 不得已存在，不区分大小写；不能是已有循环 LOOP 的 LOOP-NN）")
    parser.add_argument("--sample", choices=SAMPLES, help="要导出的固定样例")
    args = parser.parse_args(argv)
    if args.run is not None and not args.sample:
        parser.error("--run 需要同时给出 --sample valid|bad-quote|semantic。")
    return parser, args


def main(argv=None):
    cli.use_safe_console()
    session = Session()
    try:
        parser, args = parse_arguments(argv)
        if args.check:
            return check_command(session)
        session.run, session.sample = args.run, args.sample
        return run_command(parser, session)
    except KeyboardInterrupt as exc:
        return interrupted(session, exc)


def check_command(session):
    result = check(ROOT)
    again = cli.command(ROOT / "harness.py", "--check")
    if result["ready"]:
        cli.say("环境就绪。")
    if result["missing"]:
        cli.say(f"环境未就绪：缺少 {'、'.join(result['missing'])}。请从课程 ZIP 里重新取出这些文件（或用你改动前留的备份"
                f"放回），不要自己重写；然后再运行 {again}。")
    if result["read_only"]:
        where = "、".join(cli.display_path(ROOT / rel) + ("（工作区本身）" if rel == "." else "")
                          for rel in result["read_only"])
        cli.say(f"环境未就绪：{where} 不能写入，而每次运行和循环都要在 runs/ 和 loop-runs/ 里写记录。常见原因是直接在压缩包"
                "里打开了工作区，或者它在只读的位置（只读的共享文件夹、光盘、没有写权限的目录）。请把整个工作区解压或复制到"
                f"你有写权限的文件夹（例如“文档”里），进入那里再运行 {again}。")
    session.print_line(result)
    return cli.EXIT_OK if result["ready"] else cli.EXIT_STOP


def run_command(parser, session):
    name, sample = session.run, session.sample
    not_started = {"run": name, "sample": sample, "status": "not_started"}
    try:
        loop = loop_of(ROOT, name)  # the command line's own rule: a loop makes its children through run_harness
        if loop:
            cli.say(loop_child_text(name, sample, loop))
            return cli.EXIT_USAGE
        session.record = record = run_harness(ROOT, name, sample)
    except ValueError as exc:
        parser.error(str(exc))
    except cli.NameTaken as exc:
        cli.say(name_taken_text(name, sample, exc))
        return cli.EXIT_USAGE
    except FileNotFoundError as exc:
        cli.say(f"找不到 {cli.display_path(exc.filename)}：请先运行 {cli.command(ROOT / 'harness.py', '--check')}"
                " 查看缺少哪些文件。")
        session.print_line(not_started)
        return cli.EXIT_STOP
    except OSError as exc:  # e.g. a file called runs in the way, or a folder that cannot be written
        if record_left_running(exc, ROOT / "runs" / name):
            cli.say(unsaved_text(exc, ROOT / "runs" / name))
            session.print_line({"run": name, "sample": sample, "status": "needs_human"})
            return cli.EXIT_STOP
        where = f"（{cli.display_path(exc.filename)}）" if exc.filename else ""
        cli.say(f"运行没能开始：{cli.gloss(type(exc).__name__)}{where}（{type(exc).__name__}）；"
                "请检查工作区是否可写、runs 是否是文件夹，然后用新的运行名重试。")
        session.print_line(not_started)
        return cli.EXIT_STOP
    cli.say(status_text(record, ROOT / "runs" / name))
    session.print_line({key: record[key] for key in ("run", "sample", "status", "semantic_review", "error")})
    return EXIT_FOR[record["status"]]


def record_left_running(exc, run_dir):
    """The error is the final run.json failing to replace the first (e.g. held open by an antivirus on Windows).

    Only the final record is written inside RUN_DIR itself; the first one is written before the folder
    has its name, so an error naming a file there means the run itself had finished.
    """
    return any(name and Path(name).parent == run_dir for name in (exc.filename, exc.filename2))


def unsaved_text(exc, run_dir):
    return (f"运行已完成，但记录没能写完：{cli.display_path(run_dir / 'run.json')} 没能更新为最终结果"
            f"（{cli.gloss(type(exc).__name__)}，{type(exc).__name__}），它仍是开始时的 running 记录；"
            f"这次运行的输入和产物在运行目录 {cli.display_path(run_dir)} 里。常见原因是杀毒软件、索引或编辑器正打开着它。"
            f"关掉占用它的程序后，用 {cli.command(ROOT / 'verify_harness.py', run_dir)} 核对，再用新的运行名重跑。")


def name_taken_text(name, sample, exc):
    """Why NAME cannot be used (exit 2), with a command that would work."""
    in_way = cli.display_path(ROOT / exc.path)
    free = suggest_name(name, lambda other: run_name_used(ROOT, other), count_on=False)
    example = cli.command(ROOT / "harness.py", "--run", free, "--sample", sample)
    if exc.busy:
        return (f"运行名「{name}」正被另一个进程占用（认领目录 {in_way} 存在）：请换一个运行名，例如：{example}。"
                f"若没有别的 harness 在运行，它是被强行结束的进程留下的，{cli.STALE_LOCK_SECONDS} 秒后会自动失效。")
    case_note = "" if Path(exc.path).name == name else "（运行名不区分大小写）"
    return f"{in_way} 已存在{case_note}：旧证据不会被覆盖，请换一个新的运行名，例如：{example}"


def loop_of(root, name):
    """The loop (as loop-runs/ names it) whose child NAME would read as: NAME is LOOP-NN (two ASCII digits, the
    shape of every child run) and loop-runs/LOOP exists in any case, or is being claimed; None otherwise."""
    stem, dash, number = name.rpartition("-")
    if not (dash and stem and len(number) == 2 and number.isascii() and number.isdigit()):
        return None
    try:
        entries = os.listdir(Path(root) / "loop-runs")
    except OSError:
        return None
    return next((entry[len(".lock-"):] if entry.startswith(".lock-") else entry for entry in sorted(entries)
                 if entry.lower() in (stem.lower(), f".lock-{stem.lower()}")), None)


def loop_child_text(name, sample, loop):
    """Why NAME is refused (exit 2): the loop it would join, and a name that would work."""
    free = suggest_name(name, lambda other: run_name_used(ROOT, other) or loop_of(ROOT, other), count_on=False)
    example = cli.command(ROOT / "harness.py", "--run", free, "--sample", sample)
    number = int(name.rpartition("-")[2])
    return (f"运行名「{name}」像是循环 {loop} 的第 {number} 次尝试：{cli.display_path(ROOT / 'loop-runs' / loop)} "
            f"已存在，它的子运行就叫 runs/{loop}-01、runs/{loop}-02……，核对这个循环时，这样一个单独的运行会被当成它多出来"
            f"的尝试，那个循环就要交给人判断。什么都没有创建。请换一个不像子运行的运行名，例如：{example}")


def run_name_used(root, name):
    try:
        return any(entry.lower() == name.lower() for entry in os.listdir(Path(root) / "runs"))
    except OSError:
        return False


def suggest_name(name, used, max_len=64, count_on=True):
    """A free name like NAME: NAME-01 -> NAME-02 ..., otherwise NAME-2, NAME-3 ...; USED(name) says taken.

    COUNT_ON=False always appends (-01 -> -01-2): a suggested run name then never ends in two digits,
    the shape of another program's numbered runs that this file cannot see.
    """
    stem, dash, number = name.rpartition("-")
    numbered = count_on and bool(dash) and number.isdigit()
    stem, start, width = (stem, int(number) + 1, len(number)) if numbered else (name, 2, 1)
    for k in range(start, start + 100):
        candidate = f"{stem}-{k:0{width}d}"
        if not name_problem(candidate, max_len) and not used(candidate):
            return candidate
    return f"{name}-new"


def interrupted(session, exc):
    """Ctrl-C or termination: one JSON line, a Chinese sentence about what exists, exit 130."""
    how = "已被终止" if isinstance(exc, cli.Terminated) else "已中断"
    record = session.record
    if session.printed:
        cli.say(f"{how}：结果已经打印，记录已保存，不需要再做什么。")
        return cli.EXIT_INTERRUPTED
    run_dir = ROOT / "runs" / session.run if session.run else None
    if record is not None:
        cli.say(f"{how}：运行已经结束并记录在 {cli.display_path(run_dir / 'run.json')}。")
    elif run_dir is not None and (run_dir / "run.json").is_file():
        cli.say(f"{how}：{cli.display_path(run_dir / 'run.json')} 可能仍是 running，动作是否完成不明；"
                f"请先用 {cli.command(ROOT / 'verify_harness.py', run_dir)} 核对，再用新的运行名重跑。")
    else:
        cli.say(f"{how}：运行还没有开始，没有创建运行目录；可以用同一个运行名重新运行。")
    status = record["status"] if record is not None else "interrupted"
    session.print_line({"run": session.run, "sample": session.sample, "status": status})
    return cli.EXIT_INTERRUPTED


if __name__ == "__main__":
    cli.run(main, "已中断。")
