"""The labelled corpus of stops (project/stop_cases/): every case met, zero false stops, each record verified.

Runs the corpus once through the real client and loop against the in-process mock (check_stop_corpus.run_corpus)
and compares its report with the one docs/assistant/DESIGN.md shows, line by line.
"""
import contextlib
import io
import json
import shutil
import tempfile
import unittest
import unittest.mock
from pathlib import Path

from tests.support import _FAST_TEMP, ROOT

import tests.asking  # noqa: F401  puts project/ on the path
import check_stop_corpus  # noqa: E402

RESULTS = []


def setUpModule():
    RESULTS.extend(check_stop_corpus.run_corpus(check_stop_corpus.load_cases()))


class CorpusTest(unittest.TestCase):
    def test_at_least_forty_cases_cover_every_guard(self):
        self.assertGreaterEqual(len(RESULTS), 40)
        for guard in check_stop_corpus.GUARDS:
            self.assertGreaterEqual(sum(1 for result in RESULTS if result["guard"] == guard), 2, guard)
        self.assertGreaterEqual(sum(1 for result in RESULTS if "not_before" in result["label"]), 5)

    def test_every_case_stops_where_its_label_says_and_its_record_passes(self):
        for result in RESULTS:
            with self.subTest(case=result["case"]):
                self.assertEqual((result["judged"], result["verified"]), ("met", "pass"), result)

    def test_the_report_in_design_is_the_one_the_corpus_gives(self):
        text = (ROOT / "docs" / "assistant" / "DESIGN.md").read_text(encoding="utf-8")
        shown = text.split("<!-- check_stop_corpus.py -->\n```text\n", 1)[1].split("\n```", 1)[0].splitlines()
        printed = [check_stop_corpus.guard_line(guard, RESULTS) for guard in check_stop_corpus.GUARDS]
        self.assertEqual(shown, printed)

    def test_judging_both_sides_of_the_labelled_turn(self):
        judged = check_stop_corpus.judged
        stop = {"stop": "no_progress", "turn": 3}
        self.assertEqual(judged(stop, "no_progress", 3), ("met", 0))
        self.assertEqual(judged(stop, "no_progress", 4), ("late", 1))
        self.assertEqual(judged(stop, "no_progress", 2), ("false", 1))
        self.assertEqual(judged(stop, "tool_failures", 3), ("false", 0))
        self.assertEqual(judged({"not_before": 20}, "max_turns", 20), ("met", 0))
        self.assertEqual(judged({"not_before": 20}, "no_progress", 19), ("false", 1))

    def test_the_other_systems_rules_replayed(self):
        same = [[("list_notes", "{}", 1, False)]] * 6
        alternating = [[("a", "{}", 1, False)], [("b", "{}", 2, False)]] * 3
        failing = [[("read_note", f'{{"note_id":"Z{n}"}}', n, True)] for n in range(5)]
        self.assertEqual(check_stop_corpus.gemini_turn(same), 5)
        self.assertEqual(check_stop_corpus.gemini_turn(same[:4]), None)
        self.assertEqual(check_stop_corpus.gemini_turn(alternating), None)
        self.assertEqual(check_stop_corpus.openhands_turn(same), 4)
        self.assertEqual(check_stop_corpus.openhands_turn(alternating), 6)
        self.assertEqual(check_stop_corpus.openhands_turn(failing), None)  # the actions differ
        self.assertEqual(check_stop_corpus.openhands_turn([failing[0]] * 3), 3)

    def test_a_broken_case_file_is_one_line_and_exit_2(self):
        folder = Path(tempfile.mkdtemp(dir=_FAST_TEMP))
        self.addCleanup(shutil.rmtree, folder, True)
        for name, body in (("bad-json", "{"), ("bad-label", json.dumps({"script": [{}], "label": {"stop": "x"},
                                                                       "guard": "answered", "why": ""}))):
            with self.subTest(name=name):
                (folder / "case.json").write_text(body, encoding="utf-8")
                with self.assertRaises(check_stop_corpus.CaseError):
                    check_stop_corpus.load_cases(folder)
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
                unittest.mock.patch.object(check_stop_corpus, "CASES", folder):
            self.assertEqual(check_stop_corpus.main([]), 2)
        self.assertEqual((out.getvalue(), len(err.getvalue().splitlines())), ("", 1))
        self.assertIn("case.json", err.getvalue())


if __name__ == "__main__":
    unittest.main()
