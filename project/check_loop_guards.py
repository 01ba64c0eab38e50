"""Acceptance check of the notes assistant's stop guards, run against the failing mock model.

    python3 project/check_loop_guards.py

Starts mock_model.py in this process (a thread on 127.0.0.1; every check uses a session of its
own), drives the guarded loop of assistant/agent.py through each failure mode, and prints one
`PASS` / `FAIL` / `SKIP` line per check on stdout (as the lesson prints them), with figures
taken from the mock's own counters, and the totals on stderr; `--json` prints one JSON line
with the totals and every check instead. Exit 0 only when no check fails. Retry waits are
recorded instead of slept, except where a wait itself is checked (the retry-after window, the
real backoff of the app, the whole-request deadline), so the whole run takes about 5 seconds.
The rules it checks are written out in docs/assistant/DESIGN.md.
"""
import workspace  # noqa: F401  first: the workspace's cli.py refuses a Python older than 3.11
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # `assistant`, `mock_model` and the workspace's `cli`

from assistant.agent import Limits, run_question  # noqa: E402
from assistant.client import ChatClient  # noqa: E402
from assistant.config import DEFAULT_MAX_TOKENS  # noqa: E402
from assistant.errors import BadRequestError, describe_api_error  # noqa: E402
from assistant.history import history_problems, is_reminder, seal_dangling_tool_calls  # noqa: E402
from assistant.record import RECORD_FILE, QuestionRecorder  # noqa: E402
from assistant.tools import TOOL_SCHEMAS, run_tool  # noqa: E402
from cli import (EXIT_INTERRUPTED, EXIT_OK, EXIT_STOP, ChineseArgumentParser, print_json,  # noqa: E402
                 run, say, use_safe_console)
from mock_model import MockServer  # noqa: E402
from mockapi.clock import SkippedWaits  # noqa: E402
from verify_ask import ServerLog, check_question  # noqa: E402  the independent check of each record

QUESTION = "RAG 的步骤顺序是什么？"
RETRY_AFTER = 1.0  # the mock's retry-after for 429-after: a whole second, as real servers send
DEADLINE = 0.15  # the client's whole-request deadline in the trickle check (the app's default is 60 s)
TRICKLE_SECONDS = 0.05  # the mock sends one byte this often: a 500-byte reply would take 25 s
CHECKS = []


class CheckFailed(Exception):
    """A check's expectation did not hold; the message says what was seen."""


class Skipped(Exception):
    """The check cannot run on this platform; the message says why."""


def check(description):
    def register(function):
        CHECKS.append((description, function))
        return function
    return register


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


class Run:
    """One question asked through the loop against one fresh mock session, and verify_ask's check of its record."""

    def __init__(self, outcome, history, client, mock, tools_run, verified):
        self.outcome, self.history, self.client = outcome, history, client
        self.sleeps, self.mock, self.tools_run, self.verified = client.sleeps, mock, tools_run, verified


class Lab:
    """The mock server plus helpers that give each client run its own mock session and question record.

    Each question is recorded in RECORDS (question-run/1) and checked there by verify_ask.py against the mock's
    own log (`mock.request_log`). The client's waits are skipped (CLOCK adds them to the clock both read).
    """

    def __init__(self, mock, records, clock):
        self.mock, self.records, self.clock = mock, records, clock
        self.sessions = 0
        self.shared = {}
        self.verified = []

    def base_url(self, mode):
        self.sessions += 1
        return f"{self.mock.url}/mode/{mode}/s/check{self.sessions}"

    def counters(self, base_url):
        """The mock's own record of one session: requests, retry_counts, gaps, statuses, rejected."""
        _, _, mode, _, session = base_url.rsplit("/", 4)
        return self.mock.stats(mode, session)["session"]

    def client(self, mode, sleep=None, **options):
        """A ChatClient on a fresh session; waits are recorded in `client.sleeps`, never slept."""
        sleeps = []

        def skip(seconds):
            sleeps.append(seconds)
            self.clock.sleep(seconds)
        client = ChatClient(self.base_url(mode), "test", sleep=sleep or skip, random=lambda: 0.0,
                            clock=self.clock.now, **options)
        client.sleeps = sleeps
        return client

    def ask(self, mode, tool_runner=run_tool, history=None, sleep=None, limits=None, **options):
        client = self.client(mode, sleep, **options)
        tools_run = []

        def recording_runner(name, arguments):
            tools_run.append(name)
            return tool_runner(name, arguments)

        history = [] if history is None else history
        name = client.base_url.rsplit("/", 1)[1]
        recorder = QuestionRecorder(self.records / name / RECORD_FILE, name, QUESTION, client, limits or Limits())
        (self.records / name).mkdir(parents=True)
        recorder.attach(client)
        recorder.start()
        outcome = run_question(client, history, QUESTION, tool_runner=recording_runner, limits=limits,
                               on_event=recorder.listener())
        recorder.finish(outcome)
        return Run(outcome, history, client, self.counters(client.base_url), tools_run, self.verify(name))

    def verify(self, name):
        """verify_ask's result for the record NAME, against everything the mock has logged so far."""
        self.mock.request_log.file.flush()
        result = check_question(self.records / name, ServerLog(self.mock.request_log.file.name))
        self.verified.append(result)
        return result

    def ask_once(self, mode):
        """The same plain run of `mode`, shared by the checks that look at it from two sides."""
        if mode not in self.shared:
            self.shared[mode] = self.ask(mode)
        return self.shared[mode]

    def start_app(self, mode):
        """Start `app.py ask --json --record NAME QUESTION` against a fresh session (the real process, real sleeps);
        its record goes to RECORDS."""
        base_url = self.base_url(mode)
        env = dict(os.environ, DEEPSEEK_API_KEY="test", DEEPSEEK_BASE_URL=base_url, ASK_RUNS_DIR=str(self.records),
                   PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        env.pop("DEEPSEEK_TIMEOUT", None)
        process = subprocess.Popen([sys.executable, str(HERE / "app.py"), "ask", "--json", "--record",
                                    base_url.rsplit("/", 1)[1], QUESTION],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                   text=True, encoding="utf-8")
        return process, base_url


def one_json_line(stdout):
    lines = stdout.splitlines()
    expect(len(lines) == 1, f"stdout 应该只有一行 JSON，实际 {len(lines)} 行：{stdout[:200]!r}")
    try:
        return json.loads(lines[0])
    except ValueError:
        raise CheckFailed(f"stdout 不是 JSON：{lines[0][:200]!r}") from None


def expect_stop(run, stop, requests):
    seen = run.mock["requests"]
    expect(run.outcome.stop == stop, f"停止原因应为 {stop}，实际 {run.outcome.stop}（mock 收到 {seen} 次请求）")
    expect(seen == requests, f"mock 应收到 {requests} 次请求，实际 {seen} 次")
    expect(run.mock["rejected"] == 0, f"mock 拒收了 {run.mock['rejected']} 次不合法的历史")
    expect_verified(run.verified, stop, seen)


def expect_verified(verified, stop, requests):
    """verify_ask re-derived the same stop and request count from the record and the server's log (a Ctrl-C's
    record is valid and needs a person)."""
    wanted = "needs_human" if stop == "interrupted" else "pass"
    said = (verified["problems"] + verified["notes"] + [""])[0]
    expect(verified["result"] == wanted, f"verify_ask 对记录 {verified['run']} 给出 {verified['result']}：{said}")
    expect((verified["stop"], verified["requests"]) == (stop, requests),
           f"记录里是 {verified['stop']}、{verified['requests']} 次请求，应为 {stop}、{requests} 次")


# ---- the lesson's checks, adapted ---------------------------------------------------------------

def stops_at(description, mode, stop, requests, note):
    """Register the plainest check: asking against `mode` ends with `stop` after `requests` requests."""
    @check(description)
    def stopped(lab):
        run = lab.ask_once(mode)
        expect_stop(run, stop, requests)
        return f"mock 收到 {run.mock['requests']} 次请求{note}"


stops_at("无限开单会被 MAX_TURNS 拦住", "progress", "max_turns", 20, "（参数每轮都变）")


@check("用满上限后历史结尾是 assistant 的停止说明")
def stop_message_recorded(lab):
    run = lab.ask_once("progress")
    last = run.history[-1]
    expect(last.get("role") == "assistant" and not last.get("tool_calls"),
           f"最后一条应是不带工具调用的 assistant 消息，实际：{last}")
    expect("20" in last.get("content", ""), f"停止说明没有提到 20 次：{last.get('content')!r}")
    expect(not history_problems(run.history), f"历史不合法：{history_problems(run.history)}")
    return f"历史 {len(run.history)} 条，最后一条：{last['content'][:24]}……；mock 拒收 {run.mock['rejected']} 次"


stops_at("连续失败会提早停", "fail", "tool_failures", 3, "，比上限 20 次早停")


@check("429 会自动重试两次，等待时间加倍")
def rate_limit_retried(lab):
    run = lab.ask("429")
    expect_stop(run, "api_error", 3)
    expect(run.mock["retry_counts"] == [0, 1, 2],
           f"x-stainless-retry-count 应为 0、1、2，mock 收到 {run.mock['retry_counts']}")
    expect(run.sleeps == [0.5, 1.0], f"两次等待应为 0.5 秒和 1.0 秒（随机系数取 0），实际 {run.sleeps}")
    return f"mock 收到 3 次请求（retry-count 0、1、2），等待 {run.sleeps[0]:.2f} 秒、{run.sleeps[1]:.2f} 秒"


@check("重试用尽给出中文说明而不是 traceback")
def retries_exhausted(lab):
    process, base_url = lab.start_app("429")
    stdout, stderr = process.communicate(timeout=15)
    result = one_json_line(stdout)
    counters = lab.counters(base_url)
    gaps = counters["gaps"][1:]
    expect(process.returncode == 1, f"退出码应为 1，实际 {process.returncode}")
    expect("Traceback" not in stderr, f"stderr 出现了 traceback：{stderr[-300:]}")
    expect(result.get("stop") == "api_error" and "429" in result.get("answer", ""),
           f"应以 api_error 停下并说明 429，实际 {result}")
    expect(counters["requests"] == 3, f"mock 应收到 3 次请求，实际 {counters['requests']} 次")
    expect_verified(lab.verify(base_url.rsplit("/", 1)[1]), "api_error", 3)
    # SDK backoff: 0.5 s then 1.0 s, each shortened by up to 25 % at random: windows that do not overlap
    expect(0.37 <= gaps[0] <= 0.7 and 0.74 <= gaps[1] <= 1.4,
           f"真实重试间隔应在 0.375-0.5 秒和 0.75-1 秒（加倍），mock 记录的是 {gaps}")
    return (f"app.py 退出码 1：{result['answer'][:20]}……；mock 收到 3 次请求，"
            f"真实间隔 {gaps[0]:.2f} 秒、{gaps[1]:.2f} 秒")


@check("API 失败不会在历史留下半截消息")
def api_failure_keeps_history(lab):
    earlier = [{"role": "user", "content": "什么是 RAG？"}, {"role": "assistant", "content": "先检索再生成。"}]
    history = [dict(message) for message in earlier]
    run = lab.ask("503", history=history)
    expect_stop(run, "api_error", 3)
    expect(history == earlier + [{"role": "user", "content": QUESTION}],
           f"历史应只多出这次的问题，实际最后一条：{history[-1]}")
    return f"历史 {len(earlier)} 条 → {len(history)} 条（只多了这次的问题）；mock 收到 3 次请求"


@check("retry-after 指定的秒数会被照做")
def retry_after_obeyed(lab):
    run = lab.ask("429-after", sleep=time.sleep)
    expect_stop(run, "answered", 2)
    gap = run.mock["gaps"][1]
    expect(RETRY_AFTER - 0.05 <= gap <= RETRY_AFTER + 0.5,
           f"第 2 次请求应在 {RETRY_AFTER:g} 秒后到达，mock 记录的间隔是 {gap} 秒")
    return f"retry-after: {RETRY_AFTER:g}，mock 记录的间隔 {gap:.2f} 秒，第 2 次请求得到回答"


def busy_server(lab, mode):
    run = lab.ask(mode)
    expect_stop(run, "api_error", 3)
    expect("繁忙" in run.outcome.answer and mode in run.outcome.answer,
           f"说明应提到服务繁忙和 {mode}：{run.outcome.answer}")
    return f"mock 收到 3 次请求（{'、'.join(map(str, run.mock['statuses']))}）：{run.outcome.answer}"


@check("503 会重试，说明清楚")
def overloaded_503(lab):
    return busy_server(lab, "503")


@check("529 会重试，说明清楚")
def overloaded_529(lab):
    return busy_server(lab, "529")


@check("400 不重试，直接回报")
def bad_request_not_retried(lab):
    client = lab.client("plain")
    dangling = [{"role": "user", "content": QUESTION},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_x", "type": "function",
                     "function": {"name": "list_notes", "arguments": "{}"}}]}]
    try:
        client.complete(dangling, TOOL_SCHEMAS)
        raise CheckFailed("一份有悬空调用的历史被接受了（mock 应回 400）")
    except BadRequestError as exc:
        message = describe_api_error(exc)
    counters = lab.counters(client.base_url)
    expect(counters["requests"] == 1 and counters["rejected"] == 1,
           f"mock 应只收到 1 次请求并拒收，实际收到 {counters['requests']} 次、拒收 {counters['rejected']} 次")
    expect(client.sleeps == [], f"400 不该等待重试，实际等待 {client.sleeps}")
    return f"mock 收到 1 次请求（拒收 1 次，没有重试）：{message[:30]}……"


@check("400 带 x-should-retry: true 仍会重试")
def should_retry_header(lab):
    run = lab.ask("400-retry")
    expect_stop(run, "answered", 2)
    expect(run.mock["statuses"] == [400, 200], f"mock 回应应为 400、200，实际 {run.mock['statuses']}")
    return f"mock 收到 2 次请求（{run.mock['statuses'][0]} → {run.mock['statuses'][1]}），得到回答"


@check("500 重试两次后成功，使用者无感")
def internal_error_recovers(lab):
    run = lab.ask("500-then-ok")
    expect_stop(run, "answered", 3)
    expect(run.mock["statuses"] == [500, 500, 200], f"mock 回应应为 500、500、200，实际 {run.mock['statuses']}")
    expect(run.outcome.answer.startswith("（mock）"), f"应拿到 mock 的回答：{run.outcome.answer}")
    return f"mock 收到 3 次请求（500、500、200），回答：{run.outcome.answer[:16]}……"


def stopped_before_tools(lab, mode, stop):
    """Ask against `mode`: one request, `stop`, no tool run and no call of that response kept."""
    run = lab.ask(mode)
    expect_stop(run, stop, 1)
    expect(run.tools_run == [], f"不该执行工具，实际执行了 {run.tools_run}")
    expect(not any(message.get("tool_calls") for message in run.history), "这次回应里的调用不该进入历史")
    return run


@check("输出被截断会停下，不执行工具")
def output_truncated(lab):
    run = stopped_before_tools(lab, "length", "output_truncated")
    expect(run.history[-1]["role"] == "assistant", "历史结尾应是 assistant 的停止说明")
    return f"mock 收到 1 次请求，半截的调用没有执行：{run.outcome.answer[:22]}……"


@check("上下文超长会停下，不执行工具")
def context_full(lab):
    run = stopped_before_tools(lab, "400", "context_full")
    expect(run.history == [{"role": "user", "content": QUESTION}], f"历史应只有这次的问题，实际 {run.history}")
    return f"mock 收到 1 次请求，不重试，历史没有补 assistant：{run.outcome.answer[:22]}……"


@check("模型拒答会停下，不执行工具")
def model_refused(lab):
    run = stopped_before_tools(lab, "refuse", "model_refused")
    return f"mock 收到 1 次请求，执行工具 0 次：{run.outcome.answer[:22]}……"


def accepted_by_mock(lab, history):
    """Send `history` to a fresh plain session: the mock's own validation judges it."""
    client = lab.client("plain")
    try:
        client.complete(history, TOOL_SCHEMAS)
    except BadRequestError as exc:
        raise CheckFailed(f"mock 拒收了这份历史：{exc.message}") from None
    return lab.counters(client.base_url)


@check("工具被中断后每个调用都有结果")
def interrupted_tool(lab):
    def interrupt(name, arguments):
        raise KeyboardInterrupt

    run = lab.ask("mixed", tool_runner=interrupt)
    expect_stop(run, "interrupted", 1)
    calls = run.history[1]["tool_calls"]
    results = [message for message in run.history[2:] if message.get("role") == "tool"]
    expect([result["tool_call_id"] for result in results] == [call["id"] for call in calls],
           f"{len(calls)} 个调用只有 {len(results)} 个结果")
    counters = accepted_by_mock(lab, run.history)
    return (f"这一轮 {len(calls)} 个调用都有结果（{results[0]['content']} / {results[1]['content']}）；"
            f"mock 接受了之后的请求（拒收 {counters['rejected']} 次）")


@check("悬空的调用会被补上“状态不明”的结果")
def dangling_sealed(lab):
    client = lab.client("loop")
    history = [{"role": "user", "content": QUESTION}]
    history.append(client.complete(history, TOOL_SCHEMAS)["message"])  # Ctrl-C lands right here
    before = lab.client("plain")
    try:
        before.complete(history, TOOL_SCHEMAS)
        raise CheckFailed("mock 接受了带悬空调用的历史")
    except BadRequestError:
        pass
    expect(seal_dangling_tool_calls(history) is True, "seal_dangling_tool_calls 应该返回 True")
    expect("状态不明" in history[-1].get("content", ""), f"补上的结果应说明状态不明：{history[-1]}")
    counters = accepted_by_mock(lab, history)
    rejected = lab.counters(before.base_url)["rejected"]
    return f"补之前 mock 拒收 {rejected} 次，补之后接受（拒收 {counters['rejected']} 次）：{history[-1]['content']}"


@check("没有悬空时不会乱补")
def nothing_to_seal(lab):
    run = lab.ask_once("loop")
    snapshot = json.dumps(run.history, ensure_ascii=False)
    expect(seal_dangling_tool_calls(run.history) is False, "完整的历史不该被补")
    expect(json.dumps(run.history, ensure_ascii=False) == snapshot, "完整的历史被改动了")
    expect(seal_dangling_tool_calls([]) is False, "空历史不该被补")
    counters = accepted_by_mock(lab, run.history)
    return f"历史 {len(run.history)} 条，补之前后一致；mock 接受它（拒收 {counters['rejected']} 次）"


@check("整个进程收到 Ctrl-C：退出码 130，仍打印一行 JSON，不再发请求")
def whole_process_interrupt(lab):
    if os.name == "nt" or not hasattr(signal, "SIGINT"):
        raise Skipped("Windows 不能只对一个子进程发送 Ctrl-C（SIGINT），请在 Linux / macOS 上验证这一项")
    # A SIGINT ignored here (a job started with `&` by a script) would stay ignored in the child
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process, base_url = lab.start_app("slow")
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        deadline = time.monotonic() + 10
        while lab.counters(base_url)["requests"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        expect(lab.counters(base_url)["requests"] == 1, "app.py 没有在 10 秒内请求 mock")
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    result = one_json_line(stdout)
    requests = lab.counters(base_url)["requests"]
    expect(process.returncode == 130, f"退出码应为 130，实际 {process.returncode}：{stderr[-200:]}")
    expect("Traceback" not in stderr, f"stderr 出现了 traceback：{stderr[-300:]}")
    expect(result.get("stop") == "interrupted", f"stop 应为 interrupted，实际 {result.get('stop')}")
    expect(requests == 1, f"中断后不该再发请求，mock 一共收到 {requests} 次")
    verified = lab.verify(base_url.rsplit("/", 1)[1])
    expect_verified(verified, "interrupted", 1)
    return f"退出码 130，stop=interrupted，mock 一共收到 {requests} 次请求；记录有效，verify_ask：{verified['result']}"


# ---- the cycle detector's checks ----------------------------------------------------------------

stops_at("相同的调用在第 3 轮被拦下", "loop", "no_progress", 3, "，而不是用满 20 次")
stops_at("周期 2 的循环在第 6 轮被拦下", "cycle", "no_progress", 6, "（list_notes → read_note 重复 3 次）")


@check("参数或结果在变就不会提前停")
def changing_rounds_not_stopped(lab):
    by_arguments = lab.ask_once("progress")
    expect_stop(by_arguments, "max_turns", 20)
    results = iter(range(1000))
    by_results = lab.ask("loop", tool_runner=lambda name, arguments: (f"第 {next(results)} 次的结果", False))
    expect_stop(by_results, "max_turns", 20)
    return (f"参数在变：mock 收到 {by_arguments.mock['requests']} 次；"
            f"参数不变但结果在变：mock 收到 {by_results.mock['requests']} 次；都停在上限")


@check("混合的一轮会把失败计数归零")
def mixed_round_resets(lab):
    mixed = lab.ask("mixed")
    expect_stop(mixed, "max_turns", 20)
    rhythm = lab.ask("fail-mixed")
    expect_stop(rhythm, "max_turns", 20)
    return (f"mixed（每轮一败一成）：mock 收到 {mixed.mock['requests']} 次；"
            f"fail-mixed（败、败、混合……）：mock 收到 {rhythm.mock['requests']} 次；都没有被连续失败拦下")


# ---- faults of real servers, the reminder and the token budget ---------------------------------

def reminders(run):
    return [message for message in run.history if is_reminder(message)]


@check("重复的调用先提醒一次，不听提醒仍在第 3 轮停下")
def reminder_then_stop(lab):
    run = lab.ask_once("loop")
    expect_stop(run, "no_progress", 3)
    found = reminders(run)
    expect(len(found) == 1, f"应有 1 条【循环提醒】，实际 {len(found)} 条")
    position = run.history.index(found[0])
    expect([message["role"] for message in run.history[position - 2:position + 2]] == ["assistant", "tool", "user",
                                                                                         "assistant"],
           "提醒应在第 2 轮的工具结果之后、第 3 次请求之前")
    cycle = lab.ask_once("cycle")
    expect(len(reminders(cycle)) == 1 and cycle.mock["requests"] == 6, "周期 2 的循环也应只提醒 1 次、第 6 轮停")
    return f"相同调用：第 2 轮后提醒 1 次，mock 收到 3 次请求；周期 2：提醒 1 次，mock 收到 {cycle.mock['requests']} 次"


@check("听提醒的模型在第 3 次请求时回答")
def reminder_heeded(lab):
    run = lab.ask("heed-reminder")
    expect_stop(run, "answered", 3)
    expect(len(reminders(run)) == 1, f"应有 1 条【循环提醒】，实际 {len(reminders(run))} 条")
    return f"mock 收到 3 次请求，第 3 次得到回答：{run.outcome.answer[:16]}……"


@check("整个请求有期限：一个字节一个字节地回应也会超时")
def deadline_holds(lab):
    started = time.monotonic()
    run = lab.ask("trickle", timeout=DEADLINE)
    seconds = time.monotonic() - started
    expect_stop(run, "api_error", 3)
    expect("超时" in run.outcome.answer, f"说明应提到超时：{run.outcome.answer}")
    # without the deadline a reply takes 25 s a request: 2 s of slack is a busy machine, never a missing deadline
    expect(seconds < 3 * DEADLINE + 2, f"3 次请求各 {DEADLINE:g} 秒为限，却用了 {seconds:.2f} 秒")
    return (f"每 {TRICKLE_SECONDS:g} 秒 1 个字节，期限 {DEADLINE:g} 秒：3 次请求共 {seconds:.2f} 秒后停下"
            f"（等待 {run.sleeps} 只记录不睡）")


@check("正文中途断开是回应不完整，会像连接错误一样重试")
def cut_off_body(lab):
    run = lab.ask("cut-off")
    expect_stop(run, "api_error", 3)
    expect("不完整" in run.outcome.answer and "连不上" not in run.outcome.answer,
           f"说明应是回应不完整而不是连不上：{run.outcome.answer}")
    return f"mock 收到 3 次请求：{run.outcome.answer[:30]}……"


@check("retry-after 超过 60 秒不提前重试，说明要等多久")
def long_retry_after(lab):
    run = lab.ask("429-long")
    expect_stop(run, "api_error", 1)
    expect("70 秒" in run.outcome.answer and run.sleeps == [], f"应说明要等 70 秒且不重试：{run.outcome.answer}")
    return f"mock 收到 1 次请求：{run.outcome.answer[:34]}……"


@check("空回答和 200 里的错误对象都不算回答")
def replies_that_are_not_answers(lab):
    empty, error = lab.ask("empty"), lab.ask("error-200")
    expect_stop(empty, "api_error", 1)
    expect_stop(error, "api_error", 1)
    expect("空回答" in empty.outcome.answer, f"应说明是空回答：{empty.outcome.answer}")
    expect("upstream overloaded" in error.outcome.answer, f"应显示服务端的原话：{error.outcome.answer}")
    return f"各 1 次请求，不重试：{empty.outcome.answer[:14]}……；{error.outcome.answer[3:40]}……"


@check("没有 usage 的回应按上限计入，并标为估计")
def unknown_usage_is_not_zero(lab):
    run = lab.ask("no-usage")
    expect_stop(run, "answered", 1)
    bound = run.mock["body_sizes"][0] + DEFAULT_MAX_TOKENS
    tokens = run.outcome.tokens
    expect(tokens.estimated and tokens.used == bound, f"应按上限 {bound} 计入并标为估计，实际 {tokens.record()}")
    return f"请求体 {run.mock['body_sizes'][0]} 字节 + max_tokens {DEFAULT_MAX_TOKENS} = 计入 {tokens.used}（估计）"


@check("token 预算不超支：装不下的请求不发送")
def token_budget_never_overshot(lab):
    budget = 12000
    run = lab.ask("progress", limits=Limits(max_tokens=budget))
    seen = run.mock["requests"]
    tokens = run.outcome.tokens
    expect(run.outcome.stop == "token_budget", f"应以 token_budget 停下，实际 {run.outcome.stop}")
    expect(tokens.used <= budget and not tokens.estimated, f"用量 {tokens.record()} 超出了预算 {budget}")
    expect(set(run.mock["max_tokens"]) == {DEFAULT_MAX_TOKENS}, f"每次请求都应带 max_tokens，mock 收到 {run.mock['max_tokens']}")
    expect(run.history[-1]["role"] == "assistant" and not history_problems(run.history), "停止说明应在历史结尾")
    expect_verified(run.verified, "token_budget", seen)
    return f"预算 {budget}：mock 收到 {seen} 次请求，服务端计数共 {tokens.used}，第 {seen + 1} 次没有发送"


@check("每个问题都留下记录，verify_ask 对照 mock 自己的记录重新推出停止原因和请求数")
def every_question_verified(lab):
    results = [verified["result"] for verified in lab.verified]
    lines = ServerLog(lab.mock.request_log.file.name).lines
    recorded = {Path(verified["run"]).name for verified in lab.verified}
    unrecorded = sorted({line["run"] for line in lines if line["run"] is not None} - recorded)
    expect(results and not unrecorded, f"服务端记录里有 run={unrecorded[:3]} 的请求，却没有核对它们的问题记录")
    wrong = [verified["run"] for verified in lab.verified
             if verified["result"] != ("needs_human" if verified["stop"] == "interrupted" else "pass")]
    expect(not wrong, f"有记录没有通过核对：{wrong[:3]}")
    return (f"{len(results)} 个问题记录：pass {results.count('pass')}，needs_human {results.count('needs_human')}"
            f"（被中断的）；服务端记录 {len(lines)} 行，其中 {sum(1 for line in lines if line['run'] is None)} 行"
            "不属于任何问题（单独发的请求）")


# ---- running them -------------------------------------------------------------------------------

def run_checks(lab, show):
    """[(result, description, detail)] for every check, in order; a crash is a FAIL, never a traceback."""
    outcomes = []
    for description, function in CHECKS:
        try:
            result, detail = "PASS", function(lab)
        except Skipped as exc:
            result, detail = "SKIP", str(exc)
        except CheckFailed as exc:
            result, detail = "FAIL", str(exc)
        except Exception as exc:
            result, detail = "FAIL", f"检查本身出错（Python 异常 {type(exc).__name__}：{exc}），请把这一行报告给维护者"
        show(f"{result} {description}  {detail}")
        outcomes.append((result, description, detail))
    return outcomes


def main(argv=None):
    use_safe_console()
    parser = ChineseArgumentParser(
        prog="check_loop_guards.py", usage=("[-h] [--json]",),
        description="用会故意出错的 mock 模型验收笔记助手的停止条件（约 5 秒）。",
        epilog="退出码：0 全部通过（SKIP 不算失败）；1 有检查失败；2 参数错误；130 被 Ctrl-C 中断。",
    )
    parser.add_argument("--json", action="store_true", help="stdout 只输出一行 JSON（逐项结果改到 stderr）")
    as_json = parser.parse_args(argv).json
    show = say if as_json else (lambda line: print(line, flush=True))
    started = time.monotonic()
    folder = tempfile.TemporaryDirectory(prefix="check-loop-guards-")
    clock = SkippedWaits()
    mock = MockServer(0, "plain", retry_after=RETRY_AFTER, trickle_seconds=TRICKLE_SECONDS,
                      request_log=Path(folder.name) / "server-log.jsonl", clock=clock.now).start()
    try:
        outcomes = run_checks(Lab(mock, Path(folder.name) / "ask-runs", clock), show)
    except KeyboardInterrupt:
        say("已中断。")
        return EXIT_INTERRUPTED
    finally:
        mock.stop()
        folder.cleanup()
    seconds = round(time.monotonic() - started, 2)
    count = {result: sum(1 for seen, _, _ in outcomes if seen == result) for result in ("PASS", "FAIL", "SKIP")}
    if as_json:
        print_json({"passed": count["PASS"], "failed": count["FAIL"], "skipped": count["SKIP"], "seconds": seconds,
                    "checks": [{"result": result, "check": description, "detail": detail}
                               for result, description, detail in outcomes]})
    say(f"共 {len(outcomes)} 项：{count['PASS']} 项通过，{count['FAIL']} 项失败，{count['SKIP']} 项跳过；"
        f"用时 {seconds} 秒。")
    return EXIT_STOP if count["FAIL"] else EXIT_OK


if __name__ == "__main__":
    run(main)
