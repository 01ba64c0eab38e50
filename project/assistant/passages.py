"""Which words of a note answer a question: the passage the offline demo quotes.

Once the note is chosen, its body is cut into sentences, each kept with its place in the text,
so a quote is always a stretch of the note's own words. Every sentence alone, and every two
adjacent sentences together, is a candidate passage, scored by:

- the weight of the question's terms it holds (`ranking` weights and synonyms); a term also
  counts when the passage holds another name of it from the note's alias line ("prompt" is held
  by a sentence saying 提示词 in a note whose alias group is 提示词、prompt);
- ASKING: what the question asks for, told by its asking words, and the sentences that give it
  (多大 wants a number, 哪些 or 怎么办 a list or its opening line, 为什么 a reason, 区别 a
  contrast, 要不要 a verdict ...); each kind the passage gives adds CUE_WEIGHT;
- a passage opening with a word that points back (它、这、因此 ...) lacks what it refers to, and
  one ending with a colon lacks what it announces: DANGLING is taken off, so the sentence before
  (or after) it comes along;
- a list's opening line ("常见做法有以下几种：") answers what the text before it raised (back to the
  paragraph break, or the whole paragraph before when it starts one): those terms count for a
  passage opening a list at CONTEXT_SHARE;
- a question term in the note's title names what the whole note is about, so every sentence is
  about it: at this level it weighs SUBJECT_SHARE of its weight;
- a second sentence must earn its place: PAIR_COST is taken off a two-sentence passage, and the
  first sentence leads: a pair whose second sentence alone scores higher is a candidate only when
  that sentence cannot stand alone (it points back, or the first opens a list).

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
MAX_PASSAGE = 240  # characters: two sentences longer than this are not quoted together
ASKING = (  # (asking words in the question, what a sentence that answers it holds, must it hold it)
    (r"多大|多少|多长|多久|几个|几次|几段|几轮|几秒|比例",
     r"(?<![A-Za-z])\d|[两三四五六七八九十百千]+ ?(?:个|次|段|轮|秒|步|种|部分|字|样)", True),
    (r"哪些|哪几|几种|几步|包括什么|包含什么", r"[：:]$|以下|下面|如下|包括|组成|分成|分为|[^，。；]+、[^，。；]+、", True),
    (r"有什么办法|怎么办", r"[：:]$|以下|下面|如下", True),
    (r"什么时候|何时", r"之前|之后|以前|以后|开始|结束|时，|每次|每一", True),
    (r"为什么|为何|原因", r"因为|所以|因此|否则|避免|以免|为了|才能|导致|由于|这样", True),
    (r"区别|不同|差别|好还是|哪个好|对比|优点|缺点|不足|坏处|代价", r"而|但|相比|不如|缺点|优点|可靠|适合|代价|不一定|难以", False),
    (r"要不要|能不能|可不可以|是不是|该不该|还要|吗|还算", r"不应|不能|不要|不必|应当|应该|必须|需要|可以|不是|不等于|也要|并不", False),
    (r"怎么办|怎么处理|怎么避免|怎么解决|如何解决", r"应当|应该|不应|做法|办法|不要|先|改进", True),
    (r"怎么写|如何写|怎么设计", r"应当|应该|不要|注意", False),
)
_POINTS_BACK = re.compile(r"^(?:它|这|那|其|因此|所以)")
_SENTENCE = re.compile(r"[^。！？\n]+[。！？]?")
_LIST_MARK = re.compile(r"^[\s\-*]*")


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
    (`named_units`), a term of the note's title at SUBJECT_SHARE of its weight."""
    subject = set(terms(normalize(note.title)))
    return [(weight * SUBJECT_SHARE if any(subject.issuperset(option) for option in options) else weight, options)
            for weight, options in named_units(question, weights, note)]


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


def passage_score(text, units, cues, context="") -> float:
    """What a passage of TEXT is worth for the question's UNITS and asking CUES (before the pair cost);
    CONTEXT: what a passage opening a list follows (`_lead_in`)."""
    score = _held(text, units) + CONTEXT_SHARE * _held(context, units)
    answered = [required for answer, required in cues if re.search(answer, text, re.MULTILINE)]
    if any(required for _, required in cues) and not any(answered):
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


def _opens_list(sentence):
    return sentence.endswith(("：", ":"))


def asking_cues(question) -> list:
    """[(answer pattern, required)] of the asking words QUESTION uses (ASKING)."""
    return [(answer, required) for asking, answer, required in ASKING if re.search(asking, question)]


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
    adjacent pair whose first sentence leads, that fits MAX_PASSAGE and stands verbatim in the note."""
    units, cues = question_units(question, weights, note), asking_cues(question)
    spans = sentence_spans(note.body)
    context = {span: _lead_in(note.body, span[0]) if _opens_list(note.body[span[0]:span[1]]) else ""
               for span in spans}
    single = {span: passage_score(note.body[span[0]:span[1]], units, cues, context[span]) for span in spans}
    scored = [(score, span) for span, score in single.items()]
    for first, second in zip(spans, spans[1:]):
        pair = (first[0], second[1])
        text = note.body[pair[0]:pair[1]]
        needs_first = _POINTS_BACK.match(note.body[second[0]:second[1]]) or _opens_list(note.body[first[0]:first[1]])
        leads = single[first] >= single[second] or needs_first
        if leads and len(text) <= MAX_PASSAGE and text in note.text:
            scored.append((passage_score(text, units, cues, context[first]) - PAIR_COST, pair))
    return scored
