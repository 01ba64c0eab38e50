"""The Windows-behaviour pass: the tests that touch files, processes and signals, run as on Windows.

    python3 tests/windows_behaviour.py [--without BEHAVIOUR ...] [TEST ...]

No Windows machine is needed to see what would break there. The tests (TESTS, or the ones named) run
in a fresh interpreter started through tests/windows_simulation.py, which gives it, and every Python
process it starts, Windows' behaviour: text-mode writes with "\\r\\n", paths made with "\\" where cli.py
shows them, `py -3` in suggested commands, no SIGHUP, a SIGTERM that cannot be caught, no
fcntl/termios/resource/pwd/grp, no replacing a file held open, no /dev/shm, a temporary folder reached
through a link. On Windows itself nothing is simulated: the same tests run natively.

A test that cannot hold on Windows skips itself there with its reason (tests/support.py WINDOWS); the
pass lists every skipped test with its reason, then the figures. Before the pass, a self-check shows
that each behaviour is really in effect: `SimulationTest` has one test per behaviour, and with that one
behaviour switched off (`--without NAME`) exactly that test must fail. Exit 0 when the self-check
holds and every test passes; 1 otherwise.
"""
import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIMULATION = Path(__file__).resolve().parent / "windows_simulation.py"
sys.path.insert(0, str(ROOT))
from tests.support import _FAST_TEMP as FAST_TEMP  # noqa: E402
from tests.windows_simulation import BEHAVIOURS, MARKER  # noqa: E402

# The tests that touch files, processes, signals and what the console shows; the pure logic of the
# notes assistant (search, budgets, the agent's guards) behaves the same everywhere and is left out.
TESTS = ("tests.test_cli", "tests.test_harness", "tests.test_loop_lab", "tests.test_verify_harness",
         "tests.test_verify_loop", "tests.test_class_check", "tests.test_export_review", "tests.test_verify_export",
         "tests.test_watched_lists", "tests.test_app", "tests.test_check_loop_guards", "tests.test_same_on_every_os",
         "tests.test_docs")


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


# --- inside the simulated interpreter -------------------------------------------------------------

def canaries(behaviours):
    """The SimulationTest tests of BEHAVIOURS."""
    return [f"tests.windows_behaviour.SimulationTest.test_{name.replace('-', '_')}" for name in behaviours]


def run_pass(names):
    """Runs the tests, with the check of every behaviour in effect; lists every skipped test with its reason."""
    in_effect = [name for name in os.environ.get(MARKER, "").split(",") if name in BEHAVIOURS]
    suite = unittest.defaultTestLoader.loadTestsFromNames([*canaries(in_effect), *names])
    started = time.monotonic()
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    seconds = time.monotonic() - started
    print(f"\n在 Windows 行为下跳过的测试（{len(result.skipped)} 个）：", file=sys.stderr)
    for test, reason in sorted(result.skipped, key=lambda item: item[0].id()):
        print(f"  {test.id()}：{reason}", file=sys.stderr)
    print(f"Windows 行为下：运行 {result.testsRun} 个测试，跳过 {len(result.skipped)} 个，"
          f"失败 {len(result.failures) + len(result.errors)} 个，用时 {seconds:.1f} 秒。", file=sys.stderr)
    return 0 if result.wasSuccessful() else 1


# --- the runner -----------------------------------------------------------------------------------

def simulated(behaviours, *target):
    """The command that runs TARGET in a fresh interpreter with BEHAVIOURS (natively on Windows)."""
    if os.name == "nt":
        return [sys.executable, *target]
    return [sys.executable, str(SIMULATION), ",".join(behaviours), *target]


def environment(behaviours, linked_temp):
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
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


def self_check(behaviours, linked_temp):
    """Each behaviour's check, run with that behaviour switched off (all at once, in parallel): it must fail."""
    runs = {}
    for name in behaviours:
        others = [other for other in behaviours if other != name]
        runs[name] = subprocess.Popen(simulated(others, "-m", "unittest", *canaries([name])), cwd=ROOT,
                                      env=environment(others, linked_temp), stderr=subprocess.DEVNULL)
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


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="在模拟的 Windows 行为下运行测试。")
    parser.add_argument("--without", action="append", default=[], choices=list(BEHAVIOURS), metavar="BEHAVIOUR",
                        help="关掉一项模拟（可重复）：" + "、".join(BEHAVIOURS))
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("tests", nargs="*", help="要运行的测试（默认：与文件、进程、信号有关的全部测试）")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    if args.inside:
        return run_pass(args.tests)
    behaviours = [name for name in BEHAVIOURS if name not in args.without]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="windows-behaviour-", dir=FAST_TEMP) as base:
        linked_temp = make_linked_temp(Path(base))
        holds = args.without or os.name == "nt" or self_check(behaviours, linked_temp)
        command = simulated(behaviours, "-m", "tests.windows_behaviour", "--inside", *(args.tests or TESTS))
        code = subprocess.run(command, cwd=ROOT, env=environment(behaviours, linked_temp)).returncode
    print(f"Windows 行为检查共用时 {time.monotonic() - started:.1f} 秒。", file=sys.stderr)
    return 0 if holds and code == 0 else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
    sys.exit(130)
