"""Benchmark of the notes assistant's question records (ask --record): what recording costs per turn; not a test.

    python3 tests/bench_ask.py [--rounds N] [--dir DIR] [--baseline WORKSPACE]

Three figures, medians of interleaved runs (so machine load affects both sides alike):
- in one process, one question of 20 turns against the in-process mock (progress mode): without a recorder, and
  with one writing its record into a temporary copy of the workspace (in DIR if given, e.g. /dev/shm, to separate
  the program's own cost from a slow disk's: a record is synced to disk at its first and last write, renamed into
  place at the others). The difference per turn is recording's cost; target <= 5 ms (with --dir on a memory disk:
  a slow disk adds what its renames and syncs cost, measured 5-7 ms a turn on a VM's disk);
- as a learner runs it: `app.py ask --offline` (the demo model, 3 turns) without and with `--record NAME`, the
  difference per turn (each process also imports what recording needs);
- with --baseline WORKSPACE (another copy of the workspace, e.g. `git archive main`): the same 20-turn question
  without a recorder, run by that workspace's code and by this one's, in processes of their own. The ratio should
  be 1 (recording changes nothing when it is off); target <= 1.05.
Prints one JSON line with the figures, and on stderr each figure beside its target; exit 0 when every target is met.
"""
import sys  # noqa: E402 (the next three lines run on any Python: the workspace's cli.py refuses an old one)
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402,F401
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".git", "runs", "loop-runs", "ask-runs", "__pycache__", ".ci"}
TARGETS = {"record_ms_per_turn": 5.0, "app_record_ms_per_turn": 5.0, "unrecorded_vs_baseline": 1.05}
QUESTION = "RAG 的步骤顺序是什么？"
# One question of 20 turns against an in-process mock, timed ROUNDS times, by the workspace at argv[1]
# (its own client, loop and mock); prints the median seconds. Recording is not used: it may not exist there.
UNRECORDED = """
import statistics, sys, time
sys.path[:0] = [sys.argv[1] + "/project", sys.argv[1]]
from assistant.agent import run_question
from assistant.client import ChatClient
from mock_model import MockServer
mock = MockServer(0, "plain").start()
times = []
for n in range(int(sys.argv[2])):
    client = ChatClient(f"{mock.url}/mode/progress/s/b{n}", "test", sleep=lambda s: None)
    start = time.perf_counter()
    run_question(client, [], "RAG 的步骤顺序是什么？")
    times.append(time.perf_counter() - start)
mock.stop()
print(statistics.median(times))
"""


def copy_workspace(where):
    folder = Path(tempfile.mkdtemp(prefix="bench-ask-", dir=where)) / "lesson-14"
    shutil.copytree(ROOT, folder, ignore=lambda _, names: [name for name in names if name in SKIP])
    return folder


def in_process(workspace, rounds):
    """(median seconds of a 20-turn question without a recorder, with one, turns) in this process."""
    sys.path[:0] = [str(workspace / "project"), str(workspace)]
    from assistant.agent import Limits, run_question
    from assistant.client import ChatClient
    from assistant.record import RECORD_FILE, QuestionRecorder
    from mock_model import MockServer
    mock = MockServer(0, "plain").start()
    plain, recorded, turns = [], [], 0
    try:
        for n in range(rounds):
            for record in (False, True):
                client = ChatClient(f"{mock.url}/mode/progress/s/{'r' if record else 'p'}{n}", "test",
                                    sleep=lambda seconds: None)
                start = time.perf_counter()
                if record:
                    folder = workspace / "ask-runs" / f"bench-{n}"
                    folder.mkdir(parents=True)
                    recorder = QuestionRecorder(folder / RECORD_FILE, folder.name, QUESTION, client, Limits())
                    recorder.attach(client)
                    recorder.start()
                    outcome = run_question(client, [], QUESTION, on_event=recorder.listener())
                    recorder.finish(outcome)
                else:
                    outcome = run_question(client, [], QUESTION)
                (recorded if record else plain).append(time.perf_counter() - start)
                turns = outcome.turns
    finally:
        mock.stop()
    return statistics.median(plain), statistics.median(recorded), turns


def app_runs(workspace, rounds):
    """(median seconds of `app.py ask --offline` without --record, with it) as processes."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    env.pop("DEEPSEEK_API_KEY", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    base = [sys.executable, str(workspace / "project" / "app.py"), "ask", "--offline"]
    plain, recorded = [], []
    for n in range(rounds + 1):  # the first round fills the bytecode cache, as on a learner's machine
        for record in (False, True):
            command = base + (["--record", f"app-{n}"] if record else []) + [QUESTION]
            start = time.perf_counter()
            subprocess.run(command, cwd=workspace, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
            if n:
                (recorded if record else plain).append(time.perf_counter() - start)
    return statistics.median(plain), statistics.median(recorded)


def against_baseline(workspace, baseline, rounds):
    """(this workspace's median, the baseline's) for the 20-turn question without a recorder, interleaved."""
    mine, theirs = [], []
    for _ in range(3):
        for root, into in ((workspace, mine), (baseline, theirs)):
            out = subprocess.run([sys.executable, "-c", UNRECORDED, str(root), str(rounds)], capture_output=True,
                                 text=True, check=True)
            into.append(float(out.stdout))
    return statistics.median(mine), statistics.median(theirs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--dir", default=None, help="where the workspace copy (and so the records) goes")
    parser.add_argument("--baseline", default=None, help="another workspace to compare the unrecorded loop with")
    args = parser.parse_args()
    workspace = copy_workspace(args.dir)
    try:
        plain, recorded, turns = in_process(workspace, args.rounds)
        app_plain, app_recorded = app_runs(workspace, max(args.rounds // 2, 3))
        figures = {"question_s": round(plain, 4), "recorded_question_s": round(recorded, 4), "turns": turns,
                   "record_ms_per_turn": round((recorded - plain) / turns * 1000, 2),
                   "app_s": round(app_plain, 4), "app_recorded_s": round(app_recorded, 4),
                   "app_record_ms_per_turn": round((app_recorded - app_plain) / 3 * 1000, 2)}
        if args.baseline:
            mine, theirs = against_baseline(workspace, Path(args.baseline).resolve(), args.rounds)
            figures.update(unrecorded_s=round(mine, 4), baseline_s=round(theirs, 4),
                           unrecorded_vs_baseline=round(mine / theirs, 3))
    finally:
        shutil.rmtree(workspace.parent, ignore_errors=True)
    print(json.dumps(figures))
    met = True
    for key, target in TARGETS.items():
        if key in figures:
            ok = figures[key] <= target
            met = met and ok
            print(f"{key}: {figures[key]} (目标 <= {target}) {'达到' if ok else '没达到'}", file=sys.stderr)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
