"""Command-line plumbing shared by every script of the workspace; it holds no rule of any lesson.

What every script shares: one JSON line on stdout, Chinese explanations on stderr, consoles that
cannot show Chinese get escapes instead of a crash, `--help` and argument errors in Chinese (exit
2), Ctrl-C and termination signals turned into one exception, paths shown with `/` on every OS,
strict JSON reading (a duplicate key is an error), atomic record writes as bytes (the same file on every
OS), and the claim of a new record folder by name. Verifiers share this file with the programs they
check because none of it decides a verdict.
"""
import argparse
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

EXIT_OK, EXIT_STOP, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
STALE_LOCK_SECONDS = 10  # a claim takes milliseconds: an older one was left by a killed process


# --- consoles ------------------------------------------------------------------------------------

def use_safe_console():
    """Keep the console's encoding, but escape what it cannot show instead of crashing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass


def print_json(obj):
    """The one machine-readable line on stdout, valid JSON whatever the console can show.

    Real characters where stdout can encode them; JSON's own \\u escapes where it cannot
    (a console's escapes would not be valid JSON).
    """
    line = json.dumps(obj, ensure_ascii=False)
    try:
        line.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        line = json.dumps(obj)
    print(line, flush=True)


def say(message):
    """An explanation for the person at the terminal (stderr)."""
    print(message, file=sys.stderr, flush=True)


def command(script, *args):
    """The command line that runs SCRIPT with ARGS, as the person types it here (`py -3` on Windows)."""
    python = "py -3" if os.name == "nt" else "python3"
    words = [display_path(script), *(display_path(arg) if isinstance(arg, Path) else str(arg) for arg in args)]
    # a folder with a space ("My Documents") must stay one word: double quotes work in every shell
    return " ".join([python, *(f'"{word}"' if any(ch.isspace() for ch in word) else word for word in words)])


def display_path(path):
    """PATH as the person can type it from the current folder: relative when that stays short.

    The one place a path becomes text for a person: with `/` on every OS, so the screen shows what the
    documents show (Windows accepts `/` wherever a path is typed).
    """
    path = Path(path)
    try:
        shown = os.path.relpath(path)
    except ValueError:  # another drive on Windows: only the full path works
        shown = str(path)
    else:
        if shown.split(os.sep)[:3].count("..") > 2:
            shown = os.path.abspath(path)  # not resolved: a link keeps its own name
    return shown.replace(os.sep, "/")


def workspace_path(path, root):
    """PATH relative to the workspace ROOT, with `/`, however either was reached; None when outside it.

    A workspace reached through a link (macOS's /var -> /private/var) is the same workspace: PATH's
    folder and ROOT are compared as given and resolved. PATH itself is not resolved: a link keeps its name.
    """
    path = Path(os.path.normpath(Path(path).absolute()))
    for base in (Path(os.path.normpath(Path(root).absolute())), Path(root).resolve()):
        for candidate in (path, path.parent.resolve() / path.name):
            if candidate.is_relative_to(base):
                return candidate.relative_to(base).as_posix()
    return None


# --- interrupts ----------------------------------------------------------------------------------

class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the program stops as on Ctrl-C, and records that it was terminated."""


def _terminate(signum, frame):
    raise Terminated(signal.Signals(signum).name)


def install_termination_handlers():
    """SIGTERM and SIGHUP raise Terminated, where the platform has them (Windows has no SIGHUP)."""
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            try:
                signal.signal(number, _terminate)
            except (ValueError, OSError):  # not the main thread, or the platform refuses
                pass


def run(main, interrupted="已中断。"):
    """Exit with MAIN's code; Ctrl-C or termination anywhere becomes exit 130 with a Chinese line."""
    install_termination_handlers()
    try:
        code = main()
    except KeyboardInterrupt:
        say(interrupted)
        code = EXIT_INTERRUPTED
    sys.exit(code)


# --- arguments -----------------------------------------------------------------------------------

# argparse's own English messages, said again in Chinese (the value named stays as typed).
_ARGPARSE_MESSAGES = (
    (r"the following arguments are required: (.+)", "缺少必需的参数：{0}"),
    (r"unrecognized arguments: (.+)", "无法识别的参数：{0}"),
    (r"argument (\S+): invalid choice: '?(.+?)'? \(choose from (.+)\)", "参数 {0} 的值 {1} 不在可选范围内（可选：{2}）"),
    (r"argument (\S+): invalid int value: (.+)", "参数 {0} 的值 {1} 不是整数"),
    (r"argument (\S+): invalid float value: (.+)", "参数 {0} 的值 {1} 不是数字"),
    (r"argument (\S+): invalid (\w+) value: (.+)", "参数 {0} 的值 {2} 无法识别"),
    (r"argument (\S+): expected one argument", "参数 {0} 后面需要一个值"),
    (r"argument (\S+): expected at least one argument", "参数 {0} 后面至少需要一个值"),
    (r"argument (\S+): expected at most one argument", "参数 {0} 后面最多只能有一个值"),
    (r"argument (\S+): expected (\d+) arguments?", "参数 {0} 后面需要 {1} 个值"),
    (r"argument (\S+): ignored explicit argument (.+)", "参数 {0} 不接受值（收到 {1}）"),
    (r"argument (\S+): not allowed with argument (\S+)", "参数 {0} 不能和 {1} 一起使用"),
    (r"one of the arguments (.+) is required", "需要以下参数之一：{0}"),
)


def chinese(message):
    """argparse's English message in Chinese; one it does not know is quoted inside a Chinese sentence."""
    for pattern, template in _ARGPARSE_MESSAGES:
        match = re.fullmatch(pattern, message)
        if match:  # Python's quoting of a list of choices, said the Chinese way
            return template.format(*(re.sub(r"'?, '?", "、", value).strip("'") for value in match.groups())) + "。"
    if re.search(r"[\u4e00-\u9fff]", message):  # already Chinese: one of our own messages
        return message
    return f"参数无法解析（argparse 的原话：{message}）。"


class _ChineseHelpFormatter(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "用法：" if prefix is None else prefix)


class ChineseArgumentParser(argparse.ArgumentParser):
    """argparse whose help and errors are wholly Chinese; a bad argument always exits 2.

    Abbreviated options are refused, so no English "ambiguous option" message can appear.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _ChineseHelpFormatter)
        add_help = kwargs.pop("add_help", True)
        super().__init__(*args, add_help=False, **kwargs)
        self._positionals.title, self._optionals.title = "位置参数", "选项"
        if add_help:
            self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help="显示本帮助并退出")

    def format_help(self):
        # argparse ends each section title with an ASCII colon; Chinese titles take the full-width one
        return re.sub(r"^(\S[^\n]*?):$", r"\1：", super().format_help(), flags=re.MULTILINE)

    def error(self, message):
        self.print_usage(sys.stderr)
        say(f"{self.prog}：参数错误：{chinese(message)}\n用 --help 查看用法。")
        sys.exit(EXIT_USAGE)


# --- records -------------------------------------------------------------------------------------

class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice: which value counts would be up to the reader."""

    def __init__(self, key):
        super().__init__(f"JSON 对象里键 {key!r} 出现了两次")
        self.key = key


def _object_without_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise DuplicateKeyError(key)
        obj[key] = value
    return obj


def loads_strict(text):
    """json.loads, but a duplicate key anywhere raises DuplicateKeyError."""
    return json.loads(text, object_pairs_hook=_object_without_duplicates)


def read_json(path):
    """Strict JSON from a UTF-8 file, a BOM allowed (PowerShell writes one)."""
    return loads_strict(Path(path).read_bytes().decode("utf-8-sig"))


def write_json_atomic(path, obj):
    """Writes PATH.tmp then os.replace: the previous record stays whole until the new one is."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    # bytes, never text mode: Windows would turn every "\n" into "\r\n", and a record is the same file on every OS
    tmp.write_bytes((json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    try:
        os.replace(tmp, path)
    except OSError:  # e.g. PATH held open by another program on Windows: nothing half-done stays behind
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


class NameTaken(FileExistsError):
    """A record folder's name is used (PATH is what is in the way) or being claimed right now (BUSY)."""

    def __init__(self, path, busy=False):
        super().__init__(path)
        self.path, self.busy = path, busy


def make_folder(path):
    """mkdir (parents too) that explains a same-named file in the way."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(f"{Path(path).name} 是一个文件而不是文件夹，请把它移走或改名") from None


def create_record_folder(parent, name, write_first, taken=None):
    """Creates PARENT/NAME holding its first record, as one step, and returns its path.

    Names are one name whatever their case (Windows and macOS file systems would merge them), so
    the claim is a hidden folder `.lock-<name in lower case>`, made exclusively: of two processes
    claiming `Demo` and `demo` at once, one gets it. Under the claim, a same-named entry of PARENT
    or TAKEN() (the caller's own check; returns what is in the way, or None) refuses the name.
    WRITE_FIRST fills the claim folder, which is then renamed to NAME: PARENT/NAME never exists
    without its first record, and the rename releases the claim.
    """
    parent = Path(parent)
    make_folder(parent)
    claim = parent / f".lock-{name.lower()}"
    take_claim(claim)
    try:
        in_way = _same_name(parent, name) or (taken() if taken else None)
        if in_way:
            raise NameTaken(in_way)
        write_first(claim)
        os.rename(claim, parent / name)
        return parent / name
    finally:
        if os.path.lexists(claim):  # refused or interrupted: give the name back
            _remove(claim)


def take_claim(claim):
    """Makes the CLAIM folder exclusively; NameTaken(busy) while another process holds it.

    A claim older than STALE_LOCK_SECONDS was left by a process killed mid-claim (SIGKILL, power
    loss): it is taken over, so a name is never blocked for good.
    """
    for _ in range(2):
        try:
            claim.mkdir()
            return
        except FileExistsError:
            if not _stale(claim):
                break
            _remove(claim)
    raise NameTaken(f"{claim.parent.name}/{claim.name}", busy=True)


def _stale(claim):
    try:
        return time.time() - os.stat(claim).st_mtime > STALE_LOCK_SECONDS
    except OSError:  # gone meanwhile: free to try again
        return True


def _remove(path):
    import shutil  # only for a claim that failed half-way
    try:
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
    except OSError:  # taken over or removed by another process meanwhile
        pass


def _same_name(parent, name):
    """PARENT's entry that is NAME in another case (or exactly), as `parent/entry`; None if none."""
    wanted = name.lower()
    found = next((entry for entry in sorted(os.listdir(parent)) if entry.lower() == wanted), None)
    return f"{parent.name}/{found}" if found else None
