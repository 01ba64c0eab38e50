"""Exporter and independent verifier agree on thousands of mutated candidates (fixed seed).

Each candidate starts from one of the three samples and is mutated at the value level (deleted
or renamed fields, wrong types, NFC/NFD, zero-width and full-width characters, lengths at and
past the limits, quotes off by one character, duplicate or path-like note ids, lone surrogates,
line breaks) and then at the byte level (BOM, CRLF, duplicate keys, broken JSON, bytes that are
not UTF-8). For every candidate the exporter (in-process) and verify_export.check_candidate
must give the same first message, or both pass, and neither may raise anything else; when both
pass, the exported artifact must pass verify_export.check_artifact (the two review.md renderers
agree). The expected messages come from neither program: only their agreement is asserted.
"""
import json
import random
import unicodedata

import export_review
import verify_export
from tests.support import WorkspaceTestCase

SEED = 20261201
COUNT = 2000
FIELDS = ("note_id", "question", "answer", "quote")
ODD_CHARACTERS = ("\u200b", "\u200d", "\ufeff", "\u3000", "\u00a0", "\t", "\r", "\n", "\r\n", "\ud800", "\udfff",
                  "\U0001f600", "e\u0301", "\u00e9", "\x00", "\\", '"')
NOTE_IDS = ("A01", "A02", "A04", "A12", "Z99", "a01", "A1", "A001", "Ａ01", "A０1", "../A01", "A01/../A02",
            "..\\A01", "/etc/passwd", "A01.md", "CON", "", " A01", "A01\n", "\ud800")
WRONG_TYPES = (None, 0, 1.5, True, [], {}, ["A01"], {"x": 1})
LIMITS = (3, 4, 79, 80, 81, 199, 200, 201, 299, 300, 301, 499, 500, 501, 2000)
FULL_WIDTH = {ch: chr(ord(ch) + 0xFEE0) for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}


class Mutator:
    """Random changes to a candidate, all from one seeded generator so a failure can be replayed."""

    def __init__(self, rng, notes):
        self.rng, self.notes = rng, notes

    def text(self, value):
        """One textual change to the string VALUE."""
        rng = self.rng
        at = rng.randint(0, len(value))
        choice = rng.randrange(9)
        if choice == 0:
            return value[:at] + rng.choice(ODD_CHARACTERS) + value[at:]
        if choice == 1:
            return unicodedata.normalize(rng.choice(("NFC", "NFD", "NFKC", "NFKD")), value)
        if choice == 2:
            return "".join(FULL_WIDTH.get(ch, ch) for ch in value)
        if choice == 3:
            return (value or "字") * (rng.choice(LIMITS) // max(len(value), 1) + 1)
        if choice == 4:
            return value[:rng.choice(LIMITS)]
        if choice == 5:
            return value[1:] if rng.random() < 0.5 else value[:-1]
        if choice == 6:
            return value[:at] + value[at + 1:at + 2] + value[at:at + 1] + value[at + 2:]  # two characters swapped
        if choice == 7:
            return rng.choice((" ", "\u3000", "\n", "\t")) + value + rng.choice(("", " ", "\r\n"))
        return rng.choice(("", " ", "  \t"))

    def quote_from_a_note(self, card):
        """A real passage of a real note (often of another note than the card's)."""
        note_id = self.rng.choice(sorted(self.notes))
        text = self.notes[note_id]
        start = self.rng.randrange(len(text) - 10)
        card["quote"] = text[start:start + self.rng.randint(2, 320)]
        if self.rng.random() < 0.5:
            card["note_id"] = note_id

    def card(self, card):
        rng, key = self.rng, self.rng.choice(FIELDS)
        choice = rng.randrange(8)
        if choice == 0:
            card.pop(key, None)
        elif choice == 1:
            card[key] = rng.choice(WRONG_TYPES)
        elif choice == 2:
            card["note_id"] = rng.choice(NOTE_IDS)
        elif choice == 3:
            card[rng.choice(("qoute", "notes", "Quote", "\udc80", "note_id "))] = card.pop(key, "x")
        elif choice == 4:
            self.quote_from_a_note(card)
        elif type(card.get(key)) is str:
            card[key] = self.text(card[key])

    def candidate(self, value):
        rng = self.rng
        for _ in range(rng.randint(1, 3)):
            choice = rng.randrange(20)
            cards = value.get("cards") if type(value) is dict else None
            if choice < 13 and type(cards) is list and any(type(card) is dict for card in cards):
                self.card(rng.choice([card for card in cards if type(card) is dict]))
            elif choice < 15 and type(cards) is list:
                value["cards"] = rng.choice((cards + cards[:1], cards[:0], cards * 6, [*cards, "卡片"], cards[::-1]))
            elif choice < 18 and type(value) is dict:
                value["title"] = self.text(value["title"]) if type(value.get("title")) is str \
                    else rng.choice(WRONG_TYPES)
            elif choice == 18 and type(value) is dict:
                value.pop(rng.choice(("title", "cards")), None) if rng.random() < 0.5 else value.update(extra=1)
            elif choice == 19:
                value = rng.choice((value, [value], "RAG", None, 3))
        return value

    def serialise(self, value):
        """The candidate's bytes, with at most one byte-level change."""
        rng = self.rng
        text = json.dumps(value, ensure_ascii=rng.random() < 0.3, indent=rng.choice((None, 2)))
        if rng.random() < 0.9 and not text.isascii():  # a lone surrogate usually arrives as a JSON escape
            text = json.dumps(value, indent=rng.choice((None, 2))) if any(
                0xD800 <= ord(ch) <= 0xDFFF for ch in text) else text
        choice = rng.randrange(14)
        if choice == 0:
            text = "\ufeff" + text
        elif choice == 1:
            text = text.replace("\n", "\r\n")
        elif choice == 2 and text.startswith("{"):
            text = '{"title": "重复", ' + text[1:]
        elif choice == 3 and '"quote": ' in text:
            text = text.replace('"quote": ', '"quote": "x", "quote": ', 1)
        elif choice == 4:
            text = text[:rng.randrange(len(text))]
        data = text.encode("utf-8", "surrogatepass")  # a lone surrogate left unescaped is not UTF-8
        if choice == 5:
            at = rng.randrange(len(data))
            data = data[:at] + b"\xff" + data[at:]
        return data


class FuzzTest(WorkspaceTestCase):
    def test_exporter_and_verifier_agree_on_every_mutated_candidate(self):
        notes_dir = self.root / "project" / "notes"
        notes = {p.stem: p.read_text(encoding="utf-8") for p in sorted(notes_dir.glob("*.md"))}
        samples = [json.loads((self.root / "samples" / f"{name}.json").read_text(encoding="utf-8"))
                   for name in ("valid", "bad-quote", "semantic")]
        mutator = Mutator(random.Random(SEED), notes)
        passed = 0
        for number in range(COUNT):
            value = mutator.candidate(json.loads(json.dumps(mutator.rng.choice(samples))))
            path = self.root / "fuzz.json"  # one file rewritten: creating thousands of files is the slow part
            path.write_bytes(mutator.serialise(value))
            exported, verified = self.exporter_says(path, notes_dir), verify_export.check_candidate(path, notes_dir)
            self.assertEqual(exported, verified[0] if verified else None,
                             f"candidate {number} (seed {SEED}): {path.read_bytes()[:300]!r}")
            if exported is None:
                passed += 1
                out = self.root / f"fuzz-{passed}"
                path.with_suffix(".out").rename(out)
                self.assertEqual(verify_export.check_artifact(out, notes_dir), [], f"candidate {number}")
        # the generator must reach both sides of the rules, or agreement would prove little
        self.assertGreater(passed, COUNT // 20)
        self.assertLess(passed, COUNT // 2)

    def exporter_says(self, path, notes_dir):
        """The exporter's rejection message, or None when it exported (into PATH.out)."""
        try:
            export_review.export_candidate(path, path.with_suffix(".out"), notes_dir)
        except export_review.ValidationError as exc:
            return str(exc)
        return None
