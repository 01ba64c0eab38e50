"""Command-line conventions shared by every script of the workspace (SPEC §2).

One JSON line on stdout, Chinese explanations on stderr, consoles that cannot show Chinese get
escapes instead of a crash, argument errors exit 2 with a Chinese message, and record files
are replaced atomically so a reader never sees half a record.
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

EXIT_OK, EXIT_STOP, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


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


def run(main, interrupted="已中断。"):
    """Exit with MAIN's code; Ctrl-C anywhere becomes exit 130 with a Chinese line, no traceback."""
    try:
        code = main()
    except KeyboardInterrupt:
        say(interrupted)
        code = EXIT_INTERRUPTED
    sys.exit(code)


def say(message):
    """An explanation for the person at the terminal (stderr)."""
    print(message, file=sys.stderr, flush=True)


# argparse's own English messages, said again in Chinese (the value named stays as typed).
_ARGPARSE_MESSAGES = (
    (r"the following arguments are required: (.+)", "缺少必需的参数：{0}"),
    (r"unrecognized arguments: (.+)", "无法识别的参数：{0}"),
    (r"argument (\S+): invalid choice: (.+?) \(choose from (.+)\)", "参数 {0} 的值 {1} 不在可选范围内（可选：{2}）"),
    (r"argument (\S+): invalid (\w+) value: (.+)", "参数 {0} 的值 {2} 不是有效的数字"),
    (r"argument (\S+): expected one argument", "参数 {0} 后面需要一个值"),
    (r"argument (\S+): not allowed with argument (\S+)", "参数 {0} 不能和 {1} 一起使用"),
    (r"one of the arguments (.+) is required", "需要以下参数之一：{0}"),
)


def chinese(message):
    for pattern, template in _ARGPARSE_MESSAGES:
        match = re.fullmatch(pattern, message)
        if match:
            return template.format(*match.groups())
    return message


class ChineseArgumentParser(argparse.ArgumentParser):
    """argparse, but a bad argument is explained in Chinese and always exits 2.

    Abbreviated options are refused, so no English "ambiguous option" message can appear.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.print_usage(sys.stderr)
        say(f"{self.prog}：参数错误：{chinese(message)}\n用 --help 查看用法。")
        sys.exit(EXIT_USAGE)


def write_json_atomic(path, obj):
    """Writes PATH.tmp then os.replace: the previous record stays whole until the new one is."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_json(path):
    """JSON from a UTF-8 file, a BOM allowed (PowerShell writes one)."""
    return json.loads(Path(path).read_bytes().decode("utf-8-sig"))
