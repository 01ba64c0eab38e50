"""The model settings: their defaults, and their values read from the environment.

`DEEPSEEK_API_KEY` (non-empty after stripping, and no `--offline`) selects the real API;
otherwise the offline demo model. `DEEPSEEK_BASE_URL`, `DEEPSEEK_MODEL` and
`DEEPSEEK_TIMEOUT` (seconds per attempt, whole request) and `DEEPSEEK_DEADLINE` (seconds per question, retries
and tools included) have the defaults below. An unusable
value raises ValueError with a Chinese message naming the variable. Imports nothing of the package.
Shared with: `client` (the defaults, `SYSTEM_PROMPT`, `DEFAULT_MAX_TOKENS`), `models` (reads the environment
through `api_key`, `base_url`, `timeout`, `deadline`).
"""
import os
import urllib.parse

DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-chat"
DEFAULT_TIMEOUT = 60.0
DEFAULT_DEADLINE = 90.0  # one whole question: every attempt, every wait before a retry, every tool
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_TOKENS = 2048  # sent with every request: the most one reply may generate
MAX_TIMEOUT = 3600.0
SYSTEM_PROMPT = (
    "你是课程笔记助手，只依据笔记回答学员的问题。先用 search_notes 按问题中的关键短语搜索，"
    "再用 read_note 读取最相关的笔记；回答时逐字引用原文，并注明笔记编号和标题。"
    "笔记中没有相关内容时，直接回答“笔记中没有找到相关内容”，不要编造。"
)


def _base_url_problem(base_url):
    try:
        parts = urllib.parse.urlsplit(base_url)
        parts.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        return "无法解析（地址或端口写错了）"
    if parts.scheme not in ("http", "https"):
        return "必须以 http:// 或 https:// 开头"
    if not parts.hostname:
        return "缺少主机名"
    return None


def api_key(env):
    key = (env.get("DEEPSEEK_API_KEY") or "").strip()
    if key and (not (key.isascii() and key.isprintable()) or any(ch.isspace() for ch in key)):
        raise ValueError("环境变量 DEEPSEEK_API_KEY 含有空白、中文引号或其他不能放进请求头的字符："
                         "请重新复制密钥（只含字母、数字和符号）。")
    return key


def base_url(env):
    base_url = (env.get("DEEPSEEK_BASE_URL") or "").strip() or DEFAULT_BASE_URL
    problem = _base_url_problem(base_url)
    if problem:
        raise ValueError(f"环境变量 DEEPSEEK_BASE_URL 的值 {base_url!r} 不能用：{problem}。"
                         f"默认是 {DEFAULT_BASE_URL}。")
    return base_url


def timeout(env):
    return _seconds(env, "DEEPSEEK_TIMEOUT", DEFAULT_TIMEOUT)


def deadline(env):
    return _seconds(env, "DEEPSEEK_DEADLINE", DEFAULT_DEADLINE)


def _seconds(env, name, default):
    raw = (env.get(name) or "").strip() or f"{default:g}"
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= MAX_TIMEOUT:  # also refuses NaN
        raise ValueError(f"环境变量 {name} 必须是 0 到 {MAX_TIMEOUT:g} 之间的秒数，现在是 {raw!r}。")
    return seconds
