"""Single run of the export task (lesson 13): input copy, fingerprint, export, verify, record.

    python3 harness.py --check
    python3 harness.py --run NAME --sample valid|bad-quote|semantic

A run creates a fresh `runs/NAME/` holding the input copy, the context fingerprint of the
watched files, the steps taken, the error when a step failed, the artifact when export
succeeded and a status: `needs_review` (mechanical pass, content review pending), `failed`
(a ValidationError: a known, teachable rejection) or `needs_human` (anything unexpected).
One run, no retry: an error stops it. `run_harness()` is the public function other programs
call in-process; this file knows nothing of what calls it.
"""
import hashlib
import os
import sys
import time
from pathlib import Path

from cli import (EXIT_INTERRUPTED, EXIT_OK, EXIT_STOP, EXIT_USAGE, ChineseArgumentParser,
                 print_json, run, say, use_safe_console, write_json_atomic)

ROOT = Path(__file__).resolve().parent
SAMPLES = ("valid", "bad-quote", "semantic")
# The files a run depends on; docs/harness/TASK.md lists the same 14 for people.
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
    """Why NAME cannot be a run folder name (SPEC §2), in Chinese; None when it can."""
    if not 1 <= len(name) <= max_len:
        return f"运行名「{name}」长度应为 1-{max_len} 个字符。"
    bad = sorted(set(name) - NAME_CHARS)
    if bad:
        return f"运行名「{name}」含有不允许的字符 {''.join(bad)!r}：只能用字母、数字、点、下划线和连字符。"
    if name[0] in ".-" or name.endswith(".") or ".." in name:
        return f"运行名「{name}」不能以点或连字符开头、不能以点结尾、不能含“..”。"
    if name.split(".")[0].upper() in DEVICE_NAMES:
        return f"运行名「{name}」是 Windows 设备名，不能用作文件夹名。"
    return None


def file_sha256(path):
    """sha256 of the file's bytes with CRLF -> LF (a Windows checkout hashes the same)."""
    try:
        with open(path, "rb") as file:  # plain open: this runs for every watched file of every check
            data = file.read()
    except OSError:  # absent, a folder, or locked: there is no file content to vouch for
        return "missing"
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def fingerprint(root, files=WATCHED_FILES, cache=None):
    """Per-file and combined fingerprint; CACHE (a dict) lets many checks hash each file once."""
    cache = {} if cache is None else cache
    entries = {}
    for rel in sorted(files):
        path = os.path.join(root, rel)
        if path not in cache:
            cache[path] = file_sha256(path)
        entries[rel] = cache[path]
    return {"files": len(entries), "fingerprint": combined_fingerprint(entries), "entries": entries}


def combined_fingerprint(entries):
    """sha256 of one `PATH<TAB>SHA256` line per file, sorted by path (SPEC §2)."""
    text = "".join(f"{rel}\t{entries[rel]}\n" for rel in sorted(entries))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_folder(path):
    """mkdir that explains a same-named file in the way (instead of calling the name used)."""
    try:
        path.mkdir(exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(f"{path.name} 是一个文件而不是文件夹，请把它移走或改名") from None


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_harness(root, name, sample, cache=None):
    """Runs one export of SAMPLE in a fresh ROOT/runs/NAME/ and returns its run.json record.

    ValueError for a bad name or sample (nothing created); FileExistsError when runs/NAME
    exists (nothing touched). A KeyboardInterrupt propagates and leaves run.json `running`.
    CACHE: file hashes a caller has just read, reused for the context fingerprint.
    """
    problem = name_problem(name) or (None if sample in SAMPLES else
                                     f"未知样例「{sample}」：可选 {', '.join(SAMPLES)}。")
    if problem:
        raise ValueError(problem)
    root = Path(root)
    source = root / "samples" / f"{sample}.json"
    data = source.read_bytes().replace(b"\r\n", b"\n")
    context = fingerprint(root, cache=cache)
    run_dir = root / "runs" / name
    make_folder(run_dir.parent)
    run_dir.mkdir()
    (run_dir / "input").mkdir()
    (run_dir / INPUT_COPY).write_bytes(data)
    record = {
        "schema": "harness-run/1", "run": name, "sample": sample, "status": "running",
        "semantic_review": "not_applicable",
        "input": {"path": INPUT_COPY, "sha256": hashlib.sha256(data).hexdigest()},
        "context": context, "steps": [], "error": None, "artifact": None,
        "actual_api_calls": 0, "started_at": now_iso(), "finished_at": None,
    }
    write_json_atomic(run_dir / "run.json", record)
    run_steps(record, run_dir)
    record["finished_at"] = now_iso()
    write_json_atomic(run_dir / "run.json", record)
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
    """What --check prints: are the watched files here, is Python new enough?"""
    missing = [rel for rel in WATCHED_FILES if not (Path(root) / rel).is_file()]
    python_ok = sys.version_info >= (3, 11)
    return {"ready": python_ok and not missing, "missing": missing,
            "watched_files": len(WATCHED_FILES), "python": "%d.%d.%d" % sys.version_info[:3]}


STATUS_TEXT = {
    "needs_review": "机械检查通过，内容仍待人工审核：请阅读 {run}/artifact/review.md。",
    "failed": "导出被规则拒绝（这是一次已记录的失败，不会自动重试）：{message}",
    "needs_human": "出现意外情况（{type}：{message}），需要人工查看 {run}/run.json。",
}
EXIT_FOR = {"needs_review": EXIT_OK, "failed": EXIT_STOP, "needs_human": EXIT_STOP}


def main(argv=None):
    use_safe_console()
    parser = ChineseArgumentParser(
        description="导出任务的单次 Harness：检查环境，或在新的 runs/NAME/ 中运行一次导出与验证。",
        epilog="退出码：0 就绪 / needs_review；1 未就绪 / failed / needs_human；"
               "2 参数错误或运行名已被使用；130 被 Ctrl-C 中断。",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="检查 14 个受监视文件与 Python 版本")
    mode.add_argument("--run", metavar="NAME", help="新的运行名（runs/NAME/ 不得已存在）")
    parser.add_argument("--sample", choices=SAMPLES, help="要导出的固定样例")
    args = parser.parse_args(argv)
    if args.check:
        result = check()
        say("环境就绪。" if result["ready"] else f"环境未就绪：缺少 {', '.join(result['missing']) or '无'}；"
            f"Python {result['python']}（需要 3.11 或更高）。")
        print_json(result)
        return EXIT_OK if result["ready"] else EXIT_STOP
    if not args.sample:
        parser.error("--run 需要同时给出 --sample valid|bad-quote|semantic。")
    return run_command(parser, args.run, args.sample)


def run_command(parser, name, sample):
    try:
        record = run_harness(ROOT, name, sample)
    except ValueError as exc:
        parser.error(str(exc))
    except FileExistsError:
        parser.error(f"runs/{name} 已存在：旧证据不会被覆盖，请换一个新的运行名。")
    except FileNotFoundError as exc:
        say(f"找不到 {exc.filename}：请先运行 python3 harness.py --check 查看缺少哪些文件。")
        print_json({"run": name, "sample": sample, "status": "not_started"})
        return EXIT_STOP
    except OSError as exc:  # e.g. a file called runs in the way, or a folder that cannot be written
        say(f"运行没能开始（{exc}）：请检查工作区是否可写，然后用新的运行名重试。")
        print_json({"run": name, "sample": sample, "status": "not_started"})
        return EXIT_STOP
    except KeyboardInterrupt:
        say(f"已中断：runs/{name}/run.json 可能仍是 running，动作是否完成不明，请先核对该目录。")
        print_json({"run": name, "sample": sample, "status": "interrupted"})
        return EXIT_INTERRUPTED
    error = record["error"] or {}
    say(STATUS_TEXT[record["status"]].format(run=f"runs/{name}", **error))
    print_json({key: record[key] for key in ("run", "sample", "status", "semantic_review", "error")})
    return EXIT_FOR[record["status"]]


if __name__ == "__main__":
    run(main, "已中断。")
