"""The notes the assistant answers from: loading project/notes/*.md and searching them.

Search compares normalized text (NFKC, case-folded, trimmed, whitespace runs collapsed to one
space) so that "ＲＡＧ" finds "RAG", while "no table" never matches "notable": whitespace is
collapsed, never deleted. Notes holding the query as an exact phrase come first (title hits,
then body hits, by id); after them come the notes `ranking` scores for the query's words
(Chinese character bigrams and BM25), so a question phrased in a learner's own words still
finds its note. What is shown (titles, snippets) is always the original text. The same
`search` serves the `search_notes` tool, `app.py search` and the page.

Aliases: a note may carry one line `别名：词、词；词、词` naming its key terms the way learners
say them (English names, Chinese paraphrases). Each `；`-separated group is one thing under
several names, the note's own word first. The line is not part of the body (never quoted, never a
snippet); an exact phrase found in it is a body hit, and `ranking` indexes its words with the body.
"""
import functools
import re
from pathlib import Path

from .ranking import ranked_hits
from .text import WHITESPACE, normalize

NOTES_DIR = Path(__file__).resolve().parent.parent / "notes"
NOTE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
SNIPPET_CONTEXT = 40  # characters of original text kept on each side of a hit
_ALIAS_LINE = re.compile(r"^别名[：:](.*)$", re.MULTILINE)
_GROUP_SEPARATOR = re.compile(r"[；;]")
_NAME_SEPARATOR = re.compile(r"[、，,]")


class NotesError(ValueError):
    """A note file that cannot be read as UTF-8 text; the message (Chinese) names the file."""


class Note:
    """One note: `id` is the file stem (A01), `title` the `# ` line, `text` the whole file (LF),
    `body` the rest without the alias line, `aliases` its groups of names (tuples, the note's word first)."""

    __slots__ = ("id", "title", "text", "body", "aliases", "_norm_title", "_norm_body", "_norm_aliases")

    def __init__(self, note_id, text):
        self.id = note_id
        self.text = text
        first, _, rest = text.partition("\n")
        self.title = first.lstrip("#").strip() or note_id
        self.aliases = tuple(alias_groups(" ".join(_ALIAS_LINE.findall(rest))))
        self.body = _ALIAS_LINE.sub("", rest)
        self._norm_title = normalize(self.title)
        self._norm_body = normalize(self.body)
        self._norm_aliases = normalize(" ".join("、".join(group) for group in self.aliases))

    def __repr__(self):
        return f"Note({self.id!r}, {self.title!r})"


def alias_groups(line) -> list:
    """The groups of an alias line's text: "切块、chunk；重叠、overlap" -> [("切块", "chunk"), ("重叠", "overlap")]."""
    groups = []
    for part in _GROUP_SEPARATOR.split(line):
        names = tuple(name.strip() for name in _NAME_SEPARATOR.split(part) if name.strip())
        if names:
            groups.append(names)
    return groups


def load_notes(notes_dir=NOTES_DIR) -> dict:
    """Every `*.md` directly in the notes folder whose stem is a plain id, sorted by id.

    A file that resolves outside the folder (a symlink pointing elsewhere) is skipped, so no
    note id can ever lead the tools out of the notes folder.
    """
    folder = Path(notes_dir)
    try:
        inside = folder.resolve()
        paths = sorted(folder.glob("*.md"))
    except OSError:
        return {}
    notes = {}
    for path in paths:
        if not NOTE_ID.fullmatch(path.stem) or path.resolve().parent != inside:
            continue
        try:
            text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise NotesError(f"笔记文件 {path.name} 无法读取（{type(exc).__name__}）："
                             "请确认它是 UTF-8 编码的文本文件。") from None
        notes[path.stem] = _parsed(path.stem, text)
    return notes


@functools.lru_cache(maxsize=256)  # each tool call reads the notes afresh; an unchanged note is parsed once
def _parsed(note_id, text):
    return Note(note_id, text)


def search(query: str, notes=None, limit=5) -> list:
    """Exact-phrase hits first (title hits, then body or alias hits, by id), then ranked hits (see `ranking`)."""
    phrase = normalize(query or "")
    if not phrase or limit <= 0:
        return []
    if notes is None:
        notes = load_notes()
    ordered = sorted(notes.values(), key=lambda note: note.id)
    title_hits = [note for note in ordered if phrase in note._norm_title]
    body_hits = [note for note in ordered if phrase not in note._norm_title
                 and (phrase in note._norm_body or phrase in note._norm_aliases)]
    exact = title_hits + body_hits
    hits = [{"note_id": note.id, "title": note.title, "snippet": snippet(note, phrase)} for note in exact[:limit]]
    if len(hits) < limit:
        hits += ranked_hits(phrase, ordered, exclude={note.id for note in exact}, limit=limit - len(hits),
                            whole=bool(exact))
    return hits


def snippet(note, phrase) -> str:
    """The original text around the first body hit of `phrase` (already normalized), one line."""
    paragraphs = [p for p in note.body.split("\n\n") if p.strip()]
    for paragraph in paragraphs:
        if phrase in normalize(paragraph):
            return _one_line(_window(paragraph, phrase))
    # A title-only hit, or a phrase spanning two paragraphs: show the start of the body.
    return _one_line(paragraphs[0][:2 * SNIPPET_CONTEXT]) if paragraphs else ""


def _window(text, phrase):
    """The shortest original span whose normalized form holds `phrase`, widened by the context.

    Searched on the original text because normalization may change lengths (NFKC, collapsed
    spaces), so positions in the normalized text do not map back one to one.
    """
    end = _first(1, len(text), lambda k: phrase in normalize(text[:k]))
    start = _first(0, end, lambda k: phrase not in normalize(text[k:end])) - 1
    left = max(0, start - SNIPPET_CONTEXT)
    right = min(len(text), end + SNIPPET_CONTEXT)
    return ("…" if left else "") + text[left:right] + ("…" if right < len(text) else "")


def _first(lo, hi, holds):
    """Smallest k in lo..hi with holds(k), for a condition that stays true once true (else hi)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _one_line(text):
    return WHITESPACE.sub(" ", text).strip()
