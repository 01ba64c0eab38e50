"""The student's hand-in: `python3 verify_loop.py --pack OUT.zip`.

Part of verify_loop (the command line). The workspace packed is the folder holding this file, the one
loop_lab.py writes its records to; OUT is read from the current folder. First every loop is checked
the way the teacher's class check will check the ZIP (check.workspace_row: the same row, the same
words), then OUT is written with loop-runs/ and runs/ only, and the row is printed. Exit 0 when the row
is `pass`, 1 otherwise (the ZIP is written either way: the student decides), 2 for a command that
cannot be carried out (no loop-runs/, a name that is no .zip, OUT inside the evidence or in a folder
that does not exist, an OUT that exists already: it is never replaced).

What goes in: every regular file under loop-runs/ and runs/, its bytes as they are (no line-ending
conversion), entry names with `/`, sorted, every entry dated 1980-01-01 00:00 (the ZIP format's
first day), so the same evidence always gives the same bytes. Links, pipes, devices and the
dot-named claim folders at the top of loop-runs/ and runs/ (a name being claimed, which the teacher's
check skips too) stay out and are named on stderr. One more file at the top, hand-in.json, says what
was packed and the row printed; the teacher's check reads only the evidence, never this file.

Imports nothing of what it packs (loop_lab.py, harness.py, export_review.py, machinery/). What it shares: cli.py's
plumbing (reading a file that must be a regular one, output and what it shows escaped, paths shown from the
current folder), the class check's row of one workspace and of the ZIP read back (check.workspace_row,
check.entry_row) with its console text (classroom/report.py), the intake's name rules (classroom/intake.py:
Windows names, the student in a file name), and verifier/records.py's disk_key (names as a disk compares them).
"""
import json
import os
import re
import stat
import zipfile
from pathlib import Path

from classroom import pitfalls
from classroom.check import entry_row, teacher_course, workspace_row
from classroom.intake import WINDOWS_RESERVED, student_and_id, windows_device
from classroom.report import row_text
from cli import (EXIT_OK, EXIT_STOP, EXIT_USAGE, EvidenceError, command, display_path, entry_kind, gloss, print_json,
                 read_evidence, say, visible)
from verifier.records import disk_key

ROOT = Path(__file__).resolve().parent.parent  # the workspace, which holds this package
EVIDENCE = ("loop-runs", "runs")
MANIFEST = "hand-in.json"
FILE_CAP = 16 * 1024 * 1024  # far above the checks' own caps (1 MiB): a larger file is packed by no honest run
WINDOWS_DRIVE = re.compile(r"[A-Za-z]:([\\/]|$)")  # D:\作业 or D:/作业 or D:
ENTRY_TIME = (1980, 1, 1, 0, 0, 0)  # not the files' times: a copied workspace still packs to the same bytes


# --- what may be asked ---------------------------------------------------------------------------

def pack_problem(out, root):
    """Why OUT cannot be written for the workspace ROOT (Chinese, for a usage error), or None."""
    if not os.path.isdir(root / "loop-runs"):
        where = "工作区（当前文件夹）" if display_path(root) == "." else f"工作区 {display_path(root)} "
        return (f"{where}里没有 loop-runs/ 文件夹：还没有可交的循环。先运行循环（例如 "
                f"{command(root / 'loop_lab.py', '--run', 'repair-01', '--scenario', 'repair')}），再打包。")
    windows_path = windows_style(str(out))
    if windows_path:
        return windows_path
    if not out.name.lower().endswith(".zip") or len(out.name) <= len(".zip"):
        return f"{out} 不是 .zip 文件名：请给出例如 张三.zip 这样的名称。"
    parent = Path(os.path.abspath(out)).parent
    if not os.path.isdir(parent):
        return f"{out} 所在的文件夹不存在：请先建好它，或换一个路径。"
    inside = [folder for folder in EVIDENCE if parent.resolve().is_relative_to((root / folder).resolve())]
    if inside:
        return (f"{out} 在 {inside[0]}/ 里面：ZIP 不能放进它要打包的证据里。请写到别处，例如 "
                f"{command(root / 'verify_loop.py', '--pack', root / '张三.zip')}。")
    return None


def windows_style(text):
    """Why TEXT, a Windows path typed on macOS or Linux (a drive, backslashes), is refused there (Chinese), or None:
    it would become one file whose name holds the backslashes."""
    if os.name == "nt" or not (WINDOWS_DRIVE.match(text) or "\\" in text):
        return None
    name = text.replace("\\", "/").rsplit("/", 1)[-1] or "张三.zip"
    text, name = visible(text), visible(name)
    return (f"{text} 是 Windows 的路径写法（盘符 D: 或反斜杠 \\）：在 macOS / Linux 上它不是文件夹里的文件，而会成为一个"
            f"名字里带反斜杠的文件。请用 / 分隔的路径，例如 ../作业/{name}，或只写文件名 {name}（写到当前文件夹）。")


def free_name(out):
    """The first of NAME-2.zip, NAME-3.zip ... beside OUT that does not exist yet."""
    stem, number = out.name[:-len(".zip")], 2
    while os.path.lexists(out.with_name(f"{stem}-{number}.zip")):
        number += 1
    return out.with_name(f"{stem}-{number}.zip")


# --- what goes in --------------------------------------------------------------------------------

def evidence_files(root):
    """(packed [(entry name, path)], left out [(entry name, why)]) under loop-runs/ and runs/, both sorted."""
    packed, left_out = [], []
    pending = [(top, root / top) for top in EVIDENCE if os.path.lexists(root / top)]
    while pending:
        name, path = pending.pop()
        try:
            kind = entry_kind(os.lstat(path))
            children = sorted(os.listdir(path)) if kind == "文件夹" else []
        except OSError as exc:
            left_out.append((name, f"无法读取（{gloss(type(exc).__name__)}）"))
            continue
        if kind == "普通文件":
            packed.append((name, path))
        elif kind != "文件夹":
            left_out.append((name, f"是{kind}，不是普通文件"))
        for child in children:
            if name == "loop-runs" and child.startswith(".held-"):
                continue  # a loop's lock file (docs/loop/TASK.md「续跑」): no evidence, left out without a word
            if name in EVIDENCE and child.startswith("."):
                left_out.append((f"{name}/{child}", "以点开头的是认领名称时的临时目录，不是记录"))
            elif not utf8_name(child):  # bytes of another encoding: no ZIP entry name holds them
                left_out.append((f"{name}/{child}", "名称里有不是 UTF-8 的字节，ZIP 里存不下；课程的程序不会起这样的名称"))
            else:
                pending.append((f"{name}/{child}", path / child))
    return sorted(packed), sorted(left_out)


def utf8_name(name):
    """NAME as the file system gave it holds no byte that is not UTF-8 (Python keeps one as a lone surrogate)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def manifest(written, row):
    """hand-in.json: the tool, the loops and the number of files packed, and the row printed. No packing
    time: the same evidence must give the same bytes (the records carry their own times)."""
    loops = sorted({name.split("/")[1] for name, _ in written
                    if name.startswith("loop-runs/") and name.count("/") >= 2})
    record = {"tool": "verify_loop.py --pack", "loops": loops, "files": len(written), "row": row}
    # a name of the workspace in the row may hold a byte that is not UTF-8: written as its JSON escape
    return (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8", "backslashreplace")


def name_problems(root):
    """[(entry name, why the teacher's intake refuses it, a name it would take)] under loop-runs/ and runs/:
    names Windows cannot hold or that read as another path, and names differing only in case."""
    found, pending = [], [(top, root / top) for top in EVIDENCE if os.path.isdir(root / top)]
    while pending:
        name, path = pending.pop()
        try:
            children = sorted(os.listdir(path)) if os.path.isdir(path) and not os.path.islink(path) else []
        except OSError:
            continue
        seen = {}
        for child in children:
            if name in EVIDENCE and child.startswith("."):
                continue  # a claim folder, never packed
            why = name_problem(child)
            if why:
                found.append((f"{name}/{child}", why, safe_name(child)))
            elif disk_key(child) in seen:
                found.append((f"{name}/{child}", f"与 {seen[disk_key(child)]} 只差大小写（或 Unicode 写法），"
                              "Windows 和 macOS 上是同一个名称", f"{child}-2"))
            seen.setdefault(disk_key(child), child)
            pending.append((f"{name}/{child}", path / child))
    return sorted(found)


def name_problem(name):
    """Why the teacher's intake would refuse the entry NAME (Chinese), or None."""
    if not utf8_name(name):
        return "名称不是 UTF-8 编码：老师那里读不出它"
    if "\\" in name:
        return "名称里有反斜杠 \\：老师那里会把它当成文件夹分隔符"
    if ":" in name:
        return "名称里有冒号 :：Windows 不允许，老师那里会当成盘符"
    if not name.isprintable():
        return "名称里有控制字符（例如 macOS 的 Icon\\r）"
    if name.rstrip(". ") != name:
        return "名称以点或空格结尾：Windows 上存不下"
    if not WINDOWS_RESERVED.isdisjoint(name):
        return "名称里有 Windows 不允许的字符（< > \" | ? *）"
    if windows_device(name):
        return "是 Windows 的设备名（CON、AUX、NUL、COM¹ 等），Windows 上存不下"
    return None


def safe_name(name):
    shown = "".join("_" if ch in "\\" or ch in WINDOWS_RESERVED or not ch.isprintable() else ch
                    for ch in name).rstrip(". ") or "_"
    return "_" + shown if windows_device(shown) else shown


def empty_folders(root):
    """The folders under loop-runs/ and runs/ with no file anywhere below them (a ZIP holds files only, so the
    teacher never sees them), the top-most of each such branch. Walked with a list, not by recursion: no depth
    of folders can exhaust the stack."""
    found, pending = [], [(top, root / top) for top in EVIDENCE
                          if os.path.isdir(root / top) and not os.path.islink(root / top)]
    while pending:  # every folder before the folders below it
        name, path = pending.pop()
        try:
            children = sorted(os.listdir(path))
        except OSError:
            children = None  # unreadable: taken as holding files, so it is never called empty
        below = []
        for child in children or ():
            if name in EVIDENCE and child.startswith("."):
                continue  # a claim folder, never packed
            if os.path.isdir(path / child) and not os.path.islink(path / child):
                below.append(f"{name}/{child}")
                pending.append((f"{name}/{child}", path / child))
        files = children is None or len(below) < len([c for c in children
                                                      if not (name in EVIDENCE and c.startswith("."))])
        found.append((name, files, below))
    held = {}
    for name, files, below in reversed(found):  # the folders below first
        held[name] = files or any(held[child] for child in below)
    fileless = {name for name, value in held.items() if not value}
    return sorted(name for name in fileless if name.rpartition("/")[0] not in fileless)


# --- writing -------------------------------------------------------------------------------------

def zip_entry(name):
    """A ZIP entry header that depends on the name only (date, system, permissions fixed)."""
    info = zipfile.ZipInfo(name, ENTRY_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix permissions below, whatever system packed it
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    return info


def write_zip(tmp, packed, row):
    """Writes the ZIP to TMP (a new file) and flushes it to disk: (entries written, (entry, why) not read)."""
    written, unread = [], []
    with open(tmp, "xb") as raw:
        with zipfile.ZipFile(raw, "w") as archive:
            for name, path in packed:
                try:
                    archive.writestr(zip_entry(name), read_evidence(path, FILE_CAP))
                    written.append((name, path))
                except EvidenceError as exc:  # swapped for a link or grown past the cap since it was listed
                    unread.append((name, str(exc)))
                except OSError as exc:
                    unread.append((name, f"无法读取（{gloss(type(exc).__name__)}）"))
            archive.writestr(zip_entry(MANIFEST), manifest(written, row))
        raw.flush()
        os.fsync(raw.fileno())
    return written, unread


def publish(tmp, out):
    """Gives TMP the name OUT; FileExistsError if OUT appeared meanwhile: an OUT is never replaced."""
    try:
        os.link(tmp, out)  # fails, atomically, when OUT exists
    except FileExistsError:
        raise
    except OSError:  # no hard links on this file system (FAT, some shares): the last check, then the rename
        if os.path.lexists(out):
            raise FileExistsError(out) from None
        os.replace(tmp, out)
        return
    os.unlink(tmp)


def write_hand_in(out, packed, row):
    """OUT written whole or not at all: (entries written, (entry, why) not read)."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        written, unread = write_zip(tmp, packed, row)
        publish(tmp, out)
        return written, unread
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


# --- the command ---------------------------------------------------------------------------------

def pack(parser, out_text, root=None):
    """`--pack OUT.zip`: check the workspace ROOT (this file's folder) as the teacher will, write OUT, print the row."""
    out, root = Path(out_text), Path(root or ROOT)
    problem = pack_problem(out, root)
    if problem:
        parser.error(problem)
    if os.path.lexists(out):
        return refuse_existing(out, root)
    refused = name_problems(root)
    if refused:
        for name, why, better in refused:
            say(f"{visible(name)}：{why}，老师的核对取不出它。请把它改名（例如改成 {visible(better)}）或移出工作区，再打包。")
        say(f"没有写出 {display_path(out)}：有 {len(refused)} 个名称老师的核对取不出来。")
        return EXIT_USAGE
    student, student_id = student_and_id(out.name)
    ready = pitfalls.before(root, out, teacher_course(),  # judged against this workspace's own course files
                            lambda folder: workspace_row(folder, student, student_id=student_id))
    if ready is None:  # what it was is said
        return EXIT_USAGE
    home, exercises, alone = ready
    packed, left_out = evidence_files(root)
    try:
        written, unread = write_hand_in(out, packed, home)
    except FileExistsError:
        return refuse_existing(out, root)
    except OSError as exc:
        say(f"无法写出 {display_path(out)}（{gloss(type(exc).__name__)}）：什么都没有写下。请换一个可以写入的路径再运行一次。")
        return EXIT_USAGE
    row = entry_row(out, student, student_id=student_id)  # the ZIP itself through the teacher's intake
    print_json(row)  # the very line the class check prints for this ZIP
    say_hand_in(out, row, len(written), sorted(left_out + unread))
    say_difference(home, row, empty_folders(root), sorted(left_out + unread))
    pitfalls.after(root, out, row, exercises, (home, alone))
    return EXIT_OK if row["result"] == "pass" else EXIT_STOP


def say_difference(home, row, empty, left_out):
    """When the workspace and its ZIP would be judged differently: say so, and why."""
    if home == row:
        return
    why = [f"空文件夹 {visible(name)}/ 不会进 ZIP（ZIP 只装文件）" for name in empty]
    why += [f"{visible(name)} 没有打包" for name, _ in left_out]
    say(f"注意：在工作区里核对是 {home['result']}，老师核对这个 ZIP 是 {row['result']}（上面打印的是老师会看到的那一行）："
        + ("；".join(why) if why else "两处看到的证据不同") + "。")


def refuse_existing(out, root):
    say(f"{display_path(out)} 已存在：不会覆盖它。请换一个新名称，例如 "
        f"{command(root / 'verify_loop.py', '--pack', free_name(out))}")
    return EXIT_USAGE


def say_hand_in(out, row, files, left_out):
    for name, why in left_out:
        say(f"没有打包 {visible(name)}：{why}；老师收不到它。")
    say(row_text(row))
    say(f"已写出 {display_path(out)}：{row['loops']} 个循环，{files} 个证据文件"
        f"（loop-runs/ 和 runs/ 里的普通文件，外加清单 {MANIFEST}）。")
    if row["result"] == "pass":
        say(f"结果 pass：老师核对这个 ZIP 会看到同样的一行（老师对照的是自己的课程文件，所以不要改动它们）。"
            f"把 {display_path(out)} 交上去即可，见 README「交作业」。")
    elif row["result"] == "incomplete":
        say(f"结果是 incomplete，不是 pass：ZIP 照样写出了，交不交由你决定。补救的办法是用新名称运行缺少的情景，"
            "再打包成一个新的文件名。")
    else:
        say(f"结果是 {row['result']}，不是 pass：ZIP 照样写出了，交不交由你决定，老师会看到上面同样的问题。"
            "已有的循环会原样交上去（记录不能删改），重新运行改变不了它们的结果；缺少的情景可以用新名称补跑，"
            "其余的请交的时候向老师说明。")
