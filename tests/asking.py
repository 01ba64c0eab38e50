"""Shared by the tests of question records: one question asked through the real client and loop against an
in-process mock (its own log on), recorded, with the client's waits skipped on a clock both read.

`Asker(folder)` starts the mock (stop it with `close()`); `ask(mode, ...)` returns (outcome, record dict, its
folder); `log` is the mock's log file. The question's record is written where app.py would write it
(FOLDER/NAME/question.json). Nothing here decides what a test expects.
"""
import json
import sys
from pathlib import Path

from tests.support import ROOT

sys.path[:0] = [str(ROOT / "project"), str(ROOT)]

from assistant.agent import Limits, run_question  # noqa: E402
from assistant.client import ChatClient  # noqa: E402
from assistant.record import RECORD_FILE, QuestionRecorder  # noqa: E402
from mock_model import MockServer  # noqa: E402
from mockapi.clock import SkippedWaits  # noqa: E402

QUESTION = "RAG 的步骤顺序是什么？"


class Asker:
    def __init__(self, folder, script=None, **mock_options):
        self.folder, self.clock, self.count = Path(folder), SkippedWaits(), 0
        self.log = self.folder / "server-log.jsonl"
        self.mock = MockServer(0, "plain", script=script, request_log=self.log, clock=self.clock.now,
                               **mock_options).start()

    def close(self):
        self.mock.stop()

    def client(self, mode, url=None, **options):
        """A client of a fresh session of MODE (or of URL, with the session's name as its last part)."""
        self.count += 1
        options.setdefault("sleep", self.clock.sleep)
        return ChatClient(url or f"{self.mock.url}/mode/{mode}/s/q{self.count}", "test", random=lambda: 0.0,
                          clock=self.clock.now, **options)

    def ask(self, mode, limits=None, history=None, tool_runner=None, on_event=None, script=None, on_attempt=None,
            chain_first=False, **options):
        """(outcome, record, folder) of one recorded question against MODE (a fresh session). ON_EVENT hears the
        loop after the recorder; ON_ATTEMPT the client's attempts, after the recorder (before it: CHAIN_FIRST)."""
        if script is not None:
            self.mock.script = script
        client = self.client(mode, **options)
        limits = limits or Limits()
        name = client.base_url.rsplit("/", 1)[1]
        folder = self.folder / "ask-runs" / name
        folder.mkdir(parents=True)
        recorder = QuestionRecorder(folder / RECORD_FILE, name, QUESTION, client, limits)
        recorder.attach(client)
        if on_attempt is not None:
            hooks = (on_attempt, client.on_attempt) if chain_first else (client.on_attempt, on_attempt)
            client.on_attempt = lambda kind, data: [hook(kind, data) for hook in hooks]
        recorder.start()
        listener = recorder.listener()
        events = (lambda kind, data: (listener(kind, data), on_event(kind, data))) if on_event else listener
        extra = {"tool_runner": tool_runner} if tool_runner else {}
        try:
            outcome = run_question(client, [] if history is None else history, QUESTION, limits=limits,
                                   on_event=events, **extra)
        except KeyboardInterrupt:  # as app.py's ask_guarded: a Ctrl-C outside the loop's own guards
            from assistant.agent import Outcome
            outcome = Outcome("interrupted", "已中断", [], 0)
        recorder.finish(outcome)
        return outcome, json.loads((folder / RECORD_FILE).read_text(encoding="utf-8")), folder
