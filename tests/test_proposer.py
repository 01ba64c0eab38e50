"""The model scenario's proposal machinery (proposer/): what a proposal is, the API-call budget, one proposal asked
through the notes assistant's client and recorded, the local server the loop starts and always ends, and the
options that choose the development model.

The proposals are asked against an in-process mock with the client's waits skipped (tests/developing.py), so no
test waits on a retry-after or a backoff; the local server is a real process, started and ended.
"""
import hashlib
import json
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request
from pathlib import Path

from tests.developing import PROPOSAL_LIMITS, Developer, proposal
from tests.support import _FAST_TEMP, ROOT

import cli  # noqa: E402
import verify_ask  # noqa: E402  (tests.developing put project/ on the path)
from machinery import arguments  # noqa: E402
from proposer import options  # noqa: E402
from proposer.budget import ApiCallBudget, ApiCallBudgetExhausted  # noqa: E402
from proposer.developer import ModelFailed  # noqa: E402
from proposer.proposal import NotAProposal, list_samples, parse_proposal, question  # noqa: E402
from proposer.server import LocalServer, ServerNotStarted  # noqa: E402

SCENARIOS = ("repair", "stuck", "semantic", "permission", "slow", "model")


class ProposalRuleTest(unittest.TestCase):
    def test_an_export_and_any_other_action_are_proposals(self):
        self.assertEqual(parse_proposal(' {"action": "export", "sample": "valid", "claim": "好了"}\n'),
                         {"action": "export", "sample": "valid", "claim": "好了"})
        self.assertEqual(parse_proposal(proposal("publish", "external-website")),
                         {"action": "publish", "target": "external-website", "claim": "这次一定行。"})

    def test_anything_else_is_not_a_proposal(self):
        cases = {
            "not_json": ['好的：{"action": "export", "sample": "valid", "claim": "x"}',
                         '```json\n{"action": "export", "sample": "valid", "claim": "x"}\n```',
                         '{"action": "export", "sample": "valid", "claim": "x", "claim": "y"}'],
            "not_object": ['["export", "valid"]', '"export valid"'],
            "keys": ['{"action": "export", "sample": "valid"}', '{"action": "export", "target": "valid", "claim": "x"}',
                     '{"action": "publish", "sample": "valid", "claim": "x"}',
                     '{"action": "export", "sample": "valid", "claim": "x", "why": "y"}'],
            "types": ['{"action": "export", "sample": "valid", "claim": " "}',
                      '{"action": "export", "sample": 1, "claim": "x"}'],
            "claim_too_long": [proposal("export", "valid", "长" * 501)],
        }
        for why, texts in cases.items():
            for text in texts:
                with self.subTest(text=text), self.assertRaises(NotAProposal) as caught:
                    parse_proposal(text)
                self.assertEqual(caught.exception.why, why)

    def test_a_claim_of_500_characters_is_still_one(self):
        self.assertEqual(len(parse_proposal(proposal("export", "valid", "长" * 500))["claim"]), 500)

    def test_each_question_carries_the_feedback_so_far_verbatim(self):
        first = question(1, [])
        self.assertIn("还没有任何尝试", first)
        said = {"error_type": "ValidationError", "message": "S10 的预期是空结果，实际命中 A01：“引文”"}
        second = question(2, [(1, "bad-quote", said)])
        for text in ("第 2 次尝试", "bad-quote", said["error_type"], said["message"]):
            self.assertIn(text, second)
        self.assertNotIn("还没有任何尝试", second)

    def test_list_samples_gives_each_known_sample_and_its_hash(self):
        content, is_error = list_samples(ROOT)("list_samples", "{}")
        self.assertFalse(is_error)
        listed = json.loads(content)["samples"]
        self.assertEqual([item["sample"] for item in listed], ["valid", "bad-quote", "semantic"])
        for item in listed:
            data = (ROOT / item["file"]).read_bytes().replace(b"\r\n", b"\n")
            self.assertEqual(item["sha256"], hashlib.sha256(data).hexdigest())

    def test_list_samples_is_the_only_tool_and_takes_no_arguments(self):
        tool = list_samples(ROOT)
        for name, arguments_given in (("list_samples", '{"all": true}'), ("list_samples", "[]"),
                                      ("list_samples", "{"), ("read_note", "{}")):
            content, is_error = tool(name, arguments_given)
            self.assertTrue(is_error, (name, arguments_given))
            self.assertTrue(content.startswith("错误："))
        self.assertFalse(tool("list_samples", "")[1])  # no arguments at all is {}


class ApiCallBudgetTest(unittest.TestCase):
    def test_it_admits_exactly_its_limit(self):
        budget = ApiCallBudget(3)
        for _ in range(3):
            budget.admit()
        self.assertEqual((budget.sent, budget.left()), (3, 0))
        with self.assertRaises(ApiCallBudgetExhausted) as caught:
            budget.admit()
        self.assertEqual((caught.exception.sent, caught.exception.limit, budget.sent), (3, 3, 3))

    def test_its_guard_admits_before_each_request_only(self):
        heard, budget = [], ApiCallBudget(1)
        hook = budget.guard(lambda kind, data: heard.append(kind))
        hook("before", {})
        hook("after", {})
        hook("gave_up", {})
        with self.assertRaises(ApiCallBudgetExhausted):
            hook("before", {})
        self.assertEqual((heard, budget.sent), (["before", "after", "gave_up"], 1))


class DevelopmentModelTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="proposer-", dir=_FAST_TEMP)
        self.addCleanup(tmp.cleanup)
        self.folder = Path(tmp.name) / "loop-runs" / "m-01"

    def developer(self, script):
        developer = Developer(ROOT, self.folder, script)
        self.addCleanup(developer.close)
        return developer

    def record(self, number):
        return cli.read_json(self.folder / "proposals" / f"{number:02d}" / "question.json")

    def checked(self, number, developer):
        return verify_ask.check_question(self.folder / "proposals" / f"{number:02d}", developer.log,
                                         PROPOSAL_LIMITS)

    def test_the_default_developer_takes_more_requests_than_turns(self):
        developer = self.developer("developer")
        said, model = [], None
        model = developer.model(said=said)
        first, entry = model.propose(1, [])
        self.assertEqual(first, {"action": "export", "sample": "bad-quote"})
        self.assertEqual((entry["turns"], entry["requests"], entry["stop"]), (2, 3, "answered"))
        self.assertEqual(entry["proposal"], "loop-runs/m-01/proposals/01/question.json")
        self.assertIn("修好", entry["claim"])
        self.assertIsInstance(entry["tokens"], int)
        rejected = {"error_type": "ValidationError", "message": "引文与原文不一致"}
        second, entry = model.propose(2, [(1, "bad-quote", rejected)])
        self.assertEqual(second, {"action": "export", "sample": "valid"})
        self.assertEqual((entry["turns"], entry["requests"]), (1, 2))
        self.assertEqual(model.budget.sent, 5)
        self.assertEqual(len(developer.log_lines()), 5)
        self.assertEqual(sorted({line["run"] for line in developer.log_lines()}),
                         ["m-01/proposals/01", "m-01/proposals/02"])
        for number in (1, 2):
            result = self.checked(number, developer)
            self.assertEqual(result["result"], "pass", result)
            record = self.record(number)
            self.assertEqual(record["kind"], "proposal")
            self.assertEqual(hashlib.sha256(record["reply_text"].encode()).hexdigest(), record["answer_sha256"])
        self.assertIn(rejected["message"], self.record(2)["question"])
        self.assertEqual(sum("[重试]" in line for line in said), 2)
        self.assertEqual(developer.clock.waits, [0.2, 0.1])  # the server's retry-after(-ms), skipped, not slept

    def test_a_server_that_keeps_failing_ends_the_proposal_as_the_client_rules_say(self):
        developer = self.developer("failing")
        model = developer.model()
        with self.assertRaises(ModelFailed) as caught:
            model.propose(1, [])
        self.assertEqual(caught.exception.stop, "api_error")
        self.assertEqual((model.current["requests"], model.current["turns"], model.current["claim"]), (3, 1, None))
        self.assertEqual(self.checked(1, developer)["result"], "pass")

    def test_the_budget_keeps_a_retry_unsent(self):
        developer = self.developer("failing")
        model = developer.model(max_api_calls=2)
        with self.assertRaises(ApiCallBudgetExhausted):
            model.propose(1, [])
        self.assertEqual(len(developer.log_lines()), 2)
        record = self.record(1)
        self.assertEqual((record["stop"], record["requests"], record["cut"]["by"]),
                         ("interrupted", 2, "api_call_budget"))
        result = self.checked(1, developer)
        self.assertEqual((result["result"], result["findings"]), ("needs_human", ["interrupted"]), result)

    def test_the_budget_keeps_a_new_turn_unsent_and_that_turn_is_no_turn(self):
        developer = self.developer("developer")
        model = developer.model(max_api_calls=1)
        with self.assertRaises(ApiCallBudgetExhausted):
            model.propose(1, [])
        self.assertEqual([len(turn["attempts"]) for turn in self.record(1)["turns"]], [1])
        self.assertEqual((model.current["turns"], model.current["requests"]), (1, 1))
        self.assertEqual(len(developer.log_lines()), 1)

    def test_a_reply_that_is_not_one_json_object_is_not_a_proposal(self):
        developer = self.developer([{"content": "我觉得应该导出 valid。"}])
        model = developer.model()
        with self.assertRaises(NotAProposal) as caught:
            model.propose(1, [])
        self.assertEqual(caught.exception.why, "not_json")
        self.assertEqual(self.record(1)["reply_text"], "我觉得应该导出 valid。")
        self.assertEqual(self.checked(1, developer)["result"], "pass")

    def test_a_model_that_only_calls_its_tool_stops_at_four_turns(self):
        calls = [{"tool_calls": [{"name": "list_samples", "arguments": given}]}
                 for given in ({}, {"n": 1}, {}, {"n": 2})]
        developer = self.developer(calls)  # progress, some failures: neither guard fires before the cap
        model = developer.model()
        with self.assertRaises(NotAProposal) as caught:
            model.propose(1, [])
        self.assertEqual((caught.exception.why, model.current["turns"], model.current["stop"]),
                         ("stopped", 4, "max_turns"))
        self.assertIsNone(self.record(1)["reply_text"])
        self.assertEqual(self.checked(1, developer)["result"], "pass")

    def test_unknown_usage_is_no_count_of_tokens(self):
        developer = self.developer([{"content": proposal("export", "valid"), "usage": False}])
        _, entry = developer.model().propose(1, [])
        self.assertIsNone(entry["tokens"])

    def test_an_interrupt_during_a_request_is_raised_again_as_it_came(self):
        for kind in (KeyboardInterrupt, cli.Terminated):
            with self.subTest(kind=kind.__name__):
                folder = self.folder.parent / kind.__name__
                developer = Developer(ROOT, folder, [{"content": proposal("export", "valid")}])
                self.addCleanup(developer.close)

                def cut(url, body, headers, attempt):
                    raise kind()
                model = developer.model(send=cut)
                with self.assertRaises(kind):
                    model.propose(1, [])
                record = cli.read_json(folder / "proposals" / "01" / "question.json")
                self.assertEqual(record["stop"], "interrupted")
                self.assertEqual(record["turns"][0]["attempts"][0]["error"], "unknown")
                self.assertEqual(model.current["requests"], 1)  # admitted, so maybe received: counted


class LocalServerTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="local-server-", dir=_FAST_TEMP)
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)

    def refused(self, url):
        port = int(url.rsplit(":", 1)[1])
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            return True
        return False

    def test_it_listens_on_the_loopback_and_ends_when_closed(self):
        server = LocalServer(ROOT, ROOT / "samples" / "models" / "developer.json", self.tmp / "log.jsonl")
        url = server.start()
        self.addCleanup(server.close)
        self.assertTrue(url.startswith("http://127.0.0.1:"))
        with urllib.request.urlopen(url + "/ping", timeout=5) as reply:
            self.assertEqual(reply.status, 200)
        process = server.process
        server.close()
        self.assertIsNotNone(process.returncode)
        self.assertTrue(self.refused(url))
        server.close()  # twice is harmless

    def test_it_ends_when_the_program_holding_it_is_killed_outright(self):
        program = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
                   "from proposer.server import LocalServer; root = Path(sys.argv[1]); "
                   "s = LocalServer(root, root / 'samples/models/developer.json', Path(sys.argv[2])); "
                   "print(s.start(), flush=True); import time; time.sleep(60)")
        holder = subprocess.Popen([sys.executable, "-c", program, str(ROOT), str(self.tmp / "log.jsonl")],
                                  stdout=subprocess.PIPE, text=True)
        self.addCleanup(holder.wait)
        self.addCleanup(holder.kill)
        url = holder.stdout.readline().strip()
        holder.stdout.close()
        self.assertFalse(self.refused(url))
        holder.kill()  # SIGKILL / TerminateProcess: no finally, no close() ever runs
        holder.wait()
        ends = time.monotonic() + 5
        while not self.refused(url) and time.monotonic() < ends:
            time.sleep(0.05)
        self.assertTrue(self.refused(url), "the mock outlived the program holding its pipe")

    def test_a_server_that_cannot_start_says_why(self):
        bad = self.tmp / "bad.json"
        bad.write_text("[]", encoding="utf-8")
        server = LocalServer(ROOT, bad, self.tmp / "log.jsonl")
        with self.assertRaises(ServerNotStarted) as caught:
            server.start()
        self.assertIn("脚本", str(caught.exception))
        self.assertIsNone(server.process)


class ModelOptionsTest(unittest.TestCase):
    def problem(self, scenario="model", **given):
        return arguments.argument_problem(SCENARIOS, "m-01", scenario, 3, 30, None, given.get("calls"),
                                          given.get("url"), given.get("script"))

    def test_the_model_options_go_with_the_model_scenario_only(self):
        for option, given in (("--max-api-calls", {"calls": 5}), ("--model-url", {"url": "http://127.0.0.1:1"}),
                              ("--model-script", {"script": "samples/models/repeat.json"})):
            self.assertIn(option, self.problem("repair", **given))
            self.assertIsNone(self.problem(**given))
        self.assertIn("只能选一个", self.problem(url="http://127.0.0.1:1", script="x.json"))

    def test_the_api_call_budget_is_1_to_100(self):
        for calls, fine in ((0, False), (1, True), (100, True), (101, False), (-1, False)):
            self.assertEqual(self.problem(calls=calls) is None, fine, calls)

    def test_the_script_must_be_a_servable_file_in_the_workspace(self):
        tmp = tempfile.TemporaryDirectory(prefix="model-options-", dir=_FAST_TEMP)
        self.addCleanup(tmp.cleanup)
        outside = Path(tmp.name) / "x.json"
        outside.write_text("[{}]", encoding="utf-8")
        self.assertIn("不在工作区里", options.model_problem(ROOT, model_script=str(outside)))
        self.assertIn("不存在", options.model_problem(ROOT, model_script=str(ROOT / "samples" / "models" / "no.json")))
        self.assertIn("JSON 列表", options.model_problem(ROOT, model_script=str(ROOT / "samples" / "valid.json")))
        for name in ("developer", "repeat", "publish", "failing"):
            script = ROOT / "samples" / "models" / f"{name}.json"
            self.assertIsNone(options.model_problem(ROOT, model_script=str(script)))
        self.assertIsNone(options.model_problem(ROOT))

    def test_another_server_needs_its_own_key(self):
        url = "http://127.0.0.1:8/v1"
        self.assertIn("LOOP_MODEL_API_KEY", options.model_problem(ROOT, url, env={"DEEPSEEK_API_KEY": "sk-1"}))
        self.assertIn("LOOP_MODEL_API_KEY", options.model_problem(ROOT, url, env={"LOOP_MODEL_API_KEY": "a b"}))
        self.assertIsNone(options.model_problem(ROOT, url, env={"LOOP_MODEL_API_KEY": "sk-1"}))
        for bad in ("ftp://example.com", "127.0.0.1:8", "http://127.0.0.1:x"):
            self.assertIn("--model-url", options.model_problem(ROOT, bad, env={"LOOP_MODEL_API_KEY": "k"}))


if __name__ == "__main__":
    unittest.main()
