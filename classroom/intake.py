"""The teacher's intake: what each entry of the class folder is, and where the student's workspace is in it.

Part of verify_loop's class check (classroom/check.py does the checking). Each entry of the class folder is one
submission, as a learning platform hands it over: a folder, a `.zip`, or a folder holding exactly one `.zip`
(Moodle's "download all submissions"). Inside, the workspace is the one folder, at most MAX_DEPTH levels
down, that holds `loop-runs/`. Whatever cannot be taken is a packaging problem, said in Chinese and never
an accusation.

A ZIP is never unpacked into the class folder, and is trusted as a whole or not at all: every member is
looked at first (a name outside the archive, an absolute or drive-letter name, a link, an encrypted member,
too many members, too many bytes or too high a compression ratio refuse the whole ZIP), then only the
workspace's `loop-runs/` and `runs/` are copied into a private temporary folder outside the class folder,
removed right after that submission is checked. A platform's download of the whole class is unpacked the same
way, each student's ZIP inside it copied whole, then read under a student's ZIP's own caps (as if the teacher had
unzipped the download first). Folders are made and removed walking with a list, never by recursion: no depth of
folders in a ZIP can exhaust Python's stack. Why an entry cannot be taken is a finding (a kind with fields, its words
verifier/findings.py's). What it shares: cli.py's plumbing (how an entry's kind is named, the capped reading of a
file that is never opened unless it is a plain file), classroom/platforms.py's names of each platform's entries,
and verifier/records.py's disk_key (names as a disk compares them).
"""
import contextlib
import os
import re
import stat
import struct
import tempfile
import zipfile
import zlib
from io import BytesIO
from pathlib import Path, PurePosixPath

from classroom.platforms import CANVAS, DOCUMENTS, JUNK, MOODLE, plain_student
from cli import EvidenceError, entry_kind, gloss, read_evidence, visible
from verifier.findings import Finding
from verifier.records import disk_key

MAX_DEPTH = 4                    # folders between the submission and its workspace (Extract All adds one or two)
EVIDENCE = ("loop-runs", "runs")
# Caps no honest hand-in comes near (a whole workspace is under 1,000 files and a few MB); beyond them a
# ZIP is a packaging problem, never read further.
MAX_ZIP_BYTES = 64 * 2 ** 20     # the .zip file itself
MAX_MEMBERS = 10_000
MAX_UNPACKED = 256 * 2 ** 20     # the members' declared sizes together
# The verifier reads no evidence file past 1 MiB (docs/loop/TASK.md): a member is taken out one byte further, so
# a bigger one still reads as over the cap, and no more of it is unpacked.
MEMBER_READ = 2 ** 20 + 1
# The most bytes a member's entry in the directory takes: a fixed 46, its name and its extra fields; no honest one
# comes near this, so a directory bigger than the member cap of them is no honest ZIP's and is not read.
DIRECTORY_ENTRY = 512
MAX_RATIO, RATIO_FROM = 100, 2 ** 16  # a member over 64 KiB may be at most 100 times its compressed size
UTF8_FLAG, ENCRYPTED_FLAG = 0x800, 0x1
DRIVE = re.compile(r"[A-Za-z]:")
# Names Windows cannot hold: its devices (with any extension, COM¹-COM³ and LPT¹-LPT³ among them) and these characters
WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                   *(f"{port}{i}" for port in ("COM", "LPT") for i in (*range(1, 10), "¹", "²", "³"))}
WINDOWS_RESERVED = frozenset('<>:"|?*')


class Submission:
    """One entry of the class folder once taken in.

    ROOT is the folder the student's paths are shown from (the entry folder, or the private copy of a ZIP's
    members); WORKSPACE the folder in it holding loop-runs/; PACKAGING, when set, says why nothing was checked;
    REFUSED, when set, why the entry fails unread (a link in place of a student's folder); both are findings.
    """

    def __init__(self, entry, source):
        self.entry, self.source = Path(entry), source
        self.student, self.student_id = student_and_id(self.entry.name)
        self.root = self.workspace = self.packaging = self.refused = self.private = None
        self.without_runs = None  # why no runs/ is a packaging problem (a finding), should a loop have made a child run

    def found(self, root, workspace):
        self.root, self.workspace = Path(root), Path(workspace)
        return self

    def cannot(self, kind, /, **fields):
        """Nothing of it is checked: the finding `packaging`, why being the finding KIND with FIELDS (or KIND itself,
        a finding)."""
        self.packaging = Finding("packaging", why=kind if isinstance(kind, Finding) else Finding(kind, **fields))
        self.root = self.workspace = None
        return self


def student_and_id(entry_name):
    """(student, id) from an entry's name as the platforms name it (classroom/platforms.py), else the name
    without .zip and no id."""
    for pattern, name, number in ((MOODLE, "name", "id"), (CANVAS, "login", "uid")):
        match = pattern.fullmatch(entry_name)
        if match:
            return match[name] or match[number], match[number]  # Canvas's anonymous names hold the id only
    return plain_student(entry_name)


def is_junk(name):
    return name in JUNK or name.startswith("._")


@contextlib.contextmanager
def taken_in(entry, scratch):
    """The Submission of ENTRY; a ZIP's members live in a private folder of SCRATCH until the block ends."""
    submission = take_in(Path(entry), scratch)
    try:
        yield submission
    finally:
        if submission.private:
            remove_tree(submission.private)


@contextlib.contextmanager
def scratch_folder(prefix, base):
    """A new private folder in BASE, removed with everything in it when the block ends (however deep)."""
    folder = tempfile.mkdtemp(prefix=prefix, dir=base)
    try:
        yield folder
    finally:
        remove_tree(folder)


def remove_tree(top):
    """Removes the folder TOP and everything below it, as far as it can, walking with a list (shutil.rmtree
    recurses once a folder before Python 3.12: a copy 1,100 folders deep would exhaust the stack). A read-only
    file (Windows) is made writable first."""
    folders, pending = [], [str(top)]
    while pending:
        folder = pending.pop()
        folders.append(folder)
        try:
            with os.scandir(folder) as entries:
                listed = [(entry.path, entry.is_dir(follow_symlinks=False)) for entry in entries]
        except OSError:
            continue
        for path, is_folder in listed:
            if is_folder:
                pending.append(path)
                continue
            with contextlib.suppress(OSError):
                try:
                    os.unlink(path)
                except PermissionError:
                    os.chmod(path, stat.S_IWRITE)
                    os.unlink(path)
    for folder in reversed(folders):  # the deepest first
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def take_in(entry, scratch):
    try:
        kind = entry_kind(os.lstat(entry))
    except OSError as exc:
        return Submission(entry, "？").cannot("entry_unreadable", entry=entry.name, reason=reason(exc))
    if kind == "文件夹":
        return folder_submission(entry, scratch)
    if kind == "普通文件" and entry.name.lower().endswith(".zip"):
        return zip_submission(Submission(entry, "压缩包"), entry, scratch)
    submission = Submission(entry, kind)
    if kind in ("符号链接", "目录联接"):
        submission.refused = Finding("entry_link", entry=entry.name, kind=kind)
        return submission
    return submission.cannot("entry_not_submission", entry=entry.name, kind=kind)


def reason(exc):
    """An OSError as a person reads it, in Chinese (a finding, or cli.py's words): a missing permission is named."""
    if isinstance(exc, PermissionError):
        return Finding("no_permission")
    if isinstance(exc, EvidenceError):
        return str(exc)
    if isinstance(exc, (FileExistsError, NotADirectoryError, IsADirectoryError)):
        return Finding("file_and_folder")
    return gloss(type(exc).__name__)


# --- a folder ------------------------------------------------------------------------------------

def folder_submission(entry, scratch):
    """A folder: the workspace in it, else the one .zip it holds (Moodle), else a packaging problem."""
    submission = Submission(entry, "文件夹")
    found, unreadable = workspaces_in(entry)
    if len(found) == 1:
        return checked_evidence(submission.found(entry, found[0]))
    if found:
        return submission.cannot("several_workspaces", count=len(found), names=several(found, entry))
    if entry in unreadable:
        return submission.cannot("folder_unreadable", entry=entry.name)
    zips = sorted(path for path in entry.iterdir() if path.name.lower().endswith(".zip") and path.is_file())
    if len(zips) == 1:
        submission.source = f"文件夹里的压缩包 {zips[0].name}"
        return zip_submission(submission, zips[0], scratch)
    if zips:
        return submission.cannot("several_zips", count=len(zips), names=[path.name for path in zips])
    kind, fields = nothing_found(entry, unreadable)
    return submission.cannot(kind, **fields)


def workspaces_in(folder):
    """(folders holding loop-runs/ at most MAX_DEPTH down, folders that could not be listed); links not followed,
    hidden folders, OS junk and the evidence folders themselves not searched."""
    found, unreadable, level = [], [], [folder]
    for _ in range(MAX_DEPTH + 1):
        below = []
        for current in level:
            try:
                with os.scandir(current) as entries:
                    listed = [e for e in entries if not e.name.startswith(".") and not is_junk(e.name)]
            except OSError:
                unreadable.append(current)
                continue
            folders = [e for e in listed if e.is_dir(follow_symlinks=False)]
            if any(e.name == "loop-runs" and (e.is_dir(follow_symlinks=False) or e.is_symlink()) for e in listed):
                found.append(current)  # a linked loop-runs/ is found, then failed by the check: evidence must be here
            below += [Path(e.path) for e in folders if e.name not in EVIDENCE]
        level = below
    return sorted(found), unreadable


def checked_evidence(submission):
    """Both evidence folders must be readable. A missing runs/ is noted: it is a packaging problem only when
    a loop made an attempt (its child run belongs in runs/), which the class check knows once the loops are read."""
    workspace = submission.workspace
    where = shown_in(submission.root, workspace)
    if not os.path.lexists(workspace / "runs"):
        git = Finding("then", finding=Finding("git_hint")) if looks_like_git(workspace) else ""
        submission.without_runs = Finding("only_loop_runs", zip="", where=where, git=git)
    for name in EVIDENCE:
        try:
            if os.path.isdir(workspace / name) and not os.path.islink(workspace / name):
                os.scandir(workspace / name).close()
        except OSError as exc:
            return submission.cannot("evidence_unreadable", where=where, name=name, reason=reason(exc))
    return submission


def looks_like_git(folder):
    return any(os.path.lexists(Path(folder) / name) for name in (".git", ".gitignore"))


def shown_in(root, workspace):
    """Where the workspace is inside the submission, as the start of a sentence ('' when it is the top)."""
    rel = PurePosixPath(*Path(workspace).relative_to(root).parts) if workspace != root else None
    return Finding("inside", folder=str(rel)) if rel else ""


def several(found, root):
    return ["/".join((*Path(p).relative_to(root).parts, "loop-runs")) for p in found[:5]]


def nothing_found(folder, unreadable):
    """(kind, fields) of why no workspace was found in FOLDER."""
    if unreadable:
        return "nothing_readable", {"first": str(PurePosixPath(*Path(unreadable[0]).relative_to(folder).parts))}
    names = sorted(path.name for path in folder.iterdir() if not is_junk(path.name))
    if ".git" in names or ".gitignore" in names:
        return "nothing_in_git", {"hint": Finding("git_hint")}
    return "nothing_found", {"depth": MAX_DEPTH, "names": listed_names(names)}


def listed_names(names):
    """A few of NAMES for a sentence (a finding), or that there are none."""
    if not names:
        return Finding("nothing_inside")
    return Finding("names_more" if len(names) > 8 else "names", names=names[:8])


# --- a ZIP ---------------------------------------------------------------------------------------

class Untrusted(Exception):
    """A ZIP that is not taken: FINDING says why (the finding KIND with FIELDS); the message is its sentence."""

    def __init__(self, kind, /, **fields):
        self.finding = kind if isinstance(kind, Finding) else Finding(kind, **fields)
        super().__init__(self.finding.sentence())


def zip_submission(submission, path, scratch):
    """The workspace of the ZIP at PATH, its evidence copied into a private folder of SCRATCH; else packaging."""
    try:
        data = read_evidence(path, MAX_ZIP_BYTES)
        too_many = directory_problem(data)  # before zipfile builds an object per member
        if too_many:
            return submission.cannot("zip_untrusted", name=path.name, why=too_many)
        archive = zipfile.ZipFile(BytesIO(data))
    except EvidenceError as exc:
        return submission.cannot("zip_not_read", name=path.name, error=str(exc))
    except OSError as exc:
        return submission.cannot("zip_unreadable", name=path.name, reason=reason(exc))
    except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError):
        return submission.cannot("zip_untrusted", name=path.name, why=Finding("zip_broken"))
    submission.private = private = Path(tempfile.mkdtemp(prefix="zip-", dir=scratch))
    try:
        with archive:
            members = trusted_members(archive)
            prefix = workspace_prefix(members)
            extract(archive, members, prefix, private)
    except Untrusted as exc:
        return submission.cannot("zip_untrusted", name=path.name, why=exc.finding)
    if not any(parts[:len(prefix) + 1] == (*prefix, "runs") for parts in members.values()):
        where = Finding("inside", folder="/".join(prefix)) if prefix else ""
        submission.without_runs = Finding("only_loop_runs", zip=Finding("in_zip", name=path.name), where=where, git="")
    return submission.found(private, private.joinpath(*prefix))


def directory_problem(data, cap=None):
    """Why the member list the ZIP's end records announce is too big to read, or None (also when there is no
    end record: zipfile then says the ZIP is broken). DATA ends where the file ends (the whole file, or its
    tail). A zip64 end record, when there is one, is what zipfile reads: its count and size are judged too,
    so a classic record that understates them hides nothing."""
    at = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 65_535))
    if at < 0 or at + 22 > len(data):
        return None
    entries, size = struct.unpack_from("<HI", data, at + 10)
    cap = cap or MAX_MEMBERS
    for record in zip64_end_records(data, at):
        more, more_size = struct.unpack_from("<QQ", data, record + 32)
        entries, size = max(entries, more), max(size, more_size)
    if entries > cap:
        return Finding("zip_members", count=entries, cap=cap)
    if size > cap * DIRECTORY_ENTRY:
        return Finding("zip_directory", size=size)
    return None


def zip64_end_records(data, end_at):
    """Where in DATA the zip64 end record(s) the locator before the classic end record may point to are."""
    locator = end_at - 20
    if locator < 0 or data[locator:locator + 4] != b"PK\x06\x07":
        return []
    (offset,) = struct.unpack_from("<Q", data, locator + 8)
    found = {at for at in (locator - 56, offset) if 0 <= at <= len(data) - 56 and data[at:at + 4] == b"PK\x06\x06"}
    return sorted(found)


def trusted_members(archive, caps=None):
    """{member: its path parts} of every member that is not OS junk; Untrusted for the ZIP as a whole.
    CAPS: the most members and unpacked bytes taken (a class's download holds every student's ZIP)."""
    caps = caps or (MAX_MEMBERS, MAX_UNPACKED)
    infos = archive.infolist()
    if len(infos) > caps[0]:
        raise Untrusted("zip_members", count=len(infos), cap=caps[0])
    if sum(info.file_size for info in infos) > caps[1]:
        raise Untrusted("zip_unpacked", mib=caps[1] // 2 ** 20)
    members = {}
    for info in infos:
        name = member_name(info)
        problem = member_problem(info, name)
        if problem:
            raise Untrusted("zip_member_outside", member=visible_name(name), why=problem)
        unreadable = member_unreadable(info)
        if unreadable:
            raise Untrusted("zip_member", member=visible_name(name), why=unreadable)
        parts = tuple(part for part in name.split("/") if part not in ("", "."))
        if parts and not any(is_junk(part) for part in parts):
            members[info] = parts
    return members


def member_name(info):
    """The member's name with `\\` read as `/`; without the UTF-8 flag, UTF-8 if it decodes, else GBK
    (Chinese Windows), else as zipfile read it."""
    name = info.orig_filename
    if not info.flag_bits & UTF8_FLAG:
        raw = name.encode("cp437")  # zipfile decoded the stored bytes as cp437, which maps every byte
        for encoding in ("utf-8", "gbk"):
            with contextlib.suppress(UnicodeDecodeError):
                name = raw.decode(encoding)
                break
    return name.replace("\\", "/")


def member_problem(info, name):
    """Why one member makes the whole ZIP untrusted (it points outside the submission or is a link), as a finding, or
    None."""
    parts = name.split("/")
    if name.startswith("/") or DRIVE.match(name) or any(":" in part for part in parts):
        return Finding("member_absolute")
    if ".." in parts:
        return Finding("member_outside")
    if any(ord(ch) < 32 for ch in name):
        return Finding("member_control")
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        return Finding("member_link")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return Finding("member_special")
    return None


def member_unreadable(info):
    """Why one member cannot be read within the caps, as a finding, or None."""
    if info.flag_bits & ENCRYPTED_FLAG:
        return Finding("member_encrypted")
    if info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        return Finding("member_ratio", ratio=info.file_size // max(info.compress_size, 1), most=MAX_RATIO)
    return None


def visible_name(name):
    text = visible(name)
    return text if len(text) <= 120 else f"{text[:120]}…（共 {len(text)} 个字符）"


def workspace_prefix(members):
    """The parts of the one folder at most MAX_DEPTH down that holds loop-runs/; Untrusted when none or several."""
    found = set()
    for info, parts in members.items():
        depth = next((depth for depth, part in enumerate(parts[:MAX_DEPTH + 1]) if part == "loop-runs"), None)
        if depth is None or (depth == len(parts) - 1 and not info.is_dir()):  # a file named loop-runs is no folder
            continue
        if not any(part in EVIDENCE or part.startswith(".") for part in parts[:depth]):
            found.add(parts[:depth])
    if len(found) > 1:
        raise Untrusted("zip_several_workspaces", count=len(found),
                        names=["/".join((*p, "loop-runs")) for p in sorted(found)[:5]])
    if not found:
        tops = sorted({parts[0] + ("/" if len(parts) > 1 or info.is_dir() else "") for info, parts in members.items()})
        raise Untrusted("zip_no_workspace", depth=MAX_DEPTH, names=listed_names(tops))
    (prefix,) = found
    return prefix


def extract(archive, members, prefix, private, wanted=EVIDENCE, limit=MEMBER_READ):
    """Copies the workspace's loop-runs/ and runs/ members (WANTED None: every member) into PRIVATE, each at most
    LIMIT bytes; nothing else is written."""
    taken = set()
    for info, parts in members.items():
        rel = parts[len(prefix):]
        if parts[:len(prefix)] != prefix or not rel or (wanted is not None and rel[0] not in wanted):
            continue
        if any(windows_refuses(part) for part in rel):
            raise Untrusted("zip_windows_name", member=visible_name("/".join(parts)))
        if disk_key("/".join(rel)) in taken:
            raise Untrusted("zip_same_name", member=visible_name("/".join(parts)))
        taken.add(disk_key("/".join(rel)))
        copy_member(archive, info, private.joinpath(*parts), limit)


def windows_refuses(part):
    """Whether Windows cannot hold PART as a file or folder name: a trailing dot or space, a reserved character,
    or a device name (NUL.txt and "AUX .txt" are the devices too)."""
    return (part.rstrip(". ") != part or not WINDOWS_RESERVED.isdisjoint(part)
            or windows_device(part))


def windows_device(part):
    return part.split(".")[0].rstrip(" ").upper() in WINDOWS_DEVICES


def make_folders(folder):
    """FOLDER and the folders above it that are missing, made top-down in a loop (pathlib's mkdir(parents=True)
    recurses once a folder: a ZIP 1,100 folders deep would exhaust the stack)."""
    missing = []
    while not os.path.isdir(folder):
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()


def copy_member(archive, info, target, limit=MEMBER_READ):
    """One member into TARGET (a new file or folder), at most LIMIT bytes of it, in chunks; zipfile stops at the
    declared size and checks the CRC. A file where a folder belongs (or the reverse) is an OSError: the ZIP is
    not taken."""
    try:
        if info.is_dir():
            make_folders(target)
            return
        make_folders(target.parent)
        with archive.open(info) as source, open(target, "xb") as out:
            while limit > 0:
                chunk = source.read(min(limit, 2 ** 20))
                if not chunk:
                    break
                out.write(chunk)
                limit -= len(chunk)
    except (zipfile.BadZipFile, EOFError, ValueError, zlib.error):
        raise Untrusted("zip_member_broken", member=visible_name(member_name(info))) from None
    except NotImplementedError:
        raise Untrusted("zip_member_method", member=visible_name(member_name(info))) from None
    except OSError as exc:
        raise Untrusted("zip_member_unextracted", member=visible_name(member_name(info)), reason=reason(exc)) from None


# --- a whole class's download --------------------------------------------------------------------

MAX_CLASS_ZIP_BYTES = 2 ** 31     # Moodle's "download all submissions" of a big class, every student's ZIP inside
CLASS_CAPS = (20 * MAX_MEMBERS, 2 ** 31)


def class_folder(path, make_scratch):
    """(the folder whose entries are the submissions, the ZIP they came from or None) for the --class argument
    PATH: a folder as it is; Moodle's "download all submissions" ZIP given itself, or as the only entry of the
    folder, is unpacked (trusted as a whole, as a student's ZIP) into the folder MAKE_SCRATCH() gives; a folder
    whose only entry is a folder of Moodle's names (Extract All adds one) is that folder. Documents beside it (the
    grading worksheet saved into the same folder) are no entries. Untrusted or OSError when the download cannot
    be taken."""
    path = Path(path)
    if os.path.isdir(path):
        try:
            with os.scandir(path) as scanned:
                only = [entry for entry in scanned if not is_junk(entry.name) and not entry.name.startswith(".")
                        and not is_document(entry)]
        except OSError:  # said when its entries are listed
            return path, None
        if len(only) != 1:
            return path, None
        inner = Path(only[0].path)
        if only[0].is_dir(follow_symlinks=False) and any(MOODLE.fullmatch(name) for name in os.listdir(inner)):
            return inner, None
        if not (only[0].is_file(follow_symlinks=False) and inner.name.lower().endswith(".zip")
                and holds_moodle_folders(inner)):
            return path, None
        path = inner
    with open_plain(path, MAX_CLASS_ZIP_BYTES) as file:
        archive = opened_zip(file, CLASS_CAPS[0])
        with archive:
            members = trusted_members(archive, CLASS_CAPS)
            target = Path(make_scratch())
            # a student's ZIP inside is copied whole (one byte past its own cap, so an oversized one still reads
            # as too big): it is then read under a student's ZIP's caps, as if the teacher had unzipped the download
            extract(archive, members, (), target, wanted=None, limit=MAX_ZIP_BYTES + 1)
    return target, path


def is_document(entry):
    """A plain file that holds no workspace (the worksheet a teacher saves beside the download, a list)."""
    return entry.is_file(follow_symlinks=False) and Path(entry.name).suffix.lower() in DOCUMENTS


def holds_moodle_folders(path):
    """The ZIP at PATH has members named as Moodle names a participant's entries (a read of its member list)."""
    try:
        with open_plain(path, MAX_CLASS_ZIP_BYTES) as file, opened_zip(file, CLASS_CAPS[0]) as archive:
            return any(MOODLE.fullmatch(member_name(info).split("/")[0]) for info in archive.infolist())
    except (OSError, Untrusted):
        return False


def open_plain(path, cap):
    """PATH opened for reading only when it is a plain file of at most CAP bytes (never a link, FIFO or device)."""
    kind = entry_kind(os.lstat(path))
    if kind != "普通文件":
        raise Untrusted("zip_not_plain", kind=kind)
    file = open(os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)), "rb")
    if os.fstat(file.fileno()).st_size > cap:
        file.close()
        raise Untrusted("zip_too_big", mib=cap // 2 ** 20)
    return file


def opened_zip(file, cap):
    """A ZipFile of FILE once its end records announce at most CAP members; Untrusted otherwise."""
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - 22 - 65_535 - 76))
    too_many = directory_problem(file.read(), cap)
    if too_many:
        raise Untrusted(too_many)
    try:
        return zipfile.ZipFile(file)
    except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError):
        raise Untrusted("zip_broken") from None
