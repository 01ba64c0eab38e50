"""What goes back to the platform, and where the class check may write at all.

Part of verify_loop's class check. `--feedback-zip OUT.zip` holds each student's feedback file in a folder named
as the platform's download named that student's entry: Moodle's "upload multiple feedback files in a zip"
(mod/assign/feedback/file/importziplib.php) splits each folder name at `_` and takes the second part as the
participant id, the third and fourth as the plugin, whether the name ends `_` (before 4.1) or not; a folder name
longer than a disk holds keeps that tail and loses the end of the name. Every output (--report, --csv,
--feedback, --grades, --feedback-zip, --html) is refused before anything is read when it would land inside the class
folder (or, for a loop's page, inside the evidence it shows), through a link, on a folder, or on an existing file this
check did not write (an earlier report, CSV, feedback file, page or feedback ZIP is known by its content; an earlier
grades file by the roster's header). Outputs
are compared by the file they reach (a folder reached through a link, another spelling of the same name), so no
two outputs are one file and none of them is the roster. What it shares: classroom/report.py's guards (where an
output lands, an earlier file's first line, safe folder names), classroom/platforms.py's MOODLE names and
verifier/records.py's is_link and disk_key.
"""
import io
import os
import zipfile
from pathlib import Path

from classroom import report as class_report
from classroom.platforms import MOODLE
from cli import display_path, say
from verifier.findings import Finding
from verifier.records import disk_key, is_link

ZIP_COMMENT = b"verify_loop --feedback-zip"  # how an earlier feedback ZIP of this check is known
ENTRY_TIME = (1980, 1, 1, 0, 0, 0)


def feedback_zip(checked, files):
    """The bytes of the feedback ZIP: FILES ([[(file name, text)]], each student's in the order of the students' keys)
    in the folder the download gave that student."""
    folders = {}
    for item in checked:
        folders.setdefault(item.key, item.folder)
    out, used = io.BytesIO(), set()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        keys = list(dict.fromkeys(item.key for item in checked))
        for key, group in zip(keys, files):
            folder = folder_name(folders[key], used)
            for name, text in group:
                info = zipfile.ZipInfo(f"{folder}/{name}", ENTRY_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, text.encode("utf-8"))
        archive.comment = ZIP_COMMENT
    return out.getvalue()


def folder_name(folder, used):
    """FOLDER as a name every disk holds (at most report.NAME_BYTES bytes), distinct from the names in USED as a
    disk compares them. A Moodle folder keeps `_<id>_assignsubmission_<plugin>` whole (what the import reads) and
    is never numbered: its id makes it distinct already."""
    moodle = MOODLE.fullmatch(folder)
    if moodle:
        tail = folder[moodle.end("name"):]
        name = class_report.safe_file_name(moodle["name"], class_report.NAME_BYTES - len(tail.encode("utf-8")))
        return name + class_report.safe_file_name(tail)
    base = class_report.safe_file_name(folder)
    name, number = base, 1
    while disk_key(name) in used:
        number += 1
        name = f"{base}-{number}"
    used.add(disk_key(name))
    return name


def is_earlier_zip(path):
    """PATH is a feedback ZIP this check wrote (its comment says so; only the file's end is read)."""
    try:
        with open(path, "rb") as file:
            file.seek(max(0, file.seek(0, os.SEEK_END) - len(ZIP_COMMENT) - 22))
            return file.read().endswith(ZIP_COMMENT)
    except OSError:
        return False


def target_problem(text, class_dir, kind, earlier):
    """Why an output file TEXT may not be written (Chinese), or None; EARLIER(path) tells an earlier output."""
    path = Path(text)
    if class_dir is not None and class_report.inside(path, class_dir):
        return f"{text} 在提交目录 {class_dir} 里面：{kind}不能写进学生的提交（可能覆盖证据），请写到提交目录之外。"
    if is_link(path):
        return f"{text} 是一个链接：写进去会改动它指向的文件，请给出一个普通文件的路径。"
    if os.path.isdir(path):
        return f"{text} 是一个文件夹：请给出{kind}文件的路径。"
    if not os.path.isdir(path.parent):
        return f"{text} 所在的文件夹不存在：请先建好它，或换一个路径。"
    if os.path.lexists(path) and not earlier(path):
        return (f"{text} 已经存在，而且不是这个核对以前写出的{kind}：为了不覆盖别的文件，请换一个文件名，或先把它移走。")
    return None


def is_earlier_page(path):
    """PATH is a page this check wrote before: its first line says so."""
    return class_report.is_earlier_output(path, "page")


def page_problem(text, evidence):
    """Why --html may not write the loop page TEXT (Chinese), or None: inside the folders EVIDENCE (the loop-runs/ and
    runs/ it shows: a page there would be a stray entry of the evidence), through a link, on a folder, beside no
    folder, or over an existing file that is no page of this check."""
    for folder in evidence:
        if os.path.isdir(folder) and class_report.inside(text, folder):
            return (f"{text} 在 {display_path(folder)} 里面：网页不能写进要核对的证据（loop-runs/、runs/），"
                    "请写到别处，例如当前文件夹的 核对.html。")
    return target_problem(text, None, "网页", is_earlier_page)


def write_page(target, page):
    """Writes PAGE (HTML text) to TARGET whole; False, said on stderr, when it cannot be written."""
    try:
        class_report.write_text_atomic(target, page, "utf-8")
    except OSError as exc:
        say(Finding("output_failed", target=class_report.cut(display_path(Path(target))),
                    error_type=type(exc).__name__).sentence())
        return False
    return True


def targets_problem(args):
    """Why --report, --csv, --feedback-zip or --html cannot be used (before anything is read), or None."""
    outputs = [(text, kind) for text, kind in ((args.report, "report"), (args.csv_file, "csv"),
                                               (args.feedback_zip, "zip"), (args.grades, "grades"),
                                               (args.html, "page")) if text]
    reached = [reached_file(text) for text, _ in outputs]
    if len(set(reached)) < len(reached):
        return ("--report、--csv、--grades、--feedback-zip 和 --html 不能是同一个文件（也不能经由链接或另一种写法指向同一个"
                "文件）。")
    if args.roster and reached_file(args.roster) in reached:
        text = next(text for (text, _), key in zip(outputs, reached) if key == reached_file(args.roster))
        return (f"{text} 是名单本身（{args.roster}，也许经由链接或另一种写法指向它）：成绩请写到另一个文件"
                "（例如 成绩.csv），名单不会被改写。")
    if args.feedback_zip and not args.feedback_zip.lower().endswith(".zip"):
        return f"{args.feedback_zip} 不是 .zip 文件名：请给出例如 反馈.zip。"
    for text, kind in outputs:
        if kind in ("report", "csv"):
            problem = class_report.target_problem(text, args.submissions, kind)
        elif kind == "zip":
            problem = target_problem(text, args.submissions, "反馈压缩包", is_earlier_zip)
        elif kind == "page":
            problem = target_problem(text, args.submissions, "网页", is_earlier_page)
        else:
            continue  # the grades file is judged once the roster is read
        if problem:
            return problem
    return None


def reached_file(text):
    """The file the path TEXT reaches, as one key for every spelling of it: the folder resolved through links,
    then the name as a case-insensitive, normalising disk compares it where the folder is such a disk (or
    the file's own identity when it exists)."""
    path = Path(os.path.realpath(text))
    try:
        found = os.stat(path)
    except OSError:
        found = None
    if found is not None and found.st_ino:
        return ("file", found.st_dev, found.st_ino)
    return ("name", str(path.parent), disk_key(path.name))


def outputs_problem(args, file_names, roster):
    """Why --feedback or --grades cannot be written, once the hand-ins and the roster are known; or None. No other
    output is one of the feedback folder's files (FILE_NAMES): written after it, the class's grades, report or page
    would be handed to that student as their own feedback; written before it, lost."""
    if args.feedback:
        problem = class_report.feedback_problem(args.feedback, args.submissions, file_names) or feedback_clash(
            args, {reached_file(Path(args.feedback) / name): name for name in file_names})
        if problem:
            return problem
    if args.grades:
        header = roster.path and first_line(roster.path)
        return target_problem(args.grades, args.submissions, "成绩文件",
                              lambda path: header is not None and first_line(path) == header)
    return None


def feedback_clash(args, feedback):
    """The output of ARGS that is one of the feedback files (FEEDBACK: the file each reaches -> its name), or None."""
    for option, text in (("--report", args.report), ("--csv", args.csv_file), ("--grades", args.grades),
                         ("--feedback-zip", args.feedback_zip), ("--html", args.html)):
        if text and reached_file(text) in feedback:
            return (f"{option} {text} 是 --feedback 要写的反馈文件 {feedback[reached_file(text)]}（也许经由链接或另一种"
                    "写法指向它）：那位学生会收到全班的结果。请把它写到反馈文件夹之外，例如当前文件夹。")
    return None


def first_line(path):
    """The first line of a plain file as bytes without its BOM (at most 64 KiB read), or None."""
    line = class_report.first_line(path, raw=True)
    return line.removeprefix(b"\xef\xbb\xbf") if line is not None else None
