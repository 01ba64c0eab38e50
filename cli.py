"""Command-line plumbing shared by every script of the workspace; it holds no rule of any lesson.

What every script shares: one JSON line on stdout, Chinese explanations on stderr, one rule for what no output
shows raw (visible(): controls, bidi and other invisible characters as escapes, on stdout, stderr, argument errors,
reports and pages), consoles that cannot show Chinese get escapes instead of a crash, `--help` and argument
errors in Chinese (exit 2), Ctrl-C and termination signals turned into one exception, paths shown with `/` on every OS,
strict JSON reading (a duplicate key is an error), atomic record writes as bytes flushed to disk (the
same file on every OS), the claim of a new record folder by name, safe reads of evidence a submission
holds (never a link, FIFO or device; never past a cap), line-end helpers, and the one table of Chinese
glosses of error types. Verifiers share this file with the programs they check because none of it
decides a verdict.

It is imported first by every program, and refuses a Python older than 3.11 before any other import: so
everything above that check must parse and run on old Pythons (3.6 and newer are tested; Python 2 and 3.0-3.5
cannot parse any program of the workspace, and print their own SyntaxError).
"""
import sys

MINIMUM_PYTHON = (3, 11)


def visible(text, keep=""):
    """TEXT as every output of the workspace shows it: stdout's JSON (as JSON's own escapes, print_json), stderr,
    argument errors, reports and pages. The one rule: a character that is not printable (str.isprintable) is
    written as its escape (\\x1b, \\x9b, \\u202e): C0 and C1 controls and DEL (ESC starts an OSC 52 clipboard
    write or a screen clear, U+009B is a one-character CSI), format characters such as the bidi embeddings,
    overrides and isolates, the line and paragraph separators, private and unassigned code points. So a name a
    submission or a command line carries can neither drive the terminal nor fake or reorder a line. KEEP: the
    characters a message itself uses and that stay (say() keeps its own line breaks)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in keep else ch.encode("unicode_escape").decode("ascii")
                   for ch in text)


def old_python(version, program, executable):
    """The one Chinese line that refuses Python VERSION (a sys.version_info) for PROGRAM (as typed) run by
    EXECUTABLE; None when VERSION is new enough."""
    if tuple(version[:2]) >= MINIMUM_PYTHON:
        return None
    words = program.split(" ")
    typed = " ".join(words[1:]) if words[1:2] == ["-m"] else program  # `python3 -m unittest`: no second python
    return ("{0}：需要 Python 3.11 或更高版本，而运行它的是 Python {1}.{2}.{3}（{4}）。请先安装新版本："
            "从 python.org 下载，或用 Microsoft Store（Windows）、Homebrew（macOS：brew install python）、"
            "系统的包管理器（Linux，例如 sudo apt install python3.11）；再用新版本运行它"
            "（例如 python3.11 {5}；Windows 的 py -3 会选装好的最新版本）。").format(
                program, version[0], version[1], version[2], executable or "python", typed)


def refuse_old_python():
    """Exit 2 with old_python()'s line on stderr when this Python is too old; nothing else has run yet."""
    message = old_python(sys.version_info, (sys.argv[0] if sys.argv else "") or "python", sys.executable)
    if message:
        try:
            sys.stderr.reconfigure(errors="backslashreplace")  # a console without Chinese gets escapes
        except (AttributeError, ValueError):
            pass
        sys.stderr.write(visible(message) + "\n")  # the program's name is typed, or renamed, by a person
        raise SystemExit(2)


refuse_old_python()

import argparse  # noqa: E402 (everything below may need Python 3.11)
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import stat  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

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

    Real characters where stdout can encode them; JSON's own \\u escapes where it cannot (a console's escapes
    would not be valid JSON), and always for what visible() escapes: json.dumps leaves C1 controls, DEL, the bidi
    overrides and the line and paragraph separators (where many line readers split) raw inside a string.
    """
    line = json_visible(json.dumps(obj, ensure_ascii=False))
    try:
        line.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        line = json.dumps(obj)
    print(line, flush=True)


def json_visible(line):
    """A JSON text with every character visible() escapes written as JSON's \\u escape: the same value, read back."""
    if line.isprintable():
        return line
    return "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in line)


def say(message):
    """An explanation for the person at the terminal (stderr), shown by visible(): only its own line breaks stay."""
    print(visible(message, keep="\n"), file=sys.stderr, flush=True)


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
        # as given, then with its folder resolved: the current folder is always resolved, so a path through a
        # link (macOS's /tmp -> /private/tmp) would otherwise climb to the root and down again
        shown = min((os.path.relpath(candidate) for candidate in (path, _folder_resolved(path))),
                    key=lambda text: text.split(os.sep).count(".."))
    except ValueError:  # another drive on Windows: only the full path works
        shown = str(path)
    else:
        if shown.split(os.sep)[:3].count("..") > 2:
            shown = os.path.abspath(path)  # not resolved: a link keeps its own name
    return shown.replace(os.sep, "/")


def _folder_resolved(path):
    """PATH with its folder's links resolved; PATH itself, a link, keeps its own name."""
    try:
        return Path(path).absolute().parent.resolve() / Path(path).name
    except OSError:
        return Path(path)


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


# What an input method or a word processor types where "-" was meant: em and en dashes (a Chinese input method's
# "——"), figure and horizontal bars, hyphens, the minus sign and the full-width hyphen-minus.
INPUT_METHOD_DASHES = "\u2014\u2013\u2015\u2012\u2010\u2011\u2212\uff0d"


class _ChineseHelpFormatter(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "用法：" if prefix is None else prefix)


class ChineseArgumentParser(argparse.ArgumentParser):
    """argparse whose help and errors are wholly Chinese; a bad argument always exits 2.

    Abbreviated options are refused, so no English "ambiguous option" message can appear; a mistyped option
    is named with the nearest real one. USAGE is given as the lines that follow the program's name (a tuple):
    they are shown one under another, the same on every Python and terminal (argparse's own wrapping differs).
    """

    def __init__(self, *args, usage=None, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _ChineseHelpFormatter)
        add_help = kwargs.pop("add_help", True)
        super().__init__(*args, add_help=False, **kwargs)
        if usage:  # under the first line's words: "用法：" and the name take len(prog) + 4 columns
            self.usage = "%(prog)s " + ("\n" + " " * (len(self.prog) + 4)).join(usage)
        self._positionals.title, self._optionals.title = "位置参数", "选项"
        if add_help:
            self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help="显示本帮助并退出")

    def add_subparsers(self, **kwargs):
        kwargs.setdefault("prog", self.prog)  # a command's name follows the program's, not its whole usage
        return super().add_subparsers(**kwargs)

    def format_help(self):
        # argparse ends each section title with an ASCII colon; Chinese titles take the full-width one
        return re.sub(r"^(\S[^\n]*?):$", r"\1：", super().format_help(), flags=re.MULTILINE)

    def parse_known_args(self, args=None, namespace=None):
        self._typed = list(sys.argv[1:] if args is None else args)  # what error() looks through for a typo
        wrong = self._input_method_dash() or self._given_twice()
        if wrong:
            self.error(wrong)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        """Exit 2 with the usage and MESSAGE in Chinese; what the person typed (a file name with an escape sequence,
        a wildcard's expansion) is shown by visible(), never raw, however the message quotes it."""
        sys.stderr.write(visible(self.format_usage(), keep="\n"))
        say(f"{visible(self.prog)}：参数错误：{visible(self._unknown_option() or chinese(message))}\n用 --help 查看用法。")
        sys.exit(EXIT_USAGE)

    def _unknown_option(self):
        """A typed word that looks like an option but is none of this parser's (or its commands'), named with
        the nearest one: argparse itself would first complain that the option meant (`--scenario`) is missing."""
        known = self._options()
        for word in getattr(self, "_typed", []):
            if word == "--":
                break
            name = word.split("=", 1)[0]
            if word.startswith("-") and len(word) > 1 and not self._negative_number_matcher.match(word) \
                    and name not in known:
                import difflib  # only for a typo
                nearest = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
                return (f"无法识别的选项 {name}：是不是想写 {nearest[0]}？" if nearest else
                        f"无法识别的选项 {name}（可用的选项：{'、'.join(sorted(known))}）。")
        return None

    def _input_method_dash(self):
        """Why a typed word that starts with a dash an input method makes (`——run`, `—run`, `－－run`, `−1`) is
        refused, naming what to type instead; None when there is none. argparse would take it for a value and
        complain that the option meant is missing."""
        for word in self._typed:
            if word == "--":
                break
            rest = word.lstrip(INPUT_METHOD_DASHES)
            if rest == word:
                continue
            import unicodedata  # only for such a word: full-width letters typed after it read as the ASCII ones
            dashes, rest = word[:len(word) - len(rest)], unicodedata.normalize("NFKC", rest)
            name = rest.split("=", 1)[0]
            fixed = next((f"{prefix}{rest}" for prefix in ("-" * len(dashes), "--", "-")
                          if prefix + name in self._options() or (prefix == "-" and name[:1].isdigit())),
                         "-" * len(dashes) + rest)
            return (f"{word} 开头的「{dashes}」是中文输入法打出的破折号或全角符号，不是英文的连字符 -：请切换到英文输入法"
                    f"重新输入，写成 {fixed}。")
        return None

    def _given_twice(self):
        """Why an option that keeps one value is typed more than once (argparse would keep the last in silence,
        e.g. `--pack 张三.zip --pack x.zip`), or None. Switches and options that gather values (append) may repeat."""
        typed = {}
        for word in self._typed:
            if word == "--":
                break
            name = word.split("=", 1)[0]
            action = self._option_string_actions.get(name)
            if type(action) is argparse._StoreAction:
                typed.setdefault(action, []).append(name)
        for names in typed.values():
            if len(names) > 1:
                return f"选项 {names[0]} 给了 {len(names)} 次：只能给一次，不然不知道该用哪一个。请只保留一个。"
        return None

    def _options(self):
        """Every option string of this parser and of its commands' parsers."""
        known = set(self._option_string_actions)
        for action in self._actions:
            for parser in (getattr(action, "choices", None) or {}).values() if isinstance(
                    action, argparse._SubParsersAction) else ():
                known |= parser._options() if isinstance(parser, ChineseArgumentParser) else set()
        return known


# --- records -------------------------------------------------------------------------------------

class RecordError(ValueError):
    """Bytes that are no record: the message is Chinese; KIND says which way ("empty", "cut", "not_utf8",
    "not_json", "constant", "too_deep", "duplicate_key")."""

    def __init__(self, message, kind):
        super().__init__(message)
        self.kind = kind


class DuplicateKeyError(RecordError):
    """A JSON object names the same key twice: which value counts would be up to the reader."""

    def __init__(self, key):
        super().__init__(f"JSON 对象里键 {key!r} 出现了两次", "duplicate_key")
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


def json_error_place(exc):
    """Where a json.JSONDecodeError EXC is, as "第 L 行第 C 列", the same on every Python.

    Python 3.13 places a trailing comma's error at the comma; 3.11 and 3.12 at what follows it (the closing
    bracket, often on the next line). The documents show 3.11's place, so every version reports that one.
    """
    position = exc.pos
    if exc.msg.startswith("Illegal trailing comma"):
        position = len(exc.doc) - len(exc.doc[exc.pos + 1:].lstrip(" \t\n\r"))
    line, column = exc.doc.count("\n", 0, position) + 1, position - exc.doc.rfind("\n", 0, position)
    return f"第 {line} 行第 {column} 列"


def read_json(path):
    """Strict JSON from a UTF-8 file, a BOM allowed (PowerShell writes one)."""
    return loads_strict(Path(path).read_bytes().decode("utf-8-sig"))


MAX_DEPTH = 64  # records nest four or five levels; a deeper one was built to exhaust the reader


def _refuse_constant(name):
    raise RecordError(f"含有 {name}（标准 JSON 没有这样的数）", "constant")


def loads_record(data):
    """A record's bytes (UTF-8, a BOM allowed) as strict JSON: RecordError (a ValueError) otherwise.

    Refused: bytes that are not UTF-8 (UTF-16 among them), an empty or cut text, a duplicate key,
    NaN/Infinity, nesting deeper than MAX_DEPTH. The top level may be anything: callers say "not an object".
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data":  # cut in the middle of a character
            raise RecordError("在结尾处中断（内容不完整，被截断）", "cut") from None
        raise RecordError("不是 UTF-8 文本（例如被另存成了 UTF-16）", "not_utf8") from None
    if not text.strip():
        raise RecordError("是空的", "empty")
    try:
        obj = json.loads(text, object_pairs_hook=_object_without_duplicates, parse_constant=_refuse_constant)
    except RecursionError:
        raise RecordError(f"嵌套超过 {MAX_DEPTH} 层", "too_deep") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise RecordError("在结尾处中断（内容不完整，被截断）", "cut") from None
        raise RecordError(f"不是合法的 JSON（{json_error_place(exc)}）", "not_json") from None
    except RecordError:
        raise
    except ValueError:  # e.g. an integer longer than Python converts
        raise RecordError("不是合法的 JSON", "not_json") from None
    if _deeper_than(obj, MAX_DEPTH):
        raise RecordError(f"嵌套超过 {MAX_DEPTH} 层", "too_deep")
    return obj


def _deeper_than(obj, limit):
    """True when OBJ nests arrays and objects more than LIMIT levels deep (walked level by level, no recursion)."""
    level = [obj] if isinstance(obj, (dict, list)) else []
    for _ in range(limit):
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, (dict, list))]
        if not level:
            return False
    return True


def write_json_atomic(path, obj):
    """Writes PATH.tmp, flushes it to disk, then os.replace: the previous record stays whole until the new one is.

    UTF-8 with "\n" line ends on every system, so a record's bytes never depend on where it was written;
    after the fsync an empty or cut record cannot be left by a crash.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    # bytes, never text mode: Windows would turn every "\n" into "\r\n", and a record is the same file on every OS
    try:
        with open(tmp, "wb") as file:
            file.write((json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except OSError:  # e.g. PATH held open by another program on Windows: nothing half-done stays behind
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


# --- evidence files ------------------------------------------------------------------------------

class EvidenceError(OSError):
    """An evidence file that is not read: an OSError (a handler of file errors catches it) with a Chinese str()."""

    def __init__(self, path, message):
        super().__init__(message)
        self.filename, self.message = str(path), message

    def __str__(self):
        return self.message


class NotRegularFile(EvidenceError):
    """PATH is not a plain file (a link, FIFO, device, socket or folder); KIND names it in Chinese. Never opened."""

    def __init__(self, path, kind):
        super().__init__(path, f"{display_path(path)} 是{kind}，不是普通文件")
        self.kind = kind


class TooLarge(EvidenceError):
    """PATH holds more than CAP bytes: nothing beyond the cap was read."""

    def __init__(self, path, cap):
        super().__init__(path, f"{display_path(path)} 超过了读取上限（{cap} 字节）")
        self.cap = cap


_JUNCTION = 0xA0000003  # Windows: a mount-point reparse point, a folder link ordinary users can make
_KINDS = ((stat.S_ISLNK, "符号链接"), (stat.S_ISDIR, "文件夹"), (stat.S_ISFIFO, "命名管道（FIFO）"),
          (stat.S_ISCHR, "字符设备"), (stat.S_ISBLK, "块设备"), (stat.S_ISSOCK, "套接字"))


def entry_kind(status):
    """What an os.lstat() STATUS describes: "普通文件", "文件夹", "目录联接", "符号链接", "命名管道（FIFO）" ..."""
    if getattr(status, "st_reparse_tag", 0) == _JUNCTION:
        return "目录联接"
    if stat.S_ISREG(status.st_mode):
        return "普通文件"
    return next((kind for test, kind in _KINDS if test(status.st_mode)), "特殊文件")


def read_evidence(path, cap):
    """The bytes of PATH, read only when it is a plain file of at most CAP bytes.

    lstat first: a link, FIFO, device, socket or folder raises NotRegularFile and is never opened (a FIFO
    would block, /dev/zero never ends). The file is opened without blocking or following links and checked
    again (a swap in between is caught); over CAP raises TooLarge after reading at most CAP + 1 bytes.
    FileNotFoundError, PermissionError and other OSErrors pass as they are.
    """
    kind = entry_kind(os.lstat(path))
    if kind != "普通文件":
        raise NotRegularFile(path, kind)
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags)
    with open(descriptor, "rb", buffering=0) as file:
        status = os.fstat(descriptor)
        if entry_kind(status) != "普通文件":
            raise NotRegularFile(path, entry_kind(status))
        if status.st_size > cap:
            raise TooLarge(path, cap)
        data = file.read(status.st_size + 1)  # a buffer of the cap's size for every small file would cost
        if len(data) > status.st_size:  # grown since, or a size the system does not tell (/proc)
            data += file.read(cap + 1 - len(data))
    if len(data) > cap:
        raise TooLarge(path, cap)
    return data


def line_endings(data):
    """How BYTES end their lines: "lf", "crlf", "mixed" (both, or a lone CR) or "none"."""
    crlf, newlines, returns = data.count(b"\r\n"), data.count(b"\n"), data.count(b"\r")
    if returns > crlf or (crlf and crlf < newlines):
        return "mixed"
    return "crlf" if crlf else "lf" if newlines else "none"


def to_lf(data):
    """BYTES with every CRLF made LF (a lone CR stays)."""
    return data.replace(b"\r\n", b"\n")


# --- glosses -------------------------------------------------------------------------------------

# The one Chinese gloss of each error type a person is shown (docs/loop/TASK.md lists them).
ERROR_GLOSS = {
    "ValidationError": "导出规则拒绝了候选",
    "VerificationError": "独立核对发现刚导出的产物有问题",
    "ContextChanged": "上下文文件被改动",
    "EvidenceMismatch": "证据不一致",
    "FileExistsError": "子运行目录已被占用",
    "NameTaken": "子运行目录已被占用",
    "ChildNeedsHuman": "子运行需要人工查看",
    "PermissionError": "没有读写权限",
    "FileNotFoundError": "文件或文件夹不存在",
    "OSError": "文件读写出错",
    "UnicodeDecodeError": "有一个文件不是 UTF-8 文本",
    "NotADirectoryError": "该是文件夹的地方是一个文件",
    "IsADirectoryError": "该是文件的地方是一个文件夹",
    "NotRegularFile": "该是普通文件的地方是链接、管道、设备或文件夹",
    "TooLarge": "文件超过了读取上限",
    "NotAProposal": "开发模型最后的回答不是一个提议",
    "ModelFailed": "开发模型的服务失败了",
    "ServerNotStarted": "本机的开发模型没能启动",
}


def gloss(error_type):
    """The Chinese gloss of ERROR_TYPE (a name such as "FileNotFoundError"); "意外异常" for one not listed."""
    return ERROR_GLOSS.get(error_type, "意外异常")


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
