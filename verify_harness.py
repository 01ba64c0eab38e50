"""Independent check of one harness run: re-derives its status from the files it left.

    python3 verify_harness.py runs/NAME
    exit 0 pass, 1 fail or needs_human, 2 bad arguments, 130 Ctrl-C

It trusts nothing the run says about itself: run.json must be strict JSON (a key given twice,
NaN or Infinity fails) with each step written exactly as the harness writes it; the run folder
and its evidence must be real files and folders (a symbolic link or a junction fails); the
timestamps must be in order; the input copy's bytes are hashed again (the harness wrote them with
LF, so a CRLF copy is an edit); the steps must be the ones the status implies; the artifact is
re-checked by verify_export.py (not by the exporter); a recorded rule failure must be reproduced
by those independent rules; and the recorded fingerprint is compared with the course files (a
difference names the files and is never rewritten). A consistent run passes whatever its status:
a correctly recorded `failed` run passes. A `needs_human` or still `running` run cannot be
judged: `needs_human`.
`verify_run()` is the function other verifiers call.

Shared with other files: cli.py plumbing and verify_export.py (the other verifier). Nothing of
harness.py or export_review.py is imported: the watched-file list (the one in
docs/harness/TASK.md; tests/test_watched_lists.py compares every copy), the samples and the
fingerprint hashing are this file's own.
"""
import hashlib
import json
import os
import re
from datetime import datetime
from pathlib import Path

import cli
import verify_export

WATCHED_FILES = (
    "harness.py", "verify_harness.py", "export_review.py", "verify_export.py",
    "AGENTS.md", "docs/harness/TASK.md",
    "samples/valid.json", "samples/bad-quote.json", "samples/semantic.json",
    "project/notes/A01.md", "project/notes/A02.md", "project/notes/A03.md",
    "project/notes/A05.md", "project/notes/A07.md",
)
SAMPLES = ("valid", "bad-quote", "semantic")
RUN_KEYS = ("schema", "run", "sample", "status", "semantic_review", "input", "context", "steps",
            "error", "artifact", "actual_api_calls", "started_at", "finished_at")
ARTIFACT_FILES = ("cards.json", "review.md")
EVIDENCE = ("", "run.json", "input", "input/candidate.json", "artifact", "artifact/cards.json", "artifact/review.md")
TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z", re.ASCII)


def content_sha256(path):
    """sha256 of a file's bytes with CRLF -> LF; "missing" when there is no file to read."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return "missing"
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def combined(entries):
    """sha256 of the UTF-8 text made of one `PATH<TAB>SHA256<LF>` line per file, sorted by path."""
    return hashlib.sha256("".join(f"{rel}\t{entries[rel]}\n" for rel in sorted(entries)).encode("utf-8")).hexdigest()


def is_link(path):
    """A symbolic link, or a Windows junction (os.path.isjunction exists from Python 3.12)."""
    if os.path.islink(path):
        return True
    isjunction = getattr(os.path, "isjunction", None)
    if isjunction:
        return isjunction(path)
    try:  # Python 3.11 on Windows: a junction is a mount-point reparse point
        return getattr(os.lstat(path), "st_reparse_tag", 0) == 0xA0000003
    except OSError:
        return False


class NonStandardNumber(ValueError):
    """NaN, Infinity or -Infinity: Python reads them, JSON has no such numbers and no record holds one."""


def refuse_constant(name):
    raise NonStandardNumber(name)


def object_once(pairs):
    """A JSON object whose keys each appear once, else cli.DuplicateKeyError naming the first repeated key."""
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen = set()
        raise cli.DuplicateKeyError(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return obj


def read_record_json(path):
    """A record (run.json, loop.json) read strictly, a BOM allowed: a duplicate key raises
    cli.DuplicateKeyError, NaN or Infinity NonStandardNumber, anything else unreadable OSError or ValueError."""
    text = Path(path).read_bytes().decode("utf-8-sig")
    return json.loads(text, object_pairs_hook=object_once, parse_constant=refuse_constant)


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


def verify_run(run_dir, course_root=None):
    """{"result", "run", "status", "problems", "changed_files"} for one run folder.

    COURSE_ROOT holds the course files (notes, samples, watched files) the run is checked against;
    by default the workspace that holds the run (RUN_DIR/../..), or a teacher's reference copy.
    """
    # `.` or `../NAME` must name the same run as runs/NAME; a link keeps its own name
    run_dir = Path(os.path.abspath(run_dir))
    course_root = Path(course_root) if course_root is not None else run_dir.parent.parent
    result = {"result": "fail", "run": run_dir.name, "status": None, "problems": [], "changed_files": []}
    problems = result["problems"]
    record, problem = read_record(run_dir)
    problem = problem or shape_problem(record, run_dir.name)
    if problem:
        problems.append(problem)
        return result
    result["status"] = record["status"]
    problem = time_problem(record) or unsupported_stop(record)
    if problem:
        problems.append(problem)
        return result
    if record["status"] in ("running", "needs_human"):
        result["result"] = "needs_human"
        problems.append(human_note(record, run_dir))
        return result
    problems += input_problems(record, run_dir) or step_problems(record, run_dir, course_root)
    result["changed_files"] = changed_files(record, course_root)
    if result["changed_files"]:
        problems.append(changed_files_note(result["changed_files"], course_root, run_dir.parent.parent))
    if not problems:
        result["result"] = "pass"
    return result


def read_record(run_dir):
    """(run.json's record, None), or (None, the problem) when the evidence cannot be taken as it is."""
    linked = next((run_dir / rel for rel in EVIDENCE if is_link(run_dir / rel)), None)
    if linked:
        return None, (f"{cli.display_path(linked)} 是符号链接或目录联接：运行证据必须是运行目录里真实的文件和文件夹，"
                      "请核对它指向哪里，这次运行不能采信。")
    path = run_dir / "run.json"
    try:
        return read_record_json(path), None
    except FileNotFoundError:
        return None, f"{cli.display_path(path)} 不存在：这不是一个完整的运行目录。"
    except NonStandardNumber as exc:
        return None, (f"{cli.display_path(path)} 里有 {exc}：标准 JSON 没有这样的数，程序从不这样写，"
                      "记录被改动过，不能采信。")
    except cli.DuplicateKeyError as exc:
        key = exc.key.encode("utf-8", "backslashreplace").decode("utf-8")
        return None, f"{cli.display_path(path)} 里同一个对象中的键 {key} 出现了两次：记录被改动过，不能采信。"
    except (OSError, ValueError, RecursionError):  # unreadable, not UTF-8, not JSON, absurdly nested
        return None, f"{cli.display_path(path)} 无法读取或不是合法的 JSON：记录损坏或被改动过。"


def shape_problem(record, folder_name):
    if type(record) is not dict or tuple(k for k in RUN_KEYS if k in record) != RUN_KEYS:
        return "run.json 缺少必需的字段（应为 harness-run/1 记录）。"
    if record["schema"] != "harness-run/1":
        return f"run.json 的 schema 是 {record['schema']!r}，应为 harness-run/1。"
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
    """started_at is a time; finished_at too unless the run is still `running`, and not earlier."""
    started, finished = moment(record["started_at"]), moment(record["finished_at"])
    example = "形如 2026-01-31T08:00:00Z 的 UTC 时间"
    if started is None:
        return f"run.json 的 started_at {record['started_at']!r} 不是{example}：记录被改动过。"
    if record["status"] == "running" and record["finished_at"] is None:
        return None
    if finished is None:
        return f"run.json 的 finished_at {record['finished_at']!r} 不是{example}：记录被改动过。"
    if finished < started:
        return (f"run.json 的 finished_at（{record['finished_at']}）早于 started_at（{record['started_at']}）："
                "时间记录被改动过。")
    return None


def unsupported_stop(record):
    """A needs_human record must show the step that went wrong; a running one, no final step."""
    steps, error = record["steps"], record["error"]
    if record["status"] == "needs_human":
        failed = steps and steps[-1].get("ok") is False and type(error) is dict \
            and error.get("type") == steps[-1].get("error_type")
        if not failed:
            return "status 是 needs_human，但记录里没有出错的步骤与 error：状态与记录不符。"
    if record["status"] == "running" and (error is not None or record["finished_at"] is not None):
        return "status 是 running，但记录已有 error 或 finished_at：状态被改动过。"
    return None


def changed_files_note(changed, course_root, workspace):
    """The files whose recorded fingerprint differs, said for the workspace or for a reference copy."""
    files = "、".join(changed)
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


def input_problems(record, run_dir):
    entry, context = record["input"], record["context"]
    if type(entry) is not dict or entry.get("path") != "input/candidate.json":
        return ["run.json 的 input 记录不对：应指向 input/candidate.json。"]
    # the harness writes the copy with LF line ends and hashes those very bytes: a CRLF is an edit
    actual = raw_sha256(run_dir / entry["path"])
    if actual != entry.get("sha256"):
        return ["输入副本 input/candidate.json 的哈希与记录不符：输入被改动或删除了。"]
    entries = context.get("entries") if type(context) is dict else None
    sample_file = f"samples/{record['sample']}.json"
    if type(entries) is not dict or entries.get(sample_file) != actual:
        return [f"输入副本与运行时 {sample_file} 的指纹不符：sample 标签被改动过，或输入不是这个样例。"]
    return []


def step_problems(record, run_dir, course_root):
    """The steps, error and artifact the recorded status implies, checked independently."""
    status, steps = record["status"], record["steps"]
    names = [(step.get("name"), step.get("ok")) for step in steps]
    notes_dir = course_root / "project" / "notes"
    if status == "needs_review":
        problems = [] if names == [("export", True), ("verify", True)] and record["error"] is None \
            else ["needs_review 的运行应有 export 与 verify 两个成功步骤且没有 error。"]
        if record["semantic_review"] != "pending":
            problems.append("needs_review 的运行 semantic_review 必须是 pending：机械通过不等于内容正确。")
        return problems + artifact_problems(record, run_dir, notes_dir)
    if record["semantic_review"] != "not_applicable":
        return ["failed 的运行没有产物可审，semantic_review 应为 not_applicable。"]
    # failed: exactly one export step that the independent rules reproduce
    step = steps[0] if len(steps) == 1 else {}
    error = {"type": step.get("error_type"), "message": step.get("message")}
    if names != [("export", False)] or error["type"] != "ValidationError" or record["error"] != error:
        return ["failed 的运行应只有一个失败的 export 步骤，且 error 与它一致（ValidationError）。"]
    problems = []
    if record["artifact"] is not None or os.path.lexists(run_dir / "artifact"):
        problems.append("failed 的运行不应留下产物：artifact 应为空。")
    found = verify_export.check_candidate(run_dir / "input" / "candidate.json", notes_dir)
    if not found or found[0] != error["message"]:
        problems.append(f"独立规则没有复现记录的失败「{error['message']}」"
                        f"（独立规则给出：{found[0] if found else '没有问题'}）。")
    return problems


def artifact_problems(record, run_dir, notes_dir):
    artifact = record["artifact"]
    if type(artifact) is not dict or sorted(artifact) != list(ARTIFACT_FILES):
        return ["run.json 的 artifact 应记录 cards.json 与 review.md 的哈希。"]
    folder = run_dir / "artifact"
    problems = [f"产物 artifact/{name} 被改动或删除了（与 run.json 记录的哈希不符）。"
                for name in ARTIFACT_FILES if raw_sha256(folder / name) != artifact[name]]
    problems += verify_export.check_artifact(folder, notes_dir)
    if not same_cards(folder / "cards.json", run_dir / "input" / "candidate.json"):
        problems.append("产物里的卡片与输入副本不一致：产物不是由这份输入导出的。")
    return problems


def same_cards(cards_path, candidate_path):
    """cards.json holds exactly the input copy's title and cards (both read strictly)."""
    try:
        cards, candidate = cli.read_json(cards_path), cli.read_json(candidate_path)
        return cards["title"] == candidate["title"] and cards["cards"] == candidate["cards"]
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return False


def raw_sha256(path):
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "missing"


def changed_files(record, course_root):
    context = record["context"]
    entries = context.get("entries") if type(context) is dict else None
    if type(entries) is not dict or sorted(entries) != sorted(WATCHED_FILES):
        return ["run.json 的 context（应列出 14 个受监视文件）"]
    if type(context.get("files")) is not int or context["files"] != len(WATCHED_FILES) \
            or not all(type(sha) is str for sha in entries.values()) or combined(entries) != context.get("fingerprint"):
        return ["run.json 的 context.fingerprint（与逐文件哈希不符）"]
    return [rel for rel in sorted(entries) if entries[rel] != content_sha256(course_root / rel)]


CONCLUSION = {
    "pass": "核对通过：记录与文件一致。",
    "fail": "核对失败：记录与文件不一致，这次运行不能采信；不要改写记录或产物，找到与记录对应的文件版本再核对，"
            "或用新的运行名重新运行。",
    "needs_human": "需要人工核查：这次运行没有正常结束，按上面的提示查看它留下的文件，由人决定下一步。",
}


def main(argv=None):
    cli.use_safe_console()
    parser = cli.ChineseArgumentParser(
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
    out = {key: result[key] for key in ("result", "run", "status")}
    if result["result"] != "pass":
        out.update(problems=result["problems"], changed_files=result["changed_files"])
    cli.print_json(out)
    return cli.EXIT_OK if result["result"] == "pass" else cli.EXIT_STOP


if __name__ == "__main__":
    cli.run(main, "已中断：没有完成核对，请重新运行这条命令。")
