"""Who handed in what: the entries of a class folder read by the names each learning platform gives them.

Part of verify_loop's class check (classroom/intake.py then takes each submission in). The platforms name their
downloads like this:

- Moodle: a folder per participant and plugin, `Full Name_<participant id>_assignsubmission_<plugin>` since 4.1
  (mod/assign/classes/downloader.php) and `…_assignsubmission_<plugin>_` before (mod/assign/locallib.php), or one
  entry per file `…_assignsubmission_<plugin>_<original name>` when "download as folders" is off; the full name has
  `_` replaced by a space, so the participant id is the second `_` part (what the feedback-ZIP import reads);
- Canvas: `<name>[_late]_<user id>_<attachment id>_<original name>`, where the name is the sortable name with every
  non-word character removed and the whole lower-cased, "LATE" included (app/models/content_zipper.rb: CJK and
  accented letters stay, `lǐsì`, `李四`); with anonymous grading the name is left out; a re-submission's original
  name may end `-N`;
- Blackboard: `<assignment>_<username>_attempt_<yyyy-mm-dd-hh-mm-ss>_<original name>` per file of an attempt,
  and the attempt's receipt `<assignment>_<username>_attempt_<timestamp>.txt` (its `Name:` line names the student);
- GitHub Classroom: `<assignment>-submissions/<assignment>-<username>/`, one clone per student;
- anything else is one submission named by its entry (a folder or a ZIP, the name without `.zip`).

Every person is one Handed: the entry judged (the latest attempt), their names (for the roster and their own
feedback), the earlier attempts (named on the row, never checked or compared). Files that belong to a submission
(a receipt, a note, an online-text page) or to nobody (a roster, a spreadsheet at the top) are set aside and said
once, never rows; why an entry is set aside, or nothing can be checked, is a finding (its words verifier/findings.py's).
What it shares: cli.py's plumbing (capped reads of plain files).
"""
import os
import re
from collections import defaultdict
from pathlib import Path

from cli import read_evidence
from verifier.findings import Finding

JUNK = {"__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini"}  # what operating systems add by themselves
MOODLE = re.compile(r"(?P<name>.+?)_(?P<id>[^_]+)_assignsubmission_(?P<plugin>[a-z]+)(?:_.*)?", re.DOTALL)
# The name is word characters only (Canvas removed the rest); \w takes CJK and accented letters as Python's str does
CANVAS = re.compile(r"(?:(?P<login>\w+?)_)??(?:(?P<late>late)_)?(?P<uid>[0-9]+)_(?P<aid>[0-9]+)_(?P<original>.+)",
                    re.DOTALL | re.IGNORECASE)
CANVAS_AGAIN = re.compile(r".*-(?P<n>[0-9]+)(?:\.[^.]*)?")  # a re-submission's original name: 张三-1.zip
# The assignment is the shortest prefix: the student names the original file at the end, and a file named like
# another student's attempt (x_alice_attempt_2099-…_a.zip) must stay its uploader's.
BLACKBOARD = re.compile(r"(?P<assignment>.+?)_(?P<user>[^_]+)_attempt_(?P<time>[0-9]{4}(?:-[0-9]{2}){5})"
                        r"(?:(?P<receipt>\.txt)|_(?P<original>.+))", re.DOTALL)
RECEIPT_NAME = re.compile(r"^\s*(?:Name|姓名)\s*[:：]\s*(?P<name>.+?)\s*$", re.MULTILINE)
RECEIPT_CAP = 64 * 1024  # a receipt is a few hundred bytes
DOCUMENTS = {".txt", ".csv", ".tsv", ".xlsx", ".xls", ".ods", ".md", ".pdf", ".doc", ".docx", ".html", ".htm",
             ".rtf", ".odt", ".json", ".png", ".jpg", ".jpeg"}  # a teacher's list or a student's note, no workspace


class Handed:
    """One person's hand-in: ENTRY (the path judged; None when only a receipt arrived), the names shown (STUDENT,
    STUDENT_ID), every name of theirs (NAMES, for the roster), EARLIER attempts' entry names, the download's
    FOLDER name (Moodle's feedback upload matches it), and PACKAGING when nothing can be checked."""

    def __init__(self, entry, student, student_id="", platform="", names=(), folder=None):
        self.entry, self.student, self.student_id, self.platform = entry, student, student_id, platform
        self.names = [name for name in dict.fromkeys([student, student_id, *names]) if name]
        self.folder = folder or (Path(entry).name if entry else student)
        self.earlier, self.packaging, self.notes = [], None, []

    def shown_entry(self):
        return str(self.entry) if self.entry else self.folder


def is_junk(name):
    return name in JUNK or name.startswith("._") or name.startswith(".")


def handed_in(class_dir):
    """([Handed] in the order of their entries' names, [(entry name, why it is set aside)]). OSError passes."""
    class_dir = Path(class_dir)
    with os.scandir(class_dir) as scanned:
        folders = {entry.name: entry.is_dir(follow_symlinks=False) for entry in scanned if not is_junk(entry.name)}
    assignment = class_dir.name[:-len("-submissions")] + "-" if class_dir.name.endswith("-submissions") else None
    handed, aside, groups = [], [], defaultdict(list)
    for name in sorted(folders):
        for platform, pattern in (("moodle", MOODLE), ("blackboard", BLACKBOARD), ("canvas", CANVAS)):
            match = pattern.fullmatch(name)
            if match and (platform != "canvas" or not folders[name]):
                groups[platform, person_key(platform, match)].append((name, match))
                break
        else:
            if not folders[name] and Path(name).suffix.lower() in DOCUMENTS:
                aside.append((name, Finding("aside_document")))
            elif assignment and folders[name] and name.startswith(assignment) and len(name) > len(assignment):
                login = name[len(assignment):]
                handed.append(Handed(class_dir / name, login, "", "github", [login], folder=name))
            else:
                handed.append(Handed(class_dir / name, *plain_student(name)))
    for (platform, _), entries in groups.items():
        person, set_aside = PEOPLE[platform](class_dir, entries, folders)
        handed.append(person)
        aside += set_aside
    handed.sort(key=lambda person: Path(person.shown_entry()).name)
    return handed, sorted(aside)


def plain_student(entry_name):
    name = entry_name[:-4] if entry_name.lower().endswith(".zip") else entry_name
    return name, ""


def person_key(platform, match):
    return {"moodle": lambda: (match["name"], match["id"]), "blackboard": lambda: match["user"].lower(),
            "canvas": lambda: match["uid"]}[platform]()


def can_hold(name, folders):
    """An entry that can hold a workspace: a folder or a .zip."""
    return folders[name] or name.lower().endswith(".zip")


def moodle_person(class_dir, entries, folders):
    """One participant: the file plugin's folder or ZIP is judged; their other entries belong to it."""
    _, match = entries[0]
    holding = [name for name, m in entries if m["plugin"] == "file" and can_hold(name, folders)]
    chosen = holding[0] if holding else entries[0][0]
    person = Handed(class_dir / chosen, match["name"], match["id"], "moodle", folder=moodle_folder(chosen, match))
    aside = [(name, Finding("aside_moodle_part", chosen=chosen)) for name, _ in entries if name != chosen]
    if len(holding) > 1:
        person.packaging = Finding("moodle_several", count=len(holding), names=holding)
        aside = [item for item in aside if item[0] not in holding]
    return person, aside


def moodle_folder(chosen, match):
    """The folder name Moodle's feedback-ZIP import matches to this participant: the download's own folder name
    when the submission was a folder (4.1 and later end it without `_`, earlier versions with), else the shape
    both read (`…_assignsubmission_file_`)."""
    shape = f"{match['name']}_{match['id']}_assignsubmission_file"
    return chosen if chosen == shape else shape + "_"


def canvas_person(class_dir, entries, folders):
    """One Canvas user: the ZIP of the highest attachment id (then -N) is judged; the earlier ones are named,
    other files (a note uploaded beside the ZIP) belong to the submission."""
    def order(item):
        name, match = item
        again = CANVAS_AGAIN.fullmatch(match["original"])
        return int(match["aid"]), int(again["n"]) if again else 0
    zips = sorted((item for item in entries if item[0].lower().endswith(".zip")), key=order)
    chosen = (zips or sorted(entries, key=order))[-1][0]
    match = dict(entries)[chosen]
    login = match["login"] or ""  # anonymous grading leaves the name out: the user id is all there is
    person = Handed(class_dir / chosen, login or match["uid"], match["uid"], "canvas", [login])
    person.earlier = [name for name, _ in zips[:-1]]
    aside = [(name, Finding("aside_canvas_file", chosen=chosen))
             for name, _ in entries if name != chosen and name not in person.earlier]
    return person, aside


def blackboard_person(class_dir, entries, folders):
    """One Blackboard user: the latest attempt (by its timestamp) is judged, its files and receipt belong to it;
    an attempt with a receipt and no file uploaded nothing (packaging). Earlier attempts are named."""
    attempts = defaultdict(list)
    for name, match in entries:
        attempts[match["time"]].append((name, match))
    latest = max(attempts)
    files = [name for name, match in attempts[latest] if not match["receipt"]]
    receipts = [name for name, match in attempts[latest] if match["receipt"]]
    user = entries[0][1]["user"]
    shown = receipt_name(class_dir, receipts, user)
    zips = [name for name in files if name.lower().endswith(".zip")]
    chosen = zips[0] if len(zips) == 1 else (files[0] if len(files) == 1 else None)
    judged = chosen or (receipts[0] if not files else None)  # a lone receipt is what the row shows
    person = Handed(class_dir / judged if judged else None, shown, user, "blackboard", [user],
                    folder=f"{entries[0][1]['assignment']}_{user}_attempt_{latest}")
    if not files:
        person.packaging = Finding("blackboard_receipt_only", receipt=receipts[0])
    elif chosen is None:
        person.packaging = Finding("blackboard_several", count=len(files), names=files)
    person.earlier = [f"{time}" for time in sorted(attempts) if time != latest]
    aside = [(name, Finding("aside_blackboard_receipt" if match["receipt"] else "aside_blackboard_file",
                            chosen=chosen or latest))
             for name, match in attempts[latest] if name != chosen and (chosen or not match["receipt"] or files)]
    aside += [(name, Finding("aside_blackboard_earlier", time=time, latest=latest))
              for time in person.earlier for name, _ in attempts[time]]
    return person, aside


def receipt_name(class_dir, receipts, user):
    """The student's name as the receipt's Name line says it ("Name: 张三 (zhangsan)" gives 张三); else USER."""
    for name in receipts:
        try:
            text = read_evidence(class_dir / name, RECEIPT_CAP).decode("utf-8", errors="replace")
        except OSError:
            continue
        match = RECEIPT_NAME.search(text)
        if match:
            shown = re.sub(rf"\s*\(\s*{re.escape(user)}\s*\)$", "", match["name"]).strip()
            return shown or user
    return user


PEOPLE = {"moodle": moodle_person, "canvas": canvas_person, "blackboard": blackboard_person}
