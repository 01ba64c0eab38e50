"""What verify_ask finds, as data: a kind with fields (where: the turn, attempt or field), its sentence made here.

`SENTENCES` holds every kind: whether it is `fail` (no honest run of the assistant writes it: the record or
the log was edited) or `human` (an honest machine can produce it: a killed process, a Ctrl-C, a clock step, a
slow machine: a person decides), and its Chinese sentence. `Verdict` gathers findings and says the result.
"""

SENTENCES = {
    # reading the record
    "not_plain": ("fail", "{where} 是{kind}，不是普通文件：笔记助手只在这里写普通文件，核对时没有打开它。"),
    "too_large": ("fail", "{where} 超过了读取上限（{cap} 字节）：一个问题的记录只有几十 KiB，这不是笔记助手写的文件。"),
    "unreadable": ("human", "{where} 无法读取（{error}）：文件在，但当前用户打不开它；请恢复读取权限后再核对。"),
    "duplicate_key": ("fail", "{where} 里键 {key} 出现了不止一次：哪个值算数说不准，笔记助手从不这样写，记录被改动过。"),
    "not_json": ("fail", "{where} {error}：笔记助手先写好再改名，不会留下不完整或不合法的记录，记录被改动或损坏了。"),
    "not_object": ("fail", "{where} 的顶层不是 JSON 对象：笔记助手写的记录是一个对象（question-run/1），记录被改动过。"),
    "schema": ("fail", "{where} 的 schema 是 {value}，不是 question-run/1：这不是笔记助手写的问题记录。"),
    "field": ("fail", "{where} 应是{expected}，记录里是 {value}：笔记助手不会这样写，记录被改动过。"),
    # what the program always asks with
    "limits": ("fail", "limits.{field} 是 {value}，而 {program} 总是用 {expected}：记录的限额被改过，按它判断不算数。"),
    "other_kind": ("human", "这是 kind 为 {value} 的记录：它的限额由启动它的程序决定，请用那个程序的核对（例如 verify_loop.py）。"),
    "demo_sent": ("fail", "{where}：离线演示模型不发 HTTP 请求，记录里却有请求或 token 用量。"),
    # the turns
    "turn_number": ("fail", "{where} 的编号是 {value}，应是 {expected}：轮次被删掉、插入或调换过。"),
    "past_cap": ("fail", "{where}：上限是每个问题 {cap} 次模型请求，上限在请求之前检查，不会有第 {turn} 轮。"),
    "no_attempt": ("fail", "{where} 没有任何 HTTP 尝试，却不是因为期限用完（gave_up 不是 deadline）：真实模型的每一轮至少发一次请求。"),
    "retry_number": ("fail", "{where} 的 retry 是 {value}，应是 {expected}：重试被删掉、插入或调换过。"),
    "too_many_retries": ("fail", "{where}：最多重试 {max_retries} 次，这一轮却有 {count} 次尝试。"),
    "body_not_growing": ("fail", "{where} 的请求体 {value} 字节，不比上一轮的 {before} 字节大：每次请求都带着前面的对话和"
                                 "上一轮的回应与结果，只会变大，轮次被删掉、插入或调换过。"),
    "body_changed": ("fail", "{where} 的请求体（{field}）和这一轮第 1 次尝试不同：重试发的是同一个请求体。"),
    "outcome": ("fail", "{where}：status {status} 和 error {error} 不可能同时出现（{why}）。"),
    "charged": ("fail", "{where}：计入 {value}，按规则应计入 {expected}（{why}）。"),
    "overshoot": ("fail", "{where}：已用 {used} + 本次上限 {bound} = {total}，超过了 token 预算 {budget}：这次请求不会被放行（预算从不超支）。"),
    "retried_not_retryable": ("fail", "{where}：上一次尝试（{error}，status {status}）按规则不重试，这里却重试了。"),
    "retried_past_cap": ("fail", "{where}：服务端要求等待 {hint:g} 秒，超过 60 秒时不提前重试，这里却重试了。"),
    "wait_not_hint": ("fail", "{where}：服务端要求等待 {hint:.3f} 秒（retry-after），记录的 wait 是 {wait:.3f} 秒：等待要照服务端说的。"),
    "wait_not_backoff": ("fail", "{where}：wait {wait:.3f} 秒不在退避范围 {shortest:.3f}–{longest:.3f} 秒之内。"),
    "gap_short": ("fail", "{where}：距上一次尝试结束只有 {gap:.3f} 秒，比记下的 wait {wait:.3f} 秒短：客户端等满了才重试。"),
    "offsets_backwards": ("fail", "{where}：{field} {value:.3f} 早于前面的 {before:.3f}：时刻只会往后走，记录被改动过。"),
    "past_deadline": ("fail", "{where}：在问题开始后 {value:.3f} 秒开始，整个问题的期限是 {deadline:g} 秒：期限用完后不再发请求。"),
    "limit_wrong": ("fail", "{where}：这次尝试的时限 {value:.3f} 秒应是 timeout 与剩余时间中较小的 {expected:.3f} 秒。"),
    "overran": ("human", "{where}：这次尝试用了 {value:.3f} 秒，超过它的时限 {limit:.3f} 秒：机器可能很忙，请人看一下。"),
    "wait_past_deadline": ("fail", "{where}：等待 {wait:.3f} 秒会超过问题剩下的 {left:.3f} 秒，客户端不会去等，而是立即停下。"),
    "gave_up_missing": ("fail", "{where}：最后一次尝试失败了，却没有记下为什么不再尝试（gave_up）。"),
    "gave_up_wrong": ("fail", "{where}：gave_up 是 {value}，按规则应是 {expected}（{why}）。"),
    "gave_up_left": ("fail", "{where}：gave_up.left {value:.3f} 秒比最后一次尝试结束时剩下的 {expected:.3f} 秒还多。"),
    "gave_up_left_short": ("human", "{where}：gave_up.left {value:.3f} 秒比最后一次尝试结束时剩下的 {expected:.3f} 秒"
                                    "少得多：机器可能很忙，请人看一下。"),
    "gave_up_extra": ("fail", "{where}：最后一次尝试成功了，却记着 gave_up。"),
    "went_on": ("fail", "{where}：这一轮已经以 {stop} 结束，后面却还有第 {next} 轮。"),
    "reply_missing": ("fail", "{where}：请求成功了，却没有记下回应（reply）。"),
    "reply_extra": ("fail", "{where}：没有成功的请求，却记着回应（reply）。"),
    "usage": ("fail", "{where}：usage 和最后一次尝试收到的不一致。"),
    "call_id_repeated": ("fail", "{where}：工具调用 id {value} 在这个问题里出现了不止一次：每个结果只能对应一个调用。"),
    "results": ("fail", "{where}：{why}。"),
    "guards": ("fail", "{where}：guards.{field} 是 {value}，从前面各轮推出来应是 {expected}。"),
    "stop": ("fail", "stop 是 {value}，从记录推出来应是 {expected}（{why}）。"),
    "answer": ("fail", "answer_sha256 不是最后一轮回应文字的哈希：answered 的回答就是模型的那段文字。"),
    "refused": ("fail", "refused：{why}。"),
    "tokens": ("fail", "tokens.{field} 是 {value}，从各次尝试推出来应是 {expected}。"),
    "requests": ("fail", "requests 是 {value}，记录里一共有 {expected} 次 HTTP 尝试。"),
    "elapsed": ("fail", "elapsed {value:.3f} 秒早于最后一次尝试结束的 {expected:.3f} 秒。"),
    # an honest machine can write these
    "running": ("human", "stop 还是 running：写记录的进程在问题结束之前就停了（被强行结束，或还在运行）。请看看是哪种情况。"),
    "interrupted": ("human", "这个问题被 Ctrl-C（或终止信号）中断了：记录完整可用，但没有结论可核对；请人决定是否重新提问。"),
    "wall_clock": ("human", "ended_at（{ended}）早于 started_at（{started}）：墙上时钟被调过（例如对时），请人看一下。"),
    "interrupted_tokens": ("human", "tokens.used 是 {value}，各次尝试计入的合计是 {expected}：中断可能落在记账和记录之间，请人看一下。"),
    # the server's own log
    "log_unreadable": ("human", "服务端记录 {where} 读不出来（{error}）：无法对照，请检查这个文件。"),
    "log_line": ("fail", "服务端记录 {where} 第 {line} 行不是 mock 写的 JSON 行（{why}）：服务端记录被改动过。"),
    "log_cut": ("human", "服务端记录 {where} 的最后一行不完整：mock 可能正写着就被强行结束了，请人看一下。"),
    "log_backwards": ("fail", "服务端记录第 {line} 行的时刻 {value:.3f} 早于上一行的 {before:.3f}：mock 按收到的顺序写，时刻只会往后走。"),
    "log_number": ("fail", "服务端记录里请求编号 {value} 出现了不止一次：mock 每个请求编一个号。"),
    "log_missing": ("fail", "{where}收到了回应（status {status}），服务端记录里却没有这个请求（run={run}）：服务端记录少了一行，或这次尝试是加上去的。"),
    "log_extra": ("fail", "服务端记录第 {line} 行（run={run}，retry_count={retry}，status {status}）在问题记录里没有对应的尝试：有请求被藏起来了。"),
    "log_extra_running": ("human", "服务端记录第 {line} 行（run={run}）还没写进问题记录：写记录的进程没有写完就停了。"),
    "log_differs": ("fail", "{where}：{field} 和服务端记录第 {line} 行不同（问题记录 {value}，服务端 {expected}）。"),
    "log_gap": ("fail", "{where}：服务端两次收到请求相隔 {gap:.3f} 秒，比记下的 wait {wait:.3f} 秒短：客户端没有等够就重试了。"),
}


class Finding:
    """One thing a check found: KIND (a key of SENTENCES) with the fields its sentence names."""

    def __init__(self, kind, **fields):
        self.kind, self.fields = kind, fields

    @property
    def severity(self):
        return SENTENCES[self.kind][0]

    def sentence(self):
        return SENTENCES[self.kind][1].format(**self.fields)

    def __repr__(self):
        return f"Finding({self.kind!r}, {self.fields!r})"


class Verdict:
    """The findings about one record; its result is fail, needs_human or pass."""

    def __init__(self):
        self.findings = []

    def add(self, kind, **fields):
        self.findings.append(Finding(kind, **fields))

    def kinds(self):
        return [finding.kind for finding in self.findings]

    def result(self):
        severities = {finding.severity for finding in self.findings}
        return "fail" if "fail" in severities else "needs_human" if severities else "pass"

    def sentences(self, severity):
        return [finding.sentence() for finding in self.findings if finding.severity == severity]
