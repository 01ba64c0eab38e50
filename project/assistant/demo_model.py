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

from .followup import read_in_context
from .history import is_reminder, last_question_index
from .notes import Note, load_notes, normalize
from .passages import answering_passage, best_sentence_weight
from .ranking import MIN_SHARE, STOP_WORDS, index_of

LABEL = "【离线演示】"
MAX_SEARCHES = 4
MAX_QUOTE = 240
_SEPARATORS = re.compile(r"[，。？！、；：,.?!;:“”\"'‘’（）()《》【】\[\]<>]+")
_QUESTION_WORDS = re.compile(
    r"请问|请|是什么|什么是|为什么|为何|怎么样|怎么|怎样|如何|哪些|哪个|哪里|什么|有没有|是否|能否"
    r"|一下|介绍|解释|说说|讲讲|告诉我|吗|呢|吧|啊")
_SUB_SEPARATORS = re.compile(r"\s+|的|" + STOP_WORDS.pattern)  # the words the ranking ignores also end a phrase
_EDGE_FILLERS = " \t的了和与及在对把"


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
        if len(key) >= 2 and key not in seen:
            seen.add(key)
            phrases.append(phrase[:200])
    return sorted(phrases, key=len, reverse=True)


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
        question = read_in_context(_questions(messages))
        reading = f"（接着上一问，理解为：{question}）" if question != asked.strip() else ""
        available = {tool["function"]["name"] for tool in tools}
        read = [note for note in map(_read_note, results) if note is not None]
        if read:
            return _answer(reading + _quote_answer(read[-1], question))
        searches = [result for result in results if result["name"] == "search_notes"]
        if not searches:
            phrases = key_phrases(question)[:MAX_SEARCHES]
            if not phrases or "search_notes" not in available:
                return _answer("没能从问题中找出可以搜索的关键词，请换个说法，例如直接写出想查的术语。")
            return _calls("search_notes", [{"query": phrase} for phrase in phrases], len(results))
        if all(result["error"] for result in searches):
            return _answer(f"搜索笔记时工具出错：{searches[0]['content']}")
        best = best_hit(searches, question)
        tried = "、".join(f"“{result['arguments'].get('query', '')}”" for result in searches)
        if best is None:
            return _answer(f"{reading}笔记中没有找到相关内容（搜索过：{tried}）。"
                           "可以换个关键词再问，或直接搜索笔记里的词。")
        tried_reading = any(result["name"] == "read_note" for result in results)
        if tried_reading or "read_note" not in available:  # a read that failed is not tried again
            return _answer(f"{reading}搜索命中了笔记 {best['note_id']}《{best['title']}》，"
                           f"但没能读取全文。命中的片段：{best['snippet']}")
        return _calls("read_note", [{"note_id": best["note_id"]}], len(results))


def _questions(messages):
    """The user's questions in the conversation so far, in order (loop reminders are not questions)."""
    return [str(message.get("content") or "") for message in messages
            if message.get("role") == "user" and not is_reminder(message)]


def _read_note(result):
    """The note a read_note returned, or None: a failed read ("错误：…") or one without a note is never cited."""
    note = _json(result["content"], None) if result["name"] == "read_note" else None
    fields = ("note_id", "title", "text")
    return note if isinstance(note, dict) and all(isinstance(note.get(key), str) and note[key] for key in fields) else None


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


def best_hit(searches, question):
    """Of every note the searches found, the one that answers the whole question best.

    Each search may find a different note first (a short phrase matches many); the question as
    a whole decides between them (`answer_score`). A hit the question's terms do not
    reach at all still wins over nothing (the exact phrase of a search matched it); the earlier
    search breaks a tie.
    """
    candidates = {}
    for result in searches:
        for hit in [] if result["error"] else _json(result["content"], []):
            if isinstance(hit, dict) and hit.get("note_id") not in candidates:
                candidates[hit.get("note_id")] = hit
    if not candidates:
        return None
    index = index_of(load_notes().values())
    weights = index.query(normalize(question))
    by_id = {note.id: note for note in index.notes}
    if mostly_unknown(index, weights):
        return None
    scored = [(answer_score(index, by_id[hit["note_id"]], question, weights) if hit.get("note_id") in by_id else 0.0,
               -order, hit)
              for order, hit in enumerate(candidates.values())]
    return max(scored, key=lambda item: item[:2])[2]


def answer_score(index, note, question, weights) -> float:
    """How well NOTE answers QUESTION: its BM25 score plus the weight its best sentence holds (terms of
    the question found together in one sentence answer it better than scattered ones; a learner's name
    for a term in the note's alias line is held by a sentence saying the note's own word)."""
    return index.score(note, weights)[0] + best_sentence_weight(note, question, weights)


def mostly_unknown(index, weights):
    """The question is mostly about what no note mentions (terms no note holds carry over 1 - MIN_SHARE of its
    weight): one shared word ("Python" in "Python 的 GIL 是什么？") must not carry it to a note."""
    total = sum(weights.values())
    unknown = sum(weight for term, weight in weights.items() if not index.known(term))
    return total > 0 and unknown > (1 - MIN_SHARE) * total


def _quote_answer(note, question):
    """The answer quoting the passage of NOTE (a read_note result) that answers QUESTION, with its source."""
    index = index_of(load_notes().values())
    passage = answering_passage(Note(note["note_id"], note["text"]), question, index.query(normalize(question)))
    source = f"{note['note_id']}《{note['title']}》"
    return (f"根据笔记 {source}，原文是：\n“{passage[:MAX_QUOTE]}”\n"
            f"（来源：{source}。这是离线演示模型按固定规则摘录的原文；"
            "设置 DEEPSEEK_API_KEY 后可使用真实模型。）")


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
