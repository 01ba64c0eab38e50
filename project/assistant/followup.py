"""Reading a question that leans on the ones before it, the way a person would.

The offline demo model gets the whole conversation, as a real model does; this is how it reads
a question that leans on the previous one (the real model needs no such rule). One general rule, and one
shape of question that names a new subject:

- a question with no subject of its own (no subject name: "它有什么缺点？", "为什么？", "那怎么办？",
  "有什么坑？", "最短要多长？"): the subject names of the questions before it (as read, or what they carried)
  join it as its setting, "向量检索，它有什么缺点？". A clause without an asking word is only what the question
  is about, so the carried names weigh less than what is asked (`passages.SETTING_SHARE`). A question that names
  its own subject ("它和 BM25 有什么区别？") carries nothing. A previous question that names no subject name
  lends its own words ("工具执行出错了还要返回结果吗"), unless they are only asking words ("为什么？"): those
  are nothing to carry (`ranking.has_subject`);
- "那向量检索呢？", "那缺点呢？" (something with 呢 and no asking word, after a question that names a subject):
  the previous question asked again about the new subject ("关键词检索适合什么场景？" -> "向量检索适合什么场景？"),
  or, for an ASPECTS word, that aspect of the previous subject ("向量检索的缺点是什么？"). A question asked again
  is whole: the follow-ups after it carry its subject, not the one it replaced.

Subject names are the words a question names its subject with (`demo_model.vocabulary`: the notes' alias lines
and the Latin words the notes write, such as BM25 or JSON). A question as read is what the next one leans on, so
follow-ups can follow each other. `Reading.restated` says in plain Chinese how a follow-up was read, quoting the
question it leans on. Shared with: `demo_model` (`read_conversation`, `subject_names`, `Reading`).
"""
import re
from dataclasses import dataclass

from .ranking import has_subject
from .text import normalize

CARRIED_QUESTIONS = 2  # the subjects of this many questions before a follow-up join it
ASPECTS = r"(?:它的|它)?(?:缺点|优点|好处|坏处|区别|原因|例子|代价|风险|用法|做法|限制|作用|适用场景)"
_WITH_NE = re.compile(r"^(?:那么|那)?\s*(.+?)\s*呢\s*[？?]?\s*$")
_ASKING_WORDS = re.compile(r"什么|怎么|如何|为什么|为何|哪|多大|多少|吗|是不是|要不要|能不能")
_BETWEEN_CHINESE_WORDS = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")  # Chinese puts no space there


@dataclass(frozen=True)
class Reading:
    """How the last question of a conversation is read: `question` (what is searched and scored), `carried`
    (subject names taken from the question before, empty when it has its own), `restated` (a note for the
    person, empty when the question is read as written), `anew` (the previous question asked again: a whole
    question of its own, so the subjects before it are not carried past it)."""

    question: str
    carried: tuple = ()
    restated: str = ""
    anew: bool = False


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
    reading, subjects, previous = Reading(""), [], ""
    for question in questions:
        question = question.strip()
        reading = _read_one(question, (previous, reading.question), subjects[-CARRIED_QUESTIONS:], vocabulary)
        names = tuple(subject_names(reading.question, vocabulary)) or reading.carried
        subjects = [names] if reading.anew else subjects + [names]  # "那向量检索呢？" leaves the old subject
        previous = question
    return reading


def _read_one(question, before, subjects, vocabulary) -> Reading:
    """QUESTION after BEFORE = (the previous question as asked, as read), SUBJECTS the names of the last few."""
    previous, previous_read = before
    if not previous:
        return Reading(question)
    asked_again = _asked_again(question, subject_names(previous_read, vocabulary), previous_read)
    if asked_again:
        return Reading(asked_again, (), f"（接着上一问，理解为：{asked_again}）", anew=True)
    carried = tuple(dict.fromkeys(name for names in reversed(subjects) for name in names)) or _own_words(previous_read)
    if subject_names(question, vocabulary) or not carried:
        return Reading(question)
    names = "、".join(carried)
    return Reading(f"{names}，{question}", carried,
                   f"（这一问没有写出问的是什么，接着上一问“{_shortened(previous)}”，按“{names}”来找。）")


def _asked_again(question, named, previous):
    """"那X呢？" (X no asking words) after PREVIOUS, which NAMED its subject first: PREVIOUS about X instead
    ("那向量检索呢？"), or the aspect X of that subject ("那缺点呢？", "那它的缺点呢？"); else None."""
    with_ne = _WITH_NE.match(question)
    if not (with_ne and named) or _ASKING_WORDS.search(with_ne.group(1)):
        return None
    new = with_ne.group(1)
    if re.fullmatch(ASPECTS, new):
        return f"{named[0]}的{new.removeprefix('它的').removeprefix('它')}是什么？"
    return _BETWEEN_CHINESE_WORDS.sub("", previous.replace(named[0], new, 1))  # "BM25 是" -> "向量检索是"


def _own_words(question) -> tuple:
    """What a question that names no subject name is about: the question itself, without its end mark
    ("工具执行出错了还要返回结果吗"), so a follow-up without a subject of its own ("为什么？") still leans on it;
    nothing when it holds only asking words ("为什么？", "有什么坑？")."""
    words = question.strip().rstrip("？?！!。 ")
    return (words,) if has_subject(normalize(words)) else ()


def _shortened(text, limit=30):
    return text if len(text) <= limit else text[:limit] + "…"
