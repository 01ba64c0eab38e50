"""The offline demo model: a deterministic stand-in that speaks the same protocol as ChatClient.

It goes through the very same loop, guards and history as the real model: it answers
`complete(messages, tools)` with tool calls or a final answer. Its script, decided only by
the messages since the last user question: (1) search the key phrases picked out of the
question, (2) read the best hit, (3) answer with a verbatim quote and its source; when no
search finds anything, "nothing in the notes" is its (normal) answer. Every answer says it
comes from the offline demo, so nobody mistakes it for a model's understanding.
"""
import json
import re

from .notes import normalize

LABEL = "【离线演示】"
MAX_SEARCHES = 4
MAX_QUOTE = 200
_SEPARATORS = re.compile(r"[，。？！、；：,.?!;:“”\"'‘’（）()《》【】\[\]<>]+")
_QUESTION_WORDS = re.compile(
    r"请问|请|是什么|什么是|为什么|为何|怎么样|怎么|怎样|如何|哪些|哪个|哪里|什么|有没有|是否|能否"
    r"|一下|介绍|解释|说说|讲讲|告诉我|吗|呢|吧|啊")
_SUB_SEPARATORS = re.compile(r"\s+|的")
_EDGE_FILLERS = " \t的了和与及在对把"
_SENTENCE = re.compile(r"[^。！？\n]+[。！？]?")


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

    def complete(self, messages: list, tools: list) -> dict:
        self.requests += 1
        question, results = _since_last_question(messages)
        available = {tool["function"]["name"] for tool in tools}
        read = [result for result in results if result["name"] == "read_note" and not result["error"]]
        if read:
            return _answer(_quote_answer(_json(read[-1]["content"], {}), results))
        searches = [result for result in results if result["name"] == "search_notes"]
        if not searches:
            phrases = key_phrases(question)[:MAX_SEARCHES]
            if not phrases or "search_notes" not in available:
                return _answer(f"{LABEL}没能从问题中找出可以搜索的关键词，请换个说法，"
                               "例如直接写出想查的术语。")
            return _calls("search_notes", [{"query": phrase} for phrase in phrases], len(results))
        if all(result["error"] for result in searches):
            return _answer(f"{LABEL}搜索笔记时工具出错：{searches[0]['content']}")
        best = _best_hit(searches)
        tried = "、".join(f"“{result['arguments'].get('query', '')}”" for result in searches)
        if best is None:
            return _answer(f"{LABEL}笔记中没有找到相关内容（搜索过：{tried}）。"
                           "可以换个关键词再问，或用 search 命令直接搜索。")
        failed_reads = [result for result in results if result["name"] == "read_note"]
        if failed_reads or "read_note" not in available:
            return _answer(f"{LABEL}搜索命中了笔记 {best['note_id']}《{best['title']}》，"
                           f"但没能读取全文。命中的片段：{best['snippet']}")
        return _calls("read_note", [{"note_id": best["note_id"]}], len(results))


def _since_last_question(messages):
    """The last user question and the tool results that followed it, with their calls."""
    start = max((i for i, message in enumerate(messages) if message.get("role") == "user"), default=-1)
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


def _best_hit(searches):
    """The first hit of the most specific phrase that found anything (searches go longest first)."""
    for result in searches:
        hits = [] if result["error"] else _json(result["content"], [])
        if hits:
            return dict(hits[0], phrase=result["arguments"].get("query", ""))
    return None


def _quote_answer(note, results):
    phrases = [normalize(result["arguments"].get("query", "")) for result in results
               if result["name"] == "search_notes" and not result["error"]
               and _json(result["content"], [])]
    quote = best_sentence(str(note.get("text", "")), phrases)
    source = f"{note.get('note_id')}《{note.get('title')}》"
    return (f"{LABEL}根据笔记 {source}，原文是：\n“{quote}”\n"
            f"（来源：{source}。这是离线演示模型按固定规则摘录的原文；"
            "设置 DEEPSEEK_API_KEY 后可使用真实模型。）")


def best_sentence(text, phrases) -> str:
    """A verbatim sentence of the note's body holding the first phrase found, else its first one."""
    body = text.partition("\n")[2]
    sentences = [match.group().strip().lstrip("-*").strip() for match in _SENTENCE.finditer(body)]
    sentences = [sentence for sentence in sentences if len(sentence) >= 4] or [text.strip()]
    for phrase in phrases:
        for sentence in sentences:
            if phrase and phrase in normalize(sentence):
                return sentence[:MAX_QUOTE]
    return sentences[0][:MAX_QUOTE]


def _json(content, default):
    try:
        return json.loads(content)
    except ValueError:
        return default


def _answer(text):
    return {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}


def _calls(name, argument_list, round_number):
    calls = [{"id": f"call_demo_{round_number}_{index}", "type": "function",
              "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
             for index, arguments in enumerate(argument_list, 1)]
    return {"message": {"role": "assistant", "content": "", "tool_calls": calls},
            "finish_reason": "tool_calls"}
