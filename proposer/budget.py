"""The loop's budget of API calls: HTTP requests to the development model, retries included.

One counter for the whole loop, across every proposal. `guard(hook)` wraps the client's `on_attempt` hook: before
each HTTP request (a first attempt or a retry) the budget admits it or raises `ApiCallBudgetExhausted`, and the
client then leaves the request unsent (the notes assistant's ChatClient keeps a request unsent when its "before"
hook raises). So the requests sent never exceed the limit, by construction; the client's own retry limit and
backoff are unchanged. `sent` is what the loop records as `actual_api_calls`: a request admitted and then cut by
Ctrl-C counts, since it may have reached the server. Separate from the notes assistant's token budget and from
its key: the loop's model has its own.
"""


class ApiCallBudgetExhausted(Exception):
    """The next HTTP request would be call LIMIT + 1: it was not sent. SENT: the requests sent before it."""

    def __init__(self, sent, limit):
        super().__init__(f"已发出 {sent} 次 HTTP 请求，API 调用预算是 {limit} 次")
        self.sent, self.limit = sent, limit


class ApiCallBudget:
    """At most LIMIT HTTP requests for the whole loop; `sent` so far."""

    def __init__(self, limit):
        self.limit, self.sent = limit, 0

    def left(self):
        return self.limit - self.sent

    def admit(self):
        """Count one more request, or raise ApiCallBudgetExhausted when none is left (nothing counted then)."""
        if self.sent >= self.limit:
            raise ApiCallBudgetExhausted(self.sent, self.limit)
        self.sent += 1

    def guard(self, hook):
        """HOOK (the client's on_attempt, e.g. a question recorder's) behind this budget's admission."""
        def on_attempt(kind, data):
            if kind == "before":
                self.admit()
            hook(kind, data)
        return on_attempt
