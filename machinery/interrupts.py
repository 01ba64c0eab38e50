"""Ctrl-C and termination signals in the loop: when they are answered, held back or ignored.

What it guarantees: wherever Ctrl-C (or SIGTERM / SIGHUP, where the platform has them) lands, what is on
disk is a valid record of what happened.
- Before the loop's first record: the script noted the signal from its first line on (that guard stays at the
  top of loop_lab.py, since it must hold while the script's own imports run); `answer_from_now_on()` raises it
  as soon as the loop can answer, with nothing created yet.
- While a block runs under `held()` (the claim of a name, the executor ending its child) the signal waits
  until the block is done: the disk never holds half of it.
- Everywhere else the signal is raised at once, as KeyboardInterrupt (Ctrl-C) or cli.Terminated, and the loop
  writes its record as `interrupted`.
- From the moment the final record is being written (`settle()`), signals are ignored: the record, the
  printed line and the exit code tell one outcome. A signal that landed just before is still raised first.

Shared: cli.Terminated (the one exception for termination). Nothing here knows the loop that uses it.
"""
import signal

import cli

HELD = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def as_exception(number):
    """The exception a signal stands for: KeyboardInterrupt for Ctrl-C, cli.Terminated otherwise."""
    return KeyboardInterrupt() if number == signal.SIGINT else cli.Terminated(signal.Signals(number).name)


def reason(exc):
    """The record's reason for an interrupt EXC: `terminated` for a termination signal, else `keyboard_interrupt`."""
    return "terminated" if isinstance(exc, cli.Terminated) else "keyboard_interrupt"


def not_started(why):
    """The line printed when the loop is interrupted (WHY: the reason) before its first record."""
    return {"status": "interrupted", "reason": why, "semantic_review": "pending", "attempts": 0, "actual_api_calls": 0}


def answer_from_now_on(before_start, noting, noted):
    """Ctrl-C and termination raise from here on; the first one NOTED while the script was starting, now.

    BEFORE_START maps each signal to the handler it had before the script's NOTING handler replaced it.
    A signal whose handler cli.run() has installed meanwhile (termination) keeps that handler.
    """
    for number, handler in before_start.items():
        if signal.getsignal(number) is noting:
            signal.signal(number, handler)
    if noted:
        raise as_exception(noted[0])


class held:
    """Ctrl-C and termination wait until the block is done, then are raised as usual.

    A block that fails reports its own exception; the signal that waited is dropped then, since the
    failure is already being handled as an interrupt or an error.
    """

    def __enter__(self):
        self.caught, self.previous = None, {}
        for number in HELD:
            if signal.getsignal(number) is None:  # a handler set outside Python could not be put back
                continue
            try:
                self.previous[number] = signal.signal(number, self.hold)
            except (ValueError, OSError):  # not the main thread: nothing can be held there
                pass
        return self

    def hold(self, number, frame):
        self.caught = self.caught or number

    def __exit__(self, *exc_info):
        for number, handler in self.previous.items():
            signal.signal(number, handler)
        if self.caught and exc_info[0] is None:
            raise as_exception(self.caught)
        return False


def settle(previous):
    """Ignores Ctrl-C and termination from now on, noting in PREVIOUS the handlers to put back.

    signal.signal() first raises a signal that has already landed, so one that came just before is
    still answered (and recorded) as usual.
    """
    for number in HELD:
        if number in previous or signal.getsignal(number) is None:
            continue
        try:
            previous[number] = signal.signal(number, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread: nothing can be ignored there
            pass


def restore(previous):
    """Puts back the handlers settle() replaced (for callers that go on after the loop)."""
    while previous:
        number, handler = previous.popitem()
        signal.signal(number, handler)
