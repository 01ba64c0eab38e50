"""The token budget of one question: admitted before each request, charged after it.

Admission happens before every attempt (retries included): the tokens already used, plus an
upper bound of this attempt, must fit in the limit, or the attempt is not sent. The bound is
the UTF-8 size of the request body in bytes (a byte-level BPE token covers at least one byte,
so the prompt cannot count more tokens than that) plus the request's `max_tokens` (the most
the reply may generate). So the budget is never overshot, by construction.

Charging: a response's `usage.total_tokens`; an HTTP error reply counts 0 (nothing was
generated); an answer without usage, a request that timed out, broke off or was interrupted
after the connection was made counts its bound and marks the total `estimated` (unknown use is
never taken as zero). Shared with: `client` (admits and charges), `agent` (one per question,
the `token_budget` stop), `app.py` (the `tokens` record).
"""
from dataclasses import dataclass


class BudgetExceeded(Exception):
    """The next attempt could use more than is left; it was not sent."""

    def __init__(self, bound, budget):
        super().__init__(f"needs up to {bound}, {budget.left()} left")
        self.bound = bound
        self.budget = budget
        self.retries = 0  # retries of the same request already made (set by the client)


@dataclass
class TokenBudget:
    """Tokens used by one question so far; `limit` None means no budget (use is still counted)."""

    limit: int | None = None
    used: int = 0
    estimated: bool = False

    def left(self):
        return None if self.limit is None else self.limit - self.used

    def admit(self, bound: int):
        """Raise BudgetExceeded unless an attempt of at most BOUND tokens fits."""
        if self.limit is not None and self.used + bound > self.limit:
            raise BudgetExceeded(bound, self)

    def charge(self, tokens: int, estimated: bool = False):
        self.used += max(int(tokens), 0)
        self.estimated = self.estimated or estimated

    def record(self) -> dict:
        """The `tokens` object of `ask --json`."""
        return {"used": self.used, "estimated": self.estimated, "budget": self.limit}
