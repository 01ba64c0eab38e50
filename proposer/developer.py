"""One proposal of the development model: a question through the notes assistant's client, kept as a record.

`DevelopmentModel.propose(number, feedback)` asks proposal NUMBER as one question of the notes assistant's guarded
tool loop (`run_question`, at most MAX_TURNS model turns, the one read-only tool of proposal.py) through its
retrying `ChatClient` (its retry limit and backoff unchanged), behind the loop's API-call budget (budget.py,
admitted before every HTTP request). The question is recorded as it happens by the notes assistant's recorder
(`QuestionRecorder`, kind "proposal") in loop-runs/NAME/proposals/NN/question.json, with the final reply's text
(`reply_text`: the model's own words). Each request carries the record's id as `x-question-run`, so the server's
log names the proposal it belongs to. It returns the proposal ({"action", "sample" | "target"}) and its `model`
entry for the loop's record: {"proposal", "turns", "requests", "tokens", "claim", "stop"}; `tokens` is None when a
reply came without usage (unknown is not zero). Whatever ends a proposal early leaves that entry in `current`:
`ApiCallBudgetExhausted` (the record's stop `interrupted`, with `cut`), `NotAProposal`, `ModelFailed`, or the
Ctrl-C / termination that landed (raised again as it came).

`open_model(...)` makes one for a loop: the local mock in script mode (server.py) by default, or `--model-url` with
its key from LOOP_MODEL_API_KEY (never a DEEPSEEK_* variable). Imported only for --scenario model; it loads the
notes assistant's client, loop and recorder from project/. Shared: those three, cli.py (paths, say).
"""
import os
from pathlib import Path

import cli

from . import use_project
from .budget import ApiCallBudget, ApiCallBudgetExhausted
from .proposal import MAX_REPLY, SYSTEM_PROMPT, TOOL_SCHEMAS, NotAProposal, list_samples, parse_proposal, question

use_project()
from assistant.agent import Limits, Outcome, run_question  # noqa: E402  (the notes assistant's, from project/)
from assistant.client import ChatClient  # noqa: E402
from assistant.errors import failure_kind  # noqa: E402
from assistant.record import QuestionRecorder  # noqa: E402

MAX_TURNS = 4  # model turns a proposal may take (requests, retries not counted)
LIMITS = Limits(max_turns=MAX_TURNS)
CLIENT = {"timeout": 30.0, "deadline": 60.0, "max_retries": 2, "max_tokens": 512}  # the limits it is judged by
MOCK_MODEL = "mock-developer"
KEY_VARIABLE, MODEL_VARIABLE = "LOOP_MODEL_API_KEY", "LOOP_MODEL_NAME"
FAILED = ("api_error", "context_full")  # the notes assistant's stops for a failing model service


class ModelFailed(Exception):
    """The development model's service failed as the notes assistant's rules say (retries used up, not retryable,
    a wait too long): STOP is the question's stop, the message says what failed, in Chinese."""

    def __init__(self, stop, message):
        super().__init__(message)
        self.stop = stop


class DevelopmentModel:
    """The development model of one loop: its CLIENT, the loop's BUDGET, proposal records under FOLDER (the loop's)."""

    def __init__(self, root, folder, client, budget, *, server=None, say=cli.say):
        self.root, self.folder, self.client, self.budget = Path(root), Path(folder), client, budget
        self.server, self.say, self.current = server, say, None
        self.client.on_retry = self.said_retry

    def close(self):
        if self.server is not None:
            self.server.close()

    def propose(self, number, feedback):
        """(proposal, model entry) for attempt NUMBER given FEEDBACK [(attempt, sample, feedback)]; see the module."""
        folder = self.folder / "proposals" / f"{number:02d}"
        folder.mkdir(parents=True, exist_ok=False)
        path = folder / "question.json"
        rel = f"loop-runs/{self.folder.name}/proposals/{number:02d}/question.json"
        recorder = QuestionRecorder(path, f"{self.folder.name}/proposals/{number:02d}", question(number, feedback),
                                    self.client, LIMITS, kind="proposal")
        recorder.record.update(reply_text=None, reply_text_complete=True, cut=None)
        self.current = {"proposal": rel, "turns": 0, "requests": 0, "tokens": 0, "claim": None, "stop": "running"}
        recorder.start(path)
        recorder.attach(self.client)
        self.client.on_attempt = self.budget.guard(recorder.on_attempt)
        heard = Heard(self.client)
        try:
            outcome = run_question(heard, [], recorder.record["question"], limits=LIMITS,
                                   tool_runner=list_samples(self.root), tools=TOOL_SCHEMAS,
                                   on_event=recorder.listener(self.said_event))
        except ApiCallBudgetExhausted as exc:
            recorder.drop_unsent_turn()
            recorder.record["cut"] = {"by": "api_call_budget", "sent": exc.sent, "max_api_calls": exc.limit}
            self.ended(recorder, Outcome("interrupted", "", [], 0))
            raise
        except BaseException:  # a defect in the loop or the recorder: the record says it was cut off here
            self.ended(recorder, Outcome("interrupted", "", [], 0))
            raise
        answer = outcome.answer if outcome.stop == "answered" else None
        if answer is not None:
            recorder.record.update(reply_text=answer[:MAX_REPLY], reply_text_complete=len(answer) <= MAX_REPLY)
        self.ended(recorder, outcome)
        if outcome.stop == "interrupted":
            raise heard.interrupt or KeyboardInterrupt()
        if outcome.stop in FAILED:
            raise ModelFailed(outcome.stop, failure_words(outcome.error))
        if answer is None:
            raise NotAProposal("stopped", f"开发模型没有给出最后的回答（问题以 {outcome.stop} 停下）")
        proposal = parse_proposal(answer)
        self.current["claim"] = proposal.pop("claim")
        return proposal, self.current

    def ended(self, recorder, outcome):
        """The record's last write; the proposal's counts, as the record gives them, in `current`."""
        recorder.finish(outcome)
        record = recorder.record
        self.current.update(turns=len(record["turns"]), requests=record["requests"], stop=record["stop"],
                            tokens=None if record["tokens"]["estimated"] else record["tokens"]["used"])

    def said_event(self, kind, data):
        if kind == "tool_call":
            self.say(f"  开发模型调用工具 {data['name']}（只读）")

    def said_retry(self, number, wait, asked, error):
        """The client is about to wait for retry NUMBER: said on stderr, or refused at once when no API call is left
        for it (the budget would keep it unsent after the wait anyway)."""
        if self.budget.left() <= 0:
            raise ApiCallBudgetExhausted(self.budget.sent, self.budget.limit)
        why = failure_kind(error)
        asked = f"，服务端要求等待 {asked:g} 秒" if asked is not None else ""
        self.say(f"  [重试] {why}{asked}：第 {number} 次重试在 {wait:.2f} 秒后发出（重试也是一次 HTTP 请求；"
                 f"API 调用预算已用 {self.budget.sent} 次，还剩 {self.budget.left()} 次）。")


class Heard:
    """The client as run_question sees it, noting the Ctrl-C or termination that cut a request (to raise it again)."""

    def __init__(self, client):
        self.client, self.interrupt = client, None

    def __getattr__(self, name):
        return getattr(self.client, name)

    def complete(self, *args, **kwargs):
        try:
            return self.client.complete(*args, **kwargs)
        except KeyboardInterrupt as exc:
            self.interrupt = exc
            raise


def failure_words(error):
    """What failed, in Chinese, without the notes assistant's advice about its own DEEPSEEK_* settings."""
    if error is None:
        return "开发模型返回了空回答"
    retried = f"，已重试 {error.retries} 次" if error.retries else ""
    waited = f"，服务端要求等待 {error.asked_wait:g} 秒，超过自动等待的上限 60 秒" if error.asked_wait else ""
    kind = failure_kind(error) if error.status != 200 else f"回应不能用（{error.message}）"
    return f"{kind}{retried}{waited}"


def open_model(root, folder, max_api_calls, model_url=None, model_script=None, env=os.environ, **client_options):
    """The development model of a loop in FOLDER: the local mock replaying MODEL_SCRIPT (its log in FOLDER), or the
    OpenAI-compatible server at MODEL_URL with the key in LOOP_MODEL_API_KEY. CLIENT_OPTIONS (sleep, clock, send ...)
    reach the client, for tests. ServerNotStarted when the local server cannot start."""
    server = None
    if model_url is None:
        from .server import LocalServer
        server = LocalServer(Path(root), Path(root) / model_script, Path(folder) / "server-log.jsonl")
        model_url, key, name = server.start(), "local-mock", MOCK_MODEL
    else:
        key, name = env[KEY_VARIABLE].strip(), (env.get(MODEL_VARIABLE) or "").strip() or "deepseek-chat"
    client = ChatClient(model_url, key, model=name, system_prompt=SYSTEM_PROMPT, **CLIENT, **client_options)
    return DevelopmentModel(root, folder, client, ApiCallBudget(max_api_calls), server=server)
