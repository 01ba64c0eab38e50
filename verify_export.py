"""Independent re-check of a candidate or an exported artifact against the notes (lesson 13).

This verifier imports nothing of export_review.py: it is a second implementation of the rules
and of the review.md rendering written in docs/harness/TASK.md, reading the notes itself, so one
bug cannot hide in both. The rule messages are the contract shared by the two; a recorded
export failure counts as "reproduced" when this module's first problem carries the same message.

An artifact folder (review.md + cards.json) passes only if cards.json is strict JSON byte-for-byte
in its canonical form, its content hash matches, every note it used is unchanged, every card
still obeys the rules, and review.md is byte-for-byte what this module renders from cards.json
and the notes. Any edited byte fails.

Shared with other files: only cli.py plumbing (strict JSON parsing, console output, arguments).

    python3 verify_export.py CANDIDATE.json|ARTIFACT_DIR
    exit 0 pass, 1 problems found (each named with its card number), 2 bad arguments, 130 Ctrl-C
"""
import cli  # first: it refuses a Python older than 3.11 before anything else runs

import hashlib
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent
NOTES_DIR = ROOT / "project" / "notes"

FIELDS = (("note_id", None), ("question", 200), ("answer", 500), ("quote", 300))
FIELD_NAMES = tuple(name for name, _ in FIELDS)
RECORD_KEYS = ("schema", "title", "cards", "notes", "review_md_sha256", "content_sha256")
REVIEW_NOTICE = ("机械检查已通过：每条引文都能在对应笔记原文中逐字找到。"
                 "答案是否正确还没有人审过（semantic_review: pending），请对照引文逐张阅读。")
SHOWN_CHARS = 40  # of a differing review.md line, enough to recognise it
# The most a note, a candidate or an artifact file may hold: the course's are a few KiB (a candidate at most 20
# cards of about 1000 characters); a larger file is none of them, and is not read beyond it.
NOTE_CAP = FILE_CAP = 1 << 20


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plain_note_id(value):
    return (len(value) == 3 and "A" <= value[0] <= "Z"
            and all("0" <= ch <= "9" for ch in value[1:]))


def note_text(notes_dir, note_id):
    """The note as LF text, or None when it is absent, unreadable, no plain file or over NOTE_CAP (read afresh
    every time, never beyond the cap: a note of the course is a few KiB)."""
    try:
        return cli.read_evidence(Path(notes_dir) / (note_id + ".md"), NOTE_CAP).decode("utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError):
        return None


def lone_surrogate(text):
    """The first code point UTF-8 cannot hold (U+D800..U+DFFF), or None."""
    try:
        text.encode("utf-8")  # fails exactly at the first lone surrogate
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None


def strings_of(value):
    """Every key and string inside a JSON value, in document order."""
    if type(value) is str:
        yield value
    elif type(value) is list:
        for item in value:
            yield from strings_of(item)
    elif type(value) is dict:
        for key, item in value.items():
            yield key
            yield from strings_of(item)


def places(candidate):
    """(where, JSON value) pairs covering the whole candidate, in document order."""
    if type(candidate) is not dict:
        return [("候选文件", candidate)]
    found = []
    for key, value in candidate.items():
        found.append(("候选文件", key))
        if key == "title":
            found.append(("title ", value))
        elif key == "cards" and type(value) is list:
            for number, card in enumerate(value, 1):
                found += card_places(f"第 {number} 张卡：", card)
        else:
            found.append(("候选文件", value))
    return found


def card_places(where, card):
    if type(card) is not dict:
        return [(where, card)]
    return [pair for key, value in card.items() for pair in ((where + "字段名", key), (f"{where}{key} ", value))]


def unencodable_problem(candidate):
    for where, value in places(candidate):
        for text in strings_of(value):
            bad = lone_surrogate(text)
            if bad:
                return (f"{where}含有无法用 UTF-8 保存的字符 \\u{ord(bad):04x}（JSON 里单独的代理项转义）："
                        "请删掉它或换成完整的字符后再试。")
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
    """Every card's first problem, in card order; unencodable text or a structural problem stops the check."""
    problem = unencodable_problem(candidate) or structure_problem(candidate)
    if problem:
        return [problem]
    found = []
    for number, card in enumerate(candidate["cards"], 1):
        problem = card_problem(card, notes_dir)
        if problem:
            found.append(f"第 {number} 张卡：{problem}")
    return found


def shown_key(key):
    """A JSON key as it can be printed and saved: a lone surrogate becomes its \\u escape."""
    return key.encode("utf-8", "backslashreplace").decode("utf-8")


def parse_candidate(raw):
    """(value, None) or (None, problem) for the bytes of a candidate file."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "候选文件不是 UTF-8 编码的文本，请用 UTF-8 另存后再试。"
    try:
        return cli.loads_strict(text), None
    except cli.DuplicateKeyError as exc:
        return None, f"候选文件里同一个对象中的字段 {shown_key(exc.key)} 出现了两次：请只保留其中一个后再试。"
    except json.JSONDecodeError as exc:
        return None, f"候选文件不是合法的 JSON：{cli.json_error_place(exc)}附近有语法错误。"
    except (ValueError, RecursionError):  # a number too long to read, or nesting too deep
        return None, "候选文件不是合法的 JSON：含有过长的数字或嵌套过深的结构。"


def check_candidate(path, notes_dir=NOTES_DIR):
    """Problems of a candidate file, in rule order ([] when it passes)."""
    candidate, problem = parse_candidate(read_capped(path))
    return [problem] if problem else candidate_problems(candidate, notes_dir)


def read_capped(path):
    """The bytes of the plain file PATH, at most FILE_CAP of them (cli.read_evidence: OSError otherwise)."""
    return cli.read_evidence(path, FILE_CAP)


def canonical(value):
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def note_heading(note):
    """The title a note gives itself: its first line after `# `, trimmed; "" when it has none."""
    first_line = note.partition("\n")[0]
    return first_line[2:].strip() if first_line[:2] == "# " else ""


def rendered_review(title, cards, notes_dir):
    """review.md as docs/harness/TASK.md defines it, for cards that obey the rules."""
    headings = {}
    for card in cards:
        if card["note_id"] not in headings:
            headings[card["note_id"]] = note_heading(note_text(notes_dir, card["note_id"]) or "")
    header = f"# {title.strip()}\n\n共 {len(cards)} 张卡片，引用 {len(headings)} 篇笔记。\n{REVIEW_NOTICE}\n\n"
    blocks = []
    for number, card in enumerate(cards, 1):
        pieces = card["quote"].replace("\r\n", "\n").split("\n")
        quote = "".join((f"> {piece}\n" if piece else ">\n") for piece in pieces)
        blocks.append(f"---\n\n## {number}. {card['question'].strip()}\n\n**答：** {card['answer'].strip()}\n\n"
                      f"{quote}\n来源：{card['note_id']}《{headings[card['note_id']]}》\n")
    return header + "\n".join(blocks)


def shown_line(lines, index):
    if index >= len(lines) or (index == len(lines) - 1 and lines[index] == ""):  # after the last LF
        return "（文件已结束）"
    line = lines[index].replace("\r", "\\r")
    return f"「{line[:SHOWN_CHARS]}…」" if len(line) > SHOWN_CHARS else f"「{line}」"


def review_difference(folder, actual, expected):
    """The first line where review.md differs from its rendering, said for the person."""
    got, want = actual.split("\n"), expected.split("\n")
    if actual + "\n" == expected:
        difference = f"第 {len(got)} 行（最后一行）少了结尾的换行"
    else:
        index = next(i for i in range(max(len(got), len(want)))
                     if i >= len(got) or i >= len(want) or got[i] != want[i])
        difference = f"第 {index + 1} 行是{shown_line(got, index)}，应为{shown_line(want, index)}"
    return (f"{folder.name}/review.md 与按 cards.json 和笔记重新生成的内容不同：{difference}；"
            "review.md 只能由导出器生成，请重新导出到新的目录（运行产物则用新的运行名重跑），不要手工修改它。")


def load_artifact(folder):
    """(review.md text, cards.json record, cards.json bytes), or the one problem that stops the check."""
    try:
        review_bytes = read_capped(folder / "review.md")
        cards_bytes = read_capped(folder / "cards.json")
    except cli.EvidenceError as exc:  # a link, FIFO or device is never opened; a file over the cap not read past it
        return f"产物里的 {exc}：导出器只写普通的小文件，这不是它写的，不能采信。"
    except OSError as exc:
        missing = [name for name in ("review.md", "cards.json") if not os.path.lexists(folder / name)]
        return f"产物不完整：缺少 {'、'.join(missing) or Path(exc.filename).name}（{cli.display_path(folder)}）。"
    try:
        review = review_bytes.decode("utf-8")
        record = cli.loads_strict(cards_bytes.decode("utf-8"))
    except cli.DuplicateKeyError as exc:
        return f"{folder.name}/cards.json 里同一个对象中的键 {shown_key(exc.key)} 出现了两次：产物被改动过，不能采信。"
    except (ValueError, RecursionError):  # not UTF-8, not JSON, absurd numbers or nesting
        return "cards.json 或 review.md 不是合法的 UTF-8/JSON：产物被改动过。"
    bad = next(filter(None, map(lone_surrogate, strings_of(record))), None)
    if bad:
        return f"{folder.name}/cards.json 含有无法用 UTF-8 保存的字符 \\u{ord(bad):04x}：产物被改动过，不能采信。"
    if type(record) is not dict or tuple(record) != RECORD_KEYS or record["schema"] != "review-cards/1":
        return "cards.json 的字段与导出格式 review-cards/1 不符：产物被改动过。"
    return review, record, cards_bytes


def exported_form(record):
    """RECORD written in the exporter's fixed order: each card's fields as FIELD_NAMES, notes by id.

    Compared byte for byte with the file, so reordered keys are an edit like any other layout change."""
    cards, notes = record["cards"], record["notes"]
    if type(cards) is list and all(type(card) is dict and set(card) == set(FIELD_NAMES) for card in cards):
        cards = [{name: card[name] for name in FIELD_NAMES} for card in cards]
    if type(notes) is dict:
        notes = dict(sorted(notes.items()))
    return {**record, "cards": cards, "notes": notes}


def check_artifact(folder, notes_dir=NOTES_DIR):
    """Problems of an exported artifact folder ([] when every byte is as exported)."""
    folder = Path(folder)
    loaded = load_artifact(folder)
    if type(loaded) is str:
        return [loaded]
    review, record, cards_bytes = loaded
    problems = []
    if canonical(exported_form(record)).encode("utf-8") != cards_bytes:
        problems.append("cards.json 的排版与导出时不同：文件被手工改动过。")
    content = {key: record[key] for key in ("title", "cards", "notes")}
    if digest(canonical(content)) != record["content_sha256"]:
        problems.append("cards.json 的内容与其 content_sha256 不符：卡片、标题或笔记哈希被改动过。")
    rule_problems = candidate_problems({"title": record["title"], "cards": record["cards"]}, notes_dir)
    problems += rule_problems
    problems += notes_problems(record, notes_dir)
    if not rule_problems:
        expected = rendered_review(record["title"], record["cards"], notes_dir)
        if review != expected:
            return problems + [review_difference(folder, review, expected)]
    if digest(review) != record["review_md_sha256"]:
        problems.append("review.md 与 cards.json 记录的 review_md_sha256 不符：两者之一被改动过，请重新导出到新的目录。")
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


NEXT_STEP = {
    "candidate": "如果这是你自己写的候选，按上面的消息改好后再核对（samples/ 里的固定样例保持原样）。",
    "artifact": "产物不能采信；不要手工修改 review.md 或 cards.json，请重新导出到新的目录（运行产物则用新的运行名重跑）。",
}


def main(argv=None):
    cli.use_safe_console()
    parser = cli.ChineseArgumentParser(
        usage=("[-h] TARGET",),
        description="独立核对候选 JSON 或导出的产物目录（不导入 export_review.py）。",
        epilog="退出码：0 通过；1 发现问题（逐条写明卡片编号）；2 参数错误；130 被 Ctrl-C 中断。",
    )
    parser.add_argument("target", metavar="TARGET", help="候选 JSON 文件，或含 review.md 与 cards.json 的产物目录（相对路径从当前文件夹算起）")
    text = parser.parse_args(argv).target
    target = Path(text)
    if not text.strip():
        parser.error("没有给出要核对的文件或目录：例如 samples/valid.json 或 runs/NAME/artifact。")
    if os.path.isdir(target):
        kind, check = "artifact", check_artifact
    elif os.path.isfile(target):
        kind, check = "candidate", check_candidate
    else:
        parser.error(f"找不到 {cli.display_path(target)}：请给出候选 JSON 文件或产物目录，例如 runs/NAME/artifact。")
    try:
        problems = check(target)
    except cli.EvidenceError as exc:  # over its cap, or swapped for a link, FIFO or device: never read past that
        problems = [f"{exc}：候选文件只是几 KiB 的 JSON，没有读它。"]
    except OSError as exc:  # no permission to read, or gone since it was found: said, never a traceback
        problems = [f"无法读取 {cli.display_path(exc.filename or target)}（{type(exc).__name__}）："
                    "请确认它存在并且有读取权限后再核对。"]
    for problem in problems:
        cli.say(f"问题：{problem}")
    cli.say("核对通过。" if not problems else f"共 {len(problems)} 个问题：{NEXT_STEP[kind]}")
    cli.print_json({"result": "fail" if problems else "pass", "kind": kind, "problems": problems})
    return cli.EXIT_STOP if problems else cli.EXIT_OK


if __name__ == "__main__":
    cli.run(main, "已中断：没有完成核对，请重新运行这条命令。")
