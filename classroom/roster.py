"""The roster: who is in the class (`--roster FILE`) and whose row each hand-in is.

Part of verify_loop's class check (classroom/grades.py writes the grades file back from what is read here). A
roster is the file a platform gives the teacher, read as it is:

- Moodle's offline grading worksheet (CSV; headers in English or Simplified Chinese, else the columns are found
  by what they hold: the identifier is the column of a word and a number, Grade the column before the maximum);
- Canvas's gradebook export: `Student` (or `LastName`, `FirstName`), `ID`, the SIS columns, `Section`, custom
  columns, one column `Title (id)` per assignment, then totals (`Current Score`, `Final Points`, one per
  assignment group and grading period, `Unposted …`, `Override …`), a `Points Possible` row; which columns
  Canvas's importer reads as assignments follows app/models/gradebook_importer.rb (instructure/canvas-lms);
  with several assignments `--assignment TITLE|ID` says which one is graded;
- GitHub Classroom's roster (`identifier`, `github_username`, `github_id`, `name`);
- a plain list of names, one a line.

The file is read in its own encoding: UTF-8 (with or without BOM), UTF-16 ("Unicode text" from Excel; by its BOM,
or by its zero bytes), else GB18030 (Excel on a Chinese Windows saves GBK). A roster holding the same identifier
twice, more than MAX_ROWS lines or a cell longer than csv's limit is refused with the line named (a broken or
foreign file, never half read). Every person on it is one row (`missing` when they handed nothing in); a hand-in matching nobody, or
more than one person, is listed after them with a note. What it shares: cli.py's plumbing (the capped reading of a
plain file) and classroom/report.py's CASE_NAMES and MISSING.
"""
import csv
import io
import re
from decimal import Decimal, InvalidOperation

from classroom.report import CASE_NAMES, MISSING
from cli import read_evidence
from verifier.findings import Finding

ROSTER_CAP = 16 * 2 ** 20  # a class of thousands is a few hundred KiB
MAX_ROWS = 20_000          # the biggest course of a platform has a few thousand people
MOODLE_HEADERS = {  # the worksheet's columns, in English and in Simplified Chinese (the zh_cn language pack)
    "identifier": ("identifier", "标识符", "识别码", "编号"),
    "name": ("full name", "姓名", "全名"),
    "email": ("email address", "电子邮件地址", "电子邮件", "email"),
    "grade": ("grade", "成绩", "分数"),
    "maximum": ("maximum grade", "最高分", "满分", "最高成绩", "最大成绩"),
    "feedback": ("feedback comments", "评语反馈", "反馈评语", "评语", "反馈意见"),
}
PARTICIPANT = re.compile(r"\s*\S+?\s*([0-9]+)\s*")  # "Participant 123456", "参与人123456"
CANVAS_ASSIGNMENT = re.compile(r"(.*)\s\(([0-9]+)\)", re.DOTALL)  # Assignment.title_and_id
# Columns the importer drops before it reads assignments (NON_ASSIGNMENT_COLUMN_HEADERS, matched anywhere in the
# title: "Unposted …", "Assignments Current Score", "Current Score (Fall 2026)")
CANVAS_TOTALS = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
                           "Override Score|Override Grade|Override Status")
CANVAS_HIDDEN = re.compile(r"\s*(Muted|Manual Posting.*)?\s*", re.IGNORECASE)  # the row of hidden assignments
LIST_HEADERS = {"name", "names", "姓名", "名字", "学生"}
SEVERAL = "several"  # whose() of a hand-in that matches more than one person alike


class RosterError(Exception):
    """A roster that cannot be used: the message says why, in Chinese, naming what was found."""


class Person:
    """One person on the roster: RECORD, their record's number; LINE, the line a text editor shows it on."""

    def __init__(self, record, name, person_id, names, line=None):
        self.record, self.name, self.id = record, name, person_id
        self.line = line if line is not None else record + 1
        self.keys = {key for key in map(normal, [name, person_id, *names]) if key}


class Roster:
    """The file as read (encoding, BOM, line ends, quoting, records) and its people."""

    def __init__(self, path, kind, text, bom, encoding):
        self.path, self.kind, self.bom, self.encoding = path, kind, bom, encoding
        self.newline = "\r\n" if "\r\n" in text else "\n"
        first = text.split("\n", 1)[0]
        self.delimiter = max(",\t;", key=first.count) if kind != "list" else ","
        self.quote_all = first.startswith('"') and first.rstrip("\r").endswith('"')
        self.records = [] if kind == "list" else parsed(text, self.delimiter)
        # Moodle writes with PHP's fputcsv, which quotes a field for a space too: "Full name", "Participant 1"
        self.quote_spaces = not self.quote_all and any(
            " " in title and f'"{title}"' in first for title in (self.records or [[]])[0])
        self.people, self.grade, self.feedback, self.maximum = [], None, None, {}
        self.graded = {}  # record number -> the row shown for the person of that record
        self.converted = encoding not in ("utf-8", "utf-8-sig")  # written back as UTF-8 with a BOM, said


def normal(text):
    """A name as it is matched: case, spaces and the marks platforms put into names left out."""
    return re.sub(r"[\s,._'·-]+", "", str(text)).casefold()


# --- reading -------------------------------------------------------------------------------------

def read_roster(parser, path, for_grades=False, assignment=None):
    """The Roster of PATH; a roster that cannot be used is a usage error (exit 2) saying why."""
    try:
        return roster_of(path, for_grades, assignment)
    except RosterError as exc:
        parser.error(f"名单 {path} {exc}")
    except OSError as exc:
        parser.error(f"名单 {path} 无法读取（{type(exc).__name__}）：请给出学习平台下载的名单文件。")


def roster_of(path, for_grades=False, assignment=None):
    data = read_evidence(path, ROSTER_CAP)
    text, encoding = decoded(data)
    bom = encoding != "utf-8" or data.startswith(b"\xef\xbb\xbf")
    text = text.removeprefix("\ufeff")
    lines = text.count("\n") + (not text.endswith("\n"))  # counted before anything is parsed
    if lines > MAX_ROWS:
        raise RosterError(f"有 {lines:,} 行，超过了核对的上限 {MAX_ROWS:,} 行：这不像一个班的名单。"
                          "请只导出这门课（这次作业）的名单后再给出。")
    first = text.split("\n", 1)[0]
    delimited = any(mark in first for mark in ",\t;")
    if "github_username" in first.casefold():
        roster = Roster(path, "github", text, bom, encoding)
        github_people(roster)
    elif delimited and canvas_header(parsed(first, max(",;", key=first.count))[0] if first.strip() else []):
        roster = Roster(path, "canvas", text, bom, encoding)
        canvas_people(roster, for_grades, assignment)
    elif delimited:
        roster = Roster(path, "moodle", text, bom, encoding)
        moodle_people(roster)
    else:
        roster = Roster(path, "list", text, bom, encoding)
        named = [(number_, line.strip()) for number_, line in enumerate(text.splitlines(), 1) if line.strip()]
        named = named[1 if named and named[0][1].casefold() in LIST_HEADERS else 0:]
        roster.records = [[name] for _, name in named]
        roster.people = [Person(index, name, "", [], line) for index, (line, name) in enumerate(named)]
    if assignment is not None and roster.kind != "canvas":
        raise RosterError("不是 Canvas 的成绩册：--assignment 只用来在 Canvas 成绩册的几个作业列里选一列，请去掉它。")
    if not roster.people:
        raise RosterError("里没有找到任何人：请给出学习平台下载的名单（Moodle 的评分工作表、Canvas 的成绩册、"
                          "GitHub Classroom 的 roster，或每行一个名字的文本）。")
    refuse_twins(roster)
    return roster


def decoded(data):
    """(text, encoding) of a roster: UTF-8 (with or without BOM), UTF-16 by its BOM (or by the zero bytes of its
    ASCII letters when it has none), else GB18030 (Excel on a Chinese Windows)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        candidates = ("utf-16",)
    elif b"\x00" in data[:4096]:  # no text of UTF-8 or GBK holds a zero byte; UTF-16 does in every ASCII letter
        head = data[:4096]  # little-endian puts them second in each pair of bytes, big-endian first
        candidates = ("utf-16-le" if head[1::2].count(0) >= head[::2].count(0) else "utf-16-be",)
    else:
        candidates = ("utf-8", "gb18030")
    for encoding in candidates:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise RosterError("既不是 UTF-8、UTF-16 也不是 GBK 编码的文本：请按 UTF-8 另存为 CSV 后再给出。")


def parsed(text, delimiter):
    """The records of TEXT; a cell beyond csv's limit (or an unclosed quote running to the end) is refused."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return list(reader)
    except csv.Error:
        raise RosterError(f"第 {reader.line_num} 行有一格超过 {csv.field_size_limit():,} 个字符（或引号没有配对）："
                          "学习平台导出的名单不会这样。请重新下载名单，或检查这一行。") from None


def refuse_twins(roster):
    """Two records of one identifier (a participant, a Canvas ID, a login, a name in a plain list) cannot be
    told apart: one would take the other's hand-in and grade. Refused, naming both lines."""
    seen = {}
    for person in roster.people:
        key = normal(person.id or person.name)
        if key in seen:
            plain = "只有名字的名单分不清同名的人：请给出带编号的名单（例如 Moodle 的评分工作表）" \
                if roster.kind == "list" else "请重新下载名单，或删掉重复的一行"
            raise RosterError(f"里第 {seen[key].line} 行和第 {person.line} 行是同一个人（{person.id or person.name}）："
                              f"核对分不清哪一份提交和成绩属于哪一行。{plain}。")
        seen[key] = person


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
    """TEXT as a number, a decimal comma read as a point ("83,33": Moodle and Canvas in such a language)."""
    text = str(text).strip()
    if re.fullmatch(r"-?[0-9]+,[0-9]+", text):
        text = text.replace(",", ".")
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


# --- Canvas --------------------------------------------------------------------------------------

def canvas_header(header):
    """The importer's test of a gradebook's first row (row_has_student_headers?): Student then ID, or LastName,
    FirstName then ID."""
    cells = [cell.lstrip("\ufeff") for cell in header]
    return ((len(cells) > 3 and "Student" in cells[0] and "ID" in cells[1])
            or (len(cells) > 4 and "LastName" in cells[0] and "FirstName" in cells[1] and "ID" in cells[2]))


def student_columns(header):
    """How many columns before the custom and assignment columns hold who the student is (update_column_count):
    the name (one, or LastName and FirstName), ID, the SIS columns, Integration ID, Root Account, Section."""
    split = header[0] == "LastName" and header[1] == "FirstName"
    count = 4 if split else 3
    at = count - 1
    if re.search(r"SIS\s+Login\s+ID", header[at] if at < len(header) else ""):
        count += 1
    elif re.search(r"SIS\s+User\s+ID", header[at] if at < len(header) else "") and \
            re.search(r"SIS\s+Login\s+ID", header[at + 1] if at + 1 < len(header) else ""):
        count += 2 + (1 if re.search(r"Integration\s+ID", header[at + 2] if at + 2 < len(header) else "") else 0)
        if re.search(r"Root\s+Account", header[count - 1] if count - 1 < len(header) else ""):
            count += 1
    return split, count


def canvas_assignments(header):
    """[(column, title, assignment id)] of the columns Canvas's importer reads as assignments: after the student's
    columns, every `Title (id)` that is no total, grading-period total or override column."""
    _, first = student_columns(header)
    found = []
    for index in range(first, len(header)):
        match = CANVAS_ASSIGNMENT.fullmatch(header[index])
        if match and not CANVAS_TOTALS.search(header[index]):
            found.append((index, match[1], match[2]))
    return found


def chosen_assignment(header, for_grades, wanted):
    """The column --grades fills: the one assignment, or the one --assignment names (its id or its title)."""
    assignments = canvas_assignments(header)
    listed = "、".join(header[index] for index, _, _ in assignments) or "没有"
    if wanted is not None:
        picked = [item for item in assignments if wanted.strip() in (item[2], item[1].strip(), header[item[0]])]
        if len(picked) != 1:
            raise RosterError(f"里没有{'唯一的' if picked else ''}叫 {wanted} 的作业列：作业列是 {listed}。"
                              "请用 --assignment 给出其中一列的编号（括号里的数字）或标题。")
        return picked[0][0]
    if for_grades and len(assignments) != 1:
        hint = ("请用 --assignment 给出要写成绩的那一列的编号（括号里的数字）或标题，例如 --assignment "
                f"{assignments[0][2]}。" if assignments else "请在 Canvas 里导出包含这次作业的成绩册。")
        raise RosterError(f"里有 {len(assignments)} 个作业列（{listed}）：不知道成绩该写进哪一列。{hint}")
    return assignments[0][0] if assignments else None


def canvas_people(roster, for_grades, wanted=None):
    """The gradebook's students (the rows after the header that are no Points Possible or hidden-assignment row)."""
    header = [roster.records[0][0].lstrip("\ufeff"), *roster.records[0][1:]]
    split, _ = student_columns(header)
    roster.grade = chosen_assignment(header, for_grades, wanted)
    at_id = 2 if split else 1  # the importer finds the student by this column first
    ids = {role: column(header, [role]) for role in ("sis user id", "sis login id")}
    for index, record in enumerate(roster.records[1:], 1):
        cells = record + [""] * (len(header) - len(record))
        if "Points Possible" in cells[0]:
            if roster.grade is not None:
                roster.maximum["points"] = number(cells[roster.grade])
            continue
        if all(CANVAS_HIDDEN.fullmatch(cell) for cell in cells):
            continue  # the hidden-assignments row, or an empty line
        name = f"{cells[1]} {cells[0]}".strip() if split else cells[0]
        flipped = " ".join(reversed([part.strip() for part in name.split(",")]))  # "Zhang, San" is San Zhang
        others = [cells[ids[role]] for role in ids if ids[role] is not None]
        roster.people.append(Person(index, name, cells[at_id], [flipped, *others]))


def github_people(roster):
    header = [title.strip().casefold() for title in roster.records[0]]
    at = {role: header.index(role) if role in header else None
          for role in ("identifier", "github_username", "github_id", "name")}
    for index, record in enumerate(roster.records[1:], 1):
        cells = record + [""] * (len(header) - len(record))
        names = [cells[at[role]] for role in at if at[role] is not None]
        login = cells[at["github_username"]] if at["github_username"] is not None else ""
        shown = (at["name"] is not None and cells[at["name"]]) or login or names[0]
        if any(names):
            roster.people.append(Person(index, shown, login, names))


# --- rows ----------------------------------------------------------------------------------------

def rows_for(roster, checked):
    """[(row, Checked or None)]: one per person on ROSTER in its order (missing when nobody's hand-in is theirs),
    then the hand-ins that match nobody (or two people alike), each with a note saying so."""
    index = {}
    for number_, person in enumerate(roster.people):
        for key in person.keys:
            index.setdefault(key, []).append(number_)
    mine, strangers = {}, []
    for item in checked:
        who = whose(item, roster, index)
        if who is None:
            strangers.append(stranger(item, "roster_nobody"))
        elif who == SEVERAL:
            strangers.append(stranger(item, "roster_several"))
        elif who in mine:
            strangers.append(stranger(item, "roster_taken"))
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
    """The number of the one person on the roster the hand-in is by any of its names, ids settling a tie;
    None when it matches nobody, "several" when it matches more than one person alike."""
    keys = [key for key in map(normal, item.names) if key]
    found = {number_ for key in keys for number_ in index.get(key, [])}
    if len(found) > 1 and item.student_id:
        found = {number_ for number_ in found if normal(roster.people[number_].id) == normal(item.student_id)}
    if len(found) > 1:
        return SEVERAL
    return found.pop() if found else None


def stranger(item, kind):
    """The row of a hand-in that matches nobody on the roster, its note (the finding KIND) first."""
    note = Finding(kind)
    item.notes.insert(0, note)
    item.row["notes"] = [note.sentence(), *item.row.get("notes", [])]
    item.row["note_kinds"] = [kind, *item.row.get("note_kinds", [])]
    return item.row, item


def missing_row(person):
    return {"student": person.name, "id": person.id, "result": MISSING,
            "cases": {case: "missing" for case in CASE_NAMES}, "loops": 0, "problems": [], "kinds": []}
