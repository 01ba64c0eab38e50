"""Every clock reading a loop records adds up, each rule on its own and both sides of each threshold.

A loop-run/4 record reads each wall time together with a monotonic reading (an attempt's start at its budget
check, the segment's origin with its wall_minus_monotonic) and a reading for each decision; its children
measure their own monotonic duration. What no honest machine records fails (an attempt begun at max_seconds, a
child longer than its attempt, a reading going back, a segment's two halves of one reading apart); what one can
(a process paused between two readings of a time budget spent mid-loop) is for a person; an honest slow machine
(every course file 0.12 s to open, fsync 2.5 s) is never failed. loop-run/3, now an older schema, is judged on
the windows its loop read its wall times in.

Loops are made in-process in one shared copy of the workspace; where a loop must take time, its clocks and its
children's move on together (test_verify_loop.lasting). Each test then sets every reading of a record (retime):
the record stays consistent but for the one reading a test moves.
"""
import contextlib
import io
import json
import shutil
import time
import types
import unittest
from unittest import mock

import cli
import harness
import loop_lab
from classroom import check as class_check
from tests.test_verify_loop import VerifyTestCase, as_v3_record, lasting
from tests.support import assert_found, fields_of, kinds_in

START = 1767225600  # 2026-01-01T00:00:00Z


def stamp(offset):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(START + offset))


class ClocksTestCase(VerifyTestCase):
    @classmethod
    def setUpClass(cls):
        super(VerifyTestCase, cls).setUpClass()  # only the loops below
        cls.make("rep", "repair")
        shift = []  # attempt 1's child takes 31 s by every clock: the 30 s budget is spent before round 2
        cls.make("tb", "repair", clock=lambda: time.monotonic() + sum(shift), wall=lambda: time.time() + sum(shift),
                 run_child=lasting(31, shift))
        late = []  # slow, its 1 s budget spent by attempt 1 (retimed below as its stand-in tool's 3 s wait)
        cls.make("tbs", "slow", max_seconds=1, tool_seconds=0, clock=lambda: time.monotonic() + sum(late),
                 wall=lambda: time.time() + sum(late), run_child=lasting(1.5, late))

    def retime(self, name, attempts, elapsed, end=None, loop_start=0, anchor=0, change=None):
        """The verdict on loop NAME once every reading and wall time of it and its children is set: ATTEMPTS gives
        each attempt's (started, finished, decided, its child's own duration); ELAPSED, the stop's reading; END, the
        segment's last (ELAPSED by default); LOOP_START, where the loop's own started_at lies; ANCHOR, how far the
        segment's wall_minus_monotonic lies from its start; CHANGE(record), a last edit. Wall times are START +
        reading, in whole seconds."""
        end = elapsed if end is None else end

        def edit(rec):
            rec.update(started_at=stamp(loop_start), finished_at=stamp(end), elapsed_seconds=elapsed)
            rec["segments"][0].update(started_at=stamp(0), wall_minus_monotonic=START + anchor, elapsed_seconds=end)
            for entry, (started, finished, decided, _) in zip(rec["attempts"], attempts):
                entry.update(started_at=stamp(started), finished_at=stamp(finished), started_offset=started,
                             finished_offset=finished)
                entry["decision"]["decided_offset"] = decided
            if change:
                change(rec)
        self.forge(name, edit)
        for number, (started, _, _, duration) in enumerate(attempts, 1):
            path = self.root / "runs" / f"{name}-{number:02d}" / "run.json"
            self.keep(path)
            run = json.loads(path.read_text(encoding="utf-8"))
            run.update(started_at=stamp(started), finished_at=stamp(started + duration), duration_seconds=duration)
            path.write_bytes(json.dumps(run, ensure_ascii=False, indent=2).encode("utf-8"))
        return self.verdict(name)

    def assertVerdict(self, verdict, result, *expected):
        """VERDICT is RESULT, its findings holding EXPECTED (kinds and values: tests/support.py assert_found)."""
        self.assertEqual(verdict["result"], result, verdict)
        self.assertNotIn("check_crashed", kinds_in(verdict))
        assert_found(self, verdict, *expected)
        self.doCleanups()
        return verdict

    def assertFinding(self, verdict, result, kind, **fields):
        """VERDICT is RESULT with a finding of KIND whose fields include FIELDS (a finding inside: its kind)."""
        self.assertVerdict(verdict, result, kind)
        found = fields_of(verdict, kind)
        self.assertEqual({name: found[name].kind if hasattr(found[name], "kind") else found[name] for name in fields},
                         fields, verdict["problems"])
        return found

    def assertPause(self, verdict, where, seconds):
        """VERDICT needs a person for one pause: WHERE ("between", the kind of the moment it ran until, that reading)
        or ("in_attempt", the child's own seconds); SECONDS long."""
        place = self.assertFinding(verdict, "needs_human", "pause")["where"]
        pause = fields_of(verdict, "pause")
        said = ("between", place.fields["until"].kind, place.fields["end"]) if place.kind == "pause_between" \
            else ("in_attempt", round(place.fields["child"], 3))
        self.assertEqual((said, round(pause["seconds"], 3)), (where, seconds))


# repair: attempt 1 from 1.0 to 2.0 (child 0.5 s), decided at 2.1; attempt 2 from 2.2 to 3.0 (child 0.5 s), decided
# at 3.1; the end read at 3.2
REPAIR = ((1.0, 2.0, 2.1, 0.5), (2.2, 3.0, 3.1, 0.5))
# the time budget: attempt 1 from 0.0 to 31.0 (its child 30.5 s), decided at 31.1, the budget checked at 31.2
BUDGET = ((0.0, 31.0, 31.1, 30.5),)
# repair again, attempt 2's child starting 5 s after its budget check (from 2.2 to 8.0, its child 0.5 s)
SLOW_OPENS = ((1.0, 2.0, 2.1, 0.5), (2.2, 8.0, 8.1, 0.5))


class MonotonicContradictionTest(ClocksTestCase):
    def test_the_honest_timelines_pass(self):
        self.assertVerdict(self.retime("rep", REPAIR, 3.2), "pass")
        self.assertVerdict(self.retime("tb", BUDGET, 31.2), "pass")

    def test_an_attempt_begun_at_exactly_max_seconds_fails_and_just_before_passes(self):
        late = ((1.0, 2.0, 2.1, 0.5), (30.0, 31.0, 31.1, 0.5))
        self.assertFinding(self.retime("rep", late, 31.2), "fail", "started_past_budget", number=2, offset=30.0)
        inside = ((1.0, 2.0, 2.1, 0.5), (29.999, 31.0, 31.1, 0.5))
        self.assertVerdict(self.retime("rep", inside, 31.2), "pass")

    def test_a_child_longer_than_its_attempt_fails_and_is_no_clock_step(self):
        fits = ((1.0, 2.0, 2.1, 1.05), REPAIR[1])  # the coarse clocks' tolerance, exactly
        self.assertVerdict(self.retime("rep", fits, 3.2), "pass")
        longer = ((1.0, 2.0, 2.1, 1.051), REPAIR[1])
        verdict = self.retime("rep", longer, 3.2)
        self.assertFinding(verdict, "fail", "child_longer", number=1, duration=1.051)
        self.assertEqual({"clock_set_back", "clock_slept"} & set(kinds_in(verdict)), set())

    def test_a_child_far_longer_than_its_attempt_is_not_blamed_on_a_wall_clock_step(self):
        longer = ((1.0, 2.0, 2.1, 40.0), REPAIR[1])  # its own wall times 40 s apart: its own check sees no step
        verdict = self.assertVerdict(self.retime("rep", longer, 3.2), "fail", "child_longer")
        self.assertEqual({"child_needs_human", "clock_set_back", "clock_slept"} & set(kinds_in(verdict)), set())

    def test_a_decision_read_before_its_attempt_ended_or_after_the_next_began_fails(self):
        early = ((1.0, 2.0, 1.999, 0.5), REPAIR[1])
        self.assertFinding(self.retime("rep", early, 3.2), "fail", "reading_backwards", value=1.999, before=2.0)
        late = ((1.0, 2.0, 2.201, 0.5), REPAIR[1])
        self.assertFinding(self.retime("rep", late, 3.2), "fail", "reading_backwards", value=2.2, before=2.201)
        same = ((1.0, 2.0, 2.0, 0.5), (2.0, 3.0, 3.0, 0.5))  # readings may be equal
        self.assertVerdict(self.retime("rep", same, 3.0), "pass")

    def test_the_segments_last_reading_is_no_earlier_than_the_stop(self):
        self.assertFinding(self.retime("tb", BUDGET, 31.2, end=31.199), "fail", "reading_backwards", later="time_of",
                           value=31.199, earlier="reading_elapsed", before=31.2)
        self.assertVerdict(self.retime("tb", BUDGET, 31.2, end=31.2), "pass")

    def test_a_segments_start_and_its_wall_reading_are_one_reading(self):
        for anchor in (0.9, 0.001, 1.001):  # its start time is that reading in whole seconds
            self.assertVerdict(self.retime("rep", REPAIR, 3.2, anchor=anchor), "pass")
        for anchor in (-0.002, 1.002):
            self.assertFinding(self.retime("rep", REPAIR, 3.2, anchor=anchor), "fail", "segment_anchor",
                               started="2026-01-01T00:00:00Z")

    def test_a_time_budget_stop_is_judged_on_the_loops_own_check(self):
        self.assertVerdict(self.retime("tb", ((0.0, 29.8, 29.9, 29.5),), 30.0), "pass")  # 30 >= 30
        self.assertVerdict(self.retime("tb", ((0.0, 29.8, 29.9, 29.5),), 29.999), "fail", "stop_unsupported")

    def test_each_decision_carries_its_reading_and_the_segment_its_start(self):
        def unread(rec):
            del rec["attempts"][0]["decision"]["decided_offset"]
        self.assertVerdict(self.retime("rep", REPAIR, 3.2, change=unread), "fail", "decision_shape")
        for segments in ([], "[]", [{"started_at": stamp(0), "started_offset": 5, "wall_minus_monotonic": START + 5,
                                      "elapsed_seconds": 3.2}]):
            with self.subTest(segments=segments):
                verdict = self.retime("rep", REPAIR, 3.2, change=lambda rec: rec.update(segments=segments))
                self.assertVerdict(verdict, "fail", "segments_wrong")

    def test_a_record_of_one_more_segment_is_none_this_loop_writes(self):
        def resumed(rec):
            rec["segments"].append(dict(rec["segments"][0], started_offset=3.2))
        self.assertVerdict(self.retime("rep", REPAIR, 3.2, change=resumed), "fail", "segments_wrong")


class WallTimesReadWithTheirReadingsTest(ClocksTestCase):
    def test_a_loop_started_at_read_before_its_claim_is_never_a_clock_step(self):
        # an fsync of 2.5 s between the loop's started_at and its first reading: honest, not "slept 3 s"
        self.assertVerdict(self.retime("rep", REPAIR, 3.2, loop_start=-2.5), "pass")
        self.assertVerdict(self.retime("rep", REPAIR, 3.2, loop_start=-10 ** 6), "pass")

    def test_an_attempts_start_is_read_with_its_budget_check(self):
        def opened_slowly(rec):  # its wall time 4 s after its reading, where loop-run/3 read it (after the context)
            rec["attempts"][1]["started_at"] = stamp(2.2 + 4)
        verdict = self.assertVerdict(self.retime("rep", SLOW_OPENS, 8.2, change=opened_slowly), "fail",
                                     "2026-01-01T00:00:06Z")
        self.assertTrue({"clock_breaks", "clock_breaks_once"} & set(kinds_in(verdict)), verdict)

    def test_loop_run_3_read_an_attempts_start_after_its_budget_check_and_before_its_child(self):
        def opened_slowly(rec):
            rec["attempts"][1]["started_at"] = stamp(2.2 + 4)  # its 22 files, 0.12 s each, and a slow write first
            as_v3_record(rec)
        verdict = self.assertVerdict(self.retime("rep", SLOW_OPENS, 8.2, change=opened_slowly), "needs_human",
                                     "older_schema", "lacks_v3")
        self.assertFalse([kind for kind in kinds_in(verdict) if kind.startswith("clock_")], verdict)

        def after_its_child(rec):  # no loop-run/3 read it once its child had run
            rec["attempts"][1]["started_at"] = stamp(2.2 + 9)
            as_v3_record(rec)
        self.assertVerdict(self.retime("rep", SLOW_OPENS, 8.2, change=after_its_child), "fail", "2026-01-01T00:00:11Z")


class LoopReadingsTest(unittest.TestCase):
    def test_an_attempts_wall_time_is_read_with_its_budget_check_not_after_the_context_check(self):
        # a context check that takes 5 s of wall-clock time while the monotonic clock is read only at the budget check
        from tests.test_promises_guards import course_copy
        root, shift, fingerprint = course_copy(self), [0.0], harness.fingerprint

        def slow_check(*args, **kwargs):
            found = fingerprint(*args, **kwargs)
            shift[0] += 5
            return found
        with mock.patch.object(harness, "fingerprint", slow_check), contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(root, "paired", "semantic", clock=lambda: 0.0, wall=lambda: START + shift[0])
        attempt = record["attempts"][0]
        self.assertEqual((attempt["started_offset"], attempt["started_at"]), (0, stamp(5)))  # read before the check


class PauseTest(ClocksTestCase):
    """A time budget spent mid-loop: a stretch between two readings that only the loop's own steps separate is for a
    person once it is longer than clocks.CHECK_GAP (2 s), each stretch on its own; never for any other stop."""

    def test_the_first_budget_check_long_after_the_loops_origin(self):
        for at, result in ((2.0, "pass"), (2.001, "needs_human")):
            with self.subTest(at=at):
                timeline = ((at, at + 31.0, at + 31.1, 30.5),)
                verdict = self.retime("tb", timeline, at + 31.2)
                if at > 2:
                    self.assertPause(verdict, ("between", "moment_budget_check", 2.001), 2.001)
                self.assertVerdict(verdict, result)

    def test_a_stretch_inside_an_attempt_beyond_its_child(self):
        for child, result in ((29.0, "pass"), (28.999, "needs_human")):
            with self.subTest(child=child):
                verdict = self.retime("tb", ((0.0, 31.0, 31.1, child),), 31.2)
                if result != "pass":
                    self.assertPause(verdict, ("in_attempt", 28.999), 2.001)
                self.assertVerdict(verdict, result)

    def test_the_stretch_between_an_attempts_end_and_its_decision(self):
        for decided, result in ((33.0, "pass"), (33.001, "needs_human")):
            with self.subTest(decided=decided):
                verdict = self.retime("tb", ((0.0, 31.0, decided, 30.5),), decided + 0.1)
                if result != "pass":
                    self.assertPause(verdict, ("between", "moment_decision", 33.001), 2.001)
                self.assertVerdict(verdict, result)

    def test_the_stretch_between_the_decision_and_the_budget_check_that_stopped(self):
        for elapsed, result in ((33.1, "pass"), (33.101, "needs_human")):
            with self.subTest(elapsed=elapsed):
                verdict = self.retime("tb", BUDGET, elapsed)
                if result != "pass":
                    self.assertPause(verdict, ("between", "moment_last_check", 33.101), 2.001)
                self.assertVerdict(verdict, result)

    def test_slows_stand_in_tool_is_time_the_attempt_spends_honestly(self):
        waited = ((0.0, 4.9, 5.0, 0.02),)  # 3 s of the stand-in tool, 0.02 s of the child, 1.88 s of the loop's steps
        self.assertVerdict(self.retime("tbs", waited, 5.1), "pass")
        relabelled = self.retime("tbs", waited, 5.1, change=lambda rec: rec.update(scenario="repair"))
        self.assertPause(relabelled, ("in_attempt", 0.02), 4.88)

    def test_a_pause_counts_only_where_a_time_budget_was_spent(self):
        paused = ((1.0, 21.0, 21.1, 0.02), (21.2, 21.5, 21.6, 0.2))  # 20 s inside attempt 1, the loop went on
        self.assertVerdict(self.retime("rep", paused, 21.7), "pass")

    def test_the_issues_pauses_no_longer_make_a_repair_an_honest_time_budget_stop(self):
        # 29 s before the first budget check, then an attempt whose child ran 0.02 s: the repair case stops on time
        before = ((29.0, 29.1, 29.2, 0.02),)
        self.assertPause(self.retime("tb", before, 30.0), ("between", "moment_budget_check", 29.0), 29.0)
        self.doCleanups()
        inside = ((0.0, 29.5, 29.6, 0.02),)
        self.assertPause(self.retime("tb", inside, 30.0), ("in_attempt", 0.02), 29.48)


class HonestSlowMachineTest(ClocksTestCase):
    """Every course file takes 0.12 s to open and every fsync 2.5 s, on every clock of the machine alike."""

    def run_slowly(self, name, scenario, **options):
        shift = [0.0]
        real_sha, real_write = harness.file_sha256, cli.write_json_atomic

        def opened(path):
            shift[0] += 0.12
            return real_sha(path)

        def written(path, obj):
            real_write(path, obj)
            shift[0] += 2.5
        now = types.SimpleNamespace(monotonic=lambda: time.monotonic() + shift[0], strftime=time.strftime,
                                    gmtime=lambda seconds=None: time.gmtime(
                                        time.time() + shift[0] if seconds is None else seconds))
        with mock.patch.object(harness, "file_sha256", opened), mock.patch.object(cli, "write_json_atomic", written), \
                mock.patch.object(loop_lab, "write_json_atomic", written), mock.patch.object(harness, "time", now), \
                contextlib.redirect_stderr(io.StringIO()):
            record, _ = loop_lab.run_loop(self.root, name, scenario, clock=now.monotonic,
                                          wall=lambda: time.time() + shift[0], **options)
        return record, self.verdict(name)

    def test_its_loops_pass_and_a_time_budget_it_spent_is_never_called_a_forgery(self):
        for name, scenario, result in (("slow-disk-repair", "repair", "pass"), ("slow-disk-stuck", "stuck", "pass")):
            with self.subTest(scenario=scenario):
                record, verdict = self.run_slowly(name, scenario)
                self.assertEqual(record["status"] in ("needs_review", "stalled"), True, record["status"])
                self.assertVerdict(verdict, result)
        record, verdict = self.run_slowly("slow-disk-budget", "repair", max_seconds=5)
        self.assertEqual(record["reason"], "time_budget")  # its own steps spent the 5 s
        self.assertNotEqual(verdict["result"], "fail", verdict)
        self.assertIn("pause", kinds_in(verdict))


class ClassCaseTest(ClocksTestCase):
    def test_a_repair_case_stopped_by_a_pause_is_not_passed(self):
        self.retime("tb", ((29.0, 29.1, 29.2, 0.02),), 30.0)
        alone = self.root / "alone"
        for rel in ("loop-runs/tb", "runs/tb-01"):
            shutil.copytree(self.root / rel, alone / rel)
        row = class_check.workspace_row(alone, "某某", course=class_check.TeacherCourse(self.root))
        self.assertEqual((row["result"], row["cases"]["repair"]), ("needs_human", "needs_human"), row)


if __name__ == "__main__":
    unittest.main()
