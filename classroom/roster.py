"""The roster: who is in the class (`--roster FILE`), whose row each hand-in is, and the grades file written back.

Part of verify_loop's class check. A roster is the file a platform gives the teacher, read as it is:

- Moodle's offline grading worksheet (CSV; headers in English or Simplified Chinese, else the columns are found
  by what they hold: the identifier is the column of a word and a number, Grade the column before the maximum);
- Canvas's gradebook export (`Student`, `ID`, `SIS Login ID` ..., one column `Name (id)` per assignment, a second
  row `Points Possible`);
- GitHub Classroom's roster (`identifier`, `github_username`, `github_id`, `name`);
- a plain list of names, one a line.

Every person on it is one row (`missing` when they handed nothing in); a hand-in matching nobody is listed after
them with a note. `--grades OUT.csv` writes the roster's own file back with only its grade and feedback cells
filled (every other cell, the header, the column order, the encoding, a BOM and the line ends kept); a roster
without a grade column of its own gets its columns plus result, grade and comment. The policy (docs/loop/TEACHER.md):
pass = the maximum, fail = 0, incomplete = the maximum times the share of the six cases that pass (two decimals,
half up), needs_human / packaging / missing blank (the platform keeps what it had). What it shares: cli.py's
plumbing (the capped reading of a plain file) and classroom/report.py's CASE_NAMES, MISSING and shortened().
"""
import csv
import io
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from classroom.report import CASE_NAMES, MISSING, shortened
from cli import read_evidence

ROSTER_CAP = 16 * 2 ** 20  # a class of thousands is a few hundred KiB
DEFAULT_MAXIMUM = Decimal(100)  # for rosters that say no maximum (GitHub Classroom, a plain list)
MOODLE_HEADERS = {  # the worksheet's columns, in English and in Simplified Chinese
    "identifier": ("identifier", "标识符", "识别码", "编号"),
    "name": ("full name", "姓名", "全名"),
    "email": ("email address", "电子邮件地址", "电子邮件", "email"),
    "grade": ("grade", "成绩", "分数"),
    "maximum": ("maximum grade", "最高分", "满分", "最高成绩", "最大成绩"),
    "feedback": ("feedback comments", "反馈评语", "评语", "反馈意见"),
}
PARTICIPANT = re.compile(r"\s*\S+?\s*([0-9]+)\s*")  # "Participant 123456", "参与者 123456"
CANVAS_ASSIGNMENT = re.compile(r".*\(([0-9]+)\)\s*")
LIST_HEADERS = {"name", "names", "姓名", "名字", "学生"}
EXTRA_COLUMNS = ["result", "grade", "comment"]


class RosterError(Exception):
    """A roster that cannot be used: the message says why, in Chinese, naming what was found."""


class Person:
    def __init__(self, record, name, person_id, names):
        self.record, self.name, self.id = record, name, person_id
        self.keys = {key for key in map(normal, [name, person_id, *names]) if key}


class Roster:
    """The file as read (encoding, BOM, line ends, quoting, records) and its people."""

    def __init__(self, path, kind, text, bom, encoding):
        self.path, self.kind, self.bom, self.encoding = path, kind, bom, encoding
        self.newline = "\r\n" if "\r\n" in text else "\n"
        first = text.lstrip("\ufeff").split("\n", 1)[0]
        self.delimiter = max(",\t;", key=first.count) if kind != "list" else ","
        self.quote_all = first.startswith('"') and first.rstrip("\r").endswith('"')
        self.records = [] if kind == "list" else list(csv.reader(io.StringIO(text, newline=""),
                                                                  delimiter=self.delimiter))
        # Moodle writes with PHP's fputcsv, which quotes a field for a space too: "Full name", "Participant 1"
        self.quote_spaces = not self.quote_all and any(
            " " in title and f'"{title}"' in first for title in (self.records or [[]])[0])
        self.people, self.grade, self.feedback, self.maximum = [], None, None, {}
        self.graded = {}  # record number -> the row shown for the person of that record


def normal(text):
    """A name as it is matched: case, spaces and the marks platforms put into names left out."""
    return re.sub(r"[\s,._'·-]+", "", str(text)).casefold()


# --- reading -------------------------------------------------------------------------------------

def read_roster(parser, path, for_grades=False):
    """The Roster of PATH; a roster that cannot be used is a usage error (exit 2) saying why."""
    try:
        return roster_of(path, for_grades)
    except RosterError as exc:
        parser.error(f"名单 {path} {exc}")
    except OSError as exc:
        parser.error(f"名单 {path} 无法读取（{type(exc).__name__}）：请给出学习平台下载的名单文件。")


def roster_of(path, for_grades):
    data = read_evidence(path, ROSTER_CAP)
    text, encoding = decoded(data)
    bom = data.startswith(b"\xef\xbb\xbf")
    text = text.removeprefix("\ufeff")
    first = text.split("\n", 1)[0].casefold()
    delimited = any(mark in first for mark in ",\t;")
    if "github_username" in first:
        roster = Roster(path, "github", text, bom, encoding)
        github_people(roster)
    elif delimited and "points possible" in text[:20_000].casefold():
        roster = Roster(path, "canvas", text, bom, encoding)
        canvas_people(roster, for_grades)
    elif delimited:
        roster = Roster(path, "moodle", text, bom, encoding)
        moodle_people(roster)
    else:
        roster = Roster(path, "list", text, bom, encoding)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        roster.records = [[line] for line in lines[1 if lines and lines[0].casefold() in LIST_HEADERS else 0:]]
        roster.people = [Person(index, line[0], "", []) for index, line in enumerate(roster.records)]
    if not roster.people:
        raise RosterError("里没有找到任何人：请给出学习平台下载的名单（Moodle 的评分工作表、Canvas 的成绩册、"
                          "GitHub Classroom 的 roster，或每行一个名字的文本）。")
    return roster


def decoded(data):
    """(text, encoding) of a roster: UTF-8 (with or without BOM), else GB18030 (Excel on Chinese Windows)."""
    for encoding in ("utf-8", "gb18030"):
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise RosterError("既不是 UTF-8 也不是 GBK 编码的文本：请按 UTF-8 另存为 CSV 后再给出。")


def column(header, names):
    wanted = {name.casefold() for name in names}
    return next((index for index, title in enumerate(header) if title.strip().casefold() in wanted), None)


def moodle_people(roster):
    """The worksheet's people by its Identifier ("Participant 123456": the number is the participant id)."""
    header, body = roster.records[0], [record for record in roster.records[1:] if any(record)]
    found = {role: column(header, names) for role, names in MOODLE_HEADERS.items()}
    if found["identifier"] is None:
        found["identifier"] = by_values(header, body, lambda value: PARTICIPANT.fullmatch(value))
    if found["maximum"] is None:
        found["maximum"] = by_values(header, body, lambda value: number(value) is not None and number(value) > 0,
                                     same=True)
    if found["grade"] is None and found["maximum"]:
        found["grade"] = found["maximum"] - 1
    if found["identifier"] is None or found["grade"] is None:
        raise RosterError(f"认不出是哪种名单：找到的列是 {'、'.join(title or '（空）' for title in header)}。"
                          "请给出 Moodle 的离线评分工作表、Canvas 的成绩册导出、GitHub Classroom 的 roster，或每行一个名字的文本。")
    roster.grade = found["grade"]
    roster.feedback = found["feedback"]  # unknown in this language: comments stay in the feedback files only
    for index, record in enumerate(roster.records[1:], 1):
        cells = record + [""] * (len(header) - len(record))
        match = PARTICIPANT.fullmatch(cells[found["identifier"]])
        if not match:
            continue
        name = cells[found["name"]] if found["name"] is not None else match[1]
        email = cells[found["email"]] if found["email"] is not None else ""
        roster.people.append(Person(index, name, match[1], [email]))
        roster.maximum[index] = number(cells[found["maximum"]]) if found["maximum"] is not None else None


def by_values(header, body, holds, same=False):
    """The first column whose every non-empty value HOLDS (SAME: and is one value throughout), or None."""
    for index in range(len(header)):
        values = [record[index].strip() for record in body if index < len(record) and record[index].strip()]
        if values and all(holds(value) for value in values) and (not same or len(set(values)) == 1):
            return index
    return None


def number(text):
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def canvas_people(roster, for_grades):
    """The gradebook's students; the assignment's column is the one grade column (several: which one is unknown)."""
    header = roster.records[0]
    assignments = [index for index, title in enumerate(header) if CANVAS_ASSIGNMENT.fullmatch(title)]
    if for_grades and len(assignments) != 1:
        named = "、".join(header[index] for index in assignments) or "没有"
        raise RosterError(f"里有 {len(assignments)} 个作业列（{named}）：不知道成绩该写进哪一列。请在 Canvas 里只导出这次作业的列，"
                          "或删掉别的作业列后再给出。")
    roster.grade = assignments[0] if assignments else None
    ids = {role: column(header, [role]) for role in ("student", "id", "sis user id", "sis login id")}
    for index, record in enumerate(roster.records[1:], 1):
        cells = record + [""] * (len(header) - len(record))
        if cells[0].strip().casefold() in ("points possible", "") or ids["student"] is None:
            if cells[0].strip().casefold() == "points possible" and roster.grade is not None:
                roster.maximum["points"] = number(cells[roster.grade])
            continue
        name = cells[ids["student"]]
        flipped = " ".join(reversed([part.strip() for part in name.split(",")]))  # "Zhang, San" is San Zhang
        others = [cells[ids[role]] for role in ("sis user id", "sis login id") if ids[role] is not None]
        roster.people.append(Person(index, name, cells[ids["id"]] if ids["id"] is not None else "",
                                    [flipped, *others]))


def github_people(roster):
    header = [title.strip().casefold() for title in roster.records[0]]
    at = {role: header.index(role) if role in header else None
          for role in ("identifier", "github_username", "github_id", "name")}
    for index, record in enumerate(roster.records[1:], 1):
        cells = record + [""] * (len(header) - len(record))
        names = [cells[at[role]] for role in at if at[role] is not None]
        login = cells[at["github_username"]]
        shown = (at["name"] is not None and cells[at["name"]]) or login or names[0]
        if any(names):
            roster.people.append(Person(index, shown, login, names))


# --- rows ----------------------------------------------------------------------------------------

def rows_for(roster, checked):
    """[(row, Checked or None)]: one per person on ROSTER in its order (missing when nobody's hand-in is theirs),
    then the hand-ins that match nobody, each with a note saying so."""
    index = {}
    for number_, person in enumerate(roster.people):
        for key in person.keys:
            index.setdefault(key, []).append(number_)
    mine, strangers = {}, []
    for item in checked:
        who = whose(item, roster, index)
        if who is None or who in mine:
            why = "名单上的这个人已有一份提交" if who is not None else "名单里没有与这份提交对应的人"
            strangers.append(stranger(item, why))
        else:
            mine[who] = item
    rows = []
    for number_, person in enumerate(roster.people):
        item = mine.get(number_)
        if item is None:
            rows.append((missing_row(person), None))
        else:
            item.student, item.student_id = person.name, person.id or item.student_id
            item.row.update(student=item.student, id=item.student_id)
            rows.append((item.row, item))
        roster.graded[person.record] = rows[-1][0]
    return rows + strangers


def whose(item, roster, index):
    """The number of the one person on the roster the hand-in is by any of its names; ids settle a tie."""
    keys = [key for key in map(normal, item.names) if key]
    found = {number_ for key in keys for number_ in index.get(key, [])}
    if len(found) > 1 and item.student_id:
        found = {number_ for number_ in found if normal(roster.people[number_].id) == normal(item.student_id)}
    return found.pop() if len(found) == 1 else None


def stranger(item, why):
    note = f"不在名单：{why}。"
    item.notes.insert(0, note)
    item.row["notes"] = [note, *item.row.get("notes", [])]
    return item.row, item


def missing_row(person):
    return {"student": person.name, "id": person.id, "result": MISSING,
            "cases": {case: "missing" for case in CASE_NAMES}, "loops": 0, "problems": []}


# --- grades --------------------------------------------------------------------------------------

def grade(row, maximum):
    """The grade of ROW by the default policy, or None (the cell is left as it was)."""
    if row["result"] == "pass":
        return maximum
    if row["result"] == "fail":
        return Decimal(0)
    if row["result"] == "incomplete":
        passed = sum(state == "pass" for state in row["cases"].values())
        return (maximum * passed / len(CASE_NAMES)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return None


def comment(row):
    """A short, plain comment about this student only; None where no comment is due."""
    cases = row["cases"]
    passed = [case for case in CASE_NAMES if cases[case] == "pass"]
    if row["result"] == "pass":
        return "六个情景都有通过的循环。内容是否合适仍由老师审阅。"
    if row["result"] == "incomplete":
        lacking = "、".join(case for case in CASE_NAMES if cases[case] == "missing")
        return f"通过 {len(passed)}/6 个情景，缺少：{lacking}。补跑缺少的情景后重新打包提交。"
    if row["result"] == "fail":
        failed = "、".join(case for case in CASE_NAMES if cases[case] == "fail") or "提交本身"
        return f"有记录与证据不符（{failed}），详见反馈文件。"
    if row["result"] == "packaging":
        return "没能打开你的提交，还没有核对：请按 README「交作业」用 --pack 打包后重新提交。"
    return None


def shown_grade(value):
    return f"{value:.2f}"


def grades_file(roster):
    """(the text of the grades file, its encoding): the roster's own file with its grade cells filled."""
    by_record = roster.graded
    if roster.grade is None:
        records = extended(roster, by_record)
    else:
        records = [list(record) for record in roster.records]
        for record_number, row in by_record.items():
            maximum = roster.maximum.get(record_number) or roster.maximum.get("points") or DEFAULT_MAXIMUM
            value, said = grade(row, maximum), comment(row)
            record = records[record_number]
            record += [""] * (max(roster.grade, roster.feedback or 0) + 1 - len(record))
            if value is not None:
                record[roster.grade] = shown_grade(value)
            if said is not None and roster.feedback is not None:
                record[roster.feedback] = said
    if roster.quote_spaces:
        text = "".join(php_line(record, roster.delimiter) + roster.newline for record in records)
    else:
        out = io.StringIO()
        writer = csv.writer(out, delimiter=roster.delimiter, lineterminator=roster.newline,
                            quoting=csv.QUOTE_ALL if roster.quote_all else csv.QUOTE_MINIMAL)
        writer.writerows(records)
        text = out.getvalue()
    return ("\ufeff" if roster.bom else "") + text, roster.encoding


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
