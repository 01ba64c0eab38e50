"""Reading a question that leans on the ones before it, the way a person would.

The offline demo model gets the whole conversation, as a real model does; this is how it reads
a question that leans on the previous one (the real model needs no such rule). One general rule, and one
shape of question that names a new subject:

- a question with no subject of its own (no name of anything a note is about: "它有什么缺点？", "为什么？",
  "那怎么办？", "有什么坑？", "最短要多长？"): the subject names of the question before it (or what that one
  carried) join it as its setting, "向量检索，它有什么缺点？". A clause without an asking word is only what the
  question is about, so the carried names weigh less than what is asked (`passages.SETTING_SHARE`);
- "那向量检索呢？", "那 400 呢？" (a subject with 呢 and no asking word): the previous question asked again
  about the new subject ("BM25 有什么缺点？" -> "向量检索有什么缺点？"); "那缺点呢？" (an ASPECTS word):
  the aspect asked about the previous subject.

Subject names are the names the notes' alias lines give their key terms (`subject_names`). The subject of a
question as written is what comes before its first asking or linking word (SUBJECT_END), after an opening
such as 什么是 or 请问. A question read this way is what the next one leans on, so follow-ups can follow each
other. `Reading.restated` says in plain Chinese how a follow-up was read, quoting the question it leans on.
Shared with: `demo_model` (`read_conversation`, `Reading`).
"""
import re
from dataclasses import dataclass

from .text import normalize

MAX_FOLLOW_UP = 16  # characters: a longer question carries its own subject
ASPECTS = r"(?:它的|它)?(?:缺点|优点|好处|坏处|区别|原因|例子|代价|风险|用法|做法|限制|作用|适用场景)"
POINTING = re.compile(r"它们|它|这个|这种|这样做|那个|那种")
SUBJECT_END = re.compile(r"的|是|有|要|会|能|可以|应该|应当|一般|怎么|如何|为什么|为何|什么|哪|多|吗|呢|和|与|[，,？?。！!：:]")
_OPENING = re.compile(r"(?:请问|什么是|啥是|说说|讲讲|介绍一下)?\s*")
_WITH_NE = re.compile(r"^(?:那么|那)?\s*(.+?)\s*呢\s*[？?]?\s*$")
_ASKING_WORDS = re.compile(r"什么|怎么|如何|为什么|为何|哪|多大|多少|吗|是不是|要不要|能不能")


def split_subject(question) -> tuple:
    """(what comes before the subject, the subject, what comes after it): "BM25 有什么缺点？" ->
    ("", "BM25", "有什么缺点？"), "什么是回归测试？" -> ("什么是", "回归测试", "？"); no subject -> ("", "", "")."""
    opening = len(_OPENING.match(question).group())
    end = SUBJECT_END.search(question, opening)
    cut = end.start() if end else len(question)
    subject = question[opening:cut].strip()
    return (question[:opening], subject, question[cut:]) if subject else ("", "", "")


def read_with(question, previous) -> str:
    """QUESTION as meant after PREVIOUS (already read the same way); QUESTION itself when it stands alone."""
    question = question.strip()
    if not previous or len(question) > MAX_FOLLOW_UP:
        return question
    before, subject, after = split_subject(previous)
    with_ne = _WITH_NE.match(question)
    if with_ne and subject:
        named = with_ne.group(1)
        if re.fullmatch(ASPECTS, named):
            return f"{subject}的{named.removeprefix('它的').removeprefix('它')}是什么？"
        if not _ASKING_WORDS.search(named):
            return before + named + after
    pointing = POINTING.search(question)
    if pointing and subject:
        return question[:pointing.start()] + subject + question[pointing.end():]
    return question


def read_in_context(questions) -> str:
    """The last of QUESTIONS (a conversation's questions, in order) as meant, each read after the one before."""
    read = ""
    for question in questions:
        read = read_with(question, read)
    return read


@dataclass(frozen=True)
class Reading:
    """How the last question of a conversation is read: `question` (what is searched and scored), `carried`
    (subject names taken from the question before, empty when it has its own), `restated` (a note for the
    person, empty when the question is read as written)."""

    question: str
    carried: tuple = ()
    restated: str = ""


def subject_names(question, vocabulary) -> list:
    """The names of VOCABULARY (alias names, normalized) that QUESTION says, in the order it says them, none
    inside a longer one found, each as written in the question; a Latin name only as a whole word."""
    asked = normalize(question)
    found = sorted({name for name in vocabulary if _says(asked, name)}, key=len, reverse=True)
    kept = [name for index, name in enumerate(found) if not any(name in longer for longer in found[:index])]
    return [written for _, written in sorted(_as_written(question, asked, name) for name in kept)]


def _as_written(question, asked, name):
    """(position, the words of QUESTION that NAME stands for); the normalized form where they differ in length."""
    found = re.search(re.escape(name), question, re.IGNORECASE)
    return (found.start(), found.group()) if found else (asked.find(name), name)


def _says(asked, name):
    if len(name) < 2:
        return False
    if not name.isascii():
        return name in asked
    return re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", asked) is not None


CARRIED_QUESTIONS = 2  # the subjects of this many questions before a follow-up join it


def read_conversation(questions, vocabulary) -> Reading:
    """The last of QUESTIONS as meant after the ones before it (each read the same way)."""
    reading, subjects, previous = Reading(""), [], ""
    for question in questions:
        question = question.strip()
        reading = _read_one(question, (previous, reading.question), subjects[-CARRIED_QUESTIONS:], vocabulary)
        subjects.append(tuple(subject_names(reading.question, vocabulary)) or reading.carried)
        previous = question
    return reading


def _read_one(question, before, subjects, vocabulary) -> Reading:
    """QUESTION after BEFORE = (the previous question as asked, as read), SUBJECTS the names of the last few."""
    previous, previous_read = before
    if not previous:
        return Reading(question)
    own = subject_names(question, vocabulary)
    renamed = _same_question_new_subject(question, previous_read, vocabulary)
    if renamed:
        return Reading(renamed, (), f"（接着上一问，理解为：{renamed}）")
    carried = tuple(dict.fromkeys(name for names in reversed(subjects) for name in names)) or _own_words(previous_read)
    if own or not carried:
        return Reading(question)
    names = "、".join(carried)
    return Reading(f"{names}，{question}", carried,
                   f"（这一问没有写出问的是什么，接着上一问“{_shortened(previous)}”，按“{names}”来找。）")


def _same_question_new_subject(question, previous, vocabulary):
    """"那向量检索呢？" after "关键词检索适合什么场景？" -> "向量检索适合什么场景？" (the previous question's first
    subject name replaced); an aspect ("那缺点呢？") or a previous question without names: `read_with`."""
    with_ne = _WITH_NE.match(question)
    named = subject_names(previous, vocabulary)
    if with_ne and named and re.fullmatch(ASPECTS, with_ne.group(1)):  # "那缺点呢？": the aspect of that subject
        return f"{named[0]}的{with_ne.group(1).removeprefix('它的').removeprefix('它')}是什么？"
    if with_ne and named and not _ASKING_WORDS.search(with_ne.group(1)):
        return previous.replace(named[0], with_ne.group(1), 1)
    read = read_with(question, previous)
    return read if read != question and not POINTING.search(question) else None


def _own_words(question) -> tuple:
    """What a question that names nothing the alias lines know is about: the question itself, without its end mark
    ("工具执行出错了还要返回结果吗"), so a follow-up without a subject of its own ("为什么？") still leans on it."""
    words = question.strip().rstrip("？?！!。 ")
    return (words,) if len(words) >= 2 else ()


def _shortened(text, limit=30):
    return text if len(text) <= limit else text[:limit] + "…"
