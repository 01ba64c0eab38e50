"""The assistant's page in a real browser: what a learner sees for each way a question can stop.

Headless Chromium, where it is installed (the tests skip saying so where it is not, as on most learners' and CI
machines), opens a small driver page on 127.0.0.1. The driver holds one frame per case, each the page of its own
`app.py serve` server (in this process, on 127.0.0.1) whose model is the failing mock in one mode, or the offline
demo; it types the question into each page, presses 提问 and copies what the page then shows. The frames are
other ports of the same host, so Chromium runs with --disable-web-security to let the driver read them; with
--virtual-time-budget it waits for every request and then prints the page (--dump-dom). All cases run at once:
one browser start for all of them.

Each case must show what `ask` says on the terminal: the Chinese message (the advice for 401, for a 429 asking a
wait beyond the cap, for 503, for a 400 over the context, for each guard stop and for the deadline), the stop
reason and the number of model requests; never the page's own "出错了：" with the server's raw words (the
answer's `error` field is that raw detail, not a failure of the request).
"""
import contextlib
import html
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
import app  # noqa: E402
import mock_model  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
QUESTION = "RAG 的步骤顺序是什么？"
PART = "\u241e"  # between the paragraphs the page shows (an answer has line breaks of its own)
# mode: (what the page's answer must say, stop, model requests); the requests are the mock's documented counts
CASES = {
    "401": ("API 密钥无效（401）。请检查环境变量 DEEPSEEK_API_KEY", "api_error", 1),
    "429-long": ("模型服务要求等待 70 秒后再试（HTTP 429），超过了自动等待的上限 60 秒", "api_error", 1),
    "503": ("模型服务繁忙（503，已重试 2 次）。请稍后再试。", "api_error", 3),
    "400": ("对话超过了模型的最大上下文长度（400）。请把问题改短后再试。", "context_full", 1),
    "loop": ("已停止：第 3 轮发现原地打转：list_notes({})", "no_progress", 3),
    "fail": ("已停止：工具连续 3 轮全部失败（第 3 轮），请换个方式再试。", "tool_failures", 3),
    "length": ("已停止：模型输出达到长度上限，本轮没有执行工具。", "output_truncated", 1),
    "refuse": ("已停止：模型因内容过滤拒绝了这次回答", "model_refused", 1),
    "slow": ("这个问题已用完整个期限 0.5 秒", "api_error", 1),
}
DRIVER = """<!doctype html><html><head><meta charset="utf-8"></head><body><script>
const PAGES = __PAGES__, PART = "\\u241e";
for (const [name, url] of Object.entries(PAGES)) {
  const frame = document.createElement("iframe"), out = document.createElement("pre");
  out.id = "shown-" + name; out.textContent = "(nothing shown)";
  frame.src = url; document.body.append(frame, out);
  frame.onload = () => {
    const page = frame.contentDocument, box = page.getElementById("ask-result");
    page.getElementById("question").value = __QUESTION__;
    page.getElementById("ask-form").requestSubmit();
    const poll = setInterval(() => {
      if (!box.querySelector("p:not(.status)")) return;  // still the status line
      out.textContent = Array.from(box.children, (node) => node.textContent).join(PART);
      clearInterval(poll);
    }, 50);
  };
}
</script></body></html>"""


def browser():
    return next((found for found in map(shutil.which, BROWSERS) if found), None)


class DriverHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = self.server.driver.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


@unittest.skipUnless(browser(), f"没有找到 Chromium 或 Chrome（{'、'.join(BROWSERS)}）：网页在真实浏览器里的检查跳过")
class PageInABrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        mock = mock_model.MockServer(0, slow_seconds=5).start()
        cls.addClassCleanup(mock.stop)
        with contextlib.redirect_stderr(io.StringIO()):  # the servers' own terminal lines
            pages = {mode: cls.serve(mock, mode) for mode in CASES}
            pages["offline"] = cls.serve(None, None)
            cls.shown = cls.show(pages)
        cls.mock = mock

    @classmethod
    def serve(cls, mock, mode):
        """The URL of a page whose model is MOCK in MODE (the offline demo when MOCK is None)."""
        env = None if mock is None else {"DEEPSEEK_API_KEY": "k", "DEEPSEEK_BASE_URL": f"{mock.url}/mode/{mode}/s/page",
                                         "DEEPSEEK_DEADLINE": "0.5" if mode == "slow" else "30",
                                         "DEEPSEEK_TIMEOUT": "0.5" if mode == "slow" else "10"}  # a loaded machine
        server = app.make_server(0, offline=mock is None, env=env)
        return cls.started(server)

    @classmethod
    def started(cls, server):
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        cls.addClassCleanup(server.server_close)
        cls.addClassCleanup(server.shutdown)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    @classmethod
    def show(cls, pages):
        """{case: the text the page shows under its question box} after the question was asked in every page."""
        driver = ThreadingHTTPServer(("127.0.0.1", 0), DriverHandler)
        driver.driver = DRIVER.replace("__PAGES__", json.dumps(pages)).replace("__QUESTION__", json.dumps(QUESTION))
        url = cls.started(driver)
        with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:  # Windows: files held a moment
            run = subprocess.run(
                [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--disable-web-security", "--virtual-time-budget=60000",
                 "--dump-dom", url], capture_output=True, text=True, encoding="utf-8", timeout=120)
        return {name: html.unescape(text) for name, text in re.findall(r'<pre id="shown-([\w-]+)">(.*?)</pre>',
                                                                        run.stdout, re.DOTALL)}

    def test_every_stop_shows_the_chinese_message_the_stop_reason_and_the_requests(self):
        for mode, (message, stop, requests) in CASES.items():
            with self.subTest(mode=mode):
                shown = self.shown.get(mode, "")
                answer, facts = (shown.split(PART) + ["", ""])[:2]
                self.assertTrue(answer.startswith(message if message.startswith("已停止") else "错误："), answer)
                self.assertIn(message, answer)
                self.assertRegex(facts, rf"^停止原因：{stop}（[^）]+）；模型请求 {requests} 次；")
                self.assertNotIn("出错了", shown)

    def test_the_page_shows_what_the_ask_request_answers(self):
        with contextlib.redirect_stderr(io.StringIO()):
            server = app.make_server(0, env={"DEEPSEEK_API_KEY": "k",
                                             "DEEPSEEK_BASE_URL": f"{self.mock.url}/mode/401/s/api"})
            body = json.dumps({"question": QUESTION}).encode()
            headers = {"Content-Type": "application/json"}
            request = urllib.request.Request(self.started(server) + "api/ask", body, headers)
            with urllib.request.urlopen(request, timeout=10) as response:
                record = json.load(response)
        self.assertIsNotNone(record["error"])  # the raw detail the page once took for its own failure
        self.assertEqual(self.shown["401"].split(PART)[0], record["answer"])

    def test_an_answer_is_shown_with_its_tool_calls(self):
        lines = self.shown["offline"].split(PART)
        self.assertIn("先检索相关段落，再把检索到的段落交给模型生成回答", lines[0])
        self.assertRegex(lines[1], r"^停止原因：answered（模型给出了回答）；模型请求 \d+ 次；")
        self.assertIn('read_note({"note_id": "A01"})', self.shown["offline"])


if __name__ == "__main__":
    unittest.main()
