"""The token budget: never overshot, over many random usage sizes and faults (fixed seed, no network).

A fake transport stands in for the server: each attempt gets a random reply within what a
real server can count (prompt tokens <= the body's UTF-8 bytes, generated <= max_tokens), a
reply without usage, a timeout after connecting, or a 429. The guarded loop runs whole
questions on it with random budgets; the tokens charged never exceed the budget.
"""
import json
import random
import sys
import unittest

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import agent, errors  # noqa: E402
from assistant.budget import BudgetExceeded, TokenBudget  # noqa: E402
from assistant.client import ChatClient  # noqa: E402
from assistant.transport import Reply  # noqa: E402

QUESTIONS = 300


class RandomServer:
    """send(url, body, headers, attempt) like transport.post_json; records what the 'server' counted."""

    def __init__(self, rng, max_tokens):
        self.rng, self.max_tokens = rng, max_tokens
        self.counted = 0       # tokens the server reported in usage
        self.unreported = 0    # attempts whose use the client could not know

    def __call__(self, url, body, headers, attempt):
        kind = self.rng.choices(["usage", "no_usage", "timeout", "429"], weights=[12, 2, 1, 1])[0]
        if kind == "429":
            return Reply(429, {}, b'{"error": {"message": "slow down"}}')
        attempt.connected = True
        if kind == "timeout":
            self.unreported += 1
            raise errors.APITimeoutError("test deadline", 1.0)
        query = f"q{self.rng.random()}"  # changing arguments: no cycle, the loop goes on
        completion = {"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": "",
                      "tool_calls": [{"id": f"c{query}", "type": "function", "function": {
                          "name": "search_notes", "arguments": json.dumps({"query": query})}}]}}]}
        if kind == "usage":
            total = self.rng.randint(0, len(body) + self.max_tokens)  # what a server can count at most
            completion["usage"] = {"total_tokens": total}
            self.counted += total
        else:
            self.unreported += 1
        return Reply(200, {}, json.dumps(completion).encode("utf-8"))


class NeverOvershot(unittest.TestCase):
    def test_random_usage_sizes_and_faults(self):
        rng = random.Random(20261201)
        stops, overshoot = {}, 0
        for _ in range(QUESTIONS):
            max_tokens = rng.randint(16, 4096)
            limit = rng.randint(500, 60000)
            server = RandomServer(rng, max_tokens)
            model = ChatClient("http://127.0.0.1:9", "k", sleep=lambda seconds: None, random=rng.random,
                               max_tokens=max_tokens, send=server)
            outcome = agent.run_question(model, [], "问题", tool_runner=lambda name, arguments: ("[]", False),
                                         limits=agent.Limits(max_tokens=limit))
            overshoot = max(overshoot, outcome.tokens.used - limit)
            self.assertGreaterEqual(outcome.tokens.used, server.counted)
            self.assertEqual(outcome.tokens.estimated, server.unreported > 0)
            stops[outcome.stop] = stops.get(outcome.stop, 0) + 1
        self.assertLessEqual(overshoot, 0)
        self.assertGreater(stops.get("token_budget", 0), QUESTIONS // 2, stops)  # the budget was really tested

    def test_admission_is_exact_at_the_limit(self):
        budget = TokenBudget(limit=100, used=40)
        budget.admit(60)  # 40 + 60 = 100 fits
        with self.assertRaises(BudgetExceeded):
            budget.admit(61)


if __name__ == "__main__":
    unittest.main()
