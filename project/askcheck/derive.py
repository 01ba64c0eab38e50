"""Re-derive why a recorded question stopped, and every count, from its turns; compare with what it claims.

Walks the turns as the loop of docs/assistant/DESIGN.md would have lived them, with rules.py's table: the turn
cap (checked before each request), each attempt's retry number, wait, offsets, deadline and charge, the token
budget admitted before every attempt (zero overshoot), why no further attempt was made, what each reply ends,
every call's result, the failure counter (reset by any round with a success), the cycle rule and the reminder;
then the stop that follows, the tokens, the requests and the answer. Findings go to a findings.Verdict. The
record's shape is checked first (shape.py): only a well-formed record is walked.
"""
from .rules import (API_LIMITS, MAX_CLOCK_STEP, MAX_RETRY_AFTER, MAX_SECONDS, QUESTION_LIMITS, ROUNDING, SLOW_MACHINE,
                    STATUS_ERRORS, charge, finish_stop, repeated_period, retryable, round_signature, server_hint,
                    wait_problem)

HINTS = ("retry_after", "retry_after_ms", "should_retry")
OVERRUN = 1.0  # seconds past its own limit an attempt may end on a busy machine before a person should look


def attempt_where(turn, index, attempt):
    return f"第 {turn} 轮第 {index} 次尝试（retry {attempt['retry']}）"


class Derivation:
    """One well-formed record walked turn by turn; findings are added to VERDICT."""

    def __init__(self, record, verdict, expected_limits=None):
        self.record, self.verdict, self.expected = record, verdict, expected_limits
        self.limits = record["limits"]
        self.api = record["model"]["kind"] == "api"
        self.used, self.last_end, self.failures, self.signatures = 0, 0.0, 0, []
        self.reminded, self.call_ids, self.ends, self.body_bytes = False, set(), [], 0
        resolution = record.get("clock_resolution")
        step = min(resolution, MAX_CLOCK_STEP) if type(resolution) in (int, float) and resolution > 0 else 0.0
        self.tolerance = ROUNDING + step  # two readings of a coarse clock may differ by one of its steps

    def run(self):
        self.check_limits()
        self.check_model()
        turns = self.record["turns"]
        for index, turn in enumerate(turns):
            self.ends.append(self.check_turn(index + 1, turn, index == len(turns) - 1))
            if self.ends[-1] is not None and index < len(turns) - 1:
                self.verdict.add("went_on", where=f"第 {index + 1} 轮", stop=self.ends[-1], next=index + 2)
        self.check_stop()
        self.check_totals()

    # ---- what the question was asked with ----

    def check_limits(self):
        kind = self.record.get("kind", "question")
        expected = self.expected
        if expected is None and kind != "question":
            self.verdict.add("other_kind", value=str(kind)[:40])
            return
        if expected is None:
            expected = dict(QUESTION_LIMITS, **(API_LIMITS if self.api else dict.fromkeys(API_LIMITS)))
            if not self.api:
                expected.update(deadline=None, timeout=None)
        for field, value in expected.items():
            if self.limits.get(field) != value:
                self.say_limit(field, expected[field])
        for field in ("deadline", "timeout") if self.api else ():
            value = self.limits[field]
            if "deadline" not in expected and (value is None or not 0 < value <= MAX_SECONDS):
                self.say_limit(field, f"(0, {MAX_SECONDS:g}] 秒")

    def say_limit(self, field, expected):
        self.verdict.add("limits", field=field, value=self.limits.get(field), expected=expected,
                         program="app.py ask / chat" if self.expected is None else "启动它的程序")

    def check_model(self):
        if self.api:
            return
        sent = any(turn["attempts"] for turn in self.record["turns"]) or self.record["tokens"]["used"] \
            or self.record.get("requests", 0) or self.record["model"]["base_url"] is not None
        if sent:
            self.verdict.add("demo_sent", where="离线演示模型的记录")

    # ---- one turn ----

    def check_turn(self, number, turn, last):
        """The stop this turn ends with (None: the loop went on to the next)."""
        where = f"第 {number} 轮"
        if turn["turn"] != number:
            self.verdict.add("turn_number", where=where, value=turn["turn"], expected=number)
        if number > self.limits["max_turns"]:
            self.verdict.add("past_cap", where=where, cap=self.limits["max_turns"], turn=number)
        outcome = self.check_attempts(number, turn) if self.api else self.demo_outcome(number, turn)
        if outcome == "ok":
            return self.check_reply(number, turn, last)
        if turn["reply"] is not None:
            self.verdict.add("reply_extra", where=where)
        if outcome == "unknown":
            return "interrupted"
        return self.check_gave_up(number, turn, last)

    def demo_outcome(self, number, turn):
        if turn["gave_up"] is not None:
            self.verdict.add("gave_up_extra", where=f"第 {number} 轮")
        return "ok" if turn["reply"] is not None else "unknown"

    def check_attempts(self, number, turn):
        """Each attempt against the retry policy, the deadline and the budget: "ok", "failed", "unknown" or "none"."""
        attempts = turn["attempts"]
        if not attempts:
            return "none"
        if attempts[0]["body_bytes"] <= self.body_bytes:  # each request carries the one before and its answer
            self.verdict.add("body_not_growing", where=f"第 {number} 轮", value=attempts[0]["body_bytes"],
                             before=self.body_bytes)
        self.body_bytes = attempts[0]["body_bytes"]
        if len(attempts) > self.limits["max_retries"] + 1:
            self.verdict.add("too_many_retries", where=f"第 {number} 轮", max_retries=self.limits["max_retries"],
                             count=len(attempts))
        for index, attempt in enumerate(attempts, 1):
            self.check_attempt(number, index, attempt, attempts[0], attempts[index - 2] if index > 1 else None)
        final = attempts[-1]
        if final["error"] == "unknown":
            return "unknown"
        return "ok" if final["error"] is None and 200 <= (final["status"] or 0) < 300 else "failed"

    def check_attempt(self, number, index, attempt, first, previous):
        where = attempt_where(number, index, attempt)
        if attempt["retry"] != index - 1:
            self.verdict.add("retry_number", where=where, value=attempt["retry"], expected=index - 1)
        for field in ("body_sha256", "body_bytes"):
            if attempt[field] != first[field]:
                self.verdict.add("body_changed", where=where, field=field)
        self.check_outcome(where, attempt)
        self.check_offsets(where, attempt)
        bound = attempt["body_bytes"] + (self.limits["max_tokens"] or 0)
        budget = self.limits["token_budget"]
        if budget is not None and self.used + bound > budget:
            self.verdict.add("overshoot", where=where, used=self.used, bound=bound, total=self.used + bound,
                             budget=budget)
        tokens, estimated = charge(attempt, bound)
        recorded = attempt["charged"]
        if (recorded["tokens"], recorded["estimated"]) != (tokens, estimated):
            self.verdict.add("charged", where=where, value=f"{recorded['tokens']}（估计 {recorded['estimated']}）",
                             expected=f"{tokens}（估计 {estimated}）", why=charge_reason(attempt))
        self.used += recorded["tokens"]
        if previous is None:
            if attempt["wait"] != 0:
                self.verdict.add("wait_not_backoff", where=where, wait=attempt["wait"], shortest=0.0, longest=0.0)
        else:
            self.check_retry(where, attempt, previous)

    def check_outcome(self, where, attempt):
        status, error = attempt["status"], attempt["error"]
        success = status is not None and 200 <= status < 300
        why = None
        if error in STATUS_ERRORS and (status is None or success):
            why = "错误状态码要有一个非 2xx 的 status"
        elif error is None and not success:
            why = "没有错误的尝试收到的是 2xx 回应"
        elif error in ("error_object", "not_json", "empty_choices") and not success:
            why = "这几种错误是 2xx 回应的正文不能用"
        elif status is not None and not success and error not in STATUS_ERRORS:
            why = "非 2xx 的回应算错误状态码（status 或 context_length）"
        elif status is not None and not attempt["connected"]:
            why = "收到回应的尝试一定连上了服务端"
        elif error not in STATUS_ERRORS and any(attempt[key] is not None for key in HINTS):
            why = "只有错误状态码的响应头才会被记下（retry-after、retry-after-ms、x-should-retry）"
        if why:
            self.verdict.add("outcome", where=where, status=status, error=error, why=why)

    def check_offsets(self, where, attempt):
        if attempt["start"] < self.last_end - self.tolerance:
            self.verdict.add("offsets_backwards", where=where, field="start", value=attempt["start"],
                             before=self.last_end)
        if attempt["end"] < attempt["start"] - ROUNDING:
            self.verdict.add("offsets_backwards", where=where, field="end", value=attempt["end"],
                             before=attempt["start"])
        self.last_end = max(self.last_end, attempt["end"])
        deadline, timeout = self.limits["deadline"], self.limits["timeout"]
        if deadline is None or timeout is None:
            return
        if attempt["start"] >= deadline + ROUNDING:
            self.verdict.add("past_deadline", where=where, value=attempt["start"], deadline=deadline)
        limit = min(timeout, deadline - attempt["start"])
        if abs(attempt["limit"] - limit) > ROUNDING:
            self.verdict.add("limit_wrong", where=where, value=attempt["limit"], expected=limit)
        elif attempt["end"] - attempt["start"] > attempt["limit"] + OVERRUN:
            self.verdict.add("overran", where=where, value=attempt["end"] - attempt["start"], limit=attempt["limit"])

    def check_retry(self, where, attempt, previous):
        """A retry: the failure before it is retried by the rule, and the wait is the rule's and was waited."""
        if previous["error"] is None or not retryable(previous):
            self.verdict.add("retried_not_retryable", where=where, error=previous["error"], status=previous["status"])
            return
        hint = server_hint(previous)
        if hint is not None and hint > MAX_RETRY_AFTER:
            self.verdict.add("retried_past_cap", where=where, hint=hint)
            return
        problem = wait_problem(attempt["wait"], hint, attempt["retry"])
        if problem:
            self.verdict.add(problem[0], where=where, **problem[1])
        gap = attempt["start"] - previous["end"]
        if gap < attempt["wait"] - self.tolerance:
            self.verdict.add("gap_short", where=where, gap=gap, wait=attempt["wait"])
        deadline = self.limits["deadline"]
        if deadline is not None and attempt["wait"] >= deadline - previous["end"] + self.tolerance:
            self.verdict.add("wait_past_deadline", where=where, wait=attempt["wait"], left=deadline - previous["end"])

    # ---- how a turn without a reply ended ----

    def check_gave_up(self, number, turn, last):
        """The stop of a turn whose request failed: why no further attempt was made, and what that stops with."""
        where, gave_up = f"第 {number} 轮", turn["gave_up"]
        attempts, refused = turn["attempts"], self.record["refused"]
        if gave_up is None:
            if last and self.record["stop"] in ("interrupted", "running"):
                return "interrupted"  # a Ctrl-C while waiting to retry
            if last and refused is not None and refused["turn"] == number and attempts:
                return "token_budget"  # the retry did not fit in the budget
            self.verdict.add("gave_up_missing", where=where)
            return "api_error"
        if not attempts:
            if gave_up["why"] != "deadline" or gave_up["wait"] is not None:
                self.verdict.add("no_attempt", where=where)
            elif gave_up["left"] > ROUNDING:
                self.verdict.add("gave_up_wrong", where=where, value="deadline", expected="（再发一次请求）",
                                 why=f"期限还剩 {gave_up['left']:.3f} 秒")
            return "api_error"
        final = attempts[-1]
        self.check_why(where, gave_up, final)
        if final["error"] == "context_length" and gave_up["why"] != "deadline":
            return "context_full"
        return "api_error"

    def check_why(self, where, gave_up, final):
        """gave_up.why (and its wait and left) as the client decides them after the last failed attempt."""
        deadline = self.limits["deadline"]
        left_then = deadline - final["end"] if deadline is not None else None
        if left_then is not None and gave_up["left"] > left_then + self.tolerance:
            self.verdict.add("gave_up_left", where=where, value=gave_up["left"], expected=left_then)
        elif left_then is not None and gave_up["left"] < left_then - SLOW_MACHINE:
            self.verdict.add("gave_up_left_short", where=where, value=gave_up["left"], expected=left_then)
        hint = server_hint(final)
        expected, why = self.expected_why(final, gave_up, hint)
        if gave_up["why"] != expected:
            self.verdict.add("gave_up_wrong", where=where, value=gave_up["why"], expected=expected, why=why)
        elif expected == "retry_after_cap" and abs((gave_up["wait"] or 0) - hint) > ROUNDING:
            self.verdict.add("gave_up_wrong", where=where, value=f"wait {gave_up['wait']}", expected=f"wait {hint:g}",
                             why="要说出服务端要求等多久")
        elif expected == "deadline" and gave_up["wait"] is not None:
            problem = wait_problem(gave_up["wait"], hint, final["retry"] + 1)
            if problem:
                self.verdict.add(problem[0], where=f"{where}的 gave_up", **problem[1])

    def expected_why(self, final, gave_up, hint):
        """(why, because) the client gives up after FINAL, in the client's own order."""
        timed_out = final["error"] == "timeout" and gave_up["left"] <= ROUNDING
        if timed_out:
            return "deadline", "这次尝试被期限截断"
        if final["retry"] >= self.limits["max_retries"]:
            return "limit", f"已经重试了 {final['retry']} 次"
        if not retryable(final):
            return "not_retryable", "这种失败不重试"
        if hint is not None and hint > MAX_RETRY_AFTER:
            return "retry_after_cap", f"服务端要求等待 {hint:g} 秒，超过 60 秒"
        if gave_up["wait"] is not None and gave_up["wait"] >= gave_up["left"]:
            return "deadline", "要等的时间不短于期限剩下的时间"
        return "（再试一次）", "还能重试，等待也放得进期限"

    # ---- a turn with a reply ----

    def check_reply(self, number, turn, last):
        where, reply = f"第 {number} 轮", turn["reply"]
        if reply is None:
            if not (last and self.record["stop"] in ("interrupted", "running")):
                self.verdict.add("reply_missing", where=where)
            return "interrupted"
        if turn["gave_up"] is not None:
            self.verdict.add("gave_up_extra", where=where)
        if self.api and turn["usage"] != turn["attempts"][-1]["usage"]:
            self.verdict.add("usage", where=where)
        for call in reply["tool_calls"]:
            if call["id"] in self.call_ids:
                self.verdict.add("call_id_repeated", where=where, value=call["id"][:40])
            self.call_ids.add(call["id"])
        stop = finish_stop(reply)
        if stop is not None:
            if turn["results"] or turn["guards"] is not None:
                self.verdict.add("results", where=where, why=f"这次回应以 {stop} 结束，工具不会执行，却记着结果或计数")
            return stop
        if turn["guards"] is None:
            self.check_cut_round(where, reply, turn["results"], last)
            return "interrupted"
        return self.check_round(where, reply, turn["results"], turn["guards"])

    def check_cut_round(self, where, reply, results, last):
        """A round a Ctrl-C cut: the results given so far, the done ones first, one interrupted, the rest not run."""
        if not (last and self.record["stop"] in ("interrupted", "running")):
            self.verdict.add("results", where=where, why="这一轮没有记下计数（guards），问题却不是被中断的")
        states = [result["state"] for result in results]
        cut = states.index("interrupted") if "interrupted" in states else len(states)
        if any(state != "done" for state in states[:cut]) or any(state != "not_run" for state in states[cut + 1:]):
            self.verdict.add("results", where=where, why="被中断的一轮里，结果应是先执行完的、被中断的一个、再是没执行的")
        self.check_pairs(where, reply["tool_calls"][:len(results)], results)

    def check_pairs(self, where, calls, results):
        if len(calls) != len(results) or any((call["id"], call["name"]) != (result["call_id"], result["name"])
                                             for call, result in zip(calls, results)):
            self.verdict.add("results", where=where, why="结果要按顺序一一对应这一轮的工具调用（id 和名字）")
        if any(result["state"] != "done" and not result["is_error"] for result in results):
            self.verdict.add("results", where=where, why="被中断或没执行的调用，结果一定是失败")

    def check_round(self, where, reply, results, guards):
        """A whole round: its results, then the counters as the rules derive them, then what the round ends with."""
        calls = reply["tool_calls"]
        self.check_pairs(where, calls, results)
        if any(result["state"] != "done" for result in results):
            self.verdict.add("results", where=where, why="记下计数的一轮，每个调用都执行完了（state 是 done）")
        self.failures = self.failures + 1 if all(result["is_error"] for result in results) else 0
        self.signatures.append(round_signature(reply, results))
        repeats, max_period = self.limits["cycle_repeats"], self.limits["max_cycle_period"]
        period = repeated_period(self.signatures, repeats, max_period)
        seen = repeated_period(self.signatures, repeats - 1, max_period) if repeats - 1 >= 2 else None
        failed = self.failures >= self.limits["max_tool_failures"]
        remind = seen is not None and not self.reminded and not failed and not period
        self.reminded = self.reminded or remind
        derived = {"failures": self.failures, "cycle_period": period, "repeat_seen": seen, "reminded": remind}
        for field, value in derived.items():
            if guards[field] != value:
                self.verdict.add("guards", where=where, field=field, value=guards[field], expected=value)
        return "tool_failures" if failed else "no_progress" if period else None

    # ---- the end ----

    def check_stop(self):
        recorded, turns = self.record["stop"], self.record["turns"]
        expected, why = self.expected_stop()
        if recorded == "running":
            self.verdict.add("running")
        elif recorded == "interrupted":
            self.verdict.add("interrupted")  # a person may stop the loop at any point
        elif recorded != expected:
            self.verdict.add("stop", value=recorded, expected=expected, why=why)
        elif recorded == "answered" and self.record["answer_sha256"] != turns[-1]["reply"]["text_sha256"]:
            self.verdict.add("answer")
        self.check_refused()

    def expected_stop(self):
        turns, refused = self.record["turns"], self.record["refused"]
        ended = self.ends[-1] if self.ends else None
        if ended is not None:
            return ended, f"第 {len(turns)} 轮的记录推出这个停止原因"
        if turns and len(turns) >= self.limits["max_turns"]:
            return "max_turns", f"已经发出 {len(turns)} 次模型请求，上限在下一次请求之前检查"
        if refused is not None and refused["turn"] == len(turns) + 1:
            return "token_budget", "下一次请求没有被 token 预算放行"
        return "interrupted", "最后一轮之后问题还会继续，只有中断能在这里停下"

    def check_refused(self):
        refused, turns = self.record["refused"], self.record["turns"]
        if refused is None:
            return
        budget = self.limits["token_budget"]
        problems = []
        if self.record["stop"] not in ("token_budget", "running"):
            problems.append("没有被放行的请求之后，问题以 token_budget 停下")
        if budget is None or refused["used"] + refused["bound"] <= budget:
            problems.append(f"已用 {refused['used']} + 上限 {refused['bound']} 放得进预算 {budget}，这次请求会被放行")
        if refused["used"] != self.used:
            problems.append(f"used 是 {refused['used']}，之前各次尝试一共计入 {self.used}")
        last_bound = (turns[-1]["attempts"][-1]["body_bytes"] + self.limits["max_tokens"]
                      if self.api and turns and turns[-1]["attempts"] else None)
        if not self.api:
            problems.append("离线演示模型不用 token，不会被预算拦下")
        elif turns and refused["turn"] == len(turns):
            if refused["bound"] != last_bound:
                problems.append("重试被拦下时，上限就是这一轮请求体的字节数 + max_tokens")
        elif refused["turn"] != len(turns) + 1:
            problems.append(f"turn 是 {refused['turn']}，被拦下的只能是最后一轮的重试或下一轮的请求")
        elif last_bound is not None and refused["bound"] <= last_bound:
            problems.append("下一轮的请求体带着这一轮的回应和结果，比这一轮的大")
        for problem in problems:
            self.verdict.add("refused", why=problem)

    def check_totals(self):
        record = self.record
        attempts = [attempt for turn in record["turns"] for attempt in turn["attempts"]]
        tokens = record["tokens"]
        used = sum(attempt["charged"]["tokens"] for attempt in attempts)
        if tokens["used"] != used:
            self.verdict.add("interrupted_tokens" if record["stop"] == "interrupted" else "tokens", field="used",
                             value=tokens["used"], expected=used)
        estimated = any(attempt["charged"]["estimated"] for attempt in attempts)
        if tokens["estimated"] != estimated and record["stop"] != "interrupted":
            self.verdict.add("tokens", field="estimated", value=tokens["estimated"], expected=estimated)
        if tokens["budget"] != self.limits["token_budget"]:
            self.verdict.add("tokens", field="budget", value=tokens["budget"], expected=self.limits["token_budget"])
        if "requests" in record and record["requests"] != len(attempts):
            self.verdict.add("requests", value=record["requests"], expected=len(attempts))
        if record["elapsed"] is not None and record["elapsed"] < self.last_end - self.tolerance:
            self.verdict.add("elapsed", value=record["elapsed"], expected=self.last_end)
        if record["ended_at"] is not None and record["ended_at"] < record["started_at"]:
            self.verdict.add("wall_clock", started=record["started_at"], ended=record["ended_at"])


def charge_reason(attempt):
    """Why the rule charges what it does, in a few Chinese words."""
    status = attempt["status"]
    if status is None:
        return "连上之后没有完整回应，按上限估计" if attempt["connected"] else "没有连上，记 0"
    if not 200 <= status < 300:
        return "错误回应什么也没生成，记 0"
    return "按回应的 usage.total_tokens；没有、读不出或超过上限时按上限估计"
