"""Reading a short follow-up question the way a person would: together with the question before it.

The offline demo model gets the whole conversation, as a real model does; this is how it reads
a question that leans on the previous one (the real model needs no such rule):

- "那向量检索呢？", "那 400 呢？" (a bare subject, with 呢): the previous question asked again
  about the new subject ("BM25 有什么缺点？" -> "向量检索 有什么缺点？");
- "那缺点呢？" (an ASPECTS word, with 呢): the aspect asked about the previous subject;
- "它的缺点是什么？", "这个要怎么调？" (short, with a word pointing back, POINTING): that word
  stands for the previous question's subject.

The subject of a question is what comes before its first asking or linking word (SUBJECT_END),
after an opening such as 什么是 or 请问.
Any other question is read as it is. A question read this way is what the next one leans on, so
follow-ups can follow each other. Shared with: `demo_model` (`read_in_context`).
"""
import re

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
