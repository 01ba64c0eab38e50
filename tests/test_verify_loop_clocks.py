"""Tests of how verify_loop.py reads a loop's clocks: budgets and order judged on the monotonic offsets, a wall
clock stepped once (needs_human), a time budget read where the loop checked it, and the cost of finding a step.

Helpers and VerifyTestCase (loops made in-process in one copy of the workspace per class) are
tests/test_verify_loop.py's.
"""
import calendar
import json
import time
import unittest

from tests.support import assert_found, fields_of, kinds_in
from tests.test_verify_loop import VerifyTestCase, cut_off, times_said


class ClockTest(VerifyTestCase):
    """Budgets and order are judged on the monotonic offsets; a wall clock that one step explains (NTP, a
    suspended laptop) is for a person, naming the step and where; two steps, or an offset going back, fail."""
    START = 1767225600  # 2026-01-01T00:00:00Z
    HONEST = {"offsets": ((1.0, 2.0), (3.0, 4.0)), "elapsed": 4.5}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make("clk", "repair")

    def retime(self, offsets=HONEST["offsets"], elapsed=HONEST["elapsed"], step=lambda offset: 0):
        """The verdict on loop clk with every time of it and its children set: OFFSETS (start, finish) of each
        attempt, ELAPSED, and a wall clock reading START + offset + STEP(offset), in whole seconds."""
        def stamp(offset):
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.START + offset + step(offset)))

        def change(rec):
            rec.update(started_at=stamp(0), finished_at=stamp(elapsed), elapsed_seconds=elapsed)
            rec["segments"][0].update(started_at=stamp(0), wall_minus_monotonic=self.START + step(0),
                                      elapsed_seconds=elapsed)
            for entry, (started, finished) in zip(rec["attempts"], offsets):
                entry.update(started_at=stamp(started), finished_at=stamp(finished), started_offset=started,
                             finished_offset=finished)
                entry["decision"]["decided_offset"] = finished
        self.forge("clk", change)
        for number, (started, finished) in enumerate(offsets, 1):
            path = self.root / "runs" / f"clk-{number:02d}" / "run.json"
            self.keep(path)
            record = json.loads(path.read_text(encoding="utf-8"))
            record.update(started_at=stamp(started + 0.1), finished_at=stamp(finished - 0.1),
                          duration_seconds=round(finished - started - 0.2, 3))
            path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
        return self.verdict("clk")

    def assertVerdict(self, verdict, result, *expected):
        """VERDICT is RESULT; EXPECTED as for assertFails."""
        self.assertEqual(verdict["result"], result, verdict)
        assert_found(self, verdict, *expected)

    def assertStep(self, verdict, kind, between, seconds):
        """VERDICT needs a person for one step of its wall clock, of KIND, BETWEEN the two times named as
        times_said() names them (each with its recorded text), of about SECONDS."""
        self.assertVerdict(verdict, "needs_human", kind)
        step = fields_of(verdict, kind)
        said = [(times_said(step["where"].fields[end])[0], step["where"].fields[end].fields["text"])
                for end in ("first", "second")]
        self.assertEqual(said, list(between))
        self.assertAlmostEqual(step["seconds"], seconds, delta=2)
        return step

    def test_honest_clocks_pass_within_the_precision_of_wall_times(self):
        self.assertVerdict(self.retime(), "pass")
        self.assertVerdict(self.retime(step=lambda offset: -1.9 if 1 < offset < 4 else 0), "pass")

    def test_one_step_between_attempts_is_for_a_person_naming_it(self):
        for seconds in (-5, 5, -3600, 3600):
            with self.subTest(seconds=seconds):
                verdict = self.retime(step=lambda offset: seconds if offset > 2.5 else 0)
                between = (((1, "finished_at"), "2026-01-01T00:00:02Z"),
                           ((2, "started_at"), time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                             time.gmtime(self.START + 3 + seconds))))
                self.assertStep(verdict, "clock_set_back" if seconds < 0 else "clock_slept", between, abs(seconds))
                self.doCleanups()

    def test_a_suspended_laptop_names_the_little_time_the_monotonic_clock_went(self):
        # the lid closed for an hour between the attempts: the monotonic clock stood still, the wall clock ran on
        verdict = self.retime(offsets=((1.0, 2.0), (2.2, 3.0)), elapsed=3.2,
                              step=lambda offset: 3600 if offset > 2.1 else 0)
        step = self.assertStep(verdict, "clock_slept", (((1, "finished_at"), "2026-01-01T00:00:02Z"),
                                                        ((2, "started_at"), "2026-01-01T01:00:02Z")), 3600)
        self.assertAlmostEqual(step["gap"], 0.2, places=3)

    def test_a_loop_start_moved_by_years_is_one_step(self):
        verdict = self.retime(step=lambda offset: -10 ** 8 if offset == 0 else 0)
        self.assertVerdict(verdict, "needs_human", "clock_slept")
        step = fields_of(verdict, "clock_slept")
        self.assertEqual(times_said(step["where"].fields["first"])[0], ("segments[0]", "wall_minus_monotonic"))
        self.assertGreater(step["seconds"], 2 * 86400)  # said in days

    def test_two_steps_no_honest_clock_makes_fail(self):
        for step in (lambda offset: -5 if 2.5 < offset < 3.5 else 0,  # back, then forward again
                     lambda offset: 5 if 1.5 < offset < 2.5 else 0):  # the end of attempt 1 ahead of what follows
            with self.subTest(step=step):
                self.assertVerdict(self.retime(step=step), "fail", "clock_breaks")
                self.doCleanups()

    def test_an_elapsed_seconds_one_step_explains_is_for_a_person(self):
        self.assertStep(self.retime(step=lambda offset: 250 if offset == 4.5 else 0), "clock_slept",
                        (((2, "finished_at"), "2026-01-01T00:00:04Z"),
                         (("loop.json", "finished_at"), "2026-01-01T00:04:14Z")), 250)

    def test_offsets_no_monotonic_clock_makes_fail(self):
        past = "started_past_budget"
        cases = ((((1.0, 2.0), (31.0, 32.0)), 32.5, past, {"number": 2, "offset": 31.0, "budget": 30}, []),
                 (((1.0, 2.0), (30.0, 32.0)), 32.5, past, {"number": 2, "offset": 30.0, "budget": 30}, []),
                 (((1.0, 2.0), (1.5, 4.0)), 4.5, "reading_backwards", {"value": 1.5, "before": 2.0},
                  [(2, "started_offset"), (1, "decision.decided_offset")]),
                 (((1.0, 0.5), (3.0, 4.0)), 4.5, "reading_backwards", {"value": 0.5, "before": 1.0},
                  [(1, "finished_offset"), (1, "started_offset")]),
                 (((1.0, 2.0), (3.0, 4.0)), 3.5, "reading_backwards", {"value": 3.5, "before": 4.0},
                  [(2, "decision.decided_offset")]))
        for offsets, elapsed, kind, fields, readings in cases:
            with self.subTest(kind=kind, fields=fields):
                verdict = self.retime(offsets, elapsed, step=lambda offset: 0)
                self.assertVerdict(verdict, "fail", kind)
                found = fields_of(verdict, kind)
                self.assertEqual({field: found[field] for field in fields}, fields)
                self.assertEqual(times_said(found.get("later")) + times_said(found.get("earlier")), readings)
                self.doCleanups()

    def test_a_time_budget_stop_the_readings_do_not_support(self):
        # 0 attempts under max_seconds 5, the judged reading 4 s: the budget was not spent
        with self.forged("t", lambda rec: (rec["budget"].update(max_seconds=5), rec.update(elapsed_seconds=4))):
            verdict = self.verdict("t")
        self.assertVerdict(verdict, "fail", "stop_unsupported")

    def test_a_running_record_is_checked_as_far_as_it_goes(self):
        def started_years_later(rec):
            cut_off(rec)
            rec.update(started_at="2099-01-01T00:00:00Z")
        self.forge("r", started_years_later)
        verdict = self.verdict("r")
        self.assertVerdict(verdict, "needs_human", "clock_set_back", "why_running", "2099-01-01T00:00:00Z")
        self.assertEqual(times_said(fields_of(verdict, "clock_set_back")["where"].fields["first"]),
                         [("loop.json", "started_at")])



class BudgetCheckGapTest(VerifyTestCase):
    """A time budget spent mid-loop is read where the loop checked it: just after the last attempt ended."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make("gap", "slow", max_seconds=0.05, tool_seconds=0.1)

    def test_a_budget_checked_long_after_the_last_attempt_needs_a_person(self):
        self.assertEqual(self.verdict("gap")["result"], "pass")

        def later(rec):  # elapsed_seconds and the finish time moved on together: the wall clock agrees
            finished = time.strptime(rec["finished_at"], "%Y-%m-%dT%H:%M:%SZ")
            rec["segments"][0]["elapsed_seconds"] += 30
            rec.update(elapsed_seconds=rec["elapsed_seconds"] + 30,
                       finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(calendar.timegm(finished) + 30)))
        self.forge("gap", later)
        verdict = self.verdict("gap")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(fields_of(fields_of(verdict, "pause")["where"], "moment_decided"), {"number": 1})
        self.assertEqual(kinds_in(verdict)[:2], ["pause", "pause_between"])


    def test_a_reading_no_honest_loop_reaches_fails_by_name(self):
        with self.forged("gap", lambda rec: rec.update(elapsed_seconds=1e308)):
            self.assertFails("gap", "elapsed_wrong", "1e+308")
        with self.forged("gap", lambda rec: rec["attempts"][0].update(finished_offset=1e300)):
            self.assertFails("gap", "attempt_finish_wrong", "1e+300")

class WallClockScaleTest(unittest.TestCase):
    """Finding the one step of a wall clock reads each time a few times, not once per possible step."""

    def test_the_step_is_found_in_linear_time(self):
        from verifier import clocks as loop_clock
        reads = []

        class Counted(loop_clock.Event):
            @property
            def wall(self):
                reads.append(1)
                return self._wall

            @wall.setter
            def wall(self, value):
                self._wall = value
        events = [Counted(str(k), "2026-01-01T00:00:00Z", k / 1000, k / 1000) for k in range(3000)]
        for k, event in enumerate(events):
            event.wall = 1767225600 + k / 1000 + (3600 if k >= 1000 else 0) + (3600 if k >= 2000 else 0)
        reads.clear()
        self.assertEqual(loop_clock.wall_clock_finding(events).kind, "clock_breaks")
        self.assertLess(len(reads), 20 * len(events))


if __name__ == "__main__":
    unittest.main()
