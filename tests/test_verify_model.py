"""The verifier's checks of a model loop (verifier/proposals.py and verify_loop), against honest runs and forgeries.

Each shipped developer model runs once, in-process against an in-process mock with the client's waits skipped
(tests/developing.py), in one shared copy of the workspace; every honest run must pass, with its three counts.
Then each forgery edits one file of one run (the loop's record, a proposal's record, the server's log, a folder), is
checked, and is put back: a lowered actual_api_calls, a proposal record removed, edited or added, an attempt's counts
or claim changed, a candidate the model never proposed, a failed attempt relabelled with the model's claim, a
question without the feedback, the server's log gone or a line of it removed, a budget changed after the fact, a
model loop passed off as a lesson case. verify_loop's --explain says the three counts per round; the class check
counts a model loop as an extra, never as one of the six cases.
"""
import contextlib
import io
import json
import shutil
import time
import unittest
from pathlib import Path

import loop_lab
from tests.developing import opener
from tests.support import WorkspaceTestCase, assert_found, fields_of
from tests.test_class_check import in_process
from verifier.check import Verdict, checked_loop, verify_loop
from verifier.explain import account
from verifier.proposals import Proposal, ProposalCheck, proposal_of, proposal_stop

RUNS = {"m-dev": ("developer", {}), "m-repeat": ("repeat", {}), "m-publish": ("publish", {}),
        "m-failing": ("failing", {}), "m-cut": ("failing", {"max_api_calls": 2}),
        "m-spent": ("developer", {"max_api_calls": 3}), "m-mid": ("developer", {"max_api_calls": 4})}


class ProposalCheckTest(WorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        cls.shared = WorkspaceTestCase("run")
        cls.shared.setUp()
        cls.addClassCleanup(cls.shared.doCleanups)
        cls.root = cls.shared.root
        made = []
        with contextlib.redirect_stderr(io.StringIO()):
            for name, (script, options) in RUNS.items():
                loop_lab.run_loop(cls.root, name, "model", model_script=str(cls.root / f"samples/models/{script}.json"),
                                  open_model=opener(made=made), **options)
        for developer in made:
            developer.close()

    def setUp(self):  # the class's one copy of the workspace
        pass

    def check(self, name):
        findings = Verdict()
        record = json.loads((self.root / "loop-runs" / name / "loop.json").read_text(encoding="utf-8"))
        proposals = ProposalCheck(record, self.root / "loop-runs" / name, findings).run()
        return findings, proposals

    @contextlib.contextmanager
    def edited(self, rel, change):
        """The JSON file REL changed by CHANGE(obj) for the block, then put back byte for byte."""
        path = self.root / rel
        kept = path.read_bytes()
        obj = json.loads(kept)
        change(obj)
        path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
        try:
            yield
        finally:
            path.write_bytes(kept)

    def assertFails(self, name, *expected):
        """The proposals of loop NAME fail; EXPECTED: kinds and values their findings hold (support.assert_found)."""
        findings, _ = self.check(name)
        self.assertTrue(findings.problems, "the forgery passed")
        assert_found(self, findings.problems, *expected)
        return findings.problems

    def test_every_honest_run_passes_with_its_counts(self):
        expected = {"m-dev": [(2, 3), (1, 2)], "m-repeat": [(1, 1), (1, 1)], "m-publish": [(1, 1)],
                    "m-failing": [(1, 3)], "m-cut": [(1, 2)], "m-spent": [(2, 3)], "m-mid": [(2, 3), (1, 1)]}
        for name, counts in expected.items():
            with self.subTest(name=name):
                findings, proposals = self.check(name)
                self.assertEqual((findings.problems, findings.notes), ([], []))
                self.assertEqual([(p.entry["turns"], p.entry["requests"]) for p in proposals], counts)

    def test_a_lowered_actual_api_calls_fails(self):
        with self.edited("loop-runs/m-dev/loop.json", lambda r: r.update(actual_api_calls=3)):
            self.assertFails("m-dev", "api_calls_sum")

    def test_a_removed_or_added_proposal_record_fails(self):
        folder = self.root / "loop-runs/m-dev/proposals/02"
        kept = self.root / "kept-02"
        shutil.move(folder, kept)
        try:
            self.assertFails("m-dev", "proposal_record_missing", "loop-runs/m-dev/proposals/02/question.json")
        finally:
            shutil.move(kept, folder)
        shutil.copytree(folder, folder.parent / "03")
        try:
            self.assertFails("m-dev", "proposals_extra", "03")
        finally:
            shutil.rmtree(folder.parent / "03")

    def test_an_attempts_counts_changed_fail(self):
        for field, value in (("turns", 1), ("requests", 2), ("tokens", 1), ("stop", "max_turns")):
            with self.subTest(field=field), self.edited(
                    "loop-runs/m-dev/loop.json", lambda r: r["attempts"][0]["model"].update({field: value})):
                self.assertEqual(fields_of(self.assertFails("m-dev", "proposal_count_wrong"),
                                           "proposal_count_wrong")["field"], field)

    def test_a_changed_claim_or_candidate_fails(self):
        with self.edited("loop-runs/m-dev/loop.json",
                         lambda r: r["attempts"][0]["model"].update(claim="导出器确认通过了。")):
            self.assertFails("m-dev", "claim_wrong")
        with self.edited("loop-runs/m-repeat/loop.json",
                         lambda r: r["attempts"][1]["candidate"].update(sample="valid")):
            self.assertFails("m-repeat", "candidate_not_proposed", "valid")

    def test_an_edited_proposal_record_fails(self):
        record = "loop-runs/m-dev/proposals/01/question.json"
        with self.edited(record, lambda q: q.update(reply_text=q["reply_text"].replace("bad-quote", "valid"))):
            self.assertFails("m-dev", "reply_text_hash")
        with self.edited(record, lambda q: q["turns"][1]["attempts"].pop(0)):  # hide the 429 and its retry
            self.assertFails("m-dev")
        with self.edited("loop-runs/m-dev/proposals/02/question.json", lambda q: q.update(
                question=q["question"].replace("引文不在对应笔记原文中", "引文有点问题"))):
            self.assertFails("m-dev", "feedback_not_carried")

    def test_the_server_log_is_the_servers_word(self):
        log = self.root / "loop-runs/m-dev/server-log.jsonl"
        kept = log.read_bytes()
        try:
            log.unlink()
            self.assertFails("m-dev", "server_log_missing")
            log.write_bytes(b"\n".join(kept.split(b"\n")[1:]))  # the server never saw the first request
            self.assertFails("m-dev")
        finally:
            log.write_bytes(kept)

    def test_a_server_log_holding_one_request_more_than_the_budget_fails(self):
        log = self.root / "loop-runs/m-spent/server-log.jsonl"  # it spent its 3 calls exactly
        kept = log.read_bytes()
        lines = kept.rstrip(b"\n").split(b"\n")
        try:
            log.write_bytes(b"\n".join(lines + lines[-1:]) + b"\n")  # a fourth request of one of its proposals
            self.assertFails("m-spent", "server_log_over")
        finally:
            log.write_bytes(kept)

    def test_a_budget_changed_after_the_fact_fails(self):
        with self.edited("loop-runs/m-dev/loop.json", lambda r: r["budget"].update(max_api_calls=4)):
            self.assertFails("m-dev", "api_calls_over")
        for name in ("m-spent", "m-mid", "m-cut"):
            with self.subTest(name=name), self.edited(f"loop-runs/{name}/loop.json",
                                                      lambda r: r["budget"].update(max_api_calls=10)):
                self.assertFails(name, "api_budget_unspent")

    def test_the_stop_a_last_proposal_supports(self):
        with self.edited("loop-runs/m-failing/loop.json", lambda r: r.update(error_type="NotAProposal")):
            self.assertFails("m-failing", "proposal_stop_wrong", "ModelFailed")
        with self.edited("loop-runs/m-publish/loop.json", lambda r: r.update(reason="unexpected_error")):
            self.assertFails("m-publish", "proposal_stop_wrong", "permission_boundary")

    def verified(self, name):
        return verify_loop(self.root / "loop-runs" / name)

    def test_verify_loop_passes_every_honest_run_with_the_three_counts(self):
        expected = {"m-dev": (2, 3, 5), "m-repeat": (2, 2, 2), "m-publish": (0, 1, 1), "m-failing": (0, 1, 3),
                    "m-cut": (0, 1, 2), "m-spent": (1, 2, 3), "m-mid": (1, 3, 4)}
        for name, levels in expected.items():
            with self.subTest(name=name):
                result = self.verified(name)
                self.assertEqual(result["result"], "pass", result["problems"])
                self.assertEqual(tuple(result["levels"].values()), levels)

    def test_verify_loop_fails_the_forgeries(self):
        def relabel(record):  # the model said it was fixed: the summary says so too
            record["attempts"][0].update(status="needs_review", feedback=None)
        forgeries = (("m-dev", relabel), ("m-dev", lambda r: r.update(actual_api_calls=3)),
                     ("m-dev", lambda r: r["attempts"][1]["model"].update(requests=1)),
                     ("m-dev", lambda r: r.update(scenario="repair")),
                     ("m-dev", lambda r: r["context"]["entries"].pop("project/assistant/client.py")),
                     ("m-publish", lambda r: r["blocked_proposal"].update(target="samples")),
                     ("m-failing", lambda r: r.update(status="budget_exhausted", reason="api_call_budget",
                                                      error_type=None)))
        for name, change in forgeries:
            with self.subTest(name=name, change=change), self.edited(f"loop-runs/{name}/loop.json", change):
                self.assertEqual(self.verified(name)["result"], "fail")

    def test_a_model_loop_in_two_segments_fails(self):
        # split as a resume after attempt 1's decision would write it: but a model loop is never resumed
        def split(record):
            first, cut = record["segments"][0], record["attempts"][0]["decision"]["decided_offset"]
            wall = time.gmtime(first["wall_minus_monotonic"] + cut)
            record["segments"].append({"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", wall),
                                       "started_offset": cut, "wall_minus_monotonic": first["wall_minus_monotonic"],
                                       "elapsed_seconds": round(first["elapsed_seconds"] - cut, 3),
                                       "after_attempt": 1, "gap_seconds": 0})
            first.update(elapsed_seconds=cut, ended="keyboard_interrupt", lower_bound=False)
        with self.edited("loop-runs/m-dev/loop.json", split):
            result = self.verified("m-dev")
        self.assertEqual(result["result"], "fail", result)
        assert_found(self, result, "model_segments")
        self.assertEqual(fields_of(result, "model_segments")["count"], 2)

    def test_a_scripted_loop_never_calls_a_model(self):
        made = []
        with contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.root, "r-01", "repair", open_model=opener(made=made))
        self.assertEqual(made, [])  # the development model is never even opened
        self.assertNotIn("model", record)
        self.assertNotIn("max_api_calls", record["budget"])
        self.assertEqual((record["actual_api_calls"], record["context"]["files"]), (0, 23))
        self.assertEqual(self.verified("r-01")["levels"], None)
        with self.edited("loop-runs/r-01/loop.json", lambda r: r.update(actual_api_calls=1)):
            self.assertEqual(self.verified("r-01")["result"], "fail")

    def test_explain_says_the_three_counts_per_round(self):
        lines = []
        for line in account(checked_loop(self.root / "loop-runs" / "m-dev")).splitlines():
            indent = len(line) - len(line.lstrip())
            if lines and indent >= len(lines[-1]) - len(lines[-1].lstrip()) + 4:  # a long line's continuation
                lines[-1] += line.strip()
            else:
                lines.append(line)
        text = "\n".join(lines)
        rounds = [line for line in lines if line.strip().startswith("三个层次：")]
        self.assertEqual(len(rounds), 2)
        for words in ("2 次模型交互", "3 次 HTTP 请求", "1 次是重试"):
            self.assertIn(words, rounds[0])
        self.assertIn("不作数", text)
        self.assertIn("开发迭代 2 次尝试；应用工具循环 3 次模型交互；算上请求重试 5 次 HTTP 请求", text)

    def test_a_server_log_given_by_hand_is_checked_too(self):
        log = self.root / "loop-runs/m-dev/server-log.jsonl"
        other = self.root / "other-log.jsonl"
        other.write_bytes(b"\n".join(log.read_bytes().split(b"\n")[1:]))  # it never saw the first request
        self.addCleanup(other.unlink)
        self.assertEqual(verify_loop(self.root / "loop-runs/m-dev", server_log=str(log))["result"], "pass")
        self.assertEqual(verify_loop(self.root / "loop-runs/m-dev", server_log=str(other))["result"], "fail")
        code, out, err = in_process(self.root, "loop-runs/m-dev", "--server-log", "no-such-log.jsonl")
        self.assertEqual((code, out), (2, ""))

    def test_the_class_check_counts_a_model_loop_as_an_extra(self):
        made = []
        with contextlib.redirect_stderr(io.StringIO()):
            for name, scenario, options in (("repair-01", "repair", {}), ("stuck-01", "stuck", {}),
                                            ("budget-01", "repair", {"max_attempts": 1}),
                                            ("time-01", "repair", {"max_seconds": 0}),
                                            ("semantic-01", "semantic", {}), ("permission-01", "permission", {}),
                                            ("li-01", "model", {"open_model": opener(made=made)})):
                loop_lab.run_loop(self.root, name, scenario, **options)
        for developer in made:
            developer.close()
        students = self.root / "class"

        def only(keep):
            return lambda where, names: [name for name in names if Path(where).name in ("loop-runs", "runs")
                                         and (name.startswith("li-") != keep or name.startswith("own-"))]
        for student, keep in (("张三", False), ("李四", True)):
            for folder in ("loop-runs", "runs"):
                shutil.copytree(self.root / folder, students / student / folder, ignore=only(keep))
        code, out, err = in_process(self.root, "--class", "class")
        rows = {row["student"]: row for row in map(json.loads, out.splitlines()) if "student" in row}
        self.assertEqual(rows["张三"]["result"], "pass", rows["张三"])  # the six cases, and the model loops beside
        self.assertEqual(rows["李四"]["result"], "incomplete", rows["李四"])  # a model loop is none of the six
        self.assertEqual(set(rows["李四"]["cases"].values()), {"missing"})

    def test_a_developer_model_of_ones_own_is_hashed_where_it_ran(self):
        script = self.root / "my-models" / "mine.json"
        script.parent.mkdir()
        script.write_bytes((self.root / "samples/models/repeat.json").read_bytes())
        self.addCleanup(shutil.rmtree, script.parent)
        made = []
        with contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.root, "own-01", "model", model_script=str(script),
                                          open_model=opener(made=made))
        for developer in made:
            developer.close()
        self.assertIn("my-models/mine.json", record["context"]["entries"])
        self.assertEqual(self.verified("own-01")["result"], "pass")
        kept = script.read_bytes()
        script.write_bytes(kept + b"\n ")
        self.assertEqual(self.verified("own-01")["result"], "fail")  # not the script it ran
        script.unlink()
        self.assertEqual(self.verified("own-01")["result"], "needs_human")  # not handed in: nobody can say
        script.write_bytes(kept)

    def test_a_last_proposal_exporting_a_file_the_course_does_not_ship_is_a_permission_boundary(self):
        for proposed, stop in (({"action": "export", "sample": "../notes", "claim": "x"},
                                ("needs_human", "permission_boundary", None)),
                               ({"action": "publish", "target": "valid", "claim": "x"},
                                ("needs_human", "permission_boundary", None)),
                               ({"action": "export", "sample": "valid", "claim": "x"}, None)):
            proposal = Proposal(1, None)
            proposal.record, proposal.proposed = {"stop": "answered"}, proposed
            with self.subTest(proposed=proposed):
                self.assertEqual(proposal_stop(proposal), stop)

    def test_the_proposal_rule(self):
        self.assertEqual(proposal_of('{"action": "export", "sample": "valid", "claim": "x"}')["sample"], "valid")
        for text in ('{"action": "export", "sample": "valid"}', '好 {"action": "export", "sample": "v", "claim": "x"}',
                     '{"action": "export", "target": "valid", "claim": "x"}', "[]",
                     '{"action": "export", "sample": "valid", "claim": "x", "claim": "y"}',
                     json.dumps({"action": "export", "sample": "valid", "claim": "长" * 501})):
            self.assertIsNone(proposal_of(text), text)
        self.assertIsNotNone(proposal_of(json.dumps({"action": "export", "sample": "valid", "claim": "长" * 500})))


if __name__ == "__main__":
    unittest.main()
