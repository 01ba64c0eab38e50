"""What the offline demo shows: one passage only when the evidence clearly points to it, else the most relevant.

A verbatim quote with a source looks authoritative, so a confident quote from the wrong place is worse than
"not found". The demo relies on one note only when its score stands NOTE_MARGIN times above the next
candidate's and the question's subject is found in it (`notes_to_read`); it quotes one passage only when
that passage stands PASSAGE_MARGIN above the next one that does not overlap it, and, for a follow-up, names
the subject it carried (or another name of it). Otherwise it shows the two or three most relevant passages,
from up to MAX_NOTES notes, as "最相关的原文", best first by the same score (`passages.scored_passages`), about
MAX_SHOWN quoted characters in all, each verbatim (a piece cut at a clause boundary ends with "…"), each with
its source; the note cited first is the first source. A passage in a list item is shown as the whole item, or
from its start up to the passage when the item is too long (`_shown`). A list asked for (哪几块 / 哪些 / 怎么办) is
quoted as the list: its opening line and each item, each cut only at a clause boundary, the item holding the best
passage shown whole. Shared with: `demo_model`
(`notes_to_read`, `compose`), `passages` (the scores), `followup` (`Reading`).
"""
import re

from .passages import scored_passages
from .text import normalize

NOTE_MARGIN = 1.5  # chosen on the question sets of tests/test_assistant_questions.py, never on the held-out set
PASSAGE_MARGIN = 1.0
MAX_SHOWN = 240
MAX_PASSAGES = 3
MAX_NOTES = 2
ASKS_LIST = r"哪些|哪几|几种|几步|几部分|几层|包括什么|包含什么|怎么办|咋办|什么办法|处理办法|有哪"
_CLAUSE_END = re.compile(r"[，。；！？]")
_ITEM = re.compile(r"^\s*[-*]\s+(.*)$")
FOOTNOTE = "这是离线演示模型按固定规则摘录的原文；设置 DEEPSEEK_API_KEY 后可使用真实模型。"


def notes_to_read(scored, subject_in) -> list:
    """Of SCORED [(score, hit)] best first, the hits to read: the first alone when it stands NOTE_MARGIN times
    above the next and SUBJECT_IN(hit) holds; else the first MAX_NOTES."""
    if len(scored) == 1 or (scored[0][0] >= NOTE_MARGIN * scored[1][0] and subject_in(scored[0][1])):
        return [scored[0][1]]
    # a note holding the question's subject is cited before one that scored higher without it
    return sorted((hit for _, hit in scored[:MAX_NOTES]), key=lambda hit: not subject_in(hit))


def compose(notes, question, weights, carried=()) -> str:
    """The answer text for QUESTION from NOTES (read, best first): one passage, or the most relevant ones.

    Passages are ranked by their note first (the note chooser's order: the note cited first is the first source),
    then by their own score; a title's word is halved inside its own note (`passages.SUBJECT_SHARE`), so a
    passage of one note and one of another are not compared on one scale."""
    ranked = sorted(((score, order, note, span) for order, note in enumerate(notes)
                     for score, span in scored_passages(note, question, weights)),
                    key=lambda item: (item[1], -item[0], item[3][0], item[3][1]))
    if not ranked:
        return ""
    best = ranked[0]
    listed = _list_around(best[2], best[3]) if re.search(ASKS_LIST, question) else None
    if listed:
        source = _source(best[2])
        return f"根据笔记 {source}，原文列出的是：\n“{listed}”\n（来源：{source}。{FOOTNOTE}）"
    rest = [item for item in ranked if not (item[2] is best[2] and _overlap(item[3], best[3]))]
    clear = len(notes) == 1 and (not rest or best[0] - rest[0][0] >= PASSAGE_MARGIN)
    text = _shown(best[2].body, best[3], MAX_SHOWN)
    if clear and (not carried or _names_any(text, best[2], carried)):
        source = _source(best[2])
        return f"根据笔记 {source}，原文是：\n“{_cut(text, MAX_SHOWN)}”\n（来源：{source}。{FOOTNOTE}）"
    return _most_relevant(best, rest)


def _most_relevant(best, rest) -> str:
    """Each read note's best passage (in the notes' order), then the next best ones, within MAX_SHOWN."""
    ranked = [best, *rest]
    heads = [item for index, item in enumerate(ranked) if all(item[2] is not other[2] for other in ranked[:index])]
    chosen, notes, left = [], [], MAX_SHOWN
    for score, _, note, span in heads + [item for item in ranked if item not in heads]:
        if len(chosen) == MAX_PASSAGES or left < 20:
            break
        if any(note is other and _overlap(span, taken) for _, other, taken in chosen):
            continue
        if note not in notes and len(notes) == MAX_NOTES:
            continue
        text = _cut(_shown(note.body, span, left), left)
        chosen.append((text, note, span))
        notes += [note] if note not in notes else []
        left -= len(text)
    lines = [f"“{text}”（{_source(note)}）" for text, note, _ in chosen]
    sources = "、".join(_source(note) for note in notes)
    return ("没有把握只用一段原文回答这个问题，下面是笔记里最相关的原文（按相关程度排列）：\n" + "\n".join(lines)
            + f"\n（来源：{sources}。{FOOTNOTE}）")


def _list_around(note, span):
    """The list the passage at SPAN opens, belongs to or directly precedes: its opening line and each item cut at
    its first clause boundary, the item the passage lies in shown whole (`_shown`), within MAX_SHOWN; None when
    there is no such list."""
    lines = note.body.split("\n")
    offsets, position = [], 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    here = max(index for index, offset in enumerate(offsets) if offset <= span[0])
    end_line = max(index for index, offset in enumerate(offsets) if offset < span[1])
    first = here if _ITEM.match(lines[here]) else next(  # in a list, or a list right after the passage
        (index for index in range(end_line + 1, min(end_line + 3, len(lines))) if _ITEM.match(lines[index])), None)
    if first is None:
        return None
    while first > 0 and _ITEM.match(lines[first - 1]):  # back to the list's first item
        first -= 1
    opener = next((lines[index].strip() for index in range(first - 1, -1, -1) if lines[index].strip()), "")
    shown, left = [_cut(opener, MAX_SHOWN)], MAX_SHOWN - len(opener)
    for index, line in enumerate(lines[first:], first):
        item = _ITEM.match(line)
        if not item or left < 8:
            break
        if here <= index <= end_line:  # the item the passage lies in
            inside = (max(span[0], offsets[index] + item.start(1)), min(span[1], offsets[index] + len(line)))
            piece = _cut(_shown(note.body, inside, left), left)
        else:
            piece = _first_clause(item.group(1), left)
        shown.append(f"- {piece}")
        left -= len(piece)
    return "\n".join(shown) if len(shown) > 2 else None


def _shown(body, span, limit):
    """The passage at SPAN as shown: a list item it lies in is shown whole ("人工审核已通过：审核人确认内容正确，
    并记录是谁、在什么时间、审核了哪个版本。"), or from the item's start up to the passage's end when the whole
    item exceeds LIMIT; verbatim either way."""
    start, end = span
    first_line, first_item = _line_at(body, start)
    if first_item:
        start = min(start, first_line[0] + first_item.start(1))
    last_line, last_item = _line_at(body, max(end - 1, start))
    if last_item and last_line[1] - start <= limit:
        end = max(end, last_line[1])
    return body[start:end].rstrip()


def _line_at(body, position):
    """((start, end) of the line of BODY holding POSITION, its list-item match or None)."""
    start = body.rfind("\n", 0, position) + 1
    end = body.find("\n", position)
    end = len(body) if end < 0 else end
    return (start, end), _ITEM.match(body[start:end])


def _first_clause(text, limit):
    """TEXT up to its first clause boundary after a short label ("角色：…"), "…" when cut; within LIMIT."""
    label = text.find("：")
    start = label + 1 if 0 < label <= 8 else 0
    found = _CLAUSE_END.search(text, start)
    piece = text if not found or found.end() == len(text) else text[:found.start()] + "…"
    return _cut(piece, limit)


def _cut(text, limit):
    """TEXT within LIMIT characters, cut at the last clause boundary before it with "…"."""
    if len(text) <= limit:
        return text
    ends = [match.start() for match in _CLAUSE_END.finditer(text, 0, limit - 1)]
    return text[:ends[-1]] + "…" if ends else text[:limit - 1] + "…"


def _names_any(text, note, carried):
    """TEXT names one of CARRIED, or another name of its alias group in NOTE."""
    said = normalize(text)
    for name in map(normalize, carried):
        names = {name}.union(*(map(normalize, group) for group in note.aliases if name in map(normalize, group)))
        if any(other and other in said for other in names):
            return True
    return False


def _overlap(one, other):
    return one[0] < other[1] and other[0] < one[1]


def _source(note):
    return f"{note.id}《{note.title}》"
