"""Tests of cli.py, the plumbing every script shares: Chinese help, strict JSON, folder claims, signals."""
import io
import os
import signal
import sys
import tempfile
import threading
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402
from tests.support import PYTHON, WINDOWS  # noqa: E402


def parser():
    made = cli.ChineseArgumentParser(prog="demo.py", description="演示。")
    made.add_argument("path", metavar="PATH", help="一个路径")
    made.add_argument("--count", type=int, help="次数")
    made.add_argument("--mode", choices=("a", "b"))
    made.add_argument("--flag", action="store_true")
    return made


def run_parser(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            parser().parse_args(argv)
            code = None
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


class ChineseParserTest(unittest.TestCase):
    def test_help_is_wholly_chinese(self):
        code, out, _ = run_parser(["--help"])
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith("用法：demo.py [-h]"), out)
        for english in ("usage:", "options", "positional arguments", "show this help"):
            self.assertNotIn(english, out)
        self.assertIn("\n位置参数：\n", out)
        self.assertIn("\n选项：\n", out)
        self.assertRegex(out, r"-h, --help +显示本帮助并退出")

    def test_errors_are_chinese_and_exit_2(self):
        cases = {
            (): "缺少必需的参数：PATH。",
            ("p", "--count", "x"): "参数 --count 的值 x 不是整数。",
            ("p", "--count", "2.5"): "参数 --count 的值 2.5 不是整数。",
            ("p", "--mode", "c"): "参数 --mode 的值 c 不在可选范围内（可选：a、b）。",
            ("p", "--count"): "参数 --count 后面需要一个值。",
            ("p", "--flag=1"): "参数 --flag 不接受值（收到 1）。",
            ("p", "q"): "无法识别的参数：q。",
        }
        for argv, expected in cases.items():
            with self.subTest(argv=argv):
                code, out, err = run_parser(list(argv))
                self.assertEqual(code, 2)
                self.assertEqual(out, "")
                self.assertIn(f"demo.py：参数错误：{expected}\n用 --help 查看用法。", err)
                self.assertTrue(err.startswith("用法："), err)
                self.assertNotIn("usage:", err)
                self.assertNotIn("error:", err)


class StrictJsonTest(unittest.TestCase):
    def test_duplicate_key_anywhere_is_named(self):
        for text, key in (('{"a": 1, "a": 2}', "a"), ('{"x": [{"b": 1, "c": 2, "b": 3}]}', "b")):
            with self.subTest(text=text):
                with self.assertRaises(cli.DuplicateKeyError) as caught:
                    cli.loads_strict(text)
                self.assertEqual(caught.exception.key, key)
                self.assertIsInstance(caught.exception, ValueError)

    def test_bom_and_plain_objects_read(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "r.json"
            path.write_bytes('\ufeff{"名": [1, {"k": null}]}'.encode("utf-8"))
            self.assertEqual(cli.read_json(path), {"名": [1, {"k": None}]})


class RecordFolderTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.parent = Path(self._tmp.name) / "loop-runs"

    def write(self, staging):
        (staging / "loop.json").write_text("{}\n", encoding="utf-8")

    def test_folder_appears_with_its_first_record_and_leaves_nothing_else(self):
        made = cli.create_record_folder(self.parent, "Demo", self.write)
        self.assertEqual(made, self.parent / "Demo")
        self.assertEqual(sorted(os.listdir(self.parent)), ["Demo"])
        self.assertEqual(os.listdir(made), ["loop.json"])

    def test_a_name_in_another_case_is_taken_and_nothing_is_touched(self):
        cli.create_record_folder(self.parent, "Demo", self.write)
        with self.assertRaises(cli.NameTaken) as caught:
            cli.create_record_folder(self.parent, "demo", self.write)
        self.assertEqual(caught.exception.path, "loop-runs/Demo")
        self.assertFalse(caught.exception.busy)
        self.assertEqual(sorted(os.listdir(self.parent)), ["Demo"])

    def test_callers_own_check_refuses_the_name(self):
        with self.assertRaises(cli.NameTaken) as caught:
            cli.create_record_folder(self.parent, "x", self.write, taken=lambda: "runs/x-01")
        self.assertEqual(caught.exception.path, "runs/x-01")
        self.assertEqual(os.listdir(self.parent), [])

    def test_a_held_claim_makes_the_name_busy(self):
        self.parent.mkdir()
        (self.parent / ".lock-demo").mkdir()
        with self.assertRaises(cli.NameTaken) as caught:
            cli.create_record_folder(self.parent, "DEMO", self.write)
        self.assertTrue(caught.exception.busy)
        self.assertEqual(caught.exception.path, "loop-runs/.lock-demo")
        self.assertEqual(sorted(os.listdir(self.parent)), [".lock-demo"])

    def test_a_claim_left_by_a_killed_process_is_taken_over(self):
        self.parent.mkdir()
        claim = self.parent / ".lock-demo"
        claim.mkdir()
        (claim / "loop.json").write_text("{", encoding="utf-8")  # half a first record
        old = claim.stat().st_mtime - cli.STALE_LOCK_SECONDS - 5
        os.utime(claim, (old, old))
        cli.create_record_folder(self.parent, "Demo", self.write)
        self.assertEqual(sorted(os.listdir(self.parent)), ["Demo"])
        self.assertEqual((self.parent / "Demo" / "loop.json").read_text(encoding="utf-8"), "{}\n")

    def test_interrupt_while_writing_leaves_no_folder(self):
        def interrupted(staging):
            (staging / "half").write_text("", encoding="utf-8")
            raise KeyboardInterrupt
        with self.assertRaises(KeyboardInterrupt):
            cli.create_record_folder(self.parent, "demo", interrupted)
        self.assertEqual(os.listdir(self.parent), [])

    def test_concurrent_claims_in_different_case_give_one_folder(self):
        for round_number in range(20):
            parent = self.parent / str(round_number)
            results, start = [], threading.Barrier(2)

            def claim(name):
                start.wait()
                try:
                    cli.create_record_folder(parent, name, self.write)
                    results.append("made")
                except cli.NameTaken:
                    results.append("taken")
            threads = [threading.Thread(target=claim, args=(name,)) for name in ("Same", "same")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.assertEqual(sorted(results), ["made", "taken"])
            self.assertEqual(len(os.listdir(parent)), 1)


@unittest.skipIf(WINDOWS, "Windows: os.kill(SIGTERM) ends the process at once, no handler runs")
class TerminationTest(unittest.TestCase):
    def test_sigterm_raises_terminated_which_is_a_keyboard_interrupt(self):
        previous = signal.getsignal(signal.SIGTERM)
        self.addCleanup(signal.signal, signal.SIGTERM, previous)
        cli.install_termination_handlers()
        with self.assertRaises(cli.Terminated) as caught:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs between two bytecodes of this thread
                pass
        self.assertIsInstance(caught.exception, KeyboardInterrupt)


class CommandTest(unittest.TestCase):
    def test_a_command_is_typed_as_here_and_a_spaced_path_stays_one_word(self):
        here = Path.cwd()
        self.assertEqual(cli.command(here / "loop_lab.py", "--run", "a"), f"{PYTHON} loop_lab.py --run a")
        spaced = here / "My Documents" / "verify_loop.py"
        self.assertEqual(cli.command(spaced, here / "loop-runs" / "a"),
                         f'{PYTHON} "My Documents/verify_loop.py" loop-runs/a')


class DisplayPathTest(unittest.TestCase):
    @unittest.skipIf(WINDOWS, "Windows: symbolic links need extra rights")
    def test_a_far_link_is_shown_by_its_own_name_not_its_target(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "a" / "target").mkdir(parents=True)
            (root / "a" / "link").symlink_to(root / "a" / "target")
            deep = root / "x" / "y" / "z"  # three folders up and one down: shown as a full path
            deep.mkdir(parents=True)
            here = Path.cwd()
            os.chdir(deep)
            try:
                shown = cli.display_path(root / "a" / "link")
            finally:
                os.chdir(here)
            self.assertTrue(os.path.isabs(shown), shown)
            self.assertEqual(os.path.basename(shown), "link")

    def test_paths_are_relative_to_the_current_folder_with_slashes(self):
        here = Path.cwd()
        beside = here.name + "-beside"  # a sibling folder, whatever the checkout's folder is called
        self.assertEqual(cli.display_path(here / "loop-runs" / "a"), "loop-runs/a")
        self.assertEqual(cli.display_path(here.parent / beside / "x"), f"../{beside}/x")


if __name__ == "__main__":
    unittest.main()
