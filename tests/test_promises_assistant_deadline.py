"""The assistant's whole-question deadline and its reading of a reply: promises tests/mutation.py found unguarded.

Each test fails with its mutant applied. The client runs on the injected clock of test_assistant_deadline (its
scripted sends and sleeps move it forward): no test waits for a deadline.
"""
import sys
import unittest

from tests.support import ROOT
from tests.test_assistant_deadline import OK_REPLY, TOOL_CALL, scripted_client

sys.dont_write_bytecode = True  # nothing may be written into the checkout
sys.path.insert(0, str(ROOT / "project"))
from assistant import errors  # noqa: E402
from assistant.agent import run_question  # noqa: E402
from assistant.transport import Reply  # noqa: E402


class DeadlinePromiseTest(unittest.TestCase):
    def test_no_request_is_sent_once_the_question_has_no_time_left(self):
        chat, given, sleeps, clock = scripted_client([("reply", Reply(200, {}, TOOL_CALL)), ("reply", OK_REPLY)],
                                                     deadline=50.0)

        def slower_than_the_deadline(name, arguments):
            clock.now += 60.0
            return "[]", False
        outcome = run_question(chat, [], "问", tool_runner=slower_than_the_deadline)
        self.assertEqual(given, [50.0])  # the tool used up the question's time: nothing more was sent
        self.assertEqual(outcome.stop, "api_error")
        self.assertIn("整个期限 50 秒", outcome.answer)

    def test_an_attempt_the_deadline_cut_is_said_as_the_deadline_even_without_retries_left(self):
        chat, given, sleeps, clock = scripted_client([("hang", None)], timeout=60.0, deadline=30.0, max_retries=0)
        with self.assertRaises(errors.DeadlineReached) as caught:
            chat.complete([], [])
        self.assertEqual(given, [30.0])
        message = errors.describe_api_error(caught.exception)
        self.assertIn("整个期限 30 秒", message)
        self.assertNotIn("要先等", message)  # no wait was planned: the deadline itself ended the attempt

    def test_a_timeout_at_the_deadline_is_not_said_as_a_wait_that_did_not_fit(self):
        chat, given, sleeps, clock = scripted_client([("hang", None)], timeout=60.0, deadline=30.0)
        with self.assertRaises(errors.DeadlineReached) as caught:
            chat.complete([], [])
        self.assertNotIn("要先等", errors.describe_api_error(caught.exception))


class ReplyReadingPromiseTest(unittest.TestCase):
    def outcome(self, reply):
        chat, given, sleeps, clock = scripted_client([("reply", reply)] * 3)
        with self.assertRaises(errors.APIError) as caught:
            chat.complete([], [])
        return type(caught.exception), len(given)

    def test_broken_json_received_whole_is_not_json_and_not_retried(self):
        whole = Reply(200, {"content-length": "13"}, b'{"choices": [')  # its length said, and all of it came
        self.assertEqual(self.outcome(whole), (errors.NotJSONError, 1))

    def test_a_page_that_is_no_json_is_not_json_even_when_the_connection_ended_it(self):
        page = Reply(200, {}, b"<html><title>maintenance</title></html>", ended_by_close=True)
        self.assertEqual(self.outcome(page), (errors.NotJSONError, 1))

    def test_json_that_breaks_off_where_the_connection_closed_is_cut_and_retried(self):
        cut = Reply(200, {}, b'{"choices": [', ended_by_close=True)
        self.assertEqual(self.outcome(cut), (errors.IncompleteResponseError, 3))


if __name__ == "__main__":
    unittest.main()
