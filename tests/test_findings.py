"""Tests of verify_loop's findings as data: kinds with fields, sentences made from one table, listed for teachers.

The table of verifier/findings.py is the one place the words live. docs/loop/TEACHER.md「每种发现」lists it (this
test renders the list from the table and compares: after changing the table, `python3 -m tests.test_findings --write`
writes the list anew). A
finding is its kind and fields: equal findings are one cause, whatever their words; every sentence is the table's
template filled in, with the fields shown the way the table's specs say. That every sentence a whole class check
prints comes from the table, and that rewording the table changes no result, is tested on a real class in
tests/test_class_check.py; tests/reworded.py runs the whole suite with the table reworded.
"""
import re
import string
import unittest

from tests.support import ROOT
from verifier import findings
from verifier.findings import SENTENCES, Finding

TEACHER = ROOT / "docs" / "loop" / "TEACHER.md"
HEADING = "## 每种发现"
SEVERITIES = {"fail": "`fail`", "human": "`needs_human`", "remark": "说明（结果不变）", "differs": "`--explain` 的“≠”",
              "packaging": "`packaging`", "incomplete": "`incomplete`", "note": "行下的说明", "aside": "跳过",
              "comment": "成绩文件的评语", "part": "句中的一段"}


def fields_of(template):
    """The field names a template names, in order, each once."""
    return list(dict.fromkeys(name for _, name, _, _ in string.Formatter().parse(template) if name))


def cell(text):
    return text.replace("|", "\\|")


def rendered_table():
    """The Markdown list of every kind, as docs/loop/TEACHER.md「每种发现」shows it after its introduction."""
    lines = ["| 种类 | 结果 | 字段 | 句子 |", "| --- | --- | --- | --- |"]
    lines += [f"| `{kind}` | {SEVERITIES[entry[0]]} | {', '.join(fields_of(entry[1])) or '—'} | {cell(entry[1])} |"
              for kind, entry in SENTENCES.items()]
    lines += ["", "学生自己的反馈和网页里说法不同的种类：", "", "| 种类 | 学生读到的句子 |", "| --- | --- |"]
    lines += [f"| `{kind}` | {cell(entry[2])} |" for kind, entry in SENTENCES.items() if len(entry) > 2]
    return "\n".join(lines)


class TableTest(unittest.TestCase):
    def test_the_teacher_page_lists_every_kind_its_fields_and_its_sentence(self):
        text = TEACHER.read_text(encoding="utf-8")
        section = text.split(f"\n{HEADING}\n", 1)[1]
        table = section[section.index("| 种类 | 结果 |"):].split("\n\n## ", 1)[0].rstrip("\n")
        self.assertEqual(table, rendered_table(),
                         f"docs/loop/TEACHER.md「每种发现」 differs from verifier/findings.py: paste\n{rendered_table()}")

    def test_every_entry_has_a_known_severity_and_a_template_that_formats(self):
        for kind, entry in SENTENCES.items():
            with self.subTest(kind=kind):
                self.assertRegex(kind, r"^[a-z][a-z0-9_]*$")
                self.assertIn(entry[0], SEVERITIES)
                self.assertIn(len(entry), (2, 3))
                for template in entry[1:]:
                    specs = {spec for _, name, spec, _ in string.Formatter().parse(template) if name}
                    self.assertLessEqual({spec for spec in specs if not re.fullmatch(r"\.\d+f", spec)},
                                         set(findings.SPECS))

    def test_the_student_reads_no_field_the_teacher_sentence_names_of_other_people(self):
        for kind in ("shared_record", "shared_clock", "shared_readings"):
            self.assertNotIn("people", fields_of(SENTENCES[kind][2]))
            self.assertIn("people", fields_of(SENTENCES[kind][1]))


class FindingTest(unittest.TestCase):
    def test_a_sentence_is_its_template_with_the_fields_shown_as_the_specs_say(self):
        finding = Finding("schema_wrong", value="loop-run/9\u202e", expected="loop-run/4")
        self.assertEqual(finding.sentence(), SENTENCES["schema_wrong"][1].replace("{value:j}", '"loop-run/9\\u202e"')
                         .replace("{expected}", "loop-run/4"))
        self.assertEqual(str(finding), finding.sentence())

    def test_specs_join_lists_cut_long_values_and_name_a_few(self):
        said = Finding("child_twins", twins=["runs/a-01", "runs/A-01", "runs/á-01", "runs/a\u0301-01"]).sentence()
        self.assertTrue(said.startswith("runs/a-01、runs/A-01、runs/á-01 等 4 个 "), said)
        long = Finding("stop_pair", status="needs_review", reason="x" * 400).sentence()
        self.assertTrue(long.endswith("…（共 400 个字符）"), long)
        self.assertEqual(Finding("pause_in_attempt", number=2, child=0.12345, tool="").sentence().count("0.123"), 1)

    def test_a_finding_in_place_of_a_list_is_said_whole(self):
        said = Finding("candidate_not_scripted", number=1, sample="valid", scenario="permission",
                       script=Finding("script_none"), choice=Finding("script_none")).sentence()
        self.assertIn(Finding("script_none").sentence(), said)  # said whole, not a list of its characters
        self.assertNotIn("、".join(Finding("script_none").sentence()), said)

    def test_findings_of_one_kind_and_fields_are_one_cause(self):
        first = Finding("child_deleted", number=2, child="runs/r-02")
        self.assertEqual(first, Finding("child_deleted", number=2, child="runs/r-02"))
        self.assertNotEqual(first, Finding("child_deleted", number=3, child="runs/r-02"))
        self.assertNotEqual(first, Finding("run_unrecorded", run="runs/r-02"))
        self.assertEqual(len({first, Finding("child_deleted", number=2, child="runs/r-02")}), 1)

    def test_map_changes_every_text_inside_and_keeps_the_kind(self):
        nested = Finding("in_record", record="x/loop-runs/r/loop.json",
                         finding=Finding("unknown_fields", where="x/loop.json", fields=["x/a"], schema="loop-run/4"))
        moved = nested.map(lambda text: text.replace("x/", ""))
        self.assertEqual(moved.kind, "in_record")
        self.assertEqual(list(moved.texts()), ["loop-runs/r/loop.json", "loop.json", "a", "loop-run/4"])
        self.assertTrue(moved.mentions("loop.json"))
        self.assertFalse(moved.mentions("x/"))

    def test_a_kind_without_a_sentence_is_refused_at_once(self):
        with self.assertRaises(KeyError):
            Finding("no_such_kind")

    def test_the_student_reads_their_own_words_where_the_table_gives_them(self):
        finding = Finding("shared_record", people=Finding("people", names=["李四"]), count=1,
                          records=Finding("records", records=["loop-runs/r/loop.json"]))
        self.assertIn("李四", finding.sentence())
        self.assertNotIn("李四", finding.sentence(student=True))
        plain = Finding("child_deleted", number=1, child="runs/r-01")
        self.assertEqual(plain.sentence(student=True), plain.sentence())

    def test_more_than_ten_are_counted_in_one_finding(self):
        shown = findings.at_most([Finding("child_deleted", number=n, child="runs/r") for n in range(13)])
        self.assertEqual(len(shown), 11)
        self.assertEqual((shown[-1].kind, shown[-1].fields), ("more", {"count": 3}))
        self.assertEqual(len(findings.at_most([Finding("more", count=1)] * 10)), 10)


def write_table():
    """Replaces the list in docs/loop/TEACHER.md「每种发现」 with the one rendered from the table."""
    text = TEACHER.read_text(encoding="utf-8")
    head, section = text.split(f"\n{HEADING}\n", 1)
    start = section.index("| 种类 | 结果 |")
    rest = section[start:].split("\n\n## ", 1)
    after = "\n\n## " + rest[1] if len(rest) > 1 else "\n"
    TEACHER.write_bytes(f"{head}\n{HEADING}\n{section[:start]}{rendered_table()}{after}".encode("utf-8"))


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--write"]:  # python3 -m tests.test_findings --write: after changing the table
        write_table()
    else:
        unittest.main()
