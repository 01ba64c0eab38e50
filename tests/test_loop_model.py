"""loop_lab.py --scenario model: a development model proposes, the loop disposes.

In-process, each shipped developer model (samples/models/) runs against an in-process mock with the client's waits
skipped (tests/developing.py): the stop the flowchart gives, the three counts per attempt (attempts, model turns,
HTTP requests), the server's own count never above the budget (both sides of its threshold), the model's claim
never deciding, a publish proposal blocked before any tool runs, an interrupt during a request. As processes: the
default command on a fresh copy with nothing set up, the server gone when the loop ends, a real SIGINT during a
request, and the model options refused with the other scenarios (exit 2, nothing created).
"""
import contextlib
import io
import os
import signal
import socket
import subprocess
import sys
import time
import unittest

import cli
import loop_lab
from tests.developing import opener
from tests.support import WorkspaceTestCase, not_on_windows

from mock_model import MockServer  # noqa: E402  (tests.developing put project/ on the path)

DEFAULT_LINE = {"status": "needs_review", "reason": "mechanical_pass", "semantic_review": "pending", "attempts": 2}


def counts(record):
    """(attempts, model turns, HTTP requests) as the loop's record gives them."""
    entries = [attempt["model"] for attempt in record["attempts"]]
    entries += [record["proposal_not_run"]] if record["proposal_not_run"] else []
    return len(record["attempts"]), sum(e["turns"] for e in entries), sum(e["requests"] for e in entries)


class ModelLoopTest(WorkspaceTestCase):
    def run_model(self, name, script=None, made=None, **options):
        made = [] if made is None else made
        model_script = None if script is None else str(self.root / "samples" / "models" / f"{script}.json")
        with contextlib.redirect_stderr(io.StringIO()):
            record, code = loop_lab.run_loop(self.root, name, "model", model_script=model_script,
                                             open_model=opener(made=made), **options)
        self.addCleanup(lambda: [developer.close() for developer in made])
        return record, code, made

    def test_the_default_developer_needs_more_requests_than_turns_and_more_turns_than_attempts(self):
        record, code, made = self.run_model("m-01")
        self.assertEqual((code, {key: loop_lab.summary(record)[key] for key in DEFAULT_LINE}), (0, DEFAULT_LINE))
        self.assertTrue(made[0].mock.stopping.is_set(), "the loop left its model's server running")
        attempts, turns, requests = counts(record)
        self.assertEqual((attempts, turns, requests), (2, 3, 5))
        self.assertEqual(record["actual_api_calls"], requests)
        self.assertEqual(len(made[0].log_lines()), requests)  # the server's own count
        first, second = record["attempts"]
        self.assertEqual((first["status"], second["status"]), ("failed", "needs_review"))
        self.assertIn("修好", first["model"]["claim"])  # the model said fixed; the exporter said no
        self.assertEqual(first["candidate"]["sample"], "bad-quote")
        self.assertNotIn("claim", first["candidate"])
        self.assertEqual([a["model"]["proposal"] for a in record["attempts"]],
                         [f"loop-runs/m-01/proposals/0{n}/question.json" for n in (1, 2)])
        self.assertEqual(record["budget"]["max_api_calls"], 10)
        self.assertIsNone(record["proposal_not_run"])
        question = cli.read_json(self.root / "loop-runs/m-01/proposals/02/question.json")["question"]
        self.assertIn(first["feedback"]["message"], question)

    def test_its_context_is_the_23_files_and_the_files_it_ran(self):
        record, _, _ = self.run_model("m-02")
        files = set(record["context"]["entries"])
        self.assertTrue(set(loop_lab.LOOP_FILES) <= files)
        for rel in ("samples/models/developer.json", "project/mock_model.py", "project/assistant/client.py",
                    "project/assistant/record.py", "proposer/developer.py"):
            self.assertIn(rel, files)
        self.assertNotIn("missing", record["context"]["entries"].values())

    def test_a_developer_that_repeats_itself_stalls(self):
        record, code, _ = self.run_model("m-03", "repeat")
        self.assertEqual((record["status"], record["reason"], code), ("stalled", "repeated_failure", 1))
        self.assertEqual(counts(record), (2, 2, 2))

    def test_a_publish_proposal_is_blocked_before_any_tool_runs(self):
        record, code, _ = self.run_model("m-04", "publish")
        self.assertEqual((record["status"], record["reason"], code), ("needs_human", "permission_boundary", 1))
        self.assertEqual(record["blocked_proposal"]["action"], "publish")
        self.assertEqual((record["attempts"], record["proposal_not_run"]["requests"]), ([], 1))
        self.assertFalse((self.root / "runs").exists())  # no export, no child, nothing published

    def test_a_server_that_keeps_failing_is_for_a_person_or_the_budget(self):
        record, _, made = self.run_model("m-05", "failing")
        self.assertEqual((record["status"], record["reason"], record["error_type"]),
                         ("needs_human", "unexpected_error", "ModelFailed"))
        self.assertEqual((counts(record), record["actual_api_calls"]), ((0, 1, 3), 3))
        record, _, made = self.run_model("m-06", "failing", max_api_calls=2)
        self.assertEqual((record["status"], record["reason"]), ("budget_exhausted", "api_call_budget"))
        self.assertEqual((record["actual_api_calls"], len(made[0].log_lines())), (2, 2))
        self.assertEqual(len(made[0].clock.waits), 1)  # the retry the budget refused was not even waited for

    def test_the_budget_holds_on_both_sides_of_its_threshold(self):
        for calls, status in ((5, "needs_review"), (4, "budget_exhausted"), (3, "budget_exhausted")):
            with self.subTest(calls=calls):
                record, _, made = self.run_model(f"b-{calls}", max_api_calls=calls)
                self.assertEqual(record["status"], status)
                self.assertEqual(record["actual_api_calls"], min(calls, 5))
                self.assertEqual(len(made[0].log_lines()), min(calls, 5))
        # 3: the first proposal used all three; the second is never asked (no record of it)
        self.assertEqual(len(record["attempts"]), 1)
        self.assertFalse((self.root / "loop-runs/b-3/proposals/02").exists())
        self.assertTrue((self.root / "loop-runs/b-4/proposals/02/question.json").exists())

    def test_a_reply_that_is_no_proposal_is_for_a_person(self):
        made = []
        with contextlib.redirect_stderr(io.StringIO()):
            record, code = loop_lab.run_loop(self.root, "m-07", "model", open_model=opener(
                [{"content": "改好了，应该可以了。"}], made))
        self.addCleanup(lambda: [developer.close() for developer in made])
        self.assertEqual((record["status"], record["error_type"], code), ("needs_human", "NotAProposal", 1))
        self.assertIn("loop-runs/m-07/proposals/01/question.json", record["handoff"]["inspect"])

    def test_an_interrupt_during_a_request_leaves_a_valid_record(self):
        calls = []

        def send(url, body, headers, attempt):
            calls.append(url)
            if len(calls) == 4:  # the second proposal's first request
                raise KeyboardInterrupt
            from assistant.transport import post_json
            return post_json(url, body, headers, attempt)
        made = []
        with contextlib.redirect_stderr(io.StringIO()):
            record, code = loop_lab.run_loop(self.root, "m-08", "model", open_model=opener(made=made, send=send))
        self.addCleanup(lambda: [developer.close() for developer in made])
        self.assertEqual((record["status"], record["reason"], code), ("interrupted", "keyboard_interrupt", 130))
        self.assertEqual([a["state"] for a in record["attempts"]], ["done"])
        self.assertEqual((record["proposal_not_run"]["stop"], record["actual_api_calls"]), ("interrupted", 4))
        on_disk = cli.read_json(self.root / "loop-runs/m-08/loop.json")
        self.assertEqual(on_disk["status"], "interrupted")
        proposal_record = cli.read_json(self.root / "loop-runs/m-08/proposals/02/question.json")
        self.assertEqual(proposal_record["turns"][0]["attempts"][0]["error"], "unknown")

    def test_the_model_options_go_with_the_model_scenario_only(self):
        for extra in (("--max-api-calls", "3"), ("--model-script", "samples/models/repeat.json"),
                      ("--model-url", "http://127.0.0.1:9")):
            code, out, err = self.run_cli("loop_lab.py", "--run", "x-01", "--scenario", "repair", *extra)
            self.assertEqual((code, out), (2, ""), err)
        code, _, err = self.run_cli("loop_lab.py", "--run", "x-02", "--scenario", "model", "--model-url",
                                    "http://127.0.0.1:9", env={"DEEPSEEK_API_KEY": "sk-notes"})
        self.assertEqual(code, 2)
        self.assertIn("LOOP_MODEL_API_KEY", err)
        self.assertFalse((self.root / "loop-runs").exists())


class ModelCommandTest(WorkspaceTestCase):
    def listening(self, url):
        try:
            socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=0.5).close()
        except OSError:
            return False
        return True

    def test_the_default_command_needs_no_setup_and_leaves_no_server(self):
        code, out, err = self.run_cli("loop_lab.py", "--run", "m-01", "--scenario", "model")
        line = self.assertOneJsonLine(out)
        self.assertEqual((code, {key: line[key] for key in DEFAULT_LINE}), (0, DEFAULT_LINE), err)
        record = cli.read_json(self.root / "loop-runs/m-01/loop.json")
        attempts, turns, requests = counts(record)
        self.assertTrue(line["actual_api_calls"] == requests > turns > attempts == 2, (requests, turns))
        log = (self.root / "loop-runs/m-01/server-log.jsonl").read_text(encoding="utf-8").splitlines()
        self.assertEqual(len(log), line["actual_api_calls"])
        url = cli.read_json(self.root / "loop-runs/m-01/proposals/01/question.json")["model"]["base_url"]
        self.assertTrue(url.startswith("http://127.0.0.1:"))
        self.assertFalse(self.listening(url), "the local model server outlived the loop")
        self.assertNoTraceback(err)
        code, out, err = self.run_cli("verify_loop.py", "loop-runs/m-01")
        verified = self.assertOneJsonLine(out)
        self.assertEqual((code, verified["result"]), (0, "pass"), err)
        self.assertEqual((verified["model_turns"], verified["actual_api_calls"]), (turns, requests))

    def test_the_lesson_cases_load_nothing_of_the_model(self):
        program = ("import sys; sys.path.insert(0, sys.argv[1]); import loop_lab; "
                   "loop_lab.main(['--run', 'r-01', '--scenario', 'repair']); "
                   "print(sorted(m for m in sys.modules\n"
                   "             if m.split('.')[0] in ('proposer', 'assistant', 'mock_model', 'mockapi')))")
        done = subprocess.run([sys.executable, "-c", program, str(self.root)], cwd=self.root, capture_output=True,
                              text=True, encoding="utf-8")
        self.assertEqual(done.stdout.splitlines()[-1], "[]", done.stderr)

    @not_on_windows("用 SIGINT 模拟在终端按下 Ctrl-C；Windows 没有可以发给单个进程的 SIGINT")
    def test_ctrl_c_during_a_request_exits_130_with_a_valid_record(self):
        server = MockServer(0, "slow", slow_seconds=30).start()
        self.addCleanup(server.stop)
        env = dict(os.environ, PYTHONIOENCODING="utf-8", LOOP_MODEL_API_KEY="k")
        loop = subprocess.Popen([sys.executable, str(self.root / "loop_lab.py"), "--run", "c-01", "--scenario", "model",
                                 "--model-url", server.url], cwd=self.root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.addCleanup(loop.kill)
        proposal_record = self.root / "loop-runs/c-01/proposals/01/question.json"
        ends = time.monotonic() + 20
        while time.monotonic() < ends and server.stats()["total"] < 1:
            time.sleep(0.05)
        loop.send_signal(signal.SIGINT)
        out, err = loop.communicate(timeout=20)
        self.assertEqual(loop.returncode, 130, err)
        self.assertEqual(self.assertOneJsonLine(out)["status"], "interrupted")
        record = cli.read_json(self.root / "loop-runs/c-01/loop.json")
        self.assertEqual((record["status"], record["actual_api_calls"]), ("interrupted", 1))
        self.assertEqual(cli.read_json(proposal_record)["stop"], "interrupted")
        self.assertNoTraceback(err)
        code, out, err = self.run_cli("verify_loop.py", "loop-runs/c-01")
        self.assertEqual((code, self.assertOneJsonLine(out)["result"]), (1, "needs_human"), err)  # valid, cut short


if __name__ == "__main__":
    unittest.main()
