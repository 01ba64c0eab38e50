"""What verify_loop finds, as data: each finding a kind with fields, its Chinese sentence made from SENTENCES alone.

Part of verify_loop (the command line). Every problem and note the loop check (verifier/), `--explain`'s "≠" lines
and the class check (classroom/) report is a `Finding`: a KIND, a key of SENTENCES, and the FIELDS its sentence
names (paths, values, counts, other findings). What a finding means is its kind: the class check groups by it, the
reports, the grades comments, the feedback and the pages carry it; its words are made only by `sentence()`, from
the table, so rewording a sentence changes no grouping, no result and no test that asserts kinds. The table is
listed in docs/loop/TEACHER.md (a test compares the two).

Each entry of SENTENCES is (severity, sentence) or (severity, sentence, the student's sentence) where the student
reads other words (their feedback never names another student). Severities: `fail` (no honest machine leaves
this: the loop fails), `human` (an honest machine can: a person decides), `remark` (a transport changed a whole
file: said, changes nothing), `differs` (a "≠" line of --explain: the record says otherwise than the evidence),
`packaging`, `incomplete`, `note` and `aside` (the class check's row), `comment` (the grades file), `part` (words
inside other sentences). In a sentence, `{field}` is the field as text (a finding as its own sentence), `{field:j}`
a recorded value as its JSON (visible, cut), `{field:l}` recorded text (visible, cut), `{field:n}` a list joined by
、 (`{field:;}` by ；, `{field:,}` by a comma, `{field:q}` each in 「」, `{field:jn}` each as its JSON, `{field:j/}`
each as its JSON joined by /), `{field:p}` three names of a list and how many there are (`{field:p2}`, `{field:p6}`:
two, six), `{field:t}`
seconds as a person reads a clock step, `{field:g}` an error type's Chinese gloss (cli.py's), `{field:_}` the text
with a space before it when it starts with a path or a field name; any other spec is Python's (`{seconds:.3f}`).

Shares cli.py's visible() (the one rule of what is shown escaped); imports nothing of what it verifies.
"""
import json

from cli import gloss, visible

SHOWN_CHARS = 300  # of a recorded value inside a message: an honest one is far shorter
SHOWN_PROBLEMS = 10  # problem lines said per loop (and per student in a class): the rest are counted, not listed


def one_line(text, limit=SHOWN_CHARS):
    """Recorded TEXT inside a message (or a whole message quoting one): visible(), and cut after LIMIT characters
    with its length said, so a record (up to 1 MiB) can neither fake a line (U+2028 splits a line for many
    readers) nor flood the output."""
    text = visible(text)
    return text if len(text) <= limit else f"{text[:limit]}…（共 {len(text)} 个字符）"


def shown(value):
    """A value as the record's reader sees it in the file (JSON), not as Python prints it; as one_line() says it."""
    try:
        return one_line(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return one_line(str(value))


def names_said(names, most=3):
    """A few NAMES, then how many there are in all: a list a person reads, however many a submission holds."""
    names = [str(name) for name in names]
    return "、".join(names[:most]) + (f" 等 {len(names)} 个" if len(names) > most else "")


def duration(seconds):
    """SECONDS as a person reads a clock step: seconds, minutes, hours or days."""
    for unit, size in (("天", 86400), ("小时", 3600), ("分钟", 60)):
        if seconds >= 2 * size:
            return f"{round(seconds / size)} {unit}"
    return f"{round(seconds)} 秒"


class Finding:
    """One thing a check found: KIND (a key of SENTENCES) with the FIELDS its sentence names. Two findings of one
    kind and the same fields are one cause (key()). A plain class: dataclasses would cost every call its import."""

    __slots__ = ("kind", "fields")

    def __init__(self, kind, /, **fields):
        if kind not in SENTENCES:
            raise KeyError(f"no sentence for the finding kind {kind!r}")
        self.kind, self.fields = kind, fields

    @property
    def severity(self):
        return SENTENCES[self.kind][0]

    def sentence(self, student=False):
        """The Chinese sentence of this finding (STUDENT: the words its student reads, where they differ)."""
        entry = SENTENCES[self.kind]
        template = entry[2] if student and len(entry) > 2 else entry[1]
        return template.format_map(_Fields(self.fields, student))

    __str__ = sentence

    def key(self):
        """What makes two findings one cause: the kind and every field's value (findings inside by their keys)."""
        return self.kind, tuple(sorted((name, _key(value)) for name, value in self.fields.items()))

    def __eq__(self, other):
        return isinstance(other, Finding) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def texts(self):
        """Every text among the fields, findings inside included (what a finding names: paths, files, values)."""
        for value in self.fields.values():
            yield from _texts(value)

    def mentions(self, text):
        return any(text in value for value in self.texts())

    def map(self, change):
        """This finding with CHANGE applied to every text among its fields (paths said from another folder)."""
        return Finding(self.kind, **{name: _mapped(value, change) for name, value in self.fields.items()})

    def __repr__(self):
        return f"Finding({self.kind!r}, {self.fields!r})"


def _key(value):
    if isinstance(value, Finding):
        return value.key()
    if isinstance(value, (list, tuple)):
        return tuple(_key(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((str(name), _key(item)) for name, item in value.items()))
    return repr(value)


def _texts(value):
    if isinstance(value, Finding):
        yield from value.texts()
    elif isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item)


def _mapped(value, change):
    if isinstance(value, Finding):
        return value.map(change)
    if isinstance(value, str):
        return change(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_mapped(item, change) for item in value)
    return value


class _Fields(dict):
    """A finding's fields as its sentence formats them (see the module's docstring for the specs)."""

    def __init__(self, fields, student):
        super().__init__(fields)
        self.student = student

    def __getitem__(self, name):
        return _Value(dict.__getitem__(self, name), self.student)


class _Value:
    __slots__ = ("value", "student")

    def __init__(self, value, student):
        self.value, self.student = value, student

    def __format__(self, spec):
        value = self.value
        if isinstance(value, Finding):
            value = value.sentence(self.student)
        if spec in LISTS and not isinstance(value, (list, tuple)):
            return str(value)  # a finding said instead of a list ("不导出", "提交本身")
        if spec in SPECS:
            return SPECS[spec](value)
        return format(value, spec)


def spaced(text):
    """TEXT after a Chinese word: a space before a path or a field name, as the workspace writes them."""
    return f" {text}" if text[:1].isascii() else text


SPECS = {"": str, "j": shown, "l": one_line, "p": names_said, "p2": lambda names: names_said(names, 2),
         "p6": lambda names: names_said(names, 6), "q": lambda items: "、".join(f"「{item}」" for item in items),
         "t": duration, "g": gloss, "_": spaced,
         "n": lambda items: "、".join(map(str, items)), ";": lambda items: "；".join(map(str, items)),
         ",": lambda items: ", ".join(map(str, items)), "jn": lambda items: "、".join(map(shown, items)),
         "j/": lambda items: "/".join(map(shown, items))}
LISTS = {"n", ";", ",", "q", "p", "p2", "p6", "jn", "j/"}


def at_most(found, most=SHOWN_PROBLEMS):
    """FOUND (findings) as a person is shown them: the first MOST, then one finding counting the others."""
    found = list(found)
    if len(found) <= most:
        return found
    return found[:most] + [Finding("more", count=len(found) - most)]


def said(kind, **fields):
    """The sentence of a finding made on the spot (for words that are no finding of a record: a totals line)."""
    return Finding(kind, **fields).sentence()


# --- the table ---------------------------------------------------------------------------------------------------
SENTENCES = {
    # one loop: its folder and its record
    "loop_unlistable": ("human", "{folder} 无法查看（{error_type:g}，{error_type}）：它在，但当前用户看不了，这不等于记录缺失；"
                                 "请恢复读取权限后再核对。"),
    "loop_link": ("fail", "{folder} 是符号链接或联接点：循环目录必须是记录本身，链接可能指向另一个循环的证据。"),
    "loop_not_folder": ("fail", "{folder} 是{entry}，不是文件夹：循环只会在这里建文件夹，核对时没有打开它。"),
    "loop_twins": ("fail", "{folder} 与 {others:p} 的名称只差大小写（或 Unicode 写法）：在 Windows 和 macOS 上它们是同一个文件夹，"
                           "子运行也无法分清属于哪一个。"),
    "loop_copy": ("human", "{folder} 是 {original} 的一份逐字节相同的副本（云同步或在资源管理器里复制文件夹时会这样）：它不是另一个"
                           "循环，也不是改动；核对的是 {original} 本身。请删掉这份副本（或把它移出 loop-runs/）再交。"),
    "evidence_folder_link": ("fail", "{folder} 是符号链接或联接点：证据必须就在这个工作区里，链接可能指向别人的记录。"),
    "evidence_folder_not_folder": ("fail", "{folder} 是{entry}，不是文件夹：程序只会在这里建文件夹，核对时没有打开它。"),
    "workspace_links": ("fail", "{links:p} 是符号链接或联接点：循环和运行的证据必须就在这个工作区里，课程的程序从不做链接，"
                                "链接可能指向别人的记录。"),
    "record_missing": ("human", "{record} 不存在：循环可能在写下第一份记录之前就被中断了，没有子运行。请看看 {folder} 里还剩什么；"
                                "这个名称已用过，请用新名称重新运行。"),
    "record_lost": ("fail", "{record} 不存在，而已有本循环的子运行 {children:n}：循环在启动子运行之前就写好了记录，记录被删除了。"),
    "record_link": ("fail", "{record} 是{entry}：记录必须是这个文件本身。"),
    "record_not_plain": ("fail", "{record} 是{entry}，不是普通文件：循环只会在这里写普通文件，核对时没有打开它。"),
    "record_too_large": ("fail", "{record} 超过了读取上限（{mib} MiB）：循环写下的记录只有几 KiB，这不是它写的文件，核对时没有读完它。"),
    "record_duplicate_key": ("fail", "{record} 里键 {key:j} 出现了不止一次：哪个值算数说不准，程序从不这样写，记录被改动过。"),
    "record_cut": ("fail", "{record} {error}：循环先把记录写到磁盘再改名，不会留下空的或被截断的记录，记录被改动或损坏了。"),
    "record_not_json": ("fail", "{record} {error}：循环写的记录是 UTF-8 的标准 JSON，行尾一致，记录被改动或损坏了。"),
    "mixed_line_ends": ("part", "行尾有的是 LF、有的是 CRLF：整体转换行尾不会这样，是有人改动过其中几行"),
    "record_unreadable": ("human", "{record} 无法读取（{error_type:g}，{error_type}）：文件在，但当前用户打不开它，这不等于记录缺失；"
                                   "请恢复读取权限后再核对。"),
    "record_not_object": ("fail", "{record} 的顶层是{json}，不是 JSON 对象：循环写的记录是一个对象（{schema}），记录被改动过。"),
    "transport": ("remark", "{note}"),
    "transport_at": ("remark", "{where}：{note}"),
    "check_crashed": ("fail", "核对 {record} 时遇到无法解释的内容（{error_type}：{error}）：记录可能被改动过。"),
    # the shape of a record
    "shape_not_object": ("fail", "loop.json 应为一个 JSON 对象（{schema} 记录）。"),
    "fields_missing": ("fail", "loop.json 缺少字段：{fields:n}。"),
    "segments_wrong": ("fail", "segments 是 {value:j}：应为循环的单调时钟运行过的各段（从未续跑的循环只有一段），每段有 started_at"
                               "（UTC 时间）、started_offset（第一段是 0）、wall_minus_monotonic（与单调时钟原点同时读的日历时间，秒）"
                               "和 elapsed_seconds；续跑过的，除最后一段外每段还有 ended（keyboard_interrupt、terminated、killed）"
                               "和 lower_bound（只有 killed 是 true），除第一段外每段还有 after_attempt 和 gap_seconds；只有刚认领名称、"
                               "还没有任何读数的 running 记录是空的。"),
    "schema_wrong": ("fail", "schema 是 {value:j}，应为 {expected}。"),
    "id_wrong": ("fail", "id 是 {value:j}：应为循环建立记录时随机生成的 32 位小写十六进制。"),
    "run_wrong": ("fail", "run 是 {value:j}，与目录名 {folder:j} 不符（或不是合法的循环名）。"),
    "scenario_unknown": ("fail", "scenario 是 {value:j}，不是已知情景（{known:n}）。"),
    "budget_wrong": ("fail", "budget 是 {value:j}：max_attempts 应为 1-5 的整数，max_seconds 应为 0-300 秒，attempt_timeout 为 null"
                             " 或 0.1-300 秒。"),
    "status_unknown": ("fail", "status 是 {value:j}，不是循环的状态（{known:n}）。"),
    "reason_wrong": ("fail", "reason 是 {value:j}，与 status {status:j} 不配。"),
    "error_type_wrong": ("fail", "error_type 是 {value:j}：只有 unexpected_error 才记录 error_type，且必须记录。"),
    "semantic_review_wrong": ("fail", "semantic_review 是 {value:j}：循环从不判断内容，只能是 pending。"),
    "api_calls_wrong": ("fail", "actual_api_calls 是 {value:j}：循环不调用模型，只能是 0。"),
    "context_wrong": ("fail", "context 应记录 {files} 个受监视文件的逐文件哈希，且合并指纹与它们一致。"),
    "attempts_not_list": ("fail", "attempts 应为尝试记录的数组。"),
    "attempts_too_many": ("fail", "attempts 有 {count} 项：--max-attempts 最多是 {most}，循环从不记录更多的尝试，记录被改动过"
                                  "（没有逐项核对）。"),
    "blocked_unexpected": ("fail", "blocked_proposal 只在 permission_boundary 停止时记录，且那时必须记录被拦下的提议。"),
    "blocked_shape": ("fail", "blocked_proposal 应有字符串字段 action、target、reason。"),
    "handoff_wrong": ("fail", "handoff：除 needs_review 外的每个停止都要写明 stopped_at、done、inspect（含 loop.json 与每个子运行的"
                              " run.json）和具体的 decide（不能只说“请处理”），needs_review 与 running 没有 handoff。"),
    "elapsed_wrong": ("fail", "elapsed_seconds 是 {value:j}，应为不小于 0 的秒数（单调时钟的读数，诚实的循环远不到 {most} 秒）。"),
    "times_wrong": ("fail", "started_at 应为 UTC 时间（如 2026-01-01T00:00:00Z）；finished_at 在结束后记录，running 时为 null。"),
    "unknown_fields": ("fail", "{where} 有循环从不写的字段：{fields:n}：{schema} 记录里没有它们，记录被改动过；"
                               "请用新名称重新运行循环，不要手改记录。"),
    "attempt_entry": ("part", "attempts 第 {number} 项"),
    "attempt_fields_missing": ("fail", "{where} 缺少字段（应有 {keys:n}）。"),
    "attempt_numbering": ("fail", "{where} 记录为第 {value:j} 次、子运行 {child:j}：尝试必须按 1..n 依次记录，第 {number} 次的子运行是"
                                  " {expected}（有尝试被删除、调换了顺序，或指向了别的循环的子运行）。"),
    "candidate_shape": ("fail", "{where} 的 candidate 应为 export 一个已知样例，并带 sha256。"),
    "feedback_shape": ("fail", "{where} 的 feedback 应为 null 或 {{error_type, message}}。"),
    "state_wrong": ("fail", "{where} 的 state 是 {value:j}：只有最后一次尝试可以是 running（记录仍在进行）、unknown（被中断或意外"
                            "停止）或 timed_out（超过单次时限），续跑判断过的尝试可以是 unknown。"),
    "status_state": ("fail", "{where} 的 status 是 {value:j}，与 state {state:j} 不配。"),
    "attempt_start_wrong": ("fail", "{where} 的 started_at 是 {started:j}、started_offset 是 {offset:j}：应为 UTC 时间与循环第一份"
                                    "记录之后不小于 0 的秒数（诚实的循环远不到 {most} 秒）。"),
    "attempt_finish_wrong": ("fail", "{where} 的 finished_at 是 {finished:j}、finished_offset 是 {offset:j}"
                                     "（state {state:j}）：结束的尝试两者都记录（UTC 时间与秒数），进行中的两者都是 null。"),
    "decision_missing": ("fail", "{where} 没有记录决定（decision 为 null）：只有记录仍是 running、被中断或 needs_human 时，"
                                 "最后一次尝试才可以没有决定。"),
    "decision_shape": ("fail", "{where} 的 decision 是 {value:j}：应为 {{{keys:,}}}，继续时是 continue/first_failure，停止时是 stop"
                               " 加上停止原因（{stops:n}），why 是不为空的说明，decided_offset 是做决定时单调时钟的读数。"),
    "decision_shape_old": ("fail", "{where} 的 decision 是 {value:j}：应为 {{{keys:,}}}，继续时是 continue/first_failure，停止时是"
                                   " stop 加上停止原因（{stops:n}），why 是不为空的说明。"),
    "timeout_wrong": ("fail", "{where} 的 timeout 是 {value:j}、state 是 {state:j}：只有 timed_out 的尝试记录 timeout，且必须有"
                              " seconds（等于 budget.attempt_timeout {limit:j}）、waited_seconds 和 inventory。"),
    # each attempt against its child
    "candidate_not_scripted": ("fail", "第 {number} 次尝试的候选 {sample} 不是情景 {scenario} 的脚本会提出的（脚本依次为：{script:n}；"
                                       "根据之前的反馈，这一次是 {choice}）。"),
    "script_none": ("part", "不导出"),
    "candidate_hash": ("fail", "第 {number} 次尝试的候选哈希与循环开始时 {file} 的指纹不符。"),
    "children_unlistable": ("human", "第 {number} 次尝试的子运行 {child} 无从查看：{runs}/ 无法列出（{error_type:g}，{error_type}），"
                                     "这不等于子运行缺失；请恢复读取权限后再核对。"),
    "child_other_case": ("fail", "记录的子运行 {child} 不存在，只有名称只差大小写的 {found}：目录被改名或换过。"),
    "child_deleted": ("fail", "第 {number} 次尝试记录的子运行 {child} 不存在：证据被删除或移走了。"),
    "attempt_unfinished_no_child": ("human", "第 {number} 次尝试状态为 {state}，而 {child} 不存在：这次尝试可能还没来得及创建子运行。"
                                             "请核对 {runs}/ 与 {record} 后再决定。"),
    "attempt_unfinished": ("human", "第 {number} 次尝试状态为 {state}（子运行 {child} 的 {child_state}）：请核对 {child}/ 里实际留下的"
                                    "输入与产物，不能认定这次动作没做。"),
    "child_state_none": ("part", "run.json 不存在或读不出"),
    "child_state": ("part", "run.json 为 {status:l}"),
    "unfinished_child_failed": ("fail", "第 {number} 次尝试（state {state}）的子运行 {child} 没有通过独立核对：{said}循环怎样结束都"
                                        "不改变子运行留下的证据，它被改动过。"),
    "child_needs_human": ("human", "子运行 {child} 需要人工查看：{said}"),
    "child_failed": ("fail", "子运行 {child} 没有通过独立核对：{said}"),
    "child_failed_at_stop": ("human", "子运行 {child} 没有通过独立核对：{said}"),
    "summary_mismatch": ("fail", "第 {number} 次尝试的摘要与子运行 {child}/run.json 不符：{fields:;}。摘要被改动过，或指向了别的运行。"),
    "mismatch": ("part", "{field}（摘要 {recorded:j}，子运行 {actual:j}）"),
    "child_twins": ("fail", "{twins:p} 的名称只差大小写（或 Unicode 写法）：在 Windows 和 macOS 的磁盘上它们是同一个文件夹，放不到"
                            "一起，其中至少一个是另外做出来的，可能是被藏起来的一次尝试。"),
    "child_links": ("fail", "{links:p} 是符号链接或联接点：子运行必须是这个工作区里真实的文件夹，链接可能指向别的运行的证据"
                            "（无论 loop.json 是否记录了它）。"),
    "child_time_format": ("fail", "{child}/run.json 的 {field} 是 {value:j}，不是 UTC 时间（如 2026-01-01T00:00:00Z）。"),
    "run_name_taken": ("human", "{run} 在循环开始尝试时已被占用（不是本循环创建的）：请核对它来自哪里。"),
    "run_after_loop": ("human", "{run} 以本循环的名称为前缀、loop.json 没有记录它，但它在循环结束之后才开始，不是本循环的尝试（可能是"
                                "之后用 harness.py --run {name} 单独运行的）：请核对它的来历；以后单独运行请换一个不像子运行的名称。"),
    "run_unrecorded": ("fail", "{run} 以本循环的名称为前缀，但 loop.json 没有记录它：可能多执行了一次却从摘要里抹掉了。"),
    # the course files
    "context_changed": ("fail", "这些文件与循环开始时的指纹不同：{files:n}。请找到与记录相符的版本再核对（没有 git 时：从课程 ZIP 里"
                                "重新取出原样的文件，或用改动前留的备份放回），不要改写记录里的指纹。"),
    "course_changed": ("fail", "循环开始时这些文件与{course}不同：{files:n}。学生用的课程文件被改过，这个循环不能算数；请学生换回课程"
                               "原版文件后用新名称重新运行。"),
    "course_here": ("part", "老师工作区（当前文件夹）里的课程文件"),
    "course_at": ("part", "老师工作区 {root} 里的课程文件"),
    "course_teacher": ("part", "老师的课程文件"),
    "course_differs": ("part", "{course}与它记下的 {files:n} 不同{unread}；"),
    "unread": ("part", "，子运行的产物没有按其中的 {files:n} 重新核对"),
    # older versions
    "older_schema": ("human", "{record} 的 schema 是 {schema}：由旧版本的工作区生成，{lacks}，现在的规则核对不了这些；{differ}"
                              "其余都按现在的规则核对过。请由人对照当时的说明判断，或在现在的工作区里用新名称重新运行。"),
    "lacks_v1": ("part", "它没有 id 和单调时钟的读数"),
    "lacks_v2": ("part", "它的指纹只覆盖当时的 16 个受监视文件，不含循环现在运行的模块"),
    "lacks_v3": ("part", "它的日历时间不是与单调时钟的读数同时读的，也没有记下每个决定的读数"),
    "older_release": ("human", "{record} 是用较早的课程版本 {release} 做的：{differ}其余都按现在的规则核对过。请由人对照那一版判断，"
                               "或在现在的工作区里用新名称重新运行。"),
    "version_schema": ("part", "记录格式 {schema}"),
    "version_schema_release": ("part", "记录格式 {schema}，课程版本 {release}"),
    "version_release": ("part", "课程版本 {release}"),
    "context_swapped": ("fail", "{record} 记下的课程文件是较早的版本 {release} 的，而那一版的循环写的记录是 {wrote}，写不出 {schema}："
                                "context 被换成了那一版的，记录被改动过。"),
    "schema_v3_or_older": ("part", "loop-run/3 或更早的格式"),
    "old_fields": ("fail", "{record} 的 schema 是 {schema}，却{fields:;}：那个版本的工作区写不出这样的记录，schema 被改过，记录被改动过。"),
    "old_extra_fields": ("part", "有它从不写的字段 {fields:n}"),
    "old_missing_fields": ("part", "缺少它总会写的字段 {fields:n}"),
    "old_attempts_wrong": ("fail", "{record} 的 attempts 不是至多 {most} 项的数组：循环从不这样记录，记录被改动过（没有逐项核对）。"),
    "old_scenario": ("fail", "{record} 的 scenario 是 {value:j}：{schema} 的循环只有{known:n}，记录被改动过。"),
    "old_stop": ("fail", "{record} 的停止是 {status:j}/{reason:j}：{schema} 的循环从不这样停止，记录被改动过。"),
    "old_state": ("fail", "{record} 里有尝试的 state 不是 {known:n} 之一：{schema} 的循环从不这样记录，记录被改动过。"),
    "old_context": ("fail", "{record} 的 context 不是 {schema} 的循环记下的 {count} 个文件的指纹（文件、逐文件哈希或合并指纹对不上"
                            "{named}）：记录被改动过。"),
    "old_context_extra": ("part", "，它记下了那个版本不监视的 {files:n}"),
    "old_context_extra_more": ("part", "，它记下了那个版本不监视的 {files:n} 等"),
    "old_today_code": ("fail", "{record} 的 schema 是 {schema}，而它记下的 {writers:n} 就是现在课程里的版本：现在的循环只写 {current}"
                               " 记录，写不出 {schema}，schema 被改过，记录被改动过。"),
    "in_record": ("fail", "{record}：{finding}"),
    "old_run_wrong": ("fail", "run 是 {value:j}，与目录名 {folder:j} 不符。"),
    "old_attempt_number": ("fail", "attempts 第 {number} 项记录为第 {value:j} 次：尝试必须按 1..n 依次记录。"),
    "old_budget": ("fail", "budget 是 {value:j}：max_attempts 应为 1-5 的整数，max_seconds 应为 0-300 秒。"),
    "old_elapsed": ("fail", "elapsed_seconds 是 {value:j}，应为不小于 0 的秒数。"),
    "old_blocked": ("fail", "blocked_proposal 应为 null 或有字符串字段 action、target、reason。"),
    "old_attempt_unreadable": ("fail", "attempts 第 {number} 项是 {value:j}：应为 export 一个已知样例并带 sha256，feedback 为 null 或"
                                       " {{error_type, message}}，做完的尝试记录子运行的状态。"),
    "old_child_run_wrong": ("fail", "{record} 的第 {number} 次尝试记录的子运行是 {value:j}，应为 {expected}：尝试被删除、调换了顺序，"
                                    "或指向了别的循环的子运行。"),
    "old_child_no_record": ("human", "{file} 不存在：较早版本的 harness 先建目录、后写记录，中途停下时会这样；请由人查看这个目录里"
                                     "留下了什么。"),
    "old_child_cut": ("human", "{file} {error}：较早版本写记录时没有先写到磁盘，断电或强制结束时会这样，这不是改动过的证据；"
                               "请由人查看这个目录里留下了什么。"),
    "old_child_not_json": ("fail", "{file} {error}：哪个版本的 harness 都不会这样写，记录被改动过。"),
    "old_child_not_plain": ("fail", "{error}：哪个版本的 harness 都只写普通的、只有几 KiB 的记录，这不是它写的文件。"),
    "old_child_unreadable": ("human", "{file} 无法读取（{error_type}）：请恢复读取权限后再核对。"),
    "old_child_schema": ("fail", "{file} 的 schema 是 {value}，循环记录却是 {schema}：那个版本的工作区写下的子运行是 {schemas:n}，写不出"
                                 "别的，schema 被改过，记录被改动过。"),
    "not_an_object": ("part", "不是 JSON 对象"),
    # the clocks
    "started_past_budget": ("fail", "第 {number} 次尝试开始时的读数是 {offset:j} 秒，已达到时间预算 max_seconds={budget:j}：循环在读数"
                                    "达到预算时就停下，不会再开始新的尝试，时间或预算被改动过。"),
    "reading_backwards": ("fail", "{later}（{value:j}）早于{earlier}（{before:j}）：单调时钟不会倒退，时间被改动过。"),
    "reading_origin": ("part", "循环的第一份记录"),
    "reading_attempt": ("part", "第 {number} 次尝试的 {field}"),
    "reading_elapsed": ("part", "elapsed_seconds"),
    "time_of": ("part", "{where} 的 {field}"),
    "child_longer": ("fail", "第 {number} 次尝试的子运行自己的单调时钟量得它运行了 {duration:j} 秒，比这次尝试的两个读数之间（{started:j}"
                             " 到 {finished:j}，{span:.3f} 秒）还长：它在这次尝试里运行，同一台机器的单调时钟不会这样，时间被改动过"
                             "（日历时间的跳变解释不了它）。"),
    "segment_anchor": ("fail", "{where} 的 started_at（{started}）与它的 wall_minus_monotonic（{wall:j}）不是同一个时刻：循环把同一次"
                               "日历时间的读数写成这两项，记录被改动过。"),
    "time_said": ("part", "{label}（{text}）"),
    "between": ("part", "在{first:_}与{second:_}之间"),
    "clock_breaks": ("fail", "墙上时间与单调时钟的读数至少{first}，又{second}各对不上一次，一次时钟跳变解释不了：诚实的机器不会这样，"
                             "时间被改动过。"),
    "clock_breaks_once": ("fail", "墙上时间与单调时钟的读数至少{first}各对不上一次，一次时钟跳变解释不了：诚实的机器不会这样，"
                                  "时间被改动过。"),
    "clock_set_back": ("human", "墙上时间与单调时钟的读数在一处对不上：系统时钟{where}被往回调了约 {seconds:t}（例如 NTP 校时）。"
                                "诚实的机器也会这样，这不是改动过的证据；请向运行者确认这台电脑的时钟，由人决定是否采信。"),
    "clock_slept": ("human", "墙上时间与单调时钟的读数在一处对不上：{where}电脑休眠过约 {seconds:t}，或系统时钟被往前调了这么多（单调"
                             "时钟在这段只走了 {gap:.3f} 秒）。诚实的机器也会这样，这不是改动过的证据；请向运行者确认这台电脑的时钟，"
                             "由人决定是否采信。"),
    "pause": ("human", "时间预算在中途用完，而{where}用了 {seconds:.3f} 秒（{did}，诚实的机器不到 {most} 秒）：进程被暂停过（例如"
                       " Ctrl-Z、调试器、电脑休眠）、磁盘或网络盘极慢，或者读数被改过。请向运行者确认，由人决定是否采信这个 "
                       "time_budget 停止。"),
    "pause_between": ("part", "从{since}（{start:j}）到{until}（{end:j}），"),
    "pause_in_attempt": ("part", "第 {number} 次尝试里，除了子运行自己的 {child:.3f} 秒{tool}，"),
    "tool_wait": ("part", "和替身工具的 {seconds} 秒"),
    "moment_origin": ("part", "循环写好第一份记录（单调时钟的原点）"),
    "moment_budget_check": ("part", "第 {number} 轮的预算检查"),
    "moment_attempt_end": ("part", "第 {number} 次尝试结束"),
    "moment_decision": ("part", "做决定"),
    "moment_decided": ("part", "第 {number} 次尝试的决定"),
    "moment_last_check": ("part", "停下那一轮的预算检查"),
    "doing_nothing": ("part", "循环在这两个读数之间什么也不做"),
    "doing_attempt": ("part", "提出候选、核对 23 个受监视文件、写一次记录、子运行读课程文件和写记录、独立核对子运行"),
    "doing_check_and_write": ("part", "循环只核对受监视文件、写一次记录"),
    "doing_check": ("part", "循环只核对 23 个受监视文件"),
    "doing_write": ("part", "循环只写一次记录"),
    "doing_judgement": ("part", "续跑只核对进行中的那次尝试留下的、写一次记录"),
    "moment_judged": ("part", "续跑时对第 {number} 次尝试的判断"),
    "reading_judged": ("part", "第 {number} 次尝试的 decision.decided_offset（续跑时的判断）"),
    # a resumed record: its segments and the judgement of the attempt in flight (verifier/resumed.py)
    "resume_shape": ("fail", "{where} 的 resume 是 {value:j}：应为 {{{keys:,}}}，found 是 {found:n} 之一，run_status 是子运行 "
                             "run.json 的状态或 null，segment 是做判断的那一段（从 2 起）。"),
    "resume_state": ("fail", "{where} 的 state 是 {state:j}，而 resume.found 是 {found}：没有做完的子运行（no_child、partial_child）"
                             "记为 unknown，采用的（complete_child）记为 done，已经做完的（finished_undecided）保持原样。"),
    "segments_apart": ("fail", "segments[{k}] 的 started_offset（{started:j}）不等于上一段的 started_offset 加 elapsed_seconds"
                               "（{before:j} + {elapsed:j}）：续跑从上一段最后的读数接着计时，各段首尾相接，段的时间被改动过。"),
    "model_segments": ("fail", "segments 有 {count} 段，而 model 情景的循环从不续跑（它的提议来自原来那个进程里的开发模型会话和本机服务，"
                               "loop_lab.py --resume 不接受它），只在一段单调时钟里运行：记录被改动过。"),
    "segment_gap": ("fail", "segments[{k}] 的 gap_seconds（{value:j}）不是这一段与上一段 wall_minus_monotonic 之差（{gap:.3f}）："
                            "两段之间的日历时间间隔就是这个差，记录被改动过。"),
    "judged_elsewhere": ("fail", "第 {number} 次尝试的 resume 说它在第 {segment:j} 段开始时被判断，而那一段开始时它不是进行中的最后一次"
                                 "尝试（或没有这一段）：续跑只判断它找到的那一次尝试，尝试被重新编号、删除，或记录被改动过。"),
    "adopted_finish": ("fail", "第 {number} 次尝试是续跑时采用的子运行，它的 finished_offset（{finished:j}）应是它所在那一段的结束读数"
                               "（{end:.3f}，一个上限）：记录被改动过。"),
    "judged_no_child": ("fail", "第 {number} 次尝试在续跑时被判断为 no_child（子运行不存在），而 {child} 在：续跑之后不会再建这个子运行，"
                                "判断与证据矛盾，记录或子运行被改动过。"),
    "judged_partial_gone": ("fail", "第 {number} 次尝试在续跑时被判断为 partial_child（子运行没做完，保留为证据），而 {child} 不在了："
                                    "证据被删除或移走了。"),
    "judged_partial_finished": ("fail", "第 {number} 次尝试在续跑时被判断为 partial_child（子运行没做完），而 {child}/run.json 是已结束"
                                        "的记录（status {status:j}）：做完了的子运行会被采用，判断与证据矛盾，记录被改动过。"),
    "judged_complete_unfinished": ("fail", "第 {number} 次尝试在续跑时被判断为 complete_child（采用做完了的子运行），而 {child} 的"
                                           " run.json 不是已结束的记录（status {status:j}）：判断与证据矛盾，记录被改动过。"),
    "judged_finish_time": ("fail", "第 {number} 次尝试在续跑时被判断为 complete_child，它的 finished_at（{recorded:j}）应是子运行自己"
                                   "的结束时间（{actual:j}）：记录被改动过。"),
    "judged_run_status": ("fail", "第 {number} 次尝试在续跑时被判断为 {found}，记下 run.json 的状态是 {recorded:j}，而 {child} 的是"
                                  " {actual:j}：判断与证据矛盾，记录或子运行被改动过。"),
    "judged_child_failed": ("fail", "第 {number} 次尝试（续跑时判断为 unknown）的子运行 {child} 没有通过独立核对：{said}它是留下的"
                                    "证据，被改动过。"),
    # the stop and the decisions
    "too_many_attempts": ("fail", "记录了 {count} 次尝试，超过了 budget.max_attempts={most}。"),
    "went_on": ("fail", "第 {number} 次尝试之后循环就应停止（{stop}），记录里却还有第 {next} 次尝试。"),
    "blocked_wrong": ("fail", "blocked_proposal 记录的是 {proposed:j}，情景 {scenario} 的脚本提议的却是 {expected:j}（reason 也不能"
                              "为空）：被拦下的提议被改动过。"),
    "stop_unsupported": ("fail", "记录的停止 {status}/{reason:l} 没有证据支持：{count} 次尝试之后，子运行既没有通过也没有重复失败，"
                                 "尝试预算（max_attempts={most}）没有用完，elapsed_seconds（{elapsed}）也没有达到 max_seconds，"
                                 "循环本应继续。"),
    "stop_contradicted": ("fail", "子运行与预算支持的结果是 {supported}，记录却是 {status}/{reason:l}：状态或原因与证据不符。"),
    "expected_mismatch": ("fail", "情景 {scenario} 在预算 max_attempts={most}、max_seconds={seconds} 下应为 {expected}、"
                                  "{expected_count} 次尝试，记录却是 {status}/{reason:l}、{count} 次：情景、预算或结果被改动过，或者"
                                  " samples/ 已不是课程提供的版本（预期表只适用于原样的三个样例）。"),
    "undecided": ("human", "{why}，不能按固定情景的预期判断。请{guide}核对 {children:n} 里实际发生的动作和产物，不能认定动作没做，"
                           "也不要清空重跑{resume}。"),
    "undecided_no_attempt": ("human", "{why}，不能按固定情景的预期判断。循环还没有开始任何尝试，没有子运行：请{guide}核对 {record}"
                                      " 记下的停止位置，然后用新名称重新运行{resume}。"),
    "resume_hint": ("part", "；要接着做，用 loop_lab.py --resume {name}（它先做这些核对）或新名称"),
    "why_running": ("part", "记录仍是 running：循环可能被强制结束，或保存记录失败"),
    "why_terminated": ("part", "循环被终止信号（SIGTERM 或 SIGHUP）结束"),
    "why_interrupted": ("part", "循环被 Ctrl-C 中断"),
    "why_timeout": ("part", "第 {number} 次尝试超过单次时限 {limit} 秒被终止，子运行的结果不知道"),
    "why_error": ("part", "循环因意外情况停止（{error_type:g}，error_type {error_type:l}）"),
    "handoff_guide": ("part", "对照 loop.json 的 handoff "),
    "child_listed": ("part", "{child}/"),
    "child_absent": ("part", "{child}/（不存在，可能还没创建）"),
    "no_children": ("part", "{runs}/（没有子运行）"),
    "decision_contradicted": ("fail", "第 {number} 次尝试记录的决定是 {recorded}，而它的证据支持的是 {derived}：决定与证据不符。"),
    "decision_none": ("part", "没有决定（null）"),
    "decision_continue": ("part", "继续（continue/first_failure）"),
    "decision_unknown": ("part", "继续（continue/outcome_unknown）"),
    "decision_stop": ("part", "停止（stop/{reason}）"),
    "last_stop_contradicted": ("fail", "第 {number} 次尝试之后记录的决定是停止（{decided}），循环记录的停止却是 {status}/{reason:l}："
                                       "状态或原因与证据不符。"),
    "timeout_count_wrong": ("fail", "停止原因是 {reason:l}，记为 timed_out 的尝试有 {count} 次：以 attempt_timeout 停止的循环，最后"
                                    "一次尝试就是超时的那一次，别的停止没有超时的尝试。"),
    "timed_out_finished": ("fail", "第 {number} 次尝试记为 timed_out，而子运行 {child} 的 run.json 是已结束的记录（status {status}）："
                                   "子运行做完了，这次尝试不算超时，记录被改动过。"),
    "timeout_short": ("fail", "第 {number} 次尝试记为超过单次时限 {limit} 秒，{label} 却只有 {seconds:.3f} 秒：没到时限的尝试不会被"
                              "终止，记录被改动过。"),
    "more": ("part", "…以及另外 {count} 条"),
    # a model loop's proposals (verifier/proposals.py), each from its own question record
    "api_calls_not_count": ("fail", "actual_api_calls 是 {value:j}：应是发出的 HTTP 请求次数。"),
    "api_calls_budget_wrong": ("fail", "budget.max_api_calls 是 {value:j}：--max-api-calls 只能是 1-100 的整数。"),
    "model_wrong": ("fail", "model 是 {value:j}：应是循环写的 {{source, script, url, server_log}}（本机 mock 有 script 和"
                            " server_log，--model-url 有 url）。"),
    "api_calls_not_int": ("fail", "actual_api_calls 应是整数。"),
    "attempt_model_wrong": ("fail", "第 {number} 次尝试的 model {problem}。"),
    "not_run_wrong": ("fail", "proposal_not_run {problem}（它是最后一次没有变成尝试的提议）。"),
    "entry_not_object": ("part", "应是含 {keys:n} 的对象"),
    "entry_proposal": ("part", "proposal 应是 {expected}"),
    "entry_counts": ("part", "turns 和 requests 应是非负整数"),
    "entry_tokens": ("part", "tokens 应是非负整数或 null"),
    "entry_claim_stop": ("part", "claim 应是文字或 null，stop 应是文字"),
    "proposal_record_missing": ("fail", "第 {number} 次提议的记录 {record} 不见了：每次提议都留下自己的问题记录，删掉它就没法"
                                        "核对这一轮的计数和候选。"),
    "proposals_extra": ("fail", "proposals/ 里多出 {names:jn}：循环记录没有提到这些提议，记录被改动过（例如删掉了一次尝试）。"),
    "server_log_missing": ("fail", "服务端记录 {log} 不见了：本机 mock 从启动起就写它，它是服务端自己的证据，删掉它就无法证明"
                                   "请求次数。"),
    "proposal_at": ("part", "第 {number} 次提议（{record}）"),
    "proposal_failed": ("fail", "{where}：{said}"),
    "proposal_needs_human": ("human", "{where}：{said}"),
    "proposal_identity": ("fail", "{where} 的 id 是 {id:j}、kind 是 {kind:j}：循环写的是 {expected} 和 proposal，这份记录不是"
                                  "这次提议的。"),
    "proposal_count_wrong": ("fail", "{place}的 {field} 是 {value:j}，而{where}推出的是 {derived:j}：三层计数要从提议记录推出"
                                     "来，记录被改动过。"),
    "entry_of_attempt": ("part", "第 {number} 次尝试的 model "),
    "entry_not_run": ("part", "proposal_not_run "),
    "reply_text_extra": ("fail", "{where} 以 {stop} 停下，没有最后的回答，却记着 reply_text。"),
    "reply_text_shape": ("fail", "{where} 的 reply_text 应是文字、reply_text_complete 应是 true 或 false。"),
    "reply_text_hash": ("fail", "{where} 的 reply_text 与 answer_sha256 对不上：模型的原话被改过。"),
    "claim_wrong": ("fail", "{place}的 claim 是 {value:j}，而模型最后的回答里是 {said:j}：模型说了什么只能照记录，不能改写。"),
    "candidate_not_proposed": ("fail", "第 {number} 次尝试的候选 {sample:j} 不是{where}里开发模型提出的（{proposed:j}）。"),
    "feedback_not_carried": ("fail", "{where} 的问题没有带上第 {attempt} 次尝试的反馈（错误类型和消息，原样）：每次提议都要带着"
                                     "到目前为止的反馈。"),
    "api_calls_sum": ("fail", "actual_api_calls 是 {value}，而各次提议的记录一共发出了 {sent} 次 HTTP 请求（含重试）：实际调用"
                              "次数要照记录，不能改小或改大。"),
    "api_calls_over": ("fail", "各次提议一共发出 {sent} 次 HTTP 请求，超过了 API 调用预算 {limit} 次：预算在每次请求之前检查，"
                               "不会超支。"),
    "api_budget_unspent": ("fail", "记录说 API 调用预算用完了（api_call_budget），但只发出了 {sent} 次 HTTP 请求，预算是 {limit}"
                                   " 次。"),
    "server_log_strays": ("fail", "服务端记录里有 {runs:jn} 的请求，循环记录却没有这次提议：提议的记录被删掉了。"),
    "server_log_over": ("fail", "服务端一共收到这个循环的 {count} 次请求，超过了 API 调用预算 {limit} 次。"),
    "proposal_stop_wrong": ("fail", "最后一次提议（{record}）支持的停止是 {supported}，记录却是 {recorded:j/}：停止的原因要由提议"
                                    "的记录推出。"),
    "blocked_not_proposed": ("fail", "blocked_proposal 记录的是 {value:j}，不是最后一次提议里开发模型提出的动作：被拦下的提议"
                                     "被改动过。"),
    "model_script_missing": ("human", "开发模型的脚本 {script:j} 不在这个工作区里：它不是课程文件（交作业只打包 loop-runs/和"
                                      " runs/），核对不了这个循环用的是哪个开发模型。请把脚本一起交上来，或用工作区自带的开发"
                                      "模型重新运行。"),
    # --explain's "≠" lines: what the record claims beside the verifier's own derivation
    "differs_started_late": ("differs", "循环却开始了这次尝试"),
    "differs_not_scripted": ("differs", "情景 {scenario} 的脚本第 {number} 步不会提出它（脚本：{script:n}；根据之前的反馈是 {choice}）"),
    "differs_judgement": ("differs", "子运行现在的样子是 {shows}，与续跑时记下的 {found} 不同"),
    "differs_hash": ("differs", "哈希与循环开始时 {file} 的指纹不同"),
    "differs_done_without_child": ("differs", "loop.json 却记为做完了，子运行{outcome}"),
    "differs_child_sample": ("differs", "子运行导出的是 {sample}，不是记录的候选"),
    "differs_summary": ("differs", "loop.json 的摘要却说子运行{outcome}"),
    "differs_timed_out_finished": ("differs", "记为超时，而子运行的 run.json 已经结束：做完了的尝试不算超时"),
    "differs_wait_short": ("differs", "等待没有到时限：没到时限的尝试不会被终止"),
    "differs_decision": ("differs", "循环记录的决定：{recorded}"),
    "differs_stop_went_on": ("differs", "循环记录的停止：{stop}，共 {count} 次尝试"),
    "differs_stop": ("differs", "循环记录的停止：{stop}"),
    "differs_expected": ("differs", "记录的是 {status}/{reason:l}、{count} 次尝试"),
    "outcome": ("part", "为 {status}"),
    "outcome_passed": ("part", "为 {status}：导出并通过机械检查"),
    "outcome_none": ("part", "没有结束（status 为 null）"),
    "stop_pair": ("part", "{status}/{reason:l}"),
    "stop_none": ("part", "{status:l}，没有停止原因"),
    # a class: one submission's row
    "in_loop": ("part", "{loop}：{finding}"),
    "in_loops": ("part", "{finding}（影响 {count} 个循环：{loops:p6}）"),
    "course_files_differ": ("fail", "{files:n} 与{course}不同（影响 {count} 个循环：{runs:p6}）：运行时用的课程文件被改过，这些循环"
                                    "不能算数；请学生换回课程原版文件后用新名称重新运行。"),
    "older_versions": ("human", "用旧版本的工作区做的（{versions:n}；影响 {count} 个循环：{runs:p6}）：旧版本本身不是改动，只是今天的"
                                "规则和课程文件核对不了它与现在不同的部分，其余都按今天的规则核对过。请老师对照当时的版本判断，或请学生"
                                "在现在的工作区里用新名称重新运行这些情景后再交。",
                       "你有 {count} 个循环是用旧版本的工作区做的（{versions:n}）：旧版本不是你改了什么，只是今天的核对规则核对"
                       "不了它与现在不同的部分。老师会对照当时的版本判断，也可能请你在现在的工作区里用新名称重新运行这些情景后"
                       "再交。"),
    "missing_case": ("incomplete", "缺少情景{cases:q}：没有 scenario 与预算恰好是这一行的循环。"),
    "missing_cases": ("incomplete", "缺少情景{cases:q}：没有 scenario 与预算恰好是这些行的循环。"),
    "shared_record": ("human", "与 {people} 的提交含有同一份记录：{records}。可能是互相拷贝的，也可能另有原因：请老师核对后再定"
                               "（不会自动判 fail）。",
                      "你的提交与另外 {count} 份提交含有同一份记录：{records}。老师会核对后再定。"),
    "shared_clock": ("human", "与 {people} 的提交有 {count} 个单调时钟读数和运行时长完全相同（精确到毫秒，{loops:p2}），而记录的 id"
                              " 各不相同：诚实的机器很少连同开始和结束的时刻在 {most} 个循环上都相同，记录可能是拷贝后改了 id。请老师"
                              "核对后再定（不会自动判 fail）。",
                     "你的提交与另外 {many} 份提交有 {count} 个计时读数完全相同（{loops:p2}）。老师会核对后再定。"),
    "shared_readings": ("human", "与 {people} 的提交有 {count} 个单调时钟读数和运行时长完全相同（精确到毫秒，{loops:p2}），开始和"
                                 "结束的时刻却不全相同：可能是拷贝后改了 id 和时刻，也可能是巧合（量过：一台机器上接连运行六个情景的"
                                 "诚实学生，149,878 对里有 3 对六个情景的全部 22 个读数都相同）。请老师核对后再定（不会自动判 fail）。",
                        "你的提交与另外 {many} 份提交有 {count} 个计时读数完全相同（{loops:p2}），这也可能是巧合。老师会核对后"
                        "再定。"),
    "copy_inside": ("human", "提交里有几处是同一份记录：{groups}。循环或运行可能是复制后改了名：请老师核对后再定（不会自动判 fail）。"),
    "records": ("part", "{records:n}"),
    "records_more": ("part", "{records:n} 等 {count} 份"),
    "people": ("part", "{names:n}"),
    "people_more": ("part", "{names:n} 等 {count} 人"),
    "person_id": ("part", "{name}（{id}）"),
    "groups": ("part", "{groups:;}"),
    "groups_more": ("part", "{groups:;} 等 {count} 组"),
    "pair": ("part", "{first} 与 {second}"),
    "group": ("part", "{names:p}"),
    "earlier_attempts": ("note", "较早的 {count} 次提交没有核对，只核对了最新的一次：{names:p6}。"),
    "cut_short": ("note", "{folder} 停在 {stop}（中断或单次超时），记录与证据一致：不计入任何情景，也不影响结果。"),
    "resumed_note": ("note", "{folder} 续跑过 {count} 次（loop_lab.py --resume，{result}）：续跑的循环不计入任何情景，也不代替它；"
                             "要计入情景，请用新名称重新运行一次。"),
    "orphan_children": ("note", "{children:p6} 的名称是循环 {loop} 的子运行，{folder} 却不在这份提交里：这个循环可能被删除或移走了"
                                "（用 harness.py 单独运行、恰好这样命名的除外），请核对。"),
    "roster_nobody": ("note", "不在名单：名单里没有与这份提交对应的人。"),
    "roster_several": ("note", "不在名单：这份提交与名单上不止一个人对得上（名字相同，编号也分不开），分不清是谁的。"),
    "roster_taken": ("note", "不在名单：名单上的这个人已有一份提交。"),
    # a class: the whole class, its entries, its outputs
    "course_version": ("note", "注意：至少一半的提交记录的 {files:n} 彼此相同，却与{course}不同：多半是老师工作区的课程版本与学生"
                               "运行时的不同（例如之后更新过），不是学生改了文件。由此而来的 fail 请先换成学生运行时的课程版本再核对一次。"),
    "set_aside": ("aside", "跳过 {entry}：{why}。"),
    "stray": ("aside", "跳过 {entry} 里的 {stray}：不是循环目录（loop-runs/ 里只应有循环文件夹）。"),
    "aside_document": ("part", "不是提交（没有学习平台的命名，是一份文档，例如名单或说明）"),
    "aside_moodle_part": ("part", "Moodle 里同一位学生的另一部分（不是文件提交），这位学生的提交是 {chosen}"),
    "aside_canvas_file": ("part", "Canvas 里同一位学生随作业上传的另一个文件，这位学生的提交是 {chosen}"),
    "aside_blackboard_receipt": ("part", "Blackboard 里这次尝试的回执，属于 {chosen}"),
    "aside_blackboard_file": ("part", "Blackboard 里这次尝试的另一个文件，属于 {chosen}"),
    "aside_blackboard_earlier": ("part", "Blackboard 里较早的一次尝试（{time}），只核对最新的一次（{latest}）"),
    "output_failed": ("note", "无法写出 {target}（{error_type:g}）：核对结果已打印在上面，其余的文件照样写出了；请换一个可以写入的"
                              "路径再运行一次。"),
    # a class: a submission that cannot be checked (packaging) or is refused unread
    "packaging": ("packaging", "提交的格式无法核对：{why}。请学生重新提交：在自己的工作区里运行 python3 verify_loop.py --pack 姓名.zip，"
                               "上传这个 ZIP。"),
    "entry_link": ("fail", "{entry} 是{kind}：提交必须是学生自己的文件夹或压缩包，链接可能指向别人的提交，没有核对里面的内容。"),
    "entry_unreadable": ("part", "{entry} 无法读取（{reason}）"),
    "entry_not_submission": ("part", "{entry} 是{kind}，不是文件夹，也不是 .zip 压缩包"),
    "intake_crashed": ("part", "{entry} 里有核对无法解释的内容（{error_type}），请老师打开看看"),
    "no_permission": ("part", "没有读取权限"),
    "file_and_folder": ("part", "有一个文件和一个文件夹同名"),
    "several_workspaces": ("part", "找到了 {count} 个 loop-runs/ 文件夹（{names:n}），不知道该核对哪一个"),
    "folder_unreadable": ("part", "文件夹 {entry} 无法读取（没有读取权限）"),
    "several_zips": ("part", "文件夹里有 {count} 个压缩包（{names:n}），不知道该核对哪一个"),
    "nothing_readable": ("part", "没有找到 loop-runs/，而 {first}/ 无法读取（没有读取权限）"),
    "nothing_in_git": ("part", "没有找到 loop-runs/ 和 runs/：{hint}"),
    "git_hint": ("part", "这像是一个 git 仓库，证据文件夹被 .gitignore 排除了（用 git 交作业时要 git add -f runs loop-runs）"),
    "then": ("part", "；{finding}"),
    "nothing_found": ("part", "在 {depth} 层以内没有找到 loop-runs/（里面是：{names}）"),
    "names": ("part", "{names:n}"),
    "names_more": ("part", "{names:n}等"),
    "nothing_inside": ("part", "空的"),
    "only_loop_runs": ("part", "{zip}{where}只有 loop-runs/，没有 runs/：子运行的证据不在提交里（两个文件夹要一起交）{git}"),
    "in_zip": ("part", "压缩包 {name} "),
    "inside": ("part", "{folder}/ 里"),
    "evidence_unreadable": ("part", "{where}{name}/ 无法读取（{reason}）"),
    "moodle_several": ("part", "Moodle 里这位学生有 {count} 份文件提交（{names:n}），不知道该核对哪一个"),
    "blackboard_receipt_only": ("part", "Blackboard 只有这次尝试的回执 {receipt}，没有上传的文件：这次尝试什么都没有交上来"),
    "blackboard_several": ("part", "最新一次尝试有 {count} 个文件（{names:n}），不知道该核对哪一个"),
    "zip_untrusted": ("part", "压缩包 {name} {why}"),
    "zip_not_read": ("part", "压缩包 {name} 没有读取：{error}"),
    "zip_unreadable": ("part", "压缩包 {name} 无法读取（{reason}）"),
    "zip_broken": ("part", "已损坏或不完整，打不开"),
    "zip_members": ("part", "有 {count} 个成员，超过了核对的上限 {cap}"),
    "zip_directory": ("part", "的成员目录有 {size} 字节，超过了核对的上限"),
    "zip_unpacked": ("part", "解开后超过 {mib} MiB，超过了核对的上限"),
    "zip_member_outside": ("part", "的成员 {member} {why}：整个压缩包都不能用，没有取出任何内容"),
    "zip_member": ("part", "的成员 {member} {why}"),
    "member_absolute": ("part", "是绝对路径或带盘符"),
    "member_outside": ("part", "指向压缩包外面（含 ..）"),
    "member_control": ("part", "的名称里有控制字符"),
    "member_link": ("part", "是符号链接"),
    "member_special": ("part", "不是普通文件或文件夹"),
    "member_encrypted": ("part", "加了密码（加密），无法读取"),
    "member_ratio": ("part", "解开后是压缩时的 {ratio} 倍，超过了核对的上限（{most} 倍）"),
    "zip_several_workspaces": ("part", "里有 {count} 个 loop-runs/ 文件夹（{names:n}），不知道该核对哪一个"),
    "zip_no_workspace": ("part", "在 {depth} 层以内没有 loop-runs/ 文件夹（里面是：{names}）"),
    "zip_windows_name": ("part", "的成员 {member} 的名称不能在 Windows 上作为文件名"),
    "zip_same_name": ("part", "里有两个成员都叫 {member}（大小写和 Unicode 写法也算同名）"),
    "zip_member_broken": ("part", "已损坏：成员 {member} 读不出来"),
    "zip_member_method": ("part", "的成员 {member} 用了核对不支持的压缩方式"),
    "zip_member_unextracted": ("part", "的成员 {member} 取不出来（{reason}）"),
    "zip_not_plain": ("part", "是{kind}，不是压缩包"),
    "zip_too_big": ("part", "超过了核对的上限（{mib} MiB）"),
    # the grades file's comments (classroom/grades.py reads its own back by these forms)
    "comment_pass": ("comment", "六个情景都有通过的循环。内容是否合适仍由老师审阅。"),
    "comment_incomplete": ("comment", "通过 {passed}/6 个情景，缺少：{lacking:n}。补跑缺少的情景后重新打包提交。"),
    "comment_fail": ("comment", "有记录与证据不符（{failed:n}），详见反馈文件。"),
    "submission_itself": ("part", "提交本身"),
    "comment_packaging": ("comment", "没能打开你的提交，还没有核对：请按 README「交作业」用 --pack 打包后重新提交。"),
}
