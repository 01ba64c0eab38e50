"""The labelled corpus of stops: does each guard stop where it should, and never where the model makes progress?

    python3 project/check_stop_corpus.py [--json]

Every case in project/stop_cases/*.json is a script for the mock (`{"script": [...], "label": {"stop": R, "turn":
N} | {"not_before": N}, "guard", "why", "max_tokens"?}`): the mock serves its replies and failures in order, the
notes assistant's real client and loop answer them (the client's waits skipped: mockapi/clock.py), each question
is recorded and its record checked by verify_ask.py against the mock's own log. A case is met when the loop stops
with R after exactly N turns (or, for `not_before`, no sooner than turn N). A false stop is a stop before the
labelled point (or with another reason there); a late stop, turns past it. One line per guard on stdout, beside
the thresholds of Gemini CLI's loop detection and OpenHands' stuck detector, and what their thresholds would do
on the same scripts (their tool-call rules, replayed on the very tool results); docs/assistant/DESIGN.md keeps
the report and where those thresholds come from. Exit 0 only when every case is met and every record passes.
"""
import workspace  # noqa: F401  first: the workspace's cli.py refuses a Python older than 3.11
import functools
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # `assistant`, `mock_model`, `verify_ask` and the workspace's `cli`

from assistant.agent import Limits, run_question  # noqa: E402
from assistant.client import ChatClient  # noqa: E402
from assistant.cycle import _canonical_arguments as canonical  # noqa: E402
from assistant.record import QuestionRecorder  # noqa: E402
from assistant.tools import run_tool  # noqa: E402
from cli import (EXIT_OK, EXIT_STOP, EXIT_USAGE, ChineseArgumentParser, RecordError, loads_record,  # noqa: E402
                 print_json, run, say, use_safe_console)
from mock_model import MockServer  # noqa: E402
from mockapi.clock import SkippedWaits  # noqa: E402
from mockapi.script import script_problem  # noqa: E402
from verify_ask import ServerLog, check_record  # noqa: E402

CASES = HERE / "stop_cases"
QUESTION = "RAG 的步骤顺序是什么？"
GUARDS = ("no_progress", "tool_failures", "max_turns", "output_truncated", "model_refused", "context_full",
          "api_error", "token_budget", "answered")
MAX_TURNS = Limits().max_turns
# What each guard is here, and what the two systems' own detectors do (read in their source; DESIGN.md cites it).
THRESHOLDS = {
    "no_progress": ("同一组 p 轮（p ≤ 5，调用和结果都相同）重复 3 次：周期 1 第 3 轮、周期 2 第 6 轮",
                    "同一调用（名字 + 参数，不看结果）连续 5 次；文字 50 字一块重复 10 次；第 30 轮起另请模型判断",
                    "同一动作 + 同一结果 4 次；两步交替重复 3 次（6 步）"),
    "tool_failures": ("连续 3 轮每个调用都失败（参数不同也算），有一个成功就清零",
                      "没有失败计数（只看重复）", "同一动作连续 3 次都出错"),
    "max_turns": ("每个问题 20 次模型请求，请求之前检查", "打转检测不管总轮数", "卡住检测不管总轮数"),
    "output_truncated": ("finish_reason 为 length（不分大小写）即停，不执行工具", "不在打转检测里", "不在卡住检测里"),
    "model_refused": ("content_filter / insufficient_system_resource 即停", "不在打转检测里", "不在卡住检测里"),
    "context_full": ("400 且说明上下文超长：第 1 次就停，不重试", "不在打转检测里", "压缩上下文连续 10 次仍超长"),
    "api_error": ("重试 2 次（退避或照 retry-after，上限 60 秒）后停；空回答即停", "不在打转检测里",
                  "连续 3 次空回答"),
    "token_budget": ("已用 + 请求体字节数 + max_tokens 超出预算就不发送", "无", "无"),
    "answered": ("模型不再调用工具且文字不空", "—", "—"),
}


@functools.lru_cache(maxsize=None)
def tool(name, arguments):
    """run_tool, once per call: the tools are deterministic, and each run reads the notes again."""
    return run_tool(name, arguments)


class CaseError(ValueError):
    """A case file that cannot be run: the message is Chinese and names the file."""


def load_cases(folder=None):
    """[(name, case)] of every case file (in CASES unless FOLDER), in name order; CaseError for one that cannot
    be run."""
    folder, cases = folder or CASES, []
    for path in sorted(folder.glob("*.json")):
        try:
            case = loads_record(path.read_bytes())
        except (OSError, RecordError) as exc:
            raise CaseError(f"{path.name}：读不出来或不是严格的 JSON（{exc}）") from None
        problem = case_problem(case)
        if problem:
            raise CaseError(f"{path.name}：{problem}")
        cases.append((path.stem, case))
    if not cases:
        raise CaseError(f"{folder} 里没有用例（*.json）")
    return cases


def case_problem(case):
    if type(case) is not dict:
        return "应是一个 JSON 对象"
    label = case.get("label")
    if case.get("guard") not in GUARDS or type(case.get("why")) is not str:
        return f"guard 应是 {'、'.join(GUARDS)} 之一，why 应是文字"
    if not (type(label) is dict and (set(label) == {"stop", "turn"} and label["stop"] in GUARDS + ("api_error",)
                                      and type(label["turn"]) is int) or
            (type(label) is dict and set(label) == {"not_before"} and type(label["not_before"]) is int)):
        return "label 应是 {\"stop\": 停止原因, \"turn\": N} 或 {\"not_before\": N}"
    if "max_tokens" in case and (type(case["max_tokens"]) is not int or case["max_tokens"] < 1):
        return "max_tokens 应是正整数（这个问题的 token 预算）"
    problem = script_problem(case.get("script"))
    return f"script {problem}" if problem else None


def ask_case(mock, clock, name, case):
    """Run one case through the real client and loop; its record (as a dict)."""
    mock.script = case["script"]
    client = ChatClient(f"{mock.url}/mode/script/s/{name[:60]}", "test", sleep=clock.sleep, random=lambda: 0.0,
                        clock=clock.now)
    limits = Limits(max_tokens=case.get("max_tokens"))
    recorder = QuestionRecorder(None, name, QUESTION, client, limits, write=lambda path, record: None)
    recorder.attach(client)
    outcome = run_question(client, [], QUESTION, limits=limits, tool_runner=tool, on_event=recorder.listener())
    recorder.finish(outcome)
    return json.loads(json.dumps(recorder.record))


def judged(label, stop, turns):
    """("met" | "false" | "late", turns late or early) of a loop that stopped with STOP after TURNS turns."""
    if "not_before" in label:
        return ("false", label["not_before"] - turns) if turns < label["not_before"] else ("met", 0)
    if turns > label["turn"]:
        return "late", turns - label["turn"]
    if turns < label["turn"] or stop != label["stop"]:
        return "false", label["turn"] - turns
    return "met", 0


# ---- the two other systems' tool-call rules, replayed on a case's script ----------------------------

def rounds_of(script):
    """Each turn's calls as (name, canonical arguments, result hash, failed), the tools really run, up to the cap;
    None when the script has failures or a reply that ends the question (only tool loops are replayed)."""
    rounds = []
    for item in script[:MAX_TURNS] + [script[-1]] * (MAX_TURNS - len(script)):
        if "status" in item or not item.get("tool_calls"):
            return rounds
        calls = []
        for call in item["tool_calls"]:
            arguments = json.dumps(call.get("arguments", {}), ensure_ascii=False)
            content, failed = tool(call["name"], arguments)
            calls.append((call["name"], canonical(arguments), hash(content), failed))
        rounds.append(calls)
    return rounds


def gemini_turn(rounds):
    """Gemini CLI: the 5th identical call in a row (name + arguments) is a loop; the turn it comes in, or None."""
    last, count = None, 0
    for turn, calls in enumerate(rounds, 1):
        for name, arguments, _, _ in calls:
            count = count + 1 if (name, arguments) == last else 1
            last = (name, arguments)
            if count >= 5:
                return turn
    return None


def openhands_turn(rounds):
    """OpenHands: 4 identical (action, observation) pairs, 3 identical actions that all erred, or two pairs
    alternating over 6 steps; the turn of the step it fires at, or None."""
    steps = []
    for turn, calls in enumerate(rounds, 1):
        for name, arguments, result, failed in calls:
            steps.append(((name, arguments), (result, failed)))
            last = steps[::-1]
            if len(last) >= 4 and all(step == last[0] for step in last[:4]):
                return turn
            if len(last) >= 3 and all(step[0] == last[0][0] and step[1][1] for step in last[:3]):
                return turn
            if len(last) >= 6 and all(last[i] == last[i + 2] for i in range(4)):
                return turn
    return None


def replayed(case, detector):
    """(judgement, turns) of DETECTOR on CASE's script, None where it does not apply; no stop means the cap."""
    if case["guard"] not in ("no_progress", "tool_failures"):
        return None
    turn = detector(rounds_of(case["script"]))
    stop = case["label"].get("stop") if turn is not None else "max_turns"
    return judged(case["label"], stop, turn or MAX_TURNS)


# ---- the report ---------------------------------------------------------------------------------------

def run_corpus(cases):
    """Each case run and judged: [{"case", "guard", "label", "stop", "turns", "requests", "judged", "off",
    "verified", "problems", "gemini", "openhands"}]."""
    clock, folder = SkippedWaits(), tempfile.TemporaryDirectory(prefix="stop-corpus-")
    log = Path(folder.name) / "server-log.jsonl"
    mock = MockServer(0, "script", script=[{}], request_log=log, clock=clock.now).start()
    try:
        records = [(name, case, ask_case(mock, clock, name, case)) for name, case in cases]
    finally:
        mock.stop()
    server = ServerLog(log)
    folder.cleanup()
    results = []
    for name, case, record in records:
        verified = check_record(record, server, run=name)
        verdict, off = judged(case["label"], record["stop"], len(record["turns"]))
        results.append({"case": name, "guard": case["guard"], "label": case["label"], "stop": record["stop"],
                        "turns": len(record["turns"]), "requests": verified["requests"], "judged": verdict,
                        "off": off, "verified": verified["result"], "problems": verified["problems"][:2],
                        "gemini": replayed(case, gemini_turn), "openhands": replayed(case, openhands_turn)})
    return results


def guard_line(guard, results):
    """The report's line for GUARD: its cases, false and late stops, and beside them the two systems' thresholds
    (with what those would do on the same scripts, for the loop guards)."""
    mine = [result for result in results if result["guard"] == guard]
    stops = sum(1 for result in mine if "stop" in result["label"])
    ours, gemini, openhands = THRESHOLDS[guard]
    line = (f"{guard}：{len(mine)} 例（{stops} 例标了停在第几轮，{len(mine) - stops} 例只要求不提前停），"
            f"{_counted([(result['judged'], result['off']) for result in mine])}。本程序：{ours}。")
    for system, name, threshold in (("gemini", "Gemini CLI", gemini), ("openhands", "OpenHands", openhands)):
        replays = [result[system] for result in mine if result[system] is not None]
        line += f"{name}：{threshold}" + (f"，按它的阈值重放：{_counted(replays)}。" if replays else "。")
    return line


def _counted(judgements):
    late = [off for verdict, off in judgements if verdict == "late"]
    false = sum(1 for verdict, _ in judgements if verdict == "false")
    return f"误停 {false}，晚停 {len(late)}" + (f" 例（共晚 {sum(late)} 轮）" if late else "")


def main(argv=None):
    use_safe_console()
    parser = ChineseArgumentParser(
        prog="check_stop_corpus.py", usage=("[-h] [--json]",),
        description="用带标签的停止用例（project/stop_cases/*.json）检查每个防护：该停的按时停，有进展的不提前停。",
        epilog="退出码：0 每个用例都符合标签、每份记录都通过 verify_ask；1 有用例不符或记录没通过；2 参数错误或用例文件坏了；"
               "130 被 Ctrl-C 中断。")
    parser.add_argument("--json", action="store_true", help="stdout 只输出一行 JSON（每个用例的结果）")
    as_json = parser.parse_args(argv).json
    try:
        cases = load_cases()
    except CaseError as exc:
        say(f"错误：{exc}")
        return EXIT_USAGE
    results = run_corpus(cases)
    lines = [guard_line(guard, results) for guard in GUARDS if any(r["guard"] == guard for r in results)]
    wrong = [result for result in results if result["judged"] != "met" or result["verified"] != "pass"]
    if as_json:
        print_json({"cases": len(results), "wrong": len(wrong), "results": results})
    for line in lines:
        (say if as_json else print)(line)
    for result in wrong:
        say(f"不符：{result['case']}：标签 {result['label']}，实际 {result['stop']}（{result['turns']} 轮），"
            f"verify_ask {result['verified']} {result['problems']}")
    say(f"共 {len(results)} 个用例：符合标签 {len(results) - len(wrong)}，不符 {len(wrong)}。")
    return EXIT_STOP if wrong else EXIT_OK


if __name__ == "__main__":
    run(main)
