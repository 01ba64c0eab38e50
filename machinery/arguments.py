"""The loop's command line: its options and their ranges, the name rule, and names already used.

What it guarantees: arguments that cannot start a loop are refused before anything is created, with a
Chinese message naming the option and the value as typed (exit 2 on the command line, ValueError
in-process); a name counts as used when `loop-runs/NAME` or any `runs/NAME-NN` exists in any letter case,
and the message for a used name suggests one that nothing uses yet.

The ranges are those of docs/loop/TASK.md「预算」. The model scenario's options (--max-api-calls,
--model-url, --model-script) are refused with any other scenario, and the last two together; where its
development model comes from is checked by proposer/options.py, loaded only for that scenario. Shared:
harness.py's name rule and name suggestion (a loop's children are harness runs), cli.py's Chinese argument
parser and command lines. The scenarios are the loop's to say: they are handed in.
"""
import math
import os

import cli
import harness

MAX_NAME = 61  # the children are NAME-01 ... and a harness run name has at most 64 characters
ATTEMPTS_RANGE = (1, 5)
SECONDS_RANGE = (0, 300)
ATTEMPT_TIMEOUT_RANGE = (0.1, 300)
API_CALLS_RANGE = (1, 100)
DEFAULT_API_CALLS = 10
MODEL_SCENARIO = "model"  # the one scenario whose proposals come from a development model
WORKSPACE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding machinery/
DEVELOPER_MODELS = "samples/models/ 里的 developer.json（默认）、 repeat.json、 publish.json、 failing.json"


def shown_number(value):
    """A number as the person typed it: 1e9 shows as 1000000000, not 1e+09; nan and inf as themselves."""
    if type(value) not in (int, float):
        return repr(value)
    return str(as_given(value)) if math.isfinite(value) else str(value)


def as_given(seconds):
    """A number of seconds as a record keeps it: 30 rather than 30.0, 2.5 as it is."""
    return int(seconds) if seconds == int(seconds) else seconds


def in_range(value, limits, kinds=(int, float)):
    return type(value) in kinds and limits[0] <= value <= limits[1]  # NaN is in no range


def argument_problem(scenarios, name, scenario, max_attempts, max_seconds, attempt_timeout=None,
                     max_api_calls=None, model_url=None, model_script=None):
    """Why these arguments cannot start a loop of one of SCENARIOS (Chinese), or None."""
    problem = harness.name_problem(name, MAX_NAME)
    if problem:
        return problem
    if scenario not in scenarios:
        return f"--scenario 只能是 {'、'.join(scenarios)} 之一，收到 {scenario!r}。"
    if not in_range(max_attempts, ATTEMPTS_RANGE, (int,)):
        return f"--max-attempts 应为 {ATTEMPTS_RANGE[0]}-{ATTEMPTS_RANGE[1]} 的整数（含第一次尝试），收到 {max_attempts!r}。"
    if not in_range(max_seconds, SECONDS_RANGE):
        return (f"--max-seconds 应为 {SECONDS_RANGE[0]}-{SECONDS_RANGE[1]} 秒（可以是小数，只在轮次边界检查），"
                f"收到 {shown_number(max_seconds)}。")
    if attempt_timeout is not None and not in_range(attempt_timeout, ATTEMPT_TIMEOUT_RANGE):
        return (f"--attempt-timeout 应为 {ATTEMPT_TIMEOUT_RANGE[0]:g}-{ATTEMPT_TIMEOUT_RANGE[1]:g} 秒（单次尝试的时限，"
                f"到时终止执行它的子进程），收到 {shown_number(attempt_timeout)}。")
    return model_option_problem(scenario, max_api_calls, model_url, model_script)


def model_option_problem(scenario, max_api_calls, model_url, model_script):
    """The model scenario's options: only with it, a source or the other, the budget in range (Chinese), or None."""
    given = [option for option, value in (("--max-api-calls", max_api_calls), ("--model-url", model_url),
                                          ("--model-script", model_script)) if value is not None]
    if given and scenario != MODEL_SCENARIO:
        return f"{given[0]} 只能和 --scenario {MODEL_SCENARIO} 一起用（其他情景的候选是作者写好的脚本，不调用模型）。"
    if model_url is not None and model_script is not None:
        return "--model-url 和 --model-script 只能选一个：开发模型要么是另一个服务，要么是本机 mock 重放的脚本。"
    if max_api_calls is not None and not in_range(max_api_calls, API_CALLS_RANGE, (int,)):
        return (f"--max-api-calls 应为 {API_CALLS_RANGE[0]}-{API_CALLS_RANGE[1]} 的整数（HTTP 请求次数，含重试），"
                f"收到 {max_api_calls!r}。")
    return None


def parse_arguments(argv, scenarios, tool_seconds):
    """The command's arguments; exit 2 with a Chinese message when they cannot start (or resume) a loop.

    `--resume NAME` stands alone: the scenario and the budgets are the record's. TOOL_SECONDS: how long the slow
    scenario's stand-in tool waits (said in --help)."""
    parser = cli.ChineseArgumentParser(
        usage=("[-h] --run NAME --scenario", f"{{{','.join(scenarios)}}} [--max-attempts N]",
               "[--max-seconds S] [--attempt-timeout S] [--max-api-calls N]",
               "[--model-url URL | --model-script FILE]", "| --resume NAME"),
        description="第 14 篇的外层循环：在预算内根据反馈更换固定候选，停在 needs_review、停滞、预算耗尽或需要人工。",
        epilog="退出码：0 needs_review（机械通过，内容待审）；1 stalled / budget_exhausted / needs_human（受控停止，"
               "包括单次时限到了的 attempt_timeout）；2 参数错误、名称已用过，或 --resume 不能续跑；130 被 Ctrl-C 或"
               "终止信号中断。范围与预算见 docs/loop/TASK.md。",
    )
    parser.add_argument("--run", metavar="NAME",
                        help="新的循环名（1-61 个字符，不区分大小写；loop-runs/NAME 和 runs/NAME-NN 都不得已存在）")
    parser.add_argument("--scenario", choices=scenarios,
                        help=f"作者预先写好的候选脚本（slow 与 repair 相同，但每次尝试先等替身工具 {tool_seconds} 秒）")
    parser.add_argument("--max-attempts", type=int, metavar="N", help="最多尝试次数，含第一次，1-5（默认 3）")
    parser.add_argument("--max-seconds", type=float, metavar="S", help="轮次边界时间预算，0-300 秒，可为小数（默认 30）")
    parser.add_argument("--attempt-timeout", type=float, default=None, metavar="S",
                        help="单次尝试的时限，0.1-300 秒：每次尝试在自己的子进程里运行，到时终止（默认不限，在循环进程里运行）")
    parser.add_argument("--max-api-calls", type=int, default=None, metavar="N",
                        help=f"只用于 --scenario {MODEL_SCENARIO}：开发模型的 API 调用预算，{API_CALLS_RANGE[0]}-"
                             f"{API_CALLS_RANGE[1]} 次 HTTP 请求，含重试，每次请求之前检查（默认 {DEFAULT_API_CALLS}）")
    parser.add_argument("--model-url", metavar="URL",
                        help=f"只用于 --scenario {MODEL_SCENARIO}：另一个 OpenAI 兼容服务的地址，密钥放在环境变量 "
                             "LOOP_MODEL_API_KEY（默认不联网：循环自己启动本机 mock）")
    parser.add_argument("--model-script", metavar="FILE",
                        help=f"只用于 --scenario {MODEL_SCENARIO}：本机 mock 重放的开发模型（工作区里的脚本），自带 "
                             f"{DEVELOPER_MODELS}")
    parser.add_argument("--resume", metavar="NAME",
                        help="续跑被中断（或进程被强行结束）的循环 NAME：先核对记录、文件和进行中的那次尝试留下了什么，"
                             "情景和预算取自记录，不能另给")
    args = parser.parse_args(argv)
    if args.resume is not None:
        given = [option for option, value in (
            ("--run", args.run), ("--scenario", args.scenario), ("--max-attempts", args.max_attempts),
            ("--max-seconds", args.max_seconds), ("--attempt-timeout", args.attempt_timeout)) if value is not None]
        if given:
            parser.error(f"--resume 只接受循环的名称：情景和预算取自它的记录，不能改（收到 {'、'.join(given)}）。")
        problem = harness.name_problem(args.resume, MAX_NAME)
        if problem:
            parser.error(problem)
        return args
    if args.run is None or args.scenario is None:
        missing = [option for option, value in (("--run", args.run), ("--scenario", args.scenario)) if value is None]
        parser.error(f"缺少必需的参数：{'、'.join(missing)}（或用 --resume NAME 续跑一个被中断的循环）。")
    args.max_attempts = 3 if args.max_attempts is None else args.max_attempts
    args.max_seconds = 30 if args.max_seconds is None else args.max_seconds
    problem = argument_problem(scenarios, args.run, args.scenario, args.max_attempts, args.max_seconds,
                               args.attempt_timeout, args.max_api_calls, args.model_url, args.model_script)
    if not problem and args.scenario == MODEL_SCENARIO:  # where its model comes from: a file, an address, a key
        from proposer.options import model_problem
        problem = model_problem(WORKSPACE, args.model_url, args.model_script)
    if problem:
        parser.error(problem)
    return args


def used_child_name(root, name):
    """`runs/NAME-NN` (any case) that makes NAME a used loop name, or None."""
    try:
        children = os.listdir(os.path.join(root, "runs"))
    except OSError:
        return None
    prefix = name.lower() + "-"
    return next((f"runs/{child}" for child in sorted(children)
                 if child.lower().startswith(prefix) and len(child) == len(prefix) + 2
                 and child[-2:].isascii() and child[-2:].isdigit()), None)


def used_name(root, name):
    """What makes NAME a used loop name (loop-runs/NAME or runs/NAME-NN, any case), or None."""
    try:
        loops = os.listdir(os.path.join(root, "loop-runs"))
    except OSError:
        loops = []
    same = next((entry for entry in loops if entry.lower() == name.lower()), None)
    return f"loop-runs/{same}" if same else used_child_name(root, name)


def name_taken_message(exc, args, root):
    """Why the name cannot be used (exit 2), with a command that would work (cli.NameTaken EXC)."""
    in_way = cli.display_path(root / exc.path)
    if exc.busy:
        return (f"另一个进程正在用名称 {args.run}（不区分大小写）开始循环，认领目录 {in_way} 还在：请换一个新名称。"
                f"如果没有别的循环在运行，它是被强行结束的进程留下的，{cli.STALE_LOCK_SECONDS} 秒后会自动失效。")
    entry = exc.path.split("/", 1)[-1]
    same_case = args.run in (entry, entry[:-3])
    budgets = (f" --max-attempts {args.max_attempts}" if args.max_attempts != 3 else "") + (
        f" --max-seconds {args.max_seconds:g}" if args.max_seconds != 30 else "") + (
        f" --attempt-timeout {args.attempt_timeout:g}" if args.attempt_timeout is not None else "")
    unused = harness.suggest_name(args.run, lambda other: used_name(root, other), MAX_NAME)
    example = cli.command(root / "loop_lab.py", "--run", unused, "--scenario", args.scenario)
    status = recorded_status(root / exc.path / "loop.json")
    resume = (f"它停在 {status}，没有做完：要接着做，用 {cli.command(root / 'loop_lab.py', '--resume', entry)}"
              "（先核对再续跑）；要重新开始，" if status in ("interrupted", "running") else "")
    return (f"{in_way} 已存在：名称 {args.run} 已经用过{'' if same_case else '（名称不区分大小写）'}。"
            f"{resume}旧记录保持不动，请换一个新名称。例如：{example}{budgets}")


def recorded_status(path):
    """The status the loop record PATH says, or None when there is no record to read there."""
    try:
        record = cli.read_json(path)
    except (OSError, ValueError):
        return None
    return record.get("status") if isinstance(record, dict) else None
