"""The class page (`verify_loop.py --class … --html FILE`) and each student's page (with --feedback, NAME.html).

Part of verify_loop's class check (classroom/check.py decides every result; this file only shows them, with
verifier/page.py's document, escaping and finding items). The class page: the totals line's counts as a histogram and
the totals sentence; what the teacher must know first (another course version, the grades file, the entries set
aside, the students whose records or clocks others share, the copies); filters by status (CSS only: radio buttons, no
script); one table row per student, the status words the JSON's with Chinese beside them, a cell per lesson case;
then a section per student: where the hand-in came from, its reasons and notes (each carrying its kind as
`data-kind`), and each loop that did not simply pass with the paths to look at. Paths inside a ZIP are text relative
to the submission; links go only to what outlasts the check (a student's folder and the loop folders in it, a ZIP
itself), relative to the page's folder. A student's page holds that student's own results only, in the words the
student reads (another student's name never, the teacher's folders hidden), and links to nothing. What it shares:
verifier/page.py, classroom/report.py's case names, totals sentence and next steps.
"""
import os
from pathlib import Path

from classroom.report import CASE_NAMES, MISSING, NEXT_STEP, RESULTS, totals
from verifier.page import WORDS, badge, document, finding_item, findings_list, link, text

OPEN_ASIDE = 10  # items of a list before the rows shown open; more are folded under their count
COPY_KINDS = ("shared_record", "shared_clock", "shared_readings", "copy_inside", "loop_copy")
CSS = "".join(
    f"#f-{result}:checked~.rows .student:not(.r-{result}){{display:none}}"
    f"#f-{result}:checked~.filters label[for=f-{result}]{{outline:2px solid #0969da}}"
    for result in (*RESULTS, MISSING)) + """
.filters{display:flex;flex-wrap:wrap;gap:6px;margin:8px 0}
.filters label{cursor:pointer;padding:1px 8px;border:1px solid #d0d7de;border-radius:12px;background:#fff}
input.filter{position:absolute;opacity:0;width:1px;height:1px}
#f-all:checked~.filters label[for=f-all]{outline:2px solid #0969da}
.histogram td.count{width:4em;text-align:right}.histogram td.label{width:12em}
details.aside summary{cursor:pointer}details.aside summary h2{display:inline}
"""


def class_page(page_path, class_shown, course_label, rows, aside=(), note=None, with_roster=False, said=(),
               download=None):
    """The class page for the file PAGE_PATH: ROWS as classroom/report.py's class_report takes them ((row, its Checked
    or None)); ASIDE (entry shown, why); NOTE the course-version finding; SAID the sentences about the outputs;
    DOWNLOAD the download-all ZIP the entries came from (then only it outlasts the check)."""
    page_dir = Path(os.path.abspath(page_path)).parent
    shown_rows = [row for row, _ in rows]
    results = RESULTS + ((MISSING,) if with_roster else ())
    body = [f"<h1>全班核对：{text(class_shown)}</h1>",
            f"<p>对照的是{text(course_label)}（笔记、样例、受监视文件），不用学生提交里的副本。每位学生一节，节里的路径都"
            "相对于这位学生的提交；每条原因后面是它的种类（docs/loop/TEACHER.md「每种发现」）。</p>",
            histogram(shown_rows, results), f"<p><b>{text(totals(shown_rows, with_roster))}</b></p>",
            *first_things(rows, aside, note, said),
            "<input type=\"radio\" name=\"show\" id=\"f-all\" class=\"filter\" checked>",
            *(f"<input type=\"radio\" name=\"show\" id=\"f-{result}\" class=\"filter\">" for result in results),
            "<div class=\"filters\"><label for=\"f-all\">全部</label>"
            + "".join(f"<label for=\"f-{result}\">{text(result)} {WORDS[result]}</label>" for result in results)
            + "</div>", "<div class=\"rows\">", table(rows),
            *(section(number, row, item, page_dir, download) for number, (row, item) in enumerate(rows, 1)),
            "</div>"]
    return document(f"全班核对：{class_shown}", "\n".join(body), CSS)


def histogram(rows, results):
    counts = {result: sum(row["result"] == result for row in rows) for result in results}
    most = max(counts.values(), default=0) or 1
    bars = "".join(f"<tr class=\"bar-{result}\" data-result=\"{result}\"><td class=\"label\">{badge(result)}</td>"
                   f"<td class=\"count\">{counts[result]}</td><td><div class=\"bar\" style=\"width:"
                   f"{100 * counts[result] / most:.1f}%\"></div></td></tr>" for result in results)
    return f"<table class=\"histogram\"><tbody>{bars}</tbody></table>"


def first_things(rows, aside, note, said):
    """What a teacher reads before the rows: the course version, the grades file, what was set aside, the copies."""
    parts = [f"<p class=\"finding sev-needs_human\" data-kind=\"{text(note.kind)}\">{text(note.sentence())}</p>"] \
        if note else []
    parts += [f"<p>{text(sentence)}</p>" for sentence in said]
    if aside:
        parts += folded("跳过的条目（不是一份提交）", "个", [
            f"<li data-kind=\"{text(why.kind)}\"><span class=\"path\">{text(entry)}</span>：{text(why.sentence())}</li>"
            for entry, why in aside])
    copies = [(number, row, [reason for reason in item.reasons if reason.kind in COPY_KINDS])
              for number, (row, item) in enumerate(rows, 1) if item]
    copies = [(number, row, found) for number, row, found in copies if found]
    if copies:
        parts += folded("同一份记录、同样的时钟、副本", "人", [
            f"<li><a href=\"#student-{number}\">{text(row['student'])}</a>："
            + "、".join(f"<span data-kind=\"{text(reason.kind)}\">{text(reason.kind)}</span>" for reason in found)
            + "</li>" for number, row, found in copies])
    return parts


def folded(title, unit, items):
    """A list headed TITLE and its count of ITEMS (in UNIT): open up to OPEN_ASIDE items, folded under its heading
    beyond (details: no script), so that the rows stay near the top."""
    shown = " open" if len(items) <= OPEN_ASIDE else ""
    return [f"<details class=\"aside\"{shown}><summary><h2>{title}：{len(items)} {unit}</h2></summary><ul>", *items,
            "</ul></details>"]


def table(rows):
    head = "".join(f"<th>{text(case)}</th>" for case in CASE_NAMES)
    body = "".join(table_row(number, row) for number, (row, _) in enumerate(rows, 1))
    return ("<table class=\"cards students\"><thead><tr><th>学生</th><th>学号</th><th>结果</th>" + head
            + f"<th>循环数</th><th>原因</th></tr></thead><tbody>{body}</tbody></table>")


def table_row(number, row):
    cells = "".join(f"<td data-label=\"{text(case)}\">{badge(state)}</td>" for case, state in row["cases"].items())
    kinds = " ".join(row.get("kinds", []))
    return (f"<tr class=\"student r-{text(row['result'])}\" data-kinds=\"{text(kinds)}\"><td data-label=\"学生\">"
            f"<a href=\"#student-{number}\">{text(row['student'])}</a></td><td data-label=\"学号\">{text(row['id'])}</td>"
            f"<td data-label=\"结果\">{badge(row['result'])}</td>{cells}<td data-label=\"循环数\">{row['loops']}</td>"
            f"<td data-label=\"原因\">{len(row['problems'])}</td></tr>")


def section(number, row, item, page_dir, download, for_student=None):
    """A student's section; FOR_STUDENT, the function hiding the teacher's folders: the student's own page."""
    head = (f"<section id=\"student-{number}\" class=\"student r-{text(row['result'])}\"><h2>{text(row['student'])}"
            + (f"（学号 {text(row['id'])}）" if row["id"] else "") + f" {badge(row['result'])}</h2>")
    if item is None:
        return head + "<p>没有提交（未提交）。</p></section>"
    private = for_student or (lambda said: said)
    place = item.entry_name if for_student else item.entry
    lasting = None if for_student or download else item.path
    parts = [head, f"<p>提交：{link(lasting, place, page_dir, within=Path(lasting).parent) if lasting else text(place)}"
             f"（{text(item.source)}）"
             + (f"，工作区在其中的 <span class=\"path\">{text(item.where)}</span>" if item.where else "") + "。</p>",
             reasons_list(item.reasons, for_student, private), findings_list(item.notes, student=bool(for_student),
                                                                             private=private)]
    details = [loop_part(loop, item, page_dir, None if for_student or download else item.path, private)
               for loop in item.loops if loop["result"] != "pass" or not loop["case"] or loop["notes"]]
    if details:
        parts += ["<h3>逐个循环（有问题的循环、它的问题和要查看的路径）</h3>", *details]
    if not item.reasons and not details and not item.notes:
        parts.append("<p>六个情景都有通过的循环，没有问题。</p>")
    return "\n".join(parts) + "</section>"


def reasons_list(reasons, for_student, private):
    """A row's reasons as its JSON words them (for the student: their own words), each with its cause's kind."""
    if not reasons:
        return ""
    return "<ul class=\"findings\">" + "".join(
        finding_item(reason.finding, said=reason.for_student if for_student else reason.text, kind=reason.kind,
                     private=private) for reason in reasons) + "</ul>"


def loop_part(loop, item, page_dir, folder, private):
    """One loop of a submission: its case, its result, its findings, the paths to look at (links into FOLDER, the
    student's own folder, when it outlasts the check; else text relative to the submission)."""
    workspace = Path(folder) / item.where if folder and os.path.isdir(folder) else None
    paths = [link(workspace / path, path, page_dir, within=workspace) if workspace else
             f"<span class=\"path\">{text(path)}</span>" for path in loop["paths"]]
    return (f"<div class=\"loop\"><h4><span class=\"path\">{text(loop['folder'])}</span>"
            f"（{text(loop['case'] or '不属于六个情景，不计入')}） {badge(loop['result'])}</h4>"
            f"<p>查看 {'、'.join(paths)}</p>"
            + findings_list([*loop["problems"], *loop["notes"]], private=private) + "</div>")


def student_page(student, items, private):
    """The page handed back to STUDENT: their own submissions only, every text through PRIVATE (it hides the
    teacher's folders), the next step; no link, nothing of anyone else."""
    parts = [f"<h1>作业核对反馈：{text(student)}</h1>",
             "<p>这是第 14 篇练习（外层循环）的自动核对结果，只含你自己的提交。每条原因后面是它的种类"
             "（docs/loop/TEACHER.md「每种发现」）。</p>"]
    for number, item in enumerate(items, 1):
        parts.append(section(number, item.row, item, Path("."), None, for_student=private))
        parts.append(f"<p><b>下一步：</b>{text(NEXT_STEP.get(item.row['result'], ''))}</p>")
    return document(f"作业核对反馈：{student}", "\n".join(parts))
