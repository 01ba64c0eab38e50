"""What the class check writes for people: the table, the Markdown report, the CSV, one feedback file per student.

Part of verify_loop's class check (classroom/check.py decides every result; this file only renders them and guards
where they are written). Everything a student controls (entry names, loop and file names, strings from records)
is escaped for where it goes: on the console, in the CSV and in Markdown every character cli.visible() escapes (C0
and C1 controls, bidirectional and other invisible characters) is shown as its escape; in Markdown `|`, backticks,
HTML and the other marks are escaped too; a CSV cell that a spreadsheet would run as a formula is neutralised; a
long string is cut with its length shown. (stdout's one JSON line per submission
is cli.print_json's, the same characters escaped the JSON way.) What it shares: cli.py's plumbing (paths shown from
the current folder, the kinds of file-system entries, the one rule of what is shown escaped: visible()),
verifier/records.py's CASES and is_link(), and classroom/intake.py's list of Windows device names (a feedback file
must not be called CON.md).
"""
import csv
import io
import os
import re
from pathlib import Path

from classroom.intake import windows_device
from cli import display_path, entry_kind, visible
from verifier.findings import Finding
from verifier.page import FIRST_LINE
from verifier.records import CASES, disk_key, is_link

CASE_NAMES = [case for case, _, _ in CASES]
RESULTS = ("pass", "incomplete", "fail", "needs_human", "packaging")
MISSING = "missing"  # with a roster only: a person on it who handed nothing in (未提交)
LIMIT = 500           # characters of one problem a person is shown; the rest is said by its length
NAME_LIMIT = 80       # characters of a name in a table cell
NAME_BYTES = 240      # UTF-8 bytes of a file name's stem: with "-99.md" within the 255 every disk holds
MARKDOWN_MARKS = set("\\`*[]<>|&#~!{}")
# `_` starts or ends emphasis only beside a space or a mark: inside a word (verify_loop, needs_human) it stays as it is
LONE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
REPORT_TITLE = "# 全班核对："        # the first line of every report this check writes: how an old one is known
FEEDBACK_TITLE = "# 作业核对反馈："
CSV_HEADER = ["student", "id", "result", *CASE_NAMES, "loops", "problems", "kinds"]
# the current version and the earlier ones, an earlier CSV of this check is known by
EARLIER_CSV_HEADERS = (CSV_HEADER, CSV_HEADER[:-1], ["student", "result", *CASE_NAMES, "loops"])
NEXT_STEP = {
    "pass": "六个情景都有通过的循环，不需要再做什么。内容是否合适仍由老师审阅（semantic_review: pending）。",
    "incomplete": "请在自己的工作区里补跑缺少的情景（README「六个情景」里那一行的命令），然后重新打包提交"
                  "（python3 verify_loop.py --pack 姓名.zip）。",
    "fail": "请不要改写任何记录：用课程原样的文件、换一个新名称重新运行上面点到的情景，"
            "先用 python3 verify_loop.py --pack 姓名.zip 自查，再重新提交。",
    "needs_human": "上面的情况要由老师看过再定，暂时不用重新提交；老师可能会找你了解情况。",
    "packaging": "老师没能打开你的提交，所以什么都还没有核对。请在自己的工作区里运行 "
                 "python3 verify_loop.py --pack 姓名.zip，上传得到的 ZIP。",
}


# --- escaping ------------------------------------------------------------------------------------

def shortened(text, limit=LIMIT):
    """TEXT itself up to LIMIT characters; a longer one is cut there and its length said. None: no limit."""
    text = str(text)
    return text if limit is None or len(text) <= limit else f"{text[:limit]}…（共 {len(text)} 个字符）"


def cut(text, limit=LIMIT):
    """TEXT on one line as a person must see it: escapes for what cannot be shown, cut beyond LIMIT."""
    return visible(shortened(text, limit))


def console_cell(text):
    return cut(text, NAME_LIMIT).replace("|", "\\|")


def markdown(text, limit=LIMIT):
    """Plain text inside Markdown: every mark that could start markup, HTML or a table cell is escaped."""
    escaped = "".join("\\" + ch if ch in MARKDOWN_MARKS else ch for ch in cut(text, limit))
    return LONE_UNDERSCORE.sub(r"\\_", escaped)


def markdown_cell(text):
    return markdown(text, NAME_LIMIT)


def markdown_code(text):
    """TEXT as inline code: fenced by more backticks than it holds, so a backtick cannot end it."""
    text = cut(text)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def spreadsheet_cell(text, limit=LIMIT):
    """A CSV cell a spreadsheet shows as text: one that would start a formula gets a leading '."""
    text = cut(text, limit)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


# --- the table, the totals, one row --------------------------------------------------------------

def table(rows, cell):
    """The student x case table as Markdown (readable as plain text on a console); a name and an id through CELL."""
    header = ["学生", "学号", "结果", *CASE_NAMES, "循环数"]
    body = [[cell(row["student"]), cell(row["id"]), row["result"], *row["cases"].values(), str(row["loops"])]
            for row in rows]
    return ["| " + " | ".join(cells) + " |" for cells in [header, ["---"] * len(header), *body]]


def totals(rows, with_roster=False):
    """The class's totals line; WITH_ROSTER adds the people who handed nothing in."""
    results = RESULTS + ((MISSING,) if with_roster else ())
    counts = {result: sum(row["result"] == result for row in rows) for result in results}
    return f"全班 {len(rows)} 人：" + "，".join(f"{result} {counts[result]}" for result in results) + "。"


def row_lines(row):
    """What the console says under the table for one submission that did not pass or carries notes."""
    if row["result"] in ("pass", MISSING) and not row.get("notes"):
        return []
    reasons = [f"  - {cut(problem, None)}" for problem in row["problems"]]  # cut once already, when the row was made
    notes = [f"  说明：{cut(note, None)}" for note in row.get("notes", [])]
    return [f"{cut(row['student'], NAME_LIMIT)}：{row['result']}", *reasons, *notes]


def row_text(row):
    """One submission's row exactly as the teacher's console shows it: the table with its row, then its reasons."""
    return "\n".join(table([row], console_cell) + row_lines(row))


# --- the Markdown report -------------------------------------------------------------------------

def set_aside(entry, why, shown=cut, text=cut):
    """What is said of the entry ENTRY that is no submission of its own: WHY (a finding: a receipt, a note, a
    roster ...); the entry through SHOWN, the reason through TEXT."""
    return Finding("set_aside", entry=shown(entry), why=text(said(why))).sentence()


def said(finding, student=False):
    """A finding's sentence as every output shows it: cli.visible()'s escapes (a student chose the names in it)."""
    return visible(finding.sentence(student))


def class_report(class_shown, course_label, rows, aside=(), note="", with_roster=False, said=()):
    """The Markdown report; ROWS: (row, its Checked or None for a person who handed nothing in); ASIDE: (entry
    shown, why) of each entry set aside; NOTE: a sentence about the whole class (the course version); SAID: the
    sentences about the outputs (a teacher's own grades kept, the grades file's encoding)."""
    shown_rows = [row for row, _ in rows]
    lines = [f"{REPORT_TITLE}{markdown(class_shown)}", "",
             f"对照的是{course_label}（笔记、样例、受监视文件），不用学生提交里的副本。"
             "每位学生一节，节里的路径都相对于这位学生的提交。", "",
             totals(shown_rows, with_roster), "", *([markdown(note, None), ""] if note else []),
             *table(shown_rows, markdown_cell), ""]
    lines += [f"- {set_aside(entry, why, markdown_code, markdown)}" for entry, why in aside] + ([""] if aside else [])
    lines += [f"- {markdown(sentence, None)}" for sentence in said] + ([""] if said else [])
    for row, item in rows:
        lines += student_section(item, "##") if item else [f"## {heading(row)}", "", "没有提交（未提交）。", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def heading(row):
    number = f"（学号 {markdown(row['id'], NAME_LIMIT)}）" if row["id"] else ""
    return f"{markdown(row['student'], NAME_LIMIT)}{number}：{row['result']}"


def student_section(item, level, for_student=None):
    """A submission's section: where it came from, its reasons, then each loop that did not simply pass.
    FOR_STUDENT: the section is the student's own, every text through that function (it hides the teacher's
    folders); None: the teacher's."""
    private = for_student or (lambda text: text)
    entry = item.entry_name if for_student else item.entry
    lines = [f"{level} {heading(item.row)}", "", f"提交：{markdown_code(entry)}（{markdown(item.source)}）"
             + (f"，工作区在其中的 {markdown_code(item.where)}" if item.where else "") + "。", ""]
    lines += [f"- {markdown(private(reason.for_student if for_student else reason.text), None)}{tag(reason.kind)}"
              for reason in item.reasons]
    lines += [f"- 说明：{markdown(private(said(note, bool(for_student))), None)}{tag(note.kind)}" for note in item.notes]
    details = loop_details(item.loops, private)
    if details:
        lines += ["", "逐个循环（有问题的循环、它的问题和要查看的路径）：", "", *details]
    if not item.reasons and not details and not item.notes:
        lines.append("六个情景都有通过的循环，没有问题。")
    return lines + [""]


def loop_details(loops, private=lambda text: text):
    lines = []
    for loop in loops:
        if loop["result"] == "pass" and loop["case"] and not loop["notes"]:
            continue
        lines.append(f"- {markdown_code(loop['folder'])}（{markdown(loop['case'] or '不属于六个情景，不计入')}）："
                     f"{loop['result']}；查看 " + "、".join(markdown_code(path) for path in loop["paths"]))
        lines += [f"  - {markdown(private(said(problem)))}{tag(problem.kind)}"
                  for problem in [*loop["problems"], *loop["notes"]]]
    return lines


def tag(kind):
    """A finding's kind after its sentence (docs/loop/TEACHER.md lists every kind)."""
    return f" `{kind}`"


# --- the CSV -------------------------------------------------------------------------------------

def class_csv(rows):
    """The CSV of ROWS: each row's reasons joined into one cell, their kinds in another."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for row in rows:
        problems = "；".join(problem.rstrip("。") for problem in row["problems"]) + ("。" if row["problems"] else "")
        kinds = " ".join(row["kinds"])
        writer.writerow([spreadsheet_cell(row["student"]), spreadsheet_cell(row["id"]), row["result"],
                         *row["cases"].values(), row["loops"], spreadsheet_cell(problems, None), kinds])
    return out.getvalue()


# --- feedback to hand back -----------------------------------------------------------------------

def feedback(student, items, private=lambda text: text):
    """The Markdown file handed back to STUDENT: their own submissions only, reasons and the next step; every
    text through PRIVATE, which hides the teacher's folders."""
    lines = [f"{FEEDBACK_TITLE}{markdown(student, NAME_LIMIT)}", "",
             "这是第 14 篇练习（外层循环）的自动核对结果，只含你自己的提交。", ""]
    for item in items:
        lines += student_section(item, "##", for_student=private)
        lines += ["下一步：" + NEXT_STEP[item.row["result"]], ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def feedback_names(students):
    """{(student, id): file name} for the feedback folder: the student's name made safe on every system, then
    -2, -3 ... to keep names distinct as every disk compares them (case, composed and decomposed letters), in
    the order of (name, id)."""
    names, used = {}, set()
    for student in sorted(set(students)):
        base = safe_file_name(student[0])
        name, number = f"{base}.md", 1
        while disk_key(name) in used:
            number += 1
            name = f"{base}-{number}.md"
        used.add(disk_key(name))
        names[student] = name
    return names


def safe_file_name(text, most=NAME_BYTES):
    """TEXT as a file or folder name every system holds: no reserved or invisible character, no trailing dot or
    space, no device name, at most MOST bytes of UTF-8 (cut between characters)."""
    name = "".join("_" if ch in '<>:"/\\|?*' or not ch.isprintable() else ch for ch in text)
    name = name.encode("utf-8")[:most].decode("utf-8", errors="ignore")
    name = name.rstrip(". ") or "_"
    if name.startswith(".") or windows_device(name):
        name = "_" + name
    return name



# --- where outputs may go ------------------------------------------------------------------------

def first_line(path, raw=False):
    """The first line of a plain file (at most 4 KiB read; RAW: as bytes), or None for anything else."""
    try:
        if entry_kind(os.lstat(path)) != "普通文件":
            return None
        with open(path, "rb") as file:
            line = file.read(4096).split(b"\n", 1)[0].rstrip(b"\r")
    except OSError:
        return None
    return line if raw else line.decode("utf-8", errors="replace")


def is_earlier_output(path, kind):
    """PATH is a report, CSV or feedback file this check wrote before, known by its first line."""
    line = first_line(path)
    if line is None:
        return False
    if kind == "csv":
        return any(line == "\ufeff" + ",".join(header) for header in EARLIER_CSV_HEADERS)
    if kind == "page":
        return line == FIRST_LINE
    return line.startswith(REPORT_TITLE if kind == "report" else FEEDBACK_TITLE)


def inside(path, folder):
    return Path(os.path.realpath(path)).is_relative_to(Path(os.path.realpath(folder)))


def target_problem(text, class_dir, kind):
    """Why --report / --csv may not write TEXT (a Chinese sentence), or None."""
    path = Path(text)
    if inside(path, class_dir):
        return (f"{text} 在提交目录 {class_dir} 里面：报告不能写进学生的提交（可能覆盖证据），"
                "请把它写到提交目录之外，例如当前文件夹的 全班.md。")
    if is_link(path):
        return f"{text} 是一个链接：写进去会改动它指向的文件，请给出一个普通文件的路径。"
    if os.path.isdir(path):  # os.path answers False where pathlib would raise (a name too long, ...)
        return f"{text} 是一个文件夹：请给出报告文件的路径，例如 全班.md。"
    if not os.path.isdir(path.parent):
        return f"{text} 所在的文件夹不存在：请先建好它，或换一个路径。"
    if os.path.lexists(path) and not is_earlier_output(path, kind):
        return (f"{text} 已经存在，而且不是这个核对以前写出的{'CSV' if kind == 'csv' else '报告'}："
                "为了不覆盖别的文件（例如课程文件或笔记），请换一个文件名，或先把它移走。")
    return None


def feedback_problem(text, class_dir, file_names):
    """Why --feedback may not write its files into the folder TEXT, or None."""
    folder = Path(text)
    if inside(folder, class_dir):
        return f"{text} 在提交目录 {class_dir} 里面：反馈不能写进学生的提交，请换一个提交目录之外的文件夹。"
    if is_link(folder):
        return f"{text} 是一个链接：请给出一个普通的文件夹。"
    if os.path.lexists(folder) and not os.path.isdir(folder):
        return f"{text} 已经存在，但不是文件夹：请给出一个文件夹（没有时会新建）。"
    if not os.path.isdir(folder.parent):
        return f"{text} 所在的文件夹不存在：请先建好它，或换一个路径。"
    for name in file_names:
        path = folder / name
        kind = "page" if name.endswith(".html") else "feedback"
        if os.path.lexists(path) and (is_link(path) or not is_earlier_output(path, kind)):
            return (f"{display_path(path)} 已经存在，而且不是这个核对以前写出的反馈：为了不覆盖别的文件，"
                    "请换一个空文件夹，或先把它移走。")
    return None


def write_text_atomic(path, text, encoding):
    """A derived file replaces the previous one whole: a reader never sees half of it. No fsync: unlike a record,
    a lost report is made again by running the check again, and a class's 2,000 feedback files must not wait
    on the disk 2,000 times."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(text if isinstance(text, bytes) else text.encode(encoding))
        os.replace(tmp, path)
    except OSError:
        if os.path.lexists(tmp):  # nothing half-written stays behind
            os.unlink(tmp)
        raise
