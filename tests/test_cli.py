"""Tests of cli.py, the plumbing every script shares: Chinese help, strict JSON, folder claims, signals."""
import io
import os
import signal
import socket
import sys
import tempfile
import threading
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402
from tests.support import PYTHON, not_on_windows  # noqa: E402


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
            ("p", "--cuont", "2"): "无法识别的选项 --cuont：是不是想写 --count？",
            ("p", "--zzz"): "无法识别的选项 --zzz（可用的选项：--count、--flag、--help、--mode、-h）。",
            ("--mdoe=a",): "无法识别的选项 --mdoe：是不是想写 --mode？",  # named before the missing PATH
            # a Chinese input method's dashes, named before the option they hide is missing
            ("p", "——count", "2"): "——count 开头的「——」是中文输入法打出的破折号或全角符号，不是英文的连字符 -："
                                   "请切换到英文输入法重新输入，写成 --count。",
            ("p", "—mode=a"): "—mode=a 开头的「—」是中文输入法打出的破折号或全角符号，不是英文的连字符 -："
                              "请切换到英文输入法重新输入，写成 --mode=a。",
            ("p", "－－ｆｌａｇ"): "－－ｆｌａｇ 开头的「－－」是中文输入法打出的破折号或全角符号，不是英文的连字符 -："
                               "请切换到英文输入法重新输入，写成 --flag。",
            ("p", "--count", "−2"): "−2 开头的「−」是中文输入法打出的破折号或全角符号，不是英文的连字符 -："
                                    "请切换到英文输入法重新输入，写成 -2。",
            ("p", "–x"): "–x 开头的「–」是中文输入法打出的破折号或全角符号，不是英文的连字符 -："
                         "请切换到英文输入法重新输入，写成 -x。",
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


class RecordBytesTest(unittest.TestCase):
    """loads_record: the bytes of a record, strictly; each refusal says which way in KIND."""

    def refused(self, data):
        with self.assertRaises(cli.RecordError) as caught:
            cli.loads_record(data)
        self.assertIsInstance(caught.exception, ValueError)
        self.assertRegex(str(caught.exception), r"[\u4e00-\u9fff]")  # said in Chinese
        return caught.exception.kind

    def test_a_record_reads_with_or_without_a_bom_and_any_top_level(self):
        self.assertEqual(cli.loads_record(b'{"a": [1, {"b": null}]}\n'), {"a": [1, {"b": None}]})
        self.assertEqual(cli.loads_record('\ufeff{"名": "值"}'.encode("utf-8")), {"名": "值"})
        for data, value in ((b"null", None), (b"[]", []), (b'"x"', "x"), (b"3", 3)):
            self.assertEqual(cli.loads_record(data), value)

    def test_each_way_a_record_is_refused(self):
        cases = {
            b"": "empty", b" \r\n": "empty", b"\xef\xbb\xbf": "empty",
            b'{"a": 1, "b": [2': "cut", b'{"a": "unfinished': "cut", '{"a": "名"}'.encode("utf-8")[:-3]: "cut",
            '{"a": 1}'.encode("utf-16"): "not_utf8", b'{"a": "\xff"}': "not_utf8",
            b'{"a" 1}': "not_json", b"{} {}": "not_json",
            b'{"a": NaN}': "constant", b"[Infinity]": "constant", b'{"a": -Infinity}': "constant",
            b'{"a": 1, "a": 2}': "duplicate_key", b'[{"x": {"k": 1, "k": 1}}]': "duplicate_key",
            b"[" * 65 + b"]" * 65: "too_deep", b'{"a":' * 65 + b"1" + b"}" * 65: "too_deep",
            b"[" * 200000: "too_deep",
        }
        for data, kind in cases.items():
            with self.subTest(data=data[:30]):
                self.assertEqual(self.refused(data), kind)

    def test_sixty_four_levels_are_still_a_record(self):
        deepest = record = []
        for _ in range(63):
            deepest.append([])
            deepest = deepest[0]
        self.assertEqual(cli.loads_record(b"[" * 64 + b"]" * 64), record)

    def test_a_duplicate_key_keeps_its_name(self):
        with self.assertRaises(cli.DuplicateKeyError) as caught:
            cli.loads_record(b'{"x": [{"b": 1, "c": 2, "b": 3}]}')
        self.assertEqual(caught.exception.key, "b")


class EvidenceReadTest(unittest.TestCase):
    """read_evidence opens nothing but a plain file and never reads past its cap."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.folder = Path(self._tmp.name)

    def not_regular(self, path):
        with self.assertRaises(cli.NotRegularFile) as caught:
            cli.read_evidence(path, 1024)
        self.assertIsInstance(caught.exception, OSError)
        return caught.exception.kind

    def test_a_plain_file_up_to_its_cap_is_read_whole(self):
        path = self.folder / "run.json"
        path.write_bytes(b"x" * 100)
        self.assertEqual(cli.read_evidence(path, 100), b"x" * 100)

    def test_one_byte_over_the_cap_is_too_large(self):
        path = self.folder / "run.json"
        path.write_bytes(b"x" * 101)
        with self.assertRaises(cli.TooLarge) as caught:
            cli.read_evidence(path, 100)
        self.assertEqual(caught.exception.cap, 100)
        self.assertIn("100", str(caught.exception))

    def test_a_folder_is_named(self):
        self.assertEqual(self.not_regular(self.folder), "文件夹")

    def test_missing_passes_as_file_not_found(self):
        with self.assertRaises(FileNotFoundError):
            cli.read_evidence(self.folder / "absent.json", 10)

    def test_no_permission_passes_as_permission_error(self):
        path = self.folder / "run.json"
        path.write_bytes(b"{}")
        with mock.patch("os.open", side_effect=PermissionError(13, "Permission denied", str(path))):
            with self.assertRaises(PermissionError):
                cli.read_evidence(path, 10)

    @not_on_windows("没有命名管道（os.mkfifo）")
    def test_a_fifo_is_named_and_never_opened(self):
        path = self.folder / "run.json"
        os.mkfifo(path)  # opening it for reading would block until a writer came
        self.assertEqual(self.not_regular(path), "命名管道（FIFO）")

    @unittest.skipUnless(os.path.exists("/dev/null") and os.path.exists("/dev/zero"), "这里没有 /dev/null")
    def test_a_device_is_named(self):
        self.assertEqual(self.not_regular("/dev/null"), "字符设备")
        self.assertEqual(self.not_regular("/dev/zero"), "字符设备")

    @not_on_windows("创建符号链接需要额外权限")
    @unittest.skipUnless(os.path.exists("/dev/zero"), "这里没有 /dev/zero")
    def test_a_link_to_dev_zero_is_a_link_and_never_followed(self):
        path = self.folder / "run.json"
        path.symlink_to("/dev/zero")
        self.assertEqual(self.not_regular(path), "符号链接")

    @unittest.skipUnless(hasattr(socket, "AF_UNIX"), "这里没有 Unix 套接字")
    def test_a_socket_is_named(self):
        path = self.folder / "s"
        server = socket.socket(socket.AF_UNIX)
        self.addCleanup(server.close)
        server.bind(str(path))
        self.assertEqual(self.not_regular(path), "套接字")

    def test_a_file_whose_size_is_not_told_is_still_read_and_capped(self):
        path = self.folder / "run.json"
        path.write_bytes(b"y" * 50)
        real_fstat = os.fstat
        untold = lambda fd: os.stat_result((*tuple(real_fstat(fd))[:6], 0, *tuple(real_fstat(fd))[7:]))  # noqa: E731
        with mock.patch("os.fstat", untold):  # as /proc reports its files: size 0
            self.assertEqual(cli.read_evidence(path, 50), b"y" * 50)
            with self.assertRaises(cli.TooLarge):
                cli.read_evidence(path, 49)

    def test_a_file_swapped_for_another_kind_after_lstat_is_caught(self):
        path = self.folder / "run.json"
        path.write_bytes(b"{}")
        folder_status = os.stat(self.folder)
        with mock.patch("os.fstat", return_value=folder_status):
            self.assertEqual(self.not_regular(path), "文件夹")


class LineEndingsTest(unittest.TestCase):
    def test_each_style_is_named(self):
        cases = {b"a\nb\n": "lf", b"a\r\nb\r\n": "crlf", b"a\r\nb\n": "mixed", b"a\rb": "mixed",
                 b"a\r\n\rb\r\n": "mixed", b"ab": "none", b"": "none"}
        for data, style in cases.items():
            with self.subTest(data=data):
                self.assertEqual(cli.line_endings(data), style)

    def test_to_lf_undoes_a_wholesale_conversion_only(self):
        self.assertEqual(cli.to_lf(b"{\r\n  \"a\": 1\r\n}\r\n"), b'{\n  "a": 1\n}\n')
        self.assertEqual(cli.to_lf(b"a\rb"), b"a\rb")


class AtomicWriteTest(unittest.TestCase):
    def test_the_bytes_are_utf8_with_lf_and_flushed_before_the_rename(self):
        events = []
        real_fsync, real_replace = os.fsync, os.replace
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "run.json"
            with mock.patch("os.fsync", side_effect=lambda fd: (events.append("fsync"), real_fsync(fd))), \
                    mock.patch("os.replace", side_effect=lambda a, b: (events.append("replace"), real_replace(a, b))):
                cli.write_json_atomic(path, {"名": [1, "a\nb"]})
            self.assertEqual(events, ["fsync", "replace"])
            self.assertEqual(path.read_bytes(), '{\n  "名": [\n    1,\n    "a\\nb"\n  ]\n}\n'.encode("utf-8"))
            self.assertEqual(os.listdir(folder), ["run.json"])


class GlossTest(unittest.TestCase):
    def test_one_wording_per_error_type_and_a_default(self):
        self.assertEqual(cli.gloss("FileNotFoundError"), "文件或文件夹不存在")
        self.assertEqual(cli.gloss("NameTaken"), cli.gloss("FileExistsError"))
        self.assertEqual(cli.gloss("SomethingNew"), "意外异常")
        self.assertEqual(len(set(cli.ERROR_GLOSS.values())), len(cli.ERROR_GLOSS) - 1)  # NameTaken is FileExistsError


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


@not_on_windows("os.kill(SIGTERM) 会直接结束进程，处理函数来不及运行")
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


class UsageTest(unittest.TestCase):
    def test_the_usage_given_is_shown_line_under_line_at_any_width(self):
        for width in ("40", "200"):
            with self.subTest(width=width), mock.patch.dict(os.environ, COLUMNS=width):
                made = cli.ChineseArgumentParser(prog="demo.py", usage=("[-h] --run NAME", "[--max-attempts N]"))
                made.add_argument("--run", metavar="NAME")
                made.add_argument("--max-attempts", metavar="N")
                under = " " * len("用法：demo.py ")
                self.assertEqual(made.format_usage(), f"用法：demo.py [-h] --run NAME\n{under}[--max-attempts N]\n")

    def test_a_typo_in_a_commands_option_names_the_nearest(self):
        made = cli.ChineseArgumentParser(prog="app.py", usage=("[-h] 命令 ...",))
        ask = made.add_subparsers(dest="command", required=True).add_parser("ask", usage=("[-h] [--json] 问题",))
        ask.add_argument("question")
        ask.add_argument("--json", action="store_true")
        self.assertEqual(ask.prog, "app.py ask")
        err = io.StringIO()
        with redirect_stderr(err), self.assertRaises(SystemExit):
            made.parse_args(["ask", "--jsno", "问题"])
        self.assertIn("app.py：参数错误：无法识别的选项 --jsno：是不是想写 --json？", err.getvalue())


class DisplayPathTest(unittest.TestCase):
    @not_on_windows("创建符号链接需要额外权限")
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

    @not_on_windows("创建符号链接需要额外权限")
    def test_a_folder_reached_through_a_link_is_still_shown_from_here(self):
        """macOS's /tmp is /private/tmp: the current folder is resolved, a path given through the link is not."""
        with tempfile.TemporaryDirectory() as folder:
            real, link = Path(folder) / "real", Path(folder) / "link"
            (real / "lesson-14" / "loop-runs" / "a").mkdir(parents=True)
            link.symlink_to(real, target_is_directory=True)
            here = Path.cwd()
            os.chdir(link / "lesson-14")
            try:
                shown = cli.display_path(link / "lesson-14" / "loop-runs" / "a")
                linked = cli.display_path(link / "lesson-14" / "loop-runs")
            finally:
                os.chdir(here)
        self.assertEqual((shown, linked), ("loop-runs/a", "loop-runs"))

    def test_paths_are_relative_to_the_current_folder_with_slashes(self):
        here = Path.cwd()
        beside = here.name + "-beside"  # a sibling folder, whatever the checkout's folder is called
        self.assertEqual(cli.display_path(here / "loop-runs" / "a"), "loop-runs/a")
        self.assertEqual(cli.display_path(here.parent / beside / "x"), f"../{beside}/x")


if __name__ == "__main__":
    unittest.main()
