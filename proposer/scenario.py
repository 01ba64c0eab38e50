"""The model scenario's part of one loop: its record's entries, the files it runs, each proposal, its stops' words.

`loop_lab.py --scenario model` makes one `ModelScenario` and asks it, at the flowchart's steps: before anything is
created, whether the development model can be used (`problem`) and which files the loop's context adds (`files`: the
22, then this package, the notes assistant's client, loop and recorder, and with the local mock the mock's modules
and the script); at step 2 `propose()`, which starts the development model for the first proposal (`open()`,
developer.open_model), stops at once when no API call is left, says on stderr what was asked and what came back, or
gives the `ProposalStopped` when no candidate can follow; when the loop runs the candidate, `run_as_attempt()`
moves the proposal's entry into the attempt; at the end `close()` ends the local server. The record gains
`budget.max_api_calls`, `model` (where the model came from, the server's log), `actual_api_calls` (the HTTP requests
actually sent) and `proposal_not_run` (the entry of a last proposal no attempt carries: blocked, cut by the budget,
not a proposal, a failing service, an interrupt). Nothing here decides: the loop's scope check and its independent
check do, never the model's claim. Shared: developer.py, options.py, machinery/arguments.py's default budget. Loading
it loads the notes assistant's client: only the model scenario does.
"""
import os
import urllib.parse
from collections import namedtuple

import cli
from machinery.arguments import DEFAULT_API_CALLS

from . import options
from .budget import ApiCallBudgetExhausted
from .developer import ModelFailed, open_model
from .proposal import NotAProposal, shown

PACKAGE_FILES = tuple(f"proposer/{name}.py" for name in ("__init__", "budget", "developer", "options", "proposal",
                                                           "scenario", "server"))
CLIENT_FILES = tuple(f"project/assistant/{name}.py" for name in (
    "__init__", "agent", "budget", "client", "config", "cycle", "errors", "history", "notes", "ranking", "record",
    "retry", "text", "tools", "transport"))
MOCK_FILES = ("project/mock_model.py", "project/workspace.py", "project/mockapi/__init__.py",
              "project/mockapi/evidence.py", "project/mockapi/requests.py", "project/mockapi/script.py")
DECIDE = {
    "api_call_budget": (
        "API 调用预算是硬上限，单位是 HTTP 请求（含客户端的重试），每次请求之前检查：用完就不再发请求，哪怕下一次可能成功。"
        "请对照{log} proposals/ 里每次提议的记录，看请求花在了哪里（重试、工具调用的回合），再决定是否用更大的"
        " --max-api-calls（最多 100）和新名称重新运行。本记录保持不动。"),
    "NotAProposal": (
        "开发模型最后的回答不是一个提议，循环不猜它的意思。请读 {proposal} 的 reply_text（模型的原话），决定是换一个开发模型，"
        "还是这次由人来选候选；之后用新名称重新运行。"),
    "ModelFailed": (
        "开发模型的服务按笔记助手的重试规则试过之后仍然失败，这次没有候选可以判断。请对照 {proposal} 每次尝试的状态"
        "{log_too}，确认服务恢复后用新名称重新运行；不要把它当作候选本身的失败。"),
}


class ProposalStopped(namedtuple("ProposalStopped", "kind what decide inspect")):
    """No candidate can follow this proposal: KIND (api_call_budget, NotAProposal, ModelFailed), WHAT happened and
    DECIDE (what a person must decide), in Chinese; INSPECT: the files to look at."""


class ModelScenario:
    """The development model of loop NAME in ROOT; OPEN_MODEL (developer.open_model by default) makes it."""

    def __init__(self, root, name, max_api_calls=None, model_url=None, model_script=None, *, open_model=None,
                 env=os.environ, say=cli.say):
        self.root, self.name, self.url, self.env, self.say = root, name, model_url, env, say
        self.problem = options.model_problem(root, model_url, model_script, env)
        self.script = None if model_url is not None else options.script_path(root, model_script)
        self.limit = DEFAULT_API_CALLS if max_api_calls is None else max_api_calls
        self.files = PACKAGE_FILES + CLIENT_FILES + ((*MOCK_FILES, self.script) if self.script else ())
        self.open_model, self.developer, self.record = open_model, None, None

    def extend(self, record):
        """The model scenario's entries in the loop's first RECORD (kept and updated as the loop goes)."""
        self.record = record
        record["budget"]["max_api_calls"] = self.limit
        record["model"] = {"source": "url" if self.script is None else "local_mock", "script": self.script,
                           "url": url_view(self.url),
                           "server_log": None if self.script is None else self.rel("server-log.jsonl")}
        record["proposal_not_run"] = None

    def rel(self, name):
        return f"loop-runs/{self.name}/{name}"

    def open(self):
        """Starts the development model, once, for the first proposal (the local mock: a process of its own); the
        loop's folder is claimed by then."""
        if self.developer is None:
            folder = self.root / "loop-runs" / self.name
            self.developer = (self.open_model or open_model)(self.root, folder, self.limit, self.url, self.script,
                                                             env=self.env)
        return self.developer

    def sent(self):
        return self.developer.budget.sent

    def propose(self, number, attempts):
        """(proposal, None) for attempt NUMBER from the feedback of ATTEMPTS, or (None, ProposalStopped) when no
        candidate can follow."""
        if self.open().budget.left() <= 0:  # no request could be admitted: the proposal is not even asked
            return None, self.stopped("api_call_budget", f"第 {number} 次提议开始前，API 调用预算 {self.limit} 次"
                                                         f"已用完（已发出 {self.sent()} 次 HTTP 请求，含重试）")
        feedback = [(a["attempt"], a["candidate"]["sample"], a["feedback"]) for a in attempts if a["feedback"]]
        record = f"proposals/{number:02d}/question.json"
        self.say(f"[第 {number} 轮] 请开发模型提出候选，带上到目前为止的 {len(feedback)} 条反馈（记录 {self.rel(record)}；"
                 f"API 调用已用 {self.sent()}/{self.limit} 次）。")
        try:
            proposal, entry = self.developer.propose(number, feedback)
        except ApiCallBudgetExhausted as exc:
            return None, self.stopped("api_call_budget", f"第 {number} 次提议进行中，API 调用预算 {exc.limit} 次已用完"
                                      f"（已发出 {exc.sent} 次 HTTP 请求，含重试），下一次请求没有发出")
        except NotAProposal as exc:
            return None, self.stopped("NotAProposal", f"第 {number} 次提议：{exc.detail}")
        except ModelFailed as exc:
            return None, self.stopped("ModelFailed", f"第 {number} 次提议：开发模型的服务失败（{exc}）")
        finally:
            self.record["actual_api_calls"] = self.sent()
            self.record["proposal_not_run"] = self.developer.current
        place = proposal.get("sample", proposal.get("target"))
        self.say(f"[第 {number} 轮] 开发模型提议 {shown(proposal['action'])} {shown(place)}，它自己说：“{shown(entry['claim'])}”"
                 f"（{entry['turns']} 次模型交互、{entry['requests']} 次 HTTP 请求）。它的话不作数：先过范围检查，"
                 "再由独立核对决定。")
        return proposal, None

    def stopped(self, kind, what):
        current = self.developer.current or {}
        proposal = current.get("proposal") or self.rel("proposals/")
        log = self.record["model"]["server_log"]
        decide = DECIDE[kind].format(proposal=proposal, log=f"服务端记录 {log} 和" if log else "",
                                     log_too=f"和服务端记录 {log}" if log else "")
        return ProposalStopped(kind, what, decide, [proposal] + ([log] if log else []))

    def run_as_attempt(self, attempt):
        """The proposal in hand becomes ATTEMPT's: its entry moves there."""
        attempt["model"], self.record["proposal_not_run"] = self.record["proposal_not_run"], None

    def close(self):
        if self.developer is not None:
            self.developer.close()


def url_view(url):
    """A --model-url as a record keeps it: scheme, host, port and path, never a query or a key in it."""
    if url is None:
        return None
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
