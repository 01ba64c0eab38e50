"""Shared by the tests of the model scenario: a development model whose server is an in-process mock.

`Developer(root, folder, script)` starts the mock in script mode (its log at FOLDER/server-log.jsonl, as the loop
keeps it) with the client's waits skipped on a clock both read (project/mockapi/clock.py), and gives the
proposer's DevelopmentModel for it (`model(max_api_calls, **client options)`); `close()` stops the mock.
`opener(...)` is a loop's open_model that does the same (new_loop(..., open_model=opener())).
`PROPOSAL_LIMITS` are the limits a proposal is asked with, written here from docs/loop/TASK.md, not imported.
Nothing here decides what a test expects.
"""
import json
import sys
from pathlib import Path

from tests.support import ROOT

sys.path[:0] = [str(ROOT / "project"), str(ROOT)]

from mock_model import MockServer  # noqa: E402
from mockapi.clock import SkippedWaits  # noqa: E402

PROPOSAL_LIMITS = {"max_turns": 4, "max_tool_failures": 3, "cycle_repeats": 3, "max_cycle_period": 5,
                   "token_budget": None, "deadline": 60.0, "timeout": 30.0, "max_retries": 2, "max_tokens": 512}


def proposal(action, place, claim="这次一定行。"):
    """A final reply's text: one proposal as the development model gives it."""
    where = "sample" if action == "export" else "target"
    return json.dumps({"action": action, where: place, "claim": claim}, ensure_ascii=False)


def shipped(name):
    return json.loads((ROOT / "samples" / "models" / f"{name}.json").read_text(encoding="utf-8"))


class Developer:
    def __init__(self, root, folder, script):
        self.root, self.folder, self.clock = Path(root), Path(folder), SkippedWaits()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.log = self.folder / "server-log.jsonl"
        self.mock = MockServer(0, "script", script=shipped(script) if isinstance(script, str) else script,
                               request_log=self.log, clock=self.clock.now).start()

    def model(self, max_api_calls=10, said=None, **options):
        from proposer.budget import ApiCallBudget
        from proposer.developer import CLIENT, MOCK_MODEL, ChatClient, DevelopmentModel
        from proposer.proposal import SYSTEM_PROMPT
        options = dict({"sleep": self.clock.sleep, "clock": self.clock.now, "random": lambda: 0.0}, **options)
        client = ChatClient(self.mock.url, "test", model=MOCK_MODEL, system_prompt=SYSTEM_PROMPT, **CLIENT,
                            **options)
        say = said.append if said is not None else (lambda line: None)
        return DevelopmentModel(self.root, self.folder, client, ApiCallBudget(max_api_calls), server=self, say=say)

    def log_lines(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line.strip()]

    def close(self):
        if not self.mock.stopping.is_set():
            self.mock.stop()


def opener(script=None, made=None, said=None, **options):
    """A loop's open_model (see proposer/developer.py) that serves SCRIPT (the loop's own by default) from an
    in-process mock; each Developer it makes is appended to MADE, for the test to look at."""
    def open_model(root, folder, max_api_calls, model_url=None, model_script=None, env=None):
        developer = Developer(root, folder, script or json.loads((Path(root) / model_script).read_text("utf-8")))
        if made is not None:
            made.append(developer)
        return developer.model(max_api_calls, said, **options)
    return open_model
