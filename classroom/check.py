"""The class check: every submission of a class against the teacher's own course files, one row each.

Part of verify_loop (the command line, `--class`). classroom/intake.py takes each entry of the class folder in
(a folder, a ZIP, a Moodle folder holding a ZIP, a workspace nested a few folders down); verifier/check.py judges
each loop; this file sums a student's loops up per lesson case into one row with the reasons a teacher reads in
ten seconds (each root cause once, with the loops it touches, at most records.SHOWN_PROBLEMS lines a student),
has classroom/copies.py name the records and clocks submissions share, says when most of the class ran on
course files other than the teacher's (another version of the course, not an edit), and hands the rows to
classroom/report.py. Every reason and note is a finding (verifier/findings.py): causes are grouped by their kind and
fields, never by their words, and a contradiction is known by its kind. workspace_row() gives one workspace's row
exactly as the teacher will see it, for the student's own check before handing in.

A class of POOL_FROM submissions or more is checked by one process per core (submissions are independent).
It does not import loop_lab.py, harness.py, export_review.py or machinery/. What it shares: cli.py's plumbing
(the capped reading of evidence, strict JSON, line endings, glosses, paths shown from the current folder, output)
and, within verify_loop, verifier/check.py (one loop) and verifier/records.py (the lesson's cases, the workspace
listings).
"""
import contextlib
import os
import signal
import tempfile
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from pathlib import Path, PurePosixPath

from classroom import report as class_report
from classroom.copies import mark_copies, record_keys
from classroom import grades as class_grades
from classroom import roster as class_roster
from classroom import upload
from classroom.intake import Submission, Untrusted, checked_evidence, class_folder, reason, taken_in
from classroom.intake import scratch_folder as private_folder
from classroom.platforms import Handed, handed_in
from classroom.releases import release_of
from cli import EXIT_OK, EXIT_STOP, display_path, print_json, say, visible
from verifier.check import check_loop
from verifier.findings import Finding, at_most
from verifier.records import CASES, DEFAULT_BUDGET, SCHEMA, CourseFiles, Workspace

HERE = Path(__file__).resolve().parent.parent  # the teacher's workspace, which holds this package
POOL_FROM, MAX_WORKERS = 64, 8  # submissions from which the check uses every core; at most this many processes
# the kinds of a stop or decision the evidence does not support: read first
CONTRADICTIONS = {"stop_unsupported", "stop_contradicted", "decision_contradicted", "last_stop_contradicted"}
CUT_OFF = {"attempt_unfinished", "attempt_unfinished_no_child"}  # an attempt a stop cut off


class TeacherCourse(CourseFiles):
    """The teacher's course files, named the same way whoever runs the check and from wherever, and the earlier
    releases of the course it knows (classroom/releases.json)."""

    def label(self):
        return Finding("course_teacher")

    def release(self, entries):
        return release_of(entries)


def teacher_course():
    """The reference course files: the workspace holding this file."""
    return TeacherCourse(HERE)


# --- one submission ------------------------------------------------------------------------------

class Checked:
    """One submission once checked: its loops, what is missing, and what the class adds (shared records)."""

    def __init__(self, submission, handed, entry_shown):
        self.student, self.student_id = handed.student, handed.student_id
        self.names, self.folder, self.earlier = handed.names, handed.folder, handed.earlier
        self.key = (handed.student, handed.student_id)  # the platform's names, whatever a roster shows instead
        self.entry, self.entry_name, self.source = entry_shown, Path(entry_shown).name, submission.source
        self.path = Path(handed.entry) if handed.entry else None  # the entry itself, for a page's links
        self.where = ""  # the workspace inside the submission, when it is not the top
        self.loops, self.strays, self.records, self.copies, self.orphans = [], [], [], [], []
        self.refused = [submission.refused] if submission.refused else []
        self.packaging = submission.packaging  # findings, as everything a row says
        self.reasons, self.notes = [], []
        self.row = None

    def finish(self, course_label):
        """Sets the row, its reasons and its notes from everything known about this submission. A loop that an
        honest stop cut short (interrupted, timed out, its record consistent with its evidence) is a note: it
        counts for no case and holds nothing back."""
        counted = [loop for loop in self.loops if not loop["cut_short"]]
        cases = {case: case_state([loop for loop in counted if loop["case"] == case]) for case, _, _ in CASES}
        unread = self.packaging or self.refused  # a submission not read misses nothing: it was not looked at
        missing = [] if unread else [case for case, state in cases.items() if state == "missing"]
        found = ([Reason(self.packaging)] if self.packaging else
                 reasons(self.refused, counted, self.copies, missing, course_label))
        # then "…以及另外 K 条"
        self.reasons = [found if type(found) is Reason else Reason(found) for found in at_most(found)]
        self.notes = [*earlier_note(self.earlier), *(cut_short_note(loop) for loop in self.loops if loop["cut_short"]),
                      *(resumed_note(loop) for loop in self.loops if loop["resumed"] and not loop["cut_short"]),
                      *(orphan_note(*orphan) for orphan in self.orphans)]
        self.row = {"student": self.student, "id": self.student_id, "result": self.result(counted, missing),
                    "cases": cases, "loops": len(self.loops), "problems": [reason.text for reason in self.reasons],
                    "kinds": [reason.kind for reason in self.reasons]}  # each problem's kind, in their order
        if self.notes:
            self.row["notes"] = [class_report.shortened(visible(note.sentence())) for note in self.notes]
            self.row["note_kinds"] = [note.kind for note in self.notes]
        return self

    def unless_runs_needed(self, submission):
        """A workspace without runs/ is complete when no loop made an attempt (lesson 14's permission and
        --max-seconds 0 loops make no child run, and git keeps no empty folder); once one did, or its record
        cannot say, the child runs were left out in packing: packaging, nothing of it counted."""
        if submission.without_runs and any(loop["attempts"] != 0 for loop in self.loops):
            self.packaging = submission.cannot(submission.without_runs).packaging
            self.loops, self.strays, self.records, self.refused, self.where = [], [], [], [], ""
            self.orphans = []

    def result(self, loops, missing):
        """packaging (nothing checked) before fail, then needs_human (copies too), then incomplete, then pass."""
        results = {loop["result"] for loop in loops}
        if self.packaging:
            return "packaging"
        if self.refused or "fail" in results:
            return "fail"
        if "needs_human" in results or self.copies:
            return "needs_human"
        return "incomplete" if missing else "pass"


class Reason:
    """One line of a row's reasons: FINDING, the cause, with the LOOPS it touches (their folders, when the cause is a
    loop's); its kind is the cause's. TEXT: the teacher's words; FOR_STUDENT: the student's (never naming anyone
    else)."""

    def __init__(self, finding, loops=()):
        self.finding, self.loops = finding, list(loops)
        if not loops:
            shown = finding
        elif len(loops) == 1:
            shown = Finding("in_loop", loop=loops[0], finding=finding)
        else:
            shown = Finding("in_loops", finding=finding, count=len(loops), loops=self.loops)
        self.text = class_report.shortened(visible(shown.sentence()))
        self.for_student = class_report.shortened(visible(shown.sentence(student=True)))

    @property
    def kind(self):
        return self.finding.kind


def check_entry(handed, course, scratch, shown=None):
    """The Checked of one person's hand-in (a Handed); a ZIP's copy in SCRATCH is gone when this returns.
    SHOWN: how the entry is named to the teacher (default: its path from the current folder)."""
    shown = shown or (display_path(handed.entry) if handed.entry else handed.folder)
    if handed.packaging:
        return Checked(Submission(handed.entry or handed.folder, "学习平台的下载").cannot(handed.packaging), handed, shown)
    try:
        with taken_in(handed.entry, scratch) as submission:
            item = Checked(submission, handed, shown)
            if submission.workspace is not None:
                check_workspace(item, submission.root, submission.workspace, course)
                item.unless_runs_needed(submission)
            return item
    except Exception as exc:  # a submission shaped in a way nobody foresaw is one row that says so, never a crash
        return Checked(Submission(handed.entry, "？").cannot("intake_crashed", entry=Path(handed.entry).name,
                                                              error_type=type(exc).__name__), handed, shown)


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
    item.refused += [problem.map(relative) for problem in folders.problems() + [folders.links_problem()] if problem]
    item.orphans = [(relative(display_path(Path(workspace) / "loop-runs" / loop)),
                     [relative(display_path(Path(workspace) / "runs" / child)) for child in children])
                    for loop, children in folders.orphans().items()]
    copies = {loop["run"] for loop in item.loops if loop["copy_of"]}  # named by the loop check: for a person
    item.records = record_keys(folders, PurePosixPath(*Path(workspace).relative_to(root).parts), copies)


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
                   problems=[finding.map(relative) for finding in result["findings"]],
                   notes=[finding.map(relative) for finding in result["remarks"]])
    summary["resumed"] = resumes(check.record)
    summary["case"] = None if summary["resumed"] else case_of(summary)  # a resumed loop is none of the six cases
    # an older version's files differ from the teacher's of course: the check judged the loop on them instead
    seen = changed_course_files(check.record, course) if result["result"] != "pass" and not check.version else ()
    summary["course"], summary["course_seen"] = tuple(rel for rel, _ in seen), seen
    summary["cut_short"] = cut_short(check)
    summary["copy_of"] = check.copy_of
    summary["older"] = check.version if check.version_note else None
    if summary["older"]:  # said once for the student (older_versions()); everything else the check found stands
        said = check.version_note.map(relative)
        summary["problems"] = [problem for problem in summary["problems"] if problem != said]
    return summary


def cut_short(check):
    """How an honest stop cut the loop short ("interrupted/keyboard_interrupt" ...), or None: its record is of
    today's schema, nothing in it fails, and all it leaves for a person is what the stop cut off (the undecided
    end and its unfinished attempt). A loop left `running` (killed outright) is not one: nobody knows how it ended."""
    record = check.record if type(check.record) is dict else {}
    stopped = record.get("status") == "interrupted" or record.get("reason") == "attempt_timeout"
    if record.get("schema") != SCHEMA or not stopped or check.verdict.problems or not check.judged:
        return None
    expected = check.undecided_note()
    if not all(note == expected or note.kind in CUT_OFF for note in check.verdict.notes):
        return None
    return f"{record['status']}/{record['reason']}"


def resumes(record):
    """How many times a record of today's schema was resumed (its segments after the first); 0 for any other."""
    segments = record.get("segments") if type(record) is dict and record.get("schema") == SCHEMA else None
    return len(segments) - 1 if type(segments) is list and len(segments) > 1 else 0


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
    """The finding said above the table when other_course_version() found FILES."""
    return Finding("course_version", files=files, course=course_label)


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
    first, causes, grouped = [], defaultdict(list), {}
    for loop in sorted(loops, key=lambda loop: loop["result"] != "fail"):
        for problem in loop["problems"]:  # an older version is said once, below; what else was found stands
            if problem.kind in CONTRADICTIONS:
                first.append(Reason(problem, [loop["folder"]]))
            elif not any(problem.mentions(rel) for rel in loop["course"]):  # one changed course file: said once below
                grouped.setdefault(problem.key(), (problem, []))[1].append(loop["folder"])
        if loop["course"]:
            causes[loop["course"]].append(loop["run"])
    found = [*map(Reason, refused), *first]
    found += older_versions(loops)
    found += [Reason(Finding("course_files_differ", files=list(files), course=course_label, count=len(runs),
                             runs=runs)) for files, runs in causes.items()]
    failing = {problem.key() for loop in loops if loop["result"] == "fail" for problem in loop["problems"]}  # one pass
    found += [Reason(problem, folders) for key, (problem, folders) in grouped.items() if key in failing]
    found += copies
    found += [Reason(problem, folders) for key, (problem, folders) in grouped.items() if key not in failing]
    if missing:
        found.append(Reason(Finding("missing_case" if len(missing) == 1 else "missing_cases", cases=missing)))
    return found


def older_versions(loops):
    """One reason for every loop made with an older version of the workspace, naming which."""
    older = defaultdict(list)
    for loop in loops:
        if loop["older"]:
            older[loop["older"]].append(loop["run"])
    if not older:
        return []
    runs = [run for group in older.values() for run in group]
    return [Reason(Finding("older_versions", versions=list(older), count=len(runs), runs=runs))]


def earlier_note(earlier):
    if not earlier:
        return []
    return [Finding("earlier_attempts", count=len(earlier), names=earlier)]


def cut_short_note(loop):
    return Finding("cut_short", folder=loop["folder"], stop=loop["cut_short"])


def resumed_note(loop):
    return Finding("resumed_note", folder=loop["folder"], count=loop["resumed"], result=loop["result"])


def orphan_note(loop_folder, children):
    """A loop folder gone and its children left (a loop deleted or moved): a note for a person; lesson 13's runs
    may be named so too, so it holds nothing back."""
    return Finding("orphan_children", children=list(children), loop=Path(loop_folder).name, folder=loop_folder)


# --- one workspace, as the teacher will see it ----------------------------------------------------

def workspace_row(root, student, course=None, student_id=""):
    """The row of the workspace ROOT (holding loop-runs/ and runs/) exactly as the class check shows it:
    {"student", "id", "result", "cases", "loops", "problems", "kinds"}, paths relative to ROOT. The same intake rules
    apply (no runs/ beside loop-runs/ is packaging once a loop made an attempt); copies are looked for inside the
    workspace only."""
    course = TeacherCourse(course.root if course is not None else HERE)
    submission = checked_evidence(Submission(root, "工作区").found(root, root))
    item = Checked(submission, Handed(root, student, student_id), display_path(root))
    if submission.workspace is not None:
        check_workspace(item, Path(root), Path(root), course)
        item.unless_runs_needed(submission)
    mark_copies([item], Reason)
    return item.finish(course.label()).row


def entry_row(entry, student, course=None, student_id=""):
    """The row of the hand-in ENTRY (a ZIP or a folder) exactly as the teacher's class check shows it: taken in
    by the teacher's intake, then checked (copies looked for inside it only). For --pack's own ZIP."""
    course = TeacherCourse(course.root if course is not None else HERE)
    with private_folder("hand-in-", scratch_base(Path(entry).parent)) as scratch:
        item = check_entry(Handed(entry, student, student_id), course, scratch, display_path(entry))
    mark_copies([item], Reason)
    return item.finish(course.label()).row


# --- a whole class -------------------------------------------------------------------------------

def scratch_base(class_dir):
    """Where ZIPs are copied out for the check, never inside the class folder: Linux's memory-backed /dev/shm
    where it can be written (a ZIP's few dozen small files come and go in microseconds there), else the
    system's temporary folder."""
    memory = Path("/dev/shm")
    base = memory if memory.is_dir() and os.access(memory, os.W_OK) else Path(tempfile.gettempdir())
    return str(Path(class_dir).resolve().parent) if class_report.inside(base, class_dir) else str(base)


def check_all(handed, course, scratch, shown):
    """Every hand-in checked (on every core for a big class), then the records they share, then the rows."""
    course.entries()  # hashed once, before any worker gets its copy
    checked = checked_entries(handed, course, scratch, shown)
    mark_copies(checked, Reason)
    return [item.finish(course.label()) for item in checked]


def checked_entries(handed, course, scratch, shown):
    """check_entry of each hand-in, in order. Submissions are independent, so a class of POOL_FROM or more is
    shared among one process per core; a smaller one is checked here (a pool's start-up would cost more)."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if workers < 2 or len(handed) < POOL_FROM:
        return [check_entry(person, course, scratch, name) for person, name in zip(handed, shown)]
    pool = ProcessPoolExecutor(workers, initializer=quiet_worker)
    try:
        return list(pool.map(check_entry, handed, repeat(course), repeat(scratch), shown, chunksize=16))
    finally:  # Ctrl-C: what is queued is dropped, what runs ends within its chunk
        pool.shutdown(cancel_futures=True)


def quiet_worker():
    """A worker leaves Ctrl-C and termination to the main process, which stops the pool and says so once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def check_class(parser, args):
    """`--class`: every hand-in of the class folder (or of Moodle's download-all ZIP) against the course files
    beside this file; with --roster one row per person on it, then the hand-ins that match nobody."""
    course = teacher_course()
    people = class_roster.read_roster(parser, args.roster, bool(args.grades), args.assignment) \
        if args.roster else None
    with contextlib.ExitStack() as stack:
        def scratch_folder():  # made only when needed: a folder that cannot be listed leaves nothing behind
            return stack.enter_context(private_folder("class-check-", scratch_base(args.submissions)))
        class_dir, download = opened_class(parser, args.submissions, scratch_folder)
        handed, aside = listed_entries(parser, class_dir)
        names = class_report.feedback_names((person.student, person.student_id) for person in handed)
        problem = upload.outputs_problem(args, [*names.values(), *(page_name(name) for name in names.values()
                                                                   if args.html)], people)
        if problem:
            parser.error(problem)
        shown = [shown_entry(person, class_dir, download) for person in handed]
        checked = check_all(handed, course, scratch_folder(), shown)
    rows = class_roster.rows_for(people, checked) if people else [(item.row, item) for item in checked]
    for row, _ in rows:
        print_json(row)
    aside = [(shown_aside(name, class_dir, download), why) for name, why in aside]
    for entry, why in aside:
        say(class_report.set_aside(entry, why))
    skew = other_course_version(checked)
    note = version_note(skew, course.label()) if skew else ""
    say_class(checked, rows, note, people is not None)
    written = write_outputs(args, course, checked, rows, names, aside, note, people, download)
    return EXIT_OK if written and all(row["result"] == "pass" for row, _ in rows) else EXIT_STOP


def opened_class(parser, submissions, make_scratch):
    """(the folder whose entries are the hand-ins, Moodle's download-all ZIP they came from or None)."""
    try:
        return class_folder(submissions, make_scratch)
    except Untrusted as exc:
        parser.error(f"{submissions} 是全班的下载压缩包，但{exc}：没有核对任何提交。请重新下载，或解压后给出文件夹。")
    except OSError as exc:
        parser.error(f"{submissions} 无法读取（{reason(exc)}），请确认有读取权限。")


def shown_entry(person, class_dir, download):
    """The hand-in as the teacher names it: its path from here, or inside the download-all ZIP."""
    if download is None:
        return display_path(person.entry) if person.entry else display_path(Path(class_dir) / person.folder)
    return f"{display_path(download)}/{Path(person.entry).name if person.entry else person.folder}"


def shown_aside(name, class_dir, download):
    return f"{display_path(download)}/{name}" if download else display_path(Path(class_dir) / name)


def listed_entries(parser, class_dir):
    try:
        handed, aside = handed_in(class_dir)
    except OSError as exc:  # no permission to list it: no submission can be read
        parser.error(f"{class_dir} 无法列出里面的内容（{reason(exc)}），请确认有读取权限。")
    if not handed:
        parser.error(f"{class_dir} 里没有学生的提交：每个学生一个文件夹或一个 .zip 压缩包，"
                     "里面是工作区的 loop-runs/ 和 runs/。")
    return handed, aside


def say_class(checked, rows, note, with_roster):
    for item in checked:
        for stray in item.strays:
            say(visible(Finding("stray", entry=class_report.cut(item.entry), stray=class_report.cut(stray)).sentence()))
    if note:
        say(visible(note.sentence()))
    rows = [row for row, _ in rows]
    say("\n".join(class_report.table(rows, class_report.console_cell)))
    for lines in filter(None, map(class_report.row_lines, rows)):
        say("\n".join(lines))
    say(class_report.totals(rows, with_roster))


def write_outputs(args, course, checked, rows, names, aside, note, people, download=None):
    """--report, --csv, --feedback, --grades, --feedback-zip and --html, each on its own: one that cannot be written
    (one student's feedback file) is said on stderr and the others are still written; False when any was not.
    DOWNLOAD: the download-all ZIP the entries came from (then a page links to none of them)."""
    grades = class_grades.grades_file(people) if args.grades else None
    said = grades_said(args, people, grades) if grades else []
    for sentence in said:
        say(sentence)
    outputs = []
    if args.report:
        outputs.append((args.report, class_report.class_report(display_path(args.submissions),
                                                               CourseFiles.label(course), rows, aside, note,
                                                               with_roster=people is not None, said=said), "utf-8"))
    if args.csv_file:
        outputs.append((args.csv_file, class_report.class_csv([row for row, _ in rows]), "utf-8-sig"))
    if args.html:
        from classroom.page import class_page
        outputs.append((args.html, class_page(args.html, display_path(args.submissions), CourseFiles.label(course),
                                              rows, aside, note, people is not None, said, download), "utf-8"))
    hidden = teacher_paths(course.root, args.submissions)
    files = feedback_files(checked, names, hidden, bool(args.html)) if args.feedback or args.feedback_zip else []
    if args.feedback:
        outputs += [(Path(args.feedback) / name, text, "utf-8") for group in files for name, text in group]
    if grades:
        outputs.append((args.grades, grades.text, grades.encoding))
    if args.feedback_zip:
        outputs.append((args.feedback_zip, upload.feedback_zip(checked, files), None))
    written = True
    for target, text, encoding in outputs:
        try:
            Path(target).parent.mkdir(exist_ok=True)
            class_report.write_text_atomic(target, text, encoding)
        except OSError as exc:
            say(Finding("output_failed", target=class_report.cut(display_path(Path(target))),
                        error_type=type(exc).__name__).sentence())
            written = False
    return written


def grades_said(args, people, grades):
    """What is said about the grades file: the teacher's own entries it kept, and its encoding when the roster's
    was another one."""
    said = []
    if grades.kept:
        shown = "、".join(f"{class_report.cut(name, class_report.NAME_LIMIT)}（{held(grade, comment)}）"
                         for name, grade, comment in grades.kept[:20])
        more = f" 等 {len(grades.kept)} 人" if len(grades.kept) > 20 else ""
        said.append(f"成绩文件 {class_report.cut(display_path(Path(args.grades)))} 保留了名单里已有的成绩或评语："
                    f"{shown}{more}。这些是老师自己填的（不是这个核对以前写的），没有改写；要换成核对给的成绩，"
                    "请先在学习平台里清空这一格，再下载名单核对一次。")
    if people.converted or people.delimiter == "\t":
        tabs = people.delimiter == "\t"
        said.append(f"名单 {class_report.cut(display_path(Path(args.roster)))} 是 {people.encoding.upper()} 编码"
                    f"{'（制表符分隔）' if tabs else ''}；成绩文件 {class_report.cut(display_path(Path(args.grades)))} "
                    f"按 UTF-8{'（带 BOM）' if grades.bom else ''}{'、逗号分隔' if tabs else ''}写出：学习平台的上传表单"
                    "读的是 UTF-8 和逗号（Moodle 上传时“编码”保持 UTF-8、分隔符保持逗号）。")
    return said


def held(grade, comment):
    if grade and comment:
        return f"成绩 {class_report.cut(grade, 12)} 和评语"
    return f"成绩 {class_report.cut(grade, 12)}" if grade else "评语"


def teacher_paths(*folders):
    """A function hiding where FOLDERS (the teacher's workspace, the class folder) are on the teacher's machine,
    as any message may spell them, in a text a student receives."""
    spellings = {}
    for folder, words in zip(folders, ("老师的课程文件", "提交")):
        for shown in {display_path(folder), str(folder), os.path.abspath(folder), os.path.realpath(folder),
                      Path(os.path.abspath(folder)).as_posix()}:
            if "/" in shown or os.sep in shown:  # a path, never a bare word a student's own name may hold
                spellings[shown] = words

    def private(text):
        for shown in sorted(spellings, key=len, reverse=True):
            text = text.replace(shown, spellings[shown])
        return text
    return private


def feedback_files(checked, names, private=lambda text: text, html=False):
    """[[(file name, text)]]: the files of each student, a student being a name and an id (two 张三 of different ids
    are two people; the same name without an id is taken for one student handing in twice): NAME.md and, with HTML,
    NAME.html beside it (classroom/page.py); PRIVATE hides the teacher's folders in every text."""
    by_student = defaultdict(list)
    for item in checked:
        by_student[item.key].append(item)
    files = []
    for key, items in by_student.items():
        group = [(names[key], class_report.feedback(items[0].student, items, private))]
        if html:
            from classroom.page import student_page
            group.append((page_name(names[key]), student_page(items[0].student, items, private)))
        files.append(group)
    return files


def page_name(name):
    """The page beside a feedback file NAME.md: NAME.html."""
    return name.removesuffix(".md") + ".html"


def class_arguments_problem(args):
    """Why the class check's arguments cannot be used (Chinese), or None: checked before anything is read."""
    if not os.path.isdir(args.submissions) and not args.submissions.lower().endswith(".zip"):
        return f"{args.submissions} 不是文件夹：请给出全班提交所在的文件夹（或 Moodle“下载所有提交”得到的 .zip）。"
    if not os.path.lexists(args.submissions):
        return f"{args.submissions} 不存在：请给出全班提交所在的文件夹（或 Moodle“下载所有提交”得到的 .zip）。"
    if args.grades and not args.roster:
        return "--grades 写回的是名单文件本身：请同时用 --roster 给出名单（例如 Moodle 的评分工作表）。"
    if args.assignment is not None and not args.roster:
        return "--assignment 选的是 Canvas 成绩册里的一个作业列：请同时用 --roster 给出成绩册（和 --grades 写到哪里）。"
    return upload.targets_problem(args)
