"""What the person reads while the loop runs: a line per round, the end and the hand-off, and how attempts are said.

What it guarantees: every line goes to stderr in Chinese (stdout keeps its one JSON line); every path shown
can be typed from the current folder (cli.display_path), and a file named for inspection that does not exist
(yet) is marked "（不存在）"; an error type is always said with its Chinese gloss. Wording only: nothing here
decides, and the hand-off it prints is the one the loop wrote into its record. Shared: cli.py (gloss, paths,
stderr). The attempts and the hand-off are the loop's record entries (docs/loop/TASK.md「记录」), handed in.
"""
import cli


def explain(error_type):
    """An error type as a person reads it: the Chinese gloss, then the name."""
    return f"{cli.gloss(error_type)}（{error_type}）"


def left_text(child, left, short=False):
    """What an ended attempt's child left (its `timeout.inventory`), said for a person."""
    if not left["exists"]:
        return "没有留下子运行" if short else f"{child}/ 不存在：子进程在 Harness 建立子运行之前就被终止了，没有留下任何文件"
    status = f"run.json 为 {left['run_status']}" if left["run_status"] else "没有可读的 run.json"
    if short:
        return f"留下 {child}/，{status}"
    return f"{child}/ 里有 {len(left['files'])} 个文件（{'、'.join(left['files']) or '没有文件'}），{status}"


def done_line(attempt):
    """One attempt as the hand-off's 'what was done' says it."""
    line = f"第 {attempt['attempt']} 次：export {attempt['candidate']['sample']} → {attempt['child_run']}，"
    line += attempt["status"] or attempt["state"]
    feedback, timeout = attempt["feedback"], attempt.get("timeout")
    if feedback:
        line += f"，{explain(feedback['error_type'])}：{feedback['message'].rstrip('。')}"
    if timeout:
        line += f"，到单次时限 {timeout['seconds']} 秒被终止"
    return line


def before_again(child, left):
    """What to check before running again, after an attempt was ended at its limit."""
    if not left["exists"]:
        return f"{child}/ 确实不存在（它被终止时还没开始导出），也没有别的运行用了这个名称。"
    return (f"{child}/ 里的动作在被终止前可能已经做了一部分（run.json 仍可能是 running），不能认定它没做；"
            f"先用 verify_harness.py 核对 {child}，不要删除或改写它。")


def say_start(attempt, max_attempts, tool_wait, attempt_timeout):
    """A line as a slow or separately run attempt starts: it will take a while, or may be ended."""
    notes = ([f"slow 的替身工具要等 {tool_wait:g} 秒才返回"] if tool_wait else []) + (
        [f"在自己的子进程里运行，单次时限 {attempt_timeout:g} 秒"] if attempt_timeout is not None else [])
    if notes:
        cli.say(f"[第 {attempt['attempt']} 轮] 尝试 {attempt['attempt']}/{max_attempts} 开始：候选 export "
                f"{attempt['candidate']['sample']}；{'，'.join(notes)}。")


def say_round(attempt, max_attempts, root):
    """The line of a finished (or ended) attempt of the workspace ROOT: its candidate, its child, its result."""
    feedback, timeout = attempt["feedback"], attempt["timeout"]
    if timeout:
        outcome = (f"timed_out：到单次时限 {timeout['seconds']} 秒仍未返回，子进程已被终止"
                   f"（{left_text(attempt['child_run'], timeout['inventory'], short=True)}）")
    elif feedback:
        outcome = f"{attempt['status']}：{explain(feedback['error_type'])}：{feedback['message']}"
    else:
        outcome = f"{attempt['status']}：机械检查通过，内容待审"
    cli.say(f"[第 {attempt['attempt']} 轮] 尝试 {attempt['attempt']}/{max_attempts}：候选 export "
            f"{attempt['candidate']['sample']}，子运行 {cli.display_path(root / attempt['child_run'])}，结果 {outcome}")


def say_end(record, root, record_file):
    """The loop's conclusion, from its final RECORD (kept in RECORD_FILE of the workspace ROOT): the stop, and
    the hand-off for a person or, after a mechanical pass, the artifact to review."""
    attempts, handoff = record["attempts"], record["handoff"]
    cli.say(f"循环结束：{record['status']}/{record['reason']}，共 {len(attempts)} 次尝试，"
            f"记录在 {cli.display_path(root / record_file)}。")
    if handoff:
        inspect = [cli.display_path(root / rel) + ("" if (root / rel).exists() else "（不存在）")
                   for rel in handoff["inspect"]]
        workspace = cli.display_path(root)
        elsewhere = "" if workspace == "." else f"\n  （其余各项里的路径都相对于工作区 {workspace}）"
        cli.say("交接给人：\n  停在哪里：" + handoff["stopped_at"] + "\n  已做的事：" + "；".join(handoff["done"])
                + "\n  请核对：" + "、".join(inspect) + "\n  需要你决定：" + handoff["decide"] + elsewhere)
    elif record["status"] == "needs_review":
        cli.say("机械检查通过，内容仍待人工审核（semantic_review: pending）：请阅读 "
                f"{cli.display_path(root / attempts[-1]['child_run'] / 'artifact' / 'review.md')} 并对照原文。")
