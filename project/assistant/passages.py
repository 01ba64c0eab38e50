"""Which words of a note answer a question: the passage the offline demo quotes.

Once the note is chosen, its body is cut into sentences, each kept with its place in the text,
so a quote is always a stretch of the note's own words. Every sentence alone, and every two
adjacent sentences together, is a candidate passage, scored by:

- the weight of the question's terms it holds (`ranking` weights and synonyms); a term also
  counts when the passage holds another name of it from the note's alias line ("prompt" is held
  by a sentence saying 提示词 in a note whose alias group is 提示词、prompt);
- ASKING: what the question asks for, told by its asking words, and the sentences that give it
  (多大 wants a number, 哪些 or 怎么办 a list, its opening line or one of its items, 为什么 a reason,
  区别 a contrast, 要不要 a verdict, 会怎么样 a consequence, 不加会怎样 what happens otherwise, 什么样 examples
  ...); each kind the passage gives adds CUE_WEIGHT;
- a reason is also told by what a sentence does (`_explained`): the sentence after an instruction (in its
  paragraph or list item, an example between them skipped) that tells nothing to do itself explains it, so it
  answers 为什么 and 不这样会怎样, and holds the instruction's words; shown alone, without the instruction right
  before it, it lacks it (DANGLING);
- a term only the question's setting names (a clause without an asking word: "审核通过以后我又改了几个字，"
  before "还需要重新让人审一遍吗？") weighs SETTING_SHARE: the clause that asks is what wants answering;
- a passage opening with a word that points back (它、这、因此、例如、否则 ...) lacks what it refers to, one
  ending with a colon lacks what it announces, and a list item's later sentence lacks the item's label
  ("重置：…。话题已经改变…"): DANGLING is taken off, so the sentence before (or after) it comes along;
- the note's opening sentence says what its subject is: DEFINITION_COST is taken off a passage starting
  there unless the question asks what something is (DEFINITION_ASKED);
- a list's opening line ("常见做法有以下几种：") answers what the text before it raised (back to the
  paragraph break, or the whole paragraph before when it starts one): those terms count for a
  passage opening a list at CONTEXT_SHARE;
- a question term in the note's title names what the whole note is about, so every sentence is
  about it: at this level it weighs SUBJECT_SHARE of its weight;
- a second sentence must earn its place: PAIR_COST is taken off a two-sentence passage, and a pair
  whose second sentence alone scores higher is a candidate only when the first holds some of the
  question's terms or the second cannot stand alone (it points back, continues a list item, or the
  first opens a list); two list items are never one passage.

The best passage wins, the earliest (then the shorter) on a tie. Shared with: `demo_model`
(`answering_passage`; `best_sentence_weight`, so the note is chosen by the same rule of what a sentence
holds, alias groups included). The rules are written out in docs/assistant/DESIGN.md.
"""
import re

from .notes import Note, normalize
from .ranking import alternatives, note_terms, terms

CUE_WEIGHT = 1.0
DANGLING = 1.0
PAIR_COST = 0.3
SUBJECT_SHARE = 0.5
NO_CUE_SHARE = 0.5
CONTEXT_SHARE = 0.5
SETTING_SHARE = 0.6
ASKING_WORD = r"吗|什么|啥|咋|怎么|如何|为何|哪|多少|多大|几|是不是|要不要|能不能|可不可以|该不该"
DEFINITION_COST = 0.5
DEFINITION_ASKED = r"什么是|是什么|是啥|啥是|什么叫|指什么|是怎么|怎么工作|原理|定义|概念"
# "不加抖动会怎样", "没有这类用例会怎样", "如果不统一…": what happens otherwise is asked
WHAT_IF_NOT = (r"不(?:加|用|做|设|写|管|遵守|统一|检查|处理|保留|留|给|带|限制|这样)|如果没有|要是没有|如果不|要是不"
               r"|没有[^，。？?]{1,12}(?:会|的话)")
# what a sentence that tells to do something says; the sentence after it that tells nothing is its reason
INSTRUCTION = re.compile(r"应当|应该|必须|需要|不要|不能|不应|只能|要|优先|尽量")
_EXAMPLE = re.compile(r"^(?:例如|比如|譬如)")
MAX_PASSAGE = 240  # characters: two sentences longer than this are not quoted together
ASKING = (  # (asking words in the question, what a sentence that answers it holds, must it hold it[, a role])
    (r"多大|多少|多长|多久|(?<![了好])几(?:个|次|段|轮|秒|块)|比例",
     r"(?<![A-Za-z0-9])\d|[两三四五六七八九十百千]+ ?(?:个|次|段|轮|秒|步|种|部分|字|样)", True),
    (r"哪些|哪几|几种|几步|包括什么|包含什么", r"[：:]$|以下|下面|如下|包括|组成|分成|分为|[^，。；]+、[^，。；]+、", True),
    (r"有什么办法|怎么办|咋办", r"[：:]$|以下|下面|如下|\A[^，。：:\n]{1,8}[：:]", True),  # a list, or one of its items
    (r"什么时候|何时|什么情况下", r"之前|之后|以前|以后|开始|结束|时，|每次|每一", True),
    (r"为什么|为何|为啥|原因", r"因为|所以|因此|否则|避免|以免|为了|才能|导致|由于|这样", True, "explains"),
    (r"缺点|不足|坏处|短板|局限", r"缺点|不足|不理解|不一定|难以|代价|不能|无法|丢失", True),
    (r"区别|不同|差别|好还是|哪个好|对比|优点|缺点|不足|坏处|代价", r"而|但|相比|不如|缺点|优点|可靠|适合|代价|不一定|难以", False),
    (r"要不要|能不能|可不可以|是不是|该不该|还要|吗|还算", r"不应|不能|不要|不必|应当|应该|必须|需要|可以|不是|不等于|也要|并不|不说明|不代表|不够|没有用", False),
    (r"会怎么样|会怎样|会有什么|什么后果|什么问题", r"往往|只会|就会|导致|可能|无法|容易", False),
    (WHAT_IF_NOT, r"否则|不然|如果[^，。；]{0,12}(?:没有|不)|没有这[类些种]", False, "explains"),
    (r"什么样|哪类|哪种|什么类型|什么场景", r"这类|[^，。；]+、[^，。；]+、|适合|场景", False),
    (r"怎么办|咋办|怎么处理|怎么避免|怎么解决|如何解决|怎么防|有什么办法", r"应当|应该|不应|做法|办法|不要|先|改进|需要|必须", True),
    (r"怎么知道|怎么判断|如何判断|怎么确认|怎么检查|如何检查|怎么核对", r"方法|做法|比较|对比|重新运行|核对", False),
    (r"怎么写|如何写|怎么设计", r"应当|应该|不要|注意", False),
)
_POINTS_BACK = re.compile(r"^(?:它|这|那|其|因此|所以|例如|比如|否则|不然)")  # an example illustrates the one before
_SENTENCE = re.compile(r"[^。！？\n]+[。！？]?[”’」』]?")  # a closing quote after the full stop ends the sentence too
_LIST_MARK = re.compile(r"^[\s\-*]*")
_LIST_ITEM = re.compile(r"\s*[-*]\s")


def sentence_spans(body) -> list:
    """(start, end) of each sentence of BODY as written, list markers left out, at least 4 characters."""
    spans = []
    for match in _SENTENCE.finditer(body):
        start = match.start() + len(_LIST_MARK.match(match.group()).group())
        end = match.start() + len(match.group().rstrip())
        if end - start >= 4:
            spans.append((start, end))
    return spans


def question_units(question, weights, note) -> list:
    """[(weight, [alternative term tuples])]: what a passage must hold to hold each part of the question
    (`named_units`), a term of the note's title at SUBJECT_SHARE of its weight, a term only the question's
    setting names (`asked_terms`) at SETTING_SHARE."""
    subject = set(terms(normalize(note.title)))
    units = [(weight * SUBJECT_SHARE if any(subject.issuperset(option) for option in options) else weight, options)
             for weight, options in named_units(question, weights, note)]
    asked = asked_terms(question)
    if not any(any(set(option) & asked for option in options) for _, options in units):
        return units  # the asking clause names nothing of its own ("有什么办法？"): the rest is what it asks about
    return [(weight if any(set(option) & asked for option in options) else weight * SETTING_SHARE, options)
            for weight, options in units]


def asked_terms(question) -> set:
    """The terms of the question's clauses that carry an asking word: what it asks, the other clauses
    being what it is about ("审核通过以后我又改了几个字，还需要重新让人审一遍吗？")."""
    clauses = re.split(r"[，,；;。！!？?]", question)
    return {term for clause in clauses if re.search(ASKING_WORD, clause) for term in note_terms(normalize(clause))}


def best_sentence_weight(note, question, weights) -> float:
    """The most of the question's WEIGHTS one sentence of NOTE holds, an alias group the question names
    held by any of its names (`named_units`): what the note chooser adds to BM25."""
    units = named_units(question, weights, note)
    return max((_held(note.body[start:end], units) for start, end in sentence_spans(note.body)),
               default=_held(note.body, units))


def named_units(question, weights, note) -> list:
    """[(weight, [alternative term tuples])] of QUESTION for NOTE: each term with its synonyms.

    WEIGHTS are the question's {term: weight}. A group of the note's aliases named in the question
    becomes one unit carrying its named terms' weight, held by a passage holding any of its names.
    """
    asked = normalize(question)
    units, grouped = [], set()
    for group in note.aliases:
        named = [terms(normalize(name)) for name in group if _names(asked, normalize(name))]
        carried = {term for found in named for term in found if term in weights} - grouped
        if carried:
            grouped |= carried
            units.append((sum(weights[term] for term in carried),
                          [tuple(terms(normalize(name))) for name in group]))
    return units + [(weight, [(other,) for other in alternatives(term)])
                    for term, weight in weights.items() if term not in grouped and weight > 0]


def _names(asked, name):
    """NAME occurs in the question; a Latin name only as whole words ("eval" is not in "evaluation")."""
    if not name:
        return False
    if not name.isascii():
        return name in asked
    return re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", asked) is not None


def passage_score(text, units, cues, context="", explains=None) -> float:
    """What a passage of TEXT is worth for the question's UNITS and asking CUES (before the pair cost);
    CONTEXT: what a passage opening a list follows (`_lead_in`); EXPLAINS: the instruction the passage gives the
    reason for, or what happens without (`_explained`): what the passage is about, so its words count as held."""
    held = _held(text if explains is None else f"{explains}\n{text}", units)
    score = held + CONTEXT_SHARE * _held(context, units)
    roles = () if explains is None else ("explains",)
    answered = [required for answer, required, role in cues
                if re.search(answer, text, re.MULTILINE) or role in roles]
    if any(required for _, required, _ in cues) and not any(answered):
        score *= NO_CUE_SHARE  # a number or a list was asked for, and this passage gives none
    score += CUE_WEIGHT * len(answered)
    incomplete = _POINTS_BACK.match(text) or _opens_list(text)
    return score - (DANGLING if incomplete else 0.0)


def _held(text, units):
    held = set(note_terms(normalize(text)))  # a single character asked for is held inside any word
    return sum(weight for weight, options in units if any(held.issuperset(option) for option in options))


def _lead_in(body, start):
    """What a list's opening line at START follows: the text before it in its paragraph, or the whole
    paragraph before when it starts one."""
    before = body[:start].rstrip()
    return before[before.rfind("\n\n") + 1:].strip()


def _continues_item(body, start):
    """The sentence at START is a list item's second or later one: the item's opening names what it is about."""
    line = body[body.rfind("\n", 0, start) + 1:start]
    return _LIST_ITEM.match(line) is not None and line.strip() not in ("-", "*")


def _starts_item(body, start):
    """The sentence at START opens a list item: only the item's marker stands before it on its line."""
    return body[body.rfind("\n", 0, start) + 1:start].strip() in ("-", "*")


def _opens_list(sentence):
    return sentence.endswith(("：", ":"))


def asking_cues(question) -> list:
    """[(answer pattern, required, role or None)] of the asking words QUESTION uses (ASKING)."""
    return [(answer, required, role[0] if role else None) for asking, answer, required, *role in ASKING
            if re.search(asking, question)]


def answering_passage(note: Note, question, weights) -> str:
    """The sentence, or two adjacent sentences, of NOTE that best answer QUESTION (verbatim, from the note).

    WEIGHTS: the question's {term: weight} from `ranking.Index.query`. A note without sentences
    gives its body's start.
    """
    scored = scored_passages(note, question, weights)
    if not scored:
        return note.body.strip()[:MAX_PASSAGE]
    _, (start, end) = max(scored, key=lambda candidate: (candidate[0], -candidate[1][0], -candidate[1][1]))
    return note.body[start:end]


def scored_passages(note, question, weights) -> list:
    """[(score, (start, end))] of every candidate passage of NOTE's body: each sentence, and each
    adjacent pair whose first sentence earns its place, that fits MAX_PASSAGE and stands verbatim in the note.
    Two list items are never one passage (a list's opening line and its first item are)."""
    body, spans = note.body, sentence_spans(note.body)
    units, cues = question_units(question, weights, note), asking_cues(question)
    explained = _explained(body, spans) if any(role == "explains" for _, _, role in cues) else {}
    context = {span: _lead_in(body, span[0]) if _opens_list(body[span[0]:span[1]]) else "" for span in spans}
    cost = _start_costs(body, spans, question)
    for before, span in zip(spans, spans[1:]):  # a reason is shown with the instruction right before it
        instruction = body[before[0]:before[1]]
        if explained.get(span) == instruction and not _POINTS_BACK.match(instruction) \
                and span[1] - before[0] <= MAX_PASSAGE:
            cost[span] += DANGLING
    single = {span: passage_score(body[span[0]:span[1]], units, cues, context[span], explained.get(span)) - cost[span]
              for span in spans}
    scored = [(score, span) for span, score in single.items()]
    for first, second in zip(spans, spans[1:]):
        pair = (first[0], second[1])
        text = body[pair[0]:pair[1]]
        if _starts_item(body, second[0]) and not _opens_list(body[first[0]:first[1]]):
            continue  # the second sentence opens another list item
        needs_first = (_POINTS_BACK.match(body[second[0]:second[1]]) or _opens_list(body[first[0]:first[1]])
                       or _continues_item(body, second[0]))
        earns = single[first] >= single[second] or needs_first or _held(body[first[0]:first[1]], units) > 0
        if earns and len(text) <= MAX_PASSAGE and text in note.text:
            explains = explained.get(second, explained.get(first))
            scored.append((passage_score(text, units, cues, context[first], explains) - PAIR_COST - cost[first], pair))
    return scored


def _explained(body, spans) -> dict:
    """{span: the instruction it explains} for each sentence that follows an instruction in its paragraph or list
    item (examples between them skipped) and tells nothing to do itself: "引文应当逐字复制原文…。改写后的句子…无法
    机械地判断…" gives the reason for the instruction without a word like 因为."""
    explained, instruction, previous_end = {}, None, None
    for start, end in spans:
        text = body[start:end]
        if previous_end is not None and "\n" in body[previous_end:start]:
            instruction = None  # a new paragraph or list item
        previous_end = end
        if _EXAMPLE.match(text):
            continue
        if INSTRUCTION.search(text):
            instruction = text
        elif instruction is not None:
            explained[(start, end)], instruction = instruction, None
    return explained


def _start_costs(body, spans, question) -> dict:
    """What a passage starting at each span lacks: the note's opening sentence says what its subject is
    (DEFINITION_COST unless that is asked); a list item's later sentence lacks the item's label (DANGLING)."""
    asks_definition = re.search(DEFINITION_ASKED, question) is not None
    return {span: (DEFINITION_COST if index == 0 and not asks_definition else 0.0)
            + (DANGLING if _continues_item(body, span[0]) else 0.0) for index, span in enumerate(spans)}
