"""The three tools the model may call (list_notes, search_notes, read_note) and their checks.

`run_tool` is the only way in: it validates the raw JSON arguments against the tool's own
schema, runs the tool and returns `(content, is_error)`. Every failure becomes a result
that tells the model what to do instead (the reader is the model, so the wording of each
failure class is fixed); only KeyboardInterrupt passes through.
"""
import json

from . import notes as notes_module

MAX_HITS = 5
MAX_NOTE_CHARS = 4000
MAX_LISTED = 50
TOOL_SCHEMAS = [
    {"type": "function", "function": {
        "name": "list_notes",
        "description": "列出全部笔记的编号（note_id）和标题。不知道有哪些笔记时先调用它。",
        "parameters": {"type": "object", "properties": {}, "required": [],
                       "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "search_notes",
        "description": ("在笔记标题和正文中搜索（忽略大小写和全角半角，连续空白视为一个空格）：先列出包含这个短语的笔记，"
                        "再列出按词语相关度排序的笔记（中文按相邻两字切词）。"
                        f"返回最多 {MAX_HITS} 条命中：note_id、title、snippet；没有相关笔记时返回空列表 []。"
                        "用问题中的关键短语搜索，例如“RAG 的步骤”，不要整句搜索。"),
        "parameters": {"type": "object",
                       "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 200,
                                                "description": "要查找的关键短语"}},
                       "required": ["query"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "read_note",
        "description": (f"读取一篇笔记的全文（最多 {MAX_NOTE_CHARS} 字）。"
                        "回答时请逐字引用原文，并注明笔记编号和标题。"),
        "parameters": {"type": "object",
                       "properties": {"note_id": {"type": "string", "minLength": 1, "maxLength": 64,
                                                  "description": "笔记编号，例如 A01"}},
                       "required": ["note_id"], "additionalProperties": False}}},
]
_SCHEMAS = {schema["function"]["name"]: schema["function"]["parameters"] for schema in TOOL_SCHEMAS}
_JSON_TYPES = {"string": (str, "字符串"), "boolean": (bool, "true 或 false")}  # what the schemas use


class ToolError(Exception):
    """A failure the model can fix; the message (Chinese) says what to do instead."""


def run_tool(name: str, arguments: str, *, notes_dir=None) -> tuple:
    """Run one tool call; returns (content for the tool message, is_error)."""
    try:
        if name not in _SCHEMAS:
            raise ToolError(f"没有名为 {name!r} 的工具。可用的工具只有：{'、'.join(_SCHEMAS)}。")
        args = parse_arguments(name, arguments)
        notes = notes_module.load_notes(notes_dir or notes_module.NOTES_DIR)
        return json.dumps(TOOLS[name](notes, **args), ensure_ascii=False), False
    except KeyboardInterrupt:
        raise
    except (ToolError, notes_module.NotesError) as exc:  # both say what to do in Chinese
        return f"错误：{exc}", True
    except Exception as exc:  # the tool itself broke: report it as a result, keep the loop valid
        return crash_message(name, exc), True


def crash_message(name, exc) -> str:
    """What the model is told when a tool raised: the kind of failure, no paths or stack."""
    return (f"错误：工具 {name} 执行时出错（{type(exc).__name__}）。"
            "可以换一个工具或参数再试；如果一直出错，请直接告诉用户。")


def parse_arguments(name, arguments) -> dict:
    """The arguments as a dict that matches the tool's schema, or ToolError saying how to fix them."""
    schema = _SCHEMAS[name]
    usage = _usage(name, schema)
    if isinstance(arguments, str) and not arguments.strip():
        arguments = "{}"  # some models send "" for a tool without parameters
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        raise ToolError(f"{name} 的参数不是合法的 JSON。请按 {usage} 的格式重新调用。") from None
    if not isinstance(args, dict):
        raise ToolError(f"{name} 的参数必须是 JSON 对象。请按 {usage} 的格式重新调用。")
    properties = schema["properties"]
    extra = [key for key in args if key not in properties]
    if extra:
        raise ToolError(f"{name} 不接受参数 {'、'.join(extra)}。请按 {usage} 的格式重新调用。")
    missing = [key for key in schema["required"] if key not in args]
    if missing:
        raise ToolError(f"{name} 缺少参数 {'、'.join(missing)}。请按 {usage} 的格式重新调用。")
    for key, value in args.items():
        _check_value(name, key, value, properties[key], usage)
    return args


def _check_value(name, key, value, rule, usage):
    expected, word = _JSON_TYPES[rule["type"]]
    if not isinstance(value, expected):
        raise ToolError(f"{name} 的参数 {key} 必须是{word}。请按 {usage} 的格式重新调用。")
    if expected is str and not rule.get("minLength", 0) <= len(value.strip()) <= rule.get("maxLength", 10**6):
        raise ToolError(f"{name} 的参数 {key} 长度必须在 {rule.get('minLength', 0)} 到 "
                        f"{rule.get('maxLength')} 个字符之间（不算首尾空白）。请改短或补全后再调用。")


def _usage(name, schema):
    example = {key: ("A01" if key == "note_id" else "关键短语") for key in schema["properties"]}
    return f"{name}({json.dumps(example, ensure_ascii=False)})"


def list_notes(notes):
    return [{"note_id": note.id, "title": note.title} for note in list(notes.values())[:MAX_LISTED]]


def search_notes(notes, query):
    return notes_module.search(query, notes, limit=MAX_HITS)


def read_note(notes, note_id):
    note = notes.get(note_id.strip())
    if note is None:
        raise ToolError(_unknown_note(note_id, notes))
    truncated = len(note.text) > MAX_NOTE_CHARS
    return {"note_id": note.id, "title": note.title, "text": note.text[:MAX_NOTE_CHARS],
            "truncated": truncated}


def _unknown_note(note_id, notes):
    known = "、".join(notes) or "（笔记文件夹是空的）"
    if any(mark in note_id for mark in ("/", "\\", "..", ":")) or note_id.startswith("~"):
        return (f"note_id 只能是笔记编号，不能是路径：{note_id!r}。"
                f"只能读取笔记文件夹里的笔记，可用编号：{known}。")
    return f"没有编号为 {note_id!r} 的笔记。可用编号：{known}；不确定时先调用 search_notes 或 list_notes。"


TOOLS = {"list_notes": list_notes, "search_notes": search_notes, "read_note": read_note}
