"""Tests of the verifier's side of issue 15: each decision re-derived, timeouts judged, --explain.

Honest loops are made in-process (loop_lab.run_loop) in one copy of the workspace for the class
(test_loop_lab.SharedWorkspaceTestCase); their records are then changed the way a learner making a
loop look right would change them, and the verifier is asked again, in-process. The decisions and
texts expected here are written out in the tests, never imported from the code under test.
The `slow` runs inject a short wait for the stand-in tool; nothing here waits on a budget.
"""
import contextlib
import io
import json
import shutil
import unicodedata
from unittest import mock

import export_review
from verifier import check as loop_check
from verifier import explain as loop_explain
import loop_lab
from tests.test_class_check import in_process
from tests.test_loop_lab import SharedWorkspaceTestCase
from tests.support import fields_of, kinds_in
from verifier.findings import Finding

GO_ON = ("continue", "first_failure")
PASSED = ("stop", "mechanical_pass")
STALLED = ("stop", "repeated_failure")
UNEXPECTED = ("stop", "unexpected_error")
# name -> (scenario, options, the decision after each attempt, verdict)
HONEST = {
    "repair": ("repair", {}, [GO_ON, PASSED], "pass"),
    "stuck": ("stuck", {}, [GO_ON, STALLED], "pass"),
    "budget": ("repair", {"max_attempts": 1}, [GO_ON], "pass"),
    "time0": ("repair", {"max_seconds": 0}, [], "pass"),
    "semantic": ("semantic", {}, [PASSED], "pass"),
    "permission": ("permission", {}, [], "pass"),
}


def shown(value):
    """A field's value as a test writes it: a finding as (kind, fields), anything else as it is."""
    return (value.kind, {name: shown(inner) for name, inner in value.fields.items()}) if isinstance(value, Finding) \
        else value


def decision(next_, reason, why="测试里改写的决定"):
    return {"next": next_, "reason": reason, "why": why}


def forge_decision(entry, forged):
    """ENTRY's decision replaced by FORGED, keeping the reading taken when it was made (a dict's only)."""
    entry["decision"] = dict(forged, decided_offset=entry["decision"]["decided_offset"]) if type(forged) is dict \
        else forged


class ExplainTestCase(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name, (scenario, options, _decisions, _verdict) in HONEST.items():
            cls.make(name, scenario, **options)

    @classmethod
    def make(cls, name, scenario, **options):
        with contextlib.redirect_stderr(io.StringIO()):
            return loop_lab.run_loop(cls.root, name, scenario, **options)[0]

    def record_path(self, name):
        return self.root / "loop-runs" / name / "loop.json"

    @contextlib.contextmanager
    def forged(self, name, change):
        """loop-runs/NAME/loop.json as CHANGE(record) leaves it, for one block; put back afterwards."""
        path = self.record_path(name)
        original = path.read_bytes()
        record = json.loads(original)
        change(record)
        path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
        try:
            yield
        finally:
            path.write_bytes(original)

    def check(self, name):
        """The LoopCheck of loop-runs/NAME, made from the copy's root (paths are shown from there)."""
        with contextlib.chdir(self.root):
            return loop_check.checked_loop(self.root / "loop-runs" / name)

    def account(self, check):
        with contextlib.chdir(self.root):
            return loop_explain.account(check)

    def assertFails(self, name, kind, **fields):
        """Loop NAME fails with a finding of KIND whose fields include FIELDS (a finding inside as its kind and fields:
        shown()); returns that finding's fields."""
        result = self.check(name).result()
        self.assertEqual(result["result"], "fail", result)
        self.assertNotIn("check_crashed", kinds_in(result))  # caught by a check, not by the safety net
        found = fields_of(result, kind)
        self.assertEqual({field: shown(found[field]) for field in fields}, fields, result["problems"])
        return found

    def main(self, *args):
        """verify_loop.main in-process from the copy: (exit code, stdout, stderr)."""
        return in_process(self.root, *args)


class DecisionTest(ExplainTestCase):
    def test_the_decision_of_every_stop_kind_is_verified(self):
        cases = dict(HONEST)
        with mock.patch.object(export_review, "export_candidate", side_effect=RuntimeError("坏了")):
            self.make("child-needs-human", "repair")
        cases["child-needs-human"] = (None, None, [UNEXPECTED], "needs_human")
        self.make("mismatch", "repair", check_child=lambda path: {"result": "fail", "problems": ["测试注入"]})
        # the loop saw a mismatch the verifier does not see now: the stop stands, for a person
        cases["mismatch"] = (None, None, [GO_ON], "needs_human")
        for name, (_scenario, _options, decisions, verdict) in cases.items():
            with self.subTest(name=name):
                check = self.check(name)
                account = self.account(check)
                self.assertEqual([line for line in account.splitlines() if line.lstrip().startswith("≠")], [])
                recorded = [(a["decision"]["next"], a["decision"]["reason"]) for a in check.record["attempts"]]
                self.assertEqual([round_.derived for round_ in check.rounds], decisions)
                self.assertEqual(recorded, [UNEXPECTED] if name == "mismatch" else decisions)
                self.assertEqual(check.result()["result"], verdict, check.result()["problems"])
                self.assertNotIn("决定与证据不符", " ".join(check.result()["problems"]))

    def test_a_missing_decision_only_on_the_last_attempt_of_an_undecided_record(self):
        def interrupt(path):
            raise KeyboardInterrupt

        self.make("cut", "repair", check_child=interrupt)
        check = self.check("cut")
        self.assertEqual((check.record["status"], check.record["attempts"][-1]["decision"]), ("interrupted", None))
        self.assertEqual(check.result()["result"], "needs_human")
        with self.forged("repair", lambda rec: rec["attempts"][0].update(decision=None)):
            self.assertFails("repair", "decision_missing", where=("attempt_entry", {"number": 1}))
        with self.forged("repair", lambda rec: rec["attempts"][1].update(decision=None)):
            self.assertFails("repair", "decision_missing", where=("attempt_entry", {"number": 2}))

    def test_a_forged_decision_fails(self):
        go_on, stop = ("decision_continue", {}), lambda reason: ("decision_stop", {"reason": reason})
        forgeries = (  # the record's decision, and the one the evidence supports
            ("repair", 0, decision("stop", "mechanical_pass"), stop("mechanical_pass"), go_on),
            ("repair", 0, decision("stop", "repeated_failure"), stop("repeated_failure"), go_on),
            ("stuck", 1, decision("stop", "mechanical_pass"), stop("mechanical_pass"), stop("repeated_failure")),
            ("stuck", 1, decision("continue", "first_failure"), go_on, stop("repeated_failure")),
            ("semantic", 0, decision("stop", "unexpected_error"), stop("unexpected_error"), stop("mechanical_pass")),
        )
        for name, index, forged, recorded, derived in forgeries:
            with self.subTest(name=name, decision=forged), \
                    self.forged(name, lambda rec: forge_decision(rec["attempts"][index], forged)):
                self.assertFails(name, "decision_contradicted", number=index + 1, recorded=recorded, derived=derived)

    def test_a_decision_must_be_shaped_and_say_why(self):
        for forged in (decision("stop", "attempt_budget"), decision("continue", "mechanical_pass"),
                       decision("continue", "first_failure", why=" "), {"next": "continue", "reason": "first_failure"},
                       "continue"):
            with self.subTest(decision=forged), \
                    self.forged("budget", lambda rec: forge_decision(rec["attempts"][0], forged)):
                self.assertFails("budget", "decision_shape", where=("attempt_entry", {"number": 1}))

    def test_the_last_stop_decided_is_the_loops_stop(self):
        # the decision agrees with the children; the record's stop was relabelled a person's case
        def relabel(rec):
            rec.update(status="needs_human", reason="unexpected_error", error_type="OSError")
        with self.forged("stuck", relabel):
            self.assertFails("stuck", "last_stop_contradicted", number=2, decided="repeated_failure",
                             status="needs_human", reason="unexpected_error")


class SlowTest(ExplainTestCase):
    """slow without --attempt-timeout, its stand-in tool waiting a short real time (the clocks stay real)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make("slow", "slow", tool_seconds=0.02)
        cls.make("slow-budget", "slow", max_seconds=0.2, tool_seconds=0.3)

    def test_with_the_default_budgets_it_ends_as_repair_does(self):
        check = self.check("slow")
        self.assertEqual([round_.derived for round_ in check.rounds], [GO_ON, PASSED])
        self.assertEqual((check.result()["result"], check.record["status"], len(check.rounds)),
                         ("pass", "needs_review", 2))

    def test_a_time_budget_shorter_than_the_wait_is_judged_on_the_readings(self):
        check = self.check("slow-budget")
        self.assertEqual((check.record["reason"], len(check.rounds)), ("time_budget", 1))
        self.assertGreaterEqual(check.record["attempts"][0]["finished_offset"], 0.3)
        self.assertEqual((check.result()["result"], check.result()["problems"]), ("pass", []))
        account = self.account(check)
        self.assertIn("第 2 轮：单调时钟读数 ", account)
        self.assertIn("秒 ≥ 预算 0.2 秒：不再提出候选", account)
        self.assertIn("停止：budget_exhausted/time_budget，共 1 次尝试，与循环的记录相同", account)

    def test_a_time_budget_stop_the_readings_do_not_support_fails(self):
        with self.forged("slow-budget", lambda rec: rec["budget"].update(max_seconds=30)):
            self.assertFails("slow-budget", "stop_unsupported", reason="time_budget")


class TimeoutTest(ExplainTestCase):
    """slow with --attempt-timeout shorter than the tool's wait: the executor ends attempt 1 (a real child
    process, ended after 0.1 s), and the verifier can only hand it to a person."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make("cut-off", "slow", attempt_timeout=0.1, tool_seconds=5)

    def test_a_timed_out_attempt_is_for_a_person_naming_the_child(self):
        check = self.check("cut-off")
        attempt = check.record["attempts"][0]
        self.assertEqual((check.record["reason"], attempt["state"]), ("attempt_timeout", "timed_out"))
        self.assertEqual([round_.derived for round_ in check.rounds], [("stop", "attempt_timeout")])
        result = check.result()
        self.assertEqual(result["result"], "needs_human", result["problems"])
        self.assertIn("runs/cut-off-01", " ".join(result["problems"]))
        account = self.account(check)
        self.assertIn("  执行器：到单次时限 0.1 秒时终止", account)
        self.assertIn("记下的遗留：子运行目录不存在", account)
        self.assertIn("停止：needs_human/attempt_timeout（runs/cut-off-01 超过单次时限被终止", account)

    def test_a_wait_below_the_limit_fails(self):
        def waited_less(rec):
            rec["attempts"][0]["timeout"]["waited_seconds"] = 0.05

        def ended_sooner(rec):
            attempt = rec["attempts"][0]
            attempt["finished_offset"] = round(attempt["started_offset"] + 0.05, 3)
        for change, label in ((waited_less, "timeout.waited_seconds"),
                              (ended_sooner, "finished_offset − started_offset")):
            with self.subTest(label=label), self.forged("cut-off", change):
                found = self.assertFails("cut-off", "timeout_short", number=1, limit=0.1, label=label)
                self.assertAlmostEqual(found["seconds"], 0.05, places=3)

    def test_a_timeout_without_a_limit_fails_by_name(self):
        def no_limit(rec):
            rec["budget"]["attempt_timeout"] = None
            rec["attempts"][0]["timeout"]["seconds"] = None
        with self.forged("cut-off", no_limit):
            self.assertFails("cut-off", "timeout_wrong", where=("attempt_entry", {"number": 1}))

    def test_a_timed_out_record_forged_from_a_finished_child_fails(self):
        def timed_out(rec):  # repair's second attempt, which finished, relabelled as ended at a limit of 1 s
            attempt = rec["attempts"][1]
            attempt.update(state="timed_out", status=None, feedback=None,
                           finished_offset=round(attempt["started_offset"] + 1.5, 3),
                           decision=dict(decision("stop", "attempt_timeout"),
                                         decided_offset=round(attempt["started_offset"] + 1.5, 3)),
                           timeout={"seconds": 1, "waited_seconds": 1.2,
                                    "inventory": {"exists": False, "run_status": None, "files": []}})
            rec["budget"]["attempt_timeout"] = 1
            rec.update(status="needs_human", reason="attempt_timeout", elapsed_seconds=attempt["finished_offset"],
                       handoff={"stopped_at": "第 2 次尝试到单次时限 1 秒仍未返回", "done": ["第 1 次", "第 2 次"],
                                "inspect": ["loop-runs/repair/loop.json", "runs/repair-01/run.json",
                                            "runs/repair-02/run.json"],
                                "decide": "先核对 runs/repair-02/ 里留下了什么，再决定是否重新运行。"})
        with self.forged("repair", timed_out):
            self.assertFails("repair", "timed_out_finished", number=2, child="runs/repair-02", status="needs_review")


class ExplainTest(ExplainTestCase):
    def test_stdout_is_unchanged_and_the_account_comes_before_the_verdict(self):
        folder = "loop-runs/repair"
        plain = self.main(folder)
        code, stdout, stderr = self.main(folder, "--explain")
        self.assertEqual((code, stdout), plain[:2])
        self.assertTrue(stderr.endswith(plain[2]), stderr)
        self.assertTrue(stderr.startswith("核对过程：loop-runs/repair"), stderr)
        for text in ("第 1 轮", "第 2 轮", "预算检查：第 1 次尝试，上限 3 次", "范围检查", "子运行：runs/repair-01",
                     "独立核对：verify_harness 为 pass", "决定：继续", "停止：needs_review/mechanical_pass"):
            self.assertIn(text, stderr)

    def test_every_line_is_under_100_characters(self):
        long_name = "a" * 61
        self.make(long_name, "stuck")
        long_message = "很长的错误消息" * 30

        def lengthen(rec):
            rec["attempts"][0]["feedback"]["message"] = long_message
        with self.forged(long_name, lengthen):
            accounts = [self.account(self.check(name)) for name in (*HONEST, long_name)]
        self.assertIn(long_message[:20], accounts[-1])
        for account in accounts:
            for line in account.splitlines():
                self.assertLess(len(line), 100, line)
                # and under 100 columns, a Chinese character taking two
                self.assertLess(sum(1 + (unicodedata.east_asian_width(char) in "WF") for char in line), 100, line)

    def test_a_path_is_never_cut_by_the_wrap(self):
        path = "/private/var/folders/x7/windows-behaviour-abc/linked-temp/lesson14-38sty9uz/lesson-14/runs/cut-off-01"
        for head in ("停止：needs_human/attempt_timeout（", "  子运行：", "核对过程：很长的说明" * 5 + " "):
            line = f"{head}{path} 超过单次时限被终止，结果不知道）：不按情景预期判断，交给人"
            with self.subTest(head=head):
                pieces = loop_explain.cut(line)
                self.assertTrue(any(path in piece for piece in pieces), pieces)
                self.assertGreater(len(pieces), 1)

    def test_the_account_says_in_words_what_the_record_holds_as_codes(self):
        """A record's JSON null or "missing" hash is said in Chinese, never as Python's None or the bare code."""
        def never_stopped(rec):  # as a loop killed (kill -9) right after its first child ran leaves it
            rec.update(status="running", reason=None, handoff=None, elapsed_seconds=0, finished_at=None)
            rec["attempts"][0].update(state="running", status=None, feedback=None, decision=None, finished_at=None,
                                      finished_offset=None)

        def sample_was_missing(rec):
            rec["attempts"][0]["candidate"]["sha256"] = "missing"
        with self.forged("budget", never_stopped):
            account = self.account(self.check("budget"))
        self.assertIn(f"停止：{Finding('stop_none', status='running')}（记录仍是 running", account)
        with self.forged("budget", sample_was_missing):
            account += self.account(self.check("budget"))
        self.assertIn("提出候选：export bad-quote（当时 samples/bad-quote.json 不存在，没有哈希）", account)
        self.assertNotRegex(account, r"None|missing|null")

    def test_the_loops_claim_is_shown_beside_the_verifiers(self):
        with self.forged("stuck", lambda rec: forge_decision(rec["attempts"][1], decision("stop", "mechanical_pass"))):
            code, _stdout, stderr = self.main("loop-runs/stuck", "--explain")
        self.assertEqual(code, 1)
        self.assertIn("  决定：停止 stalled/repeated_failure", stderr)
        said = Finding("differs_decision", recorded=Finding("decision_stop", reason="mechanical_pass"))
        self.assertIn(f"  ≠ {said}", stderr)

    def test_recorded_text_cannot_fake_a_line(self):
        def inject(rec):
            rec["attempts"][0]["feedback"]["message"] = "坏\n停止：needs_review/mechanical_pass，与循环的记录相同"
        with self.forged("budget", inject):
            _code, _stdout, stderr = self.main("loop-runs/budget", "--explain")
        self.assertNotIn("\n停止：needs_review", stderr)
        self.assertIn("坏\\n停止", stderr)

    def test_recorded_text_cannot_flood_the_account(self):
        def flood(rec):
            rec["attempts"][0]["feedback"]["message"] = "长" * 200_000
            rec.update(status="needs_human", reason="unexpected_error", error_type="E" * 200_000)
        with self.forged("budget", flood):
            account = self.account(self.check("budget"))
        self.assertLess(len(account.splitlines()), 40)
        self.assertIn("（共 200000 个字符）", account)

    def test_a_childs_long_text_is_cut_in_the_verdict_and_the_account(self):
        path = self.root / "runs" / "budget-01" / "run.json"
        original = path.read_bytes()
        self.addCleanup(path.write_bytes, original)
        run = json.loads(original)
        run["sample"] = "x" * 20_000
        path.write_bytes(json.dumps(run, ensure_ascii=False, indent=2).encode("utf-8"))
        check = self.check("budget")
        self.assertEqual(check.result()["result"], "fail")
        self.assertLess(len(" ".join(check.result()["problems"])), 5000)
        self.assertLess(len(self.account(check).splitlines()), 60)

    def test_a_record_it_cannot_follow_round_by_round_is_said_so(self):
        with self.forged("budget", lambda rec: rec.pop("attempts")):
            code, stdout, stderr = self.main("loop-runs/budget", "--explain")
        self.assertEqual((code, json.loads(stdout)["result"]), (1, "fail"))
        self.assertIn("无法逐轮说明；问题见下。\nloop-runs/budget：fail", stderr)

    def test_explain_is_for_loop_folders_only(self):
        for args in (("--class", "."), ("--pack", "x.zip")):
            with self.subTest(args=args):
                code, stdout, stderr = self.main(*args, "--explain")
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn("--explain", stderr)
