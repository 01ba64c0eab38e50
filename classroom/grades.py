"""The grades file: the roster's own file written back (`--grades OUT.csv`) with each checked person's grade and
comment, for the platform's import to read.

Part of verify_loop's class check (classroom/roster.py reads the roster and says whose row each hand-in is). Only
the grade and feedback cells of a Moodle worksheet, and the chosen assignment's column of a Canvas gradebook, are
filled; every other cell, the header, the column order, the quoting and the line ends are kept. A roster without a
grade column of its own (GitHub Classroom, a plain list) gets its columns plus result, grade and comment.

A grade or comment already in the roster is the teacher's (typed after reading the work, or imported from
elsewhere) and is never overwritten: the row is left as it was, and grades_file() names it for stderr and the
report. The exception is what an earlier run of this check wrote into a Moodle worksheet: its comment has the form
of one of the comment kinds (`comment_pass` ..., verifier/findings.py) and its grade is the one that form gives, so
it may be updated after a re-submission. (A Canvas
gradebook holds no comment: an earlier grade there cannot be told from the teacher's and is kept.) The file is
written in UTF-8, with a BOM when the roster had one or was in another encoding (GBK, UTF-16), and with commas
where the roster had tabs: the platforms' upload forms read UTF-8 and commas by default (Moodle's encoding menu
starts at UTF-8 and its separator at a comma; Canvas reads nothing else). A Canvas gradebook gets no BOM: its
importer reads the file as plain UTF-8 and compares the first header cell exactly (`row[0] == "LastName"`), so a
BOM would make a gradebook with split name columns unreadable.

The policy (docs/loop/TEACHER.md): pass = the maximum, fail = 0, incomplete = the maximum times the share of the
six cases that pass (two decimals, half up), needs_human / packaging / missing blank (the platform keeps what it
had). What it shares: classroom/report.py's CASE_NAMES and shortened(), classroom/roster.py's number(), and the
comments' words (verifier/findings.py's table).
"""
import csv
import io
import re
from decimal import ROUND_HALF_UP, Decimal

from classroom.report import CASE_NAMES, shortened
from classroom.roster import number
from verifier.findings import SENTENCES, Finding

DEFAULT_MAXIMUM = Decimal(100)  # for rosters that say no maximum (GitHub Classroom, a plain list)
EXTRA_COLUMNS = ["result", "grade", "comment"]
# the comment kind of each result that gets one; its fields are filled in, and read back by own_comment()
COMMENTS = {result: f"comment_{result}" for result in ("pass", "incomplete", "fail", "packaging")}
EMPTY = ("", "-", "N/A")  # a grade cell that holds nothing (Canvas writes N/A where the assignment is not assigned)


class GradesFile:
    """What --grades writes: TEXT in ENCODING (with a BOM when BOM), and KEPT, the (person, grade, comment) whose
    cells held the teacher's own entries and were left as they were."""

    def __init__(self, text, encoding, kept, bom):
        self.text, self.encoding, self.kept, self.bom = text, encoding, kept, bom


def grade(row, maximum):
    """The grade of ROW by the default policy, or None (the cell is left as it was)."""
    if row["result"] == "pass":
        return maximum
    if row["result"] == "fail":
        return Decimal(0)
    if row["result"] == "incomplete":
        passed = sum(state == "pass" for state in row["cases"].values())
        return incomplete_grade(maximum, passed)
    return None


def incomplete_grade(maximum, passed):
    return (maximum * passed / len(CASE_NAMES)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def comment(row):
    """A short, plain comment about this student only; None where no comment is due."""
    cases, kind = row["cases"], COMMENTS.get(row["result"])
    if kind is None:
        return None
    failed = [case for case in CASE_NAMES if cases[case] == "fail"]
    fields = {"passed": sum(cases[case] == "pass" for case in CASE_NAMES),
              "lacking": [case for case in CASE_NAMES if cases[case] == "missing"],
              "failed": failed or Finding("submission_itself")}
    return Finding(kind, **fields).sentence()


def own_comment(text, maximum):
    """(True, the grade it goes with) when TEXT is a comment this check writes (the grade None: a blank cell),
    else (False, None)."""
    for result, kind in COMMENTS.items():
        pattern = re.sub(r"\\\{(\w+)(?::\w)?\\\}", lambda m: r"(?P<passed>[0-6])" if m[1] == "passed" else ".+",
                         re.escape(SENTENCES[kind][1]))
        match = re.fullmatch(pattern, text.strip(), re.DOTALL)
        if match:
            given = {"pass": maximum, "fail": Decimal(0), "packaging": None}.get(result)
            return True, incomplete_grade(maximum, int(match["passed"])) if result == "incomplete" else given
    return False, None


def teachers_own(grade_cell, feedback_cell, maximum):
    """Whether the cells hold an entry of the teacher's: anything but blanks, or than what this check wrote
    (one of its comments with the very grade that comment goes with)."""
    grade_cell, feedback_cell = grade_cell.strip(), (feedback_cell or "").strip()
    if grade_cell in EMPTY and not feedback_cell:
        return False
    ours, given = own_comment(feedback_cell, maximum) if feedback_cell else (False, None)
    if not ours:
        return True
    return (number(grade_cell) if grade_cell not in EMPTY else None) != given


def shown_grade(value):
    return f"{value:.2f}"


def grades_file(roster):
    """The GradesFile of ROSTER once its rows are known (roster.graded)."""
    kept = []
    if roster.grade is None:
        records = extended(roster, roster.graded)
    else:
        records = [list(record) for record in roster.records]
        for record_number, row in roster.graded.items():
            maximum = roster.maximum.get(record_number) or roster.maximum.get("points") or DEFAULT_MAXIMUM
            record = records[record_number]
            width = max(roster.grade, roster.feedback or 0) + 1
            cells = record + [""] * (width - len(record))
            said = cells[roster.feedback] if roster.feedback is not None else ""
            if cells[roster.grade].strip() == "N/A":
                continue  # Canvas: the assignment is not this student's
            if teachers_own(cells[roster.grade], said, maximum):
                kept.append((row["student"], cells[roster.grade].strip(), said.strip()))
                continue
            fill(record, width, roster, grade(row, maximum), comment(row))
    delimiter = written_delimiter(roster)
    if roster.quote_spaces:
        text = "".join(php_line(record, delimiter) + roster.newline for record in records)
    else:
        out = io.StringIO()
        writer = csv.writer(out, delimiter=delimiter, lineterminator=roster.newline,
                            quoting=csv.QUOTE_ALL if roster.quote_all else csv.QUOTE_MINIMAL)
        writer.writerows(records)
        text = out.getvalue()
    bom = roster.bom and roster.kind != "canvas"
    return GradesFile(("\ufeff" if bom else "") + text, "utf-8", kept, bom)


def written_delimiter(roster):
    """The roster's own delimiter, except a tab (Excel's "Unicode text"): the platforms' imports read a comma (and
    a semicolon), never a tab by default, so it is written with commas."""
    return "," if roster.delimiter == "\t" else roster.delimiter


def fill(record, width, roster, value, said):
    """The grade VALUE and the comment SAID into RECORD (None: the cell is left as it was)."""
    if value is None and said is None:
        return
    record += [""] * (width - len(record))
    if value is not None:
        record[roster.grade] = shown_grade(value)
    if said is not None and roster.feedback is not None:
        record[roster.feedback] = said


def php_line(record, delimiter):
    """RECORD as PHP's fputcsv writes it: a field holding the delimiter, a quote, a backslash or white space is
    quoted (so the lines of a Moodle worksheet the check leaves alone stay byte for byte)."""
    special = set(delimiter + '"\\ \t\r\n')
    return delimiter.join('"' + cell.replace('"', '""') + '"' if special & set(cell) else cell for cell in record)


def extended(roster, by_record):
    """A roster without a grade column: its columns plus result, grade and comment."""
    header = roster.records[0] if roster.kind != "list" else ["name"]
    first = 1 if roster.kind != "list" else 0
    records = [[*header, *EXTRA_COLUMNS]]
    for number_, record in enumerate(roster.records[first:], first):
        row = by_record.get(number_)
        value = grade(row, DEFAULT_MAXIMUM) if row else None
        records.append([*record, row["result"] if row else "", shown_grade(value) if value is not None else "",
                        shortened(comment(row) or "") if row else ""])
    return records
