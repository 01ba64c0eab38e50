"""Exporter (lesson 13): turn a candidate set of review cards into a readable artifact.

A candidate is a JSON object `{"title": ..., "cards": [{"note_id", "question", "answer",
"quote"}, ...]}`. The mechanical rules are checked in a fixed order (structure, then for each
card: fields, note, quote) and the first violation raises `ValidationError`: a known, teachable
rejection whose Chinese message names the card. Any other exception is unexpected.

On success the exporter writes `OUT/review.md` (for a person) and `OUT/cards.json` (for
machines: the cards, the sha256 of every note used, the sha256 of review.md and of the content).
It never decides whether an answer is *right*: that is the human content review.

    python3 export_review.py CANDIDATE.json --out DIR
    exit 0 exported, 1 rejected (the rule's message on stderr), 2 bad arguments or DIR exists
"""
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
NOTES_DIR = ROOT / "project" / "notes"

CARD_KEYS = ("note_id", "question", "answer", "quote")
MAX_CARDS = 20
MAX_TITLE = 80
MAX_LENGTH = {"question": 200, "answer": 500, "quote": 300}
MIN_QUOTE = 4
NOTE_ID = re.compile(r"[A-Z][0-9]{2}", re.ASCII)


class ValidationError(Exception):
    """A candidate breaks a mechanical rule; the message names the card and the rule."""


def lf(text):
    """Line endings normalised, so a Windows checkout quotes and hashes the same."""
    return text.replace("\r\n", "\n")


def sha256_text(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_candidate(path):
    """The candidate's JSON value; unreadable text or broken JSON is a ValidationError."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationError("候选文件不是 UTF-8 编码的文本，请用 UTF-8 另存后再试。") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"候选文件不是合法的 JSON：第 {exc.lineno} 行第 {exc.colno} 列附近有语法错误。") from None
    except (ValueError, RecursionError):  # a number too long to read, or nesting too deep
        raise ValidationError("候选文件不是合法的 JSON：含有过长的数字或嵌套过深的结构。") from None


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
    return lf(path.read_text(encoding="utf-8"))


def validate(candidate, notes_dir=NOTES_DIR):
    """Checks every rule in order; returns {note_id: note text} for the notes the cards cite."""
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
    """review.md: what a person reads to do the content review."""
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


def main(argv=None):
    from cli import EXIT_OK, EXIT_STOP, ChineseArgumentParser, print_json, say, use_safe_console

    use_safe_console()
    parser = ChineseArgumentParser(
        description="校验候选复习卡片，通过后导出 review.md 与 cards.json。",
        epilog="退出码：0 已导出；1 候选违反机械规则（stderr 给出规则）或文件不可读；2 参数错误或输出目录已存在；"
               "130 被 Ctrl-C 中断。",
    )
    parser.add_argument("candidate", help="候选 JSON 文件，例如 samples/valid.json")
    parser.add_argument("--out", required=True, help="新的输出目录（不得已存在）")
    args = parser.parse_args(argv)
    candidate, out_dir = Path(args.candidate), Path(args.out)
    if not candidate.is_file():
        parser.error(f"找不到候选文件 {candidate}：请确认路径，例如 samples/valid.json。")
    if out_dir.exists():
        parser.error(f"输出目录 {out_dir} 已存在：为保留旧结果不会覆盖，请换一个新目录名。")
    if not out_dir.absolute().parent.is_dir():
        parser.error(f"输出目录的上级文件夹 {out_dir.absolute().parent} 不存在：请先建好它，或换一个位置。")
    try:
        artifact = export_candidate(candidate, out_dir)
    except ValidationError as exc:
        say(f"导出被拒绝：{exc}请按这条规则修改候选后，换一个新的输出目录再导出。")
        print_json({"status": "rejected", "error": {"type": "ValidationError", "message": str(exc)}})
        return EXIT_STOP
    except (OSError, UnicodeDecodeError) as exc:  # not a rule: a file that cannot be read or written
        say(f"导出没有完成（{type(exc).__name__}：{exc}）：请确认 project/notes/ 里的笔记是 UTF-8 文本、"
            "输出位置可写，然后换一个新的输出目录重试。")
        print_json({"status": "error", "error": {"type": type(exc).__name__, "message": str(exc)}})
        return EXIT_STOP
    say(f"已导出到 {out_dir}：请打开 review.md 做内容审核。")
    print_json({"status": "exported", "out": str(out_dir), "artifact": artifact})
    return EXIT_OK


if __name__ == "__main__":
    from cli import run
    run(main, "已中断：导出没有完成，请删除输出目录后用新目录重试。")
