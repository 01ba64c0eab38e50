"""What the development model is asked, the one tool it may call, and what counts as its proposal.

Each proposal is one question: the task, the feedback of every attempt so far (error type and message,
verbatim, so the model can follow the exporter's rejection) and the answer's form. The model may call one
read-only tool, `list_samples` (the known samples and their hashes); it changes nothing. Its final reply must be
one JSON object and nothing else: `{"action": "export", "sample": NAME, "claim": TEXT}`, or for any other
action `{"action": ACTION, "target": TARGET, "claim": TEXT}` (which the loop's scope check then blocks).
`parse_proposal` applies that rule: anything else is `NotAProposal`, and the loop hands it to a person rather
than guess. The claim is the model's own word about its candidate; it is recorded, and decides nothing.
verify_loop.py applies the same rule on its own (verifier/ keeps a copy on purpose).
"""
import json

import cli
import harness

TOOL_NAME = "list_samples"
MAX_CLAIM = 500  # characters: a claim is one sentence, not an essay
MAX_REPLY = 2000  # characters of a final reply a proposal record keeps
TOOL_SCHEMAS = [{"type": "function", "function": {
    "name": TOOL_NAME,
    "description": "列出可以导出的已知样例：名称、文件和内容的 sha256。只读，不改动任何东西。",
    "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}}}]
SYSTEM_PROMPT = (
    "你是开发助手，帮外层循环挑下一次导出的候选。可以先调用 list_samples 看有哪些样例。"
    "最后只回答一个 JSON 对象，不要任何别的文字："
    '{"action": "export", "sample": "样例名", "claim": "一句话：你认为这个候选会怎样"}。'
    "是否执行、是否通过，由循环的范围检查和独立核对决定，不由你的说法决定。")
NO_FEEDBACK = "还没有任何尝试，也没有反馈。"


class NotAProposal(ValueError):
    """The development model's final reply is not one proposal: WHY is a kind, DETAIL says it in Chinese."""

    def __init__(self, why, detail):
        super().__init__(detail)
        self.why, self.detail = why, detail


def question(number, feedback):
    """The question of proposal NUMBER; FEEDBACK: (attempt number, sample, {"error_type", "message"}) of each
    attempt so far, in order, carried verbatim."""
    lines = [f"- 第 {attempt} 次尝试（候选 export {sample}）被拒绝：{said['error_type']}：{said['message']}"
             for attempt, sample, said in feedback]
    return (f"请为第 {number} 次尝试提出一个导出候选。\n到目前为止的反馈：\n" + ("\n".join(lines) or NO_FEEDBACK) +
            '\n只回答一个 JSON 对象：{"action": "export", "sample": "样例名", "claim": "你的判断"}。')


def list_samples(root):
    """The tool runner for ROOT's samples: (content, is_error) as the notes assistant's loop expects."""
    def run(name, arguments):
        if name != TOOL_NAME:
            return f"错误：没有名为 {name!r} 的工具。可用的工具只有 {TOOL_NAME}。", True
        try:
            given = json.loads(arguments or "{}")
        except ValueError:
            given = None
        if given != {}:
            return f"错误：{TOOL_NAME} 不需要参数，请用 {{}} 调用。", True
        samples = [{"sample": sample, "file": f"samples/{sample}.json",
                    "sha256": harness.file_sha256(root / "samples" / f"{sample}.json")} for sample in harness.SAMPLES]
        return json.dumps({"samples": samples, "allowed_action": "export"}, ensure_ascii=False), False
    return run


def shown(text, limit=MAX_CLAIM):
    """The model's TEXT as a terminal line may show it: a control or invisible character as its escape, cut at LIMIT."""
    text = str(text)
    text = text if text.isprintable() else "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode()
                                                   for ch in text)
    return text if len(text) <= limit else text[:limit] + "…"


def parse_proposal(text):
    """{"action", "sample" | "target", "claim"} from the final reply TEXT, or NotAProposal."""
    try:
        value = cli.loads_strict(text)
    except ValueError:
        raise NotAProposal("not_json", "最后的回答不是一个 JSON 对象（不能带别的文字，也不能重复键）") from None
    if not isinstance(value, dict):
        raise NotAProposal("not_object", "最后的回答是 JSON，但不是一个对象")
    place = "sample" if value.get("action") == "export" else "target"
    keys = ("action", place, "claim")
    if set(value) != set(keys):
        raise NotAProposal("keys", f"最后的回答应正好有 {'、'.join(keys)} 这几个键，实际是 {'、'.join(map(str, value)) or '空对象'}")
    if not all(isinstance(value[key], str) and value[key].strip() for key in keys):
        raise NotAProposal("types", f"{'、'.join(keys)} 都应是非空的文字")
    if len(value["claim"]) > MAX_CLAIM:
        raise NotAProposal("claim_too_long", f"claim 超过 {MAX_CLAIM} 个字符")
    return {key: value[key] for key in keys}
