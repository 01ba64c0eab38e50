"""The offline demo answers natural questions from the right note, quoting the words that answer them.

Each question goes through the guarded loop with the offline demo model (search, read, quote).
QUESTIONS: two per note, the set the demo was first measured on; ANSWERS: another set, English
terms among them. Each carries the phrase the quote must hold (a number, a list, the named fix:
quoting the note's definition does not count). An answer counts for its note when it cites that
note, for its phrase when the quote from that note holds the phrase; quotes are verbatim.
Questions the notes do not cover still get "没有找到". Also: the ranked search, English names and
paraphrases from the notes' alias lines, follow-up questions in one conversation, the passage
rules, which hit wins a tie, and an unreadable note never cited.
"""
import functools
import json
import re
import sys
import unittest
from unittest import mock

from tests.support import ROOT

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import demo_model, notes, passages, ranking  # noqa: E402
from assistant.agent import run_question  # noqa: E402
from assistant.demo_model import DemoModel  # noqa: E402
from assistant.followup import read_conversation, subject_names  # noqa: E402

QUESTIONS = [  # (note, question, what the quote must hold)
    ("A01", "RAG 是怎么工作的？", "先查阅外部资料"),
    ("A01", "为什么要先查资料再让模型回答？", "生成时模型看不到资料"),
    ("A02", "文档应该切成多大的块？", "300 到 800 字"),
    ("A02", "相邻的块之间为什么要留一点重叠？", "关键句恰好被切断"),
    ("A03", "向量检索和关键词检索有什么区别？", "意思相近但用词不同"),
    ("A03", "中文没有空格，要怎么建索引？", "相邻两字"),
    ("A04", "一个好的提示词由哪几部分组成？", "五部分"),
    ("A04", "怎样把资料和指令分开写？", "分隔标记"),
    ("A05", "怎么评估检索效果？", "固定的用例"),
    ("A05", "什么是回归测试？", "加成一个新用例"),
    ("A06", "模型是直接执行工具的吗？", "不直接执行"),
    ("A06", "工具调用的结果要怎么交还给模型？", "连同对应的 id 放回对话"),
    ("A07", "执行循环应该什么时候停下？", "最多试几次"),
    ("A07", "为什么计时要用单调时钟？", "手动修改"),
    ("A08", "遇到 429 要不要重试？", "稍等后可以重试"),
    ("A08", "退避等待的时间怎么算？", "指数增长"),
    ("A09", "多轮对话时模型怎么记住前面说过的话？", "把历史消息一起发送"),
    ("A09", "历史消息太长了怎么办？", "截断"),
    ("A10", "引文可以改写吗？", "不能改写"),
    ("A10", "怎样让回答能被核查？", "逐字摘录的引文"),
    ("A11", "工具出错时返回给模型的信息该怎么写？", "具体、可操作"),
    ("A11", "给人看的错误提示和给模型看的有什么不同？", "写给人的"),
    ("A12", "机械检查都通过了，内容就一定对吗？", "不等于内容正确"),
    ("A12", "哪些操作必须先经过人同意？", "需要人工批准"),
]
ENGLISH = [  # questions naming a term the way learners often do, in English
    ("A04", "写 prompt 的时候一般要包含哪几块内容？", "五部分"),
    ("A02", "相邻的 chunk 重叠多少比较合适？", "10% 到 20%"),
    ("A03", "embedding 检索的原理是什么？", "余弦相似度"),
    ("A08", "被 rate limit 了还要不要重试？", "稍等后可以重试"),
    ("A04", "few-shot 示例应该怎么写？", "覆盖边界情况"),
    ("A06", "agent 的 tool call 是谁来执行的？", "不直接执行"),
    ("A09", "为什么不能用字数估算 token？", "换算差别很大"),
    ("A12", "agent 的权限应该怎么给？", "最小权限"),
]
ANSWERS = ENGLISH + [
    ("A01", "RAG 为什么不能先生成再检索？", "生成时模型看不到资料"),
    ("A01", "RAG 一次完整的请求包括哪几步？", "把文档切成段落"),
    ("A01", "检索到的段落不相关时应该怎么办？", "先改进切块或检索方式"),
    ("A02", "切块的时候一块应该切多大？要不要重叠？", "300 到 800 字"),
    ("A02", "改了切块参数以后要做什么？", "重建索引"),
    ("A03", "查错误码这种东西，用 BM25 好还是向量检索好？", "很可靠"),
    ("A03", "为什么不能把文本里的空白全部删掉？", "notable"),
    ("A04", "哪些内容放系统提示词，哪些放用户消息？", "固定不变的部分"),
    ("A05", "我改了提示词之后，怎么知道系统是变好了还是变差了？", "同一组用例"),
    ("A05", "用例集里为什么要有期望为空的用例？", "总能找到点什么"),
    ("A05", "测试没通过的时候可以直接改期望吗？", "随手改期望"),
    ("A06", "网页里写着“忽略之前的要求”怎么办？", "不是指令"),
    ("A07", "时间预算为什么不能用系统时间算？", "网络校时"),
    ("A07", "哪些情况下应该提前停止？", "同样的失败重复出现"),
    ("A07", "停下来之后交接时要写哪些信息？", "试了几次"),
    ("A08", "为什么重试要加随机抖动？", "同一时刻一起重试"),
    ("A08", "400 错误要不要重试？", "不应重试"),
    ("A09", "对话聊太久超出上下文窗口了怎么办？", "截断"),
    ("A10", "怎么检查引文是不是真的出自来源？", "子串"),
    ("A10", "比较引文的时候能不能去掉标点再比？", "改写过的句子也能通过"),
    ("A11", "写给模型的错误信息有什么要求？", "不要包含调用栈"),
    ("A11", "401 这种 API 错误应该交给谁处理？", "给人"),
    ("A12", "机械检查全部通过就能发布了吗？", "不等于内容正确"),
]
DEV = [  # written by a colleague who had not read the code: learners' words, the phrase that answers
    ("A01", "做 RAG 的时候一般捞回来几段给模型比较合适？top-k 设多少？", "前 3 到 5 段"),
    ("A01", "为啥不能让模型先把答案写出来，再去找资料给它配上出处？", "只能凭记忆作答"),
    ("A01", "我发现检索回来的段落根本不沾边，在 prompt 里让模型认真点能解决吗？", "先改进切块或检索方式"),
    ("A02", "中文文档切 chunk 的话，一块大概切多大比较合适？", "300 到 800 字"),
    ("A02", "相邻两个 chunk 之间要留多少重叠？", "10% 到 20%"),
    ("A02", "切块的时候要不要把每块属于哪个标题也带上？有什么用？", "标题路径"),
    ("A03", "BM25 跟向量检索比，到底哪种更适合搜型号、错误码这种东西？", "精确匹配"),
    ("A03", "我换了个 embedding 模型，以前算好的向量还能接着用吗？", "重新计算向量"),
    ("A03", "关键词检索和向量检索的结果想合到一起，用什么办法合并？", "RRF"),
    ("A04", "一个好维护的 prompt 通常要拆成几块来写？", "五部分"),
    ("A04", "哪些内容该放 system prompt 里，哪些该放到用户消息里？", "固定不变的部分"),
    ("A04", "在 prompt 里写一句“不要瞎编”管用吗？更好的写法是啥？", "应该怎么做"),
    ("A05", "想看检索效果好不好，一般用哪些指标打分？", "命中率"),
    ("A05", "测试用例里要不要专门放一些笔记里压根没答案的问题？", "期望为空的用例"),
    ("A05", "改完代码后有个用例挂了，我能不能直接把期望结果改掉让它通过？", "不要为了让测试通过"),
    ("A06", "工具执行时抛异常了，还需要给模型回一条结果吗？", "也要返回一条结果"),
    ("A06", "模型说要删掉某个文件，程序是不是照它说的执行就完了？", "执行权在程序手里"),
    ("A06", "agent 一直在调工具停不下来，该怎么防？", "最多轮数和总时间"),
    ("A07", "说好“最多试 3 次”，那到底是总共跑 3 次还是重试 3 次？", "一共 3 次"),
    ("A07", "算耗时的时候直接拿系统时间相减可以吗？应该用什么？", "单调时钟"),
    ("A07", "我的脚本每次报的错都一模一样，还要继续 retry 下去吗？", "大概率仍是同一结果"),
    ("A08", "调 API 碰到 429 被 rate limit 了，该怎么处理？", "稍等后可以重试"),
    ("A08", "为什么重试的等待时间里还要加一点随机的 jitter？", "同一时刻一起重试"),
    ("A08", "官方 SDK 自己已经带了 retry，我在外面再包一层会有什么问题？", "成倍增加"),
    ("A09", "估算 token 数的时候，能不能直接拿字数来凑？", "对应模型的分词器"),
    ("A09", "聊着聊着模型老被前面一个错误回答带偏，有什么办法？", "/reset"),
    ("A09", "判断会不会超出 context window 时，模型要输出的那部分也要算进去吗？", "给输出预留空间"),
    ("A10", "引文能不能让模型用自己的话概括一下写？", "逐字复制原文"),
    ("A10", "比对引文时，把标点和空格都去掉再比是不是更方便？会有什么问题？", "改写过的句子也能通过"),
    ("A10", "引文检查全过了，是不是就说明模型的回答是对的？", "不说明回答的结论正确"),
    ("A11", "工具报错只返回一句“无效输入”，模型会怎么样？", "原样重试"),
    ("A11", "报错的时候要不要把 traceback 也一起丢给模型看？", "不要包含调用栈"),
    ("A11", "API 返回 401 说密钥无效，要不要把这个错塞回对话让模型自己处理？", "立即停止并报告给人"),
    ("A12", "格式、字段、引文这些自动检查全都过了，是不是就能直接发布了？", "不等于内容正确"),
    ("A12", "审核通过以后我又改了几个字，还需要重新让人审一遍吗？", "需要重新审核"),
    ("A12", "模型自己说“我已经检查过了，没问题”，这个能当作审核通过吗？", "不能代替独立的验证"),
]
UNRELATED = ["今天天气怎么样？", "Python 的 GIL 是什么？", "怎么做红烧肉？", "股票明天会涨吗？", "推荐一部电影", "如何学好英语口语？",
             "猫为什么喜欢纸箱？", "量子计算机的原理是什么？"]
REQUIRED = {"QUESTIONS": (23, 20), "ANSWERS": (30, 27), "DEV": (35, 31)}  # (right note, answering phrase) at least
# Questions whose subject is not the word a note's title carries: 提示词 and 错误/模型 are only what they are
# about; what they ask (变好了还是变差了, 给人看 vs 给模型看) is what another note's alias line names.
SUBJECT_NOT_CONTEXT = [("A05", "我改了提示词之后，怎么知道系统是变好了还是变差了？"),
                       ("A11", "给人看的错误提示和给模型看的有什么不同？")]


def answered_from(question, history=None):
    """(outcome, the note cited first: the first source shown, or None)."""
    outcome = run_question(DemoModel(), [] if history is None else history, question, chat=history is not None)
    found = re.search(r"来源：(A\d\d)《", outcome.answer)
    return outcome, found.group(1) if found else None


@functools.cache
def asked_alone(question):
    """answered_from(QUESTION), asked once in a run of the suite: the sets of questions here are asked again by
    tests/test_assistant_honest.py, each test asserting figures of its own, and no test patches the demo while
    asking them (a test that does asks with answered_from)."""
    return answered_from(question)


def quotes_of(answer) -> list:
    """Every quoted passage the answer shows: one after "原文是：" / "原文列出的是：", or one per line of 最相关的原文."""
    return re.findall(r"(?:^|\n)“(.*?)”(?=\n|（A\d\d《)", answer, re.DOTALL)


def quote_of(answer):
    return "\n".join(quotes_of(answer))


def verbatim_pieces(quote) -> list:
    """The pieces of a shown quote that must each stand in the note as written: a quote is cut only at a clause
    boundary ("…"), and a list is shown item by item ("- " marks each on its own line)."""
    pieces = []
    for line in quote.split("\n"):
        pieces += [piece for piece in line.removeprefix("- ").split("…") if piece.strip()]
    return pieces


class NaturalQuestions(unittest.TestCase):
    def hits(self, questions):
        """(right note, phrase held, misses) over QUESTIONS; every quote from the right note is verbatim."""
        loaded = notes.load_notes()
        right = phrased = 0
        missed = []
        for expected, question, phrase in questions:
            outcome, source = asked_alone(question)
            self.assertEqual(outcome.stop, "answered")
            if source == expected:
                right += 1
                quote = quote_of(outcome.answer)
                cited = "".join(loaded[note].text for note in re.findall(r"(A\d\d)《", outcome.answer))
                for piece in verbatim_pieces(quote):
                    self.assertIn(piece, cited)  # quoted verbatim
                phrased += phrase in quote
            if source != expected or phrase not in outcome.answer:
                missed.append((question, expected, source))
        return right, phrased, missed

    def assert_required(self, name, questions):
        """Each of REQUIRED[NAME] on its own (a tuple comparison would let more right notes hide fewer phrases)."""
        right, phrased, missed = self.hits(questions)
        summary = f"right note {right}/{len(questions)}, phrase {phrased}/{len(questions)}; missed: {missed}"
        self.assertGreaterEqual(right, REQUIRED[name][0], summary)
        self.assertGreaterEqual(phrased, REQUIRED[name][1], summary)

    def test_two_natural_questions_per_note(self):
        self.assertEqual(sorted({note for note, _, _ in QUESTIONS}), sorted(notes.load_notes()))
        self.assert_required("QUESTIONS", QUESTIONS)

    def test_the_quote_holds_what_answers_the_question(self):
        self.assertGreaterEqual(len(ANSWERS), 24)
        self.assert_required("ANSWERS", ANSWERS)

    def test_questions_written_without_reading_the_code(self):
        self.assertEqual(len(DEV), 36)
        self.assert_required("DEV", DEV)

    def test_the_subject_outweighs_the_context(self):
        tested = {(note, question): phrase for note, question, phrase in QUESTIONS + ANSWERS}
        for expected, question in SUBJECT_NOT_CONTEXT:
            with self.subTest(question=question):
                self.assertIn((expected, question), tested)  # counted with its phrase in its set too
                self.assertEqual(asked_alone(question)[1], expected)
        self.assertIn("同一组用例", quote_of(asked_alone(SUBJECT_NOT_CONTEXT[0][1])[0].answer))

    def test_unrelated_questions_still_find_nothing(self):
        for question in UNRELATED:
            with self.subTest(question=question):
                outcome, source = answered_from(question)
                self.assertEqual((outcome.stop, source), ("answered", None))
                self.assertIn("笔记中没有找到相关内容", outcome.answer)


class EnglishTerms(unittest.TestCase):
    def test_search_finds_the_note_an_english_name_belongs_to(self):
        for query, note in (("prompt", "A04"), ("chunk", "A02"), ("embedding", "A03"), ("context window", "A09"),
                            ("rate limit", "A08"), ("tool call", "A06"), ("few-shot", "A04")):
            with self.subTest(query=query):
                self.assertEqual(notes.search(query)[0]["note_id"], note)

    def test_the_alias_line_is_read_but_never_quoted_or_shown(self):
        note = notes.load_notes()["A04"]
        self.assertIn(("提示词", "prompt", "prompts", "prompt engineering", "提示工程"), note.aliases)
        self.assertNotIn("别名", note.body)
        self.assertIn("别名：", note.text)
        self.assertNotIn("别名", notes.search("prompt")[0]["snippet"])

    def test_every_english_question_is_answered_from_its_note(self):
        for expected, question, _ in ENGLISH:
            with self.subTest(question=question):
                self.assertEqual(asked_alone(question)[1], expected)


class FollowUps(unittest.TestCase):
    def ask_in_turn(self, *questions):
        history = []
        return [answered_from(question, history)[0].answer for question in questions], history

    def test_a_pronoun_stands_for_the_previous_subject(self):
        answers, history = self.ask_in_turn("BM25 是什么？", "那向量检索呢？", "它的缺点是什么？")
        self.assertIn("（接着上一问，理解为：向量检索是什么？）", answers[1])
        self.assertIn("（接着上一问，“它”指“向量检索”，理解为：向量检索的缺点是什么？）", answers[2])
        self.assertIn("A03《", answers[2])
        self.assertIn("不一定敏感", quote_of(answers[2]))  # the vector search's weakness, not another note's example
        self.assertEqual([m["content"] for m in history if m["role"] == "user"],
                         ["BM25 是什么？", "那向量检索呢？", "它的缺点是什么？"])  # the learner's words are kept

    def test_a_new_subject_takes_the_previous_question(self):
        answers, _ = self.ask_in_turn("429 要不要重试？", "那 400 呢？")
        self.assertIn("理解为：400 要不要重试？", answers[1])
        self.assertIn("不应重试", quote_of(answers[1]))

    def test_how_each_question_is_read(self):
        def read(*questions):
            reading = read_conversation(questions, demo_model.vocabulary())
            return reading.question, reading.carried

        self.assertEqual(read("它的缺点是什么？"), ("它的缺点是什么？", ()))  # nothing to lean on
        self.assertEqual(read("BM25 是什么？", "工具调用的结果要怎么交还给模型？"), ("工具调用的结果要怎么交还给模型？", ()))
        self.assertEqual(read("什么是回归测试？", "那缺点呢？"), ("回归测试的缺点是什么？", ()))
        self.assertEqual(read("什么是回归测试？", "它有什么用？"), ("回归测试有什么用？", ("回归测试",)))
        self.assertEqual(read("RAG 里的 {k} 是什么？", "那 BM25 呢？"), ("BM25 里的 {k} 是什么？", ()))  # only text


    def test_names_the_notes_write_in_latin_letters_are_subject_names(self):
        vocabulary = demo_model.vocabulary()
        self.assertEqual(subject_names("BM25 和 API 是什么关系？", vocabulary), ["BM25", "API"])  # on no alias line
        self.assertEqual(subject_names("rapid 的 Json 怎么写？", vocabulary), ["Json"])  # whole words, as written
        self.assertEqual(subject_names("300 字够吗？", vocabulary), [])  # a number names nothing

class Passages(unittest.TestCase):
    def passage(self, note_id, question):
        note = notes.load_notes()[note_id]
        weights = ranking.index_of(notes.load_notes().values()).query(notes.normalize(question))
        return passages.answering_passage(note, question, weights)

    def test_a_sentence_pointing_back_comes_with_the_one_before(self):
        quoted = self.passage("A03", "查错误码，BM25 可靠吗？")
        self.assertTrue(quoted.startswith("关键词检索以 BM25 为代表"), quoted)
        self.assertIn("它对专有名词、型号、错误码", quoted)

    def test_a_list_comes_with_its_opening_line(self):
        quoted = self.passage("A09", "历史消息太长了怎么办？")
        self.assertTrue(quoted.startswith("常见做法有以下几种："), quoted)
        self.assertIn("截断：", quoted)

    def test_how_big_wants_a_number(self):
        self.assertIn("300 到 800 字", self.passage("A02", "文档应该切成多大的块？"))

    def test_a_number_is_not_a_digit_inside_an_id_nor_asked_by_a_few(self):
        note = notes.Note("B01", "# 题目\n\n这篇讲水果。编号 A99 的苹果很甜。苹果每天吃 2 个。\n")
        self.assertEqual(passages.answering_passage(note, "苹果吃多少个", {"苹果": 1.0}), "苹果每天吃 2 个。")
        self.assertEqual(passages.asking_cues("好几个苹果能一起吃吗？"), passages.asking_cues("苹果能一起吃吗？"))

    def test_a_weakness_asked_wants_a_weakness(self):
        note = notes.Note("B01", "# 题目\n\n这篇讲水果。苹果很甜，人人都爱吃。\n\n梨也有。缺点是容易坏。\n")
        quoted = passages.answering_passage(note, "苹果有啥缺点？", {"苹果": 2.0, "缺点": 0.5})
        self.assertEqual(quoted, "缺点是容易坏。")

    def test_the_note_is_chosen_by_what_its_sentences_hold_alias_names_included(self):
        note = notes.Note("B01", "# 评估\n\n修改之后都要比较结果。\n\n别名：比较结果、变好\n")
        self.assertEqual(passages.best_sentence_weight(note, "变好了吗", {"变好": 2.0}), 2.0)
        self.assertEqual(passages.best_sentence_weight(note, "变坏了吗", {"变坏": 2.0}), 0.0)  # not a name of it

    def test_the_earliest_of_equal_passages_wins(self):
        note = notes.Note("B01", "# 题目\n\n这篇讲水果。第一句讲苹果。第二句讲苹果。\n")
        self.assertEqual(passages.answering_passage(note, "苹果", {"苹果": 1.0}), "第一句讲苹果。")

    def test_the_opening_sentence_answers_only_what_is_it(self):
        note = notes.Note("B01", "# 苹果\n\n苹果是一种水果。苹果要洗干净再吃。\n")
        self.assertEqual(passages.answering_passage(note, "苹果怎么吃", {"苹果": 1.0}), "苹果要洗干净再吃。")
        self.assertEqual(passages.answering_passage(note, "苹果是什么", {"苹果": 1.0}), "苹果是一种水果。")

    def test_a_list_item_and_an_example_come_with_what_they_continue(self):
        note = notes.Note("B01", "# 题目\n\n做法如下：\n\n- 清洗：先用水冲。香蕉不用洗。\n- 切开：用刀。\n\n"
                                 "梨要去皮。例如用削皮刀。\n")
        self.assertEqual(passages.answering_passage(note, "香蕉", {"香蕉": 1.0}), "清洗：先用水冲。香蕉不用洗。")
        self.assertEqual(passages.answering_passage(note, "削皮", {"削皮": 1.0}), "梨要去皮。例如用削皮刀。")

    def test_what_the_question_asks_outweighs_its_setting(self):
        note = notes.Note("B01", "# 题目\n\n这篇讲水果。苹果洗过了。\n\n梨也有。重新洗一遍没有必要。\n")
        weights = {"苹果": 1.0, "洗过": 1.0, "重新": 1.3}  # the setting names more than what is asked
        self.assertEqual(passages.answering_passage(note, "苹果洗过了，还要重新来吗？", weights), "重新洗一遍没有必要。")
        self.assertEqual(passages.asking_cues("我改了几个字，还要审吗？"), passages.asking_cues("还要审吗？"))  # 了几个: no number asked


class DemoModelChoices(unittest.TestCase):
    def searches(self, *hit_lists):
        return [{"name": "search_notes", "arguments": {"query": "q"}, "error": False,
                 "content": json.dumps(hits, ensure_ascii=False)} for hits in hit_lists]

    def test_on_a_tie_the_hit_of_the_earlier_search_wins(self):
        twins = {note_id: notes.Note(note_id, "# 苹果\n\n苹果很甜。\n") for note_id in ("B01", "B02")}
        hit = {note_id: {"note_id": note_id, "title": "苹果", "snippet": "苹果很甜。"} for note_id in twins}
        with mock.patch.object(demo_model, "load_notes", return_value=twins):
            self.assertEqual(demo_model.best_hit(self.searches([hit["B02"]], [hit["B01"]]), "苹果")["note_id"], "B02")
            self.assertEqual(demo_model.best_hit(self.searches([hit["B01"]], [hit["B02"]]), "苹果")["note_id"], "B01")

    def test_a_read_that_failed_falls_back_to_the_snippet(self):
        def failing_read(name, arguments):
            if name == "read_note":
                return "错误：没有编号为 'A01' 的笔记。", True
            from assistant.tools import run_tool
            return run_tool(name, arguments)
        outcome = run_question(DemoModel(), [], "RAG 的步骤顺序是什么？", tool_runner=failing_read)
        self.assertEqual(outcome.stop, "answered")
        self.assertNotIn("None", outcome.answer)
        self.assertIn("搜索命中了笔记 A01《RAG 的基本流程》，但没能读取全文。命中的片段：", outcome.answer)

    def test_a_read_that_returned_no_note_is_not_cited(self):
        def empty_read(name, arguments):
            from assistant.tools import run_tool
            return ("{}", False) if name == "read_note" else run_tool(name, arguments)
        outcome = run_question(DemoModel(), [], "RAG 的步骤顺序是什么？", tool_runner=empty_read)
        self.assertNotIn("None", outcome.answer)
        self.assertIn("但没能读取全文", outcome.answer)


class RankedSearch(unittest.TestCase):
    def test_chinese_is_cut_into_bigrams_without_question_words(self):
        self.assertEqual(ranking.terms(notes.normalize("怎么评估 RAG 的检索效果？")),
                         ["评估", "rag", "检索", "索效", "效果"])

    def test_a_seam_between_two_known_words_weighs_nothing(self):
        index = ranking.Index(notes.load_notes().values())
        weights = index.query(notes.normalize("评估检索效果"))
        self.assertEqual(weights["估检"], 0.0)
        self.assertGreater(weights["评估"], 0.0)
        unknown = index.query(notes.normalize("今天天气"))
        self.assertEqual(sorted(unknown.values()), [0.0, 0.0, ranking.UNKNOWN_TERM_WEIGHT])

    def test_ranked_hits_stand_alone_when_no_phrase_matches(self):
        hits = notes.search("向量检索和关键词检索有什么区别")
        self.assertEqual(hits[0]["note_id"], "A03")
        self.assertLessEqual(len(hits[0]["snippet"]), ranking.SNIPPET_CHARS)
        self.assertIn(hits[0]["snippet"], notes.load_notes()["A03"].text)

    def test_ranked_hits_follow_exact_hits_only_when_they_hold_every_term(self):
        self.assertEqual([hit["note_id"] for hit in notes.search("步骤顺序")], ["A01", "A12"])
        self.assertEqual([hit["note_id"] for hit in notes.search("RAG 的步骤顺序")], ["A01"])  # A12 lacks RAG
        self.assertEqual([hit["note_id"] for hit in notes.search("顺序步骤")], ["A01", "A12"])  # ranked only

    def test_a_name_in_an_alias_line_is_a_word_not_a_seam(self):
        index = ranking.Index([notes.Note("B01", "# 甲\n\n苹果很甜。\n别名：变好\n"), notes.Note("B02", "# 乙\n\n香蕉很软。\n")])
        self.assertGreater(index.idf["变好"], index.idf["香蕉"])  # both seen once, in one note

    def test_the_no_hit_threshold(self):
        self.assertEqual(notes.search("红烧肉的做法"), [])
        self.assertEqual(notes.search("天气 检索"), [])  # one known word of two is under the threshold


if __name__ == "__main__":
    unittest.main()
