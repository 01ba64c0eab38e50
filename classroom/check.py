"""The class check: every submission of a class against the teacher's own course files, one row each.

Part of verify_loop (the command line, `--class`). classroom/intake.py takes each entry of the class folder in
(a folder, a ZIP, a Moodle folder holding a ZIP, a workspace nested a few folders down); verifier/check.py judges
each loop; this file sums a student's loops up per lesson case into one row with the reasons a teacher reads in
ten seconds (each root cause once, with the loops it touches), notices records that two submissions (or two
places of one) share, says when most of the class ran on course files other than the teacher's (another version of
the course, not an edit), and hands the rows to classroom/report.py. workspace_row() gives one workspace's row exactly
as the teacher will see it, for the student's own check before handing in.

A class of POOL_FROM submissions or more is checked by one process per core (submissions are independent).
It does not import loop_lab.py, harness.py or export_review.py. What it shares: cli.py's plumbing (the capped
reading of evidence, strict JSON, line endings, glosses, paths shown from the current folder, output) and, within
verify_loop, verifier/check.py (one loop) and verifier/records.py (the lesson's cases, the workspace listings).
"""
import hashlib
import os
import signal
import tempfile
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from itertools import combinations, repeat
from pathlib import Path, PurePosixPath

from classroom import report as class_report
from classroom.intake import Submission, checked_evidence, class_entries, reason, student_and_id, taken_in
from cli import EXIT_OK, EXIT_STOP, display_path, gloss, loads_record, print_json, read_evidence, say, to_lf
from verifier.check import check_loop
from verifier.records import CASES, DEFAULT_BUDGET, CourseFiles, Workspace

HERE = Path(__file__).resolve().parent.parent  # the teacher's workspace, which holds this package
POOL_FROM, MAX_WORKERS = 64, 8  # submissions from which the check uses every core; at most this many processes
RECORD_CAP = 2 ** 20  # a loop.json or run.json is far below 1 MiB; a bigger one is judged by the loop check
CONTRADICTION = ("与证据不符", "没有证据支持")  # how the loop check words a stop the evidence does not support
row_text = class_report.row_text


class TeacherCourse(CourseFiles):
    """The teacher's course files, named the same way whoever runs the check and from wherever."""

    def label(self):
        return "老师的课程文件"


def teacher_course():
    """The reference course files: the workspace holding this file."""
    return TeacherCourse(HERE)


# --- one submission ------------------------------------------------------------------------------

class Checked:
    """One submission once checked: its loops, what is missing, and what the class adds (shared records)."""

    def __init__(self, submission, entry_shown):
        self.student, self.student_id = submission.student, submission.student_id
        self.entry, self.entry_name, self.source = entry_shown, Path(entry_shown).name, submission.source
        self.where = ""  # the workspace inside the submission, when it is not the top
        self.loops, self.strays, self.records, self.copies = [], [], [], []
        self.refused = [submission.refused] if submission.refused else []
        self.packaging = submission.packaging
        self.reasons = []
        self.row = None

    def finish(self, course_label):
        """Sets the row and its reasons from everything known about this submission."""
        cases = {case: case_state([loop for loop in self.loops if loop["case"] == case]) for case, _, _ in CASES}
        unread = self.packaging or self.refused  # a submission not read misses nothing: it was not looked at
        missing = [] if unread else [case for case, state in cases.items() if state == "missing"]
        self.reasons = ([Reason(self.packaging)] if self.packaging else
                        reasons(self.refused, self.loops, self.copies, missing, course_label))
        self.row = {"student": self.student, "id": self.student_id, "result": self.result(missing),
                    "cases": cases, "loops": len(self.loops), "problems": [reason.text for reason in self.reasons]}
        return self

    def unless_runs_needed(self, submission):
        """A workspace without runs/ is complete when no loop made an attempt (lesson 14's permission and
        --max-seconds 0 loops make no child run, and git keeps no empty folder); once one did, or its record
        cannot say, the child runs were left out in packing: packaging, nothing of it counted."""
        if submission.without_runs and any(loop["attempts"] != 0 for loop in self.loops):
            self.packaging = submission.cannot(submission.without_runs).packaging
            self.loops, self.strays, self.records, self.refused, self.where = [], [], [], [], ""

    def result(self, missing):
        """packaging (nothing checked) before fail, then needs_human (copies too), then incomplete, then pass."""
        results = {loop["result"] for loop in self.loops}
        if self.packaging:
            return "packaging"
        if self.refused or "fail" in results:
            return "fail"
        if "needs_human" in results or self.copies:
            return "needs_human"
        return "incomplete" if missing else "pass"


class Reason:
    """One line of a row's reasons: the teacher's words, and the student's (never naming anyone else)."""

    def __init__(self, text, for_student=None):
        self.text = class_report.shortened(text)
        self.for_student = class_report.shortened(for_student or text)


def check_entry(entry, course, scratch):
    """The Checked of one entry of the class folder; a ZIP's copy in SCRATCH is gone when this returns."""
    try:
        with taken_in(entry, scratch) as submission:
            item = Checked(submission, display_path(entry))
            if submission.workspace is not None:
                check_workspace(item, submission.root, submission.workspace, course)
                item.unless_runs_needed(submission)
            return item
    except Exception as exc:  # a submission shaped in a way nobody foresaw is one row that says so, never a crash
        why = f"{Path(entry).name} 里有核对无法解释的内容（{type(exc).__name__}），请老师打开看看"
        return Checked(Submission(entry, "？").cannot(why), display_path(entry))


def check_workspace(item, root, workspace, course):
    """Checks every loop of WORKSPACE into ITEM; paths are said relative to ROOT, the submission."""
    relative = relative_to(root)
    item.where = "/".join(Path(workspace).relative_to(root).parts)
    folders = Workspace(workspace, course)
    for name, linked in sorted(folders.loops().items()):
        path = Path(workspace) / "loop-runs" / name
        if linked or os.path.isdir(path):
            item.loops.append(loop_summary(check_loop(path, folders), course, relative))
        else:
            item.strays.append(relative(display_path(path)))
    item.refused += [relative(problem) for problem in folders.problems()]
    item.records = record_keys(folders, PurePosixPath(*Path(workspace).relative_to(root).parts))


def relative_to(root):
    """A function saying a text's paths relative to ROOT instead of the current folder."""
    shown = display_path(root)
    prefixes = {shown + os.sep, shown + "/"} if shown != "." else set()

    def relative(text):
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text
    return relative


def loop_summary(check, course, relative):
    """One loop's result for the row and the report, with its lesson case and the course files it ran on that differ."""
    result = check.result()
    summary = {key: result.get(key) for key in ("run", "result", "scenario", "budget", "attempts")}
    summary.update(folder=relative(result["folder"]), paths=[relative(path) for path in result["paths"]],
                   problems=[relative(problem) for problem in result["problems"]],
                   notes=[relative(note) for note in result.get("notes", [])])
    summary["case"] = case_of(summary)
    seen = changed_course_files(check.record, course) if result["result"] != "pass" else ()
    summary["course"], summary["course_seen"] = tuple(rel for rel, _ in seen), seen
    return summary


def changed_course_files(record, course):
    """(file, hash recorded at the loop's start) of each course file whose hash differs from the teacher's copy."""
    context = record.get("context") if type(record) is dict else None
    entries = context.get("entries") if type(context) is dict else None
    if type(entries) is not dict:
        return ()
    return tuple((rel, entries.get(rel) if type(entries.get(rel)) is str else None)
                 for rel, sha in sorted(course.entries().items()) if entries.get(rel) != sha)


def other_course_version(checked):
    """The course files that at least half of the submissions with loops (two or more) recorded with the very
    same content, different from the teacher's: then the teacher's workspace most likely holds another version
    of the course (updated since the students ran), which a person must know before reading those fails."""
    holders = defaultdict(set)
    for index, item in enumerate(checked):
        for loop in item.loops:
            for seen in loop["course_seen"]:
                holders[seen].add(index)
    with_loops = sum(1 for item in checked if item.loops)
    return sorted({rel for (rel, _), who in holders.items() if len(who) >= 2 and 2 * len(who) >= with_loops})


def version_note(files, course_label):
    """The sentence said above the table when other_course_version() found FILES."""
    return (f"注意：至少一半的提交记录的 {'、'.join(files)} 彼此相同，却与{course_label}不同：多半是老师工作区的课程"
            "版本与学生运行时的不同（例如之后更新过），不是学生改了文件。由此而来的 fail 请先换成学生运行时的课程版本再核对一次。")


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
    return next((state for state in ("fail", "pass", "needs_human") if state in results), "missing")


# --- reasons a teacher reads in ten seconds ------------------------------------------------------

def reasons(refused, loops, copies, missing, course_label):
    """Each root cause once, in this order: what refused the submission, a stop the evidence contradicts, course
    files that differ (with the loops they touch), the failing loops' problems, shared records, what needs a
    person, the missing cases. A problem several loops share is one line naming them."""
    first, causes, grouped = [], defaultdict(list), defaultdict(list)
    for loop in sorted(loops, key=lambda loop: loop["result"] != "fail"):
        for problem in loop["problems"]:
            if any(words in problem for words in CONTRADICTION):
                first.append(f"{loop['folder']}：{problem}")
            elif not any(rel in problem for rel in loop["course"]):  # one changed course file is said once below
                grouped[problem].append(loop["folder"])
        if loop["course"]:
            causes[loop["course"]].append(loop["run"])
    found = [Reason(text) for text in [*refused, *first]]
    found += [Reason(f"{'、'.join(files)} 与{course_label}不同（影响 {len(runs)} 个循环：{listed(runs)}）："
                     "运行时用的课程文件被改过，这些循环不能算数；请学生换回课程原版文件后用新名称重新运行。")
              for files, runs in causes.items()]
    fails = {problem: folders for problem, folders in grouped.items() if fails_in(problem, loops)}
    found += [Reason(one_line(problem, folders)) for problem, folders in fails.items()]
    found += copies
    found += [Reason(one_line(problem, folders)) for problem, folders in grouped.items() if problem not in fails]
    if missing:
        found.append(Reason(f"缺少情景{'、'.join(f'「{case}」' for case in missing)}：没有 scenario 与预算恰好是"
                            f"{'这一行' if len(missing) == 1 else '这些行'}的循环。"))
    return found


def fails_in(problem, loops):
    return any(loop["result"] == "fail" and problem in loop["problems"] for loop in loops)


def one_line(problem, folders):
    if len(folders) == 1:
        return f"{folders[0]}：{problem}"
    return f"{problem}（影响 {len(folders)} 个循环：{listed(folders)}）"


def listed(names, most=6):
    return "、".join(names[:most]) + (f" 等 {len(names)} 个" if len(names) > most else "")


# --- records two submissions share ---------------------------------------------------------------

def record_keys(folders, where):
    """(key, path) of every loop.json and run.json: its random id, and its bytes with line ends made LF."""
    found = [(where / "loop-runs" / name / "loop.json") for name in sorted(folders.loops())]
    found += [(where / "runs" / name / "run.json") for name in sorted(folders.runs())]
    keys = []
    for rel in found:
        try:
            data = read_evidence(folders.root.joinpath(*rel.parts[len(where.parts):]), RECORD_CAP)
        except OSError:  # not a plain readable file: the loop check names it
            continue
        data = to_lf(data.removeprefix(b"\xef\xbb\xbf"))
        keys.append((("bytes", hashlib.sha256(data).hexdigest()), str(rel)))
        record_id = record_identifier(data)
        if record_id:
            keys.append((("id", record_id), str(rel)))
    return keys


def record_identifier(data):
    try:
        record = loads_record(data)
    except ValueError:
        return None
    value = record.get("id") if type(record) is dict else None
    return value if type(value) is str and value else None


def mark_copies(checked):
    """Adds to each submission a reason per group of others it shares records with (never a fail by itself).

    Records are grouped by who holds them, not compared pair by pair: a class handing in one record set
    300 times costs one group, not 45,000 pairs."""
    holders = defaultdict(set)
    for index, item in enumerate(checked):
        for key, rel in item.records:
            holders[key].add((index, rel))
    shared, inside = defaultdict(lambda: defaultdict(set)), defaultdict(set)
    for group in {frozenset(group) for group in holders.values() if len(group) > 1}:
        mine = defaultdict(list)
        for index, rel in group:
            mine[index].append(rel)
        members = frozenset(mine)
        for index, rels in mine.items():
            inside[index].update(combinations(sorted(rels), 2))
            if len(members) > 1:
                shared[index][members].update(rels)
    in_order = {}  # members -> their indexes sorted, worked out once per group
    for index, item in enumerate(checked):
        if inside[index]:
            item.copies.append(inside_copy(sorted(inside[index])))
        for members, rels in sorted(shared[index].items(), key=lambda pair: sorted(pair[0])):
            everyone = in_order.setdefault(members, sorted(members))
            others = [checked[j] for j in everyone[:6] if j != index][:5]
            item.copies.append(copy_reason(sorted(rels), others, len(members) - 1))


def copy_reason(records, others, count):
    """The reason of a submission sharing RECORDS with COUNT others (OTHERS: the first of them)."""
    names = [f"{other.student}（{other.student_id}）" if other.student_id else other.student for other in others]
    shown = "、".join(records[:2]) + (f" 等 {len(records)} 份" if len(records) > 2 else "")
    people = "、".join(names) + (f" 等 {count} 人" if count > len(names) else "")
    return Reason(f"与 {people} 的提交含有同一份记录：{shown}。可能是互相拷贝的，也可能另有原因：请老师核对后再定（不会自动判 fail）。",
                  f"你的提交与另外 {count} 份提交含有同一份记录：{shown}。老师会核对后再定。")


def inside_copy(pairs):
    shown = "、".join(f"{a} 与 {b}" for a, b in pairs[:3]) + (f" 等 {len(pairs)} 对" if len(pairs) > 3 else "")
    return Reason(f"提交里有几处是同一份记录：{shown}。循环或运行可能是复制后改了名：请老师核对后再定（不会自动判 fail）。")


# --- one workspace, as the teacher will see it ----------------------------------------------------

def workspace_row(root, student, course=None, student_id=""):
    """The row of the workspace ROOT (holding loop-runs/ and runs/) exactly as the class check shows it:
    {"student", "id", "result", "cases", "loops", "problems"}, paths relative to ROOT. The same intake rules
    apply (no runs/ beside loop-runs/ is packaging once a loop made an attempt); copies are looked for inside the workspace only."""
    course = TeacherCourse(course.root if course is not None else HERE)
    submission = checked_evidence(Submission(root, "工作区").found(root, root))
    submission.student, submission.student_id = student, student_id
    item = Checked(submission, display_path(root))
    if submission.workspace is not None:
        check_workspace(item, Path(root), Path(root), course)
        item.unless_runs_needed(submission)
    mark_copies([item])
    return item.finish(course.label()).row


# --- a whole class -------------------------------------------------------------------------------

def scratch_base(class_dir):
    """Where ZIPs are copied out for the check, never inside the class folder: Linux's memory-backed /dev/shm
    where it can be written (a ZIP's few dozen small files come and go in microseconds there), else the
    system's temporary folder."""
    memory = Path("/dev/shm")
    base = memory if memory.is_dir() and os.access(memory, os.W_OK) else Path(tempfile.gettempdir())
    return str(Path(class_dir).resolve().parent) if class_report.inside(base, class_dir) else str(base)


def check_all(class_dir, entries, course):
    """Every entry checked (on every core for a big class), then the records they share, then the rows."""
    course.entries()  # hashed once, before any worker gets its copy
    with tempfile.TemporaryDirectory(prefix="class-check-", dir=scratch_base(class_dir)) as scratch:
        checked = checked_entries(entries, course, scratch)
    mark_copies(checked)
    return [item.finish(course.label()) for item in checked]


def checked_entries(entries, course, scratch):
    """check_entry of each entry, in order. Submissions are independent, so a class of POOL_FROM or more is
    shared among one process per core; a smaller one is checked here (a pool's start-up would cost more)."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if workers < 2 or len(entries) < POOL_FROM:
        return [check_entry(entry, course, scratch) for entry in entries]
    pool = ProcessPoolExecutor(workers, initializer=quiet_worker)
    try:
        return list(pool.map(check_entry, entries, repeat(course), repeat(scratch), chunksize=16))
    finally:  # Ctrl-C: what is queued is dropped, what runs ends within its chunk
        pool.shutdown(cancel_futures=True)


def quiet_worker():
    """A worker leaves Ctrl-C and termination to the main process, which stops the pool and says so once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def check_class(parser, args):
    """`--class`: every entry of the class folder against the course files beside this file."""
    class_dir, course = Path(args.submissions), teacher_course()
    entries, aside = listed_entries(parser, class_dir)
    names = class_report.feedback_names(student_and_id(entry.name) for entry in entries)
    if args.feedback:
        problem = class_report.feedback_problem(args.feedback, class_dir, names.values())
        if problem:
            parser.error(problem)
    checked = check_all(class_dir, entries, course)
    for item in checked:
        print_json(item.row)
    aside = [(display_path(entry), owner.name) for entry, owner in aside]
    for entry, owner in aside:
        say(class_report.set_aside(entry, owner))
    skew = other_course_version(checked)
    note = version_note(skew, course.label()) if skew else ""
    say_class(checked, note)
    written = write_outputs(args, class_dir, course, checked, names, aside, note)
    return EXIT_OK if written and all(item.row["result"] == "pass" for item in checked) else EXIT_STOP


def listed_entries(parser, class_dir):
    try:
        entries, aside = class_entries(class_dir)
    except OSError as exc:  # no permission to list it: no submission can be read
        parser.error(f"{class_dir} 无法列出里面的内容（{reason(exc)}），请确认有读取权限。")
    if not entries:
        parser.error(f"{class_dir} 里没有学生的提交：每个学生一个文件夹或一个 .zip 压缩包，"
                     "里面是工作区的 loop-runs/ 和 runs/。")
    return entries, aside


def say_class(checked, note):
    for item in checked:
        for stray in item.strays:
            say(f"跳过 {class_report.cut(item.entry)} 里的 {class_report.cut(stray)}：不是循环目录（loop-runs/ 里只应有循环文件夹）。")
    if note:
        say(note)
    rows = [item.row for item in checked]
    say("\n".join(class_report.table(rows, class_report.console_cell)))
    for row in rows:
        if row["result"] != "pass":
            say("\n".join(class_report.row_lines(row)))
    say(class_report.totals(rows))


def write_outputs(args, class_dir, course, checked, names, aside, note):
    """--report, --csv and --feedback; False (said in Chinese) when one cannot be written."""
    outputs = []
    if args.report:
        outputs.append((args.report, class_report.class_report(display_path(class_dir), CourseFiles.label(course),
                                                               checked, aside, note), "utf-8"))
    if args.csv_file:
        outputs.append((args.csv_file, class_report.class_csv([item.row for item in checked]), "utf-8-sig"))
    if args.feedback:
        outputs += feedback_files(Path(args.feedback), checked, names)
    for target, text, encoding in outputs:
        try:
            Path(target).parent.mkdir(exist_ok=True)
            class_report.write_text_atomic(target, text, encoding)
        except OSError as exc:
            say(f"无法写出 {display_path(Path(target))}（{gloss(type(exc).__name__)}）：核对结果已打印在上面，"
                "请换一个可以写入的路径再运行一次。")
            return False
    return True


def feedback_files(folder, checked, names):
    """One file per student: a student is a name and an id (two 张三 of different ids are two people; the
    same name without an id is taken for one student handing in twice)."""
    by_student = defaultdict(list)
    for item in checked:
        by_student[item.student, item.student_id].append(item)
    return [(folder / names[student], class_report.feedback(student[0], items), "utf-8")
            for student, items in by_student.items()]


def class_arguments_problem(args):
    """Why the class check's arguments cannot be used (Chinese), or None: checked before anything is read."""
    if not os.path.isdir(args.submissions):
        return f"{args.submissions} 不是文件夹：请给出全班提交所在的文件夹。"
    outputs = [(text, kind) for text, kind in ((args.report, "report"), (args.csv_file, "csv")) if text]
    if len(outputs) == 2 and Path(os.path.abspath(args.report)) == Path(os.path.abspath(args.csv_file)):
        return "--report 和 --csv 不能是同一个文件。"
    return next((problem for text, kind in outputs
                 for problem in [class_report.target_problem(text, args.submissions, kind)] if problem), None)
