"""Tests of `loop_lab.py --resume NAME`: each interruption point resumed ends as an uninterrupted run does.

Loops are interrupted in-process at the points the lesson names (during an attempt's wait, right after its child
folder appears, after its child finished, twice in one loop, between a decision and the final record), then resumed
in-process. Clocks are injected (Shifted: the real clocks moved on by every wait, the harness's own wall clock with
them, so the verifier sees an honest machine that waited; one per process segment, with a gap between them); the
verify_loop process a resume runs first is replaced by the same check in this process (one test runs the real one).
The refusals are run
through main() and must leave every file as it was. Two tests use real signals on real processes (Ctrl-C during a
wait, a process killed outright) and skip on Windows by the suite's one rule.
"""
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from unittest import mock

import export_review
import harness
import loop_lab
from machinery import resume
from tests.support import PYTHON, kinds_in, not_on_windows
from tests.test_loop_lab import LoopTestCase


def verified_here(root, folder):
    """resume.verifier_problems, run in this process (the verifier imports nothing of the loop)."""
    import verify_loop
    result = verify_loop.verify_loop(folder)
    return result["problems"] if result["result"] == "fail" else []


class Shifted:
    """One process's clocks: the real ones, moved on by SHIFT seconds and by every sleep (which returns at once);
    a process of its own has another monotonic origin. The harness's wall clock follows (ResumeTestCase)."""

    def __init__(self, shift=0):
        self.shift, self.origin = shift, time.monotonic() - 1000 * id(self) % 7919  # any origin will do

    def monotonic(self):
        return time.monotonic() - self.origin + self.shift

    def time(self):
        return time.time() + self.shift

    def sleep(self, seconds):
        self.shift += seconds

    def options(self, **changed):
        return {"clock": self.monotonic, "wall": self.time, "sleep": self.sleep, **changed}


class ResumeTestCase(LoopTestCase):
    def setUp(self):
        self.clocks = Shifted()
        for patcher in (mock.patch.object(resume, "verifier_problems", verified_here),
                        mock.patch.object(harness, "now_iso", lambda: time.strftime(
                            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.clocks.time())))):
            patcher.start()
            self.addCleanup(patcher.stop)

    def later(self, seconds=0):
        """The clocks of the next process: the wall clock SECONDS later than this one's (and however long it took)."""
        self.clocks = Shifted(self.clocks.shift + seconds)
        return self.clocks

    def resume(self, name, gap=0, **options):
        """run_loop resuming NAME in-process, in a process segment of its own; what it says is in self.said."""
        options = self.later(gap).options(**options)
        with contextlib.redirect_stderr(io.StringIO()) as said:
            try:
                return loop_lab.run_loop(self.root, name, None, **options)
            finally:
                self.said = said.getvalue()

    def cut_in_wait(self, name, scenario="slow", **options):
        """NAME interrupted by Ctrl-C while attempt 1's stand-in tool waits (before the harness made its folder)."""
        return self.loop(name, scenario, **self.clocks.options(sleep=mock.Mock(side_effect=KeyboardInterrupt)),
                         **options)

    def cut_as_folder_appears(self, name, scenario="repair"):
        with mock.patch.object(export_review, "export_candidate", side_effect=KeyboardInterrupt):
            return self.loop(name, scenario, **self.clocks.options())

    def cut_after_child(self, name, scenario="repair", **options):
        return self.loop(name, scenario, **self.clocks.options(check_child=mock.Mock(side_effect=KeyboardInterrupt),
                                                               **options))

    def assertEndsAsUninterrupted(self, name, record, code, ending, children):
        self.assertEqual((record["status"], record["reason"], len(record["attempts"]), code), ending)
        self.assertEqual(self.read_record(name), record)
        self.assertEqual(self.child_names(name), children)
        verdict = self.verdict(name)
        self.assertEqual(verdict["result"], "pass", verdict)


class InterruptionPointTest(ResumeTestCase):
    def test_a_repair_cut_in_its_first_wait_ends_for_review_after_three_attempts(self):
        _, code = self.cut_in_wait("in-wait")
        self.assertEqual((code, self.read_record("in-wait")["attempts"][0]["state"]), (130, "unknown"))
        record, code = self.resume("in-wait")
        self.assertEndsAsUninterrupted("in-wait", record, code, ("needs_review", "mechanical_pass", 3, 0),
                                       ["in-wait-02", "in-wait-03"])  # runs/in-wait-01 never made
        first = record["attempts"][0]
        self.assertEqual((first["state"], first["status"], first["feedback"], first["finished_offset"]),
                         ("unknown", None, None, None))
        self.assertEqual(first["resume"], {"found": "no_child", "run_status": None, "segment": 2})
        self.assertEqual((first["decision"]["next"], first["decision"]["reason"]), ("continue", "outcome_unknown"))
        self.assertEqual([a["candidate"]["sample"] for a in record["attempts"]], ["bad-quote", "bad-quote", "valid"])
        self.assertIn("runs/in-wait-01/ 不存在", self.said)

    def test_a_child_folder_just_made_is_kept_and_its_attempt_counts(self):
        self.cut_as_folder_appears("as-made")
        child = json.loads((self.root / "runs" / "as-made-01" / "run.json").read_text(encoding="utf-8"))
        record, code = self.resume("as-made")
        self.assertEndsAsUninterrupted("as-made", record, code, ("needs_review", "mechanical_pass", 3, 0),
                                       ["as-made-01", "as-made-02", "as-made-03"])
        self.assertEqual(record["attempts"][0]["resume"], {"found": "partial_child", "run_status": "running",
                                                           "segment": 2})
        self.assertEqual(json.loads((self.root / "runs" / "as-made-01" / "run.json").read_text(encoding="utf-8")),
                         child)  # evidence: nothing of it is completed or tidied up

    def test_a_finished_child_is_adopted_and_decided_by_the_ordinary_rules(self):
        self.cut_after_child("adopted")
        record, code = self.resume("adopted")
        self.assertEndsAsUninterrupted("adopted", record, code, ("needs_review", "mechanical_pass", 2, 0),
                                       ["adopted-01", "adopted-02"])
        first = record["attempts"][0]
        child = json.loads((self.root / "runs" / "adopted-01" / "run.json").read_text(encoding="utf-8"))
        self.assertEqual((first["state"], first["status"], first["feedback"]["error_type"], first["finished_at"]),
                         ("done", "failed", "ValidationError", child["finished_at"]))
        self.assertEqual(first["finished_offset"], record["segments"][0]["elapsed_seconds"])  # the segment's end
        self.assertEqual(first["decision"]["reason"], "first_failure")

    def test_slow_killed_after_its_child_ran_on_past_its_segments_last_reading(self):
        # killed outright (the record left running) once slow's child finished: the 3 s wait and the child ran after
        # the last reading the segment saved, so their wall times are no clock step and a child of any length fits
        with contextlib.suppress(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            loop_lab.run_loop(self.root, "ran-on", "slow", **self.clocks.options(
                check_child=mock.Mock(side_effect=SystemExit)))
        verdict = self.verdict("ran-on")
        self.assertEqual((verdict["result"], {"clock_slept", "clock_set_back"} & set(kinds_in(verdict))),
                         ("needs_human", set()), verdict)
        child = self.root / "runs" / "ran-on-01" / "run.json"
        run = json.loads(child.read_text(encoding="utf-8"))
        child.write_text(json.dumps(dict(run, duration_seconds=0.5)), encoding="utf-8")  # a slow machine's harness
        record, code = self.resume("ran-on", gap=5)
        self.assertEndsAsUninterrupted("ran-on", record, code, ("needs_review", "mechanical_pass", 2, 0),
                                       ["ran-on-01", "ran-on-02"])
        self.assertEqual(record["attempts"][0]["resume"]["found"], "complete_child")

    def test_stuck_cut_after_its_first_child_still_stalls_after_two(self):
        self.cut_after_child("stuck-cut", "stuck")
        record, code = self.resume("stuck-cut")
        self.assertEndsAsUninterrupted("stuck-cut", record, code, ("stalled", "repeated_failure", 2, 1),
                                       ["stuck-cut-01", "stuck-cut-02"])

    def test_twice_in_one_loop(self):
        self.cut_in_wait("twice")
        self.resume("twice", check_child=mock.Mock(side_effect=KeyboardInterrupt))  # cut again after attempt 2's child
        record = self.read_record("twice")
        self.assertEqual((record["status"], [a["state"] for a in record["attempts"]]), ("interrupted",
                                                                                       ["unknown", "unknown"]))
        record, code = self.resume("twice", gap=3600)
        self.assertEndsAsUninterrupted("twice", record, code, ("needs_review", "mechanical_pass", 3, 0),
                                       ["twice-02", "twice-03"])
        self.assertEqual([s.get("ended") for s in record["segments"]],
                         ["keyboard_interrupt", "keyboard_interrupt", None])
        self.assertEqual([s.get("after_attempt") for s in record["segments"]], [None, 1, 2])
        self.assertEqual(record["attempts"][1]["resume"], {"found": "complete_child", "run_status": "failed",
                                                           "segment": 3})

    def test_a_budget_spent_on_an_unknown_attempt_points_to_the_last_feedback(self):
        real = export_review.export_candidate

        def second_cut(source, out, notes):  # attempt 1 fails by the rules; attempt 2 is cut as its folder appears
            if out.parent.name.endswith("-02"):
                raise KeyboardInterrupt
            return real(source, out, notes)

        with mock.patch.object(export_review, "export_candidate", second_cut):
            self.loop("last-fed", "repair", max_attempts=2, **self.clocks.options())
        record, code = self.resume("last-fed")
        self.assertEqual((record["reason"], code), ("attempt_budget", 1))
        self.assertIn("最后一次反馈在 runs/last-fed-01/run.json", record["handoff"]["decide"])

    def test_the_attempt_budget_counts_the_unknown_attempt(self):
        self.loop("one-try", "repair", max_attempts=1, **self.clocks.options(
            run_child=mock.Mock(side_effect=KeyboardInterrupt)))
        record, code = self.resume("one-try")
        self.assertEndsAsUninterrupted("one-try", record, code, ("budget_exhausted", "attempt_budget", 1, 1), [])

    def test_a_loop_killed_before_its_first_reading_was_saved(self):
        with mock.patch.object(loop_lab.OuterLoop, "rounds", side_effect=SystemExit):  # as if killed there
            with contextlib.suppress(SystemExit), contextlib.redirect_stderr(io.StringIO()):
                loop_lab.run_loop(self.root, "early-kill", "semantic", **self.clocks.options())
        self.assertEqual(self.read_record("early-kill")["segments"], [])  # the first record, nothing more
        record, code = self.resume("early-kill")
        self.assertEndsAsUninterrupted("early-kill", record, code, ("needs_review", "mechanical_pass", 1, 0),
                                       ["early-kill-01"])
        first = record["segments"][0]
        self.assertEqual((first["started_at"], first["elapsed_seconds"], first["ended"]),
                         (record["started_at"], 0, "killed"))

    def test_a_judged_attempt_is_no_longer_in_flight(self):
        self.cut_in_wait("judged")
        readings = []  # the resume's origin and its decision; Ctrl-C at round 2's budget check, once

        def clock():
            readings.append(self.clocks.monotonic())
            if len(readings) == 3:
                raise KeyboardInterrupt
            return readings[-1]

        record, code = self.resume("judged", clock=clock)
        self.assertEqual((record["status"], code, len(record["attempts"])), ("interrupted", 130, 1))
        self.assertIn("第 1 次尝试完成之后", record["handoff"]["stopped_at"])

    def test_a_stop_decided_before_the_final_record_is_finished_with_no_new_attempt(self):
        with mock.patch.object(loop_lab.OuterLoop, "finish", side_effect=KeyboardInterrupt):
            with contextlib.suppress(KeyboardInterrupt), contextlib.redirect_stderr(io.StringIO()):
                loop_lab.run_loop(self.root, "decided", "semantic", **self.clocks.options())
        self.assertEqual(self.read_record("decided")["status"], "running")  # killed as it turned to its final record
        record, code = self.resume("decided")
        self.assertEndsAsUninterrupted("decided", record, code, ("needs_review", "mechanical_pass", 1, 0),
                                       ["decided-01"])
        self.assertNotIn("resume", record["attempts"][0])
        self.assertEqual((record["segments"][0]["ended"], record["segments"][0]["lower_bound"]), ("killed", True))

    def test_an_attempt_finished_but_not_decided_is_decided_now(self):
        real = loop_lab.OuterLoop.context_stop

        def cut_after_the_child(loop, when):
            if "子运行之后" in when:
                raise KeyboardInterrupt
            return real(loop, when)

        with mock.patch.object(loop_lab.OuterLoop, "context_stop", cut_after_the_child):
            self.loop("undecided", "repair", **self.clocks.options())
        self.assertEqual(self.read_record("undecided")["attempts"][0]["state"], "done")
        record, code = self.resume("undecided")
        self.assertEndsAsUninterrupted("undecided", record, code, ("needs_review", "mechanical_pass", 2, 0),
                                       ["undecided-01", "undecided-02"])
        self.assertEqual(record["attempts"][0]["resume"]["found"], "finished_undecided")


class BudgetTest(ResumeTestCase):
    def test_time_counts_the_segments_summed_never_the_gap(self):
        # segment 1: attempt 1 waits 2 s of its 3 and is cut; segment 2 (an hour later on the wall clock): attempt 2
        # waits 3 s, fails; round 3 sees 2 + 3 = 5 s >= 4, though neither segment alone spent 4
        def waits_two_then_ctrl_c(seconds):
            self.clocks.sleep(2)
            raise KeyboardInterrupt

        started = time.monotonic()  # the clocks run on real time too: what the machine itself took is allowed
        self.loop("summed", "slow", max_seconds=4, **self.clocks.options(sleep=waits_two_then_ctrl_c))
        record, code = self.resume("summed", gap=3600)
        real = time.monotonic() - started
        self.assertEndsAsUninterrupted("summed", record, code, ("budget_exhausted", "time_budget", 2, 1),
                                       ["summed-02"])
        (first, second), used = record["segments"], record["elapsed_seconds"]
        self.assertEqual((second["started_offset"], round(first["elapsed_seconds"])), (first["elapsed_seconds"], 2))
        self.assertTrue(5 <= used <= 5 + real and 3 <= second["elapsed_seconds"] <= 3 + real,
                        (real, record["segments"]))
        self.assertTrue(3600 <= second["gap_seconds"] < 3601, second)  # recorded, never counted

    def test_a_wall_clock_set_back_before_the_resume_is_recorded_as_a_negative_gap(self):
        self.cut_in_wait("back", max_seconds=4)
        record, code = self.resume("back", gap=-60)  # NTP moved the clock a minute back meanwhile
        gap = record["segments"][1]["gap_seconds"]
        self.assertTrue(-60 <= gap < -59, record["segments"])
        self.assertEqual(verified_here(self.root, self.root / "loop-runs" / "back"), [])

    def test_a_machine_resumed_in_1970_is_no_forgery(self):
        # an offline laptop with a dead clock battery boots on 1 January 1970: the gap, recorded, is -56 years
        self.cut_in_wait("rtc")
        record, code = self.resume("rtc", gap=-self.clocks.time() + 3600)
        self.assertEndsAsUninterrupted("rtc", record, code, ("needs_review", "mechanical_pass", 3, 0),
                                       ["rtc-02", "rtc-03"])
        self.assertLess(record["segments"][1]["gap_seconds"], -1.7e9)
        self.assertTrue(record["segments"][1]["started_at"].startswith("1970-01-01T01:00:"), record["segments"])

    def test_slow_with_a_one_second_budget_cut_after_its_child_stops_before_round_2(self):
        self.cut_after_child("slow-1s", "slow", max_seconds=1)
        record, code = self.resume("slow-1s")
        self.assertEndsAsUninterrupted("slow-1s", record, code, ("budget_exhausted", "time_budget", 1, 1),
                                       ["slow-1s-01"])


class RefusalTest(ResumeTestCase):
    def snapshot(self):
        files = {}
        for top in ("loop-runs", "runs", "samples"):
            for folder, _, names in os.walk(self.root / top):
                files.update({os.path.join(folder, name): (self.root / folder / name).read_bytes() for name in names})
        return files

    def assertRefused(self, name, *words):
        before = self.snapshot()
        code, stdout, stderr = self.main("--resume", name)
        self.assertEqual((code, stdout), (2, ""), stderr)
        self.assertEqual(self.snapshot(), before)
        for word in words:
            self.assertIn(word, stderr)
        return stderr

    def test_finished_loops_are_final(self):
        self.loop("done-ok", "semantic")
        self.assertRefused("done-ok", "needs_review/mechanical_pass")
        self.loop("done-human", "permission")
        self.assertRefused("DONE-HUMAN", "needs_human/permission_boundary", "需要人来决定")

    def test_a_used_name_that_was_interrupted_points_to_the_resume(self):
        self.cut_in_wait("used")
        code, _, stderr = self.main("--run", "USED", "--scenario", "slow")
        self.assertEqual(code, 2)
        self.assertIn(f"它停在 interrupted，没有做完：要接着做，用 {PYTHON} ", stderr)
        self.assertIn("loop_lab.py --resume used（先核对再续跑）", stderr)
        self.loop("used-done", "semantic")
        self.assertNotIn("--resume", self.main("--run", "used-done", "--scenario", "semantic")[2])

    def test_a_copy_of_another_loop_is_not_resumed_in_its_place(self):
        self.cut_in_wait("original")
        import shutil
        shutil.copytree(self.root / "loop-runs" / "original", self.root / "loop-runs" / "original-DESKTOP-K3J2")
        self.assertRefused("original-desktop-k3j2", "这是别的循环的记录（或它的副本）")

    def test_an_unknown_name(self):
        self.assertRefused("nobody-here", "不存在")

    def test_changed_watched_files_are_named(self):
        self.cut_in_wait("changed")
        sample = self.root / "samples" / "valid.json"
        self.keep(sample)
        sample.write_bytes(sample.read_bytes() + b"\n")
        self.assertRefused("changed", "循环开始后这些受监视的文件变了：samples/valid.json")

    def test_a_resume_that_could_not_begin_says_the_record_stays(self):
        self.cut_in_wait("not-begun")
        before = self.snapshot()
        for cause, code, line in ((KeyboardInterrupt, 130, "interrupted"), (PermissionError(13, "denied", "x"), 1,
                                                                            "needs_human")):
            with self.subTest(cause=cause), mock.patch.object(resume, "verifier_problems", side_effect=cause):
                exit_code, stdout, stderr = self.main("--resume", "not-begun")
            self.assertEqual((exit_code, json.loads(stdout)["status"], self.snapshot()), (code, line, before))
            self.assertIn("续跑", stderr)  # the wording guarded: a resume, its loop named, nothing created or left
            self.assertIn("循环 not-begun 的记录原样留着", stderr)
            self.assertNotIn("没有创建任何记录", stderr)
            self.assertNotIn("什么记录都没有留下", stderr)

    def test_a_forged_interrupted_record_fails_the_verifier_first(self):
        self.cut_after_child("forged")
        path = self.root / "loop-runs" / "forged" / "loop.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        record["attempts"][0]["candidate"]["sample"] = "valid"
        path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
        self.assertRefused("forged", "verify_loop.py", "没有通过")

    def test_a_live_loop_or_a_second_resume(self):
        self.cut_in_wait("busy")
        lock = resume.LoopLock(self.root / "loop-runs" / "busy")  # as the live loop, or the first resume, holds it
        self.assertTrue(lock.acquire())
        try:
            self.assertRefused("busy", "还在运行，或正被另一个 --resume 续跑")
        finally:
            lock.release()
        self.assertEqual(self.resume("busy")[0]["status"], "needs_review")

    def test_a_lock_file_that_cannot_be_opened_is_a_refusal(self):
        self.cut_in_wait("blocked")
        lock = self.root / "loop-runs" / ".held-blocked"
        lock.unlink(missing_ok=True)  # where the file itself is the lock, it went with the loop
        lock.mkdir()  # a folder in its place (or no permission to open it)
        self.assertRefused("blocked", "loop-runs/.held-blocked")  # IsADirectoryError here, PermissionError on Windows

    def test_an_older_schema_cannot_carry_segments(self):
        self.cut_in_wait("older")
        path = self.root / "loop-runs" / "older" / "loop.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        path.write_bytes(json.dumps(dict(record, schema="loop-run/3")).encode("utf-8"))
        self.assertRefused("older", "由旧版本的工作区生成")

    def test_a_model_loop_is_not_resumed(self):
        self.cut_in_wait("model-cut")
        path = self.root / "loop-runs" / "model-cut" / "loop.json"
        path.write_bytes(path.read_bytes().replace(b'"scenario": "slow"', b'"scenario": "model"'))
        self.assertRefused("model-cut", "是 model 情景的循环")

    def test_resume_takes_no_other_option(self):
        code, _, stderr = self.main("--resume", "x", "--max-attempts", "5")
        self.assertEqual(code, 2)
        self.assertIn("--resume 只接受循环的名称", stderr)


class LockTest(ResumeTestCase):
    def setUp(self):
        super().setUp()
        (self.root / "loop-runs").mkdir(exist_ok=True)

    def test_one_lock_at_a_time_with_the_systems_lock_and_without(self):
        for kind in (resume.locking(), None):
            with self.subTest(kind=kind), mock.patch.object(resume, "locking", return_value=kind):
                folder = self.root / "loop-runs" / f"lock-{kind}"
                first, second = resume.LoopLock(folder), resume.LoopLock(folder)
                self.assertTrue(first.acquire())
                self.assertFalse(second.acquire())
                first.release()
                self.assertTrue(second.acquire())
                second.release()

    def test_without_the_systems_lock_a_dead_holder_is_taken_over(self):
        folder = self.root / "loop-runs" / "lock-dead"
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        (self.root / "loop-runs" / ".held-lock-dead").write_text(gone.stdout.strip(), encoding="ascii")
        with mock.patch.object(resume, "locking", return_value=None):
            lock = resume.LoopLock(folder)
            self.assertTrue(lock.acquire())
            lock.release()


class UnknownNameTest(ResumeTestCase):
    """A mistyped name, in a workspace of its own: the loops here that a resume could continue are named."""

    def refused(self, name):
        code, stdout, stderr = self.main("--resume", name)
        self.assertEqual((code, stdout), (2, ""), stderr)
        return stderr.split("（名称不区分大小写）；", 1)[1].split("。", 1)[0]

    def test_the_loops_that_could_be_resumed_are_named(self):
        self.assertEqual(self.refused("cut-l"), "这里没有可以续跑的循环")
        self.loop("done", "semantic")
        self.cut_in_wait("model-like")
        record_file = self.root / "loop-runs" / "model-like" / "loop.json"
        record = json.loads(record_file.read_text(encoding="utf-8"))
        self.assertEqual(record["status"], "interrupted")
        record_file.write_text(json.dumps(dict(record, scenario="model")), encoding="utf-8")  # never resumed
        for number in range(1, 6):  # five are named
            self.cut_in_wait(f"cut-{number}")
        import shutil
        shutil.copytree(self.root / "loop-runs" / "cut-1", self.root / "loop-runs" / "cut-1 - 副本")  # no loop of its own
        self.assertEqual(self.refused("cut-l"), "这里可以续跑的是：cut-1、cut-2、cut-3、cut-4、cut-5")
        self.cut_in_wait("cut-6")
        self.assertEqual(self.refused("cut-l"), "这里可以续跑的是：cut-1、cut-2、cut-3、cut-4、cut-5 等 6 个")


class RealSignalTest(ResumeTestCase):
    """A loop whose attempt waits (its child runner sleeps) in a real process, cut by a real signal."""
    DRIVER = ("import sys, time, loop_lab\n"
              "loop_lab.new_loop.__kwdefaults__['run_child'] = lambda root, name, sample: time.sleep(60)\n"
              "sys.exit(loop_lab.main(sys.argv[1:]))\n")

    def waiting_loop(self, name):
        (self.root / "waiting_driver.py").write_bytes(self.DRIVER.encode("utf-8"))
        proc = subprocess.Popen([sys.executable, "waiting_driver.py", "--run", name, "--scenario", "repair"],
                                cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(os.environ, PYTHONIOENCODING="utf-8"))
        self.addCleanup(proc.stdout.close)
        self.addCleanup(proc.stderr.close)
        record = self.root / "loop-runs" / name / "loop.json"
        deadline = time.monotonic() + 20
        while not (record.exists() and json.loads(record.read_text(encoding="utf-8"))["attempts"]):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.02)
        return proc

    @not_on_windows("os.kill() 在 Windows 上直接结束进程，既发不出 Ctrl-C，也分不出强行结束")
    def test_a_live_loop_is_refused_and_one_killed_outright_is_resumed(self):
        proc = self.waiting_loop("killed")
        self.assertEqual(self.main("--resume", "killed")[0], 2)  # live: its lock is held
        proc.kill()
        proc.wait(timeout=20)
        code, stdout, stderr = self.run_cli("loop_lab.py", "--resume", "killed")  # the real verify_loop process first
        self.assertEqual((code, json.loads(stdout)["attempts"]), (0, 3), stderr)
        record = self.read_record("killed")
        self.assertEqual((record["segments"][0]["ended"], record["segments"][0]["lower_bound"]), ("killed", True))
        self.assertEqual(self.verdict("killed")["result"], "pass")

    @not_on_windows("os.kill() 在 Windows 上直接结束进程，发不出 Ctrl-C")
    def test_a_real_ctrl_c_during_the_wait(self):
        proc = self.waiting_loop("ctrl-c")
        proc.send_signal(signal.SIGINT)
        self.assertEqual(proc.wait(timeout=20), 130)
        self.assertEqual(json.loads(proc.stdout.read())["status"], "interrupted")
        record, code = self.resume("ctrl-c")
        self.assertEndsAsUninterrupted("ctrl-c", record, code, ("needs_review", "mechanical_pass", 3, 0),
                                       ["ctrl-c-02", "ctrl-c-03"])
