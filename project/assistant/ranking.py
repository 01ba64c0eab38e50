"""Ranked search over the notes for questions in a learner's own words: character bigrams + BM25.

Chinese has no spaces between words, so text (already normalized by `text.normalize`) is cut
into terms the way note A03 describes: runs of Chinese characters become overlapping
two-character terms ("向量检索" -> 向量, 量检, 检索), Latin letters and digits become words.
Question words and particles (STOP_WORDS, STOP_CHARACTERS) are cut out first, so "什么" or
"的" never make a note look relevant; a Chinese character left alone between them is a term of
its own (notes index every character too). A note's terms are its body's plus its title's
counted TITLE_WEIGHT times, and the words of its alias line (`notes`) counted once, so a
learner's "prompt" or "chunk" finds the note that names it; notes are scored with BM25 (k1 = 1.2,
b = 0.75). A few SYNONYMS groups count as one term. A two-character term seen only once in all the notes has its idf
halved (it is more often where two words meet than a word), unless an alias line names it (an alias is a word).

A query's terms weigh their idf; a bigram no note has that overlaps one a note has ("估检" in
"评估检索") weighs nothing; a stretch of bigrams no note has ("今天天气") weighs
UNKNOWN_TERM_WEIGHT once. No-hit threshold: a note is a hit only when the query terms it holds
carry at least MIN_SHARE of the query's weight, so an unrelated question is not forced onto the
note that happens to share one common word with it; after exact-phrase hits, a ranked hit must
hold every term. What the offline demo answers by is stricter, the question's topic: `Index.topic` weighs the words
no note holds by their length ("提高睡眠质量" is three words the notes lack, not one), and `Index.about` tells
whether a note is about the question at all (a word it names or keeps using, or two of its words in one sentence,
never a word it uses once in passing); `Index.carries` adds that a question naming a thing no note holds (C++, Rust,
four characters the notes lack) needs a note about two of its words: one shared title word ("引用" in "C++ 的引用和
指针有什么区别？") is used in another sense. Shared with: `notes.search` (`ranked_hits`; `best_sentence` gives the
snippet), `demo_model` (`index_of`, `Index.score`: the BM25 part of choosing a note; `Index.topic`, `Index.carries`;
`has_subject`, also `followup`'s), `passages` (`terms`, `note_terms`, `alternatives`). The rules are written out in
docs/assistant/DESIGN.md.
"""
import math
import re

from .text import normalize

TITLE_WEIGHT = 3
MIN_SHARE = 0.45
UNKNOWN_TERM_WEIGHT = 1.5
UNKNOWN_WORD_WEIGHT = 2 * UNKNOWN_TERM_WEIGHT  # an unknown Latin word is usually the question's subject
UNKNOWN_CHARACTER_WEIGHT = UNKNOWN_TERM_WEIGHT / 2  # two characters make a word
SEAM_DAMPING = 0.5
TOPIC_USES = 2  # a word a note uses once is mentioned in passing; used again, or named, it is what the note is about
K1, B = 1.2, 0.75
SNIPPET_CHARS = 100
STOP_WORDS = re.compile(
    r"为什么|为何|什么样|什么|怎么样|怎么办|怎么|怎样|如何|哪些|哪个|哪里|哪儿|是否|是不是|能不能|可不可以|有没有"
    r"|一下|一般|应该|应当|需要|可以|能够|时候|这个|那个|这些|那些|这样|那样|我们|你们|他们|我的|一个|一些"
    r"|请问|告诉|介绍|解释|说说|讲讲|关系|作用|意思|问题|东西|里面|之间|以及")
STOP_CHARACTERS = set("的了吗呢吧啊呀和与及或在是把被对就也都又还很有要会让给从该我你他它这那些么啥咋")
# How a question asks, not what it asks about: asking phrases, quantities, and words any question on any topic
# uses (从哪开始, 举个例子, 比较好, 方法). They still score a note and choose a passage (一共 3 次 answers 一共几次),
# but the no-hit threshold judges only the rest, the question's subject terms (`Index.subject`): "梅西一共拿过
# 几次金球奖？" shares 一共 and 几次 with a note and is still about nothing the notes cover.
ASKING_FRAME = re.compile(
    r"怎么回事|怎么理解|什么意思|从哪[里儿]?开始|从何|入手|上手|举个?例子|举例|例子|比如|例如"
    r"|比较好|比较合适|最好|合适|好不好|对不对|行不行|会不会|要不要|该不该|能否|可否"
    r"|一共|总共|总计|多少|多大|多长|多久|多远|多高|最[短长多少大小早晚好]|几(?!乎)[\u4e00-\u9fff]?|哪|到底|究竟|具体|大概|大约|通常"
    r"|推荐|建议|方法|办法|技巧|规律|区别|不同")
ENGLISH_STOP_WORDS = {"a", "an", "the", "of", "to", "is", "are", "and", "or", "in", "on", "for", "what", "how"}
# Words a learner uses for what the notes say in other words (keyword search cannot know them): each
# group's terms count as one term, so a note holding any of them holds the question's word.
SYNONYMS = (("切分", "分块", "切块"), ("同意", "批准"), ("区别", "不同"), ("出错", "错误", "失败"), ("编造", "瞎编", "胡编"),
            ("太小", "过小", "太碎", "过碎", "很碎"), ("太大", "过大"), ("丢失", "丢掉"),
            # English names for words of A03, a note the harness watches: its alias line stays as it is
            ("重排", "rerank", "reranker", "reranking", "精排"), ("余弦", "cosine"))
_ALTERNATIVES = {term: group for group in SYNONYMS for term in group}
_CHINESE = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_PIECES = re.compile(f"[a-z0-9]+|[{_CHINESE}]+")
_CHINESE_CHARACTER = re.compile(f"[{_CHINESE}]")
_LETTER_WORD = re.compile(r"(?<![a-z0-9])[a-z](?![a-z0-9])")
_STOP_RUN = re.compile("[" + "".join(sorted(STOP_CHARACTERS)) + "]+")
_SENTENCE = re.compile(r"[^。！？\n]+[。！？]?")


def terms(text: str) -> list:
    """The terms of normalized TEXT, in order (repeats kept): Latin words and Chinese bigrams."""
    found = []
    for run in _runs(text):
        if run.isascii() or len(run) < 2:
            found.append(run)  # a single character between stop characters still counts
        else:
            found.extend(run[i:i + 2] for i in range(len(run) - 1))
    return found


def _runs(text, letters=False):
    """The pieces of normalized TEXT that terms are made of, in order: each Latin word or number kept (a letter alone
    too when LETTERS: the C of "C++"), and each run of Chinese characters between question words and stop characters."""
    for piece in _PIECES.findall(STOP_WORDS.sub(" ", text)):
        if piece.isascii():
            if piece not in ENGLISH_STOP_WORDS and (len(piece) >= 2 or piece.isdigit() or letters):
                yield piece
            continue
        yield from (run for run in _STOP_RUN.split(piece) if run)


def has_subject(phrase) -> bool:
    """The normalized PHRASE names something besides how a question asks (ASKING_FRAME): "例子" in "能举个例子吗"
    or "方法" in "有没有…的方法" is not a subject, and searching it alone would find whatever note uses the word.
    A single Chinese character left over ("能" of "能举个例子", "坑" of "有什么坑") names nothing either."""
    return any(len(term) >= 2 or term.isascii() for term in terms(ASKING_FRAME.sub(" ", phrase)))


def alternatives(term):
    """The term and its synonyms (SYNONYMS)."""
    return _ALTERNATIVES.get(term, (term,))


def note_terms(text):
    """A note's terms: its bigrams and words, plus every Chinese character alone (a query may ask for one)."""
    return terms(text) + _CHINESE_CHARACTER.findall(STOP_WORDS.sub(" ", text))


class Index:
    """Term counts of every note (title counted TITLE_WEIGHT times) and each term's idf."""

    def __init__(self, notes):
        self.notes = list(notes)
        self.counts = {}
        for note in self.notes:
            counted = {}
            for term in (note_terms(note._norm_body) + note_terms(note._norm_aliases)
                         + note_terms(note._norm_title) * TITLE_WEIGHT):
                counted[term] = counted.get(term, 0) + 1
            self.counts[note.id] = counted
        lengths = [sum(counted.values()) for counted in self.counts.values()]
        self.average_length = (sum(lengths) / len(lengths)) if lengths else 1.0
        total = len(self.notes)
        frequency = {}
        for counted in self.counts.values():
            for term in counted:
                frequency[term] = frequency.get(term, 0) + 1
        occurrences = {}
        for counted in self.counts.values():
            for term, count in counted.items():
                occurrences[term] = occurrences.get(term, 0) + count
        # what `about` and `query` look at: the words each note names, the terms of each sentence, every character
        self.named = {note.id: set(terms(note._norm_aliases) + terms(note._norm_title)) for note in self.notes}
        self.sentence_terms = {note.id: [set(terms(normalize(sentence))) for sentence in sentences(note.body)]
                               for note in self.notes}
        self.letters = {letter for note in self.notes  # the letters notes write as words: k of "前 k 条"
                        for letter in _LETTER_WORD.findall(f"{note._norm_title} {note._norm_body}")}
        self.characters = set("".join(note._norm_title + note._norm_body + note._norm_aliases for note in self.notes))
        # a two-character term seen once in all the notes is more often where two words meet than a word;
        # not one an alias line names: an alias is a word learners use (变好、评测), never a seam
        named = {term for note in self.notes for term in terms(note._norm_aliases)}
        self.idf = {term: math.log(1 + (total - df + 0.5) / (df + 0.5))
                    * (SEAM_DAMPING if occurrences[term] == 1 and len(term) == 2 and term not in named else 1.0)
                    for term, df in frequency.items()}

    def weight(self, term):
        """A term's idf, or UNKNOWN_TERM_WEIGHT for a term found in no note."""
        return self.idf.get(term, UNKNOWN_TERM_WEIGHT)

    def query(self, text, by_length=False) -> dict:
        """{term: weight} of a normalized query: a known term weighs its idf.

        A Latin word no note has weighs UNKNOWN_WORD_WEIGHT, a lone character no note has UNKNOWN_TERM_WEIGHT. In a
        run of Chinese characters, a bigram no note has that overlaps one a note has ("评估检索" -> 估检 between 评估
        and 检索) is a seam, where two words meet: it weighs nothing. The bigrams between seams are a stretch of words
        the notes lack ("今天天气" -> 今天, 天天, 天气; "统一六国" -> 六国 after the seam 一六): UNKNOWN_TERM_WEIGHT once, at
        its first bigram. BY_LENGTH (`topic`, what the offline demo answers by) weighs them by their length instead.
        """
        weights = {}
        for run in _runs(text, letters=by_length):
            if len(run) == 1 and run.isascii() and not run.isdigit():
                if run not in self.letters:
                    weights[run] = UNKNOWN_WORD_WEIGHT  # a letter the notes never write alone names something: C++
            elif run.isascii() and not self.known(run):
                weights[run] = UNKNOWN_WORD_WEIGHT  # a name or acronym the notes never mention
            elif run.isascii() or len(run) == 1:
                weights[run] = max(self.weight(other) for other in alternatives(run))
            else:
                self._weigh_run(run, weights, by_length)
        return weights

    def _weigh_run(self, run, weights, by_length):
        """Add the terms of one run of Chinese characters to WEIGHTS (`query`). BY_LENGTH: a stretch weighs
        UNKNOWN_CHARACTER_WEIGHT a character, at least UNKNOWN_TERM_WEIGHT; a character it shares with a seam, or one
        only seams hold, belongs to the known word beside it, unless no note ever writes it (菜 in "菜结果": then a
        word of its own the notes lack, UNKNOWN_TERM_WEIGHT when only seams hold it)."""
        bigrams = [run[i:i + 2] for i in range(len(run) - 1)]
        known = [self.known(bigram) for bigram in bigrams]
        seam = [not known[i] and ((i > 0 and known[i - 1]) or (i + 1 < len(bigrams) and known[i + 1]))
                for i in range(len(bigrams))]
        stretch = []  # the bigram indexes of the stretch being read
        for i, bigram in enumerate(bigrams):
            if known[i]:
                weights[bigram] = max(self.weight(other) for other in alternatives(bigram))
                continue
            weights.setdefault(bigram, 0.0)
            if not seam[i]:
                stretch.append(i)
                if i + 1 < len(bigrams) and not known[i + 1] and not seam[i + 1]:
                    continue  # the stretch goes on
                weights[bigrams[stretch[0]]] += self._stretch_weight(run, stretch, seam, by_length)
                stretch = []
            elif by_length:
                firsts = (i, i + 1) if i == 0 else (i + 1,)  # each character counted at the first bigram holding it
                weights[bigram] += sum(UNKNOWN_TERM_WEIGHT for at in firsts
                                       if all(seam[j] for j in (at - 1, at) if 0 <= j < len(seam))
                                       and run[at] not in self.characters)

    def _stretch_weight(self, run, stretch, seam, by_length):
        """What the stretch of bigrams at STRETCH (indexes into RUN's bigrams) weighs (`_weigh_run`)."""
        if not by_length:
            return UNKNOWN_TERM_WEIGHT
        first, last = stretch[0], stretch[-1] + 1  # its characters run[first..last]
        shared = {first} if first > 0 and seam[first - 1] else set()
        shared |= {last} if last < len(seam) and seam[last] else set()
        own = [at for at in range(first, last + 1) if at not in shared or run[at] not in self.characters]
        return max(UNKNOWN_TERM_WEIGHT, UNKNOWN_CHARACTER_WEIGHT * len(own))

    def subject(self, text, by_length=False) -> dict:
        """{term: weight} of a normalized query's subject: the query without what it asks with (ASKING_FRAME);
        the whole query when nothing of weight is left ("例子" typed into the search box is what is looked for)."""
        weights = self.query(ASKING_FRAME.sub(" ", text), by_length)
        return weights if sum(weights.values()) > 0 else self.query(text, by_length)

    def topic(self, text) -> dict:
        """{term: weight} of what a question is about, what the offline demo answers by (`demo_model`): its subject,
        with the words no note holds weighed by their length (`query`): "提高睡眠质量" is three words the notes lack,
        not one, so one shared word ("才能") does not carry the question to a note."""
        return self.subject(text, by_length=True)

    def held_share(self, note, text) -> float:
        """The share of the query's subject weight (`subject`) NOTE holds: what the no-hit threshold judges."""
        return self.score(note, self.subject(text))[1]

    def about(self, note, weights) -> bool:
        """NOTE is about the query's {term: weight} (its subject's): it holds a term its title or alias line names, a
        Latin word or number, a learner's word of SYNONYMS, or a word it uses at least TOPIC_USES times; or one of its
        sentences holds two of the query's words ("每发现一个线上错误…修好的问题以后…"). Words it uses once, apart
        ("工作" in "模型以什么身份工作"), are mentioned in passing; a lone character is held inside any word, and
        counts only where the title or alias line names it so (摘 of 摘要: 要 is a stop character)."""
        return bool(self._named_words(note, weights)) or self._said_together(note, weights)

    def carries(self, note, weights) -> bool:
        """NOTE answers for the query's {term: weight}: it is about it (`about`), and when the query names something
        no note holds (`names_unknown`: C++ in "C++ 的引用和指针有什么区别？") about two of its words, so one word
        it shares (引用, quoting a source in A10) is not taken for the question's subject."""
        if not self.names_unknown(weights):
            return self.about(note, weights)
        return _apart(self._named_words(note, weights, latin=False)) or self._said_together(note, weights)

    def names_unknown(self, weights) -> bool:
        """The query names a thing no note holds: a term none holds weighing UNKNOWN_WORD_WEIGHT or more (a Latin
        word, a letter named alone, or by `topic`'s length a stretch of four characters or more: two words)."""
        return any(weight >= UNKNOWN_WORD_WEIGHT and not self.known(term) for term, weight in weights.items())

    def _named_words(self, note, weights, latin=True) -> list:
        """The query's words NOTE is about each by itself (`about`): one its title or alias line names, a learner's
        word of SYNONYMS, one it uses TOPIC_USES times, and any Latin word it holds (unless not LATIN: then a Latin
        word is a word like the others, "Python" said once in passing)."""
        counted, named = self.counts[note.id], self.named[note.id]
        found = []
        for term, weight in weights.items():
            held = [other for other in alternatives(term) if counted.get(other)]
            if weight <= 0 or not held:
                continue
            word = len(term) == 2 or term.isascii()  # a lone character counts only as a name
            if any(other in named for other in held) or (latin and term.isascii()) or word and (
                    len(alternatives(term)) > 1 or any(counted[other] >= TOPIC_USES for other in held)):
                found.append(term)
        return found

    def _said_together(self, note, weights) -> bool:
        """One sentence of NOTE holds two of the query's words (`_apart`)."""
        words = [term for term, weight in weights.items() if weight > 0 and len(term) == 2 and not term.isascii()]
        return any(_apart([term for term in words if sentence.intersection(alternatives(term))])
                   for sentence in self.sentence_terms[note.id])

    def known(self, term):
        return any(other in self.idf for other in alternatives(term))

    def score(self, note, weights):
        """(BM25 score, share of the query's weight the note contains) for a query's {term: weight}."""
        counted = self.counts[note.id]
        length = sum(counted.values()) or 1
        score = found = 0.0
        for term, weight in weights.items():
            present = [other for other in alternatives(term) if counted.get(other)]
            if present:
                tf = sum(counted[other] for other in present)
                found += weight
                score += weight * tf * (K1 + 1) / (
                    tf + K1 * (1 - B + B * length / self.average_length))
        return score, found / (sum(weights.values()) or 1.0)

    def ranked(self, text, exclude=(), min_share=MIN_SHARE):
        """[(score, note)] holding at least MIN_SHARE of the query's subject weight, best first (by id on a tie)."""
        weights, subject = self.query(text), self.subject(text)
        scored = []
        for note in self.notes:
            score, share = self.score(note, weights)[0], self.score(note, subject)[1]
            if note.id not in exclude and share >= min_share - 1e-9 and score > 0:
                scored.append((-score, note.id, note))
        return [(-negative, note) for negative, _, note in sorted(scored)]


def _apart(words):
    """Two of WORDS are two words: Chinese bigrams sharing no character, not the overlapping parts of one ("写代码");
    a Latin word is a word of its own."""
    return any(first.isascii() or second.isascii() or not set(first) & set(second)
               for index, first in enumerate(words) for second in words[index + 1:])


_INDEXES = {}  # (id, text) of every note -> its Index; the notes rarely change within a process


def index_of(notes) -> "Index":
    """The Index of these notes, built once per distinct set of note texts."""
    notes = list(notes)
    key = tuple((note.id, note.text) for note in notes)
    if key not in _INDEXES:
        if len(_INDEXES) >= 4:
            _INDEXES.clear()
        _INDEXES[key] = Index(notes)
    return _INDEXES[key]


def ranked_hits(phrase, notes, exclude=(), limit=5, whole=False) -> list:
    """Hits for a normalized query, best first, not in EXCLUDE: notes over the no-hit threshold,
    or, when WHOLE (the exact phrase was found elsewhere), notes holding every term of the query."""
    if limit <= 0:
        return []
    index = index_of(notes)
    weights = index.query(phrase)
    return [{"note_id": note.id, "title": note.title,
             "snippet": best_sentence(note.body, weights)[:SNIPPET_CHARS]}
            for _, note in index.ranked(phrase, exclude, 1.0 if whole else MIN_SHARE)[:limit]]


def sentences(text) -> list:
    """The sentences of a note's body as written (list markers stripped), each at least 4 characters."""
    found = [match.group().strip().lstrip("-*").strip() for match in _SENTENCE.finditer(text)]
    return [sentence for sentence in found if len(sentence) >= 4]


def held_weight(sentence, weights) -> float:
    """How much of a query's {term: weight} one sentence holds."""
    held = set(terms(normalize(sentence)))
    return sum(weight for term, weight in weights.items() if held.intersection(alternatives(term)))


def best_sentence(text, weights) -> str:
    """The sentence of TEXT holding the most of the query's {term: weight} (the earliest on a tie), verbatim."""
    best, best_score = "", -1.0
    for sentence in sentences(text) or [text.strip()]:
        score = held_weight(sentence, weights)
        if score > best_score:
            best, best_score = sentence, score
    return best
