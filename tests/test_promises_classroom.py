"""The class check's promises that tests/mutation.py found unguarded: each test fails with its mutant applied.

One small class is built once from honest loops made in a copy of the workspace (as test_class_check does),
each entry breaking one promise of the intake, the class result or the outputs; `verify_loop.py --class`
runs once over it, in-process, and each test reads its row, its CSV or its feedback files. Entries that need
a symbolic link are left out where links cannot be made (Windows without the privilege).
"""
import csv
import json
import os
import shutil
import stat
import unittest

import tests.test_class_check as class_tests
from tests.support import assert_found
from tests.test_class_intake import RawInfo, zip_folder
from tests.test_loop_lab import SharedWorkspaceTestCase

LINKED = "=2+3"  # an entry that is a link; its name starts a formula, so its CSV cells must not


def can_link(folder):
    try:
        os.symlink(folder, folder.parent / ".probe")
    except (OSError, NotImplementedError):
        return False
    os.unlink(folder.parent / ".probe")
    return True


class ClassPromiseTest(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        made = cls.root / "made"
        make = class_tests.ClassCheckTest.make_records.__func__
        make(cls, made / "honest", class_tests.HONEST)
        make(cls, made / "childless", class_tests.CHILDLESS)
        make(cls, made / "stuck-again", (("stuck-02", "stuck", {}),))
        cls.made, cls.class_dir, cls.elsewhere = made, cls.root / "班", cls.root / "别处"
        cls.class_dir.mkdir()
        cls.links = can_link(cls.class_dir)
        cls.build_class()
        cls.checked = []
        cls.code, stdout, cls.stderr = class_tests.in_process(cls.root, "--class", "班", "--csv", "班.csv",
                                                              "--feedback", "反馈", checked=cls.checked)
        cls.rows = {row["student"]: row for row in map(json.loads, stdout.splitlines())}

    @classmethod
    def student(cls, path, source="honest"):
        shutil.copytree(cls.made / source, path)
        class_tests.fresh_ids(path)
        return path

    @classmethod
    def build_class(cls):
        cd = cls.class_dir
        cls.student(cd / "CON")  # honest, with a name Windows keeps for a device
        both = cls.student(cd / "一败一过")  # the stuck case twice: one loop passes, the other is edited
        shutil.copytree(cls.made / "stuck-again", both, dirs_exist_ok=True)
        class_tests.forge(both / "loop-runs" / "stuck-02" / "loop.json",
                          lambda record: record.update(status="needs_review", reason="mechanical_pass"))
        unread = cls.student(cd / "读不出", "childless")  # no runs/, and a record that says nothing
        shutil.rmtree(unread / "runs")
        record = unread / "loop-runs" / "permission-01" / "loop.json"
        record.write_bytes(record.read_bytes()[:40])
        for name, member in (("管道.zip", RawInfo(b"runs/repair-01-01/pipe", mode=stat.S_IFIFO | 0o644)),
                             ("换行.zip", "runs/repair-01-01/a\nb.txt"),
                             ("设备名.zip", "runs/repair-01-01/aux.txt"), ("句点.zip", "runs/repair-01-01/notes.")):
            zip_folder(cls.student(cls.root / "zipping" / name), cd / name, extra=[(member, b"x")])
        if cls.links:
            os.symlink(cls.student(cls.elsewhere / "someone"), cd / LINKED)
            linked_runs = cls.student(cd / "证据是链接")
            shutil.move(linked_runs / "runs", cls.elsewhere / "runs")
            os.symlink(cls.elsewhere / "runs", linked_runs / "runs")
            (cd / "跟着链接").mkdir()
            os.symlink(cls.student(cls.elsewhere / "lesson-14"), cd / "跟着链接" / "lesson-14")

    def assertRow(self, student, result, *expected):
        """STUDENT's row is RESULT, its reasons' findings holding EXPECTED (tests/support.py assert_found)."""
        row = self.rows[student]
        self.assertEqual(row["result"], result, row)
        assert_found(self, [reason.finding for item in self.checked if item.row["student"] == student
                            for reason in item.reasons], *expected)
        return row

    def needs_links(self):
        if not self.links:
            self.skipTest("这里不能创建符号链接")

    def test_a_case_with_one_failing_loop_shows_fail_in_its_cell(self):
        row = self.assertRow("一败一过", "fail")
        self.assertEqual(row["cases"]["stuck"], "fail")

    def test_no_runs_and_a_record_that_cannot_be_read_is_packaging(self):
        self.assertRow("读不出", "packaging", "only_loop_runs")

    def test_zip_members_a_disk_cannot_hold_refuse_the_zip(self):
        for student, said in (("管道", "member_special"), ("换行", "member_control"),
                              ("设备名", "zip_windows_name"), ("句点", "zip_windows_name")):
            with self.subTest(student=student):
                self.assertRow(student, "packaging", said)

    def test_a_feedback_file_never_takes_a_device_name(self):
        written = sorted(path.name for path in (self.root / "反馈").iterdir())
        self.assertIn("_CON.md", written)
        self.assertNotIn("CON.md", written)

    def test_an_entry_that_is_a_link_fails_and_its_csv_cells_start_no_formula(self):
        self.needs_links()
        self.assertRow(LINKED, "fail", "entry_link", LINKED)
        with open(self.root / "班.csv", encoding="utf-8-sig", newline="") as handle:
            (row,) = [row for row in csv.DictReader(handle) if row["student"].endswith(LINKED)]
        self.assertEqual(row["student"], "'" + LINKED)
        self.assertTrue(row["problems"].startswith("'" + LINKED), row["problems"])

    def test_evidence_folders_that_are_links_fail_the_submission(self):
        self.needs_links()
        self.assertRow("证据是链接", "fail", "evidence_folder_link", "runs")

    def test_a_workspace_found_only_through_a_link_is_not_taken(self):
        self.needs_links()
        self.assertRow("跟着链接", "packaging", "nothing_found")

    def test_a_feedback_file_that_is_a_link_is_never_written_through(self):
        self.needs_links()
        earlier = self.root / "反馈" / "_CON.md"
        (self.root / "反馈2").mkdir()
        os.symlink(earlier, self.root / "反馈2" / "一败一过.md")  # points at a feedback file this check wrote
        before = earlier.read_bytes()
        code, stdout, stderr = class_tests.in_process(self.root, "--class", "班", "--feedback", "反馈2")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("一败一过.md 已经存在", stderr)
        self.assertEqual(earlier.read_bytes(), before)
        self.assertEqual(sorted(path.name for path in (self.root / "反馈2").iterdir()), ["一败一过.md"])


if __name__ == "__main__":
    unittest.main()
