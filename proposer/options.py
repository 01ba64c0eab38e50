"""The model scenario's own command-line rules: where its development model comes from, checked before anything runs.

`model_problem(root, model_url, model_script, env)` says in Chinese why the development model cannot be used (the
loop then exits 2 and creates nothing), or None. Without --model-url the model is a script the local mock replays:
it must be a file inside the workspace (its hash goes into the loop's context, so a teacher can check the run
against the same file) and a script the mock can serve. With --model-url: an http(s) address of an OpenAI-compatible
server, and its key in LOOP_MODEL_API_KEY (the notes assistant's DEEPSEEK_* variables are never read: the two
budgets and the two accounts stay apart). `script_path` gives the script's path as the record keeps it. Imports
nothing of the notes assistant's client (only the mock's script checker, which is pure).
"""
import os
import urllib.parse
from pathlib import Path

import cli

DEFAULT_SCRIPT = "samples/models/developer.json"
MODELS = ("developer", "repeat", "publish", "failing")  # the developer models the workspace ships
KEY_VARIABLE = "LOOP_MODEL_API_KEY"


def script_path(root, model_script):
    """MODEL_SCRIPT (as typed, from the current folder) as a workspace path, "samples/models/x.json"; None outside."""
    given = Path(model_script or DEFAULT_SCRIPT)
    full = (given if given.is_absolute() or model_script else Path(root) / given).resolve()
    try:
        return full.relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return None


def model_problem(root, model_url=None, model_script=None, env=os.environ):
    """Why this development model cannot be used (Chinese, naming the option or variable), or None."""
    if model_url is not None:
        return url_problem(model_url) or key_problem(env)
    rel = script_path(root, model_script)
    shown = model_script or DEFAULT_SCRIPT
    if rel is None:
        return f"--model-script {shown} 不在工作区里：请把脚本复制到工作区里（例如新建的 my-models/ 文件夹）再运行，它的哈希会记进循环的上下文。"
    path = Path(root) / rel
    if not path.is_file():
        return f"--model-script 的文件 {shown} 不存在：工作区自带的开发模型是 samples/models/ 里的 {'、'.join(MODELS)}。"
    return script_problem(path, shown)


def script_problem(path, shown):
    from . import use_project
    use_project()
    from mockapi.script import script_problem as problem_of  # the mock's own rule for a script
    try:
        script = cli.loads_record(path.read_bytes())
    except OSError as exc:
        return f"读不出 --model-script 的文件 {shown}（{exc.strerror or type(exc).__name__}）。"
    except cli.RecordError as exc:
        return f"--model-script 的文件 {shown} {exc}。"
    problem = problem_of(script)
    return f"--model-script 的文件 {shown}：{problem}" if problem else None


def url_problem(url):
    parts = urllib.parse.urlsplit(url)
    try:
        parts.port
    except ValueError:
        return f"--model-url {url!r} 的端口写错了。"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"--model-url 应是 http:// 或 https:// 开头的服务地址（不带 /chat/completions），收到 {url!r}。"
    return None


def key_problem(env):
    key = (env.get(KEY_VARIABLE) or "").strip()
    if not key:
        return (f"--model-url 需要环境变量 {KEY_VARIABLE}（开发模型自己的密钥，和笔记助手的 DEEPSEEK_API_KEY 分开）："
                "设置之后再运行。")
    if not (key.isascii() and key.isprintable()) or any(ch.isspace() for ch in key):
        return f"环境变量 {KEY_VARIABLE} 含有空白、中文引号或其他不能放进请求头的字符：请重新复制密钥。"
    return None
