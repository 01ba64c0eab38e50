"""The loop verifier's rules, each guarded on its own: for every condition of verifier/shape.py, outcome.py,
resumed.py, proposals.py and older.py that carries a rule, a record that only that condition catches
(tests/mutants_rules.py breaks each).

Each class makes its honest loops once, in-process (run_loop, as tests/test_promises_verifier.py does), and checks
that they pass; each test then edits one field as a forger would and asserts the finding's kind and the result:
`fail` for what no honest machine writes. Where a rule has a threshold, both sides of it are tried. Another rule
often catches the same record too (the result alone would not tell them apart): the kind asserted is the one only the
rule under test reports.
"""
import contextlib
import io
import json
import shutil
from unittest import mock

import export_review
import loop_lab
from tests import test_promises_verifier as promises
from tests.developing import opener
from tests.support import fields_of, kinds_in
from tests.test_resume import Shifted
from tests.test_verify_loop import as_old_record, cut_off
from tests.test_verify_resumed import on_shifted_clocks

HONEST = {"r": ("repair", {"max_attempts": 5, "max_seconds": 300}), "s": ("stuck", {}), "p": ("permission", {}),
          "cut": ("slow", {"attempt_timeout": 0.1, "tool_seconds": 0.4})}
HONEST_RESULTS = {"r": "pass", "s": "pass", "p": "pass", "cut": "needs_human"}


def first(rec):
    return rec["attempts"][0]


def handoff_of(rec):
    """A handoff an honest loop could write for REC: it names the record and every child."""
    inspect = [f"loop-runs/{rec['run']}/loop.json"] + [f"{entry['child_run']}/run.json" for entry in rec["attempts"]]
    return {"stopped_at": "第 2 次尝试之后", "done": ["导出"], "inspect": inspect, "decide": promises.WHY}


class RulesTestCase(promises.PromiseTestCase):
    """Loops made once for the class (HONEST); each test forges one of them and the record is put back."""
    honest = {}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with contextlib.redirect_stderr(io.StringIO()):
            for name, (scenario, options) in cls.honest.items():
                loop_lab.run_loop(cls.root, name, scenario, **options)

    def assertForged(self, name, change, result, kind):
        """Loop NAME with CHANGE made is RESULT, one of its findings of KIND (its fields returned)."""
        with self.forged(name, change):
            verdict = self.verdict(name)
        self.assertEqual(verdict["result"], result, verdict)
        self.assertNotIn("check_crashed", kinds_in(verdict))
        self.assertIn(kind, kinds_in(verdict), verdict)
        return fields_of(verdict, kind)

    def assertHonest(self, name, change, result="pass"):
        """Loop NAME with CHANGE made is still what an honest loop writes: RESULT, as before."""
        with self.forged(name, change):
            verdict = self.verdict(name)
        self.assertEqual(verdict["result"], result, verdict)
        return verdict


class RecordRulesTest(RulesTestCase):
    honest = HONEST

    def test_the_honest_loops(self):
        for name, result in HONEST_RESULTS.items():
            with self.subTest(name):
                self.assertEqual(self.verdict(name)["result"], result)

    def test_only_the_last_attempt_may_be_undecided(self):
        def undecided_first(rec):
            cut_off(rec)
            first(rec)["decision"] = None
        self.assertForged("r", undecided_first, "fail", "decision_missing")
        self.assertForged("r", lambda rec: first(rec)["decision"].update(why=" \n "), "fail", "decision_shape")

    def test_the_attempt_timeout_lies_in_its_range(self):
        self.assertEqual(self.verdict("cut")["result"], "needs_human")  # 0.1 s, the bottom of the range
        self.assertForged("r", lambda rec: rec["budget"].update(attempt_timeout=0.09), "fail", "budget_wrong")
        self.assertHonest("r", lambda rec: rec["budget"].update(attempt_timeout=0.1))

    def test_a_timeout_names_a_wait_and_an_inventory(self):
        def timeout(**fields):
            return lambda rec: rec["attempts"][-1]["timeout"].update(fields)
        for fields in ({"waited_seconds": -1}, {"inventory": []}):
            with self.subTest(**{key: str(value) for key, value in fields.items()}):
                found = self.assertForged("cut", timeout(**fields), "fail", "timeout_wrong")
                self.assertEqual(found["limit"], 0.1)

    def test_the_top_level_fields_that_say_nothing_of_the_outcome(self):
        forgeries = {"id_wrong": lambda rec: rec.update(id="g" * 32),
                     "semantic_review_wrong": lambda rec: rec.update(semantic_review="passed"),
                     "context_wrong": lambda rec: rec["context"].update(files=rec["context"]["files"] + 1)}
        for kind, change in forgeries.items():
            with self.subTest(kind):
                self.assertForged("r", change, "fail", kind)

    def test_a_blocked_proposal_belongs_to_a_permission_stop(self):
        blocked = {"action": "delete", "target": "samples", "reason": "删除样本不在允许的动作里"}
        self.assertForged("r", lambda rec: rec.update(blocked_proposal=blocked), "fail", "blocked_unexpected")
        self.assertForged("p", lambda rec: rec["blocked_proposal"].update(reason=5), "fail", "blocked_shape")

    def test_a_running_loop_has_no_finish_time(self):
        def running_but_finished(rec):
            finished = rec["finished_at"]
            cut_off(rec)
            rec["finished_at"] = finished
        self.assertForged("r", running_but_finished, "fail", "times_wrong")

    def test_a_timeout_only_on_a_timed_out_attempt(self):
        timeout = {"seconds": 0.1, "waited_seconds": 0.2, "inventory": {}}
        self.assertForged("r", lambda rec: first(rec).update(timeout=timeout), "fail", "timeout_wrong")

    def test_the_loops_time_is_never_negative(self):
        self.assertForged("r", lambda rec: rec.update(elapsed_seconds=-1), "fail", "elapsed_wrong")

    def test_the_budgets_lie_in_their_ranges(self):
        self.assertEqual(self.verdict("r")["result"], "pass")  # made with 5 attempts and 300 s, the tops
        self.assertForged("r", lambda rec: rec["budget"].update(max_attempts=6), "fail", "budget_wrong")
        self.assertForged("r", lambda rec: rec["budget"].update(max_seconds=301), "fail", "budget_wrong")

    def test_a_handoff_only_where_a_person_decides(self):
        handoff = json.loads(self.record_path("s").read_text(encoding="utf-8"))["handoff"]
        self.assertForged("r", lambda rec: rec.update(handoff=handoff), "fail", "handoff_wrong")

    def test_a_decision_of_ten_characters_is_long_enough_nine_are_not(self):
        self.assertHonest("s", lambda rec: rec["handoff"].update(decide="一二三四五六七八九十"))
        self.assertForged("s", lambda rec: rec["handoff"].update(decide=" 一二三四五六七八九 "), "fail",
                          "handoff_wrong")
        self.assertForged("s", lambda rec: rec["handoff"].update(stopped_at=" \t"), "fail", "handoff_wrong")

    def test_a_candidate_is_a_course_sample_with_its_hash(self):
        for change in ({"sample": "passed"}, {"sha256": None}):
            with self.subTest(**change):
                self.assertForged("r", lambda rec: first(rec)["candidate"].update(change), "fail", "candidate_shape")

    def test_feedback_holds_exactly_its_two_fields(self):
        self.assertForged("r", lambda rec: first(rec)["feedback"].update(hint="改一下引号"), "fail",
                          "feedback_shape")

    def test_only_the_last_attempt_may_be_running_or_unknown(self):
        def running_first(rec):
            cut_off(rec)
            first(rec).update(state="running", status=None)
        self.assertForged("r", running_first, "fail", "state_wrong")
        def unknown_first(rec):
            rec.update(status="interrupted", reason="keyboard_interrupt", handoff=handoff_of(rec))
            first(rec).update(state="unknown", status=None)
        self.assertForged("r", unknown_first, "fail", "state_wrong")

    def test_a_done_attempt_names_its_finished_child(self):
        for status in ("running", None):
            with self.subTest(status):
                self.assertForged("r", lambda rec: first(rec).update(status=status), "fail", "status_state")

    def test_an_attempt_in_flight_has_no_finish(self):
        def finished_in_flight(rec):
            done = dict(rec["attempts"][-1])
            cut_off(rec)
            rec["attempts"][-1].update(finished_at=done["finished_at"], finished_offset=done["finished_offset"])
        self.assertForged("r", finished_in_flight, "fail", "attempt_finish_wrong")
        self.assertForged("r", lambda rec: first(rec).update(started_offset=-1), "fail", "attempt_start_wrong")

    def test_a_segment_never_lasts_less_than_nothing(self):
        self.assertForged("r", lambda rec: rec["segments"][0].update(elapsed_seconds=-1), "fail", "segments_wrong")


    # --- the stop, the decisions and the timeouts (verifier/outcome.py) ---

    def test_one_attempt_beyond_the_budget_is_too_many(self):
        found = self.assertForged("r", lambda rec: rec["budget"].update(max_attempts=1), "fail", "too_many_attempts")
        self.assertEqual((found["count"], found["most"]), (2, 1))

    def test_one_attempt_after_a_stop_is_one_too_many(self):
        # a loop whose own stall rule is switched off: it goes on once after attempt 2 repeated attempt 1
        with mock.patch.object(loop_lab.OuterLoop, "stalled", lambda loop, attempt, earlier: None), \
                contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.root, "on", "stuck", max_attempts=3)
        self.assertEqual(len(record["attempts"]), 3)
        found = self.assertForged("on", lambda rec: None, "fail", "went_on")
        self.assertEqual((found["number"], found["next"]), (2, 3))

    def test_a_timeout_waited_its_whole_limit(self):
        self.assertHonest("cut", lambda rec: rec["attempts"][-1]["timeout"].update(waited_seconds=0.0995),
                          "needs_human")
        found = self.assertForged("cut", lambda rec: rec["attempts"][-1]["timeout"].update(waited_seconds=0.098),
                                  "fail", "timeout_short")
        self.assertEqual((found["label"], found["seconds"]), ("timeout.waited_seconds", 0.098))

    def test_a_loop_interrupted_after_its_last_decision_stopped_honestly(self):
        # the last decision (stop, mechanical_pass) was written; the signal came before the stop was
        verdict = self.assertHonest("r", lambda rec: rec.update(status="interrupted", reason="keyboard_interrupt",
                                                                handoff=handoff_of(rec)), "needs_human")
        self.assertNotIn("last_stop_contradicted", kinds_in(verdict))

    def test_a_blocked_proposal_has_a_reason(self):
        self.assertForged("p", lambda rec: rec["blocked_proposal"].update(reason=" "), "fail", "blocked_wrong")

    def test_a_time_budget_spent_exactly_is_spent(self):
        record = self.shifted("tie", "repair", max_seconds=30)
        self.assertEqual((record["reason"], len(record["attempts"])), ("time_budget", 1))
        # the same loop run with a budget of exactly the time it took: the loop's own check is `>=`
        self.assertHonest("tie", lambda rec: rec["budget"].update(max_seconds=rec["elapsed_seconds"]))
        self.assertForged("tie", lambda rec: rec["budget"].update(max_seconds=rec["elapsed_seconds"] + 0.001), "fail",
                          "stop_unsupported")


class ResumedAloneTest(RulesTestCase):
    """`f` cut as attempt 1's child folder appeared (a partial child), `a` cut after that child finished (adopted),
    both resumed (tests/test_verify_resumed.py's loops)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # no loops of HONEST: these two are made on tests/test_resume.py's clocks
        clocks = {"now": Shifted()}
        with on_shifted_clocks(clocks):
            with mock.patch.object(export_review, "export_candidate", side_effect=KeyboardInterrupt):
                loop_lab.run_loop(cls.root, "f", "repair", **clocks["now"].options())
            loop_lab.run_loop(cls.root, "a", "repair",
                              **clocks["now"].options(check_child=mock.Mock(side_effect=KeyboardInterrupt)))
            for name in ("f", "a"):
                clocks["now"] = Shifted(clocks["now"].shift + 60)
                loop_lab.run_loop(cls.root, name, None, **clocks["now"].options())

    def test_the_honest_resumed_loops(self):
        for name in ("f", "a"):
            with self.subTest(name):
                self.assertEqual(self.verdict(name)["result"], "pass")

    def test_a_judgement_made_at_a_resume(self):
        self.assertForged("a", lambda rec: first(rec)["resume"].update(segment=1), "fail", "resume_shape")
        self.assertForged("f", lambda rec: first(rec)["resume"].update(run_status="passed"), "fail", "resume_shape")

    def test_the_segments_a_resume_adds(self):
        self.assertForged("a", lambda rec: rec["segments"][1].update(after_attempt=6), "fail", "segments_wrong")

    def test_the_gap_is_the_wall_clocks_difference_to_the_millisecond(self):
        def gap(rec):
            rec["segments"][1]["gap_seconds"] = round(rec["segments"][1]["gap_seconds"] + 0.001, 3)
        self.assertForged("a", gap, "fail", "segment_gap")

    def test_a_partial_child_found_is_still_there(self):
        child = self.root / "runs" / "f-01"
        kept = self.root / "kept-f-01"
        shutil.move(child, kept)
        self.addCleanup(shutil.move, kept, child)
        self.assertForged("f", lambda rec: None, "fail", "judged_partial_gone")

    def test_an_adopted_child_had_finished_when_it_did(self):
        run = self.root / "runs" / "a-01" / "run.json"
        self.keep(run)
        promises.rewrite(run, lambda child: child.update(status="running"))
        self.assertForged("a", lambda rec: None, "fail", "judged_complete_unfinished")

    def test_an_adopted_attempt_finished_when_its_child_did(self):
        def later(rec):
            stamp = first(rec)["finished_at"]
            first(rec)["finished_at"] = stamp[:-3] + f"{(int(stamp[-3:-1]) + 1) % 60:02d}Z"
        self.assertForged("a", later, "fail", "judged_finish_time")


class ProposalRulesTest(RulesTestCase):
    """Model loops (tests/test_verify_model.py's developer models against the in-process mock): `m-spent` stopped by
    its API-call budget of 3 after one attempt, `m-failing` whose model service failed, `m-publish` whose model
    proposed to publish."""
    models = {"m-spent": ("developer", {"max_api_calls": 3}), "m-failing": ("failing", {}),
              "m-publish": ("publish", {})}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        made = []
        with contextlib.redirect_stderr(io.StringIO()):
            for name, (script, options) in cls.models.items():
                loop_lab.run_loop(cls.root, name, "model", model_script=str(cls.root / f"samples/models/{script}.json"),
                                  open_model=opener(made=made), **options)
        for developer in made:
            developer.close()

    def honest_result(self, name):
        return self.verdict(name)["result"]

    def question(self, name, change):
        """A change of nothing in loop NAME's record, CHANGE made to its first proposal's question record instead."""
        path = self.root / "loop-runs" / name / "proposals" / "01" / "question.json"
        self.keep(path)
        promises.rewrite(path, change)
        return lambda rec: None

    def test_the_honest_model_loops(self):
        for name in self.models:
            with self.subTest(name):
                self.assertEqual(self.honest_result(name), "pass")

    def test_an_attempts_model_entry(self):
        forgeries = {"entry_proposal": {"proposal": "loop-runs/m-spent/proposals/02/question.json"},
                     "entry_counts": {"turns": -1}, "entry_tokens": {"tokens": -1}, "entry_claim_stop": {"claim": 5}}
        for kind, fields in forgeries.items():
            with self.subTest(kind):
                found = self.assertForged("m-spent", lambda rec: first(rec)["model"].update(fields), "fail",
                                          "attempt_model_wrong")
                self.assertEqual((found["number"], found["problem"].kind), (1, kind))

    def test_the_api_call_budget_lies_in_its_range(self):
        self.assertHonest("m-failing", lambda rec: rec["budget"].update(max_api_calls=100))
        for calls in (101, 0):
            with self.subTest(calls):
                found = self.assertForged("m-failing", lambda rec: rec["budget"].update(max_api_calls=calls), "fail",
                                          "api_calls_budget_wrong")
                self.assertEqual(found["value"], calls)

    def test_the_mocks_log_is_in_the_loops_own_folder(self):
        self.assertForged("m-spent", lambda rec: rec["model"].update(server_log="loop-runs/m-dev/server-log.jsonl"),
                          "fail", "model_wrong")

    def test_a_proposal_record_is_one_of_a_proposal(self):
        found = self.assertForged("m-spent", self.question("m-spent", lambda q: q.update(kind="question")), "fail",
                                  "proposal_identity")
        self.assertEqual(found["kind"], "question")

    def test_a_reply_text_only_where_the_model_answered_and_complete_is_a_yes_or_no(self):
        self.assertForged("m-failing", self.question("m-failing", lambda q: q.update(reply_text="{}")), "fail",
                          "reply_text_extra")
        self.assertForged("m-spent", self.question("m-spent", lambda q: q.update(reply_text_complete=1)), "fail",
                          "reply_text_shape")

    def test_the_api_call_budget_spent_exactly(self):
        self.assertEqual(self.honest_result("m-spent"), "pass")  # 3 requests, a budget of 3: spent, not over
        found = self.assertForged("m-spent", lambda rec: rec["budget"].update(max_api_calls=2), "fail",
                                  "api_calls_over")
        self.assertEqual((found["sent"], found["limit"]), (3, 2))
        found = self.assertForged("m-spent", lambda rec: rec["budget"].update(max_api_calls=4), "fail",
                                  "api_budget_unspent")
        self.assertEqual((found["sent"], found["limit"]), (3, 4))

    def test_the_servers_log_holds_no_proposal_the_record_does_not(self):
        log = self.root / "loop-runs" / "m-spent" / "server-log.jsonl"
        self.keep(log)
        lines = log.read_bytes().rstrip(b"\n").split(b"\n")
        stray = json.loads(lines[-1])
        stray["run"] = "m-spent/proposals/09"
        log.write_bytes(b"\n".join(lines + [json.dumps(stray).encode("utf-8")]) + b"\n")
        found = self.assertForged("m-spent", lambda rec: None, "fail", "server_log_strays")
        self.assertEqual(found["runs"], ["m-spent/proposals/09"])

    def test_a_blocked_proposal_is_the_models_last_one(self):
        self.assertForged("m-publish", lambda rec: rec["blocked_proposal"].update(target="samples"), "fail",
                          "blocked_not_proposed")


class OlderRulesTest(RulesTestCase):
    """The honest loops as the oldest workspace wrote them (loop-run/1, children harness-run/1: as_old_record of
    tests/test_verify_loop.py): for a person; each edit below is one that version never wrote."""
    honest = {name: HONEST[name] for name in ("r", "p")}

    def old(self, name, change):
        """The verdict on loop NAME's children and record as loop-run/1 wrote them, CHANGE made to the record; all of
        them are put back afterwards."""
        paths = [*sorted((self.root / "runs").glob(f"{name}-0*/run.json")), self.record_path(name)]
        kept = [path.read_bytes() for path in paths]
        try:
            for path in paths[:-1]:
                promises.rewrite(path, lambda run: [run.update(schema="harness-run/1"), run.pop("id"),
                                                    run.pop("duration_seconds")])
            promises.rewrite(paths[-1], lambda rec: [as_old_record(rec), change(rec)])
            return self.verdict(name)
        finally:
            for path, data in zip(paths, kept):
                path.write_bytes(data)

    def assertOld(self, name, change, kind):
        verdict = self.old(name, change)
        self.assertEqual(verdict["result"], "fail", verdict)
        self.assertNotIn("check_crashed", kinds_in(verdict))
        self.assertIn(kind, kinds_in(verdict), verdict)
        return fields_of(verdict, kind)

    def test_the_old_records_need_a_person(self):
        for name in self.honest:
            with self.subTest(name):
                self.assertEqual(self.old(name, lambda rec: None)["result"], "needs_human")

    def test_what_the_oldest_loop_never_wrote(self):
        forgeries = {"old_scenario": lambda rec: rec.update(scenario="slow"),
                     "old_stop": lambda rec: rec.update(status="needs_human", reason="attempt_timeout",
                                                        handoff=handoff_of(rec)),
                     "old_context": lambda rec: rec["context"].update(files=17),
                     "old_run_wrong": lambda rec: rec.update(run="other"),
                     "old_attempt_number": lambda rec: first(rec).update(attempt=3),
                     "old_elapsed": lambda rec: rec.update(elapsed_seconds=-1)}
        for kind, change in forgeries.items():
            with self.subTest(kind):
                self.assertOld("r", change, kind)

    def test_an_old_blocked_proposal_has_a_reason_in_words(self):
        self.assertOld("p", lambda rec: rec["blocked_proposal"].update(reason=5), "old_blocked")

    def test_an_old_attempt_the_derivation_can_read(self):
        forgeries = {"another sample": lambda rec: first(rec)["candidate"].update(sample="passed"),
                     "no hash": lambda rec: first(rec)["candidate"].update(sha256=None),
                     "feedback with a hint": lambda rec: first(rec)["feedback"].update(hint="改一下引号"),
                     "done, its child running": lambda rec: first(rec).update(status="running")}
        for what, change in forgeries.items():
            with self.subTest(what):
                self.assertEqual(self.assertOld("r", change, "old_attempt_unreadable")["number"], 1)
