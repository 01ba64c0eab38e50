"""What the person reads while the loop runs: a line per round, the end and the hand-off, and how attempts are said.

What it guarantees: every line goes to stderr in Chinese (stdout keeps its one JSON line); every path shown
can be typed from the current folder (cli.display_path), and a file named for inspection that does not exist
(yet) is marked "（不存在）"; an error type is always said with its Chinese gloss. Wording only: nothing here
decides, and the hand-off it prints is the one the loop wrote into its record; DECIDE holds the words of
what each kind of stop asks a person to decide, which loop_lab.py fills in where it stops. Shared: cli.py (gloss, paths,
stderr). The attempts and the hand-off are the loop's record entries (docs/loop/TASK.md「记录」), handed in.
"""
import cli

# What the hand-off asks a person to decide, for each way the loop stops (and the scope rule a blocked proposal
# is recorded with). Templates only: loop_lab.py picks one where it stops and fills it in.
DECIDE = {
    "attempt_budget": (
        "尝试次数是硬上限：用完就停，即使下一个候选可能通过也不多试（本课用 --max-attempts 限制尝试次数时，演示的正是这一点，"
        "这是预期结果）。最后一次反馈在 {child}/run.json。请决定是否值得给更多尝试（--max-attempts 最多 5）并用新名称"
        "重新运行；在真实项目里，若反馈指向候选本身，由候选的作者修正候选后再用新名称运行。本记录保持不动。"),
    "time_budget": (
        "时间预算在两轮之间耗尽：先核对已完成的子运行是否与记录一致，再决定是否用更大的 --max-seconds（最多 300）"
        "和新名称重新运行。本记录保持不动。"),
    "no_time_at_all": (
        "还没开始任何尝试。本课 --max-seconds 0 情景演示的正是“开始前预算已不足”，这是预期结果；要真正运行，"
        "请给出大于 0 的 --max-seconds（最多 300）并用新名称运行。"),
    "time_spent_starting": (
        "还没开始任何尝试，也没有子运行：时间预算 {seconds} 秒在第 1 轮开始前就用完了（循环启动本身用掉了这些时间）。"
        "请用更大的 --max-seconds（最多 300）和新名称重新运行。本记录保持不动。"),
    "slow_lesson": (
        "在本课中这是 slow 情景配小时间预算的预期结果：第 {attempt} 次尝试开始时预算还够，它等替身工具 {seconds} 秒时"
        "没有被打断——轮次边界检查不是超时；要在动作进行中终止它，需要 --attempt-timeout。"),
    "out_of_scope": "docs/loop/TASK.md 只允许 export 三个已知样例之一；这个动作不在本轮范围内，没有执行。",
    "permission_boundary": (
        "先澄清任务目标：是否真的需要 {action}？循环不能执行它，也不能自己扩大范围。在本课中这是 permission "
        "情景的预期结果：越权提议被拦下并记在 blocked_proposal，没有执行。在真实项目里，是否授权这类动作由"
        "项目负责人决定，写进新的任务说明后再用新名称运行。"),
    "context_changed": (
        "请先弄清是谁、为什么改了 {files}。在本课中样例、笔记、验证器和任务文档都不应被改动：若改动不是有意的，"
        "把这些文件恢复为课程原样；在真实项目里，由负责这些文件的人确认改动是否应当保留。之后用新名称重新运行，"
        "让新记录对应新版本；本记录和已有子运行保持不动。"),
    "child_name_taken": "{child} 不是本循环创建的，可能是别人的证据：不要删除或改写它。请换一个新名称重新运行整个循环。",
    "evidence_mismatch": (
        "子运行的记录与它留下的文件对不上：不要改写记录让它通过。请对照 {child}/run.json 和它的产物"
        "（artifact/，失败的运行没有这个目录）找出不一致的原因（被改动、磁盘问题或程序错误），保留这些证据，"
        "之后用新名称重新运行。"),
    "child_needs_human": (
        "这不是规则拒绝，而是环境或程序的问题：请看 {child}/run.json 的 error，判断原因；不要为了让它通过而修改"
        "样例、笔记或验证器。处理后用新名称重新运行。"),
    "stalled": (
        "同一候选、同一错误重复出现，再试也不会有进展，所以循环停下。在本课中这正是 stuck 情景的预期结果："
        "samples/{sample}.json 是固定的教学输入，不要修改它。在真实项目里，由候选的作者按错误消息修正候选，"
        "确认后用新名称重新运行。"),
    "timed_out": (
        "正在运行的是 export {sample} → {child}{tool}。它留下的：{left}。再运行之前请核对：{check}被终止的尝试"
        "不会自动重试，循环也不删除它留下的任何东西。确认这个动作确实需要更长时间后，再用更大的 --attempt-timeout"
        "（最多 300 秒）和新名称重新运行；本记录保持不动。"),
    "slow_timeout_lesson": "在本课中这是 slow 情景配上比替身工具更短的 --attempt-timeout 的预期结果。",
    "unexpected": (
        "这不是可以自动重试的普通反馈：请按 error_type 核对“请核对”所列的文件，判断是环境、证据还是程序的问题；"
        "不要清空重跑，处理后用新名称重新运行。"),
    "child_process_ended": "执行这次尝试的子进程已被结束，循环等它退出后才写下这份记录；",
    "unknown_with_record": "先核对 {child}/ 里实际发生的动作和产物（run.json 可能仍是 running），不能认定这次动作没做。",
    "resume_or_new_name": (
        "核对后可以用 loop_lab.py --resume {name} 续跑（它先核对记录、受监视的文件和进行中的那次尝试留下了什么，再接着做），"
        "或用新名称重新运行；不要手改本记录。"),
    "unknown_without_record": (
        "{child}/run.json 不存在：子运行在留下记录之前就停了，但不能认定这次动作没做；先确认 {child}/ 是否存在、里面有什么。"),
}


def budget_decide(reason, attempts, max_seconds, slow_wait):
    """What a budget stop (REASON) asks a person to decide, after ATTEMPTS; SLOW_WAIT: the stand-in tool's seconds
    when the scenario is slow (its lesson is said then), else False."""
    if reason == "attempt_budget":  # the last feedback: an attempt whose outcome a resume found unknown gave none
        return DECIDE["attempt_budget"].format(child=next(
            (a for a in reversed(attempts) if a["feedback"]), attempts[-1])["child_run"])
    if attempts:
        lesson = DECIDE["slow_lesson"].format(attempt=len(attempts), seconds=f"{slow_wait:g}") if slow_wait else ""
        return DECIDE["time_budget"] + lesson
    if max_seconds == 0:
        return DECIDE["no_time_at_all"]
    return DECIDE["time_spent_starting"].format(seconds=max_seconds)


def unknown_advice(root, attempt, attempt_timeout):
    """What to check of an attempt cut off in flight: what its child left, never "not done"."""
    child = attempt["child_run"]
    ended = DECIDE["child_process_ended"] if attempt_timeout is not None else ""
    recorded = "unknown_with_record" if (root / child / "run.json").is_file() else "unknown_without_record"
    return ended + DECIDE[recorded].format(child=child)


def say_not_started(exc, resuming=None):
    """Why a loop could not start (OSError EXC, before its first record): nothing was left; RESUMING, the name a
    resume was given, whose record stays as it was."""
    # the system's own words (strerror) are English on most machines: the gloss and the path say it
    detail = f"：{cli.display_path(exc.filename)}" if exc.strerror and exc.filename else f"：{exc}"
    cli.say(f"{'续跑' if resuming else '循环'}没能开始（{explain(type(exc).__name__)}{detail}）：{untouched(resuming)}。"
            "请检查工作区是否可写、文件是否可读，再运行同一条命令。")


def say_interrupted_before_start(resuming=None):
    """Ctrl-C or termination before the loop's first record (RESUMING as for say_not_started)."""
    cli.say(f"已中断：续跑还没开始，{untouched(resuming)}。要接着做，再运行同一条命令。" if resuming else
            "已中断：循环还没开始，没有创建任何记录。")


def untouched(resuming):
    return f"循环 {resuming} 的记录原样留着，什么都没有写" if resuming else "什么记录都没有留下"


def say_not_saved(cause, folder, children):
    """FOLDER's loop.json could not be written (CAUSE): the last good record stays; CHILDREN, the runs to check."""
    cli.say(f"无法写入 {cli.display_path(folder / 'loop.json')}，原因是{explain(type(cause).__name__)}：{cause}。"
            f"保留上一次成功写入的记录（可能仍是 running），循环停止。请检查磁盘空间和目录权限，"
            f"核对 {cli.display_path(children)} 后用新名称重新运行。")


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


# What a resume found of the attempt in flight (its `resume.found`), and what it makes of it.
JUDGED = {
    "no_child": ("{child}/ 不存在：Harness 没有开始，但它之前的动作（例如 slow 的替身工具）可能已经做了；记为 unknown，"
                 "计一次尝试，没有反馈，下一次尝试用新的子运行，{child} 以后也不会再建"),
    "partial_child": ("{child}/ 里的子运行没有做完（{status}）：记为 unknown，计一次尝试，没有反馈，它留下的东西保留为证据，"
                      "下一次尝试用新的子运行"),
    "complete_child": "{child}/ 已经做完（{status}）：独立核对后采用它的结果，按平常的规则决定",
    "finished_undecided": "这次尝试已经做完，只是还没有决定：按平常的规则决定",
}


def say_resumed(record, max_attempts):
    """The line a resume starts with: how the segment before ended, the gap, and the budgets carried over."""
    before, now = record["segments"][-2:]
    ended = ("进程被强行结束（记录仍是 running），它的单调时钟至少走了" if before["ended"] == "killed" else
             f"{'被终止信号结束' if before['ended'] == 'terminated' else '被 Ctrl-C 中断'}，它的单调时钟走了")
    budget = record["budget"]
    cli.say(f"续跑 loop-runs/{record['run']}（第 {len(record['segments'])} 段）：上一段{ended} "
            f"{before['elapsed_seconds']:.3f} 秒；两段之间日历时间隔了 {now['gap_seconds']:.3f} 秒，不计入预算。"
            f"预算接着用：已有 {len(record['attempts'])} 次尝试（最多 {max_attempts} 次），已用 {now['started_offset']:.3f} 秒"
            f"（预算 {budget['max_seconds']} 秒）。")


def say_judged(attempt, root):
    """What the resume judged of the attempt in flight, from what it left."""
    found, status = attempt["resume"]["found"], attempt["resume"]["run_status"]
    child = cli.display_path(root / attempt["child_run"])
    cli.say(f"[续跑] 第 {attempt['attempt']} 次尝试：" + JUDGED[found].format(
        child=child, status=f"run.json 为 {status}" if status else "没有可读的 run.json") + "。")
