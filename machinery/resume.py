"""Resuming a loop: the lock that tells a live loop from a dead one, what a resume refuses, what the attempt in
flight left.

What it guarantees:
- `LoopLock`: every loop holds an OS lock for its whole life on `loop-runs/.held-<name in lower case>`, beside its
  folder (Windows cannot rename a folder holding an open file), taken before its claim folder is renamed to its
  name, so no loop folder stands with its loop running and its lock free. msvcrt.locking on Windows, fcntl.flock
  elsewhere: the system releases it when the process ends however it ends (kill -9, the task manager), so a record
  left `running` whose lock is free was left by a loop killed outright. Where neither exists, the file itself is the
  lock: made exclusively, holding the process id, taken over only once that process is gone (two take-overs at the
  very same instant are not told apart there: a stated limit). The file stays when the lock is released.
- `open_loop()`: before a resume touches anything, in this order, each refusal a `Refused` with the reason in Chinese
  (the command exits 2, nothing is written): the loop folder exists (any case); its lock is free (the loop is not live,
  not being resumed; a lock file that cannot be opened, say a folder in its place, is a refusal too); its record is
  of today's schema (an older one is refused: it cannot carry segments), of its own
  folder, of a scripted scenario (a model loop's proposals live in its process) and stopped `interrupted` or left
  `running` (every other stop is final); verify_loop.py, run as a process of its own (so nothing
  of the verifier runs in the loop's process), finds nothing `fail`; the watched files are those of the record.
- `found()`: what the attempt in flight left: no child folder, a partial child (no finished run.json), or a complete
  child (its finished record).

Shared: cli.py (strict, capped record reading, paths shown to a person, the command line). The schema, the watched
files and how they are hashed are the loop's, handed in. Nothing here imports loop_lab.py.
"""
import json
import os
import sys
from pathlib import Path

import cli
from machinery import arguments, progress

RESUMABLE = ("interrupted", "running")
MOST_READ, MOST_NAMED = 200, 5  # an unknown name: the records read, and the resumable loops named, at most
UNKNOWN_WHY = "续跑时判断：这次尝试的结果不知道（没有做完的子运行），计一次尝试，没有反馈：用新的子运行继续"
FINISHED_CHILD = ("needs_review", "failed", "needs_human")  # a child run.json that is no longer running
RECORD_CAP = 1 << 20  # an honest loop.json or run.json is a few KiB
VERIFIER_SECONDS = 120  # one loop's check takes a fraction of a second; a hung one is refused, not waited for


class Refused(Exception):
    """A resume that cannot go on; str() is the reason in Chinese, with the next step."""


class LoopLock:
    """The lock a loop holds for its whole life on FOLDER's lock file (`.held-<name>` beside it)."""

    def __init__(self, folder):
        self.path = Path(folder).parent / f".held-{Path(folder).name.lower()}"
        self.descriptor, self.created = None, False

    def acquire(self):
        """True once held; False when another process (or another lock in this one) holds it."""
        kind = locking()
        if kind is None:
            return self.acquire_file()
        try:
            self.descriptor, self.created = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666), True
        except FileExistsError:
            self.descriptor = os.open(self.path, os.O_RDWR)
        try:
            if kind == "msvcrt":
                import msvcrt
                msvcrt.locking(self.descriptor, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl
                fcntl.flock(self.descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:  # held elsewhere
            os.close(self.descriptor)
            self.descriptor = None
            return False

    def acquire_file(self):
        """Where the system has no file locks: the file made exclusively, holding this process's id."""
        for _ in range(2):
            try:
                descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                if holder_alive(self.path):
                    return False
                forget(self.path)  # left by a process that is gone
                continue
            os.write(descriptor, str(os.getpid()).encode("ascii"))
            os.close(descriptor)
            self.descriptor, self.created = "file", True
            return True
        return False

    def release(self, undo=False):
        """Lets the lock go (the file stays, unless UNDO and this lock made it: a refusal leaves nothing)."""
        if self.descriptor == "file":
            forget(self.path)
        elif self.descriptor is not None:
            os.close(self.descriptor)  # the system lock goes with the descriptor
            if undo and self.created:
                forget(self.path)
        self.descriptor = None


def locking():
    """How this system locks a file: "msvcrt" (Windows), "fcntl" (POSIX), or None (the file is the lock)."""
    for kind in ("msvcrt", "fcntl"):
        try:
            __import__(kind)
            return kind
        except ImportError:
            continue
    return None


def holder_alive(path):
    """Whether the process whose id the lock file PATH holds is still there (a file just made, not yet holding
    its id, counts as held; on a system that cannot tell, the holder is taken to be alive)."""
    try:
        text = Path(path).read_text(encoding="ascii").strip()
        age = os.stat(path).st_mtime
    except (OSError, ValueError):
        return False
    if not text.isdigit():
        import time
        return time.time() - age < cli.STALE_LOCK_SECONDS
    if int(text) == os.getpid():
        return True
    if os.name != "posix":  # os.kill(pid, 0) ends a process on Windows: never ask it there
        return True
    try:
        os.kill(int(text), 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process: it is there
        return True
    return True


def forget(path):
    try:
        os.unlink(path)
    except OSError:  # taken over or removed meanwhile
        pass


# --- what a resume checks before it touches anything ----------------------------------------------------------

def open_loop(root, name, schema, current_files):
    """(loop folder, its record, its LoopLock held) of the loop NAME (any case) under ROOT/loop-runs, once every
    check of the module docstring has passed; Refused otherwise, with the lock let go. SCHEMA is today's record
    schema; CURRENT_FILES() the fingerprint entries of the watched files as they are now."""
    folder = loop_folder(Path(root), name, schema)
    lock = LoopLock(folder)
    try:
        acquired = lock.acquire()
    except OSError as exc:  # a folder in its place, no permission: nothing is touched, the file is named
        error = type(exc).__name__
        raise Refused(f"{cli.display_path(lock.path)} 打不开（{cli.gloss(error)}（{error}））：没有这个循环的锁，就分不清它"
                      "是否还在运行，不能续跑。请把它恢复成一个普通文件（或移走它）后再续跑。") from None
    if not acquired:
        raise Refused(f"{cli.display_path(folder)} 的循环还在运行，或正被另一个 --resume 续跑（它的锁 "
                      f"{cli.display_path(lock.path)} 被占着）：同一个循环只能有一个进程在做。等它结束后再看它停在哪里。")
    try:
        record = read_record(folder, schema)
        verdict = verifier_problems(Path(root), folder)
        changed = changed_files(record, current_files())
        if changed:
            raise Refused(f"循环开始后这些受监视的文件变了：{'、'.join(changed)}。续跑要用记录里的那一版代码和规则，"
                          "不能续跑：请弄清是谁、为什么改了它们，误改的恢复为课程原样后再续跑，或用新名称重新运行。")
        if verdict:
            shown = "".join(f"\n  - {cli.visible(problem)}" for problem in verdict)
            raise Refused(f"verify_loop.py 核对 {cli.display_path(folder)} 没有通过，不能续跑：{shown}\n"
                          "记录与证据对不上时，续跑只会把错接着做下去：请用新名称重新运行，本记录保持不动。")
    except BaseException:
        lock.release(undo=True)
        raise
    return folder, record, lock


def loop_folder(root, name, schema):
    """ROOT/loop-runs/<NAME in the case it has on disk>; Refused when there is none (naming those that could be resumed:
    records of SCHEMA)."""
    try:
        entries = sorted(os.listdir(root / "loop-runs"))
    except OSError:
        entries = []
    same = next((entry for entry in entries if entry.lower() == name.lower() and not entry.startswith(".")), None)
    if same is None:
        found, here = resumable(root, entries, schema), "这里没有可以续跑的循环"
        if found:  # a mistyped name: the ones it may have meant
            more = f" 等 {len(found)} 个" if len(found) > MOST_NAMED else ""
            here = f"这里可以续跑的是：{'、'.join(found[:MOST_NAMED])}{more}"
        raise Refused(cli.visible(f"{cli.display_path(root / 'loop-runs' / name)} 不存在：没有名为 {name} 的循环可以续跑"
                                  f"（名称不区分大小写）；{here}。要开始新的循环："
                                  f"{cli.command(root / 'loop_lab.py', '--run', name)} --scenario 情景。"))
    return root / "loop-runs" / same


def resumable(root, entries, schema):
    """The loops of ROOT/loop-runs (ENTRIES, sorted) whose record a resume could continue (read_record; the checks of
    evidence and files come when one is named). At most MOST_READ records are read."""
    found = []
    for entry in [entry for entry in entries if not entry.startswith(".")][:MOST_READ]:
        try:
            read_record(root / "loop-runs" / entry, schema)
        except Refused:
            continue
        found.append(entry)
    return found


def read_record(folder, schema):
    """The record of FOLDER when a resume may continue it; Refused for one that is unreadable, older, or finished."""
    where = cli.display_path(folder / "loop.json")
    try:
        record = cli.loads_record(cli.read_evidence(folder / "loop.json", RECORD_CAP))
    except (OSError, ValueError) as exc:
        raise Refused(f"{where} 读不出（{exc}）：没有一份完好的记录，就无从核对发生过什么，不能续跑。"
                      "请用 verify_loop.py 核对它，再用新名称重新运行。") from None
    if type(record) is not dict or type(record.get("status")) is not str or record.get("schema") != schema:
        version = record.get("schema") if type(record) is dict else None
        older = type(version) is str and version.startswith("loop-run/") and version != schema
        raise Refused(f"{where} 的 schema 是 {cli.visible(json.dumps(version, ensure_ascii=False))}："
                      + ("由旧版本的工作区生成，那时的记录还不能分段记下续跑，" if older else f"不是 {schema} 的记录，")
                      + "不能续跑。请在现在的工作区里用新名称重新运行。")
    if record.get("run") != folder.name:  # a copy beside its original (cloud sync), or a record moved in
        raise Refused(cli.visible(f"{where} 记的循环是 {json.dumps(record.get('run'), ensure_ascii=False)}，不是目录名 "
                                  f"{folder.name}：这是别的循环的记录（或它的副本），不能在这里续跑。"))
    if record.get("scenario") == arguments.MODEL_SCENARIO:
        raise Refused(f"{where} 是 {arguments.MODEL_SCENARIO} 情景的循环：它的提议来自原来那个进程里的开发模型会话和本机服务，"
                      "续跑给不出、也记不下同样的提议，不能续跑。请用新名称重新运行。")
    if record["status"] not in RESUMABLE:
        stop = f"{record['status']}/{record.get('reason')}"
        error = f"（error_type {record['error_type']}）" if type(record.get("error_type")) is str else ""
        person = "需要人来决定，" if record["status"] == "needs_human" else ""
        raise Refused(cli.visible(f"{where} 已经停在 {stop}{error}：为正确的原因停下的循环不会被撤销，{person}"
                                  "只有被中断（interrupted）或进程被强行结束（仍是 running）的循环才能续跑。"
                                  "要再做一次，请用新名称重新运行。"))
    return record


def verifier_problems(root, folder):
    """What verify_loop.py (a process of its own) finds `fail` in FOLDER's record: [] when nothing fails."""
    import subprocess
    program = [sys.executable, "-S", str(root / "verify_loop.py"), str(folder)]
    try:
        done = subprocess.run(program, capture_output=True, timeout=VERIFIER_SECONDS,
                              env=dict(os.environ, PYTHONIOENCODING="utf-8"))
        line = json.loads(done.stdout.decode("utf-8").splitlines()[0])
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        raise Refused(f"没能用 {cli.display_path(root / 'verify_loop.py')} 核对 {cli.display_path(folder)}"
                      "（它没有给出结果）：续跑之前必须先核对记录，不能续跑。") from None
    return (line.get("problems") or ["（没有说明）"]) if line.get("result") == "fail" else []


def changed_files(record, current):
    """The watched files whose hash differs from the record's first fingerprint (CURRENT: path -> hash now)."""
    context = record.get("context")
    recorded = context.get("entries") if type(context) is dict else None
    if type(recorded) is not dict:
        return sorted(current)
    return [rel + ("（已不存在）" if current.get(rel) == "missing" else "")
            for rel in sorted(set(recorded) | set(current)) if recorded.get(rel) != current.get(rel)]


def resumed(new_loop, root, name, schema, fingerprint, **options):
    """The loop (NEW_LOOP's, with OPTIONS) resuming the loop NAME of ROOT, its scenario and budgets the record's,
    once open_loop()'s checks passed (FINGERPRINT(): the watched files now); Refused otherwise, nothing written."""
    folder, record, lock = open_loop(root, name, schema, lambda: fingerprint()["entries"])
    try:
        budget = [record["budget"][key] for key in ("max_attempts", "max_seconds", "attempt_timeout")]
        return new_loop(root, folder.name, record["scenario"], *budget, resumed=(record, lock), **options)
    except BaseException:
        lock.release()
        raise


# --- the resume's segment and its judgement ------------------------------------------------------------------

def next_segment(record, wall, wall_time):
    """Opens RECORD's next segment at a resume: its clock's origin read at WALL (the calendar clock, read with it;
    WALL_TIME formats it); returns its started_offset, the monotonic time of the segments before (they add up).

    The segment before says how it ended: `interrupted`'s reason, or `killed` when the record was left `running`
    (its elapsed_seconds, the last reading it recorded, is then a lower bound). The new one says how many attempts the
    record held (`after_attempt`) and the wall-clock gap since the last reading (`gap_seconds`, possibly negative):
    recorded, never counted. A record killed before its first reading gets the segment it ran in, of 0 s."""
    segments = record["segments"]
    killed = record["status"] == "running"
    if not segments:
        import calendar
        import time
        origin = calendar.timegm(time.strptime(record["started_at"], "%Y-%m-%dT%H:%M:%SZ"))
        segments.append({"started_at": record["started_at"], "started_offset": 0, "wall_minus_monotonic": origin,
                         "elapsed_seconds": 0})
    before = segments[-1]
    before.update(ended="killed" if killed else record["reason"], lower_bound=killed)
    base = round(before["started_offset"] + before["elapsed_seconds"], 3)
    minus = round(wall - base, 3)
    segments.append({"started_at": wall_time(wall), "started_offset": base, "wall_minus_monotonic": minus,
                     "elapsed_seconds": 0, "after_attempt": len(record["attempts"]),
                     "gap_seconds": round(minus - before["wall_minus_monotonic"], 3)})
    record.update(status="running", reason=None, error_type=None, handoff=None, elapsed_seconds=base,
                  finished_at=None)
    return base


class Resuming:
    """The resume's step before round N+1, mixed into loop_lab.py's OuterLoop (whose record, clocks, independent
    check, ordinary decision and records it uses): the attempt in flight when the loop stopped, and only it, is judged
    once from what it left, that judgement written with it in one record (docs/loop/TASK.md「续跑」)."""

    def open_segment(self):
        """The origin of the resume's monotonic clock, read with the wall clock: a new segment, its offsets continuing
        the segments before (BASE); written with the judgement carry_on() makes."""
        self.claimed, self.start, wall = True, self.clock(), self.wall()
        self.base = next_segment(self.record, wall, self.wall_time)

    def carry_on(self):
        """The judgement; a Stop when the record's last decision, or the one made now, is a stop."""
        last = self.attempts[-1] if self.attempts else None
        progress.say_resumed(self.record, self.max_attempts)
        if last is None or last["decision"] is not None:
            self.save()
            return self.decided_stop(last) if last and last["decision"]["next"] == "stop" else None
        what, child = found(self.root, last)
        last["resume"] = {"found": what if last["state"] in ("running", "unknown") else "finished_undecided",
                          "run_status": child and child.get("status"), "segment": len(self.record["segments"])}
        progress.say_judged(last, self.root)
        if last["resume"]["found"] in ("no_child", "partial_child"):
            last["state"] = "unknown"  # it counts, gives no feedback, and its folder is never used again
            self.write_decision(last, None, ("outcome_unknown", UNKNOWN_WHY))
            return None
        if last["resume"]["found"] == "complete_child":  # adopted: it ran to its end in the segment before
            self.finish_attempt(last, child, (self.base, child["finished_at"]))
        stop = self.timeout_stop(last) if last["state"] == "timed_out" else self.decided(last)
        self.write_decision(last, stop)
        return stop

    def decided(self, attempt):
        """The ordinary decision after ATTEMPT, made on its child's independent check."""
        return self.decide(attempt, self.check_child(self.root / attempt["child_run"]))

    def decided_stop(self, attempt):
        """The Stop a recorded stop decision made, again, for the final record: no attempt is started."""
        if attempt["decision"]["reason"] == "attempt_timeout":
            return self.timeout_stop(attempt)
        return self.decided(attempt) or self.child_needs_human(attempt)


# --- what the attempt in flight left -------------------------------------------------------------------------

def found(root, attempt):
    """(what ATTEMPT's child folder holds, its run.json record or None): "no_child" (no folder), "partial_child"
    (no finished run.json in it) or "complete_child" (a run.json that is no longer running)."""
    child = Path(root) / attempt["child_run"]
    if not os.path.lexists(child):
        return "no_child", None
    try:
        record = cli.loads_record(cli.read_evidence(child / "run.json", RECORD_CAP))
    except (OSError, ValueError):
        return "partial_child", None
    if type(record) is dict and record.get("status") in FINISHED_CHILD:
        return "complete_child", record
    return "partial_child", record if type(record) is dict else None
