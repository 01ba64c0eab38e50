"""ask / chat --record NAME: the question record is kept as the loop runs, valid wherever it is stopped.

In-process: a Ctrl-C at every point the loop tells anyone about (each event of the loop, before and after each
HTTP attempt) leaves a record verify_ask calls needs_human, never fail; another caller's hook before each
request can keep it unsent. As processes: the record's folder and name rules, chat's NAME-01 ..., the
x-question-run header the mock's log keeps, nothing changed without --record, and a real SIGINT.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from tests.asking import QUESTION, Asker
from tests.support import _FAST_TEMP, WINDOWS, WorkspaceTestCase

import mock_model  # noqa: E402  (tests.asking put project/ on the path)
import verify_ask  # noqa: E402


class Interrupted(KeyboardInterrupt):
    pass


class InterruptAnywhereTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="interrupt-anywhere-", dir=_FAST_TEMP)
        cls.addClassCleanup(cls.tmp.cleanup)
        cls.asker = Asker(cls.tmp.name)
        cls.addClassCleanup(cls.asker.close)

    def ask_until(self, mode, point, **options):
        """Ask against MODE with a Ctrl-C at the POINT-th thing the loop or the client tells (None: never)."""
        told = []

        def count(kind, data):
            told.append(kind)
            if len(told) == point:
                raise Interrupted
        return self.asker.ask(mode, on_event=count, on_attempt=count, **options), len(told)

    def test_a_ctrl_c_at_every_point_leaves_a_record_that_needs_a_person(self):
        runs = []
        for mode in ("fail", "429", "cycle"):
            (_, _, _), points = self.ask_until(mode, None)
            runs += [(mode, point, *self.ask_until(mode, point)[0]) for point in range(1, points + 1)]
        log = verify_ask.ServerLog(self.asker.log)
        for mode, point, outcome, record, folder in runs:
            with self.subTest(mode=mode, point=point):
                result = verify_ask.check_question(folder, log)
                self.assertEqual(outcome.stop, "interrupted")
                self.assertEqual((result["result"], record["stop"]), ("needs_human", "interrupted"), result)

    def test_a_callers_hook_before_each_request_keeps_it_unsent(self):
        class OverBudget(Exception):
            pass
        seen = []

        def admit(kind, data):
            if kind == "before":
                seen.append(data["retry"])
                if len(seen) > 2:
                    raise OverBudget
        with self.assertRaises(OverBudget):
            self.asker.ask("429", on_attempt=admit, chain_first=True)
        run = f"q{self.asker.count}"
        self.assertEqual(seen, [0, 1, 2])
        self.assertEqual(len(verify_ask.ServerLog(self.asker.log).of_run(run)), 2)


class RecordCommandTest(WorkspaceTestCase):
    """As a learner runs it; the processes that do not depend on each other run at the same time."""

    def start(self, *args, env=None, stdin=None):
        full = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        full.pop("DEEPSEEK_API_KEY", None)
        full.update(env or {})
        proc = subprocess.Popen([sys.executable, str(self.root / "project" / "app.py"), *args], cwd=self.root, env=full,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                encoding="utf-8")
        proc.given = stdin
        return proc

    def finish(self, *procs):
        done = []
        for proc in procs:
            stdout, stderr = proc.communicate(proc.given, timeout=60)
            self.assertNoTraceback(stderr)
            done.append((proc.returncode, stdout, stderr))
        return done

    def test_names_folders_and_nothing_changed_without_record(self):
        (code, plain_out, plain_err), (code_recorded, out, err), (chat_code, _, chat_err) = self.finish(
            self.start("ask", "--json", QUESTION), self.start("ask", "--json", "--record", "first", QUESTION),
            self.start("chat", "--record", "talk", stdin=f"{QUESTION}\n它的缺点是什么？\n/quit\n"))
        self.assertEqual((code, out), (code_recorded, plain_out))  # the same line, the same exit code
        added = [line for line in err.splitlines() if line not in plain_err.splitlines()]
        self.assertEqual(len(added), 1)
        self.assertIn("ask-runs/first/question.json", added[0])
        record = json.loads((self.root / "ask-runs" / "first" / "question.json").read_text(encoding="utf-8"))
        self.assertEqual((record["model"]["kind"], record["requests"], len(record["turns"])), ("demo", 0, 3))
        self.assertEqual(chat_code, 0, chat_err)
        self.assertEqual(sorted(os.listdir(self.root / "ask-runs")), ["first", "talk-01", "talk-02"])
        for name in ("first", "talk-01", "talk-02"):
            self.assertEqual(verify_ask.check_question(self.root / "ask-runs" / name)["result"], "pass", name)
        before = (self.root / "ask-runs" / "first" / "question.json").read_bytes()
        used, chat_used = self.finish(self.start("ask", "--json", "--record", "FIRST", QUESTION),
                                      self.start("chat", "--record", "TALK", stdin="/quit\n"))
        for code, stdout, stderr in (used, chat_used):
            self.assertEqual((code, stdout), (2, ""))
            self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
            self.assertTrue(stderr.startswith("错误：--record："), stderr)
        self.assertIn("talk-01", chat_used[2])
        self.assertEqual((self.root / "ask-runs" / "first" / "question.json").read_bytes(), before)
        self.assertEqual(sorted(os.listdir(self.root / "ask-runs")), ["first", "talk-01", "talk-02"])

    def test_the_name_rule(self):
        from assistant.record import record_name_problem
        root = self.root / "ask-runs"
        root.mkdir()
        (root / "talk-07").mkdir()
        for name, chat, refused in (("a b", False, True), ("..", False, True), ("con", False, True),
                                    ("x" * 64, False, False), ("x" * 62, True, True), ("x" * 61, True, False),
                                    ("talk", True, True), ("talk", False, False), ("Talk-07", False, True),
                                    ("talk-0", True, False)):
            with self.subTest(name=name, chat=chat):
                self.assertEqual(record_name_problem(root, name, chat) is not None, refused)

    def test_requests_carry_the_records_id_and_a_sigint_leaves_a_valid_record(self):
        log = self.root / "server-log.jsonl"
        mock = mock_model.MockServer(0, slow_seconds=5, request_log=log).start()
        self.addCleanup(mock.stop)
        env = {"DEEPSEEK_API_KEY": "test", "DEEPSEEK_BASE_URL": f"{mock.url}/mode/plain/s/a"}
        codes = [code for code, _, _ in self.finish(self.start("ask", "--json", QUESTION, env=env),
                                                     self.start("ask", "--json", "--record", "tagged", QUESTION,
                                                                env=env))]
        self.assertEqual(codes, [0, 0])
        self.assertEqual(sorted(map(str, (line["run"] for line in verify_ask.ServerLog(log).lines))),
                         ["None", "tagged"])
        result = verify_ask.check_question(self.root / "ask-runs" / "tagged", log)
        self.assertEqual((result["result"], result["requests"]), ("pass", 1))
        if WINDOWS or not hasattr(signal, "SIGINT"):
            return  # Windows cannot send Ctrl-C to one child: check_loop_guards.py says SKIP there too
        env["DEEPSEEK_BASE_URL"] = f"{mock.url}/mode/slow/s/b"
        proc = self.start("ask", "--json", "--record", "cut", QUESTION, env=env)
        deadline = time.monotonic() + 10
        while mock.stats("slow", "b")["session"]["requests"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        (code, stdout, stderr), = self.finish(proc)
        self.assertEqual(code, 130, stderr)
        self.assertEqual(self.assertOneJsonLine(stdout)["stop"], "interrupted")
        result = verify_ask.check_question(self.root / "ask-runs" / "cut", log)
        self.assertEqual((result["result"], result["stop"], result["requests"]), ("needs_human", "interrupted", 1))


if __name__ == "__main__":
    unittest.main()
