"""The executor: one task in a process of its own, ended at its time limit.

What it guarantees, for `run_in_own_process(task, arguments, seconds, run_dir)`:
- Ended within S + grace: the child is started, waited for at most S (SECONDS) in short steps, then asked to
  end (SIGTERM to its whole process group on POSIX, Popen.terminate on Windows) and killed GRACE_SECONDS
  later if anything of it is left (SIGKILL / Popen.kill); the call returns only once the child has exited.
- No orphan: the child leads a process group (POSIX: a session) of its own, so what it started ends with
  it; it holds the read end of a pipe whose other end only the caller holds, and ends itself the moment that
  pipe closes, so it dies with the caller however the caller ends (SIGKILL and the task manager included).
  Ctrl-C or termination of the caller ends the child first (with those signals held), then goes on.
- Inventory after the kill: when the child had to be ended, AttemptTimedOut says what it left in RUN_DIR
  (does the folder exist, the status in its run.json, its files), looked at only after it has exited. A child
  that finished its run.json during the grace counts as finished: its record is returned.
- The child's exception is raised again here as the nearest built-in kind, its own type name kept in
  `error_type`; a child that ended without a result is a ChildProcessError.

It is told what to run: TASK names a function as "module:function" (imported in the child from the
folder holding this package, so its bytecode cache serves) and ARGUMENTS are its JSON arguments; the
function returns the run's record. Nothing of the loop is imported here. Shared: cli.py (reading a
run.json strictly, the exit code of an interrupt).
"""
import json
import os
import sys
import time
from pathlib import Path

import cli
from machinery import interrupts

GRACE_SECONDS = 0.5  # a child asked to end may still end by itself this long; then it is killed
CODE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # holds machinery/ and the tasks
# The child's program: this module, imported where it lies, then the task.
CHILD_PROGRAM = ("import sys; sys.path.insert(0, sys.argv[1]); from machinery import executor; "
                 "executor.in_child(*sys.argv[2:])")


class AttemptTimedOut(Exception):
    """The executor ended a task at its limit of SECONDS after WAITED seconds; LEFT: what the child left."""

    def __init__(self, seconds, waited, left):
        super().__init__(f"超过单次时限 {seconds:g} 秒")
        self.seconds, self.waited, self.left = seconds, waited, left


def own_group():
    """Popen options: on POSIX the child leads a session of its own, so its whole process group can be
    ended and a Ctrl-C typed at the terminal reaches only the caller; on Windows a process group of its
    own, outside Ctrl-C."""
    import subprocess
    return ({"start_new_session": True} if os.name == "posix"
            else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)})


def run_in_own_process(task, arguments, seconds, run_dir):
    """TASK(*ARGUMENTS) in a child process: its run.json record, the child's exception raised again here,
    or AttemptTimedOut when it had to be ended SECONDS after it started (see the module docstring)."""
    import subprocess  # here, not at the top: a caller that never starts a child pays nothing for it
    lifeline, lifeline_end = os.pipe()
    try:
        try:
            program = [sys.executable, "-S", "-c", CHILD_PROGRAM, CODE_FOLDER, task, json.dumps(arguments)]
            child = subprocess.Popen(program, stdin=lifeline, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     **own_group())
        finally:
            os.close(lifeline)
        return outcome(child, seconds, Path(run_dir))
    finally:
        os.close(lifeline_end)  # the child has ended by now


def outcome(child, seconds, run_dir):
    """Waits for CHILD at most SECONDS, ends it if need be; what it finished (see run_in_own_process)."""
    started = time.monotonic()
    try:
        output = output_by(child, started + seconds)
    except BaseException:  # Ctrl-C or termination of the caller: the child goes first
        with interrupts.held():
            end_process(child)
        raise
    waited = None if output else time.monotonic() - started
    out, err = output or end_process(child)
    record = finished_record(out, run_dir)  # a child that finished during the grace counts as finished
    if record is not None:
        return record
    if waited is not None:
        raise AttemptTimedOut(seconds, waited, left_behind(run_dir))
    last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["没有输出"]
    raise ChildProcessError(f"执行尝试的子进程以退出码 {child.returncode} 结束，没有留下结果（{last[0]}）")


def output_by(child, deadline):
    """CHILD's (stdout, stderr) once it has ended by DEADLINE (a time.monotonic() reading), else None.

    Waits in short steps: on Windows a long wait cannot be interrupted, and Ctrl-C must not wait for it.
    """
    import subprocess
    while True:
        try:
            return child.communicate(timeout=max(0, min(0.1, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:  # the output read so far is kept for the next call
            if time.monotonic() >= deadline:
                return None


def end_process(child):
    """Asks CHILD (and any process it started) to end, kills what is left after GRACE_SECONDS;
    returns its (stdout, stderr)."""
    import subprocess
    signal_group(child, "SIGTERM")
    try:
        out, err = child.communicate(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        out = err = None
    signal_group(child, "SIGKILL")  # the child if still there, and whatever it started in its group
    if out is None:
        out, err = child.communicate()
    return out, err


def signal_group(child, name):
    """SIGTERM / SIGKILL to the child's process group where there are groups; Popen.terminate / kill otherwise."""
    if hasattr(os, "killpg"):
        import signal
        try:
            os.killpg(child.pid, getattr(signal, name))
            return
        except ProcessLookupError:  # nobody is left in the group
            return
        except OSError:  # not allowed: end at least the child itself
            pass
    if child.poll() is None:
        child.terminate() if name == "SIGTERM" else child.kill()


def finished_record(out, run_dir):
    """The child's finished run.json record (from its result line, or from disk when it was ended just
    after writing it), the child's exception raised again, or None when it finished nothing."""
    lines = (out or b"").decode("utf-8", "replace").strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        raise exception_from_child(answer["error"])
    if isinstance(answer, dict) and isinstance(answer.get("record"), dict):
        return answer["record"]
    record = read_run_record(run_dir)
    return record if record and record.get("status") not in (None, "running") else None


def read_run_record(run_dir):
    try:
        record = cli.read_json(run_dir / "run.json")
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def left_behind(run_dir):
    """What an ended child left (`timeout.inventory`): does its folder exist, its run.json status, its files."""
    if not run_dir.is_dir():
        return {"exists": False, "run_status": None, "files": []}
    files = sorted(os.path.relpath(os.path.join(folder, name), run_dir).replace(os.sep, "/")
                   for folder, _, names in os.walk(run_dir) for name in names)
    record = read_run_record(run_dir)
    return {"exists": True, "run_status": record.get("status") if record else None, "files": files[:50]}


# --- in the child process -----------------------------------------------------------------------------

def in_child(task, arguments):
    """The child process: TASK ("module:function") called with the JSON ARGUMENTS; its record, or its
    exception, as one ASCII JSON line on stdout."""
    end_with_the_caller()
    module, _, function = task.partition(":")
    try:
        import importlib
        answer = {"record": getattr(importlib.import_module(module), function)(*json.loads(arguments))}
    except Exception as exc:  # raised again in the caller as the same kind of error
        answer = {"error": described(exc)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def end_with_the_caller():
    """Ends this process the moment its caller is gone: the caller holds our stdin's other end, which closes
    when it exits in any way (SIGKILL and the task manager included), so no child outlives its caller."""
    import threading

    def watch():
        try:
            while os.read(0, 512):  # the raw descriptor: a buffered sys.stdin would block the interpreter's exit
                pass
        except OSError:
            pass
        os._exit(cli.EXIT_INTERRUPTED)

    threading.Thread(target=watch, daemon=True).start()


def described(exc):
    """EXC as the caller can raise it again: its name and message, the built-in classes it is (nearest
    first) and, for a file-system error, errno, strerror and filename."""
    import builtins
    return {"type": type(exc).__name__, "message": str(exc),
            "builtin": [kind.__name__ for kind in type(exc).__mro__
                        if issubclass(kind, BaseException) and getattr(builtins, kind.__name__, None) is kind],
            "errno": getattr(exc, "errno", None), "strerror": getattr(exc, "strerror", None),
            "filename": None if getattr(exc, "filename", None) is None else os.fsdecode(exc.filename)}


def exception_from_child(error):
    """The child's exception as the caller raises it: the nearest built-in class that can be rebuilt
    (cli.NameTaken arrives as a FileExistsError), the child's own type name kept as `error_type`."""
    import builtins
    for name in error.get("builtin", []):
        kind = getattr(builtins, name)
        try:
            exc = (kind(error["errno"], error["strerror"], error["filename"])
                   if issubclass(kind, OSError) and error.get("errno") is not None else kind(error["message"]))
        except TypeError:  # e.g. UnicodeDecodeError needs five arguments: its base class will do
            continue
        exc.error_type = error["type"]
        return exc
    return ChildProcessError(error.get("message"))
