"""One rule for everything printed: no control, C1 or bidi character reaches a terminal raw.

cli.visible() is the rule (a character str.isprintable() refuses is written as its escape), cli.print_json
applies it inside the JSON string as JSON's own escapes (the same value read back), cli.say on stderr (a
message's own line breaks stay), ChineseArgumentParser.error to what a person typed. A file name carrying an OSC
52 clipboard write or a screen clear, given by a wildcard, never reaches the terminal as it is.
"""
import contextlib
import io
import json
import os
import unittest

import cli
from tests.support import WorkspaceTestCase

CLIPBOARD = "\x1b]52;c;aGVsbG8=\x07"  # OSC 52: the terminal puts "hello" on the clipboard
CLEAR = "\x1b[2J\x1b[H"  # the screen cleared, the cursor sent home
C1 = "\x9b2J"  # U+009B is a CSI on its own for terminals that take C1 controls
BIDI = "\u202eevil\u202c"  # a right-to-left override: the text shown reversed


def raw(text):
    """The characters of TEXT no output may show as they are."""
    return [ch for ch in text if not ch.isprintable() and ch != "\n"]


class RuleTest(unittest.TestCase):
    def test_visible_escapes_controls_c1_bidi_and_separators_and_keeps_what_it_is_told(self):
        for text in (CLIPBOARD, CLEAR, C1, BIDI, "a\u2028b\u2029c", "\x7f", "\u200b", "\U000e0001"):
            with self.subTest(text=text):
                self.assertEqual(raw(cli.visible(text)), [])
        self.assertEqual(cli.visible("第 1 行\n第 2 行", keep="\n"), "第 1 行\n第 2 行")
        self.assertEqual(cli.visible("a\nb"), "a\\nb")
        self.assertEqual(cli.visible("张三 O'Brien（2）"), "张三 O'Brien（2）")  # printable text stays as it is

    def test_print_json_escapes_them_inside_the_string_and_reads_back_the_same(self):
        value = {"run": CLIPBOARD + C1 + BIDI + "\u2028\x7f\U000e0001", "名字": "张三"}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cli.print_json(value)
        line = out.getvalue()
        self.assertEqual(line.count("\n"), 1)
        self.assertEqual(raw(line[:-1]), [])
        self.assertIn("\\u009b", line)
        self.assertIn("\\u202e", line)
        self.assertIn("张三", line)  # printable characters stay real ones
        self.assertEqual(json.loads(line), value)

    def test_say_escapes_what_a_message_quotes_but_keeps_its_own_line_breaks(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            cli.say(f"跳过 {CLIPBOARD}{CLEAR}\n  - 下一行")
        self.assertEqual(raw(err.getvalue()), [])
        self.assertIn("\\x1b]52", err.getvalue())
        self.assertEqual(err.getvalue().count("\n"), 2)

    def test_an_argument_error_shows_what_was_typed_escaped(self):
        parser = cli.ChineseArgumentParser(prog="demo")
        parser.add_argument("--name")
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as caught:
            parser.parse_args(["--name", "x", CLIPBOARD + "\nfake line"])
        self.assertEqual(caught.exception.code, 2)
        self.assertEqual(raw(err.getvalue()), [])
        self.assertIn("\\x1b]52", err.getvalue())
        self.assertNotIn("\nfake line", err.getvalue())


class CommandLineTest(WorkspaceTestCase):
    """The commands as a teacher types them: `verify_loop.py loop-runs/*`, `verify_harness.py runs/…`."""

    def named(self, folder, name, as_folder):
        path = self.root / folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir() if as_folder else path.write_bytes(b"")
        except (OSError, ValueError):
            self.skipTest("这个文件系统不允许名称里有控制字符")
        return path

    def test_a_name_with_escape_sequences_never_reaches_the_terminal(self):
        name = f"x{CLIPBOARD}{CLEAR}{C1}"
        self.named("loop-runs", name, as_folder=False)  # a file where a loop folder belongs: an argument error
        code, out, err = self.run_cli("verify_loop.py", f"loop-runs/{name}")
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(raw(err), [], err)
        self.assertIn("\\x1b]52", err)
        os.remove(self.root / "loop-runs" / name)
        self.named("loop-runs", name, as_folder=True)  # a folder: checked, and said escaped everywhere
        code, out, err = self.run_cli("verify_loop.py", f"loop-runs/{name}")
        self.assertEqual(code, 1)
        self.assertEqual((raw(out.rstrip("\n")), raw(err)), ([], []), (out, err))
        self.assertIn(name, json.loads(out)["run"])  # the same name, read back from JSON's escapes
        code, out, err = self.run_cli("verify_harness.py", f"runs/{name}")
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(raw(err), [], err)

    def test_a_bidi_override_in_a_folder_name_is_shown_escaped(self):
        name = f"repair{BIDI}"
        self.named("loop-runs", name, as_folder=True)
        code, out, err = self.run_cli("verify_loop.py", f"loop-runs/{name}")
        self.assertEqual(code, 1)
        self.assertIn("\\u202e", out)
        self.assertEqual((raw(out.rstrip("\n")), raw(err)), ([], []))


if __name__ == "__main__":
    unittest.main()
