"""The offline demo model: a deterministic stand-in that speaks the same protocol as ChatClient.

It goes through the very same loop, guards and history as the real model: it answers
`complete(messages, tools)` with tool calls or a final answer. Its script, decided only by
the messages: (1) search the key phrases picked out of the question, (2) read the best hit,
(3) answer with the passage of that note that answers the question (`passages`), verbatim, and
its source; when no search finds anything, "nothing in the notes" is its (normal) answer; when
the note cannot be read, the hit's snippet. A short follow-up question ("它的缺点是什么？") is
read together with the questions before it (`followup`), and the answer says how it was read.
Every answer says it comes from the offline demo, so nobody mistakes it for a model's understanding.
"""
import json
import re

from .followup import read_conversation, subject_names
from .history import is_reminder, last_question_index
from .notes import Note, NotesError, load_notes, normalize
from .passages import best_sentence_weight
from .ranking import ASKING_FRAME, MIN_SHARE, STOP_WORDS, has_subject, index_of
from .showing import compose, notes_to_read

LABEL = "【离线演示】"
MAX_SEARCHES = 4
_SEPARATORS = re.compile(r"[，。？！、；：,.?!;:“”\"'‘’（）()《》【】\[\]<>]+")
_QUESTION_WORDS = re.compile(
    r"请问|请|是什么|什么是|为什么|为何|怎么样|怎么|怎样|如何|哪些|哪个|哪里|什么|有没有|是否|能否"
    r"|一下|介绍|解释|说说|讲讲|告诉我|吗|呢|吧|啊")
_SUB_SEPARATORS = re.compile(r"\s+|的|" + STOP_WORDS.pattern)  # the words the ranking ignores also end a phrase
_EDGE_FILLERS = " \t的了和与及在对把"
_LATIN_WORD = re.compile(r"[A-Za-z0-9]+(?:[._+-][A-Za-z0-9]+)*")  # BM25, JSON, Retry-After, 5xx
_LETTER = re.compile(r"[A-Za-z]")


def key_phrases(question) -> list:
    """Phrases worth searching for, most specific (longest) first: "RAG 的步骤顺序是什么？" ->
    ["RAG 的步骤顺序", "步骤顺序", "RAG"]."""
    segments = [segment.strip(_EDGE_FILLERS) for part in _SEPARATORS.split(question)
                for segment in _QUESTION_WORDS.split(part)]
    pieces = [piece.strip(_EDGE_FILLERS) for segment in segments
              for piece in _SUB_SEPARATORS.split(segment)]
    phrases, seen = [], set()
    for phrase in segments + pieces:
        key = normalize(phrase)
        if len(key) >= 2 and key not in seen and has_subject(key):
            seen.add(key)
            phrases.append(phrase[:200])
    return sorted(phrases, key=len, reverse=True)


def search_phrases(question) -> list:
    """What to search, at most MAX_SEARCHES: its key phrases, and the subject names the question says that they
    leave out (each a name the notes give, `vocabulary`, so the note about it is among the candidates)."""
    phrases = key_phrases(question)
    searched = {normalize(phrase) for phrase in phrases}
    missing = [name for name in subject_names(question, vocabulary()) if normalize(name) not in searched]
    return phrases[:MAX_SEARCHES - len(missing[:MAX_SEARCHES])] + missing[:MAX_SEARCHES]


class DemoModel:
    """Deterministic offline model; `requests` and `usage` mirror ChatClient's (no tokens used)."""

    name = "offline-demo"
    offline = True

    def __init__(self):
        self.requests = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}

    def complete(self, messages: list, tools: list, budget=None) -> dict:
        """The next step for MESSAGES; BUDGET is accepted like the client's, and nothing is charged to it."""
        self.requests += 1
        asked, results = _since_last_question(messages)
        reading = read_conversation(_questions(messages), vocabulary())
        question, said = reading.question, reading.restated
        available = {tool["function"]["name"] for tool in tools}
        read = [note for note in map(_read_note, results) if note is not None]
        if read:
            return _answer(said + _quote_answer(read, question, reading.carried))
        searches = [result for result in results if result["name"] == "search_notes"]
        if not searches:
            phrases = search_phrases(question)
            if not phrases or "search_notes" not in available:
                return _answer("没能从问题中找出可以搜索的关键词，请换个说法，例如直接写出想查的术语。")
            return _calls("search_notes", [{"query": phrase} for phrase in phrases], len(results))
        if all(result["error"] for result in searches):
            return _answer(f"搜索笔记时工具出错：{searches[0]['content']}")
        ranked = ranked_candidates(searches, question)
        tried = "、".join(f"“{result['arguments'].get('query', '')}”" for result in searches)
        if not ranked:
            return _answer(f"{said}笔记中没有找到相关内容（搜索过：{tried}）。"
                           "可以换个关键词再问，或直接搜索笔记里的词。")
        best = ranked[0][1]
        tried_reading = any(result["name"] == "read_note" for result in results)
        if tried_reading or "read_note" not in available:  # a read that failed is not tried again
            return _answer(f"{said}搜索命中了笔记 {best['note_id']}《{best['title']}》，"
                           f"但没能读取全文。命中的片段：{best['snippet']}")
        chosen = notes_to_read(ranked, lambda hit: subject_found(hit["note_id"], question))
        return _calls("read_note", [{"note_id": hit["note_id"]} for hit in chosen], len(results))


def vocabulary() -> frozenset:
    """The words a question names its subject with (normalized): every name the notes' alias lines give, and every
    word the notes themselves write in Latin letters (BM25, RRF, JSON, API: a name as the notes write it needs no
    alias line); not a name made only of asking words ("等多久", "例子": how a question asks, not what about; "摘要"
    is a name, though its 要 is a particle elsewhere).
    Empty when a note cannot be read: the search tool then says which file (the model is never where that is told)."""
    try:
        notes = load_notes()
    except NotesError:
        return frozenset()
    aliases = {name for note in notes.values() for group in note.aliases for name in group}
    latin = {word for note in notes.values() for word in _LATIN_WORD.findall(f"{note.title}\n{note.body}")
             if _LETTER.search(word)}
    names = map(normalize, aliases | latin)
    return frozenset(name for name in names if has_subject(name) or not ASKING_FRAME.search(name))


def subject_found(note_id, question) -> bool:
    """The question's subject is in the note: a name it says (one of `vocabulary`) is among the note's names
    or in its text. A question naming none of them has no subject to miss."""
    notes = load_notes()
    note = notes.get(note_id)
    if note is None:
        return False
    said = normalize(note.body) + " " + normalize(" ".join("、".join(group) for group in note.aliases))
    names = subject_names(question, vocabulary())
    return not names or any(normalize(name) in said for name in names)


def _questions(messages):
    """The user's questions in the conversation so far, in order (loop reminders are not questions)."""
    return [str(message.get("content") or "") for message in messages
            if message.get("role") == "user" and not is_reminder(message)]


def _read_note(result):
    """The note a read_note returned, or None: a failed read ("错误：…") or one without a note is never cited."""
    note = _json(result["content"], None) if result["name"] == "read_note" else None
    fields = ("note_id", "title", "text")
    readable = isinstance(note, dict) and all(isinstance(note.get(key), str) and note[key] for key in fields)
    return note if readable else None


def _since_last_question(messages):
    """The last user question and the tool results that followed it, with their calls."""
    start = last_question_index(messages)  # a loop reminder is not a new question
    question = str(messages[start].get("content") or "") if start >= 0 else ""
    calls, results = {}, []
    for message in messages[start + 1:]:
        for call in message.get("tool_calls") or []:
            calls[call.get("id")] = call["function"]
        if message.get("role") == "tool" and message.get("tool_call_id") in calls:
            function = calls[message["tool_call_id"]]
            content = str(message.get("content") or "")
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            results.append({"name": function.get("name"), "arguments": arguments,
                             "content": content, "error": content.startswith("错误")})
    return question, results


def ranked_candidates(searches, question) -> list:
    """[(score, hit)] of every note the searches found, best first by how well it answers the whole question.

    Each search may find a different note first (a short phrase matches many); the question as
    a whole decides between them (`answer_score`). A hit the question's terms do not
    reach at all still ranks (the exact phrase of a search matched it); the earlier search breaks a tie.
    Empty when nothing was found, when the question is mostly about what no note mentions, or when no note found is
    about any of the question's words (`ranking.Index.about`: sharing "才能" or "工作" in passing is no evidence), nor
    about two of them when the question names a thing no note holds (`Index.carries`: "C++ 的引用" is not A10's 引用).
    """
    candidates = {}
    for result in searches:
        for hit in [] if result["error"] else _json(result["content"], []):
            if isinstance(hit, dict) and hit.get("note_id") not in candidates:
                candidates[hit.get("note_id")] = hit
    if not candidates:
        return []
    index = index_of(load_notes().values())
    weights, topic = index.query(normalize(question)), index.topic(normalize(question))
    by_id = {note.id: note for note in index.notes}
    if mostly_unknown(index, topic):
        return []
    about = [hit for hit in candidates.values()  # a note that only uses the question's words in passing is no hit
             if hit.get("note_id") not in by_id or index.carries(by_id[hit["note_id"]], topic)]
    scored = [(answer_score(index, by_id[hit["note_id"]], question, weights) if hit.get("note_id") in by_id else 0.0,
               -order, hit)
              for order, hit in enumerate(about)]
    return [(score, hit) for score, _, hit in sorted(scored, key=lambda item: item[:2], reverse=True)]


def best_hit(searches, question):
    """The note that answers the whole question best (`ranked_candidates`), or None."""
    ranked = ranked_candidates(searches, question)
    return ranked[0][1] if ranked else None


def answer_score(index, note, question, weights) -> float:
    """How well NOTE answers QUESTION: its BM25 score plus the weight its best sentence holds (terms of
    the question found together in one sentence answer it better than scattered ones; a learner's name
    for a term in the note's alias line is held by a sentence saying the note's own word)."""
    return index.score(note, weights)[0] + best_sentence_weight(note, question, weights)


def mostly_unknown(index, weights):
    """The question is mostly about what no note mentions (terms no note holds carry over 1 - MIN_SHARE of its
    topic's weight, `ranking.Index.topic`): one shared word ("Python" in "Python 的 GIL 是什么？", "才能" in
    "怎么才能提高睡眠质量？") must not carry it to a note, nor do the words it asks with ("勾股定理是什么？能举个例子吗？"
    has 例子 in A04's alias line)."""
    total = sum(weights.values())
    unknown = sum(weight for term, weight in weights.items() if not index.known(term))
    return total > 0 and unknown > (1 - MIN_SHARE) * total


def _quote_answer(read, question, carried=()):
    """The answer quoting what the READ notes (read_note results, best first) say to QUESTION (`showing.compose`)."""
    index = index_of(load_notes().values())
    notes = [Note(note["note_id"], note["text"]) for note in read]
    return compose(notes, question, index.query(normalize(question)), carried)


def _json(content, default):
    try:
        return json.loads(content)
    except ValueError:
        return default


def _answer(text):
    return {"message": {"role": "assistant", "content": LABEL + text}, "finish_reason": "stop"}


def _calls(name, argument_list, round_number):
    calls = [{"id": f"call_demo_{round_number}_{index}", "type": "function",
              "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
             for index, arguments in enumerate(argument_list, 1)]
    return {"message": {"role": "assistant", "content": "", "tool_calls": calls},
            "finish_reason": "tool_calls"}
