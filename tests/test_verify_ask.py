"""verify_ask.py: every honest record passes (or needs a person), every forged one fails.

The records are made by the real client and loop against the in-process mock (tests/asking.py), one per mock
mode, and checked against the stop and request count docs/assistant/DESIGN.md gives for the mode and against the
mock's own log. Then each class of forgery a learner could try (a stop relabelled, a turn or retry hidden or
added, a tool result flipped, a wait shorter than retry-after, a budget overshot, a body hash changed, a server
line left out, offsets going backwards, a repeated key) is made by hand, and again at random positions the
hand-made ones never touched (seeded, so a failure can be replayed).
"""
import contextlib
import copy
import email.utils
import io
import json
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from tests.asking import Asker
from tests.support import _FAST_TEMP, ROOT, WorkspaceTestCase

from assistant.agent import Limits  # noqa: E402  (tests.asking put project/ on the path)
import mock_model  # noqa: E402
import verify_ask  # noqa: E402
from askcheck.rules import charge  # noqa: E402

STOPS = ("answered", "max_turns", "tool_failures", "no_progress", "output_truncated", "context_full",
         "model_refused", "api_error", "interrupted", "token_budget")


def design_modes():
    """mode -> (stop, requests) from the mock's table in docs/assistant/DESIGN.md."""
    text = (ROOT / "docs" / "assistant" / "DESIGN.md").read_text(encoding="utf-8")
    section = text.split("\n## mock 模式\n", 1)[1].split("\n## ", 1)[0]
    table = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 5 and cells[4].isdigit():
            stop = re.match(r"[a-z_]+", cells[3]).group(0)
            for mode in cells[0].split("/"):
                table[mode.strip()] = (stop, int(cells[4]))
    return table


def interrupt_at_tool(name, arguments):
    raise KeyboardInterrupt


RUNS = {}  # made once for the module (setUpModule): every class below reads them


def setUpModule():
    tmp = Path(tempfile.mkdtemp(prefix="verify-ask-", dir=_FAST_TEMP))
    unittest.addModuleCleanup(shutil.rmtree, tmp, True)
    asker = Asker(tmp, trickle_seconds=0.02, slow_seconds=0.01)
    unittest.addModuleCleanup(asker.close)
    script = [{"tool_calls": [{"name": "list_notes", "arguments": {}}]},
              {"status": 429, "error": "slow", "headers": {"retry-after": "0.5"}}, {"content": "好"}]
    runs = {}
    for mode in mock_model.MODES:
        options = {"timeout": 0.1} if mode == "trickle" else {}
        runs[mode] = asker.ask(mode, script=script if mode == "script" else None, **options)
    runs["budget"] = asker.ask("progress", limits=Limits(max_tokens=12000))
    runs["interrupted"] = asker.ask("mixed", tool_runner=interrupt_at_tool)
    runs["deadline-wait"] = asker.ask("429", deadline=0.3)  # the first backoff (0.5 s) does not fit
    runs["deadline-cut"] = asker.ask("trickle", deadline=0.15)  # the attempt's own limit is the time left

    def slow_tool(name, arguments):
        asker.clock.sleep(1.0)  # a tool that takes the question's time
        return "[]", False
    runs["deadline-tools"] = asker.ask("progress", deadline=0.5, tool_runner=slow_tool)
    nobody = socket.socket()
    nobody.bind(("127.0.0.1", 0))  # a port nothing listens on: every attempt is refused
    runs["refused"] = asker.ask("plain", url=f"http://127.0.0.1:{nobody.getsockname()[1]}/refused")
    nobody.close()
    later = email.utils.formatdate(time.time() + 5, usegmt=True)
    runs["http-date"] = asker.ask("script", script=[{"status": 503, "error": "busy", "headers": {"retry-after": later}},
                                                    {"content": "好"}])
    RUNS.update(tmp=tmp, asker=asker, runs=runs, log=verify_ask.ServerLog(asker.log))


class Records(unittest.TestCase):
    """One honest record per mock mode (and a few more shapes), made once for the whole module."""

    @classmethod
    def setUpClass(cls):
        cls.tmp, cls.asker, cls.runs, cls.log = RUNS["tmp"], RUNS["asker"], RUNS["runs"], RUNS["log"]

    def check(self, record, log=None):
        """verify_ask's result on RECORD against the mock's log (another LOG; False: the record alone)."""
        log = self.log if log is None else log or None
        return verify_ask.check_record(json.loads(json.dumps(record)), log, run="x")

    def forged_log(self, edit):
        """The mock's log with EDIT applied to its lines, as a ServerLog."""
        lines = self.asker.log.read_text(encoding="utf-8").splitlines()
        path = Path(tempfile.mkdtemp(dir=self.tmp)) / "log.jsonl"
        path.write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
        return verify_ask.ServerLog(path)

    def assertFails(self, record, log=None, why=""):
        result = self.check(record, log)
        self.assertEqual(result["result"], "fail", f"{why}: {result}")
        return result


class HonestRecordsTest(Records):
    def test_every_mode_passes_with_the_stop_design_gives_and_the_servers_count(self):
        expected = design_modes()
        for mode in mock_model.MODES:
            outcome, record, folder = self.runs[mode]
            if mode in ("script", "slow"):
                continue  # slow is DESIGN's Ctrl-C row: tests/test_question_record.py sends the real signal
            with self.subTest(mode=mode):
                result = verify_ask.check_question(folder, self.log)
                self.assertEqual(result["result"], "pass", result)
                self.assertEqual((result["stop"], result["requests"]), expected[mode])
                self.assertEqual(result["requests"], len(self.log.of_run(record["id"])))

    def test_the_script_mode_and_the_budget_pass_too(self):
        for name, stop, requests in (("script", "answered", 3), ("budget", "token_budget", 7), ("slow", "answered", 1)):
            with self.subTest(name=name):
                result = verify_ask.check_question(self.runs[name][2], self.log)
                self.assertEqual((result["result"], result["stop"], result["requests"]), ("pass", stop, requests))

    def test_the_deadline_and_an_http_date_pass_with_the_clients_own_reasons(self):
        for name, why, attempts in (("deadline-wait", "deadline", 1), ("deadline-cut", "deadline", 1),
                                    ("deadline-tools", "deadline", 0), ("http-date", None, 2)):
            with self.subTest(name=name):
                record = self.runs[name][1]
                result = verify_ask.check_question(self.runs[name][2], self.log)
                self.assertEqual(result["result"], "pass", result)
                last = record["turns"][-1]
                self.assertEqual(((last["gave_up"] or {}).get("why"), len(last["attempts"])), (why, attempts))
        retry = self.runs["http-date"][1]["turns"][0]["attempts"][1]
        self.assertTrue(4 < retry["wait"] <= 5, retry)  # the date, counted from when the 503 arrived
        forged = copy.deepcopy(self.runs["http-date"][1])
        forged["turns"][0]["attempts"][0]["received_at"] -= 3  # as if it had come 3 s earlier: the wait is wrong
        self.assertIn("wait_not_hint", self.assertFails(forged, why="received_at moved")["findings"])
        forged = copy.deepcopy(self.runs["deadline-wait"][1])
        forged["turns"][0]["gave_up"]["left"] += 5
        self.assertIn("gave_up_left", self.assertFails(forged, why="more time left than there was")["findings"])
        forged = copy.deepcopy(self.runs["deadline-wait"][1])
        forged["turns"][0]["gave_up"]["why"] = "limit"
        self.assertIn("gave_up_wrong", self.assertFails(forged, why="retries said used up")["findings"])

    def test_an_interrupted_question_needs_a_person(self):
        result = verify_ask.check_question(self.runs["interrupted"][2], self.log)
        self.assertEqual((result["result"], result["stop"]), ("needs_human", "interrupted"))
        self.assertEqual(result["findings"], ["interrupted"])

    def test_a_record_still_running_needs_a_person(self):
        record = copy.deepcopy(self.runs["loop"][1])
        record.update(stop="running", ended_at=None, answer_sha256=None, elapsed=None)
        record["turns"] = record["turns"][:2]
        record["requests"] = 2
        record["tokens"]["used"] = sum(a["charged"]["tokens"] for t in record["turns"] for a in t["attempts"])
        result = self.check(record)
        self.assertEqual(result["result"], "needs_human", result)
        self.assertIn("log_extra_running", result["findings"])  # the third request the record had not yet kept

    def test_the_demo_model_records_turns_without_requests(self):
        from assistant.demo_model import DemoModel
        from assistant.record import QuestionRecorder
        from assistant.agent import run_question
        model = DemoModel()
        folder = Path(tempfile.mkdtemp(dir=self.tmp))
        recorder = QuestionRecorder(folder / "question.json", "demo", "RAG 的步骤顺序是什么？", model, Limits())
        recorder.start()
        outcome = run_question(model, [], "RAG 的步骤顺序是什么？", on_event=recorder.listener())
        recorder.finish(outcome)
        result = verify_ask.check_question(folder)
        self.assertEqual((result["result"], result["stop"], result["turns"], result["requests"]),
                         ("pass", "answered", 3, 0))
        record = json.loads((folder / "question.json").read_text(encoding="utf-8"))
        record["turns"][0]["attempts"] = copy.deepcopy(self.runs["plain"][1]["turns"][0]["attempts"])
        self.assertIn("demo_sent", self.assertFails(record, why="a demo record with a request")["findings"])


class ForgeryTest(Records):
    """Each class of forgery, made by hand where it is easiest to see."""

    def test_every_stop_relabelled_fails(self):
        by_stop = {"answered": "plain", "max_turns": "progress", "tool_failures": "fail", "no_progress": "loop",
                   "output_truncated": "length", "context_full": "400", "model_refused": "refuse", "api_error": "429",
                   "interrupted": "interrupted", "token_budget": "budget"}
        for stop, run in by_stop.items():
            record = self.runs[run][1]
            self.assertEqual(record["stop"], stop)
            for other in STOPS:
                if other in (stop, "interrupted"):
                    continue  # an honest Ctrl-C can land after any reply: relabelled so, it needs a person
                with self.subTest(stop=stop, relabelled=other):
                    forged = dict(copy.deepcopy(record), stop=other)
                    self.assertIn("stop", self.assertFails(forged, why=f"{stop} -> {other}")["findings"])

    def test_a_relabelled_interrupt_is_not_a_pass(self):
        forged = dict(copy.deepcopy(self.runs["fail"][1]), stop="interrupted")
        self.assertEqual(self.check(forged)["result"], "needs_human")

    def test_a_turn_hidden_or_added_fails(self):
        record = self.runs["cycle"][1]
        hidden = copy.deepcopy(record)
        del hidden["turns"][2]
        self.assertIn("turn_number", self.assertFails(hidden, why="turn 3 removed")["findings"])
        for turn, number in zip(hidden["turns"], range(1, 99)):
            turn["turn"] = number
        self.assertFails(hidden, why="turn 3 removed, renumbered")
        added = copy.deepcopy(record)
        added["turns"].insert(3, copy.deepcopy(added["turns"][2]))
        for turn, number in zip(added["turns"], range(1, 99)):
            turn["turn"] = number
        self.assertFails(added, why="turn 3 doubled, renumbered")

    def test_a_retry_hidden_or_added_fails(self):
        record = self.runs["429"][1]
        hidden = copy.deepcopy(record)
        del hidden["turns"][0]["attempts"][1]
        self.assertIn("retry_number", self.assertFails(hidden, why="retry 1 removed")["findings"])
        hidden["turns"][0]["attempts"][1]["retry"] = 1
        self.assertFails(hidden, why="retry 1 removed, renumbered")
        added = copy.deepcopy(self.runs["500-then-ok"][1])
        extra = copy.deepcopy(added["turns"][0]["attempts"][0])
        added["turns"][0]["attempts"].insert(0, extra)
        for attempt, number in zip(added["turns"][0]["attempts"], range(9)):
            attempt["retry"] = number
        self.assertFails(added, why="a fourth attempt")
        plain = copy.deepcopy(self.runs["plain"][1])  # a whole possible history: a 500, then the answer
        first, = plain["turns"][0]["attempts"]
        failed = dict(copy.deepcopy(first), status=500, error="status", usage=None,
                      charged={"tokens": 0, "estimated": False}, end=first["start"])
        plain["turns"][0]["attempts"] = [failed, dict(first, retry=1, wait=0.5, start=first["start"] + 0.5,
                                                      end=first["end"] + 0.5)]
        plain["requests"] = 2
        plain["elapsed"] += 0.5
        self.assertEqual(verify_ask.check_record(plain)["result"], "pass")  # the record alone cannot tell
        self.assertIn("log_missing", self.assertFails(plain, why="a retry the server never saw")["findings"])

    def test_a_tool_result_flipped_fails(self):
        for run, turn, index in (("fail", 0, 0), ("fail", 2, 0), ("mixed", 4, 0), ("loop", 1, 0)):
            with self.subTest(run=run, turn=turn):
                forged = copy.deepcopy(self.runs[run][1])
                result = forged["turns"][turn]["results"][index]
                result["is_error"] = not result["is_error"]
                self.assertFails(forged, why="is_error flipped")
                forged = copy.deepcopy(self.runs[run][1])
                forged["turns"][turn]["results"][index]["content_sha256"] = "0" * 64
                self.assertFails(forged, why="result hash changed")

    def test_a_wait_shorter_than_retry_after_fails(self):
        forged = copy.deepcopy(self.runs["429-after"][1])
        retry = forged["turns"][0]["attempts"][1]
        self.assertEqual(retry["wait"], 1.0)
        retry["wait"] = 0.4
        self.assertIn("wait_not_hint", self.assertFails(forged, why="wait 0.4 after retry-after: 1")["findings"])
        forged = copy.deepcopy(self.runs["429-after"][1])
        for field in ("start", "end"):
            forged["turns"][0]["attempts"][1][field] -= 0.6  # waited 0.4 s, saying 1
        self.assertIn("gap_short", self.assertFails(forged, why="sent 0.6 s early")["findings"])

    def test_a_token_budget_overshot_fails(self):
        record = self.runs["budget"][1]
        for change in ("budget", "charged", "used"):
            with self.subTest(change=change):
                forged = copy.deepcopy(record)
                if change == "budget":
                    forged["limits"]["token_budget"] = forged["tokens"]["budget"] = 5000
                elif change == "charged":
                    forged["turns"][2]["attempts"][0]["charged"]["tokens"] += 9000
                else:
                    forged["tokens"]["used"] = 12500
                self.assertFails(forged, why=change)

    def test_a_body_hash_changed_fails(self):
        forged = copy.deepcopy(self.runs["429"][1])
        forged["turns"][0]["attempts"][2]["body_sha256"] = "1" * 64
        self.assertIn("body_changed", self.assertFails(forged, why="retry with another body")["findings"])
        forged = copy.deepcopy(self.runs["plain"][1])
        forged["turns"][0]["attempts"][0]["body_sha256"] = "1" * 64
        self.assertIn("log_missing", self.assertFails(forged, why="a body the server never saw")["findings"])

    def test_a_server_line_left_out_fails(self):
        record = self.runs["500-then-ok"][1]
        mine = [index for index, line in enumerate(self.asker.log.read_text(encoding="utf-8").splitlines())
                if json.loads(line)["run"] == record["id"]]
        log = self.forged_log(lambda lines: [line for index, line in enumerate(lines) if index != mine[1]])
        self.assertIn("log_missing", self.assertFails(record, log, why="the second 500 left out")["findings"])

    def test_offsets_going_backwards_fail(self):
        forged = copy.deepcopy(self.runs["loop"][1])
        forged["turns"][2]["attempts"][0]["start"] = forged["turns"][0]["attempts"][0]["start"]  # before turn 2
        self.assertIn("offsets_backwards", self.assertFails(forged, why="turn 3 started early")["findings"])

        def backwards(lines):
            second = json.loads(lines[1])
            second["at"] = -1.0
            return [lines[0], json.dumps(second, ensure_ascii=False)] + lines[2:]
        log = self.forged_log(backwards)
        self.assertIn("log_backwards", self.assertFails(self.runs["plain"][1], log, why="server time")["findings"])

    def test_strict_records(self):
        folder = Path(tempfile.mkdtemp(dir=self.tmp))
        text = json.dumps(self.runs["plain"][1], ensure_ascii=False, indent=2)
        cases = {"duplicate_key": text.replace('"stop": "answered",', '"stop": "max_turns", "stop": "answered",'),
                 "not_json": text[:-40], "not_object": "[]", "schema": text.replace("question-run/1", "question-run/0")}
        for kind, body in cases.items():
            with self.subTest(kind=kind):
                (folder / "question.json").write_text(body, encoding="utf-8")
                result = verify_ask.check_question(folder)
                self.assertEqual((result["result"], result["findings"]), ("fail", [kind]))


class EachRuleTest(Records):
    """For each rule, a record that only it catches (the others all hold): both sides, where a rule has two."""

    def one_attempt_then(self, base, failed, **retry):
        """BASE's record with one failed attempt (FAILED's fields) before its only, successful one."""
        record = copy.deepcopy(self.runs[base][1])
        first, = record["turns"][0]["attempts"]
        gone = dict(copy.deepcopy(first), usage=None, charged={"tokens": 0, "estimated": False}, end=first["start"],
                    **failed)
        wait = retry.pop("wait", 0.5)
        record["turns"][0]["attempts"] = [gone, dict(first, retry=1, wait=wait, start=first["start"] + wait,
                                                     end=first["end"] + wait, **retry)]
        record["requests"] = 2
        record["elapsed"] += wait
        return record

    def test_a_usage_no_server_can_have_counted_is_charged_the_bound_as_an_estimate(self):
        replied = {"status": 200, "error": None, "connected": True}  # DESIGN.md 记账: 0 to the bound, else the bound
        for total, charged in ((0, (0, False)), (100, (100, False)), (-1, (100, True)), (101, (100, True))):
            with self.subTest(total=total):
                self.assertEqual(charge(dict(replied, usage={"total_tokens": total}), 100), charged)

    def test_a_retry_after_a_failure_that_is_not_retried(self):
        retried = self.one_attempt_then("plain", {"status": 500, "error": "status"})
        self.assertEqual(self.check(retried, log=False)["result"], "pass")
        after_401 = self.one_attempt_then("plain", {"status": 401, "error": "status"})
        self.assertIn("retried_not_retryable", self.assertFails(after_401, log=False)["findings"])

    def test_at_most_max_retries_retries(self):
        def failing_then_ok(failures):
            record = copy.deepcopy(self.runs["plain"][1])
            first, = record["turns"][0]["attempts"]
            attempts, shift = [], 0.0
            for retry in range(failures + 1):
                wait = 0.5 * 2 ** (retry - 1) if retry else 0.0  # the longest backoff the rule allows
                shift += wait
                moved = dict(copy.deepcopy(first), retry=retry, wait=wait, start=first["start"] + shift,
                             end=first["end"] + shift)
                attempts.append(moved if retry == failures else dict(moved, status=500, error="status", usage=None,
                                                                     charged={"tokens": 0, "estimated": False},
                                                                     end=moved["start"]))
            record["turns"][0]["attempts"], record["requests"] = attempts, failures + 1
            record["elapsed"] += shift
            return record
        self.assertEqual(self.check(failing_then_ok(2), log=False)["result"], "pass")  # max_retries: 2
        self.assertIn("too_many_retries", self.assertFails(failing_then_ok(3), log=False)["findings"])

    def test_no_retry_after_a_server_asked_for_more_than_a_minute(self):
        for asked, past in (("61", True), ("60", False)):
            retried = self.one_attempt_then("plain", {"status": 429, "error": "status", "retry_after": asked})
            with self.subTest(asked=asked):
                self.assertEqual("retried_past_cap" in self.check(retried, log=False)["findings"], past)

    def test_a_servers_zero_wait_is_none(self):
        zero = self.one_attempt_then("plain", {"status": 429, "error": "status", "retry_after": "0"}, wait=0.45)
        self.assertEqual(self.check(zero, log=False)["result"], "pass")
        self.assertFails(self.one_attempt_then("plain", {"status": 429, "error": "status", "retry_after": "0"},
                                               wait=0.0), log=False)

    def test_an_unread_2xx_is_charged_its_bound(self):
        record = copy.deepcopy(self.runs["error-200"][1])
        attempt, = record["turns"][0]["attempts"]
        attempt.update(error="not_json", usage={"total_tokens": 5}, charged={"tokens": 5, "estimated": False})
        record["tokens"].update(used=5, estimated=False)
        self.assertIn("charged", self.assertFails(record, log=False)["findings"])

    def test_the_attempts_limit_is_the_time_left(self):
        record = copy.deepcopy(self.runs["deadline-cut"][1])
        record["turns"][0]["attempts"][0]["limit"] = 60.0
        self.assertIn("limit_wrong", self.assertFails(record)["findings"])

    def test_an_answer_is_the_replys_text(self):
        record = dict(copy.deepcopy(self.runs["plain"][1]), answer_sha256="2" * 64)
        self.assertEqual(self.assertFails(record)["findings"], ["answer"])

    def test_a_refusal_the_budget_would_have_admitted(self):
        record = copy.deepcopy(self.runs["budget"][1])
        record["limits"]["token_budget"] = record["tokens"]["budget"] = 20000
        self.assertEqual(self.assertFails(record)["findings"], ["refused"])

    def test_a_turn_put_in_with_every_count_kept(self):
        record = copy.deepcopy(self.runs["progress"][1])
        turns = record["turns"]
        inserted = copy.deepcopy(turns[4])
        took = inserted["attempts"][0]["end"] - turns[4]["attempts"][0]["start"] + 0.01
        for turn in turns[5:]:
            for attempt in turn["attempts"]:
                attempt["start"], attempt["end"] = attempt["start"] + took, attempt["end"] + took
        for field, value in (("id", "call_forged"), ("arguments", '{"query": "另一个词"}')):
            inserted["reply"]["tool_calls"][0][field] = value
        inserted["results"][0].update(call_id="call_forged", content_sha256="3" * 64)
        for attempt in inserted["attempts"]:
            attempt["start"], attempt["end"] = attempt["start"] + took, attempt["end"] + took
        turns.insert(5, inserted)
        dropped = turns.pop()
        for turn, number in zip(turns, range(1, 99)):
            turn["turn"] = number
        record["elapsed"] += took
        record["tokens"]["used"] += (inserted["attempts"][0]["charged"]["tokens"]
                                     - dropped["attempts"][0]["charged"]["tokens"])
        self.assertEqual(self.check(record, log=False)["findings"], ["body_not_growing"])

    def test_the_status_the_server_sent(self):
        record = copy.deepcopy(self.runs["429"][1])
        record["turns"][0]["attempts"][1]["status"] = 503
        self.assertEqual(self.assertFails(record)["findings"], ["log_differs"])

    def test_the_server_saw_the_wait(self):
        record = self.runs["429-after"][1]

        def early(lines):
            mine = [index for index, line in enumerate(lines) if json.loads(line)["run"] == record["id"]]
            first, second = (json.loads(lines[index]) for index in mine)
            second["at"] = first["at"] + 0.1
            return [json.dumps(second, ensure_ascii=False) if index == mine[1] else line
                    for index, line in enumerate(lines)]
        self.assertEqual(self.assertFails(record, self.forged_log(early))["findings"], ["log_gap"])

    def test_an_interrupted_attempt_that_got_its_reply_is_in_the_servers_log(self):
        record = copy.deepcopy(self.runs["plain"][1])
        record["turns"][0]["attempts"][0]["error"] = "unknown"
        record["turns"][0].update(reply=None, usage=None)
        record["stop"] = "interrupted"
        self.assertEqual(self.check(record)["result"], "needs_human")
        log = self.forged_log(lambda lines: [line for line in lines
                                                           if json.loads(line)["run"] != record["id"]])
        self.assertIn("log_missing", self.assertFails(record, log)["findings"])

    def test_a_refused_connection_is_charged_nothing(self):
        result = verify_ask.check_question(self.runs["refused"][2])
        self.assertEqual((result["result"], result["stop"], result["requests"]), ("pass", "api_error", 3))
        attempts = self.runs["refused"][1]["turns"][0]["attempts"]
        self.assertEqual({(a["connected"], a["error"], a["charged"]["tokens"]) for a in attempts},
                         {(False, "connection", 0)})

    def test_the_base_url_keeps_no_key_or_query(self):
        from assistant.record import model_view

        class Model:
            offline, name, base_url = False, "m", "https://user:secret@api.example.com:8443/v1?key=sk-1#x"
        self.assertEqual(model_view(Model())["base_url"], "https://api.example.com:8443/v1")


class UnseenForgeryTest(Records):
    """The same classes at random places (seeded: a failure says its seed and can be replayed)."""

    def forgeries(self):
        rng = random.Random(1408)
        multi = ["loop", "fail", "cycle", "progress", "mixed", "heed-reminder", "budget", "fail-mixed"]
        retried = ["429", "503", "529", "500-then-ok", "429-after", "400-retry", "cut-off", "trickle", "script"]
        for _ in range(40):
            run = rng.choice(multi)
            record = copy.deepcopy(self.runs[run][1])
            turns = record["turns"]
            kind = rng.choice(["hide_turn", "add_turn", "flip", "hash", "backwards", "relabel", "charge"])
            k = rng.randrange(len(turns) - 1)
            if kind == "hide_turn":
                del turns[k]
            elif kind == "add_turn":
                turns.insert(k, copy.deepcopy(turns[k]))
            elif kind == "flip":
                result = rng.choice(turns[k]["results"])
                result["is_error"] = not result["is_error"]
            elif kind == "hash":
                rng.choice(turns[k]["results"])["content_sha256"] = f"{rng.getrandbits(256):064x}"
            elif kind == "backwards":
                turns[k + 1]["attempts"][0]["start"] = round(turns[k]["attempts"][0]["end"] - rng.uniform(0.01, 1), 3)
            elif kind == "relabel":
                record["stop"] = rng.choice([stop for stop in STOPS if stop not in (record["stop"], "interrupted")])
            else:
                rng.choice(turns[k]["attempts"])["charged"]["tokens"] += rng.randint(1, 500)
            if kind in ("hide_turn", "add_turn") and rng.random() < 0.5:
                for turn, number in zip(turns, range(1, 99)):
                    turn["turn"] = number
            yield f"{run}/{kind}@{k}", record
        for _ in range(30):
            run = rng.choice(retried)
            record = copy.deepcopy(self.runs[run][1])
            turn = next(turn for turn in record["turns"] if len(turn["attempts"]) > 1)
            kind = rng.choice(["hide_retry", "add_retry", "short_wait", "body", "late"])
            j = rng.randrange(1, len(turn["attempts"]))
            if kind == "hide_retry":
                del turn["attempts"][j]
                if rng.random() < 0.5:
                    for attempt, number in zip(turn["attempts"], range(9)):
                        attempt["retry"] = number
            elif kind == "add_retry":
                turn["attempts"].insert(j, dict(copy.deepcopy(turn["attempts"][j - 1]), retry=j))
            elif kind == "short_wait":
                turn["attempts"][j]["wait"] = round(turn["attempts"][j]["wait"] * rng.uniform(0.1, 0.7), 3)
            elif kind == "body":
                turn["attempts"][j]["body_bytes"] += rng.randint(1, 50)
            else:
                turn["attempts"][j]["start"] = round(turn["attempts"][j - 1]["end"] + 0.001, 3)
            yield f"{run}/{kind}@{j}", record

    def test_random_forgeries_of_each_class_fail(self):
        for where, record in self.forgeries():
            with self.subTest(forgery=where):
                self.assertFails(record, why=where)


class CommandLineTest(WorkspaceTestCase):
    def main(self, *args):
        """verify_ask's exit code, stdout and stderr, run in this process from the workspace copy."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(self.root):
            try:
                code = verify_ask.main(list(args))
            except SystemExit as exc:
                code = exc.code
        return code, out.getvalue(), err.getvalue()

    def test_exit_codes_and_one_line_per_record(self):
        code, _, stderr = self.run_cli("project/app.py", "ask", "--record", "demo", "RAG 的步骤顺序是什么？")
        self.assertEqual(code, 0, stderr)
        code, stdout, stderr = self.run_cli("project/verify_ask.py", "ask-runs/demo")
        self.assertEqual(code, 0, stderr)
        self.assertEqual(self.assertOneJsonLine(stdout), {"result": "pass", "stop": "answered", "turns": 3,
                                                          "requests": 0})
        record = self.root / "ask-runs" / "demo" / "question.json"
        record.write_text(record.read_text(encoding="utf-8").replace('"answered"', '"max_turns"'), encoding="utf-8")
        code, stdout, stderr = self.main("ask-runs/demo")
        self.assertEqual((code, self.assertOneJsonLine(stdout)["result"]), (1, "fail"))
        self.assertIn("stop 是 max_turns", stderr)
        for args in (["ask-runs/nothing"], ["project"], ["ask-runs/demo", "--server-log", "nowhere.jsonl"],
                     ["ask-runs/demo", "--explain"], []):
            with self.subTest(args=args):
                code, stdout, stderr = self.main(*args)
                self.assertEqual((code, stdout), (2, ""))
                self.assertEqual(len([line for line in stderr.splitlines() if "参数错误" in line]), 1, stderr)

    def test_it_imports_nothing_of_the_assistant(self):
        probe = ("import sys; sys.argv = ['verify_ask.py']; sys.path.insert(0, 'project'); import verify_ask; "
                 "print(sorted(name for name in sys.modules if name.split('.')[0] in "
                 "('assistant', 'mock_model', 'mockapi', 'harness', 'loop_lab')))")
        out = subprocess.run([sys.executable, "-c", probe], cwd=self.root, capture_output=True, text=True)
        self.assertEqual(out.stdout.strip(), "[]", out.stderr)


if __name__ == "__main__":
    unittest.main()
