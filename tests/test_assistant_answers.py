"""The offline demo answers what was asked: follow-ups read as the learner wrote them, the sentence that answers shown.

Tuning questions written from the notes for the classes of wrong answers a learner met (never from a held-out set):
PARTS, single questions whose answer is a part of a list item, a reason given by the sentence after an instruction,
what happens otherwise, or the notes' words for a learner's (碎, 等多久); CHATS, conversations whose follow-ups
name a new subject of any kind (a number, a Latin name, Chinese words), point back with 它, or ask with no subject
at all. Each carries the note and the phrases the shown text must hold. OFF_TOPIC, questions on topics no note covers
that share only ordinary words with some note, and ON_TOPIC, learners' questions that must keep their answers while
the offline demo judges what a question is about (`ranking.Index.topic`, `ranking.Index.about`). Then one test per
rule, each failing when that rule's line alone is broken (`tests/mutants_answers.py`).
"""
import re
import sys
import unittest

from tests.support import ROOT
from tests.test_assistant_honest import ask, shown

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
import app  # noqa: E402
from assistant import demo_model, notes, passages, ranking, showing  # noqa: E402
from assistant.followup import read_conversation  # noqa: E402

PARTS = [  # (note, question, phrases the shown text must hold)
    ("A12", "审核人确认内容正确之后，还要记录什么？", ("在什么时间",)),
    ("A12", "人工审核通过时要记下哪些信息？", ("审核了哪个版本",)),
    ("A02", "每个块除了正文，还要保存哪些信息？", ("来源编号和位置",)),
    ("A09", "截断历史时要注意什么？", ("不要只删掉工具调用",)),
    ("A09", "摘要这种做法有什么缺点？", ("摘要会丢失细节",)),
    ("A12", "机械检查通过了但还没人看过，报告里该怎么写？", ("语义审核待定",)),
    ("A01", "建索引这一步是在线做还是离线做？", ("这一步离线完成",)),
    ("A01", "文档更新了以后索引要怎么办？", ("文档更新时重建",)),
    ("A04", "写示例的时候要注意什么？", ("覆盖边界情况",)),
    ("A09", "什么情况下适合用 /reset 重新开始？", ("话题已经改变",)),
    ("A10", "比较引文之前换行符要怎么处理？", ("统一为 LF",)),
    ("A07", "为什么计时不能用系统时间？", ("手动修改",)),
    ("A10", "引文为什么不能改写？", ("无法机械地判断",)),
    ("A02", "为什么每个块都要保存来源编号和位置？", ("方便后续引用和核查",)),
    ("A04", "为什么提示词里要写应该怎么做，而不只是不要做什么？", ("明确的替代动作",)),
    ("A06", "网页里的文字为什么不能当成指令？", ("不应改变程序的规则",)),
    ("A07", "为什么检查时间要放在每一轮开始之前？", ("写了一半的文件",)),
    ("A10", "为什么只能在引文标注的那个来源里查找？", ("来源编号标错了也发现不了",)),
    ("A04", "为什么一次只改提示词的一处？", ("才能知道是哪处修改",)),
    ("A07", "交接的时候为什么不能只写一句“任务失败”？", ("从头再查一遍",)),
    ("A08", "不加随机抖动会怎样？", ("同一时刻一起重试",)),
    ("A05", "用例集里没有期望为空的用例会怎样？", ("总能找到点什么",)),
    ("A06", "如果有的工具调用没有返回结果会怎样？", ("拒绝下一次请求",)),
    ("A10", "引文不设最小长度会怎样？", ("几乎总能匹配上",)),
    ("A10", "不统一换行符会出什么问题？", ("误判",)),
    ("A02", "块切得太碎会怎样？", ("失去意义",)),
    ("A08", "重试之间要等多久？", ("先等 1 秒",)),
    ("A08", "退避的时候每次等几秒？", ("先等 1 秒",)),
    ("A08", "单次等待最长等多久？", ("30 秒",)),
    ("A02", "chunk 切得太大有什么坏处？", ("混着多个主题",)),
]
CHATS = [  # [first question, (note, follow-up, phrases), ...]
    ["调用 API 遇到 429，重试之间要等多久？", ("A08", "为什么还要加个随机数？", ("同一时刻一起重试",)),
     ("A08", "换成 401 呢？", ("401、403",))],
    ["BM25 是什么？", ("A03", "它适合搜什么样的词？", ("专有名词",))],
    ["向量检索是怎么工作的？", ("A03", "它有什么不足？", ("不一定敏感",))],
    ["429 要不要重试？", ("A08", "那 503 呢？", ("5xx",))],
    ["中文资料每块切多少字？", ("A02", "按 token 算呢？", ("200 到 500",))],
    ["引文可以改写吗？", ("A10", "那翻译呢？", ("翻译",))],
    ["什么是回归测试？", ("A05", "用例集要放在哪里管理？", ("版本管理",))],
    ["截断历史是什么做法？", ("A09", "它会丢掉什么？", ("早期交代的重要信息",))],
    ["RRF 是用来干什么的？", ("A03", "是不是越复杂越好？", ("越复杂越好",))],
    ["工具执行出错了还要返回结果吗？", ("A06", "要写些什么？", ("说明失败的原因",))],
    ["Retry-After 头是什么意思？", ("A08", "要等多久？", ("至少等待这么长时间",))],
    ["机械检查都通过了就可以发布吗？", ("A12", "那谁来判断内容对不对？", ("读懂内容的人",))],
    ["单调时钟是什么？", ("A07", "Python 里用哪个函数？", ("time.monotonic()",))],
    ["system prompt 里放什么？", ("A04", "那用户消息呢？", ("每次变化的部分",))],
    ["“最多 3 次”是什么意思？", ("A07", "那报告里次数怎么写？", ("第 2/3 次",))],
    ["JSON Schema 是用来干什么的？", ("A06", "程序执行前还要检查哪些？", ("是否在权限范围内",))],
    ["400 错误要不要重试？", ("A08", "那 401 呢？", ("401、403",)), ("A08", "换成 503 的话呢？", ("5xx",))],
    ["向量检索有什么缺点？", ("A03", "那 BM25 呢？", ("不理解同义表达",))],
    ["摘要这种做法是怎么做的？", ("A09", "它有什么问题？", ("丢失细节",))],
    ["命中率是什么指标？", ("A05", "那平均倒数排名呢？", ("排得越靠前",))],
    ["引文检查怎么做？", ("A10", "换行符要怎么处理？", ("统一为 LF",)), ("A10", "为什么？", ("误判",))],
    ["Agent 的权限应该怎么给？", ("A12", "模型说它已经检查过了，可以吗？", ("不能代替独立的验证",))],
    ["重试要不要有预算？", ("A08", "超过了怎么办？", ("把最后一次错误报告出来",))],
    # follow-ups with words of their own and no subject ("一定要用吗？"), written after the rules above
    ["混合检索是什么？", ("A03", "一定要用吗？", ("用评估集对比",))],
    ["RAG 是什么？", ("A01", "适合什么场景？", ("资料会更新",))],
    ["截断是怎么做的？", ("A09", "会有什么问题？", ("重要信息会丢失",))],
    ["什么是指数退避？", ("A08", "上限一般设多少？", ("30 秒",))],
    ["引文要怎么检查？", ("A10", "标点能去掉再比吗？", ("改写过的句子也能通过",))],
    ["评估用例至少包括什么？", ("A05", "期望结果怎么写比较好？", ("期望命中的段落或笔记 id",))],
    ["提示词怎么管理？", ("A04", "一次改几处比较好？", ("一次只改一处",))],
    ["轮数上限是干什么的？", ("A07", "还有哪些情况要提前停？", ("同样的失败重复出现",))],
    ["工具结果要怎么交还给模型？", ("A06", "出错了也要交吗？", ("也要返回一条结果",))],
    ["人工审核要记录什么？", ("A12", "审完又改了内容呢？", ("重新审核",))],
    ["向量检索是怎么工作的？", ("A03", "换了嵌入模型要做什么？", ("重新计算向量",))],
    ["上下文窗口是什么？", ("A09", "超过了会怎样？", ("直接报错",))],
    # the way learners talk (啥, 咋, 呢), written after all the rules above
    ["BM25 咋打分的？", ("A03", "那它有啥缺点？", ("不理解同义表达",))],
    ["top-k 一般取多少？", ("A01", "取多了会咋样？", ("前 3 到 5 段",))],
    ["few-shot 示例有啥讲究？", ("A04", "放几个比较好？", ("一两个",))],
    ["429 是啥意思？", ("A08", "额度用完了也能重试吗？", ("重试没有用",))],
    ["重置是干嘛的？", ("A09", "啥时候该用？", ("话题已经改变",))],
    ["回归测试咋做？", ("A05", "用例失败了直接改期望行不行？", ("先判断是系统退步了",))],
    ["单调时钟是啥？", ("A07", "为啥不用系统时间？", ("手动修改",))],
    ["工具调用是谁执行的？", ("A06", "删文件这种也直接执行吗？", ("按权限规则决定是否执行",))],
    ["引文为啥要逐字？", ("A10", "那全角半角标点算一样吗？", ("不同的字符",))],
    ["API 报 401 咋办？", ("A11", "要塞回对话让模型处理吗？", ("立即停止并报告给人",))],
    ["chunk 要不要重叠？", ("A02", "重叠有啥代价？", ("索引变大",))],
    ["审核通过了能直接发布吗？", ("A12", "那改了内容之后呢？", ("重新审核",))],
]
# measured when these rules were written; before them 19 of 30 parts and 37 of 50 turns
AT_LEAST_PARTS, AT_LEAST_TURNS = 29, 45
# Off-topic questions in several styles, each sharing with some note only an asking or function word (才能、到底、
# 怎么回事、可以、结果), a word a note uses once in passing (工作、写代码、复习) or where two words meet, around a
# topic no note covers. Every one must find nothing; before the topic rule 8 of these 24 did (the rest answered
# "没有把握…" with passages, two of them quoting one note with confidence).
OFF_TOPIC = [
    # cooking
    "做红烧排骨的步骤是什么？", "为什么我做的菜结果总是有问题？", "红烧肉到底要炖多久才能软烂？", "做酸奶的结果总是太稀，问题出在哪？",
    # programming topics the notes never mention
    "Python 的装饰器到底是什么？", "编译器是怎么工作的？", "写代码的时候变量名怎么取比较好？", "Go 语言的 goroutine 到底是怎么回事？",
    # daily life
    "银行卡密码输入错误三次会怎样？", "求职信应该包含哪些内容？", "洗衣机漏水是怎么回事，可以自己修吗？", "手机流量用完了怎么办？",
    "可以用洗洁精洗水果吗？", "空调制冷效果差可能是什么问题？",
    # learning, health
    "怎么才能提高睡眠质量？", "考试前一天晚上应该复习什么？", "普通话发音不标准怎么才能纠正？", "怎么才能把毛笔字练好？",
    "学游泳到底要多久才能学会？", "背单词用什么方法记得牢？", "怎样才能把字写得好看？", "为什么我的多肉植物总是烂根，到底是怎么回事？",
    "炒股的结果总是亏钱，问题在哪里？", "孩子数学应用题总是做错怎么办？",
]
# On-topic questions in learners' words (note, question, the phrase the shown text must hold), written with the
# off-topic ones: chatty words no note has (拿回来、写好、修好、干嘛、照着等), words a note uses once or twice, a
# learner's word for the note's (切分), numbers. Every one was answered from its note with the phrase before the
# topic rule, and must stay so.
ON_TOPIC = [
    ("A01", "检索的时候一般拿回来几段就够了？", "前 3 到 5 段"), ("A01", "先让模型写好回答再去找证据，为啥不行？", "只能凭记忆作答"),
    ("A01", "资料经常更新的话，适合用 RAG 吗？", "资料会更新"), ("A02", "重叠留太多会有什么副作用？", "索引变大"),
    ("A02", "改了切法之后要重新跑评估吗？", "重新运行评估"), ("A02", "一块切 300 字还是 800 字才合适？", "300 到 800 字"),
    ("A03", "用户写“切分”，笔记里写的是“分块”，关键词检索能找到吗？", "不理解同义表达"), ("A04", "示例要写几个才够？", "一两个"),
    ("A04", "资料里的文字能不能当指令来执行？", "不当作指令执行"), ("A05", "感觉回答还行，算不算做过评估？", "不是评估"),
    ("A05", "线上出了一个错，修好以后还要干嘛？", "加成一个新用例"), ("A06", "循环要不要设个上限？", "最多轮数和总时间"),
    ("A06", "网页里写着让模型忽略规则，模型该听吗？", "不应改变程序的规则"), ("A07", "最多试 3 次，是总共 3 次吗？", "一共 3 次"),
    ("A07", "计时用系统时间会出什么问题？", "手动修改"), ("A08", "服务端让我等多久，我要照着等吗？", "至少等待这么长时间"),
    ("A08", "遇到 503 能重试吗？", "5xx"), ("A09", "模型老是被前面的错回答带偏，咋办？", "/reset"),
    ("A10", "引文能翻译成英文再写吗？", "不能改写"), ("A12", "模型说它已经检查过了，还需要人看吗？", "不能代替独立的验证"),
]


def holds(note, answer, phrases):
    text, cited = shown(answer)
    return note in cited and all(phrase in text for phrase in phrases)


def read(*questions):
    """(the last question as read, the subject it carried)."""
    reading = read_conversation(questions, demo_model.vocabulary())
    return reading.question, reading.carried


def passage(note_id, question):
    loaded = notes.load_notes()
    weights = ranking.index_of(loaded.values()).query(notes.normalize(question))
    return passages.answering_passage(loaded[note_id], question, weights)


class TuningSetsTest(unittest.TestCase):
    def test_the_part_asked_for_is_shown(self):
        self.assertEqual(len(PARTS), 30)
        held = [question for note, question, phrases in PARTS if holds(note, ask(question), phrases)]
        self.assertGreaterEqual(len(held), AT_LEAST_PARTS, sorted({q for _, q, _ in PARTS} - set(held)))

    def test_follow_ups_are_read_as_written(self):
        held = turns = 0
        for first, *follow_ups in CHATS:
            history = []
            ask(first, history)
            for note, question, phrases in follow_ups:
                held += holds(note, ask(question, history), phrases)
                turns += 1
        self.assertEqual(turns, 50)
        self.assertGreaterEqual(held, AT_LEAST_TURNS)


class FollowUpReaderTest(unittest.TestCase):
    def test_a_number_stands_in_place_of_the_number_asked_before(self):
        self.assertEqual(read("调用 API 遇到 429，重试之间要等多久？", "为什么还要加个随机数？", "换成 401 呢？"),
                         ("调用 API 遇到 401，重试之间要等多久？", ()))  # nothing of the question about jitter
        self.assertEqual(read("400 错误要不要重试？", "那 401 呢？", "换成 503 的话呢？"), ("503 错误要不要重试？", ()))

    def test_a_number_is_a_subject_of_its_own(self):
        self.assertEqual(read("429 要不要重试？", "401 怎么办？"), ("401 怎么办？", ()))

    def test_a_pronoun_stands_for_the_subject_and_the_rest_stays_as_asked(self):
        self.assertEqual(read("BM25 是什么？", "它适合搜什么样的词？"), ("BM25适合搜什么样的词？", ("BM25",)))
        self.assertEqual(read("截断历史是什么做法？", "它会丢掉什么？"), ("截断历史会丢掉什么？", ("截断", "历史")))
        self.assertEqual(read("摘要这种做法是怎么做的？", "它有什么问题？"), ("摘要有什么问题？", ("摘要",)))
        self.assertIn("丢失细节", quoted_of(ask("它有什么问题？", self.history("摘要这种做法是怎么做的？"))))
        self.assertEqual(read("向量检索是什么？", "它和 BM25 有什么区别？"), ("向量检索和 BM25 有什么区别？", ("向量检索",)))
        answer = ask("它适合搜什么样的词？", self.history("BM25 是什么？"))
        self.assertIn("（接着上一问，“它”指“BM25”，理解为：BM25适合搜什么样的词？）", answer)
        self.assertNotIn("没有写出问的是什么", answer)

    def test_only_a_pronoun_said_first_is_the_subject_left_out(self):
        self.assertEqual(read("Agent 的权限应该怎么给？", "模型说它已经检查过了，可以吗？"),
                         ("Agent、权限，模型说它已经检查过了，可以吗？", ("Agent", "权限")))  # 它 is the model

    def test_a_question_lent_as_words_is_no_name_for_a_pronoun(self):
        self.assertEqual(read("工具执行出错了还要返回结果吗？", "它有什么要求？"),
                         ("工具执行出错了还要返回结果吗，它有什么要求？", ("工具执行出错了还要返回结果吗",)))

    def test_a_question_with_words_of_its_own_keeps_them_and_says_so(self):
        self.assertEqual(read("RRF 是用来干什么的？", "是不是越复杂越好？"), ("RRF，是不是越复杂越好？", ("RRF",)))
        self.assertEqual(read("向量检索是什么？", "那 BM25 有什么缺点？"), ("那 BM25 有什么缺点？", ()))  # its own
        self.assertEqual(read("机械检查都通过了就可以发布吗？", "那谁来判断内容对不对？"),
                         ("发布，那谁来判断内容对不对？", ("发布",)))  # 那: it leans on the answer before
        said = ask("那谁来判断内容对不对？", self.history("机械检查都通过了就可以发布吗？"))
        self.assertIn("（接着上一问“机械检查都通过了就可以发布吗？”，也按“发布”来找。）", said)
        bare = ask("为什么？", self.history("429 要不要重试？"))
        self.assertIn("（这一问没有写出问的是什么，接着上一问“429 要不要重试？”，按“429、重试”来找。）", bare)

    def test_a_name_said_twice_is_carried_once(self):
        self.assertEqual(read("429 要怎么处理？", "那要等多久？"), ("429，那要等多久？", ("429",)))  # 等多久 asks

    def test_a_new_word_takes_the_place_of_its_like_or_joins_the_question(self):
        self.assertEqual(read("切块的时候块太大会怎样？", "那太小呢？"), ("切块的时候块太小会怎样？", ()))
        self.assertEqual(read("对话历史太长了怎么处理？", "那用摘要呢？"), ("用摘要对话历史太长了怎么处理？", ()))
        self.assertEqual(read("向量检索有什么缺点？", "那 BM25 呢？"), ("BM25有什么缺点？", ()))

    def history(self, *questions):
        history = []
        for question in questions:
            ask(question, history)
        return history


class AnsweringSentenceTest(unittest.TestCase):
    def test_a_reason_is_the_sentence_after_the_instruction(self):
        self.assertIn("无法机械地判断", passage("A10", "引文为什么不能改写？"))
        note = notes.Note("B01", "# 水果\n\n苹果很甜。香蕉要冷藏。冷藏后不易变黑。\n")
        self.assertEqual(passages.answering_passage(note, "香蕉为什么要冷藏？", {"香蕉": 1.0, "冷藏": 1.0}),
                         "香蕉要冷藏。冷藏后不易变黑。")
        example = notes.Note("B01", "# 水果\n\n苹果很甜。香蕉要冷藏。例如放进冰箱。放久了也不易变黑。\n")
        self.assertEqual(passages.answering_passage(example, "香蕉为什么要冷藏？", {"香蕉": 1.0, "冷藏": 1.0}),
                         "放久了也不易变黑。")  # the example between them is skipped
        apart = notes.Note("B01", "# 水果\n\n苹果很甜。香蕉要冷藏。\n\n香蕉很软。\n")  # a new paragraph explains nothing
        self.assertEqual(passages.answering_passage(apart, "香蕉为什么要冷藏？", {"香蕉": 1.0, "冷藏": 1.0}), "香蕉要冷藏。")

    def test_what_happens_otherwise_is_the_sentence_that_says_so(self):
        self.assertIn("没有这类用例", passage("A05", "用例集里没有期望为空的用例会怎样？"))
        self.assertIn("否则大量客户端", passage("A08", "不加随机抖动会怎样？"))
        self.assertIn("如果有的调用没有结果", quoted_of(ask("如果有的工具调用没有返回结果会怎样？")))

    def test_otherwise_points_back_to_the_sentence_before(self):
        note = notes.Note("B01", "# 水果\n\n苹果很甜。香蕉要放冰箱。否则香蕉会很快变黑变软。\n")
        self.assertEqual(passages.answering_passage(note, "香蕉变黑", {"香蕉": 1.0, "变黑": 1.0}),
                         "香蕉要放冰箱。否则香蕉会很快变黑变软。")

    def test_a_kind_asked_for_is_a_list_of_examples(self):
        self.assertIn("专有名词", passage("A03", "BM25适合搜什么样的词？"))

    def test_two_list_items_are_never_one_passage(self):
        quoted = passage("A09", "什么情况下适合用 /reset 重新开始？")
        self.assertTrue(quoted.startswith("重置："), quoted)

    def test_learners_words_for_the_notes_words(self):
        self.assertIn("失去意义", quoted_of(ask("块切得太碎会怎样？")))
        self.assertTrue(ask("重试之间要等多久？").count("先等 1 秒") == 1)
        self.assertNotIn("等多久", demo_model.vocabulary())  # how a question asks is no subject name


class ShownWholeTest(unittest.TestCase):
    def test_a_list_item_is_shown_whole(self):
        self.assertIn("截断：只保留最近的若干轮，删除最早的消息。实现简单，但早期交代的重要信息会丢失。截断时要保持消息结构完整",
                      quoted_of(ask("截断历史时要注意什么？")))

    def test_an_unsure_answer_shows_its_items_whole_too(self):
        first = notes.Note("B01", "# 甲\n\n做法如下：\n\n- 苹果：先洗。洗完再切成块。\n- 梨：去皮。\n")
        second = notes.Note("B02", "# 乙\n\n苹果很甜。\n")
        answer = showing.compose([first, second], "苹果洗完", {"苹果": 1.0, "洗完": 1.0})
        self.assertIn("最相关的原文", answer)
        self.assertIn("“苹果：先洗。洗完再切成块。”（B01《甲》）", answer)

    def test_in_a_list_the_item_that_answers_is_shown_whole(self):
        text = quoted_of(ask("人工审核通过时要记下哪些信息？"))
        self.assertIn("- 人工审核已通过：审核人确认内容正确，并记录是谁、在什么时间、审核了哪个版本。", text)
        self.assertIn("- 机械检查未通过：有明确的规则错误…", text)  # the others cut at their first clause

    def test_a_list_keeps_its_opening_line(self):
        self.assertTrue(quoted_of(ask("预算用完了怎么办？")).startswith("除了预算用完，还有几种应当提前停止的情况："))

    def test_an_item_too_long_is_shown_up_to_the_passage(self):
        body = "\n\n- 苹果：很甜。" + "香蕉很软" * 30 + "。\n"
        start = body.index("苹果")
        self.assertEqual(showing._shown(body, (start + 3, start + 6), 60), "苹果：很甜。")
        self.assertEqual(showing._shown(body, (start + 3, start + 6), 240), body.strip()[2:])


class TopicTest(unittest.TestCase):
    """What the offline demo answers by: a question's topic (`ranking.Index.topic`) and a note about it (`about`)."""

    def test_off_topic_questions_find_nothing_and_say_what_was_searched(self):
        for question in OFF_TOPIC:
            with self.subTest(question=question):
                answer = ask(question)
                self.assertEqual(shown(answer)[1], [])
                self.assertIn("笔记中没有找到相关内容（搜索过：", answer)
                for phrase in demo_model.search_phrases(question):
                    self.assertIn(f"“{phrase}”", answer)

    def test_on_topic_questions_keep_their_answers(self):
        missed = [question for note, question, phrase in ON_TOPIC if not holds(note, ask(question), (phrase,))]
        self.assertEqual(missed, [])

    def test_words_the_notes_lack_weigh_by_their_length(self):
        index = ranking.Index([notes.Note("B01", "# 水果\n\n苹果香甜。桌子很稳。\n")])
        self.assertEqual(sum(index.topic("今天天气").values()), 3.0)  # four characters, two words
        self.assertEqual(sum(index.query("今天天气").values()), 1.5)  # what search weighs: the stretch once
        self.assertEqual(index.topic("量子苹果")["量子"], 1.5)  # 子 meets 苹果; a stretch is at least a word
        self.assertEqual(index.topic("红烧桌苹果")["红烧"], 1.5)  # 桌, written in 桌子, belongs to 苹果's seam
        self.assertEqual(index.topic("红烧梨苹果")["红烧"], 2.25)  # no note writes 梨: a third character the notes lack

    def test_a_character_no_note_writes_is_a_word_of_its_own(self):
        index = ranking.Index([notes.Note("B01", "# 水果\n\n苹果香甜。桌子很稳。\n")])
        self.assertEqual(index.topic("桌苹果")["苹果"], index.query("苹果")["苹果"])
        self.assertEqual(sum(weight for term, weight in index.topic("桌苹果").items() if term != "苹果"), 0.0)
        self.assertEqual(index.topic("梨苹果")["梨苹"], 1.5)  # only seams hold 梨, and no note writes it
        self.assertEqual(index.topic("苹果梨香甜")["苹果"], index.query("苹果")["苹果"])
        self.assertEqual(index.topic("苹果梨香甜")["果梨"], 1.5)  # between two seams, counted once

    def test_search_weighs_as_before(self):
        self.assertEqual([hit["note_id"] for hit in notes.search("向量还能接着用")], ["A03", "A02", "A01"])
        self.assertEqual([hit["note_id"] for hit in notes.search("才能提高睡眠质量")], ["A12", "A04"])

    def test_a_note_is_about_a_word_it_names_or_keeps_using(self):
        index = ranking.Index([notes.Note("B01", "# 水果\n\n苹果香甜。苹果很脆。香蕉软。\n别名：梨子\n"),
                               notes.Note("B02", "# 家具\n\n桌子很稳。工作认真，计划周全。摘要在此。Python 与 401。\n别名：摘要\n")])
        fruit, furniture = index.notes
        self.assertTrue(index.about(fruit, {"水果": 1.0}))  # its title
        self.assertTrue(index.about(fruit, {"梨子": 1.0}))  # its alias line
        self.assertTrue(index.about(fruit, {"苹果": 1.0}))  # used twice
        self.assertFalse(index.about(fruit, {"香蕉": 1.0}))  # used once, in passing
        self.assertFalse(index.about(fruit, {"苹果": 0.0}))  # a term of no weight (a seam) is no evidence
        self.assertFalse(index.about(furniture, {"苹果": 1.0}))  # not held
        self.assertTrue(index.about(furniture, {"python": 1.0}))  # a Latin word
        self.assertTrue(index.about(furniture, {"401": 1.0}))  # a number

    def test_two_words_in_one_sentence_are_about_the_question(self):
        index = ranking.Index([notes.Note("B02", "# 家具\n\n桌子很稳。工作认真，计划周全。周全。\n")])
        note = index.notes[0]
        self.assertFalse(index.about(note, {"工作": 1.0}))
        self.assertTrue(index.about(note, {"工作": 1.0, "计划": 1.0}))  # said together, each once
        self.assertFalse(index.about(note, {"工作": 1.0, "作认": 1.0}))  # two bigrams of one word
        self.assertFalse(index.about(note, {"桌子": 1.0, "计划": 1.0}))  # each once, in different sentences

    def test_a_lone_character_counts_only_as_a_name(self):
        index = ranking.Index([notes.Note("B02", "# 家具\n\n桌子很稳，稳稳的。摘要在此。\n别名：摘要\n")])
        note = index.notes[0]
        self.assertFalse(index.about(note, {"稳": 1.0}))  # written three times, yet inside any word
        self.assertTrue(index.about(note, {"摘": 1.0}))  # the alias line names 摘要 so: 要 is a stop character

    def test_a_learners_word_for_the_notes_word_is_about_it(self):
        index = ranking.Index([notes.Note("B01", "# 切块\n\n块太小就不好。\n")])
        self.assertTrue(index.about(index.notes[0], {"太碎": 1.0}))  # 太碎 counts as 太小, used once

    def test_the_demo_drops_a_note_that_is_not_about_the_question(self):
        question = "写代码的时候变量名怎么取比较好？"  # A07 says 写代码 once, in passing
        searches = [{"name": "search_notes", "arguments": {"query": "写代码"}, "error": False,
                     "content": '[{"note_id": "A07", "title": "预算与停止条件", "snippet": "写代码时"}]'}]
        self.assertEqual(demo_model.ranked_candidates(searches, question), [])
        self.assertNotEqual(demo_model.ranked_candidates(searches, "写代码时次数怎么和上限比较？"), [])


class PageScriptTest(unittest.TestCase):
    def test_only_the_http_status_is_the_pages_failure(self):
        throws = re.findall(r"if \(([^)]*(?:\)[^)]*)?)\) throw new Error\(data\.error", app.PAGE)
        self.assertEqual(throws, ["!response.ok"])  # an answer's `error` is the raw detail of a stop


def quoted_of(answer):
    return shown(answer)[0]


if __name__ == "__main__":
    unittest.main()
