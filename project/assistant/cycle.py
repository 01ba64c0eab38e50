"""The no-progress cycle detector: a round's signature, repeats of a block of rounds, the reminder text.

A round's signature is its ordered tool calls (name + canonical JSON arguments, sorted keys)
plus the sha256 of each result. `CycleDetector.add` records one round and returns the period p
(1..max_period) when the last repeats*p signatures are one block of p rounds repeated `repeats`
times (the stop); `CycleDetector.repeating(times)` says whether a block has been seen `times`
times already (the reminder, one repeat before the stop). Reading it never changes it. Shared
with: `agent` (stops with `no_progress`, adds the reminder).
"""
import hashlib
import json

from .history import REMINDER_PREFIX


def _canonical_arguments(arguments):
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(arguments)


def round_signature(calls, results) -> str:
    """A round's identity: ordered calls (name + canonical JSON arguments) + sha256 of each result.

    `calls` are tool-call dicts as sent by the model (or (name, arguments) pairs); `results`
    are (content, is_error) pairs or contents.
    """
    parts = []
    for call, result in zip(calls, results):
        name, arguments = ((call["function"]["name"], call["function"]["arguments"])
                           if isinstance(call, dict) else call)
        content = result[0] if isinstance(result, tuple) else result
        parts.append([name, _canonical_arguments(arguments), hashlib.sha256(str(content).encode("utf-8")).hexdigest()])
    return json.dumps(parts, ensure_ascii=False)


class CycleDetector:
    """Fires when the last repeats*p round signatures are one block of p rounds repeated, p <= max_period."""

    def __init__(self, repeats=3, max_period=5):
        self.repeats = repeats
        self.max_period = max_period
        self.signatures = []

    def add(self, signature):
        """Record one round; the period that fired, or None."""
        keep = self.repeats * self.max_period  # the longest window any period can need
        self.signatures = (self.signatures + [signature])[-keep:] if keep > 0 else []
        return self.repeating(self.repeats)

    def repeating(self, times):
        """The smallest period p whose block fills the last times*p rounds, or None."""
        for period in range(1, self.max_period + 1):
            window = self.signatures[-times * period:]
            if times > 0 and len(window) == times * period and window == window[-period:] * times:
                return period
        return None

    def reset(self):
        self.signatures = []

    def last_block_calls(self, period):
        """The (name, canonical arguments) of the calls in the last `period` rounds, in order."""
        return [(name, arguments) for signature in self.signatures[-period:]
                for name, arguments, _ in json.loads(signature)]

    def describe_block(self, period):
        return " → ".join(_describe_call(call) for call in self.last_block_calls(period))


def _describe_call(signature_call):
    name, arguments = signature_call
    return f"{name}({arguments if len(arguments) <= 60 else arguments[:57] + '...'})"


def reminder_text(detector, period, times) -> str:
    """The one user message sent after a block was seen `times` times (a new question never starts with it)."""
    return (f"{REMINDER_PREFIX}最近 {period * times} 轮在重复同样的工具调用，结果也完全一样："
            f"{detector.describe_block(period)}（已重复 {times} 次）。再重复一次，这个问题就会被停止。"
            "请换一个不同的步骤（例如换关键词、读另一篇笔记），或根据已有的结果直接回答。")
