"""Exporter (lesson 13): turn a candidate set of review cards into a readable artifact.

A candidate is a JSON object `{"title": ..., "cards": [{"note_id", "question", "answer",
"quote"}, ...]}`. The mechanical rules of docs/harness/TASK.md are checked in a fixed order
(readable JSON without a duplicate key, text that UTF-8 can hold, structure, then for each card:
fields, note, quote) and the first violation raises `ValidationError`: a known, teachable
rejection whose Chinese message names the card. Any other exception is unexpected.

On success the exporter writes `OUT/review.md` (for a person, rendered exactly as the task
document defines) and `OUT/cards.json` (for machines: the cards, the sha256 of every note used,
the sha256 of review.md and of the content). It never decides whether an answer is *right*:
that is the human content review.

Shared with other files: only cli.py plumbing (strict JSON parsing, console output, argument
errors). verify_export.py implements the same rules and the same rendering on its own, from
the task document; the rule messages are the contract between the two.

    python3 export_review.py CANDIDATE.json --out DIR
    exit 0 exported, 1 rejected (the rule's message on stderr), 2 bad arguments or DIR exists, 130 Ctrl-C
"""
import cli  # first: it refuses a Python older than 3.11 before anything else runs

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent
NOTES_DIR = ROOT / "project" / "notes"

CARD_KEYS = ("note_id", "question", "answer", "quote")
MAX_CARDS = 20
MAX_TITLE = 80
MAX_LENGTH = {"question": 200, "answer": 500, "quote": 300}
MIN_QUOTE = 4
NOTE_ID = re.compile(r"[A-Z][0-9]{2}", re.ASCII)
SURROGATE = re.compile("[\ud800-\udfff]")


class ValidationError(Exception):
    """A candidate breaks a mechanical rule; the message names the card and the rule."""


def lf(text):
    """Line endings normalised, so a Windows checkout quotes and hashes the same."""
    return text.replace("\r\n", "\n")


def sha256_text(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def readable(text):
    """TEXT safe to print and to save as UTF-8: a lone surrogate shown as its \\u escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def read_candidate(path):
    """The candidate's JSON value; unreadable text, broken JSON or a repeated key is a ValidationError."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationError("候选文件不是 UTF-8 编码的文本，请用 UTF-8 另存后再试。") from None
    try:
        return cli.loads_strict(text)
    except cli.DuplicateKeyError as exc:
        raise ValidationError(f"候选文件里同一个对象中的字段 {readable(exc.key)} 出现了两次："
                              "请只保留其中一个后再试。") from None
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"候选文件不是合法的 JSON：{cli.json_error_place(exc)}附近有语法错误。") from None
    except (ValueError, RecursionError):  # a number too long to read, or nesting too deep
        raise ValidationError("候选文件不是合法的 JSON：含有过长的数字或嵌套过深的结构。") from None


def check_encodable(candidate):
    """Every key and string must be text UTF-8 can hold; the first one that is not is named."""
    if not isinstance(candidate, dict):
        return reject_surrogate(candidate, "候选文件")
    for key, value in candidate.items():
        reject_surrogate(key, "候选文件")
        if key == "title":
            reject_surrogate(value, "title ")
        elif key == "cards" and isinstance(value, list):
            for number, card in enumerate(value, 1):
                check_card_encodable(number, card)
        else:
            reject_surrogate(value, "候选文件")


def check_card_encodable(number, card):
    where = f"第 {number} 张卡："
    if not isinstance(card, dict):
        return reject_surrogate(card, where)
    for key, value in card.items():
        reject_surrogate(key, where + "字段名")
        reject_surrogate(value, f"{where}{key} ")


def reject_surrogate(value, where):
    """Raises for the first lone surrogate in VALUE (any JSON value), naming WHERE it sits."""
    if isinstance(value, str):
        found = SURROGATE.search(value)
        if found:
            raise ValidationError(f"{where}含有无法用 UTF-8 保存的字符 \\u{ord(found.group()):04x}"
                                  "（JSON 里单独的代理项转义）：请删掉它或换成完整的字符后再试。")
    elif isinstance(value, list):
        for item in value:
            reject_surrogate(item, where)
    elif isinstance(value, dict):
        for key, item in value.items():
            reject_surrogate(key, where)
            reject_surrogate(item, where)


def check_structure(candidate):
    if not isinstance(candidate, dict):
        raise ValidationError("候选必须是 JSON 对象，包含 title 和 cards 两个字段。")
    for key in candidate:
        if key not in ("title", "cards"):
            raise ValidationError(f"候选有未知字段 {key}：只允许 title 和 cards。")
    for key in ("title", "cards"):
        if key not in candidate:
            raise ValidationError(f"候选缺少字段 {key}。")
    title = candidate["title"]
    if not isinstance(title, str):
        raise ValidationError("title 必须是字符串。")
    if not title.strip():
        raise ValidationError("title 不能为空。")
    if len(title) > MAX_TITLE:
        raise ValidationError(f"title 超过 {MAX_TITLE} 个字符（现有 {len(title)} 个）。")
    cards = candidate["cards"]
    if not isinstance(cards, list):
        raise ValidationError("cards 必须是数组。")
    if not 1 <= len(cards) <= MAX_CARDS:
        raise ValidationError(f"cards 必须有 1 到 {MAX_CARDS} 张卡（现有 {len(cards)} 张）。")


def check_fields(number, card):
    where = f"第 {number} 张卡："
    if not isinstance(card, dict):
        raise ValidationError(where + "必须是 JSON 对象。")
    for key in card:
        if key not in CARD_KEYS:
            raise ValidationError(where + f"有未知字段 {key}（只允许 note_id、question、answer、quote）。")
    for key in CARD_KEYS:
        if key not in card:
            raise ValidationError(where + f"缺少字段 {key}。")
        value = card[key]
        if not isinstance(value, str):
            raise ValidationError(where + f"{key} 必须是字符串。")
        if not value.strip():
            raise ValidationError(where + f"{key} 不能为空。")
        limit = MAX_LENGTH.get(key)
        if limit and len(value) > limit:
            raise ValidationError(where + f"{key} 超过 {limit} 个字符（现有 {len(value)} 个）。")
    if len(card["quote"]) < MIN_QUOTE:
        raise ValidationError(where + f"quote 至少要 {MIN_QUOTE} 个字符（现有 {len(card['quote'])} 个）。")


def read_note(number, note_id, notes_dir):
    """The note's text (LF); an id that is not a plain note id never reaches the file system."""
    where = f"第 {number} 张卡："
    if not NOTE_ID.fullmatch(note_id):
        raise ValidationError(where + f"note_id「{note_id}」不是笔记编号（应形如 A01）。")
    path = Path(notes_dir) / f"{note_id}.md"
    if not path.is_file():
        raise ValidationError(where + f"找不到笔记 {note_id}（project/notes/{note_id}.md 不存在）。")
    return lf(path.read_bytes().decode("utf-8"))  # only CRLF is normalised, as the task document says


def validate(candidate, notes_dir=NOTES_DIR):
    """Checks every rule in order; returns {note_id: note text} for the notes the cards cite."""
    check_encodable(candidate)
    check_structure(candidate)
    notes = {}
    for number, card in enumerate(candidate["cards"], 1):
        check_fields(number, card)
        note_id = card["note_id"]
        if note_id not in notes:
            notes[note_id] = read_note(number, note_id, notes_dir)
        if lf(card["quote"]) not in notes[note_id]:
            raise ValidationError(f"第 {number} 张卡：引文不在对应笔记原文中。")
    return notes


def note_title(text):
    first = text.split("\n", 1)[0]
    return first[2:].strip() if first.startswith("# ") else ""


def render_review(candidate, notes):
    """review.md, rendered exactly as docs/harness/TASK.md defines it (a second renderer checks it)."""
    cards = candidate["cards"]
    lines = [
        f"# {candidate['title'].strip()}", "",
        f"共 {len(cards)} 张卡片，引用 {len(notes)} 篇笔记。",
        "机械检查已通过：每条引文都能在对应笔记原文中逐字找到。"
        "答案是否正确还没有人审过（semantic_review: pending），请对照引文逐张阅读。", "",
    ]
    for number, card in enumerate(cards, 1):
        note_id = card["note_id"]
        lines += [
            "---", "", f"## {number}. {card['question'].strip()}", "",
            f"**答：** {card['answer'].strip()}", "",
            *(f"> {line}" if line else ">" for line in lf(card["quote"]).split("\n")), "",
            f"来源：{note_id}《{note_title(notes[note_id])}》", "",
        ]
    return "\n".join(lines)


def canonical_json(value):
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def build_cards_json(candidate, notes, review_text):
    content = {
        "title": candidate["title"],
        "cards": [{key: card[key] for key in CARD_KEYS} for card in candidate["cards"]],
        "notes": {note_id: sha256_text(text) for note_id, text in sorted(notes.items())},
    }
    return canonical_json({
        "schema": "review-cards/1",
        **content,
        "review_md_sha256": sha256_text(review_text),
        "content_sha256": sha256_text(canonical_json(content)),
    })


def export_candidate(candidate_path, out_dir, notes_dir=NOTES_DIR):
    """Validates the candidate, then writes OUT/review.md and OUT/cards.json (OUT must not exist).

    Returns {file name: sha256 of its bytes}. Nothing is written when a rule is broken.
    """
    candidate = read_candidate(candidate_path)
    notes = validate(candidate, notes_dir)
    review_text = render_review(candidate, notes)
    files = {"review.md": review_text, "cards.json": build_cards_json(candidate, notes, review_text)}
    out_dir = Path(out_dir)
    out_dir.mkdir()
    for name, text in files.items():
        (out_dir / name).write_bytes(text.encode("utf-8"))
    return {name: sha256_text(text) for name, text in files.items()}


# Why a file could not be read or written, for the person; the exception's class follows in brackets.
FILE_TROUBLE = ((UnicodeDecodeError, "有一篇被引用的笔记不是 UTF-8 文本"), (PermissionError, "没有读写权限"),
                (FileNotFoundError, "文件或文件夹不存在"), (IsADirectoryError, "该是文件的地方是一个文件夹"),
                (NotADirectoryError, "路径中有一段不是文件夹"), (OSError, "读写文件时出错"))


def file_trouble(exc):
    reason = next(text for kind, text in FILE_TROUBLE if isinstance(exc, kind))
    name = getattr(exc, "filename", None)
    return f"{reason}（{cli.display_path(name)}）" if name else reason


def parse_arguments(argv):
    parser = cli.ChineseArgumentParser(
        usage=("[-h] --out OUT_DIR CANDIDATE",),
        description="校验候选复习卡片，通过后导出 review.md 与 cards.json。",
        epilog="退出码：0 已导出；1 候选违反机械规则（stderr 给出规则）或文件不可读；2 参数错误或输出目录已存在；"
               "130 被 Ctrl-C 中断。",
    )
    parser.add_argument("candidate", metavar="CANDIDATE", help="候选 JSON 文件，例如 samples/valid.json（相对路径从当前文件夹算起）")
    parser.add_argument("--out", required=True, metavar="OUT_DIR", help="新的输出目录（不得已存在）")
    args = parser.parse_args(argv)
    candidate, out_dir = Path(args.candidate), Path(args.out)
    if not candidate.is_file():
        parser.error(f"找不到候选文件 {cli.display_path(candidate)}：请确认路径，例如 samples/valid.json。")
    if out_dir.exists():
        parser.error(f"输出目录 {cli.display_path(out_dir)} 已存在：为保留旧结果不会覆盖，请换一个新目录名。")
    if not out_dir.absolute().parent.is_dir():
        parser.error(f"输出目录的上级文件夹 {cli.display_path(out_dir.absolute().parent)} 不存在："
                     "请先建好它，或换一个位置。")
    return candidate, out_dir


def main(argv=None):
    cli.use_safe_console()
    candidate, out_dir = parse_arguments(argv)
    try:
        artifact = export_candidate(candidate, out_dir)
    except ValidationError as exc:
        cli.say(f"导出被拒绝：{exc}这是规则的拒绝而不是程序出错；如果这是你自己写的候选，按这条规则改好后导出到"
                "新的目录（samples/ 里的固定样例保持原样）。")
        cli.print_json({"status": "rejected", "error": {"type": "ValidationError", "message": str(exc)}})
        return cli.EXIT_STOP
    except FileExistsError:  # made by someone else since the arguments were checked: still never overwritten
        cli.say(f"输出目录 {cli.display_path(out_dir)} 刚刚被别的程序建立：为保留它不会覆盖，请换一个新目录名。")
        return cli.EXIT_USAGE
    except (OSError, UnicodeDecodeError) as exc:  # not a rule: a file that cannot be read or written
        cli.say(f"导出没有完成：{file_trouble(exc)}（{type(exc).__name__}）；请确认 project/notes/ 里的笔记"
                "是课程原样的 UTF-8 文本、输出位置可写，然后换一个新的输出目录重试。")
        cli.print_json({"status": "error", "error": {"type": type(exc).__name__, "message": str(exc)}})
        return cli.EXIT_STOP
    cli.say(f"已导出到 {cli.display_path(out_dir)}：请打开其中的 review.md 做内容审核。")
    cli.print_json({"status": "exported", "out": str(out_dir), "artifact": artifact})
    return cli.EXIT_OK


if __name__ == "__main__":
    cli.run(main, "已中断：导出可能没有完成，输出目录（如果已经建立）里的文件不完整；请换一个新的输出目录重新导出。")
