"""What `--pack` tells a learner before the hand-in: the mistakes it recognises, each with the file and the next step.

Part of verify_loop's --pack (classroom/hand_in.py asks, in this order):

- an edited course file (`edited`): the workspace's course files are no released version of the course, while loops
  made here recorded one, or (edited before any loop ran) while the table keeps this version's own files. The files
  that differ from it are named, with how to restore each (a byte-order mark an
  editor added is said as such). The teacher judges against the course as released, so until they are restored no
  check made here is the teacher's: nothing is packed.
- exercise loops in the workspace itself (`exercise_loops`, `without`): loops named `ex-…`, the names every loop of
  docs/loop/EXERCISES.md has, which belong in the exercises' copy. The row the teacher would give without them is
  worked out in a scratch copy of the evidence; when they change the result nothing is packed, and the commands that
  move them out of the workspace (kept, not deleted) are said for each shell.
- a deleted child (`missing_children`: not one an attempt cut off before its folder was made never had) or a deleted
  loop (the class check's own note on the row, `Workspace.orphans`): what is missing, and a copy to put back (the
  exercises' copy or another folder beside the workspace, an earlier hand-in ZIP) or, without one, what the row will
  say.

Each finding is data (a namedtuple); its sentences are made in `say_*` only. Imports nothing of what it checks. Shares:
cli.py's plumbing (capped reading, paths shown from here), verifier/records.py (the course files and their hashing,
record reading, names shown safely), classroom/releases.py (the releases' fingerprints) and classroom/check.py (the
row of a workspace, for the copy without the exercise loops).
"""
import hashlib
import os
import shutil
import tempfile
import zipfile
from collections import namedtuple
from pathlib import Path

from classroom import releases
from cli import command, display_path, loads_record, say, visible
from verifier.records import (LOOP_FILES, RECORD_CAP, V3_LOOP_FILES, Workspace, combined_fingerprint, listing,
                              read_record_file)

EXERCISE_PREFIX = "ex-"  # docs/loop/EXERCISES.md names every loop and run it makes so
SCRATCH = "lesson-14-scratch"  # the exercises' copy, beside the workspace
BOM = b"\xef\xbb\xbf"
MANIFEST = "hand-in.json"  # what marks a ZIP as a hand-in made by --pack (classroom/hand_in.py)
MOST_ZIPS, ZIP_CAP, MOST_SIBLINGS = 50, 64 << 20, 200  # where an earlier copy is looked for, at most

Edited = namedtuple("Edited", "files release before after bom")  # course files, the release, loops, files with a BOM
Missing = namedtuple("Missing", "loop attempt child source")  # a child a loop recorded, gone; where a copy is


def before(root, out, course, row_of):
    """(the row ROW_OF(ROOT), the exercise loops, the row without them) when packing OUT may go on; None, once what
    keeps it from going on is said, when it may not: an edited course file (COURSE, the files the row is judged
    against), or exercise loops that change a result that is not a pass."""
    found = edited(root, course)
    if found:
        say_edited(found, out, root, course.root)
        return None
    home, loops = row_of(root), exercise_loops(root)
    alone = without(root, row_of) if loops else None
    if loops and alone["result"] != home["result"] and home["result"] != "pass":
        say_exercises(loops, home, alone, out, root, packed=False)
        return None
    return home, loops, alone


def after(root, out, row, loops, rows):
    """Once OUT is written with ROW: the exercise LOOPS packed (ROWS: with and without them), what is gone."""
    if loops:
        say_exercises(loops, *rows, out, root, packed=True)
    missing = missing_children(root, out) if row["result"] != "pass" else []
    orphans = orphaned_loops(root) if row.get("notes") else {}
    if missing or orphans:
        say_missing(missing, orphans, root, out)


def loop_records(root):
    """{loop name: its record} of every loop.json here that reads as a record (the check says what the others are)."""
    found = {}
    for name in sorted(listing(Path(root) / "loop-runs")[0]):
        try:
            record, _ = read_record_file(Path(root) / "loop-runs" / name / "loop.json")
        except (OSError, ValueError):
            continue
        if type(record) is dict:
            found[name] = record
    return found


def recorded_entries(record):
    context = record.get("context")
    entries = context.get("entries") if type(context) is dict else None
    lists = (set(LOOP_FILES), set(V3_LOOP_FILES))  # today's watched files, or those of a release before resume.py
    if type(entries) is dict and set(entries) in lists and all(type(v) is str for v in entries.values()):
        return entries
    return None


# --- an edited course file ---------------------------------------------------------------------------------------

def edited(root, course):
    """The Edited of the workspace ROOT whose course files are COURSE (a CourseFiles: the ones its check compares
    with), or None: they are a released version, or neither a loop here recorded one nor the table keeps this
    version's files (then nothing tells what the teacher holds). Of the releases the loops recorded, the one latest
    in the table is the reference; with none, this version's (releases.newest_files)."""
    known = releases.names()
    here = course.entries()
    if combined_fingerprint(here) in known:
        return None
    order = {fingerprint: number for number, fingerprint in enumerate(known)}
    released = {name: entries for name, entries in
                ((name, recorded_entries(record)) for name, record in loop_records(root).items())
                if entries is not None and combined_fingerprint(entries) in known}
    if released:
        reference = max(released.values(), key=lambda entries: order[combined_fingerprint(entries)])
        release = known[combined_fingerprint(reference)]
    elif releases.newest_files():  # edited before any loop ran: this version's own files, as its release keeps them
        release, reference = releases.newest_files()
    else:
        return None
    files = [rel for rel in sorted(reference) if here[rel] != reference[rel]]
    others = {name: recorded_entries(record) for name, record in loop_records(root).items()}
    after = sorted(name for name, entries in others.items()
                   if entries is not None and any(entries[rel] == here[rel] for rel in files))
    return Edited(files, release, sorted(name for name, entries in released.items() if entries == reference), after,
                  [rel for rel in files if bom_only(course.root / rel, reference[rel])]) if files else None


def bom_only(path, wanted):
    """The file differs from its released content (hash WANTED) by a leading byte-order mark alone."""
    try:
        with open(path, "rb") as file:
            data = file.read(1 << 20)
    except OSError:
        return False
    return data.startswith(BOM) and hashlib.sha256(data[len(BOM):].replace(b"\r\n", b"\n")).hexdigest() == wanted


def say_edited(found, out, root, course_root):
    names = "、".join(found.files)
    when = (f"你的 {len(found.before)} 个循环（{names_of(found.before)}）运行时它们还是原样，之后被改过" if found.before
            else "改动在运行任何循环之前")
    say(f"没有写出 {display_path(out)}：这个工作区的课程文件 {names} 与课程发布时的原样（{found.release}）不同。"
        f"{when}；老师对照的是课程原样的文件，所以在这里做的核对现在不是老师会做的核对。这不是“旧版本的工作区”，是改动。")
    for rel in found.files:
        shown = display_path(Path(course_root) / rel)
        if rel in found.bom:
            say(f"  {shown}：开头多了 3 个字节的 BOM（EF BB BF，有的编辑器保存时会加上），别的都没变。去掉它就还原了："
                f"{restore_bom_command(shown)}")
        else:
            say(f"  {shown}：从课程的 ZIP 里重新取出这个文件覆盖它（用 git 拿到工作区的：git checkout -- {rel}）；"
                "想留着你写的内容，先把它另存到工作区外面。")
    if found.after:
        say(f"改动之后运行的 {len(found.after)} 个循环（{names_of(found.after)}）用的是改过的文件：还原之后，它们在老师那里"
            "是 fail（理由写明课程文件不同）。记录不能删改，交的时候向老师说明。")
    say(f"还原之后再打包一次：{pack_command(root, out)}")


def restore_bom_command(shown):
    code = (f"import pathlib; p = pathlib.Path('{shown}'); "
            "p.write_bytes(p.read_bytes().removeprefix(b'\\xef\\xbb\\xbf'))")
    return command(Path("-c"), code)


# --- exercise loops ----------------------------------------------------------------------------------------------

def exercise_loops(root):
    """The loops of ROOT named like the exercises' (ex-…), sorted."""
    return sorted(name for name in listing(Path(root) / "loop-runs")[0] if name.startswith(EXERCISE_PREFIX))


def without(root, row_of):
    """ROW_OF(a workspace) for a scratch copy of ROOT's evidence without the exercises' loops and runs: the row the
    teacher gives once they are moved out."""
    with tempfile.TemporaryDirectory(prefix="hand-in-without-") as scratch:
        copy = Path(scratch) / Path(root).name
        for top in ("loop-runs", "runs"):
            if os.path.isdir(Path(root) / top):
                shutil.copytree(Path(root) / top, copy / top, symlinks=True,
                                ignore=lambda folder, names: [n for n in names if n.startswith(EXERCISE_PREFIX)])
        copy.mkdir(exist_ok=True)
        return row_of(copy)


def say_exercises(loops, home, alone, out, root, packed):
    """What the exercise LOOPS do to the row (HOME with them, ALONE without) and how to hand in without them."""
    if packed:
        changed = "不改变结果" if home["result"] == alone["result"] else f"不带它们是 {alone['result']}"
        say(f"另外：{len(loops)} 个练习的循环（{names_of(loops)}，名称以 {EXERCISE_PREFIX} 开头）也交上去了，{changed}。")
        return
    if Path(root).name == SCRATCH:  # came back to the wrong folder: the hand-in is the workspace it was copied from
        say(f"没有写出 {display_path(out)}：这里是练习副本 {display_path(root)}（练习 0 复制出来的），loop-runs/ 里有 "
            f"{len(loops)} 个练习的循环（{names_of(loops)}）：带着它们，老师那一行是 {home['result']}。要交的是你原来的"
            "工作区：回到那里（练习 0 是从它复制的，通常就在旁边），在那里运行 python3 verify_loop.py --pack 加你的名字.zip。")
        return
    folder = free_folder(Path(root).parent / f"{Path(root).name}-练习的循环")
    say(f"没有写出 {display_path(out)}：loop-runs/ 里有 {len(loops)} 个练习的循环（{names_of(loops)}）。名称以 "
        f"{EXERCISE_PREFIX} 开头的是 docs/loop/EXERCISES.md 的练习起的名字，练习本应在副本 {SCRATCH}/ 里做。带着它们，"
        f"老师那一行是 {home['result']}；不带它们是 {alone['result']}。")
    say("不删除任何证据也能不带它们交：把它们连同子运行移到工作区外面的文件夹里（证据都留着，只是不在要交的工作区里），"
        "再打包：")
    for line in move_commands(root, folder):
        say("  " + line)
    say(f"然后：{pack_command(root, out)}")


def move_commands(root, folder):
    """The commands (macOS / Linux, PowerShell, cmd) that move the exercise loops and runs of ROOT into FOLDER."""
    tops = [display_path(Path(root) / top) for top in ("loop-runs", "runs")]
    to = [display_path(folder / top) for top in ("loop-runs", "runs")]
    posix = " && ".join([f"mkdir -p {to[0]} {to[1]}",
                         *(f"mv {top}/{EXERCISE_PREFIX}* {target}/" for top, target in zip(tops, to))])
    win = [path.replace("/", "\\") for path in (*tops, *to)]
    shell = "; ".join([f"New-Item -ItemType Directory -Force {win[2]}, {win[3]} | Out-Null",
                       *(f"Move-Item {top}\\{EXERCISE_PREFIX}* {target}\\" for top, target in zip(win[:2], win[2:]))])
    cmd = " & ".join([f"mkdir {win[2]} {win[3]}",
                      *(f'for /d %d in ({top}\\{EXERCISE_PREFIX}*) do move "%d" {target}\\'
                        for top, target in zip(win[:2], win[2:]))])
    return [f"macOS / Linux：{posix}", f"PowerShell：{shell}", f"cmd：{cmd}"]


def free_folder(folder):
    number = 2
    found = folder
    while os.path.lexists(found):
        found, number = folder.with_name(f"{folder.name}-{number}"), number + 1
    return found


# --- a deleted child or loop -------------------------------------------------------------------------------------

def missing_children(root, out):
    """[Missing] of every child run a loop of ROOT recorded that is not there, with a copy to restore it from: a
    place holding the same loop (its record's random id) and that child."""
    found, places = [], None
    for name, record in loop_records(root).items():
        attempts = record.get("attempts") if type(record.get("attempts")) is list else []
        for entry in attempts:
            child = entry.get("child_run") if type(entry) is dict else None
            if type(child) is not str or not child.startswith("runs/") or "/" in child[len("runs/"):]:
                continue
            if not os.path.lexists(Path(root) / child) and not never_made(entry):
                places = places if places is not None else copy_places(root, out)
                witness = (f"loop-runs/{name}/loop.json", record.get("id"))
                found.append(Missing(name, entry.get("attempt"), child, copy_of(child, witness, places)))
    return found


def never_made(entry):
    """Attempt ENTRY was cut off (Ctrl-C, a killed process) before its child folder may have been made, and no resume
    found one: no child is no deleted evidence (the check makes it a note, or a person's call, never a fail)."""
    judged = entry.get("resume")
    found = judged.get("found") if type(judged) is dict else None
    return entry.get("state") in ("unknown", "running") and found in (None, "no_child")


def orphaned_loops(root):
    """{loop: its children} of the loops of ROOT found only by their children (runs/NAME-NN without loop-runs/NAME),
    as the class check finds them (verifier/records.py Workspace.orphans)."""
    return Workspace(root, None).orphans()


def record_id(path):
    """The `id` of the record in PATH (a loop.json or run.json), or None."""
    try:
        record, _ = read_record_file(path)
    except (OSError, ValueError):
        return None
    return record.get("id") if type(record) is dict and type(record.get("id")) is str else None


def copy_places(root, out):
    """Where an earlier copy of the workspace may be: the folders beside it (the exercises' copy first) and the
    hand-in ZIPs in the current folder, in the workspace, beside it and next to OUT."""
    root = Path(os.path.abspath(root))  # not resolved: a folder reached through a link is said by its own name
    folders = [root.parent / SCRATCH]
    try:
        with os.scandir(root.parent) as entries:
            folders += sorted(Path(entry.path) for entry in entries
                              if entry.is_dir(follow_symlinks=False) and entry.name not in (root.name, SCRATCH)
                              )[:MOST_SIBLINGS]
    except OSError:
        pass
    zips = []
    for folder in dict.fromkeys((Path.cwd(), root, root.parent, Path(os.path.abspath(out)).parent)):
        try:
            zips += sorted(path for path in folder.glob("*.zip") if path.is_file() and not path.is_symlink())
        except OSError:
            continue
    return [folder for folder in folders if folder.is_dir()], list(dict.fromkeys(zips))[:MOST_ZIPS]


def copy_of(rel, witness, places):
    """The first folder, or else hand-in ZIP, holding REL (a folder of evidence) that is a copy of this very workspace:
    its WITNESS file (a record beside REL) has the same random id as here. None when there is none: another
    workspace (a classmate's) is never offered, however its runs are named."""
    witness_rel, wanted = witness
    if wanted is None:
        return None
    folders, zips = places
    for folder in folders:
        if (folder / rel).is_dir() and any((folder / rel).iterdir()) and record_id(folder / witness_rel) == wanted:
            return folder / rel
    for path in zips:
        if zipped_copy(path, rel, witness_rel, wanted):
            return path
    return None


def zipped_copy(path, rel, witness_rel, wanted):
    """The hand-in ZIP PATH holds REL and the witness record with the WANTED id."""
    try:
        if path.stat().st_size > ZIP_CAP:
            return False
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if MANIFEST not in names or witness_rel not in names or not any(n.startswith(rel + "/") for n in names):
                return False
            info = archive.getinfo(witness_rel)
            data = archive.read(info) if info.file_size <= RECORD_CAP else b""
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError):
        return False
    try:
        record = loads_record(data)
    except ValueError:
        return False
    return type(record) is dict and record.get("id") == wanted


def say_missing(missing, orphans, root, out):
    """What is gone, what the row says of it, and what can still be done (put a copy back, or say it)."""
    for gone in missing:
        record = display_path(Path(root) / "loop-runs" / gone.loop / "loop.json")
        say(f"{display_path(Path(root) / gone.child)} 不见了：{record} 记着第 {gone.attempt} 次尝试在那里做的。老师那里这个循环是 fail，它所在的情景也是 fail（同一情景只要有一个"
            "循环 fail 就是 fail，用新名称补跑抵消不了）。")
        say("  " + restore_text(gone.child, gone.source, root))
    places = copy_places(root, out) if orphans else None
    for loop, children in orphans.items():
        rel, witness = f"loop-runs/{loop}", f"runs/{children[0]}/run.json"
        say(f"{display_path(Path(root) / rel)} 不见了，它的子运行（{names_of(children)}）还在 runs/ 里：老师的核对会在你"
            "这一行下面写明。循环的记录是证据，不能只交一半。")
        source = copy_of(rel, (witness, record_id(Path(root) / witness)), places)
        say("  " + restore_text(rel, source, root))


def restore_text(rel, source, root):
    target = display_path(Path(root) / rel)
    if source is None:
        return ("没有找到它的副本（练习副本、工作区旁边的文件夹、以前打包的 ZIP 里都没有这个工作区的这份记录）：证据删了就"
                "补不回来。不要改写记录让它“通过”，也不要再删别的；把 ZIP 照样交上去，向老师说明删了什么。")
    if Path(source).suffix.lower() == ".zip":
        away = free_folder(Path(root).parent / "取回")
        return (f"{display_path(source)} 里还有它（以前打包的）：先把整个 ZIP 解压到工作区外面，"
                f"{command(Path('-m'), 'zipfile', '-e', Path(source), away)}，再把 {display_path(away)}/{rel} 整个"
                f"复制回 {target}，然后重新打包。")
    shown, into = display_path(source), display_path(Path(target).parent)
    return (f"{shown} 还在（这个工作区的副本）：把它原样复制回来，macOS / Linux：cp -R {shown} {into}/；"
            f"PowerShell：Copy-Item -Recurse {windows(shown)} {windows(into)}\\；"
            f"cmd：xcopy {windows(shown)} {windows(target)}\\ /E /I /Q。然后重新打包。")


# --- words -------------------------------------------------------------------------------------------------------

def names_of(names, most=3):
    shown = [visible(name) for name in names[:most]]
    return "、".join(shown) + (f" 等 {len(names)} 个" if len(names) > most else "")


def windows(path):
    return path.replace("/", "\\")


def pack_command(root, out):
    return command(Path(root) / "verify_loop.py", "--pack", Path(out))
