"""Independent check of lesson-14 loop runs, one at a time or a whole class's submissions.

    python3 verify_loop.py loop-runs/NAME [loop-runs/OTHER ...] [--explain] [--html FILE.html]
    python3 verify_loop.py --class SUBMISSIONS [--report FILE.md] [--csv FILE.csv] [--feedback DIR]
                           [--roster FILE [--grades OUT.csv] [--assignment TITLE|ID]] [--feedback-zip OUT.zip]
                           [--html FILE.html]
    python3 verify_loop.py --pack OUT.zip      (a student's hand-in: classroom/hand_in.py)
    exit 0 every run (every student) passes, 1 otherwise, 2 bad arguments

The command line only. Does each stop follow from the evidence it left? The work is done in
modules, each with one job: verifier/records.py (the verifier's own copy of the rules, and how a record
is read), verifier/shape.py (its fields), verifier/check.py (one loop folder), verifier/outcome.py (its stop and
decisions re-derived), verifier/clocks.py (a record's clocks), verifier/resumed.py (a resumed record's segments
and judgements), verifier/older.py (records of an older workspace), verifier/explain.py (--explain),
verifier/proposals.py (a model loop's proposals; it uses project/verify_ask.py, the notes assistant's verifier, as
verify_harness.py is used for each child), verifier/findings.py (every finding's kind and sentence), verifier/page.py
(--html), and classroom/ (check.py: a whole class and its reports; page.py: its page and each student's;
hand_in.py: --pack). None of them imports loop_lab.py, harness.py, export_review.py or the loop's machinery/: the
checked programs never vouch for themselves.
What they share with the rest of the workspace: cli.py's plumbing (capped reads of plain files,
strict record parsing, line ends, glosses, paths shown from the current folder, Chinese arguments,
output) and named pieces of verify_harness.py, the lesson-13 verifier: verify_run checks each child run against
one reading of the course files (Course), as_listed finds a folder typed in another case, and its words for a
transport's changes (undo_transport, TRANSPORT_NOTES) and a record's JSON type (json_kind) are reused so both
verifiers say them alike.

A loop folder's workspace root is the folder holding its `loop-runs/`: its children are read
there. The course files (notes, samples, watched files) are read there too, except in a class
check, where they come from the workspace holding this file, never from a submission.
"""
try:  # Ctrl-C while Python is still loading this script: a Chinese line and 130, never a traceback
    # cli first: it refuses a Python older than 3.11 before anything else runs
    from cli import (EXIT_OK, EXIT_STOP, ChineseArgumentParser, display_path, print_json, run, say, use_safe_console,
                     visible)
    import os
    from pathlib import Path

    import verify_harness
    from verifier.check import checked_loop, verify_loop
except KeyboardInterrupt:
    if __name__ != "__main__":
        raise
    import sys
    sys.stderr.write("已中断：还没有开始核对，什么都没有读写。\n")  # the console's encoding; escapes where it has no Chinese
    raise SystemExit(130) from None

# --- the command line ----------------------------------------------------------------------------

def print_result(result, several):
    out = {key: result[key] for key in ("result", "status", "attempts", "semantic_review")}
    levels = result["levels"]
    if levels:  # a model loop: the verifier's own count of its model turns and HTTP requests
        out.update(model_turns=levels["model_turns"], actual_api_calls=levels["actual_api_calls"])
    if several or result["result"] != "pass":
        out["run"] = result["run"]
    if result["result"] != "pass":
        out["problems"] = result["problems"]
    if result["notes"]:
        out["notes"] = result["notes"]
    print_json(out)
    if result["result"] == "pass" and levels:
        pending = "，内容仍待人工审核（semantic_review: pending）" if result["status"] == "needs_review" else ""
        say(f"{result['folder']}：pass，停止状态 {result['status']} 与提议记录和子运行一致：开发迭代 {levels['attempts']} 次尝试，"
            f"应用工具循环 {levels['model_turns']} 次模型交互，算上请求重试共 {levels['actual_api_calls']} 次 HTTP 请求；"
            f"模型的自我评价不作数{pending}。")
    elif result["result"] == "pass" and result["status"] == "needs_review":
        say(f"{result['folder']}：pass，停止状态 {result['status']}、{result['attempts']} 次尝试与情景预期及子运行一致；"
            "内容仍待人工审核（semantic_review: pending）。")
    elif result["result"] == "pass":
        say(f"{result['folder']}：pass，停止状态 {result['status']}、{result['attempts']} 次尝试与情景预期及子运行一致；"
            "这表示循环按预期停下了，不表示资料导出成功。")
    else:
        say(f"{visible(result['folder'])}：{result['result']}"
            + "".join(f"\n  - {visible(problem)}" for problem in result["problems"]))
    for note in result["notes"]:
        say(f"  说明：{visible(note)}")


def parse_arguments(argv):
    parser = ChineseArgumentParser(
        usage=("[-h] [--class SUBMISSIONS] [--report FILE.md]",
               "[--csv FILE.csv] [--feedback DIR] [--roster FILE]",
               "[--grades OUT.csv] [--assignment TITLE|ID]", "[--feedback-zip OUT.zip] [--pack OUT.zip]",
               "[--explain] [--server-log FILE] [--html FILE.html]", "[LOOP_DIR ...]"),
        description="独立核对一个或多个循环记录（loop-runs/NAME），或用 --class 核对全班的提交："
                    "按情景预期、子运行和上下文指纹重新推导结果。",
        epilog="退出码：0 每个循环都通过（--class：每个学生都 pass；--pack：打包的这一行是 pass）；1 有循环 fail 或 needs_human"
               "（--class：有学生不是 pass；--pack：不是 pass，ZIP 照样写出）；2 参数错误（例如给的不是 loop-runs/ 下的目录，"
               "或提交目录里没有学生，或 --pack 的文件已存在）；130 被 Ctrl-C 中断。",
    )
    parser.add_argument("loop_dirs", nargs="*", metavar="LOOP_DIR", help="循环目录，例如 loop-runs/repair-01")
    parser.add_argument("--class", dest="submissions", metavar="SUBMISSIONS",
                        help="全班提交所在的文件夹：每个学生一项，文件夹或 .zip 压缩包；Moodle、Canvas、Blackboard、"
                             "GitHub Classroom 下载的原样即可（Moodle 的“下载所有提交”ZIP 也可以直接给出）")
    parser.add_argument("--report", metavar="FILE.md",
                        help="（与 --class 一起）写出 Markdown 报告；只替换这个核对以前写出的报告")
    parser.add_argument("--csv", dest="csv_file", metavar="FILE.csv",
                        help="（与 --class 一起）写出 CSV 表（UTF-8 带 BOM，Excel 可直接打开）；只替换这个核对以前写出的 CSV")
    parser.add_argument("--feedback", metavar="DIR",
                        help="（与 --class 一起）在 DIR 里给每位学生写一份反馈 DIR/<学生>.md，只含这位学生自己的结果")
    parser.add_argument("--roster", metavar="FILE",
                        help="（与 --class 一起）名单：Moodle 的离线评分工作表、Canvas 的成绩册导出、GitHub Classroom 的 "
                             "roster，或每行一个名字的文本；名单上每个人一行，没有提交的是 missing（未提交）")
    parser.add_argument("--grades", metavar="OUT.csv",
                        help="（与 --class、--roster 一起）把名单文件原样写回到 OUT.csv，只填成绩和评语两列，可直接导入学习平台")
    parser.add_argument("--assignment", metavar="TITLE|ID",
                        help="（与 --roster 一起）Canvas 成绩册里有几个作业列时，成绩写进哪一列：作业的编号（列名括号里的数字）或标题")
    parser.add_argument("--feedback-zip", metavar="OUT.zip",
                        help="（与 --class 一起）把每位学生的反馈放进下载时他的文件夹名下，打成一个 ZIP"
                             "（Moodle 的“以 ZIP 上传多个反馈文件”）")
    parser.add_argument("--pack", metavar="OUT.zip",
                        help="交作业：按老师的核对检查本工作区的全部循环，把 loop-runs/ 和 runs/ 打包成 OUT.zip，"
                             "打印老师会看到的那一行；已有的同名文件不会被覆盖")
    parser.add_argument("--explain", action="store_true",
                        help="在 stderr 上逐轮说明验证器自己的推导：预算检查、候选、范围、子运行、独立核对、决定和停止"
                             "（stdout 不变）")
    parser.add_argument("--html", metavar="FILE.html",
                        help="另外写出一个网页：给出的循环逐个、逐轮（或 --class 的全班）；一个文件，不要网络也不运行脚本，"
                             "stdout 和退出码不变；只替换这个核对以前写出的网页")
    parser.add_argument("--server-log", metavar="FILE",
                        help="--scenario model 的循环用 --model-url 连到另一个服务时，那个服务自己的请求记录"
                             "（mock_model.py --log 的格式）；本机 mock 的记录在循环目录里，不用给")
    args = parser.parse_args(argv)
    if args.server_log is not None and (args.submissions is not None or args.pack is not None):
        parser.error("--server-log 只和给出的循环目录一起用，不能和 --class 或 --pack 一起用。")
    if args.server_log is not None and not os.path.isfile(args.server_log):
        parser.error(f"--server-log 的文件 {args.server_log} 不存在（这次没有核对任何目录）。")
    if args.html is not None and args.pack is not None:
        parser.error("--html 写的是核对结果的网页，--pack 是交作业：请分开运行。")
    if args.explain and (args.submissions is not None or args.pack is not None):
        parser.error("--explain 逐轮说明给出的循环目录，不能和 --class 或 --pack 一起用：请单独核对要看的循环。")
    if args.submissions is None and (args.report or args.csv_file or args.feedback or args.roster or args.grades
                                     or args.feedback_zip or args.assignment is not None):
        parser.error("--report、--csv、--feedback、--roster、--grades、--assignment 和 --feedback-zip 只能和 --class 一起用。")
    if args.submissions is not None and args.loop_dirs:
        parser.error("--class 核对全班时不再另给循环目录：请二选一。")
    if args.pack is not None and (args.loop_dirs or args.submissions is not None):
        parser.error("--pack 打包整个工作区，不再另给循环目录或 --class：请单独使用。")
    if args.submissions is None and not args.loop_dirs and args.pack is None:
        parser.error("请给出至少一个循环目录（例如 loop-runs/repair-01），或用 --class 给出全班提交的文件夹。")
    return parser, args


def missing_loop(text):
    """Why TEXT names no loop (Chinese). Typed from another folder (e.g. project/), where the loops are, with a
    command that works from here: paths are read from the current folder."""
    workspace = Path(__file__).resolve().parent
    elsewhere = not Path(text).is_absolute() and Path(os.path.abspath(".")).resolve() != workspace
    if elsewhere and os.path.isdir(workspace / "loop-runs"):
        from cli import command
        named = workspace / text if os.path.isdir(workspace / text) else workspace / "loop-runs" / "repair-01"
        return (f"{text} 不存在：路径按当前文件夹理解，而循环在工作区的 {display_path(workspace / 'loop-runs')}/ 里，"
                f"例如：{command(workspace / 'verify_loop.py', named)}（这次没有核对任何目录）。")
    return f"{text} 不存在：请给出 loop-runs/ 下的循环目录，例如 loop-runs/repair-01（这次没有核对任何目录）。"


def loop_folders(parser, texts):
    """The loop folders named on the command line; a claim folder (`.lock-*`) or a loop's lock file (`.held-*`) is
    skipped, not checked."""
    folders, listed = [], {}  # each parent folder is listed once, however many of its loops are named
    for text in texts:
        path = Path(os.path.abspath(text))  # not resolved: a link keeps its own name, it is checked, not followed
        if path.parent not in listed:
            listed[path.parent] = names_in(path.parent)
        if path.name not in listed[path.parent]:
            path = verify_harness.as_listed(text)  # typed in another case: the folder's own spelling
        if not os.path.lexists(path):
            parser.error(missing_loop(text))
        if path.parent.name == "loop-runs" and path.name.startswith("."):  # a loop's lock file, or a claim
            say(f"跳过 {visible(display_path(path))}：以点开头的是循环的锁文件或认领名称时的临时目录，不是循环记录。")
            continue
        if not os.path.isdir(path) or path.parent.name != "loop-runs":
            parser.error(f"{text} 不是 loop-runs/ 下的循环目录：请给出例如 loop-runs/repair-01（这次没有核对任何目录）。"
                         "用通配符时写 loop-runs/*/，只列出文件夹。")
        folders.append(path)
    if not folders:
        parser.error("给出的目录里没有循环记录：请给出 loop-runs/ 下的循环目录，例如 loop-runs/repair-01。")
    return folders


def names_in(folder):
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def main(argv=None):
    use_safe_console()
    parser, args = parse_arguments(argv)
    if args.pack is not None:
        from classroom.hand_in import pack
        return pack(parser, args.pack)
    if args.submissions is not None:
        from classroom.check import check_class, class_arguments_problem
        problem = class_arguments_problem(args)
        if problem:
            parser.error(problem)
        return check_class(parser, args)
    folders = loop_folders(parser, args.loop_dirs)
    if args.html is not None:  # refused before anything is read or written
        from classroom.upload import page_problem
        problem = page_problem(args.html, [folder.parent.parent / name for folder in folders
                                           for name in ("loop-runs", "runs")])
        if problem:
            parser.error(problem)
    workspaces, counts, checks = {}, {"pass": 0, "fail": 0, "needs_human": 0}, []
    for folder in folders:
        check = checked_loop(folder, workspaces, server_log=args.server_log)
        result = check.result()
        if args.explain:
            from verifier.explain import account
            say(account(check))
        counts[result["result"]] += 1
        print_result(result, len(folders) > 1)
        checks.append(check)
    if len(folders) > 1:
        say(f"共核对 {len(folders)} 个循环：pass {counts['pass']}，fail {counts['fail']}，"
            f"needs_human {counts['needs_human']}。")
    written = True
    if args.html is not None:
        from classroom.upload import write_page
        from verifier.page import loop_page
        written = write_page(args.html, loop_page(checks, args.html))
    return EXIT_OK if counts["pass"] == len(folders) and written else EXIT_STOP


if __name__ == "__main__":
    run(main, "已中断：没有完成核对，已打印的结果仍然有效。")
