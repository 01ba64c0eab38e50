"""The Windows-behaviour pass: the tests that touch files, processes and signals, run as on Windows.

    python3 tests/windows_behaviour.py [--without BEHAVIOUR ...] [TEST ...]

No Windows machine is needed to see what would break there. The tests (TESTS: every module of tests/, or
the ones named) run in a fresh interpreter started through tests/windows_simulation.py, which gives it, and every Python
process it starts, Windows' behaviour: text-mode writes with "\\r\\n", paths made with "\\" where cli.py
shows them, `py -3` in suggested commands, no SIGHUP, a SIGTERM that cannot be caught, no process
groups, no fcntl/termios/resource/pwd/grp, no replacing a file held open, no /dev/shm, a temporary folder reached
through a link. On Windows itself nothing is simulated: the same tests run natively.

The tests are shared among a few such interpreters running at once (one per processor, at most
MAX_WORKERS). A test that cannot hold on Windows skips itself there with its reason (tests/support.py
WINDOWS); the pass lists every skipped test with its reason, then the figures. Beside the pass, a
self-check shows that each behaviour is really in effect: `SimulationTest` has one test per behaviour,
which the pass runs; started with that one behaviour switched off (as `--without NAME` does), it must
fail, unless the machine itself behaves so. Exit 0 when the self-check holds and every test passes.
"""
import sys  # noqa: E402 (the next three lines run on any Python: the workspace's cli.py refuses an old one)
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402,F401
import argparse
import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest

ROOT = Path(__file__).resolve().parent.parent
SIMULATION = Path(__file__).resolve().parent / "windows_simulation.py"
sys.path.insert(0, str(ROOT))
from tests.support import _FAST_TEMP as FAST_TEMP  # noqa: E402
from tests.windows_simulation import BEHAVIOURS, MARKER  # noqa: E402

# The slowest test modules, first (see dealt()); every other module of tests/ follows them. All of them run:
# a test that cannot hold on Windows, wherever it is, must skip by the one rule (tests/support.py) or fail here.
SLOWEST = ("tests.test_docs", "tests.test_check_loop_guards", "tests.test_app", "tests.test_loop_lab",
           "tests.test_harness", "tests.test_verify_loop", "tests.test_class_check", "tests.test_verify_harness",
           "tests.test_class_platforms", "tests.test_copies", "tests.test_hand_in", "tests.test_class_intake")
TESTS = (*SLOWEST, *sorted({f"tests.{path.stem}" for path in (ROOT / "tests").glob("test_*.py")} - set(SLOWEST)))
MAX_WORKERS = 4


class SimulationTest(unittest.TestCase):
    """One test per behaviour: each holds on Windows and fails where the behaviour is missing."""

    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.folder = Path(folder.name)

    def python(self, code):
        return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)

    def test_newlines(self):
        with open(self.folder / "text.txt", "w", encoding="utf-8") as file:
            file.write("a\n")
        self.assertEqual((self.folder / "text.txt").read_bytes(), b"a\r\n")
        self.assertEqual(self.python("print('b')").stdout, b"b\r\n")

    def test_separators(self):
        import cli
        self.assertEqual(cli.os.path.relpath(os.path.join(os.getcwd(), "runs", "x")), "runs\\x")

    def test_launcher(self):
        import cli
        self.assertTrue(cli.command(Path("harness.py")).startswith("py -3 "))

    def test_no_sighup(self):
        self.assertFalse(hasattr(signal, "SIGHUP"))

    def test_sigterm(self):
        caught = ("import os, signal, sys, time\n"
                  "signal.signal(signal.SIGTERM, lambda *args: sys.exit(130))\n"
                  "os.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(5)\n")
        self.assertEqual(self.python(caught).returncode, 15)

    def test_no_process_groups(self):
        import tests.windows_simulation as simulation
        self.assertEqual([name for name in simulation.PROCESS_GROUP_CALLS if hasattr(os, name)], [])

    def test_posix_modules(self):
        for name in ("fcntl", "termios", "resource", "pwd", "grp"):
            with self.subTest(name), self.assertRaises(ImportError):
                __import__(name)

    def test_held_files(self):
        held, new, other = (self.folder / name for name in ("held.json", "new.json", "other.json"))
        for path in (held, new, other):
            path.write_bytes(b"{}")
        with open(held, "rb"):
            with self.assertRaises(PermissionError):
                os.replace(new, held)
        with self.assertRaises(FileExistsError):
            os.rename(new, other)

    def test_no_dev_shm(self):
        self.assertFalse(os.path.isdir("/dev/shm"))

    def test_linked_temp(self):
        temp = tempfile.gettempdir()
        self.assertNotEqual(os.path.realpath(temp), os.path.abspath(temp))


# --- inside a simulated interpreter ---------------------------------------------------------------

def canaries(behaviours):
    """The SimulationTest tests of BEHAVIOURS."""
    return [f"tests.windows_behaviour.SimulationTest.test_{name.replace('-', '_')}" for name in behaviours]


def run_share(names, summary):
    """Runs the tests NAMES; writes what ran, what was skipped and why, and what failed to SUMMARY (JSON)."""
    started = time.monotonic()
    result = unittest.TextTestRunner(verbosity=1).run(unittest.defaultTestLoader.loadTestsFromNames(names))
    Path(summary).write_bytes(json.dumps({
        "run": result.testsRun, "failed": len(result.failures) + len(result.errors),
        "skipped": [[test.id(), reason] for test, reason in result.skipped],
        "seconds": round(time.monotonic() - started, 1)}).encode("utf-8"))
    return 0 if result.wasSuccessful() else 1


# --- the runner -----------------------------------------------------------------------------------

def simulated(behaviours, *target):
    """The command that runs TARGET in a fresh interpreter with BEHAVIOURS (natively on Windows)."""
    if os.name == "nt":
        return [sys.executable, *target]
    return [sys.executable, str(SIMULATION), ",".join(behaviours), *target]


def environment(behaviours, linked_temp):
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1", **{MARKER: ",".join(behaviours)})
    if "linked-temp" in behaviours and linked_temp:
        env.update(TMPDIR=str(linked_temp), TEMP=str(linked_temp), TMP=str(linked_temp))
    return env


def make_linked_temp(base):
    """BASE/linked-temp, a link to BASE/temp; None where no link can be made."""
    real, link = base / "temp", base / "linked-temp"
    real.mkdir()
    try:
        os.symlink(real, link, target_is_directory=True)
    except OSError:
        try:  # Windows without the right to make links: a junction needs none
            import _winapi
            _winapi.CreateJunction(str(real), str(link))
        except (ImportError, OSError):
            return None
    return link


def start_self_check(behaviours, linked_temp):
    """Each behaviour's check, started with that behaviour switched off (all at once, beside the pass)."""
    runs = {}
    for name in behaviours:
        others = [other for other in behaviours if other != name]
        runs[name] = subprocess.Popen(simulated(others, "-m", "unittest", *canaries([name])), cwd=ROOT,
                                      env=environment(others, linked_temp), stderr=subprocess.DEVNULL)
    return runs


def self_check_holds(runs):
    """Each check failed with its behaviour switched off (or the machine behaves so itself); said per behaviour."""
    holds = True
    for name, process in runs.items():
        check = f"关掉 {name}，它的检验 test_{name.replace('-', '_')}"
        if process.wait(timeout=120) != 0:
            print(f"自检：{check} 失败了，这项模拟在起作用。", file=sys.stderr)
        elif holds_here(name):
            print(f"自检：{check} 仍然通过，因为这台机器本来就如此，无需模拟。", file=sys.stderr)
        else:
            holds = False
            print(f"自检失败：{check} 仍然通过，它测不出这项行为。", file=sys.stderr)
    return holds


def holds_here(name):
    """The behaviour's check passes in this process, where nothing is simulated: the machine behaves so itself."""
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromNames(canaries([name])).run(result)
    return result.wasSuccessful()


def dealt(tests, count):
    """TESTS (slowest first) dealt to COUNT workers back and forth: 0, 1, 1, 0, 0, 1 ... so the shares even out."""
    shares = [[] for _ in range(count)]
    for index, test in enumerate(tests):
        turn, place = divmod(index, count)
        shares[place if turn % 2 == 0 else count - 1 - place].append(test)
    return shares


def run_workers(behaviours, linked_temp, tests, folder):
    """TESTS dealt to the workers, the behaviours' checks to the first; their summaries, in order."""
    shares = dealt(tests, max(1, min(os.cpu_count() or 1, MAX_WORKERS, len(tests))))
    shares[0][:0] = canaries(behaviours)
    workers = []
    for number, share in enumerate(shares):
        summary, log = folder / f"worker-{number}.json", open(folder / f"worker-{number}.txt", "wb")
        command = simulated(behaviours, "-m", "tests.windows_behaviour", "--summary", str(summary), *share)
        workers.append((subprocess.Popen(command, cwd=ROOT, env=environment(behaviours, linked_temp),
                                         stdout=log, stderr=log), summary, log))
    summaries = []
    for number, (process, summary, log) in enumerate(workers):
        code = process.wait()
        log.close()
        sys.stderr.write(Path(log.name).read_bytes().decode("utf-8", "replace"))
        summaries.append(json.loads(summary.read_bytes()) if summary.exists() else
                         {"run": 0, "failed": 1, "skipped": [], "seconds": None, "lost": code})
    return summaries


def report(summaries, seconds):
    """Every skipped test with its reason, and the figures; True when nothing failed."""
    skipped = sorted(entry for summary in summaries for entry in summary["skipped"])
    print(f"\n在 Windows 行为下跳过的测试（{len(skipped)} 个）：", file=sys.stderr)
    for test, reason in skipped:
        print(f"  {test}：{reason}", file=sys.stderr)
    for number, summary in enumerate(summaries):
        if "lost" in summary:
            hint = "：多半是一个测试给自己的进程发了 SIGTERM，在 Windows 上这会直接结束进程（这样的测试要按" \
                   " tests/support.py 的 not_on_windows 跳过）" if summary["lost"] == 15 else ""
            print(f"第 {number + 1} 个测试进程没有写下结果就结束了（退出码 {summary['lost']}{hint}）。", file=sys.stderr)
    failed = sum(summary["failed"] for summary in summaries)
    print(f"Windows 行为下：运行 {sum(summary['run'] for summary in summaries)} 个测试，跳过 {len(skipped)} 个，"
          f"失败 {failed} 个；{len(summaries)} 个进程同时运行，用时 {seconds:.1f} 秒"
          f"（各进程 {'、'.join(str(summary['seconds']) for summary in summaries)} 秒）。", file=sys.stderr)
    return failed == 0


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="在模拟的 Windows 行为下运行测试。")
    parser.add_argument("--without", action="append", default=[], choices=list(BEHAVIOURS), metavar="BEHAVIOUR",
                        help="关掉一项模拟（可重复）：" + "、".join(BEHAVIOURS))
    parser.add_argument("--summary", help=argparse.SUPPRESS)  # inside a worker: where its summary goes
    parser.add_argument("tests", nargs="*", help="要运行的测试（默认：tests/ 里的全部测试）")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    if args.summary:
        return run_share(args.tests, args.summary)
    behaviours = [name for name in BEHAVIOURS if name not in args.without]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="windows-behaviour-", dir=FAST_TEMP) as base:
        linked_temp = make_linked_temp(Path(base))
        if linked_temp is None and "linked-temp" in behaviours:
            print("这里不能创建链接：临时文件夹不经过链接。", file=sys.stderr)
            behaviours.remove("linked-temp")
        checks = {} if args.without or os.name == "nt" else start_self_check(behaviours, linked_temp)
        summaries = run_workers(behaviours, linked_temp, args.tests or TESTS, Path(base))
        passed = report(summaries, time.monotonic() - started)
        holds = self_check_holds(checks)
    return 0 if holds and passed else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
    sys.exit(130)
