"""Tests of the class report's escaping: Markdown, CSV cells (no formula can start), the console's cut, and the
one JSON line's line separators.

Split from tests/test_class_check.py; SharedWorkspaceTestCase (one copy of the workspace per class) is
tests/test_loop_lab.py's.
"""
import contextlib
import io
import json

from classroom import report as class_report
import cli
from tests.test_loop_lab import SharedWorkspaceTestCase


class EscapingTest(SharedWorkspaceTestCase):
    def test_markdown_csv_console_and_json_escapes(self):
        self.assertEqual(class_report.markdown("a|b<i>`c`</i>*d_e [f](g) #h &amp;"),
                         "a\\|b\\<i\\>\\`c\\`\\</i\\>\\*d_e \\[f\\](g) \\#h \\&amp;")
        self.assertEqual(class_report.markdown("_a_ b_ verify_loop"), "\\_a\\_ b\\_ verify_loop")
        self.assertEqual(class_report.markdown_code("a`b"), "``a`b``")
        self.assertEqual(class_report.markdown_code("`a"), "`` `a ``")
        for cell in ("=1+1", "+1", "-1", "@x"):
            self.assertEqual(class_report.spreadsheet_cell(cell), "'" + cell)
        for cell in ("\tx", "\rx", "\t=1"):  # a tab or CR is shown as its escape: no formula can start
            self.assertEqual(class_report.spreadsheet_cell(cell), cell.encode("unicode_escape").decode("ascii"))
        self.assertEqual(class_report.cut("a\u202eb\nc\x00"), "a\\u202eb\\nc\\x00")
        self.assertEqual(class_report.cut("x" * 600), "x" * 500 + "…（共 600 个字符）")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cli.print_json({"a": "\u2028\u2029中"})
        self.assertEqual(out.getvalue(), '{"a": "\\u2028\\u2029中"}\n')
        self.assertEqual(json.loads(out.getvalue()), {"a": "\u2028\u2029中"})


if __name__ == "__main__":
    unittest.main()
