"""The project's own mutation check: does some test notice when a promise's line is broken? Not a test.

    python3 tests/mutation.py [ID ...] [--file FILE] [--list] [--verbose] [--workers N] [--timeout S]

Each mutant of tests/mutants.py is one small, realistic bug planted on a line that carries a promise of
the lesson (a dropped condition, `>` for `>=`, a wrong constant, a skipped call, a swapped order). For each
one the workspace is copied to a temporary folder (without .git, runs/, loop-runs/ and caches), the
mutant's original snippet is replaced there, and the test modules that should catch it run in that copy
(`python3 -m unittest MODULES`). Failing tests kill the mutant; so does a run that outlives --timeout
(a hang: said as such). A mutant whose tests all pass survives, and is printed with the promise it breaks.
Before any mutant, the same modules run once on the unchanged copy: they must pass there, or no result
would mean anything.

A snippet must occur exactly once in its file. One that is missing or occurs more than once (the code
moved on since the list was written) is an anchor problem, its own category, named with the mutant's id
and file: never run, never counted as killed. Equivalent mutants (the entry says why) are listed, not run,
and left out of the score. Progress, the summary and the --list go to stderr in Chinese; stdout gets one
JSON line with the figures. Exit 0 when at least 90% of the mutants run are killed and no anchor is
missing, else 1; 2 for bad arguments; 130 on Ctrl-C (the tests running then are ended, and none starts).
Each run of tests has a process group of its own and ends with everything it started: the group, and on Linux
also what left the group for a session of its own (found by a mark in its environment), so no server or child
of a mutant's tests outlives them; where there are no groups (Windows) the test process itself, as the loop
does (machinery/executor.py). Standard library only; not collected by `python3 -m unittest` (its name is no
test*.py); not part of CI (it takes minutes).
"""
import sys  # noqa: E402 (the next three lines run on any Python: the workspace's cli.py refuses an old one)
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402,F401
import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from cli import use_safe_console  # noqa: E402  (the workspace's console plumbing)
from machinery.executor import own_group, signal_group  # noqa: E402  (the loop's process groups)
from tests.mutants import MUTANTS  # noqa: E402  (the data: one entry per mutant)

SKIP = {".git", "runs", "loop-runs", "__pycache__"}
TARGET = 0.9  # the share of non-equivalent mutants that must be killed
# a memory-backed folder where there is one: a copy of the workspace takes milliseconds there
TEMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
SAID = threading.Lock()
MARK = "LESSON_MUTATION_RUN"  # in the environment of every process a run of tests starts: how end_run finds them
RUNNING = {}  # the test processes running now, with their runs' marks: ended with what they started on Ctrl-C
STARTING = threading.Lock()  # held while a run starts and while Ctrl-C takes the list of runs to end
STOPPED = threading.Event()  # set on Ctrl-C: no run starts after it


def say(text):
    with SAID:
        print(text, file=sys.stderr, flush=True)


def anchor_problem(mutant):
    """Why MUTANT cannot be applied to today's code (Chinese, naming its id and file), or None."""
    path = ROOT / mutant["file"]
    try:
        count = path.read_text(encoding="utf-8").count(mutant["original"])
    except OSError:
        return f"{mutant['id']}：文件 {mutant['file']} 不存在"
    if count != 1:
        found = "找不到" if count == 0 else f"出现了 {count} 次（必须恰好一次）"
        return f"{mutant['id']}：{mutant['file']} 里{found}原文片段 {mutant['original'][:60]!r}"
    missing = [name for name in mutant["tests"] if not (ROOT / (name.replace(".", "/") + ".py")).is_file()]
    if missing:
        return f"{mutant['id']}：测试模块 {'、'.join(missing)} 不存在"
    return None


def copy_workspace(into):
    shutil.copytree(ROOT, into, ignore=lambda folder, names: [n for n in names if n in SKIP or n.endswith(".pyc")])


def run_tests(folder, modules, timeout):
    """("passed" | "failed" | "timeout" | "stopped", seconds, what the tests printed on stderr) in the copy FOLDER.

    The tests run in a process group of their own (machinery/executor.py's options), ended with everything they
    started when they finish, time out or are interrupted (end_run). After a Ctrl-C no run starts: "stopped".
    """
    mark = secrets.token_hex(8)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8", **{MARK: mark})
    env.pop("DEEPSEEK_API_KEY", None)
    started = time.monotonic()
    with tempfile.TemporaryFile() as said:  # not a pipe: a process the tests leave would hold it open past them
        with STARTING:  # a run is either refused after a Ctrl-C or known to the Ctrl-C that ends it
            if STOPPED.is_set():
                return "stopped", 0.0, []
            child = subprocess.Popen([sys.executable, "-m", "unittest", *modules], cwd=folder, env=env,
                                     stdout=subprocess.DEVNULL, stderr=said, **own_group())
            RUNNING[child] = mark
        try:
            outcome = "passed" if child.wait(timeout=timeout) == 0 else "failed"
        except subprocess.TimeoutExpired:
            outcome = "timeout"
        finally:
            end_run(child, mark)
            RUNNING.pop(child, None)
        said.seek(0)
        err = said.read()
    return ("stopped" if STOPPED.is_set() else outcome), time.monotonic() - started, \
        err.decode("utf-8", "replace").strip().splitlines()


def end_run(child, mark):
    """Ends CHILD's process group (the child alone where there are no groups, as machinery/executor.py does), then
    every process still carrying MARK in its environment: one that left the group for a session of its own (the
    loop's attempts and its model server do, a mutant may keep them alive) still does, and Linux shows it in /proc."""
    signal_group(child, "SIGKILL")
    child.wait()
    for _ in range(3):  # one ended between two looks may have started another
        left = marked(mark)
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if not left:
            return


def marked(mark):
    """The ids of the processes whose environment holds MARK=mark (none where there is no /proc to read it)."""
    wanted, found = f"{MARK}={mark}".encode("ascii") + b"\0", []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    with open(f"/proc/{entry.name}/environ", "rb") as environ:
                        if wanted in environ.read() + b"\0":
                            found.append(int(entry.name))
    return found


def stop_all():
    """Ctrl-C: no run starts any more, and every run going now is ended with what it started."""
    with STARTING:
        STOPPED.set()
        running = list(RUNNING.items())
    for child, mark in running:
        end_run(child, mark)


def try_mutant(mutant, timeout):
    """(outcome, seconds, the tests that failed): the mutant applied in a fresh copy, its tests run there."""
    with tempfile.TemporaryDirectory(prefix="mutant-", dir=TEMP) as scratch:
        folder = Path(scratch) / "workspace"
        copy_workspace(folder)
        path = folder / mutant["file"]
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(mutant["original"], mutant["replacement"], 1), encoding="utf-8")
        outcome, seconds, said = run_tests(folder, mutant["tests"], timeout)
    return outcome, seconds, [line for line in said if line.startswith(("FAIL: ", "ERROR: "))]


def baseline(modules, timeout):
    """The modules on the unchanged copy: (passed, seconds, last lines)."""
    with tempfile.TemporaryDirectory(prefix="mutant-base-", dir=TEMP) as scratch:
        folder = Path(scratch) / "workspace"
        copy_workspace(folder)
        outcome, seconds, said = run_tests(folder, sorted(modules), timeout * 3)
    return outcome == "passed", seconds, said[-20:]


def selected(args):
    chosen = [m for m in MUTANTS if (not args.ids or m["id"] in args.ids)
              and (not args.file or m["file"] == args.file.replace(os.sep, "/"))]
    unknown = sorted(set(args.ids) - {m["id"] for m in MUTANTS})
    return chosen, unknown


def list_mutants(mutants):
    """Each mutant on stderr (its promise, its tests, why it is equivalent, its anchor); the counts."""
    problems = 0
    for mutant in mutants:
        problem = anchor_problem(mutant)
        problems += bool(problem)
        state = "等价（不计分）" if mutant.get("equivalent") else ("锚点有问题" if problem else "可运行")
        say(f"{mutant['id']}  [{mutant['file']}]  {state}\n    承诺：{mutant['promise']}\n"
            f"    测试：{' '.join(mutant['tests'])}" + (f"\n    等价的理由：{mutant['equivalent']}"
                                                    if mutant.get("equivalent") else "")
            + (f"\n    {problem}" if problem else ""))
    return {"mutants": len(mutants), "equivalent": sum(1 for m in mutants if m.get("equivalent")),
            "anchor_problems": problems}


def summary(results, anchors, equivalent, seconds):
    """The closing lines on stderr and the JSON line's figures."""
    killed = [m for m, (outcome, _) in results if outcome != "passed"]
    survivors = [m for m, (outcome, _) in results if outcome == "passed"]
    hangs = [m for m, (outcome, _) in results if outcome == "timeout"]
    score = len(killed) / len(results) if results else 1.0
    say(f"\n杀死 {len(killed)} / {len(results)}（{score:.0%}，目标 {TARGET:.0%}），其中 {len(hangs)} 个是超时杀死的"
        f"（测试挂住了：{'、'.join(m['id'] for m in hangs) or '无'}）；等价、不计分 {len(equivalent)} 个；"
        f"锚点有问题 {len(anchors)} 个；用时 {seconds:.0f} 秒。")
    for mutant in survivors:
        say(f"存活：{mutant['id']}（{mutant['file']}）——{mutant['promise']}")
    for problem in anchors:
        say(f"锚点有问题（没有运行，不算杀死）：{problem}")
    return {"killed": len(killed), "total": len(results), "score": round(score, 3), "timeouts": len(hangs),
            "survivors": [m["id"] for m in survivors], "equivalent": len(equivalent), "anchor_problems": len(anchors),
            "seconds": round(seconds, 1)}


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="本项目自己的变异检查：在承诺所在的行上植入小错误，看测试能否发现。")
    parser.add_argument("ids", nargs="*", metavar="ID", help="只运行这些变异（默认全部）")
    parser.add_argument("--file", help="只运行改这个文件的变异，例如 loop_lab.py")
    parser.add_argument("--list", action="store_true", help="列出变异、它们破坏的承诺和锚点状态，不运行")
    parser.add_argument("--workers", type=int, default=2, help="同时运行的变异数（默认 2）")
    parser.add_argument("--verbose", action="store_true", help="杀死一个变异时列出失败的测试")
    parser.add_argument("--timeout", type=float, default=120, help="一个变异的测试最多运行多少秒，超过算超时杀死（默认 120）")
    args = parser.parse_args(argv)
    if args.workers < 1 or args.timeout <= 0:
        parser.error("--workers 至少为 1，--timeout 要大于 0。")
    return parser, args


def main(argv=None):
    use_safe_console()
    parser, args = parse_arguments(argv)
    mutants, unknown = selected(args)
    if unknown:
        parser.error(f"没有这些变异：{'、'.join(unknown)}（用 --list 看全部）。")
    if not mutants:
        parser.error("没有选中任何变异。")
    if args.list:
        counts = list_mutants(mutants)
        print(json.dumps(counts))
        return 1 if counts["anchor_problems"] else 0
    started = time.monotonic()
    equivalent = [m for m in mutants if m.get("equivalent")]
    anchors = [problem for m in mutants if not m.get("equivalent") for problem in [anchor_problem(m)] if problem]
    runnable = [m for m in mutants if not m.get("equivalent") and not anchor_problem(m)]
    modules = {name for m in runnable for name in m["tests"]}
    if runnable:
        say(f"先在未改动的副本上运行 {len(modules)} 个测试模块……")
        passed, seconds, tail = baseline(modules, args.timeout)
        if not passed:
            say("未改动的代码上测试就没有通过，变异的结果没有意义：\n" + "\n".join(tail))
            print(json.dumps({"baseline": "failed"}))
            return 1
        say(f"未改动时通过（{seconds:.1f} 秒）。开始运行 {len(runnable)} 个变异，每次 {args.workers} 个。")
    results, done = [], []

    def one(mutant):
        outcome, seconds, failed = try_mutant(mutant, args.timeout)
        word = {"passed": "存活", "failed": "杀死", "timeout": f"超时杀死（超过 {args.timeout:g} 秒，测试挂住了）",
                "stopped": "已中断，不计入结果"}[outcome]
        with SAID:
            done.append(mutant)
            print(f"[{len(done)}/{len(runnable)}] {word}：{mutant['id']}（{seconds:.1f} 秒）", file=sys.stderr, flush=True)
            for line in failed if args.verbose else []:
                print(f"    {line}", file=sys.stderr, flush=True)
        return mutant, (outcome, seconds)

    pool = ThreadPoolExecutor(args.workers)
    try:
        results = list(pool.map(one, runnable))
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        stop_all()
        raise
    pool.shutdown()
    figures = summary(results, anchors, equivalent, time.monotonic() - started)
    print(json.dumps(figures, ensure_ascii=False))
    return 0 if figures["score"] >= TARGET and not anchors else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        say("已中断：没有跑完的变异不计入结果。")
        sys.exit(130)
