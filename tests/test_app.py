"""The notes assistant's commands: ask and search (offline and against the mock), chat and serve."""
import contextlib
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import unittest
import urllib.error
import urllib.request
from unittest import mock as patching

from tests.support import ROOT, WorkspaceTestCase, not_on_windows, skip_in_simulation

sys.path.insert(0, str(ROOT / "project"))
import app  # noqa: E402
import mock_model  # noqa: E402
from assistant.history import history_problems  # noqa: E402

QUESTION = "RAG 的步骤顺序是什么？"
STEP_ORDER = "先检索相关段落，再把检索到的段落交给模型生成回答"  # the sentence of note A01


class AskOfflineTest(WorkspaceTestCase):
    def test_ask_json_answers_from_the_notes_with_the_demo_model(self):
        code, stdout, stderr = self.run_cli("project/app.py", "ask", QUESTION, "--json")
        result = self.assertOneJsonLine(stdout)
        self.assertEqual(code, 0)
        self.assertEqual(list(result), ["stop", "answer", "model", "offline", "requests", "tool_calls", "turns",
                                        "tokens", "error"])
        self.assertEqual((result["tokens"], result["error"]), ({"used": 0, "estimated": False, "budget": None}, None))
        self.assertTrue(stderr.rstrip().splitlines()[-1].endswith("用掉 0 个 token。"), stderr)
        self.assertEqual((result["stop"], result["model"], result["offline"]), ("answered", "offline-demo", True))
        self.assertIn(STEP_ORDER, result["answer"])
        self.assertEqual(result["tool_calls"][-1], "read_note")
        self.assertIn("offline-demo", stderr)
        self.assertIn("[调用工具] read_note", stderr)

    def test_offline_flag_wins_over_a_key_and_plain_output_is_the_answer(self):
        code, stdout, stderr = self.run_cli("project/app.py", "ask", QUESTION, "--offline",
                                            env={"DEEPSEEK_API_KEY": "sk-never-used"})
        self.assertEqual(code, 0)
        self.assertIn(STEP_ORDER, stdout)
        self.assertIn("offline-demo", stderr)

    def run_app(self, *args, cwd=None, stdin=None):
        """app.py in the copy from any folder, offline, with text on stdin; (code, stdout, stderr)."""
        env = {key: value for key, value in os.environ.items() if key != "DEEPSEEK_API_KEY"}
        proc = subprocess.run([sys.executable, str(self.root / "project" / "app.py"), *args],
                              cwd=cwd or self.root, input=stdin, capture_output=True, text=True,
                              encoding="utf-8", timeout=30, env=dict(env, PYTHONIOENCODING="utf-8"))
        return proc.returncode, proc.stdout, proc.stderr

    def test_works_from_another_folder(self):
        code, stdout, stderr = self.run_app("search", "RAG", cwd=self.root / "project" / "notes")
        self.assertEqual(code, 0, stderr)
        self.assertEqual(self.assertOneJsonLine(stdout)["hits"][0]["note_id"], "A01")

    def test_search_prints_one_json_line_and_no_hit_is_success(self):
        code, stdout, _ = self.run_cli("project/app.py", "search", "ｒａｇ")
        self.assertEqual(code, 0)
        self.assertIn("A01", [hit["note_id"] for hit in self.assertOneJsonLine(stdout)["hits"]])
        code, stdout, _ = self.run_cli("project/app.py", "search", "量子纠缠菜谱")
        self.assertEqual((code, self.assertOneJsonLine(stdout)["hits"]), (0, []))

    def test_bad_arguments_exit_2_with_a_chinese_message(self):
        code, stdout, stderr = self.run_cli("project/app.py", "ask")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("缺少必需的参数：问题", stderr)
        self.assertNoTraceback(stderr)
        cases = [(("ask", "   "), "问题不能为空"), (("search", " "), "搜索词不能为空"),
                 (("ask", QUESTION, "--jsn"), "--jsn"), (("fly",), "的值 fly 不在可选范围内"),
                 (("serve", "--port", "99999"), "--port"),
                 (("ask", QUESTION, "--max-tokens", "0"), "--max-tokens"),
                 (("chat", "--max-tokens", "-5"), "--max-tokens"), (("ask", QUESTION, "--max-tokens", "many"), "many")]
        for args, named in cases:
            with self.subTest(args=args):
                err = io.StringIO()
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
                    try:
                        code = app.main(list(args))
                    except SystemExit as exit:
                        code = exit.code
                self.assertEqual((code, out.getvalue()), (2, ""))
                self.assertIn(named, err.getvalue())

    def test_unusable_environment_variable_is_named(self):
        code, stdout, stderr = self.run_cli("project/app.py", "ask", QUESTION, "--json",
                                            env={"DEEPSEEK_API_KEY": "k", "DEEPSEEK_TIMEOUT": "soon"})
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("DEEPSEEK_TIMEOUT", stderr)
        self.assertNoTraceback(stderr)

    def test_serve_refuses_a_port_in_use(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            code, stdout, stderr = self.run_cli("project/app.py", "serve", "--port", port, "--offline")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn(f"端口 {port} 已被占用（可能另一个 serve / mock 还开着）：换一个 --port，或先关掉那个进程。", stderr)
        self.assertNotIn("Errno", stderr)
        self.assertNoTraceback(stderr)

    def help_text(self, *argv, columns):
        with patching.patch.dict(os.environ, {"COLUMNS": str(columns)}), \
                contextlib.redirect_stdout(io.StringIO()) as out, self.assertRaises(SystemExit) as ended:
            app.main([*argv, "--help"])
        self.assertEqual(ended.exception.code, 0)
        return out.getvalue()

    def test_each_subcommand_help_has_a_description_and_only_its_exit_codes(self):
        codes = {"ask": ["0", "1", "2", "130"], "chat": ["0", "2", "130"], "search": ["0", "1", "2", "130"],
                 "serve": ["0", "2"]}
        for command, expected in codes.items():
            with self.subTest(command=command):
                lines = self.help_text(command, columns=200).splitlines()
                self.assertTrue(lines[0].startswith("用法："))
                self.assertEqual(lines[1], "")
                self.assertNotIn(lines[2], ("", "位置参数：", "选项："))  # a description line under the usage
                exit_line = next(line for line in lines if line.startswith("退出码："))
                self.assertEqual(re.findall(r"(?:：|；)(\d+) ", exit_line), expected)

    def test_ask_help_never_splits_an_identifier(self):
        for columns in (40, 60, 80, 100, 120):
            with self.subTest(columns=columns):
                words = set(re.findall(r"[a-z]+_[a-z_]*", self.help_text("ask", columns=columns)))
                self.assertLessEqual(words, {"max_tokens", "token_budget"})

    def test_each_retry_line_names_the_failure_as_the_final_message_does(self):
        from assistant import errors
        cases = [(errors.APIConnectionError("连接被拒绝：这个地址和端口上没有服务在监听"), "连接被拒绝"),
                 (errors.APITimeoutError("3 秒内没有收到完整回应", 3), "请求超时"),
                 (errors.IncompleteResponseError("回应正文只收到一部分连接就断了"), "回应不完整"),
                 (errors.status_error(503, "busy"), "503")]
        for error, kind in cases:
            with self.subTest(kind=kind), contextlib.redirect_stderr(io.StringIO()) as err:
                app.show_retry(1, 0.5, None, error)
                self.assertIn(f"[重试] {'HTTP ' if kind == '503' else ''}{kind}", err.getvalue())
                self.assertIn("第 1 次重试", err.getvalue())
                self.assertIn(kind, errors.describe_api_error(error))

    def test_a_tool_failure_cut_short_ends_with_an_ellipsis(self):
        for content, shown in (("找不到笔记 Z99。" * 20, ("找不到笔记 Z99。" * 20)[:100] + "……"),
                               ("找不到笔记 Z99。", "找不到笔记 Z99。")):
            with self.subTest(length=len(content)), contextlib.redirect_stderr(io.StringIO()) as err:
                app.show_event("tool_result", {"is_error": True, "content": content})
                self.assertEqual(err.getvalue(), f"  [工具失败] {shown}\n")

    def test_chat_answers_resets_and_quits(self):
        code, stdout, stderr = self.run_app("chat", stdin=f"{QUESTION}\n/oops\n/reset\n/quit\n")
        self.assertEqual(code, 0)
        self.assertIn("助手 > ", stdout)
        self.assertIn(STEP_ORDER, stdout)
        self.assertIn("对话已清空", stderr)
        self.assertIn("/oops", stderr)
        self.assertNoTraceback(stderr)

    def test_chat_skips_a_line_that_is_not_utf8_and_goes_on(self):
        env = {key: value for key, value in os.environ.items() if key != "DEEPSEEK_API_KEY"}
        proc = subprocess.run([sys.executable, str(self.root / "project" / "app.py"), "chat"],
                              input=b"\xff\xfe RAG\n/quit\n", capture_output=True, timeout=30,
                              env=dict(env, PYTHONIOENCODING="utf-8"))
        stderr = proc.stderr.decode("utf-8")
        self.assertEqual(proc.returncode, 0, stderr)
        self.assertIn("无法识别的字符", stderr)
        self.assertNoTraceback(stderr)

    @not_on_windows("SIGTERM 会直接结束进程，chat 来不及回答")
    def test_chat_ends_on_termination_at_the_prompt(self):
        env = {key: value for key, value in os.environ.items() if key != "DEEPSEEK_API_KEY"}
        proc = subprocess.Popen([sys.executable, str(self.root / "project" / "app.py"), "chat"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                                env=dict(env, PYTHONIOENCODING="utf-8"))
        said = ""
        while "输入问题后回车" not in said:  # the prompt comes right after this line
            line = proc.stderr.readline()
            self.assertTrue(line, "chat ended before its prompt")
            said += line
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=10)
        self.assertEqual(proc.returncode, 130, said + stderr)
        self.assertIn("收到终止信号，聊天结束。", stderr)
        self.assertNoTraceback(stderr)

    def test_chat_ends_at_end_of_input(self):
        code, _, stderr = self.run_app("chat", stdin="")
        self.assertEqual(code, 0)
        self.assertNoTraceback(stderr)


RESULT_KEYS = ["stop", "answer", "model", "offline", "requests", "tool_calls", "turns", "tokens", "error"]


class InterruptBeforeTheLoopTest(unittest.TestCase):
    def main(self, *argv, **patches):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.ExitStack() as stack:
            for name, value in patches.items():
                stack.enter_context(patching.patch.object(app, name, value))
            stack.enter_context(contextlib.redirect_stdout(out))
            stack.enter_context(contextlib.redirect_stderr(err))
            code = app.main(list(argv))
        self.assertEqual(code, 130)
        self.assertNotIn("Traceback", err.getvalue())
        self.assertEqual(out.getvalue().count("\n"), 1)
        line = json.loads(out.getvalue())
        self.assertEqual(list(line), RESULT_KEYS)  # a script reading j["tokens"] or j["turns"] works
        self.assertEqual((line["stop"], line["requests"], line["turns"], line["error"]), ("interrupted", 0, 0, None))
        return line, err.getvalue()

    def test_ctrl_c_while_the_model_is_being_set_up_still_prints_one_whole_json_line(self):
        def interrupted(*args, **kwargs):
            raise KeyboardInterrupt
        line, _ = self.main("ask", "--json", "--max-tokens", "5000", QUESTION, load_model=interrupted)
        self.assertEqual(line["tokens"], {"used": 0, "estimated": False, "budget": 5000})

    def test_ctrl_c_while_the_arguments_are_read(self):
        parser = patching.Mock()
        parser.return_value.parse_args.side_effect = KeyboardInterrupt
        line, _ = self.main("ask", "--json", "--max-tokens=700", QUESTION, build_parser=parser)
        self.assertEqual(line["tokens"]["budget"], 700)

    def test_ctrl_c_while_python_was_still_loading_ends_as_soon_as_main_starts(self):
        line, said = self.main("ask", "--json", QUESTION, _pressed_while_starting=[signal.SIGINT])
        self.assertEqual(line["tokens"]["budget"], None)
        self.assertIn("还在启动，没有发出任何请求", said)

    def test_while_loading_a_ctrl_c_is_only_remembered(self):
        remembered = []
        with patching.patch.object(app, "_pressed_while_starting", remembered):
            app._remember_ctrl_c(signal.SIGINT, None)  # raises nothing inside whatever import was running
        self.assertEqual(remembered, [signal.SIGINT])


class CtrlCAtTheFirstLineTest(WorkspaceTestCase):
    """A Ctrl-C while app.py imports `signal` itself, before its note-taker is in place: no traceback."""

    def test_ctrl_c_while_the_first_import_runs(self):
        skip_in_simulation(self, "模拟在脚本之前就导入了 signal，这里替换不了它")
        fake = self.root.parent / "fake-stdlib"
        fake.mkdir()  # a real SIGINT raised while `import signal` of app.py runs
        (fake / "signal.py").write_bytes(b"import _signal\n_signal.raise_signal(_signal.SIGINT)\n")
        proc = subprocess.run([sys.executable, "project/app.py", "ask", "--json", QUESTION], cwd=self.root,
                              capture_output=True, timeout=30, env=dict(os.environ, PYTHONPATH=str(fake)))
        stderr = proc.stderr.decode("utf-8", "replace")
        self.assertEqual(proc.returncode, 130, stderr)
        self.assertNotIn("Traceback", stderr)
        self.assertIn("还在启动，没有发出任何请求", stderr)
        line = json.loads(proc.stdout)
        self.assertEqual(list(line), RESULT_KEYS)
        self.assertEqual((line["stop"], line["requests"]), ("interrupted", 0))


def page_rules(page):
    """{selector: {property: value}} of the page's <style>, one selector of a list at a time; comments dropped."""
    css = re.sub(r"/\*.*?\*/", "", page.split("<style>", 1)[1].split("</style>", 1)[0], flags=re.DOTALL)
    rules = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", css):
        declarations = dict(part.split(":", 1) for part in body.split(";") if ":" in part)
        for selector in selectors.split(","):
            rules.setdefault(selector.strip(), {}).update(
                {name.strip(): value.strip() for name, value in declarations.items()})
    return rules


class PageFitsANarrowScreenTest(unittest.TestCase):
    """At 390 px the page overflowed (checked in headless Chromium): a flex item keeps its intrinsic width unless
    it may shrink, and a long address in an answer widens the page unless it may break anywhere."""

    def test_the_boxes_beside_a_button_may_shrink(self):
        rules = page_rules(app.PAGE)
        self.assertEqual(rules["form"].get("display"), "flex")
        for field in ("input", "textarea"):
            self.assertEqual(rules[field].get("min-width"), "0", field)
        self.assertEqual(rules["*"].get("box-sizing"), "border-box")  # padding and border inside the width

    def test_long_words_break_in_every_text_the_page_shows(self):
        rules = page_rules(app.PAGE)
        # overflow-wrap is inherited: the snippet's div, the span and the strong sit inside an li or a p
        shown = set(re.findall(r'el\("(\w+)"', app.PAGE)) - {"div", "span", "strong", "ol"}
        self.assertTrue({"p", "li", "code"} <= shown)
        for tag in shown:
            self.assertEqual(rules.get(tag, {}).get("overflow-wrap"), "anywhere", tag)


class AskAgainstMockTest(WorkspaceTestCase):
    """app.py ask --json as a real process against the failing mock: stop, exit code, requests."""

    def setUp(self):
        super().setUp()
        self.mock = mock_model.MockServer(0, retry_after=0.2).start()
        self.addCleanup(self.mock.stop)

    def ask(self, mode):
        env = {"DEEPSEEK_API_KEY": "test", "DEEPSEEK_BASE_URL": f"{self.mock.url}/mode/{mode}/s/t"}
        code, stdout, stderr = self.run_cli("project/app.py", "ask", "--json", QUESTION, env=env)
        self.assertNoTraceback(stderr)
        self.assertIn("deepseek-chat", stderr)
        return code, self.assertOneJsonLine(stdout), self.mock.stats(mode, "t")["session"]

    def test_each_stop_gives_its_exit_code_and_request_count(self):
        cases = {"plain": (0, "answered", 1), "fail": (1, "tool_failures", 3),
                 "400": (1, "context_full", 1), "length": (1, "output_truncated", 1)}
        for mode, (exit_code, stop, requests) in cases.items():
            with self.subTest(mode=mode):
                code, result, session = self.ask(mode)
                self.assertEqual((code, result["stop"], result["requests"]), (exit_code, stop, requests))
                self.assertEqual((session["requests"], session["rejected"]), (requests, 0))
                self.assertFalse(result["offline"])

    def test_api_error_answer_is_a_chinese_sentence(self):
        _, result, _ = self.ask("402")
        self.assertIn("余额不足", result["answer"])

    def test_new_faults_and_the_budget(self):
        cases = {"429-long": (1, "api_error", 1), "empty": (1, "api_error", 1), "error-200": (1, "api_error", 1),
                 "no-usage": (0, "answered", 1), "heed-reminder": (0, "answered", 3)}
        results = {}
        for mode, (exit_code, stop, requests) in cases.items():
            with self.subTest(mode=mode):
                code, results[mode], _ = self.ask(mode)
                self.assertEqual((code, results[mode]["stop"], results[mode]["requests"]), (exit_code, stop, requests))
        self.assertTrue(results["no-usage"]["tokens"]["estimated"])
        self.assertFalse(results["heed-reminder"]["tokens"]["estimated"])
        self.assertIn("“upstream overloaded”", results["error-200"]["answer"])
        self.assertEqual(results["error-200"]["error"], "upstream overloaded")
        self.assertIn("70 秒", results["429-long"]["answer"])

    def test_max_tokens_stops_before_a_request_that_might_not_fit(self):
        env = {"DEEPSEEK_API_KEY": "test", "DEEPSEEK_BASE_URL": f"{self.mock.url}/mode/progress/s/b"}
        code, stdout, stderr = self.run_cli("project/app.py", "ask", "--json", "--max-tokens", "9000", QUESTION,
                                            env=env)
        result = self.assertOneJsonLine(stdout)
        self.assertEqual((code, result["stop"]), (1, "token_budget"))
        self.assertEqual(result["tokens"]["budget"], 9000)
        self.assertLessEqual(result["tokens"]["used"], 9000)
        self.assertEqual(result["requests"], self.mock.stats("progress", "b")["session"]["requests"])
        self.assertIn("（预算 9000）。", stderr.rstrip().splitlines()[-1])

    def test_the_minimum_budget_named_is_exactly_what_one_request_needs(self):
        env = {"DEEPSEEK_API_KEY": "test", "DEEPSEEK_BASE_URL": f"{self.mock.url}/mode/plain/s/m"}

        def ask(budget):
            out = io.StringIO()
            with patching.patch.dict(os.environ, env), contextlib.redirect_stdout(out), \
                    contextlib.redirect_stderr(io.StringIO()):
                code = app.main(["ask", "--json", "--max-tokens", str(budget), QUESTION])
            return code, json.loads(out.getvalue())
        code, refused = ask(100)
        self.assertEqual((code, refused["stop"], refused["requests"]), (1, "token_budget", 0))
        minimum = int(re.search(r"--max-tokens 至少要 (\d+)。", refused["answer"]).group(1))
        self.assertEqual(ask(minimum - 1)[1]["requests"], 0)
        code, answered = ask(minimum)
        self.assertEqual((code, answered["stop"], answered["requests"]), (0, "answered", 1))

    def test_a_long_wait_is_named_on_stderr(self):
        env = {"DEEPSEEK_API_KEY": "test", "DEEPSEEK_BASE_URL": f"{self.mock.url}/mode/429-after/s/w"}
        code, stdout, stderr = self.run_cli("project/app.py", "ask", "--json", QUESTION, env=env)
        self.assertEqual(code, 0)
        self.assertIn("服务端要求等待 0.2 秒", stderr)

    def test_with_json_the_explanation_is_also_on_stderr(self):
        env = {"DEEPSEEK_API_KEY": "test", "DEEPSEEK_BASE_URL": f"{self.mock.url}/mode/401/s/e"}
        code, stdout, stderr = self.run_cli("project/app.py", "ask", "--json", QUESTION, env=env)
        self.assertEqual(code, 1)
        self.assertIn("错误：API 密钥无效（401）", stderr)


class UnreadableNoteTest(WorkspaceTestCase):
    def test_a_note_that_is_not_utf8_is_named_not_a_traceback(self):
        (self.root / "project" / "notes" / "A13.md").write_bytes(b"\xff\xfe bad")
        code, stdout, stderr = self.run_cli("project/app.py", "search", "RAG")
        self.assertEqual((code, stdout), (1, ""))
        self.assertIn("A13.md", stderr)
        self.assertNoTraceback(stderr)
        code, stdout, stderr = self.run_cli("project/app.py", "ask", "--json", QUESTION)
        self.assertNoTraceback(stderr)
        self.assertIn("A13.md", self.assertOneJsonLine(stdout)["answer"])  # the model is told which file


class FakeModel:
    """Asks for list_notes, is interrupted on its second request, then answers; checks every history."""

    name, offline = "fake", True

    def __init__(self):
        self.requests = 0
        self.problems = []

    def complete(self, messages, tools, budget=None):
        self.requests += 1
        self.problems += history_problems(messages)
        if self.requests == 1:
            return {"finish_reason": "tool_calls", "message": {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "list_notes", "arguments": "{}"}}]}}
        if self.requests == 2:
            raise KeyboardInterrupt
        self.last_messages = messages
        return {"finish_reason": "stop", "message": {"role": "assistant", "content": "好的"}}


class BrokenModel:
    """A model whose request fails in a way nobody planned for."""

    name, offline, requests, base_url = "broken", False, 1, "http://127.0.0.1:9"

    def complete(self, messages, tools, budget=None):
        raise RuntimeError("a defect")


class NoTracebackTest(unittest.TestCase):
    def run_main(self, *argv, model=None):
        out, err = io.StringIO(), io.StringIO()
        with patching.patch.object(app, "load_model", return_value=model or BrokenModel()), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = app.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def test_an_unplanned_failure_still_ends_as_one_json_line(self):
        code, stdout, stderr = self.run_main("ask", "--json", QUESTION)
        lines = stdout.splitlines()
        self.assertEqual((code, len(lines)), (1, 1))
        result = json.loads(lines[0])
        self.assertEqual(result["stop"], "api_error")
        self.assertIn("内部出错", result["answer"])
        self.assertIn("RuntimeError: a defect", result["error"])

    def test_a_question_that_is_not_valid_unicode_is_refused_in_chinese(self):
        for question in ("问\udcff", "\ud800"):  # undecodable argv bytes; a lone "\ud800" from JSON
            with self.subTest(question=question):
                code, stdout, stderr = self.run_main("ask", "--json", question)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn("无法识别的字符", stderr)


class ChatInterruptTest(unittest.TestCase):
    def test_ctrl_c_returns_to_the_prompt_and_the_next_request_is_valid(self):
        model = FakeModel()
        typed = ["第一个问题", KeyboardInterrupt, "第二个问题", EOFError]
        out, err = io.StringIO(), io.StringIO()
        with patching.patch("builtins.input", side_effect=typed), \
                patching.patch.object(app, "load_model", return_value=model), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = app.command_chat(app.build_parser().parse_args(["chat"]))
        self.assertEqual(code, 0)
        said = (out.getvalue() + err.getvalue()).count("已中断")
        self.assertEqual(said, 1, "the interruption is said once")
        self.assertIn("可以接着问下一句", out.getvalue())
        self.assertIn("助手 > 好的", out.getvalue())
        self.assertEqual(model.problems, [])
        self.assertEqual([m["content"] for m in model.last_messages if m["role"] == "user"],
                         ["第一个问题", "第二个问题"])


class ChatEndOfInputTest(unittest.TestCase):
    def chat(self, typed, platform):
        model = FakeModel()
        out, err = io.StringIO(), io.StringIO()
        with patching.patch("builtins.input", side_effect=typed), \
                patching.patch.object(app, "load_model", return_value=model), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = app.command_chat(app.build_parser().parse_args(["chat"]), platform=platform)
        return code, model.requests, err.getvalue()

    def test_each_platform_is_told_its_own_keys(self):
        for platform, keys, other in (("win32", "/quit 或 Ctrl-Z 然后回车 退出", "Ctrl-D"),
                                      ("linux", "/quit 或 Ctrl-D 退出", "Ctrl-Z"), ("darwin", "/quit 或 Ctrl-D 退出", "Ctrl-Z")):
            with self.subTest(platform=platform):
                code, _, said = self.chat([KeyboardInterrupt, EOFError], platform)
                self.assertEqual(code, 0)
                self.assertEqual(said.count(keys), 2, said)  # at the start, and after a Ctrl-C at the prompt
                self.assertNotIn(other, said)

    def test_a_line_that_is_only_ctrl_d_or_ctrl_z_ends_the_chat_and_is_not_asked(self):
        for line in ("\x1a", "\x04", " \x1a "):
            with self.subTest(line=line):
                code, requests, said = self.chat([line, "不该被问到"], "win32")
                self.assertEqual((code, requests), (0, 0))
                self.assertIn("再见", said)


class ChatFollowUpTest(unittest.TestCase):
    def test_the_offline_demo_reads_a_follow_up_with_the_question_before(self):
        typed = ["BM25 是什么？", "那向量检索呢？", "它的缺点是什么？", "/reset", "它的缺点是什么？", EOFError]
        out = io.StringIO()
        with patching.patch("builtins.input", side_effect=typed), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(io.StringIO()):
            code = app.command_chat(app.build_parser().parse_args(["chat", "--offline"]))
        answers = out.getvalue().split("助手 > ")[1:]
        self.assertEqual((code, len(answers)), (0, 4))
        self.assertIn("（接着上一问，“它”指“向量检索”，理解为：向量检索的缺点是什么？）", answers[2])
        self.assertIn("不一定敏感", answers[2])
        self.assertNotIn("接着上一问", answers[3])  # after /reset there is no question to lean on


class ServeTest(unittest.TestCase):
    def start(self, **options):
        server = app.make_server(0, **options)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return server.url

    def fetch(self, url, body=None, content_type="application/json", host=None):
        """(status, decoded body) of a GET, or of a POST when body is given."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode("utf-8"))
        request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type})
        if host:
            request.add_header("Host", host)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, raw = response.status, response.read().decode("utf-8")
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read().decode("utf-8")
        return status, (json.loads(raw) if raw.startswith("{") else raw)

    def test_page_search_and_ask_offline(self):
        with contextlib.redirect_stderr(io.StringIO()):
            url = self.start(offline=True)
            status, page = self.fetch(url)
            self.assertEqual(status, 200)
            for part in ("笔记助手", 'id="search-form"', 'id="ask-form"', "offline-demo", "textContent"):
                self.assertIn(part, page)
            self.assertNotIn("innerHTML", page)
            status, found = self.fetch(url + "api/search?q=" + urllib.request.quote("RAG 的步骤"))
            self.assertEqual((status, found["hits"][0]["note_id"]), (200, "A01"))
            status, result = self.fetch(url + "api/ask", {"question": QUESTION})
        self.assertEqual((status, result["stop"]), (200, "answered"))
        self.assertIn(STEP_ORDER, result["answer"])
        self.assertEqual(result["calls"][-1], {"name": "read_note", "arguments": '{"note_id": "A01"}', "ok": True})
        self.assertEqual(result["stop_text"], "模型给出了回答")

    def test_errors_are_chinese_json_never_a_traceback(self):
        with contextlib.redirect_stderr(io.StringIO()) as log:
            url = self.start(offline=True)
            cases = [(self.fetch(url + "api/ask", {"question": "  "}), 400, "问题不能为空"),
                     (self.fetch(url + "api/ask", b"question=x", "application/x-www-form-urlencoded"), 415, "JSON"),
                     (self.fetch(url + "api/ask", b"{broken"), 400, "JSON"),
                     (self.fetch(url + "api/search?q="), 400, "搜索词"),
                     (self.fetch(url + "nothing-here"), 404, "/nothing-here"),
                     (self.fetch(url + "api/ask"), 405, "只接受 POST"),
                     (self.fetch(url + "api/search", {"q": "RAG"}), 405, "只接受 GET"),
                     (self.fetch(url, host="evil.example:80"), 403, "evil.example")]
        for (status, body), expected_status, named in cases:
            with self.subTest(expected_status=expected_status):
                self.assertEqual(status, expected_status)
                self.assertIn(named, body["error"])
        self.assertNotIn("Traceback", log.getvalue())

    def raw(self, url, request, close_write=False):
        """(status, JSON body) of raw bytes sent to the page's server."""
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(request)
            if close_write:
                sock.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        return (int(head.split()[1]), json.loads(body)) if head.startswith(b"HTTP/") else (None, json.loads(answer))

    def test_odd_requests_get_chinese_json_and_the_terminal_no_traceback(self):
        def post(body, length=None, host="127.0.0.1"):
            return (f"POST /api/ask HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body) if length is None else length}\r\n\r\n").encode() + body
        with contextlib.redirect_stderr(io.StringIO()) as log:
            url = self.start(offline=True)
            cases = [(self.raw(url, b"GARBAGE\r\n\r\n"), None, "无法处理"),
                     (self.raw(url, b"DELETE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), 501, "POST /api/ask"),
                     (self.raw(url, post(b'{"question": "a"}', host="[::1")), 403, "[::1"),
                     (self.raw(url, post(b'{"question": "a", "question": "b"}')), 400, "'question'"),
                     (self.raw(url, post(b'{"question": "a"}', length=99), close_write=True), 400, "99"),
                     (self.raw(url, post(b'{"question": "\\ud800"}')), 400, "无法识别的字符")]
        for (status, body), expected_status, named in cases:
            with self.subTest(named=named):
                self.assertEqual(status, expected_status)
                self.assertIn(named, body["error"])
        self.assertNotIn("Traceback", log.getvalue())

    def test_stopping_the_server_with_ctrl_c_is_a_normal_end(self):
        with patching.patch.object(app, "make_server") as make, \
                contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
            make.return_value.url = "http://127.0.0.1:1/"
            make.return_value.serve_forever.side_effect = KeyboardInterrupt
            code = app.command_serve(app.build_parser().parse_args(["serve", "--offline"]))
        self.assertEqual(code, 0)
        self.assertIn("网页服务已停止", err.getvalue())
        self.assertNotIn("已中断", err.getvalue())
        make.return_value.server_close.assert_called_once()

    def test_model_name_is_escaped_and_api_failures_show_on_the_page(self):
        mock = mock_model.MockServer(0).start()
        self.addCleanup(mock.stop)
        env = {"DEEPSEEK_API_KEY": "k", "DEEPSEEK_MODEL": "<b>m</b>", "DEEPSEEK_BASE_URL": f"{mock.url}/mode/401"}
        with contextlib.redirect_stderr(io.StringIO()):
            url = self.start(env=env)
            _, page = self.fetch(url)
            status, result = self.fetch(url + "api/ask", {"question": QUESTION})
        self.assertIn("&lt;b&gt;m&lt;/b&gt;", page)
        self.assertNotIn("<b>m</b>", page)
        self.assertEqual((status, result["stop"], result["requests"]), (200, "api_error", 1))
        self.assertIn("401", result["answer"])


if __name__ == "__main__":
    unittest.main()
