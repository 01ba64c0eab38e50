"""Independent re-check of a candidate or an exported artifact against the notes (lesson 13).

This verifier does not import export_review.py: it is a second implementation of the same
mechanical rules (SPEC §3) that reads the notes itself, so one bug cannot hide in both. The
rule messages are the contract shared by the two; a recorded export failure counts as
"reproduced" when this module's first problem carries the same message.

An artifact folder (review.md + cards.json) passes only if cards.json is byte-for-byte in its
canonical form, its content hash and review.md's hash match, every note it used is unchanged,
every card still obeys the rules and review.md shows every quote. Any edited byte fails.

    python3 verify_export.py CANDIDATE.json|ARTIFACT_DIR
    exit 0 pass, 1 problems found (each named with its card number), 2 bad arguments
"""
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
NOTES_DIR = ROOT / "project" / "notes"

FIELDS = (("note_id", None), ("question", 200), ("answer", 500), ("quote", 300))
FIELD_NAMES = tuple(name for name, _ in FIELDS)


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plain_note_id(value):
    return (len(value) == 3 and "A" <= value[0] <= "Z"
            and all("0" <= ch <= "9" for ch in value[1:]))


def note_text(notes_dir, note_id):
    """The note as LF text, or None when it is absent or unreadable (read afresh every time)."""
    try:
        return (Path(notes_dir) / (note_id + ".md")).read_bytes().decode("utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError):
        return None


def structure_problem(candidate):
    if type(candidate) is not dict:
        return "候选必须是 JSON 对象，包含 title 和 cards 两个字段。"
    extra = [key for key in candidate if key not in ("title", "cards")]
    if extra:
        return f"候选有未知字段 {extra[0]}：只允许 title 和 cards。"
    missing = [key for key in ("title", "cards") if key not in candidate]
    if missing:
        return f"候选缺少字段 {missing[0]}。"
    title, cards = candidate["title"], candidate["cards"]
    if type(title) is not str:
        return "title 必须是字符串。"
    if title.strip() == "":
        return "title 不能为空。"
    if len(title) > 80:
        return f"title 超过 80 个字符（现有 {len(title)} 个）。"
    if type(cards) is not list:
        return "cards 必须是数组。"
    if len(cards) < 1 or len(cards) > 20:
        return f"cards 必须有 1 到 20 张卡（现有 {len(cards)} 张）。"
    return None


def card_problem(card, notes_dir):
    """The first broken rule of one card (fields, note, quote), without its card prefix."""
    if type(card) is not dict:
        return "必须是 JSON 对象。"
    extra = [key for key in card if key not in FIELD_NAMES]
    if extra:
        return f"有未知字段 {extra[0]}（只允许 note_id、question、answer、quote）。"
    for name, limit in FIELDS:
        if name not in card:
            return f"缺少字段 {name}。"
        value = card[name]
        if type(value) is not str:
            return f"{name} 必须是字符串。"
        if value.strip() == "":
            return f"{name} 不能为空。"
        if limit is not None and len(value) > limit:
            return f"{name} 超过 {limit} 个字符（现有 {len(value)} 个）。"
    if len(card["quote"]) < 4:
        return f"quote 至少要 4 个字符（现有 {len(card['quote'])} 个）。"
    note_id = card["note_id"]
    if not plain_note_id(note_id):
        return f"note_id「{note_id}」不是笔记编号（应形如 A01）。"
    text = note_text(notes_dir, note_id)
    if text is None:
        return f"找不到笔记 {note_id}（project/notes/{note_id}.md 不存在）。"
    if card["quote"].replace("\r\n", "\n") not in text:
        return "引文不在对应笔记原文中。"
    return None


def candidate_problems(candidate, notes_dir=NOTES_DIR):
    """Every card's first problem, in card order; a structural problem stops the check."""
    problem = structure_problem(candidate)
    if problem:
        return [problem]
    found = []
    for number, card in enumerate(candidate["cards"], 1):
        problem = card_problem(card, notes_dir)
        if problem:
            found.append(f"第 {number} 张卡：{problem}")
    return found


def parse_candidate(raw):
    """(value, None) or (None, problem) for the bytes of a candidate file."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "候选文件不是 UTF-8 编码的文本，请用 UTF-8 另存后再试。"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"候选文件不是合法的 JSON：第 {exc.lineno} 行第 {exc.colno} 列附近有语法错误。"
    except (ValueError, RecursionError):  # a number too long to read, or nesting too deep
        return None, "候选文件不是合法的 JSON：含有过长的数字或嵌套过深的结构。"


def check_candidate(path, notes_dir=NOTES_DIR):
    """Problems of a candidate file, in rule order ([] when it passes)."""
    candidate, problem = parse_candidate(Path(path).read_bytes())
    return [problem] if problem else candidate_problems(candidate, notes_dir)


def canonical(value):
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def check_artifact(folder, notes_dir=NOTES_DIR):
    """Problems of an exported artifact folder ([] when every byte is as exported)."""
    folder = Path(folder)
    try:
        review_bytes = (folder / "review.md").read_bytes()
        cards_bytes = (folder / "cards.json").read_bytes()
    except OSError as exc:
        return [f"产物不完整：缺少 {Path(exc.filename).name}（{folder}）。"]
    try:
        review = review_bytes.decode("utf-8")
        record = json.loads(cards_bytes.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, absurd numbers or nesting
        return ["cards.json 或 review.md 不是合法的 UTF-8/JSON：产物被改动过。"]
    keys = ("schema", "title", "cards", "notes", "review_md_sha256", "content_sha256")
    if type(record) is not dict or tuple(record) != keys or record["schema"] != "review-cards/1":
        return ["cards.json 的字段与导出格式 review-cards/1 不符：产物被改动过。"]
    problems = []
    if canonical(record).encode("utf-8") != cards_bytes:
        problems.append("cards.json 的排版与导出时不同：文件被手工改动过。")
    content = {key: record[key] for key in ("title", "cards", "notes")}
    if digest(canonical(content)) != record["content_sha256"]:
        problems.append("cards.json 的内容与其 content_sha256 不符：卡片、标题或笔记哈希被改动过。")
    if digest(review) != record["review_md_sha256"]:
        problems.append("review.md 与 cards.json 记录的哈希不符：review.md 被改动过。")
    problems += candidate_problems({"title": record["title"], "cards": record["cards"]}, notes_dir)
    problems += notes_problems(record, notes_dir)
    problems += missing_from_review(record, review)
    return problems


def notes_problems(record, notes_dir):
    notes = record["notes"]
    if type(notes) is not dict or type(record["cards"]) is not list:
        return ["cards.json 的 notes 或 cards 字段类型不对：产物被改动过。"]
    cited = {card.get("note_id") for card in record["cards"]
             if type(card) is dict and type(card.get("note_id")) is str}
    problems = []
    if set(notes) != cited:
        problems.append("cards.json 记录的笔记与卡片引用的笔记不一致。")
    for note_id, recorded in sorted(notes.items()):
        text = note_text(notes_dir, note_id) if plain_note_id(note_id) else None
        if text is None or digest(text) != recorded:
            problems.append(f"笔记 {note_id} 已与导出时不同（或已不存在）：引文需要按现在的笔记重新核对。")
    return problems


def missing_from_review(record, review):
    """Every card's question, answer and quote block must be in review.md as recorded."""
    problems = []
    for number, card in enumerate(record["cards"], 1):
        if type(card) is not dict or not all(type(card.get(k)) is str for k in FIELD_NAMES):
            continue
        quote = card["quote"].replace("\r\n", "\n").split("\n")
        block = "\n".join(f"> {line}" if line else ">" for line in quote)
        for what, text in (("问题", card["question"].strip()), ("答案", card["answer"].strip()),
                           ("引文块", block)):
            if text not in review:
                problems.append(f"第 {number} 张卡：review.md 里没有这张卡的{what}。")
    return problems


def main(argv=None):
    from cli import ChineseArgumentParser, print_json, say, use_safe_console

    use_safe_console()
    parser = ChineseArgumentParser(
        description="独立核对候选 JSON 或导出的产物目录（不导入 export_review.py）。",
        epilog="退出码：0 通过；1 发现问题（逐条写明卡片编号）；2 参数错误；130 被 Ctrl-C 中断。",
    )
    parser.add_argument("target", help="候选 JSON 文件，或含 review.md 与 cards.json 的产物目录")
    text = parser.parse_args(argv).target
    target = Path(text)
    if not text.strip():
        parser.error("没有给出要核对的文件或目录：例如 samples/valid.json 或 runs/NAME/artifact。")
    if target.is_dir():
        kind, problems = "artifact", check_artifact(target)
    elif target.is_file():
        kind, problems = "candidate", check_candidate(target)
    else:
        parser.error(f"找不到 {target}：请给出候选 JSON 文件或产物目录，例如 runs/NAME/artifact。")
    for problem in problems:
        say(f"问题：{problem}")
    say("核对通过。" if not problems else f"共 {len(problems)} 个问题。")
    print_json({"result": "fail" if problems else "pass", "kind": kind, "problems": problems})
    return 1 if problems else 0


if __name__ == "__main__":
    from cli import run
    run(main, "已中断：没有完成核对。")
