"""Independent check of the notes assistant's question records: did each question stop for the reason it says?

    python3 project/verify_ask.py ask-runs/NAME [ask-runs/OTHER ...] [--server-log FILE]
    exit 0 every record passes, 1 otherwise, 2 bad arguments (no such folder, no question.json), 130 Ctrl-C

For each folder it reads question.json (question-run/1, written by `app.py ask/chat --record`) and re-derives,
from the turns alone, the stop and every count: the turn cap checked before each request, the failure
counter, the cycle rule and its reminder, finish reasons and blank answers, the token budget admitted before
every attempt with zero overshoot, the deadline, every tool call's result before the next request, and the
retry policy (what is retried, the retry limit, the backoff, retry-after-ms before retry-after, an HTTP date
against the reply's arrival, x-should-retry). With --server-log (the mock's own `--log`) it reconciles the
record with what the server received. One JSON line per record on stdout, the problems in Chinese on stderr.
`fail`: no honest run writes this (an edited record or log); `needs_human`: an honest machine can (a killed
process, a Ctrl-C, a clock step); `pass` otherwise.

Another verifier may use it: `check_question(folder, server_log=None, limits=None)` returns the result dict
(`server_log` a path or a `ServerLog`, read once for many records; `limits` the limits its own program asks
with, for a record of another kind: {"max_turns": 4, ...}); `check_record(record, ...)` the same for a record
already read. It imports nothing of project/assistant/: the rules are its own
(askcheck/rules.py); askcheck/ holds the record's shape (shape.py), the derivation (derive.py), the server log
(server.py) and the findings' sentences (findings.py). What it shares with the rest of the workspace: cli.py's
plumbing (capped reads of plain files, strict JSON, the Chinese argument parser, output, paths shown).
"""
try:  # Ctrl-C while Python is still loading this script: a Chinese line and 130, never a traceback
    import sys
    from pathlib import Path

    HERE = Path(__file__).resolve().parent
    sys.path[:0] = [str(HERE), str(HERE.parent)]  # askcheck/ and the workspace's cli
    import cli  # noqa: F401  first: it refuses a Python older than 3.11 before anything else runs
    import os

    from askcheck.derive import Derivation
    from askcheck.findings import Verdict
    from askcheck.server import ServerLog, reconcile
    from askcheck.shape import RECORD_FILE, read_record, shape_findings
    from cli import EXIT_OK, EXIT_STOP, ChineseArgumentParser, display_path, print_json, run, say, use_safe_console
except KeyboardInterrupt:
    if __name__ != "__main__":
        raise
    sys.stderr.write("已中断：还没有开始核对，什么都没有读写。\n")
    raise SystemExit(130) from None


def check_question(folder, server_log=None, limits=None) -> dict:
    """{"result", "stop", "turns", "requests", "run", "problems", "notes", "findings"} for one record folder."""
    folder = Path(folder)
    record, unusable = read_record(folder / RECORD_FILE)
    return check_record(record, server_log, limits, display_path(folder), unusable)


def check_record(record, server_log=None, limits=None, run=None, unusable=None) -> dict:
    """check_question's result for a record already read (a dict as json.loads gives it); UNUSABLE is why it could
    not be read, as shape.read_record says."""
    verdict = Verdict()
    if unusable is not None:
        verdict.add(unusable[0], **unusable[1])
    elif shape_findings(verdict, record):
        derivation = Derivation(record, verdict, limits)
        derivation.run()
        if server_log is not None:
            log = server_log if isinstance(server_log, ServerLog) else ServerLog(server_log)
            reconcile(verdict, record, log, derivation.tolerance)
    turns = record["turns"] if record and type(record.get("turns")) is list else []
    return {"result": verdict.result(), "stop": record.get("stop") if record else None, "turns": len(turns),
            "requests": sum(len(turn["attempts"]) for turn in turns if type(turn) is dict
                            and type(turn.get("attempts")) is list),
            "run": run, "problems": verdict.sentences("fail"), "notes": verdict.sentences("human"),
            "findings": verdict.kinds()}


def print_result(result, several):
    out = {key: result[key] for key in ("result", "stop", "turns", "requests")}
    if several or result["result"] != "pass":
        out["run"] = result["run"]
    for key in ("problems", "notes"):
        if result[key]:
            out[key] = result[key]
    print_json(out)
    if result["result"] == "pass":
        say(f"{result['run']}：pass，停止原因 {result['stop']}、{result['turns']} 轮、{result['requests']} 次 HTTP 请求"
            "都能从记录推出来。")
    else:
        say(f"{result['run']}：{result['result']}" + "".join(f"\n  - {line}" for line in result["problems"])
            + "".join(f"\n  说明：{line}" for line in result["notes"]))


def parse_arguments(argv):
    parser = ChineseArgumentParser(
        prog="verify_ask.py", usage=("[-h] [--server-log FILE] RECORD_DIR [RECORD_DIR ...]",),
        description="独立核对笔记助手的问题记录（ask-runs/NAME）：从记录的各轮重新推出停止原因和每个计数；"
                    "给出 --server-log 时再和 mock 自己的记录对照。",
        epilog="退出码：0 每个记录都 pass；1 有记录 fail 或 needs_human；2 参数错误（例如目录不存在、里面没有 question.json）；"
               "130 被 Ctrl-C 中断。")
    parser.add_argument("folders", nargs="+", metavar="RECORD_DIR", help="问题记录的目录，例如 ask-runs/demo")
    parser.add_argument("--server-log", metavar="FILE", help="mock_model.py --log 写下的服务端记录（每行一个 JSON）")
    args = parser.parse_args(argv)
    for text in args.folders:
        if not os.path.isdir(text):
            parser.error(f"{text} 不存在或不是目录：请给出问题记录的目录，例如 ask-runs/demo（这次没有核对任何记录）。")
        if not os.path.lexists(os.path.join(text, RECORD_FILE)):
            parser.error(f"{text} 里没有 {RECORD_FILE}：这不是问题记录的目录（这次没有核对任何记录）。")
    if args.server_log is not None and not os.path.isfile(args.server_log):
        parser.error(f"--server-log 的文件 {args.server_log} 不存在（这次没有核对任何记录）。")
    return args


def main(argv=None):
    use_safe_console()
    args = parse_arguments(argv)
    log = ServerLog(args.server_log) if args.server_log else None
    counts = {"pass": 0, "fail": 0, "needs_human": 0}
    for folder in args.folders:
        result = check_question(folder, log)
        counts[result["result"]] += 1
        print_result(result, len(args.folders) > 1)
    if len(args.folders) > 1:
        say(f"共核对 {len(args.folders)} 个记录：pass {counts['pass']}，fail {counts['fail']}，"
            f"needs_human {counts['needs_human']}。")
    return EXIT_OK if counts["pass"] == len(args.folders) else EXIT_STOP


if __name__ == "__main__":
    run(main, "已中断：没有完成核对，已打印的结果仍然有效。")
