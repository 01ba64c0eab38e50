"""Reading a question that leans on the ones before it, the way a person would.

The offline demo model gets the whole conversation, as a real model does; this is how it reads a question
that leans on the ones before it (the real model needs no such rule). One rule: what the new question says
stays the question, and from the earlier turns it carries only what it leaves out, its subject.

- A question naming a subject of its own ("BM25 有什么缺点？", "401 要重试吗？") is read as written.
- "它" / "它们" said first stand for the subject of the latest question that had one: "它适合搜什么样的词？"
  after "BM25 是什么？" is "BM25适合搜什么样的词？", said to the person as "“它”指“BM25”".
- Any other question naming no subject ("为什么？", "那怎么办？", "最短要多长？", "是不是越复杂越好？") takes that
  subject as its setting, "RRF，是不是越复杂越好？": a clause without an asking word is only what the question is
  about, so the carried names weigh less than what is asked (`passages.SETTING_SHARE`). The person is told
  "也按“RRF”来找" when the question has words of its own, "这一问没有写出问的是什么" only when it has none.
- "那X呢？", "换成 X 呢？" (X no asking word): the latest whole question (not a subject carried before another)
  holding a word X takes the place of, asked again with X there: a number for a number ("换成 401 呢？" after
  "遇到 429…"), a subject name for a subject name or a Latin word, a Chinese word for one as long sharing its
  first or last character ("太小" for "太大"); with no such word X joins the question before. An ASPECTS word
  asks that aspect of the subject ("那缺点呢？" -> "向量检索的缺点是什么？"). A question asked again is whole:
  the follow-ups after it lean on it.

The subject of a question is the subject names it says (`demo_model.vocabulary`: the notes' alias lines and
the Latin words the notes write, such as BM25 or JSON, each as a whole word) and the numbers it writes; a
question naming none lends its own words ("工具执行出错了还要返回结果吗"), unless they are only asking words
("为什么？", `ranking.has_subject`). The restatement adds nothing the learner did not ask about: only the
subject it carries, quoting the question it came from. Shared with: `demo_model` (`read_conversation`,
`subject_names`, `Reading`).
"""
import re
from dataclasses import dataclass

from .ranking import has_subject
from .text import normalize

MAX_NAMED = 16  # characters: the longest stretch of a question said again as the names it holds
LOOK_BACK = 3  # the questions before a follow-up searched for the word "换成 X 呢？" replaces
ASPECTS = r"(?:它的|它)?(?:缺点|优点|好处|坏处|区别|原因|例子|代价|风险|用法|做法|限制|作用|适用场景)"
_WITH_NE = re.compile(r"^(?:那么|那|换成|换作|改成|如果是|要是|若是|假如是)*\s*(.+?)\s*(?:的话)?\s*呢\s*[？?]?\s*$")
_ASKING_WORDS = re.compile(r"什么|怎么|如何|为什么|为何|哪|多大|多少|吗|是不是|要不要|能不能")
_PRONOUN = re.compile(r"^\s*(?:那么|那|所以)?\s*(它们|它)")  # the question's subject, said first
_LEANING = re.compile(r"^\s*(?:那么|那)(?![个些种样])|它们|它")  # words that only point back: no words of its own
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])\d+(?:xx)?(?![A-Za-z0-9.])", re.IGNORECASE)  # 401, 5xx; not A99
_BETWEEN_CHINESE_WORDS = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")  # Chinese puts no space there


@dataclass(frozen=True)
class Reading:
    """How a question of a conversation is read: `question` (what is searched and scored), `carried` (the
    subject taken from an earlier question, empty when it has its own), `restated` (a note for the person,
    empty when the question is read as written), `subject` (what a later question leaning on this one carries),
    `asked` (the learner's own words), `whole` (`question` is one question, not a carried subject put before one)."""

    question: str
    carried: tuple = ()
    restated: str = ""
    subject: tuple = ()
    asked: str = ""
    whole: bool = True


def subject_names(question, vocabulary) -> list:
    """The names of VOCABULARY (subject names, normalized) that QUESTION says, in the order it says them, none
    inside a longer one found, each as written in the question; a Latin name only as a whole word."""
    asked = normalize(question)
    found = sorted({name for name in vocabulary if _says(asked, name)}, key=len, reverse=True)
    kept = [name for index, name in enumerate(found) if not any(name in longer for longer in found[:index])]
    return [written for _, written in sorted(_as_written(question, asked, name) for name in kept)]


def _as_written(question, asked, name):
    """(position, the words of QUESTION that NAME stands for); the normalized form where they differ in length."""
    found = re.search(_word(name), question, re.IGNORECASE)
    return (found.start(), found.group()) if found else (asked.find(name), name)


def _says(asked, name):
    return len(name) >= 2 and re.search(_word(name), asked) is not None


def _word(name):
    """A pattern finding NAME; a Latin name only as a whole word ("api" is not in "rapid")."""
    return rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])" if name.isascii() else re.escape(name)


def read_conversation(questions, vocabulary) -> Reading:
    """The last of QUESTIONS as meant after the ones before it (each read the same way)."""
    readings = []
    for question in questions:
        readings.append(_read_one(question.strip(), readings, vocabulary))
    return readings[-1] if readings else Reading("")


def _read_one(question, earlier, vocabulary) -> Reading:
    """QUESTION after the EARLIER readings of the conversation (oldest first)."""
    own = _subject_of(question, vocabulary, words=False)
    asked_again = _asked_again(question, earlier, vocabulary) if earlier else None
    if asked_again:
        return Reading(asked_again, (), f"（接着上一问，理解为：{asked_again}）", _subject_of(asked_again, vocabulary),
                       question)
    source = next((reading for reading in reversed(earlier) if reading.subject), None)
    carried = tuple(name for name in source.subject if name not in own) if source else ()
    pronoun = _PRONOUN.match(question)
    if pronoun and carried and source.subject == carried and _is_named(carried, vocabulary):
        spoken = _spoken(carried, source.question)
        whole = _joined(question[:pronoun.start(1)] + spoken + question[pronoun.end(1):])
        return Reading(whole, carried, f"（接着上一问，“{pronoun.group(1)}”指“{spoken}”，理解为：{whole}）",
                       _subject_of(whole, vocabulary), question)
    if not carried or own:
        return Reading(question, subject=own or _own_words(question), asked=question)
    words = has_subject(normalize(_LEANING.sub(" ", question)))
    names, quoted = "、".join(carried), _shortened(earlier[-1].asked)
    how = f"接着上一问“{quoted}”，也按“{names}”来找" if words else \
        f"这一问没有写出问的是什么，接着上一问“{quoted}”，按“{names}”来找"
    return Reading(f"{names}，{question}", carried, f"（{how}。）", carried, question, whole=False)


def _subject_of(question, vocabulary, words=True):
    """The subject names and numbers QUESTION says (429 once, though both); else, when WORDS, its own words."""
    named = tuple(dict.fromkeys(subject_names(question, vocabulary) + _NUMBER.findall(question)))
    return named or (_own_words(question) if words else ())


def _asked_again(question, earlier, vocabulary):
    """"那X呢？" / "换成 X 呢？" (X no asking words) after EARLIER readings: the latest question holding a word of
    X's kind asked again with X in its place, or the aspect X of the latest subject ("那缺点呢？"); else None."""
    with_ne = _WITH_NE.match(question)
    if not with_ne or _ASKING_WORDS.search(with_ne.group(1)):
        return None
    new = with_ne.group(1)
    named = next((reading for reading in reversed(earlier) if reading.subject), None)
    if re.fullmatch(ASPECTS, new):
        if named is None or not _is_named(named.subject, vocabulary):
            return None
        return f"{_spoken(named.subject, named.question)}的{new.removeprefix('它的').removeprefix('它')}是什么？"
    for reading in [reading for reading in reversed(earlier) if reading.whole][:LOOK_BACK]:
        replaced = _in_place_of(new, reading.question, vocabulary)  # not in a subject only carried along
        if replaced:
            return _joined(reading.question.replace(replaced, new, 1))  # "BM25 是" -> "向量检索是"
    last = earlier[-1].question
    return _joined(f"{new} {last}") if named is not None or has_subject(normalize(last)) else None


def _in_place_of(new, question, vocabulary):
    """The word of QUESTION that NEW stands in place of, or None: a number for a number ("429" for "401"); a subject
    name for a subject name or a Latin word ("关键词检索" for "向量检索"); a word as long as NEW sharing its first
    or last character ("太大" for "太小"). Anything else (“用摘要”, “按 token 算”) joins the question instead."""
    if _NUMBER.fullmatch(new):
        return next(iter(_NUMBER.findall(question)), None)
    if normalize(new) in vocabulary or new.isascii():
        return next(iter(subject_names(question, vocabulary)), None)
    if len(new) < 2 or not re.fullmatch(r"[\u4e00-\u9fff]+", new):
        return None
    for start in range(len(question) - len(new) + 1):
        word = question[start:start + len(new)]
        if word != new and re.fullmatch(r"[\u4e00-\u9fff]+", word) and (word[0] == new[0] or word[-1] == new[-1]):
            return word
    return None


def _joined(text):
    return _BETWEEN_CHINESE_WORDS.sub("", text)


def _is_named(subject, vocabulary):
    """SUBJECT is subject names or numbers, which a pronoun can stand for, not a whole question lent as its words."""
    return all(normalize(name) in vocabulary or _NUMBER.fullmatch(name) for name in subject)


def _spoken(names, question):
    """NAMES as QUESTION says them: its own stretch from the first to the last when that is a short phrase
    ("截断历史", "BM25 和向量检索"), else the names joined with 、."""
    start = min(question.find(name) for name in names)
    end = max(question.find(name) + len(name) for name in names)
    stretch = question[start:end]
    return stretch if len(stretch) <= MAX_NAMED and not re.search(r"[，,。？?！!；;：:]|" + _ASKING_WORDS.pattern, stretch) \
        else "、".join(names)


def _own_words(question) -> tuple:
    """What a question that names no subject name is about: the question itself, without its end mark
    ("工具执行出错了还要返回结果吗"), so a follow-up without a subject of its own ("为什么？") still leans on it;
    nothing when it holds only asking words ("为什么？", "有什么坑？")."""
    words = question.strip().rstrip("？?！!。 ")
    return (words,) if has_subject(normalize(words)) else ()


def _shortened(text, limit=30):
    return text if len(text) <= limit else text[:limit] + "…"
