"""A clock the client and an in-process mock both read, where the client's waits before a retry pass at once.

check_loop_guards.py and check_stop_corpus.py drive many questions against the mock in a few seconds: the
client's sleeps are skipped, and the time they would have taken is added to this clock instead, so the
question's record (its offsets) and the server's log (its times) still show every wait as waited, as on a
learner's machine. `SkippedWaits.now` is the clock, `SkippedWaits.sleep` the client's sleep; `waits` lists them.
"""
import threading
import time


class SkippedWaits:
    def __init__(self):
        self.skipped, self.waits = 0.0, []
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() + self.skipped

    def sleep(self, seconds):
        with self._lock:
            self.waits.append(seconds)
            self.skipped += max(seconds, 0.0)
