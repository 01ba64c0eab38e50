"""The local development model: project/mock_model.py in script mode, a process the loop starts and always ends.

What it guarantees, for `LocalServer(root, script, log).start()`:
- It listens on 127.0.0.1 only, on a port the system picks (port 0), and replays SCRIPT (a developer model in the
  mock's script format, e.g. samples/models/developer.json); every request it receives is one line of LOG, the
  server's own evidence (loop-runs/NAME/server-log.jsonl), written before it answers.
- It never outlives the loop: it holds the read end of a pipe whose other end only the loop holds and stops the
  moment that pipe closes (`mock_model.py --stop-when-stdin-closes`), so also when the loop is killed outright.
  `close()` closes the pipe, waits for the server to end, and kills it if it has not ended within GRACE_SECONDS.
- Like an attempt's process (machinery/executor.py), it is outside the terminal's Ctrl-C: the loop is interrupted,
  records that, and ends the server itself.
`ServerNotStarted` (Chinese) says why it could not start. Shared: machinery/executor.py's process-group options.
"""
import os
import subprocess
import sys
import tempfile
import threading

from machinery.executor import own_group

START_SECONDS = 10.0  # a Python starting and binding a port takes well under a second; a stuck one is refused
GRACE_SECONDS = 2.0
SERVER_MAX_SECONDS = 3600  # the mock's own clock, should the pipe somehow stay open


class ServerNotStarted(RuntimeError):
    """The local model server could not start: the message says why, in Chinese."""


class LocalServer:
    """The mock for one loop: `start()` gives its base URL, `close()` ends it (safe to call more than once)."""

    def __init__(self, root, script, log):
        self.program = [sys.executable, "-S", str(root / "project" / "mock_model.py"), "--mode", "script",
                        "--script", str(script), "--port", "0", "--log", str(log),
                        "--max-seconds", str(SERVER_MAX_SECONDS), "--stop-when-stdin-closes"]
        self.process = self.lifeline = self.url = None

    def start(self):
        lifeline, self.lifeline = os.pipe()
        said = tempfile.TemporaryFile()  # its stderr: read only if it fails, never a pipe nobody drains
        try:
            self.process = subprocess.Popen(self.program, stdin=lifeline, stdout=subprocess.PIPE, stderr=said,
                                            **own_group())
        except OSError as exc:
            self.close()
            raise ServerNotStarted(f"无法启动本机的开发模型（{exc.strerror or type(exc).__name__}）") from None
        finally:
            os.close(lifeline)
        line = self.first_line()
        if not line.startswith("http://127.0.0.1:"):
            self.close()
            raise ServerNotStarted(f"本机的开发模型没有启动（{why_not(said)}）")
        said.close()
        self.url = line
        return line

    def first_line(self):
        """The URL the server prints first, or "" when it ends or says nothing within START_SECONDS."""
        found = []
        reader = threading.Thread(target=lambda: found.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_SECONDS)
        return found[0].decode("ascii", "replace").strip() if found else ""

    def close(self):
        """Closes the pipe (the server stops by itself), waits for it, kills it if it is still there."""
        if self.lifeline is not None:
            os.close(self.lifeline)
            self.lifeline = None
        if self.process is None:
            return
        try:
            self.process.wait(GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.process = None


def why_not(said):
    """The server's own last words (its stderr file SAID), without the usage lines argparse adds around them."""
    said.seek(0)
    lines = [line.strip() for line in said.read().decode("utf-8", "replace").splitlines()
             if line.strip() and not line.startswith(("用法", " ", "用 --help"))]
    said.close()
    return lines[-1] if lines else "没有输出"
