"""The notes assistant (笔记助手) from the command line: ask, chat, search, and a small local page.

ask / chat / serve run the guarded tool loop of assistant/agent.py, with DeepSeek's API when
DEEPSEEK_API_KEY is set (DEEPSEEK_BASE_URL, DEEPSEEK_MODEL, DEEPSEEK_TIMEOUT) and --offline is
not given, else with the offline demo model. This file only wires that loop to a terminal or a
page, and turns each stop reason into an exit code: 0 answered, 130 interrupted, 1 any other stop.
"""
# From the script's first line on, a Ctrl-C ends in one line (with --json) and exit 130, never a traceback:
# until main() can answer it, a Ctrl-C is only noted; one that lands before the note-taker is in place ends here.
try:
    import signal
    import sys

    _pressed_while_starting = []  # a Ctrl-C before main() takes over is remembered here and acted on there

    def _remember_ctrl_c(signum, frame):
        """Installed first thing when run as a script: a Ctrl-C while Python loads the modules raises nothing
        half-way through an import (that would be a traceback); main() ends the program as soon as it starts."""
        _pressed_while_starting.append(signum)

    if __name__ == "__main__":
        signal.signal(signal.SIGINT, _remember_ctrl_c)
except KeyboardInterrupt:
    if __name__ != "__main__":
        raise
    import sys
    try:
        if "--json" in sys.argv[1:]:  # the keys of every result line; nothing was asked, nothing was used
            sys.stdout.write('{"stop": "interrupted", "answer": "已中断：还没有开始提问。", "model": null, "offline": null, '
                             '"requests": 0, "tool_calls": [], "turns": 0, '
                             '"tokens": {"used": 0, "estimated": false, "budget": null}, "error": null}\n')
        sys.stderr.write("已中断：笔记助手还在启动，没有发出任何请求。\n")
    except UnicodeEncodeError:  # a console that cannot show Chinese: the exit code says it
        pass
    raise SystemExit(130)

import workspace  # noqa: E402,F401  first: the workspace's cli.py refuses a Python older than 3.11
import errno  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # `assistant` and the workspace's `cli`, from any cwd

from cli import (EXIT_INTERRUPTED, EXIT_OK, EXIT_STOP, EXIT_USAGE, ChineseArgumentParser,  # noqa: E402
                 Terminated, display_path, print_json, run, say, use_safe_console)

EXIT_CODES = ("退出码：0 成功（ask：模型给出了回答；serve：按 Ctrl-C 停止网页服务）；"
              "1 受控停止（ask：其他停止原因）；2 参数错误；130 被 Ctrl-C 中断。")
EXIT_CODES_OF = {  # each subcommand's --help lists only the codes it can end with
    "ask": "退出码：0 模型给出了回答（包括“笔记中没有找到”）；1 其他停止原因；2 参数错误；130 被 Ctrl-C 中断。",
    "chat": "退出码：0 用 /quit 或结束输入（Windows：Ctrl-Z 然后回车；macOS / Linux：Ctrl-D）结束对话；2 参数错误；"
            "130 开始对话前被 Ctrl-C 中断（对话中只中断当前回答）。",
    "search": "退出码：0 成功（没有命中也是成功）；1 有笔记文件读不出来；2 参数错误；130 被 Ctrl-C 中断。",
    "serve": "退出码：0 按 Ctrl-C 停止网页服务；2 参数错误或端口不能用。",
}
STOP_TEXT = {
    "answered": "模型给出了回答",
    "token_budget": "下一次请求可能超出这个问题的 token 预算，没有发送",
    "max_turns": "达到每个问题的模型请求上限",
    "tool_failures": "工具连续几轮全部失败",
    "no_progress": "原地打转：同样的调用得到同样的结果",
    "output_truncated": "模型输出被截断，本轮没有执行工具",
    "context_full": "对话超过了模型的上下文长度",
    "model_refused": "模型拒绝回答",
    "api_error": "模型 API 出错",
    "interrupted": "被 Ctrl-C 中断",
}
STOP_EXIT = {"answered": EXIT_OK, "interrupted": EXIT_INTERRUPTED}  # any other stop: EXIT_STOP
MAX_QUESTION_CHARS = 2000
WSAEADDRINUSE = 10048  # Windows' own number for "address in use", in case errno does not carry it


class UsageError(Exception):
    """Bad input found after parsing (empty question, unusable environment variable): exit 2."""


# ---- shared by ask, chat and serve --------------------------------------------------------------

def interrupted_record(answer, budget=None) -> dict:
    """The result line of ask --json when Ctrl-C came before the loop had an outcome: every key a result has."""
    return {"stop": "interrupted", "answer": answer, "model": None, "offline": None, "requests": 0, "tool_calls": [],
            "turns": 0, "tokens": {"used": 0, "estimated": False, "budget": budget}, "error": None}


def _budget_in(argv):
    """--max-tokens N as typed, before the arguments are parsed (None when absent or not a number)."""
    for index, word in enumerate(argv):
        value = word.partition("=")[2] if word.startswith("--max-tokens=") else (
            argv[index + 1] if word == "--max-tokens" and index + 1 < len(argv) else None)
        if value is not None:
            return int(value) if value.isascii() and value.isdigit() else None
    return None


def load_model(offline, env=None, on_retry=None, on_progress=None):
    from assistant.models import make_model
    options = {name: value for name, value in (("on_retry", on_retry), ("on_progress", on_progress)) if value}
    try:
        model = make_model(offline=offline, env=os.environ if env is None else env, **options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not model.offline and model.timeout > model.deadline:
        say(f"注意：DEEPSEEK_TIMEOUT（{model.timeout:g} 秒）比整个问题的期限 DEEPSEEK_DEADLINE（{model.deadline:g} 秒）"
            "还长：每次请求最多只等到期限剩下的时间。")
    return model


def show_retry(number, wait, asked, error):
    """Each retry on stderr, naming the failure as the final message would, so no wait is a silent pause."""
    from assistant.errors import failure_kind
    why = failure_kind(error)
    if asked is not None:
        say(f"  [重试] 服务端要求等待 {asked:g} 秒（{why}），第 {number} 次重试在 {wait:.2f} 秒后发出。")
    else:
        say(f"  [重试] {why}，第 {number} 次重试在 {wait:.2f} 秒后发出。")


def show_progress(what, waited, left):
    """While a reply is slow, a line every few seconds, so a long wait never looks like a hang."""
    say(f"  [等待] {what}：已等 {waited:.0f} 秒，这个问题的期限还剩 {max(left, 0):.0f} 秒（Ctrl-C 可中断）。")


def describe_model(model):
    if model.offline:
        return f"{model.name}（离线演示模型，不联网；设置环境变量 DEEPSEEK_API_KEY 可改用真实 API）"
    return f"{model.name}（API：{model.base_url}）"


def check_budget(max_tokens):
    if max_tokens is not None and max_tokens < 1:
        raise UsageError(f"参数 --max-tokens 必须是正整数（这个问题最多能用的 token 数），收到 {max_tokens}。")


def clean_question(text):
    question = (text or "").strip()
    if not question:
        raise UsageError("问题不能为空，请写上要问的问题。")
    if not question.isascii() and any("\ud800" <= char <= "\udfff" for char in question):
        # bytes the terminal could not decode (or a lone "\ud800" in JSON): no model or note can read them
        raise UsageError("问题里有无法识别的字符（不是有效的 UTF-8 文字），请检查终端的编码设置后重新输入。")
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(f"问题太长（{len(question)} 字），请控制在 {MAX_QUESTION_CHARS} 字以内。")
    return question


def ask_guarded(model, history, question, max_tokens=None, **options):
    """run_question; a Ctrl-C that lands outside the loop's own guards also ends as 'interrupted'."""
    from assistant.agent import Limits, Outcome, interrupt_cause, run_question
    from assistant.budget import TokenBudget
    from assistant.history import seal_dangling_tool_calls
    try:
        return run_question(model, history, question, limits=Limits(max_tokens=max_tokens), **options)
    except KeyboardInterrupt as exc:
        seal_dangling_tool_calls(history)
        return Outcome("interrupted", f"已中断：{interrupt_cause(exc)}，这个问题没有结论。", [], 0,
                       tokens=TokenBudget(max_tokens))
    except Exception as exc:  # a defect of ours must still end as one result line, never a traceback
        from assistant.errors import APIError
        seal_dangling_tool_calls(history)
        message = (f"错误：笔记助手内部出错（Python 异常 {type(exc).__name__}），这个问题没有结论。"
                   "这是程序的缺陷：请把这条信息和所用的命令告诉老师。")
        return Outcome("api_error", message, [], 0, APIError(message, detail=f"{type(exc).__name__}: {exc}"),
                       TokenBudget(max_tokens))


def outcome_record(outcome, model):
    """The result line of ask --json and of the page's ask request (keys in this order).

    `error` is the raw detail of an API failure (the server's words or the network error as
    reported), for whoever reads the JSON; the person reads `answer`.
    """
    return {"stop": outcome.stop, "answer": outcome.answer, "model": model.name,
            "offline": model.offline, "requests": model.requests,
            "tool_calls": list(outcome.tool_calls), "turns": outcome.turns,
            "tokens": outcome.tokens.record(), "error": outcome.error.detail if outcome.error else None}


def tokens_text(tokens):
    """'用掉 123 个 token（预算 4000）', marking an estimate."""
    estimated = "（含估计值：有的请求用量未知，按上限计入）" if tokens.estimated else ""
    budget = f"（预算 {tokens.limit}）" if tokens.limit is not None else ""
    return f"用掉 {tokens.used} 个 token{estimated}{budget}"


def show_event(kind, data):
    """Tool calls on stderr as they happen, so the person sees what the loop is doing."""
    if kind == "tool_call":
        say(f"  [调用工具] {data['name']}({data['arguments']})")
    elif kind == "tool_result" and data["is_error"]:
        from assistant.errors import shortened
        say(f"  [工具失败] {shortened(data['content'], 100)}")
    elif kind == "reminder":
        say(f"  [循环提醒] 第 {data['turn']} 轮发现同样的调用和结果又出现了一遍，已提醒模型换个做法或直接回答。")


# ---- commands -----------------------------------------------------------------------------------

def record_for(name, question, model, max_tokens, chat=False):
    """The question's recorder, its first record written in ask-runs/NAME (a used or bad name: exit 2); None
    without --record. In a chat NAME is the chat's: each question takes the next NAME-NN."""
    from assistant.record import RecordNameError, open_record
    try:
        return open_record(name, question, model, max_tokens, chat) if name else None
    except RecordNameError as exc:
        raise UsageError(str(exc)) from None


def ask_recorded(recorder, model, history, question, max_tokens, **options):
    """ask_guarded, its loop kept in RECORDER's record when there is one."""
    events = recorder.listener(show_event) if recorder else show_event
    outcome = ask_guarded(model, history, question, max_tokens, on_event=events, **options)
    if recorder:
        say(recorder.finish(outcome))
    return outcome


def command_ask(args):
    question = clean_question(args.question)
    check_budget(args.max_tokens)
    record_for(args.record, None, None, None)  # a name that cannot be used stops before anything is asked
    model = load_model(args.offline, on_retry=show_retry, on_progress=show_progress)
    say(f"使用模型：{describe_model(model)}")
    recorder = record_for(args.record, question, model, args.max_tokens)
    outcome = ask_recorded(recorder, model, [], question, args.max_tokens)
    if args.json:
        print_json(outcome_record(outcome, model))
        args.printed = True  # a Ctrl-C from here on must not print a second line
        if outcome.stop != "answered":
            say(outcome.answer)  # the explanation is for the person, not only for the JSON reader
    else:
        print(outcome.answer, flush=True)
    say(f"停止原因：{outcome.stop}（{STOP_TEXT.get(outcome.stop, '')}）；"
        f"模型请求 {model.requests} 次，工具调用 {len(outcome.tool_calls)} 次，{tokens_text(outcome.tokens)}。")
    return STOP_EXIT.get(outcome.stop, EXIT_STOP)


def end_of_input_keys(platform) -> str:
    """How a person ends typed input on PLATFORM (sys.platform): Windows' console wants Ctrl-Z, then Enter."""
    return "Ctrl-Z 然后回车" if platform.startswith("win") else "Ctrl-D"


END_OF_INPUT_LINES = ("\x04", "\x1a")  # Ctrl-D / Ctrl-Z that a terminal passed on as a character, not as end of input


def command_chat(args, platform=None):
    try:
        import readline  # noqa: F401  (line editing where the platform has it)
    except ImportError:
        pass
    check_budget(args.max_tokens)
    record_for(args.record, None, None, None, chat=True)
    model = load_model(args.offline, on_retry=show_retry, on_progress=show_progress)
    say(f"使用模型：{describe_model(model)}")
    budget = f"每个问题的 token 预算 {args.max_tokens}；" if args.max_tokens else ""
    keys = end_of_input_keys(platform or sys.platform)
    try:  # bytes the terminal cannot decode reach clean_question, which says so, instead of crashing input()
        sys.stdin.reconfigure(errors="surrogateescape")
    except (AttributeError, ValueError):
        pass
    try:  # SIGTERM / SIGHUP from here on (also before the prompt is drawn): the system asks the program to end
        say(f"输入问题后回车。{budget}/reset 清空对话，/quit 或 {keys} 退出；Ctrl-C 中断当前回答并回到提示符。")
        return chat_loop(model, args.max_tokens, keys, args.record)
    except Terminated:
        say("\n收到终止信号，聊天结束。")
        return EXIT_INTERRUPTED


def chat_loop(model, max_tokens, keys, record=None):
    """Prompt after prompt until /quit or the end of input; Ctrl-C at the prompt goes back to it."""
    history = []
    while True:
        try:
            text = input("你 > ").strip()
        except EOFError:
            text = END_OF_INPUT_LINES[0]
        except Terminated:
            raise  # not the person going back to the prompt: the program is asked to end
        except KeyboardInterrupt:
            say(f"\n（回到提示符；/quit 或 {keys} 退出）")
            continue
        if text in END_OF_INPUT_LINES:
            say("\n再见。")
            return EXIT_OK
        if text in ("/quit", "/exit"):
            return EXIT_OK
        chat_line(model, history, text, max_tokens, record)


def chat_line(model, history, text, max_tokens=None, record=None):
    """One line typed in chat: /reset, an unknown /command, or a question asked on the history."""
    from assistant.history import seal_dangling_tool_calls
    if text == "/reset":
        history.clear()
        return say("（对话已清空）")
    if text.startswith("/"):
        return say(f"没有命令 {text}；可用：/reset 清空对话，/quit 退出。")
    if not text:
        return None
    try:
        question = clean_question(text)
        recorder = record_for(record, question, model, max_tokens, chat=True)
    except UsageError as exc:
        return say(str(exc))
    outcome = ask_recorded(recorder, model, history, question, max_tokens, chat=True)
    print(f"助手 > {outcome.answer}", flush=True)  # an interruption is said once, in the answer
    if outcome.stop == "interrupted":
        seal_dangling_tool_calls(history)  # whatever the Ctrl-C cut off, the next request stays valid
    elif outcome.stop != "answered":
        say(f"（停止原因：{outcome.stop}，{STOP_TEXT.get(outcome.stop, '')}；{tokens_text(outcome.tokens)}）")
    return None


def command_search(args):
    from assistant.notes import normalize, search
    query = args.query.strip()
    if not normalize(query):
        raise UsageError("搜索词不能为空，例如：python3 project/app.py search \"RAG\"。")
    hits = search(query)
    print_json({"query": query, "hits": hits})
    say(f"找到 {len(hits)} 条命中。" if hits else "没有找到相关的笔记（这不是错误）。")
    return EXIT_OK


def command_serve(args):
    if not 0 <= args.port <= 65535:
        raise UsageError(f"参数 --port 必须在 0 到 65535 之间（0 表示自动选择），收到 {args.port}。")
    try:
        server = make_server(args.port, args.offline)
    except OSError as exc:
        raise UsageError(listen_problem(args.port, exc)) from None
    print_json({"url": server.url})
    say(f"笔记助手网页：{server.url}（只在本机可见；Ctrl-C 停止）")
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # the way a person stops a server: a normal end
        say("网页服务已停止。")
    finally:
        server.server_close()
    return EXIT_OK


def listen_problem(port, exc):
    """Why the page cannot listen on PORT, without errno text; a port in use says what to do."""
    if exc.errno == errno.EADDRINUSE or getattr(exc, "winerror", None) == WSAEADDRINUSE:
        return f"端口 {port} 已被占用（可能另一个 serve / mock 还开着）：换一个 --port，或先关掉那个进程。"
    return f"无法在 127.0.0.1:{port} 上启动网页（系统说明：{exc.strerror or type(exc).__name__}）。换一个端口，或用 --port 0。"


# ---- the page -----------------------------------------------------------------------------------

PAGE = """<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>笔记助手</title>
<style>
body { font: 16px/1.6 system-ui, "PingFang SC", "Microsoft YaHei", sans-serif; margin: 0;
       background: #f6f7f9; color: #222; }
main { max-width: 760px; margin: 0 auto; padding: 24px 16px 48px; }
section { background: #fff; border: 1px solid #e2e4e8; border-radius: 8px; padding: 16px; margin-top: 16px; }
h1 { margin: 0; font-size: 24px; } h2 { margin: 0 0 8px; font-size: 18px; }
*, *::before, *::after { box-sizing: border-box; }
/* a flex item keeps its own intrinsic width unless told it may shrink: the box and its button must fit 390 px */
form { display: flex; gap: 8px; } input, textarea { flex: 1; min-width: 0; font: inherit; padding: 6px 8px; }
button { font: inherit; padding: 6px 16px; cursor: pointer; }
.muted { color: #667; font-size: 14px; } .error { color: #b00020; } .answer { white-space: pre-wrap; }
.snippet { color: #445; font-size: 14px; } .bad { color: #b00020; } code { font-size: 13px; }
p, li, code { overflow-wrap: anywhere; }  /* a long address or English word breaks instead of widening the page */
</style></head>
<body><main>
<h1>笔记助手</h1>
<p class="muted">模型：__MODEL__。网页只在本机（127.0.0.1）可见；每次提问都是一段新对话。</p>
<section><h2>搜索笔记</h2>
<form id="search-form"><input id="query" maxlength="200" required placeholder="例如：RAG 的步骤"><button>搜索</button></form>
<div id="search-result"></div></section>
<section><h2>提问</h2>
<form id="ask-form"><textarea id="question" rows="2" maxlength="2000" required
  placeholder="例如：RAG 的步骤顺序是什么？"></textarea><button>提问</button></form>
<div id="ask-result"></div></section>
</main>
<script>
const DEADLINE_TEXT = "__DEADLINE__";
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;  // shown as text, never parsed as HTML
  if (cls) node.className = cls;
  return node;
}
async function callApi(url, options) {
  let response, data;
  try { response = await fetch(url, options); } catch (e) { throw new Error("连不上笔记助手服务，请确认 app.py serve 还在运行。"); }
  try { data = await response.json(); } catch (e) { throw new Error("服务返回的不是 JSON（HTTP " + response.status + "）。"); }
  // only the HTTP status says the request failed: an answer's own `error` is the raw detail of a stop the answer
  // already explains in Chinese (stop reason and request count below it), never a failure of the page
  if (!response.ok) throw new Error(data.error || ("HTTP " + response.status));
  return data;
}
function handle(formId, boxId, busyText, run) {
  document.getElementById(formId).addEventListener("submit", async (event) => {
    event.preventDefault();
    const box = document.getElementById(boxId), status = el("p", busyText, "muted status"), started = Date.now();
    box.replaceChildren(status);
    // the status line says every second how long the wait has been, so a slow reply never looks like a hang
    const ticker = setInterval(() => {
      status.textContent = busyText + "已等 " + Math.round((Date.now() - started) / 1000) + " 秒" + DEADLINE_TEXT;
    }, 1000);
    try { box.replaceChildren(...await run()); }
    catch (e) { box.replaceChildren(el("p", "出错了：" + e.message, "error")); }
    finally { clearInterval(ticker); }
  });
}
handle("search-form", "search-result", "搜索中……", async () => {
  const data = await callApi("/api/search?q=" + encodeURIComponent(document.getElementById("query").value));
  if (!data.hits.length) return [el("p", "没有找到相关的笔记。", "muted")];
  const list = el("ol");
  for (const hit of data.hits) {
    const item = el("li");
    item.append(el("strong", hit.note_id + " " + hit.title), el("div", hit.snippet, "snippet"));
    list.append(item);
  }
  return [list];
});
handle("ask-form", "ask-result", "思考中……", async () => {
  const question = document.getElementById("question").value;
  const data = await callApi("/api/ask", {method: "POST", headers: {"Content-Type": "application/json"},
                                         body: JSON.stringify({question})});
  const nodes = [el("p", data.answer, data.stop === "answered" ? "answer" : "answer error")];
  nodes.push(el("p", "停止原因：" + data.stop + "（" + data.stop_text + "）；模型请求 " + data.requests
                + " 次；用掉 " + data.tokens.used + " 个 token" + (data.tokens.estimated ? "（含估计值）" : "")
                + "；模型：" + data.model, "muted"));
  if (data.calls.length) {
    const list = el("ol", undefined, "muted");
    for (const call of data.calls) {
      const item = el("li"); item.append(el("code", call.name + "(" + call.arguments + ")"));
      if (!call.ok) item.append(el("span", " 失败", "bad"));
      list.append(item);
    }
    nodes.push(el("p", "工具调用：", "muted"), list);
  } else {
    nodes.push(el("p", "没有调用工具。", "muted"));
  }
  return nodes;
});
</script></body></html>
"""


def page_ask(question, offline, env=None):
    """(HTTP status, JSON) for the page's ask request: the loop's result plus each call made."""
    try:
        question = clean_question(question if isinstance(question, str) else "")
        model = load_model(offline, env)
    except UsageError as exc:
        return 400, {"error": str(exc)}
    calls = []

    def record_call(kind, data):
        if kind == "tool_call":
            calls.append({"name": data["name"], "arguments": data["arguments"], "ok": None})
        elif kind == "tool_result" and calls:
            calls[-1]["ok"] = not data["is_error"]

    outcome = ask_guarded(model, [], question, on_event=record_call)
    return 200, {**outcome_record(outcome, model), "stop_text": STOP_TEXT.get(outcome.stop, ""),
                 "calls": calls}


def page_search(query):
    from assistant.notes import NotesError, normalize, search
    if not normalize(query):
        return 400, {"error": "请先输入搜索词。"}
    try:
        return 200, {"query": query.strip(), "hits": search(query)}
    except NotesError as exc:
        return 500, {"error": str(exc)}


def make_server(port=0, offline=False, env=None):
    """The page's HTTP server on 127.0.0.1 (not started); `url` says where it listens."""
    import html
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    model = load_model(offline, env)  # a bad setting stops before binding
    model_text = html.escape(describe_model(model))
    deadline = getattr(model, "deadline", None)
    deadline_text = f"（最多约 {deadline:g} 秒，DEEPSEEK_DEADLINE）" if deadline else ""

    class PageHandler(BaseHTTPRequestHandler):
        timeout = 30  # a client that promised more body than it sends does not hold a thread forever

        def do_GET(self):
            respond(self, route_get)

        def do_POST(self):
            respond(self, route_post)

        def send_error(self, code, message=None, explain=None):
            """What http.server itself refuses (bad request line, other methods): the page's JSON error."""
            self.close_connection = True
            allowed = "网页只用 GET /、GET /api/search 和 POST /api/ask。"
            send(self, code, json.dumps({"error": f"无法处理这个请求（HTTP {code}）。{allowed}"},
                                        ensure_ascii=False).encode("utf-8"), "application/json")

        def log_message(self, format, *args):
            say(f"网页：{format % args}")

        def log_request(self, code="-", size="-"):
            path = (getattr(self, "path", None) or "").partition("?")[0]  # unset when the request line was bad
            say(f"网页：{getattr(self, 'command', None) or '?'} {path} -> {code}")

    server = ThreadingHTTPServer(("127.0.0.1", port), PageHandler)
    server.daemon_threads = True
    server.url = f"http://127.0.0.1:{server.server_address[1]}/"
    server.model_text, server.deadline_text, server.offline, server.env = model_text, deadline_text, offline, env
    return server


def respond(handler, route):
    """Send route(handler)'s (status, page text or JSON dict); any failure becomes a JSON error."""
    host = handler.headers.get("Host") or ""
    try:
        if _host_name(host) not in ("127.0.0.1", "localhost"):
            # a DNS name rebound to 127.0.0.1 is another site: it must not use this page
            status, body = 403, {"error": f"只接受本机地址访问（Host：{host or '空'}），请打开 {handler.server.url}"}
        else:
            status, body = route(handler)
    except Exception as exc:  # shown on the page and the terminal, never a traceback
        say(f"网页请求处理出错（Python 异常 {type(exc).__name__}：{exc}），已向网页返回 500。")
        status, body = 500, {"error": f"服务器内部错误（{type(exc).__name__}），详情见运行 serve 的终端。"}
    if isinstance(body, dict):
        body, content_type = json.dumps(body, ensure_ascii=False), "application/json"
    else:
        content_type = "text/html"
    send(handler, status, body.encode("utf-8"), content_type)


def _host_name(host):
    """The name in a Host header, or None when it cannot be read (e.g. "[::1")."""
    import urllib.parse
    try:
        return urllib.parse.urlsplit("//" + host).hostname
    except ValueError:
        return None


def route_get(handler):
    import urllib.parse
    path, _, query = handler.path.partition("?")
    if path == "/":
        server = handler.server
        return 200, PAGE.replace("__MODEL__", server.model_text).replace("__DEADLINE__", server.deadline_text)
    if path == "/api/search":
        return page_search(urllib.parse.parse_qs(query).get("q", [""])[0])
    if path == "/api/ask":
        return 405, {"error": "/api/ask 只接受 POST：请在网页的提问框里提交问题，"
                              "或发送 JSON {\"question\": \"……\"}（Content-Type: application/json）。"}
    return 404, {"error": f"没有这个地址：{path}（网页在 /，搜索用 GET /api/search?q=词，提问用 POST /api/ask）"}


def route_post(handler):
    path = handler.path.partition("?")[0]
    if path == "/api/search":
        return 405, {"error": "/api/search 只接受 GET：例如 GET /api/search?q=RAG。"}
    if path != "/api/ask":
        return 404, {"error": f"没有这个地址：{path}（提问用 POST /api/ask）"}
    # JSON only: a form posted by another site cannot make this server spend API calls
    if not handler.headers.get("Content-Type", "").startswith("application/json"):
        return 415, {"error": "请求必须是 JSON（Content-Type: application/json）。"}
    length = handler.headers.get("Content-Length") or "0"
    length = int(length) if length.isascii() and length.isdigit() else 0
    if not 0 < length <= 64 * 1024:
        return 400, {"error": "请求体必须带 Content-Length，且在 1 字节到 64 KB 之间。"}
    try:
        raw = handler.rfile.read(length)
    except OSError:  # the client stopped sending (the handler's timeout) or went away
        raw = b""
    if len(raw) < length:
        handler.close_connection = True
        return 400, {"error": f"请求体没有发完：Content-Length 写的是 {length} 字节，只收到 {len(raw)} 字节。"}
    from cli import DuplicateKeyError, loads_strict
    try:
        body = loads_strict(raw.decode("utf-8"))
    except DuplicateKeyError as exc:
        return 400, {"error": f"请求体里的键 {exc.key!r} 出现了不止一次，请只写一次。"}
    except ValueError:
        return 400, {"error": "请求体不是合法的 JSON（UTF-8）。"}
    question = body.get("question") if isinstance(body, dict) else None
    return page_ask(question, handler.server.offline, handler.server.env)


def send(handler, status, data, content_type):
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", f"{content_type}; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.send_header("X-Content-Type-Options", "nosniff")
        handler.end_headers()
        handler.wfile.write(data)
    except OSError:
        pass  # the browser went away


# ---- command line -------------------------------------------------------------------------------

def build_parser():
    parser = ChineseArgumentParser(
        prog="app.py", usage=("[-h] 命令 ...",), description="笔记助手：依据 project/notes 里的笔记回答问题。",
        epilog=EXIT_CODES)
    commands = parser.add_subparsers(dest="command", metavar="命令", required=True)
    ask = commands.add_parser("ask", help="问一个问题", epilog=EXIT_CODES_OF["ask"],
                              usage=("[-h] [--json] [--offline] [--max-tokens N] [--record NAME] 问题",),
                              description="问一个问题；工具调用和停止原因显示在 stderr。")
    ask.add_argument("question", metavar="问题", help="问题，例如 \"RAG 的步骤顺序是什么？\"")
    ask.add_argument("--json", action="store_true", help="stdout 只打印一行 JSON（字段见 README）")
    chat = commands.add_parser("chat", help="多轮对话（/reset 清空，/quit 退出）", epilog=EXIT_CODES_OF["chat"],
                               usage=("[-h] [--offline] [--max-tokens N] [--record NAME]",),
                               description="多轮对话：历史跨问题保留；/reset 清空，/quit 退出，Ctrl-C 中断当前回答。")
    search = commands.add_parser("search", help="搜索笔记，打印一行 JSON", epilog=EXIT_CODES_OF["search"],
                                 usage=("[-h] 搜索词",),
                                 description="搜索 project/notes 里的笔记，stdout 打印一行 JSON：命中的笔记和片段。")
    search.add_argument("query", metavar="搜索词", help="要查找的短语")
    serve = commands.add_parser("serve", help="在 127.0.0.1 上打开网页（搜索 + 提问）", epilog=EXIT_CODES_OF["serve"],
                                usage=("[-h] [--port PORT] [--offline]",),
                                description="在 127.0.0.1 上打开网页（搜索 + 提问），只在本机可见；Ctrl-C 停止。")
    serve.add_argument("--port", type=int, default=8765, help="端口，默认 8765；0 表示自动选择")
    for command in (ask, chat, serve):
        command.add_argument("--offline", action="store_true", help="即使设置了 DEEPSEEK_API_KEY 也用离线演示模型")
    for command in (ask, chat):
        command.add_argument("--max-tokens", type=int, metavar="N", default=None,
                             help="每个问题的 token 预算：每次请求发出前，已用 + 请求体字节数 + max_tokens "
                                  "必须不超过 N，否则以 token_budget 停下；默认不设预算")
        command.add_argument("--record", metavar="NAME", default=None,
                             help="把这个问题的循环记在 ask-runs/NAME/question.json（chat：每问一个 NAME-01、NAME-02……），"
                                  "可以独立核对；名称已用过时不运行")
    return parser


COMMANDS = {"ask": command_ask, "chat": command_chat, "search": command_search, "serve": command_serve}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = None
    try:
        if signal.getsignal(signal.SIGINT) is _remember_ctrl_c:
            signal.signal(signal.SIGINT, signal.default_int_handler)  # from here on each command says what it was doing
        use_safe_console()
        if _pressed_while_starting:
            raise KeyboardInterrupt  # pressed while Python was still loading: end now, like any other Ctrl-C
        args = build_parser().parse_args(argv)
        return run_command(args)
    except KeyboardInterrupt:
        wants_json = getattr(args, "json", False) if args is not None else "--json" in argv
        if wants_json and not getattr(args, "printed", False):  # --json promises one line, even before the loop
            print_json(interrupted_record("已中断：还没有开始提问。",
                                          getattr(args, "max_tokens", None) if args is not None else _budget_in(argv)))
        say("\n已中断。" if args is not None else "已中断：笔记助手还在启动，没有发出任何请求。")
        return EXIT_INTERRUPTED


def run_command(args):
    """The command's exit code; bad input (2) and an unreadable note (1) are said in Chinese."""
    from assistant.notes import NotesError
    try:
        return COMMANDS[args.command](args)
    except UsageError as exc:
        say(f"错误：{exc}")
        return EXIT_USAGE
    except NotesError as exc:  # a note file that cannot be read: the message names it
        say(f"错误：{exc}")
        return EXIT_STOP


if __name__ == "__main__":
    run(main, "\n已中断。")
