"""What goes back to the platform, and where the class check may write at all.

Part of verify_loop's class check. `--feedback-zip OUT.zip` holds each student's feedback file in a folder named
as the platform's download named that student's entry (Moodle's "upload multiple feedback files in a zip"
matches a folder to a student by the participant id, the second `_` part of `Full Name_<id>_assignsubmission_file_`).
Every output (--report, --csv, --feedback, --grades, --feedback-zip) is refused before anything is read when it
would land inside the class folder, through a link, on a folder, or on an existing file this check did not write
(an earlier report, CSV, feedback file or feedback ZIP is known by its content; an earlier grades file by the
roster's header, and the roster itself is never written). What it shares: classroom/report.py's guards (where an
output lands, an earlier file's first line, safe folder names) and verifier/records.py's is_link.
"""
import io
import os
import zipfile
from pathlib import Path

from classroom import report as class_report
from verifier.records import is_link

ZIP_COMMENT = b"verify_loop --feedback-zip"  # how an earlier feedback ZIP of this check is known
ENTRY_TIME = (1980, 1, 1, 0, 0, 0)


def feedback_zip(checked, files):
    """The bytes of the feedback ZIP: FILES ([(file name, text)] in the order of the students' keys) each in the
    folder the download gave its student."""
    folders = {}
    for item in checked:
        folders.setdefault(item.key, item.folder)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        keys = list(dict.fromkeys(item.key for item in checked))
        for key, (name, text) in zip(keys, files):
            info = zipfile.ZipInfo(f"{class_report.safe_file_name(folders[key])}/{name}", ENTRY_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text.encode("utf-8"))
        archive.comment = ZIP_COMMENT
    return out.getvalue()


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
    if class_report.inside(path, class_dir):
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


def targets_problem(args):
    """Why --report, --csv or --feedback-zip cannot be used (before anything is read), or None."""
    outputs = [(text, kind) for text, kind in ((args.report, "report"), (args.csv_file, "csv"),
                                               (args.feedback_zip, "zip"), (args.grades, "grades")) if text]
    paths = [Path(os.path.abspath(text)) for text, _ in outputs]
    if len(set(paths)) < len(paths):
        return "--report、--csv、--grades 和 --feedback-zip 不能是同一个文件。"
    if args.roster and Path(os.path.abspath(args.roster)) in paths:
        return f"{args.roster} 是名单本身：成绩请写到另一个文件（例如 成绩.csv），名单不会被改写。"
    if args.feedback_zip and not args.feedback_zip.lower().endswith(".zip"):
        return f"{args.feedback_zip} 不是 .zip 文件名：请给出例如 反馈.zip。"
    for text, kind in outputs:
        if kind in ("report", "csv"):
            problem = class_report.target_problem(text, args.submissions, kind)
        elif kind == "zip":
            problem = target_problem(text, args.submissions, "反馈压缩包", is_earlier_zip)
        else:
            continue  # the grades file is judged once the roster is read
        if problem:
            return problem
    return None


def outputs_problem(args, file_names, roster):
    """Why --feedback or --grades cannot be written, once the hand-ins and the roster are known; or None."""
    if args.feedback:
        problem = class_report.feedback_problem(args.feedback, args.submissions, file_names)
        if problem:
            return problem
    if args.grades:
        header = roster.path and first_line(roster.path)
        return target_problem(args.grades, args.submissions, "成绩文件",
                              lambda path: header is not None and first_line(path) == header)
    return None


def first_line(path):
    """The first line of a plain file as bytes without its BOM (at most 64 KiB read), or None."""
    line = class_report.first_line(path, raw=True)
    return line.removeprefix(b"\xef\xbb\xbf") if line is not None else None
