"""Holes an attacker found in the loop verifier, each closed as a class: names as disks hold them, "old" records that
only wear the label, children of loops that ended early, records too long to read item by item, outputs that
flood.

Loops are made in-process in a copy of the workspace (one copy per class), then their records or evidence are
changed the way a forger would; a changed record is put back after its test.
"""
import os
import shutil
import unittest

from tests.test_class_check import forge as rewrite
from tests.test_verify_loop import VerifyTestCase, as_old_record, fingerprint_of
from tests.support import assert_found, fields_of
import verify_harness


def can_hold_both(folder, name, twin):
    """Whether FOLDER's file system keeps NAME and TWIN apart (it does not on Windows and most macOS disks)."""
    probe = folder / ".probe"
    probe.mkdir()
    try:
        (probe / name).mkdir()
        (probe / twin).mkdir()
        return len(os.listdir(probe)) == 2
    except OSError:
        return False
    finally:
        shutil.rmtree(probe)


def link(case, target, at):
    """A symbolic link AT pointing to the folder TARGET, removed after CASE's test; skips where none can be made."""
    try:
        os.symlink(target, at, target_is_directory=True)
    except (OSError, AttributeError) as exc:  # Windows without the privilege
        case.skipTest(f"这里不能创建符号链接：{exc}")
    case.addCleanup(os.unlink, at)


def another_id(record):
    record["id"] = "f" * 32


class NamesAsDisksHoldThemTest(VerifyTestCase):
    """Two evidence names a case-insensitive, normalising disk could not hold side by side: one is a hidden attempt."""

    def hide_twin(self, loop, recorded, twin):
        runs = self.root / "runs"
        if not can_hold_both(runs, recorded, twin):
            self.skipTest("这个文件系统分不出这两个名称")
        shutil.copytree(runs / recorded, runs / twin)
        rewrite(runs / twin / "run.json", lambda run: [another_id(run), run.update(run=twin)])
        self.addCleanup(shutil.rmtree, runs / twin)

    def test_a_third_attempt_hidden_in_another_case_of_a_recorded_child_fails(self):
        self.make("hx", "stuck", max_attempts=3)
        self.hide_twin("hx", "hx-02", "HX-02")
        self.assertFails("hx", "child_twins", "runs/HX-02", "runs/hx-02")

    def test_a_twin_that_only_casefolding_makes_one_name_fails(self):
        self.make("k", "semantic")
        self.hide_twin("k", "k-01", "\u212a-01")  # KELVIN SIGN, which casefolds to k
        self.assertFails("k", "child_twins", "runs/\u212a-01")

    def test_an_unrecorded_child_that_is_a_link_fails_even_when_begun_after_the_loop(self):
        self.make("ln", "semantic")
        self.make("later", "semantic")  # begun after ln ended: its run is what the link shows
        link(self, self.root / "runs" / "later-01", self.root / "runs" / "ln-02")
        self.assertFails("ln", "child_links", "runs/ln-02")

    def test_many_loop_folders_differing_only_in_case_name_a_few_each(self):
        loops = self.root / "loop-runs"
        if not can_hold_both(loops, "Many", "mANY"):
            self.skipTest("这个文件系统不分大小写")
        self.make("many", "permission")
        spellings = ["".join(ch.upper() if bit == "1" else ch for ch, bit in zip("many", f"{i:04b}"))
                     for i in range(1, 16)]
        for spelling in spellings:
            shutil.copytree(loops / "many", loops / spelling)
            self.addCleanup(shutil.rmtree, loops / spelling)
        verdict = self.assertFails("many", "loop_twins")
        self.assertEqual(len(fields_of(verdict, "loop_twins")["others"]), 15)
        self.assertLess(len(" ".join(verdict["problems"])), 1000)


class LinkInASubmissionTest(VerifyTestCase):
    def test_a_link_anywhere_under_runs_fails_the_whole_submission(self):
        from classroom.check import workspace_row
        link(self, self.root / "runs" / "r-01", self.root / "runs" / "notes-backup")
        row = workspace_row(self.root, "学生")
        self.assertEqual(row["result"], "fail", row)
        self.assertIn("workspace_links", row["kinds"])
        self.assertIn("runs/notes-backup", row["problems"][row["kinds"].index("workspace_links")])


class OldOnlyWhereOldTest(VerifyTestCase):
    """An old-schema loop is for a person only when it and every child are readable old-format evidence."""

    def make_old(self, name, scenario, **options):
        """A fresh loop NAME as an older workspace wrote it (loop-run/1, its children harness-run/1)."""
        self.make(name, scenario, **options)
        for child in sorted((self.root / "runs").glob(f"{name}-0*")):
            rewrite(child / "run.json", lambda run: [run.update(schema="harness-run/1"), run.pop("id"),
                                                     run.pop("duration_seconds")])
        rewrite(self.record_path(name), as_old_record)

    def verdict_of(self, name):
        verdict = self.verdict(name)
        return verdict["result"], " ".join(verdict["problems"])

    def test_an_honest_old_loop_needs_a_person(self):
        self.make_old("o1", "stuck")
        self.assertEqual(self.verdict_of("o1")[0], "needs_human")

    def test_an_old_child_with_a_key_twice_fails(self):
        self.make_old("o2", "stuck")
        path = self.root / "runs" / "o2-02" / "run.json"
        path.write_bytes(path.read_bytes().replace(b'"status": "failed"', b'"status": "failed", "status": "failed"'))
        result, text = self.verdict_of("o2")
        self.assertEqual(result, "fail", text)
        self.assertIn("runs/o2-02/run.json", text)

    def test_an_old_child_with_one_crlf_line_fails(self):
        self.make_old("o3", "stuck")
        path = self.root / "runs" / "o3-01" / "run.json"
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n", 1))
        result, text = self.verdict_of("o3")
        self.assertEqual(result, "fail", text)
        self.assertIn("runs/o3-01/run.json", text)

    def test_an_old_child_folder_that_is_a_link_fails(self):
        self.make_old("o4", "stuck")
        self.make_old("o4b", "stuck")
        shutil.rmtree(self.root / "runs" / "o4-02")
        link(self, self.root / "runs" / "o4b-02", self.root / "runs" / "o4-02")
        result, text = self.verdict_of("o4")
        self.assertEqual(result, "fail", text)
        assert_found(self, self.verdict("o4"), "child_links", "runs/o4-02")

    def test_an_old_record_with_a_field_no_old_loop_wrote_fails(self):
        self.make_old("o5", "semantic")
        rewrite(self.record_path("o5"), lambda rec: rec.update(result="pass"))
        result, text = self.verdict_of("o5")
        self.assertEqual(result, "fail", text)
        self.assertIn("result", text)

    def test_an_old_child_keeping_its_id_fails(self):
        self.make_old("o6", "semantic")
        rewrite(self.root / "runs" / "o6-01" / "run.json", lambda run: run.update(id="a" * 32))
        result, text = self.verdict_of("o6")
        self.assertEqual(result, "fail", text)
        self.assertIn("runs/o6-01", text)

    def test_a_zero_attempt_record_relabelled_old_without_its_id_fails(self):
        """Made by today's loop (its loop_lab.py in the fingerprint), however well the newer fields are taken out."""
        self.make("o7", "repair", max_seconds=0)

        def relabel(rec):  # the 16 files an old record carries, today's loop_lab.py among them
            loop_lab_sha = rec["context"]["entries"]["loop_lab.py"]
            as_old_record(rec)
            rec["context"]["entries"]["loop_lab.py"] = loop_lab_sha
            rec["context"]["fingerprint"] = fingerprint_of(rec["context"]["entries"])
        rewrite(self.record_path("o7"), relabel)
        result, text = self.verdict_of("o7")
        self.assertEqual(result, "fail", text)
        self.assertIn("loop_lab.py", text)

    def test_an_old_zero_attempt_record_keeping_attempt_timeout_fails(self):
        self.make("o8", "permission")
        rewrite(self.record_path("o8"), as_old_record)
        rewrite(self.record_path("o8"), lambda rec: rec["budget"].update(attempt_timeout=None))
        result, text = self.verdict_of("o8")
        self.assertEqual(result, "fail", text)
        self.assertIn("budget.attempt_timeout", text)

    def test_an_old_child_left_empty_or_cut_still_needs_a_person(self):
        for cut in (0, 40):
            with self.subTest(cut=cut):
                name = f"o9{cut}"
                self.make_old(name, "stuck")
                path = self.root / "runs" / f"{name}-02" / "run.json"
                path.write_bytes(path.read_bytes()[:cut])
                result, text = self.verdict_of(name)
                self.assertEqual(result, "needs_human", text)
                self.assertIn(f"runs/{name}-02/run.json", text)

    def test_an_old_loop_hiding_an_unrecorded_child_fails(self):
        self.make_old("oa", "semantic")
        shutil.copytree(self.root / "runs" / "oa-01", self.root / "runs" / "oa-02")
        rewrite(self.root / "runs" / "oa-02" / "run.json", lambda run: run.update(run="oa-02"))
        result, text = self.verdict_of("oa")
        self.assertEqual(result, "fail", text)
        assert_found(self, self.verdict("oa"), "run_unrecorded", "runs/oa-02")

    def test_a_harness_run_relabelled_old_keeping_its_id_fails(self):
        self.make("ob", "semantic")
        rewrite(self.root / "runs" / "ob-01" / "run.json",
                lambda run: [run.update(schema="harness-run/1"), run.pop("duration_seconds")])
        verdict = verify_harness.verify_run(self.root / "runs" / "ob-01")
        self.assertEqual(verdict["result"], "fail", verdict)
        self.assertIn("id", verdict["problems"][0])


class EveryChildCheckedTest(VerifyTestCase):
    """However the loop ended, a child that exists is checked, and an edit of it fails, named."""

    def edit_review(self, name, child):
        path = self.root / "runs" / child / "artifact" / "review.md"
        path.write_bytes(path.read_bytes() + "再加一句。\n".encode("utf-8"))

    def test_an_edited_child_of_an_interrupted_loop_fails(self):
        self.make("int", "repair")
        self.edit_review("int", "int-02")

        def interrupted(rec):
            rec.update(status="interrupted", reason="keyboard_interrupt", handoff={
                "stopped_at": "第 2 次尝试进行中", "done": [], "decide": "核对已记录的尝试后，用新名称重新运行。",
                "inspect": ["loop-runs/int/loop.json", "runs/int-01/run.json", "runs/int-02/run.json"]})
            rec["attempts"][-1].update(state="unknown", status=None, feedback=None, decision=None)
        self.forge("int", interrupted)
        verdict = self.assertFails("int", "unfinished_child_failed", "runs/int-02", "review.md")
        self.assertEqual(verdict["result"], "fail")

    def test_an_edited_child_of_an_unexpectedly_stopped_loop_fails(self):
        self.make("une", "repair")
        self.edit_review("une", "une-02")

        def stopped(rec):
            rec.update(status="needs_human", reason="unexpected_error", error_type="OSError", handoff={
                "stopped_at": "第 2 次尝试进行中", "done": [], "decide": "核对已记录的尝试后，用新名称重新运行。",
                "inspect": ["loop-runs/une/loop.json", "runs/une-01/run.json", "runs/une-02/run.json"]})
            rec["attempts"][-1].update(state="unknown", status=None, feedback=None, decision=None)
        self.forge("une", stopped)
        self.assertFails("une", "unfinished_child_failed", "runs/une-02")


class BoundedRecordTest(VerifyTestCase):
    def test_more_attempts_than_the_budget_range_allows_fails_at_once(self):
        self.make("many-att", "stuck")

        def padded(rec):
            rec["attempts"] = rec["attempts"] * 300
        self.forge("many-att", padded)
        verdict = self.assertFails("many-att", "attempts_too_many")
        self.assertEqual(fields_of(verdict, "attempts_too_many"), {"count": 600, "most": 5})
        self.assertLessEqual(len(verdict["problems"]), 2)

    def test_a_loop_shows_at_most_ten_problem_lines_then_counts_the_rest(self):
        self.make("flood", "permission")
        for number in range(1, 16):
            (self.root / "runs" / f"flood-{number:02d}").mkdir()
        verdict = self.verdict("flood")
        self.assertEqual(verdict["result"], "fail")
        self.assertEqual(len(verdict["problems"]), 11, verdict["problems"])
        self.assertEqual((verdict["findings"][-1].kind, verdict["findings"][-1].fields), ("more", {"count": 5}))


if __name__ == "__main__":
    unittest.main()
