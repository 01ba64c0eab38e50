"""The pages verify_loop writes with --html: one self-contained HTML file, made from findings and their kinds.

Part of verify_loop (the command line). This file holds what every page shares (the document around a page, its
inline CSS, how text is escaped, relative links, a finding as a list item carrying its kind as `data-kind`, the status
words) and the loop page (`verify_loop.py LOOP … --html FILE`): a summary table, one row a loop (the verdict, the
stop the loop recorded and, where they differ, the stop the evidence supports), then a section per loop in the
order given: its findings, each round as verifier/explain.py laid it out (`views`: the budget check, the proposal,
the scope, the child with its own recorded duration, the independent check, the decision, every "≠" marked with its
kind), the stop, the feedback and the hand-off, with links relative to the page's folder. classroom/page.py makes
the class page and each student's page with what is here.

A page needs nothing but itself: `<meta charset="utf-8">`, a viewport, a Content-Security-Policy that allows no
script and no request (styles inline only), no external resource, readable from file://. It does not scroll
sideways at 390 px or 1280 px: long words wrap anywhere, and at narrow widths a table's rows become cards. Every
string, a submission's above all, goes through cli.visible() (controls and bidi characters shown as escapes) and then
HTML escaping, attributes in double quotes. What it shares: cli.py's visible() and verifier/explain.py's account of
the rounds (it reads no file itself; it looks at whether a linked file exists).
"""
import html
import os
from pathlib import Path
from urllib.parse import quote

from cli import visible
from verifier.findings import one_line

FIRST_LINE = "<!DOCTYPE html><!-- verify_loop.py --html -->"  # how a page this check wrote before is known
SAID_CHARS = 2000  # of one finding's sentence on a page: an honest one is far shorter, a forged record cannot flood it
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
# The status words of the JSON, each with the Chinese a page shows beside it.
WORDS = {"pass": "通过", "fail": "不通过", "needs_human": "待人看", "incomplete": "未完成", "packaging": "格式无法核对",
         "missing": "缺少", "unjudged": "交给人"}
SEVERITY_CLASS = {"fail": "fail", "human": "needs_human", "remark": "remark", "packaging": "packaging",
                  "incomplete": "incomplete", "note": "remark", "aside": "remark", "differs": "fail"}
CSS = """
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.6 system-ui,-apple-system,"Segoe UI","PingFang SC","Microsoft YaHei",sans-serif;
color:#1f2328;background:#f6f8fa;overflow-wrap:anywhere;word-break:break-word}
main{max-width:1240px;margin:0 auto;padding:12px 16px 40px}
h1{font-size:1.45em;margin:.4em 0}h2{font-size:1.2em;margin:1.4em 0 .4em}h3{font-size:1.05em;margin:1em 0 .3em}
h4{font-size:1em;margin:.8em 0 .2em}
section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:8px 14px;margin:14px 0}
table{width:100%;border-collapse:collapse;table-layout:fixed;background:#fff}
th,td{border:1px solid #d0d7de;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#eef1f4}
code,.path{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em;word-break:break-all}
a{color:#0b57b7}
ul{padding-left:1.3em;margin:.3em 0}li{margin:.15em 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.4em 0}dt{font-weight:600}dd{margin:0}
.badge{display:inline-block;padding:0 6px;border-radius:4px;font-weight:600;font-size:.92em}
.r-pass{background:#dafbe1}.r-fail{background:#ffebe9}.r-needs_human,.r-unjudged{background:#fff8c5}
.r-incomplete{background:#ddf4ff}.r-packaging{background:#eddeff}.r-missing{background:#eaeef2}
.r-remark{background:#f6f8fa}
li.finding{padding:2px 6px;border-radius:4px;list-style:none;margin-left:-1.3em}
li.finding.sev-fail{background:#ffebe9}li.finding.sev-needs_human{background:#fff8c5}
li.finding.sev-packaging{background:#eddeff}li.finding.sev-incomplete{background:#ddf4ff}
.kind{color:#57606a;font-size:.85em;margin-left:.4em}
.differs{background:#ffebe9;border-left:4px solid #cf222e;padding-left:6px}
.steps{list-style:none;padding-left:0}.steps li{margin:.1em 0}.steps .sub{padding-left:1.5em;color:#444}
.note{color:#57606a}
.bar{height:14px;background:#0969da;border-radius:3px;min-width:2px}
@media (max-width:720px){
 table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
 table.cards thead{display:none}
 table.cards tr{border:1px solid #d0d7de;border-radius:6px;margin:0 0 8px;background:#fff}
 table.cards td{border:0;border-bottom:1px solid #eef1f4;padding:3px 8px}
 table.cards td::before{content:attr(data-label) "：";font-weight:600;color:#57606a}
 dl{grid-template-columns:1fr}dd{margin-bottom:4px}
}
"""


def text(value):
    """VALUE as HTML text (and as a quoted attribute's value): cli.visible()'s escapes first, then HTML's."""
    return html.escape(visible(str(value)), quote=True)


def document(title, body, css=""):
    """A whole page: its first line says this check wrote it; nothing outside the file is needed or reached."""
    return (f"{FIRST_LINE}\n<html lang=\"zh-CN\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            f"<meta name=\"referrer\" content=\"no-referrer\"><title>{text(title)}</title>"
            f"<style>{CSS}{css}</style></head>\n<body><main>\n{body}\n</main></body></html>\n")


def href(target, page_dir):
    """The link from a page in PAGE_DIR to TARGET, relative and URL-quoted; None where there is none (another drive)."""
    try:
        rel = os.path.relpath(os.path.abspath(target), os.path.abspath(page_dir))
    except ValueError:
        return None
    return quote(Path(rel).as_posix(), safe="/")


def link(target, label, page_dir, within=None):
    """LABEL linking to TARGET, when it exists (inside the folder WITHIN, when given: a record's own paths may point
    anywhere; and there once links are followed: a submission's link may reach anyone's files) and a relative link
    reaches it; else LABEL as text."""
    inside = within is None or all(Path(where(target)).is_relative_to(where(within))
                                   for where in (os.path.abspath, os.path.realpath))
    url = href(target, page_dir) if inside and os.path.lexists(target) else None
    shown = f"<span class=\"path\">{text(label)}</span>"
    return f"<a href=\"{text(url)}\">{shown}</a>" if url else shown


def badge(result):
    return f"<span class=\"badge r-{text(result)}\">{text(result)} {WORDS.get(result, '')}</span>"


def finding_item(finding, student=False, private=lambda said: said, said=None, kind=None):
    """A finding as a list item: its sentence (SAID when given: the words an output already cut; PRIVATE hides the
    teacher's folders), its kind (KIND when given: the cause's, under a frame naming its loops) shown and as
    data-kind."""
    severity = SEVERITY_CLASS.get(finding.severity, "remark")
    said = private(finding.sentence(student) if said is None else said)
    kind = kind or finding.kind
    return (f"<li class=\"finding sev-{severity}\" data-kind=\"{text(kind)}\">{text(one_line(said, SAID_CHARS))}"
            f"<code class=\"kind\">{text(kind)}</code></li>")


def findings_list(found, **options):
    return "<ul class=\"findings\">" + "".join(finding_item(finding, **options) for finding in found) + "</ul>" \
        if found else ""


def line_item(line):
    """One line of --explain's account: a "≠" line marked with its kind, a step with its label, a line beneath."""
    finding = getattr(line, "finding", None)
    if finding is not None:
        return f"<li class=\"differs\" data-kind=\"{text(finding.kind)}\">{text(line.strip())}</li>"
    said = line.strip()
    if line.startswith("    "):
        return f"<li class=\"sub\">{text(said)}</li>"
    label, mark, rest = said.partition("：")
    if line.startswith("  ") and mark and len(label) <= 12:
        return f"<li><b>{text(label)}</b>：{text(rest)}</li>"
    return f"<li>{text(said)}</li>"


# --- the loop page --------------------------------------------------------------------------------------------------

def loop_page(checks, page_path, command=""):
    """The page of CHECKS (LoopChecks after their checks ran), in the order given, for the file PAGE_PATH."""
    page_dir = Path(os.path.abspath(page_path)).parent
    rows = [summary_row(number, check) for number, check in enumerate(checks, 1)]
    counts = {result: sum(check.result()["result"] == result for check in checks)
              for result in ("pass", "fail", "needs_human")}
    said = "，".join(f"{result} {count}" for result, count in counts.items())
    body = [f"<h1>循环核对：{len(checks)} 个循环</h1>",
            "<p>验证器按证据独立推导每个循环的结果（不导入 loop_lab.py）；“≠”标出循环记录与证据不同的地方，"
            "每条发现后面是它的种类（docs/loop/TEACHER.md「每种发现」）。</p>",
            f"<p>共核对 {len(checks)} 个循环：{text(said)}。" + (f"命令：<code>{text(command)}</code>" if command else "")
            + "</p>",
            "<table class=\"cards summary\"><thead><tr><th>循环</th><th>核对结果</th><th>循环记录的停止</th>"
            "<th>证据支持的停止</th><th>尝试</th><th>发现</th></tr></thead><tbody>", *rows, "</tbody></table>",
            *(loop_section(number, check, page_dir) for number, check in enumerate(checks, 1))]
    return document(f"循环核对：{len(checks)} 个循环", "\n".join(body))


def recorded_stop(record):
    status, reason = record.get("status"), record.get("reason")
    return f"{status}/{reason}" if isinstance(reason, str) else str(status)


def supported_stop(check):
    """(the stop the evidence supports as a person reads it, whether it differs from the recorded one, the kind of
    the finding that says so)."""
    if not check.judged:
        return "记录读不出或形状不对，推导不了", True, None
    from verifier.explain import evidence_stop
    how, stop = evidence_stop(check)
    record = check.record
    if how == "unjudged":
        return "不按情景预期判断，交给人", False, None
    if stop is None:
        return "证据不支持停下：循环本应继续", True, "stop_unsupported"
    if stop != (record["status"], record["reason"]):
        return "/".join(stop), True, "stop_contradicted"
    return "与记录相同", False, None


def summary_row(number, check):
    result = check.result()
    record = check.record if type(check.record) is dict else {}
    supported, differs, kind = supported_stop(check)
    mark = f" class=\"differs\" data-kind=\"{text(kind)}\"" if differs and kind else " class=\"differs\"" if differs \
        else ""
    return (f"<tr class=\"r-{text(result['result'])}\"><td data-label=\"循环\"><a href=\"#loop-{number}\">"
            f"{text(check.name)}</a></td><td data-label=\"核对结果\">{badge(result['result'])}</td>"
            f"<td data-label=\"循环记录的停止\">{text(recorded_stop(record)) if record else '没有可读的记录'}</td>"
            f"<td data-label=\"证据支持的停止\"{mark}>{text(supported)}</td>"
            f"<td data-label=\"尝试\">{text(result['attempts'] if result['attempts'] is not None else '—')}</td>"
            f"<td data-label=\"发现\">{len(result['findings'])}</td></tr>")


def loop_section(number, check, page_dir):
    result = check.result()
    record = check.record if type(check.record) is dict else None
    parts = [f"<section id=\"loop-{number}\" class=\"loop\"><h2>{text(check.name)} {badge(result['result'])}</h2>",
             "<dl>", f"<dt>循环目录</dt><dd>{link(check.loop_dir, check.folder, page_dir)}</dd>",
             f"<dt>记录</dt><dd>{link(check.loop_dir / 'loop.json', check.record_path, page_dir)}</dd>"]
    if record:
        parts += [f"<dt>情景</dt><dd>{text(record.get('scenario'))}</dd>",
                  f"<dt>记录的停止</dt><dd>{text(recorded_stop(record))}</dd>",
                  f"<dt>内容审核</dt><dd>semantic_review: {text(record.get('semantic_review'))}</dd>"]
    parts.append("</dl>")
    parts += ["<h3>发现</h3>", findings_list(result["findings"]) or "<p>没有问题：停止与证据一致。</p>",
              findings_list(result["remarks"])]
    parts += rounds_part(check, page_dir)
    if record:
        parts += handoff_part(record, check, page_dir)
    return "\n".join(parts) + "</section>"


def rounds_part(check, page_dir):
    """The rounds as --explain derives them; where the record could not be read, why (the findings above say it)."""
    if not check.judged:
        return ["<h3>逐轮</h3><p class=\"note\">记录读不出、形状不对或核对没能做完，无法逐轮说明：原因见上面的发现。</p>"]
    from verifier.explain import views
    try:
        top, each, end = views(check)
    except Exception as exc:  # a record shaped in a way nobody foresaw: the findings above still say what is wrong
        return [f"<h3>逐轮</h3><p class=\"note\">记录里有无法逐轮说明的内容（{text(type(exc).__name__)}）。</p>"]
    parts = ["<h3>逐轮</h3>", "<ul class=\"steps\">" + "".join(map(line_item, top)) + "</ul>"]
    for round_, lines in each:
        parts.append(f"<div class=\"round\"><h4>{text(lines[0])}</h4><ul class=\"steps\">"
                     + "".join(map(line_item, [*offsets_lines(round_), *lines[1:]])) + "</ul>"
                     + child_link(check, round_, page_dir) + "</div>")
    if not each:
        parts.append("<p class=\"note\">这个循环没有做任何尝试：停下它的是下面第 1 轮的检查。</p>")
    parts += ["<h4>停止</h4>", "<ul class=\"steps\">" + "".join(map(line_item, end)) + "</ul>"]
    return parts


def offsets_lines(round_):
    """The attempt's start and end on the monotonic clock, and its child's own recorded duration."""
    entry, child = round_.entry, round_.child
    start, end = entry.get("started_offset"), entry.get("finished_offset")
    duration = child.get("duration") if child else None
    said = [f"  单调时钟：开始 {seconds(start)}，结束 {seconds(end)}"]
    said.append(f"  子运行自己的用时：{seconds(duration)}（它的 run.json 记下的 duration_seconds）" if child else
                "  子运行自己的用时：没有子运行记录")
    return said


def seconds(value):
    return f"{value:.3f} 秒" if type(value) in (int, float) else "没有读数"


def child_link(check, round_, page_dir):
    child_run = round_.entry.get("child_run")
    if type(child_run) is not str:
        return ""
    target = check.workspace.root / child_run
    return f"<p>证据：{link(target, check.show(child_run), page_dir, within=check.workspace.root)}</p>"


def handoff_part(record, check, page_dir):
    """Each attempt's feedback, as recorded, and the hand-off to a person, its files linked where they are."""
    parts = []
    attempts = record.get("attempts") if type(record.get("attempts")) is list else []  # the verdict says why not
    feedback = [(entry.get("attempt"), entry.get("feedback")) for entry in attempts
                if type(entry) is dict and type(entry.get("feedback")) is dict]
    if feedback:
        parts += ["<h3>反馈</h3><ul>"] + [f"<li>第 {text(number)} 次尝试：{text(said.get('error_type'))}："
                                         f"{text(said.get('message'))}</li>" for number, said in feedback] + ["</ul>"]
    handoff = record.get("handoff")
    if type(handoff) is dict:
        inspect = handoff.get("inspect") if type(handoff.get("inspect")) is list else []
        done = handoff.get("done") if type(handoff.get("done")) is list else []
        root = check.workspace.root
        files = [link(root / item, check.show(item), page_dir, within=root) if type(item) is str else text(item)
                 for item in inspect]
        parts += ["<h3>交接给人</h3><dl>", f"<dt>停在</dt><dd>{text(handoff.get('stopped_at'))}</dd>",
                  "<dt>做了什么</dt><dd><ul>" + "".join(f"<li>{text(item)}</li>" for item in done) + "</ul></dd>",
                  "<dt>要看的文件</dt><dd><ul>" + "".join(f"<li>{item}</li>" for item in files) + "</ul></dd>",
                  f"<dt>要决定什么</dt><dd>{text(handoff.get('decide'))}</dd></dl>"]
    return parts
