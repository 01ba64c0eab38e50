"""The class check: every student's submission against the teacher's own course files, and its reports.

Part of verify_loop (the command line, `--class`). Each student's loops are judged by loop_check.py;
this file finds the students, sums their loops up per lesson case, and writes the table, the Markdown
report and the CSV. It does not import loop_lab.py, harness.py or export_review.py. What it shares:
cli.py's plumbing (paths shown from the current folder, output).
"""
import contextlib
import os
from pathlib import Path

from cli import EXIT_OK, EXIT_STOP, display_path, print_json, say
from loop_check import check_loop
from loop_records import CASES, DEFAULT_BUDGET, LOOP_FILES, CourseFiles, Workspace, is_link, visible


def table_cell(text):
    return visible(text).replace("|", "\\|")


def spreadsheet_cell(text):
    """A CSV cell Excel shows as text: one starting with = + - @ would be run as a formula."""
    text = visible(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


# --- a whole class -------------------------------------------------------------------------------

def find_students(submissions):
    """(student folders, skipped (path, why)) in SUBMISSIONS, in code-point order of their names."""
    students, skipped = [], []
    try:
        names = sorted(os.listdir(submissions))
    except OSError as exc:  # no permission to list it: no student can be read
        return [], [(submissions, f"无法列出里面的内容（{type(exc).__name__}），请确认有读取权限")]
    for name in names:
        path = submissions / name
        if os.path.isdir(path / "loop-runs") or (is_link(path) and os.path.isdir(path)):
            students.append(path)  # a student folder that is a link is listed too, and fails
        elif os.path.isdir(path):
            skipped.append((path, "里面没有 loop-runs/ 文件夹" + deeper_hint(path)))
        else:
            skipped.append((path, "不是文件夹"))
    return students, skipped


def deeper_hint(folder):
    """Where a zip put the records one level too deep, if it did."""
    try:
        nested = sorted(entry.name for entry in os.scandir(folder)
                        if entry.is_dir() and os.path.isdir(os.path.join(entry.path, "loop-runs")))
    except OSError:
        return ""
    if not nested:
        return ""
    return f"（在更深一层的 {display_path(folder / nested[0])} 里找到了：请把 loop-runs/ 和 runs/ 直接放在学生文件夹下）"


def check_student(folder, course):
    """One student's summary line (with the loops' own results kept for the report) and stray entries."""
    if is_link(folder):
        refused = f"{display_path(folder)} 是符号链接或联接点：提交必须是学生自己的文件夹，没有核对里面的内容。"
        return student_summary(folder.name, [], [refused]), []
    workspace = Workspace(folder, course)
    loops, strays = [], []
    for name, linked in sorted(workspace.loops().items()):
        path = folder / "loop-runs" / name
        if linked or os.path.isdir(path):
            loops.append(check_loop(path, workspace).result())
        else:
            strays.append((path, "不是循环目录（loop-runs/ 里只应有循环文件夹）"))
    return student_summary(folder.name, loops, workspace.problems()), strays


def case_of(loop):
    """The lesson case a loop belongs to: its scenario and budget equal that row exactly, or None."""
    budget = loop["budget"] if type(loop["budget"]) is dict else {}
    recorded = (loop["scenario"], budget.get("max_attempts"), budget.get("max_seconds"))
    for case, scenario, options in CASES:
        wanted = {**DEFAULT_BUDGET, **options}
        if recorded == (scenario, wanted["max_attempts"], wanted["max_seconds"]):
            return case
    return None


def case_state(loops):
    """fail if a loop of the case fails, else pass if one passes, else needs_human, else missing."""
    results = {loop["result"] for loop in loops}
    for state in ("fail", "pass", "needs_human"):
        if state in results:
            return state
    return "missing"


def student_summary(student, loops, student_problems):
    cases = {case: case_state([loop for loop in loops if case_of(loop) == case]) for case, _, _ in CASES}
    missing = [case for case, state in cases.items() if state == "missing"]
    problems = list(student_problems)
    problems += [f"{loop['folder']}：{problem}" for loop in loops for problem in loop["problems"]]
    if not student_problems:  # a refused submission is not incomplete: it was not read
        problems += [f"缺少情景「{case}」：没有 scenario 与预算恰好是这一行的循环。" for case in missing]
    results = {loop["result"] for loop in loops}
    if student_problems or "fail" in results:
        result = "fail"
    elif "needs_human" in results:
        result = "needs_human"
    elif missing:
        result = "incomplete"
    else:
        result = "pass"
    return {"student": student, "result": result, "cases": cases, "loops": len(loops), "problems": problems,
            "detail": {"loops": loops, "student_problems": list(student_problems), "missing": missing}}


def class_table(students):
    """The student x case table, as Markdown (readable as plain text on a console too)."""
    header = ["学生", "结果", *(case for case, _, _ in CASES), "循环数"]
    rows = [[s["student"], s["result"], *s["cases"].values(), str(s["loops"])] for s in students]
    return ["| " + " | ".join(map(table_cell, cells)) + " |" for cells in [header, ["---"] * len(header), *rows]]


def class_totals(students):
    states = ("pass", "incomplete", "fail", "needs_human")
    counts = {state: sum(student["result"] == state for student in students) for state in states}
    return (f"全班 {len(students)} 人：pass {counts['pass']}，incomplete {counts['incomplete']}，"
            f"fail {counts['fail']}，needs_human {counts['needs_human']}。")


def student_section(student):
    """The report's section of one student: each loop's problems with the paths to look at."""
    detail = student["detail"]
    lines = [f"## {visible(student['student'])}：{student['result']}", ""]
    lines += [f"- {visible(problem)}" for problem in detail["student_problems"]]
    for loop in detail["loops"]:
        case = case_of(loop) or "不属于六个情景，不计入"
        if loop["result"] == "pass" and case_of(loop):
            continue
        lines.append(f"- `{visible(loop['folder'])}`（{case}）：{loop['result']}；查看 "
                     + "、".join(f"`{visible(path)}`" for path in loop["paths"]))
        lines += [f"  - {visible(problem)}" for problem in loop["problems"]]
    if not detail["student_problems"]:
        lines += [f"- 缺少情景「{case}」：请学生运行这一行的命令后重新提交。" for case in detail["missing"]]
    if len(lines) == 2:
        lines.append("六个情景都有通过的循环，没有问题。")
    return lines + [""]


def class_report(submissions, course, students):
    lines = [f"# 全班核对：{visible(display_path(submissions))}", "",
             f"对照的是{course.label()}（笔记、样例、受监视文件），不用学生提交里的副本。", "",
             class_totals(students), "", *class_table(students), ""]
    for student in students:
        lines += student_section(student)
    return "\n".join(lines).rstrip("\n") + "\n"


def class_csv(students):
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["student", "result", *(case for case, _, _ in CASES), "loops"])
    for student in students:
        writer.writerow([spreadsheet_cell(student["student"]), student["result"], *student["cases"].values(),
                         student["loops"]])
    return out.getvalue()


def write_text_atomic(path, text, encoding):
    """A derived report replaces the previous one whole: a reader never sees half of it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(text.encode(encoding))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):  # nothing half-written stays behind
            tmp.unlink()
        raise


def write_outputs(submissions, course, results, report, csv_file):
    """--report and --csv; False (said in Chinese) when one cannot be written."""
    outputs = ((report, lambda: class_report(submissions, course, results), "utf-8"),
               (csv_file, lambda: class_csv(results), "utf-8-sig"))
    for target, render, encoding in outputs:
        if not target:
            continue
        try:
            write_text_atomic(target, render(), encoding)
        except OSError as exc:
            say(f"无法写出 {display_path(Path(target))}（{exc.strerror or type(exc).__name__}）：核对结果已打印在上面，"
                "请换一个可以写入的路径再运行一次。")
            return False
    return True


def say_skipped(strays):
    for path, why in strays:
        say(f"跳过 {visible(display_path(path))}：{visible(why)}。")


def say_class(students, strays):
    say_skipped(strays)
    say("\n".join(class_table(students)))
    for student in students:
        if student["problems"]:
            say(f"{visible(student['student'])}：{student['result']}"
                + "".join(f"\n  - {visible(p)}" for p in student["problems"]))
    say(class_totals(students))


def check_class(parser, submissions, report, csv_file):
    """`--class`: every student folder of SUBMISSIONS against the course files beside this file."""
    course = CourseFiles(Path(__file__).resolve().parent)
    students, skipped = find_students(submissions)
    if not students:
        say_skipped(skipped)
        parser.error(f"{submissions} 里没有学生的提交：每个学生一个文件夹，里面直接放 loop-runs/ 和 runs/"
                     "（如果给的是一个学生的工作区，请把它放进以学生命名的文件夹）。")
    results, strays = [], list(skipped)
    for folder in students:
        student, stray = check_student(folder, course)
        results.append(student)
        strays += stray
    for student in results:
        print_json({key: student[key] for key in ("student", "result", "cases", "loops", "problems")})
    say_class(results, strays)
    written = write_outputs(submissions, course, results, report, csv_file)
    return EXIT_OK if written and all(student["result"] == "pass" for student in results) else EXIT_STOP




def output_file_problem(text, submissions):
    path = Path(text)
    if path.resolve().is_relative_to(Path(submissions).resolve()):
        return (f"{text} 在提交目录 {submissions} 里面：报告不能写进学生的提交（可能覆盖证据），"
                "请把它写到提交目录之外，例如当前文件夹的 全班.md。")
    reference = Path(__file__).resolve().parent
    if path.resolve() in {(reference / rel).resolve() for rel in (*LOOP_FILES, "verify_loop.py", "cli.py")}:
        return f"{text} 是老师工作区里的课程文件：报告会把它整个替换掉，请换一个报告文件名。"
    if os.path.isdir(path):  # os.path answers False where pathlib would raise (a name too long, ...)
        return f"{text} 是一个文件夹：请给出报告文件的路径，例如 class-report.md。"
    if not os.path.isdir(path.parent):
        return f"{text} 所在的文件夹不存在：请先建好它，或换一个路径。"
    return None


def class_arguments_problem(args):
    if not os.path.isdir(args.submissions):
        return f"{args.submissions} 不是文件夹：请给出全班提交所在的文件夹。"
    outputs = [text for text in (args.report, args.csv_file) if text]
    if len(outputs) == 2 and Path(os.path.abspath(args.report)) == Path(os.path.abspath(args.csv_file)):
        return "--report 和 --csv 不能是同一个文件。"
    return next((problem for text in outputs for problem in [output_file_problem(text, args.submissions)] if problem),
                None)
