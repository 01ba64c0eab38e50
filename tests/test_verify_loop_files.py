"""Tests of verify_loop.py on the files as they arrive: a missing record, names that differ only in case, FIFOs
and devices at evidence paths, and loop.json bytes that are no record or were changed as a whole by a transport.

Helpers and VerifyTestCase (loops made in-process in one copy of the workspace per class) are
tests/test_verify_loop.py's.
"""
import contextlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

from verifier import records as loop_records
import verify_loop
from verifier import findings
from tests.support import assert_found, fields_of, kinds_in, not_on_windows, skip_on_windows
from tests.test_verify_harness import fails_instead_of_hanging
from tests.test_verify_loop import VerifyTestCase, cut_off, verdict_error


class MissingRecordTest(VerifyTestCase):
    def test_folder_without_loop_json_needs_a_person(self):
        (self.root / "loop-runs" / "ghost").mkdir()
        verdict = self.verdict("ghost")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(kinds_in(verdict), ["record_missing"])

    def test_an_empty_or_cut_record_is_never_honest(self):
        # the loop flushes a record to disk before it renames it into place: no crash leaves one empty or cut
        cut_in_a_character = '{"run": "中'.encode("utf-8")[:-1]
        for name, content, said in (("half", b'{"schema": "loop-run/2", "ru', "在结尾处中断"), ("empty", b"", "是空的"),
                                    ("blank", b" \n", "是空的"), ("cut-char", cut_in_a_character, "在结尾处中断")):
            with self.subTest(name=name):
                (self.root / "loop-runs" / name).mkdir()
                self.record_path(name).write_bytes(content)
                self.assertFails(name, "record_cut", f"loop-runs/{name}/loop.json", said)  # cli.py's words

    def test_missing_record_with_child_runs_fails(self):
        self.make("lost", "repair")
        self.record_path("lost").unlink()
        self.assertFails("lost", "record_lost", "loop-runs/lost/loop.json", "runs/lost-01")

    def test_killed_loop_never_cites_a_missing_handoff(self):
        self.make("killed", "repair")
        shutil.rmtree(self.root / "runs" / "killed-02")
        self.forge("killed", cut_off)
        verdict = self.verdict("killed")
        text = " ".join(verdict["problems"])
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertNotIn("handoff_guide", kinds_in(verdict), text)
        self.assertTrue(fields_of(verdict, "child_absent")["child"].endswith("runs/killed-02"), verdict)
        assert_found(self, verdict, "attempt_unfinished_no_child")

    def test_interrupted_or_terminated_loop_cites_its_handoff(self):
        for reason, why in (("keyboard_interrupt", "why_interrupted"), ("terminated", "why_terminated")):
            handoff = {"stopped_at": "第 2 次尝试完成之后", "done": [], "decide": "核对已记录的尝试后，用新名称重新运行。",
                       "inspect": ["loop-runs/r/loop.json", "runs/r-01/run.json", "runs/r-02/run.json"]}
            with self.subTest(reason=reason), self.forged("r", lambda rec: rec.update(
                    status="interrupted", reason=reason, handoff=handoff)):
                verdict = self.verdict("r")
                self.assertEqual(verdict["result"], "needs_human", verdict)
                self.assertEqual(kinds_in(verdict["findings"][0])[:3], ["undecided", why, "handoff_guide"])


class NameCaseTest(VerifyTestCase):
    """Names are one name whatever their case, as loop_lab claims them."""

    def test_child_in_another_case_is_still_this_loops_child(self):
        self.make("Demo", "repair")
        (self.root / "runs" / "demo-03").mkdir()
        self.assertFails("Demo", "run_unrecorded", "runs/demo-03")

    def test_two_loop_folders_differing_only_in_case(self):
        self.make("Twin", "repair")
        try:
            (self.root / "loop-runs" / "twin").mkdir()
        except FileExistsError:
            self.skipTest("这个文件系统不区分大小写")
        self.assertFails("Twin", "loop_twins", "loop-runs/Twin", "loop-runs/twin")

    def test_child_folder_renamed_to_another_case(self):
        self.make("cs", "repair")
        os.rename(self.root / "runs" / "cs-01", self.root / "runs" / "CS-01")
        self.assertFails("cs", "child_other_case", "runs/cs-01", "runs/CS-01")


@not_on_windows("没有命名管道（FIFO）和间隔定时器（setitimer）")
class SpecialFileTest(VerifyTestCase):
    """A FIFO or a device where a loop's evidence belongs (as `tar x` makes them) is named and never opened."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make("h", "repair")

    def put_special(self, rel, kind):
        """Puts a FIFO or a character device (/dev/null's numbers: harmless if opened) at REL; what was there
        comes back after the test."""
        path = self.root / rel
        aside = path.with_name(path.name + ".kept")
        os.rename(path, aside)
        self.addCleanup(os.rename, aside, path)
        try:
            if kind == "fifo":
                os.mkfifo(path)
            else:
                os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except (PermissionError, AttributeError) as exc:  # making a device needs privileges few users have
            self.skipTest(f"这里不能创建 {kind}：{exc}")
        self.addCleanup(os.unlink, path)

    def test_a_fifo_or_a_device_at_every_loop_evidence_path(self):
        # the kind of finding, and the entry's kind as cli.entry_kind says it (the children's: verify_harness's words)
        cases = (("loop-runs/h/loop.json", "record_not_plain"), ("loop-runs/h", "loop_not_folder"),
                 ("runs/h-01", "child_failed"), ("runs/h-02/run.json", "child_failed"),
                 ("runs", "evidence_folder_not_folder"))
        for kind, said in (("fifo", "命名管道（FIFO）"), ("device", "字符设备")):
            for rel, finding in cases:
                with self.subTest(kind=kind, rel=rel):
                    self.put_special(rel, kind)
                    with fails_instead_of_hanging(self):
                        self.assertFails("h", finding, rel, said)
                    self.doCleanups()

    def test_a_socket_or_a_folder_where_loop_json_belongs(self):
        import socket
        path = self.record_path("h")
        self.keep(path)
        path.unlink()
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
        with fails_instead_of_hanging(self):
            self.assertFails("h", "record_not_plain", "loop-runs/h/loop.json", "套接字")
        path.unlink()
        path.mkdir()
        self.addCleanup(path.rmdir)
        self.assertFails("h", "record_not_plain", "loop-runs/h/loop.json", "文件夹")

    def test_a_record_linked_to_dev_zero_is_never_read(self):
        # a separate process with 1 GiB of address space and a time limit: a reader that followed the link
        # would fill memory (the issue saw 24 GB) instead of failing this test
        skip_on_windows(self, "没有 resource 模块：限制不了子进程的内存")
        import resource
        self.make("z", "repair")
        for rel in ("loop-runs/h/loop.json", "runs/z-01/run.json"):
            self.keep(self.root / rel)
            (self.root / rel).unlink()
            os.symlink("/dev/zero", self.root / rel)
            self.addCleanup(os.unlink, self.root / rel)
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # noqa: E731
        proc = subprocess.run([sys.executable, "verify_loop.py", "loop-runs/h", "loop-runs/z"], cwd=self.root,
                              timeout=30, capture_output=True, text=True, encoding="utf-8", preexec_fn=limit,
                              env=dict(os.environ, PYTHONIOENCODING="utf-8"))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertTrue(lines[0]["problems"][0].startswith("loop-runs/h/loop.json "), lines[0])  # its own folder's
        self.assertIn("runs/z-01/run.json 是符号链接", " ".join(lines[1]["problems"]))  # the harness's words
        self.assertNoTraceback(proc.stderr)


class RecordBytesTest(VerifyTestCase):
    """A loop.json that is no record fails naming the file; one a transport changed as a whole passes with a note."""

    def put(self, name, data):
        self.keep(self.record_path(name))
        self.record_path(name).write_bytes(data)

    def test_a_top_level_that_is_not_an_object_fails_naming_the_file(self):
        record = self.record_path("r").read_bytes()
        # the kind, and the JSON type as verify_harness.json_kind says it, or cli.py's words for an unreadable file
        for data, kind, said in ((b"null", "record_not_object", " null"), (b"[]", "record_not_object", "数组"),
                                 (b'"x"', "record_not_object", "字符串"), (b"3", "record_not_object", "数字"),
                                 (b"true", "record_not_object", " true"), (b"", "record_cut", "是空的"),
                                 (record.decode("utf-8").encode("utf-16"), "record_not_json", "不是 UTF-8 文本")):
            with self.subTest(data=data[:8]):
                self.put("r", data)
                self.assertFails("r", kind, "loop-runs/r/loop.json", said)
                self.doCleanups()

    def test_a_record_over_its_cap_is_not_read_past_it(self):
        record = self.record_path("r").read_bytes()
        self.put("r", record[:-2] + b" " * loop_records.RECORD_CAP + b"}\n")
        verdict = self.assertFails("r", "record_too_large", "loop-runs/r/loop.json")
        self.assertEqual(fields_of(verdict, "record_too_large")["mib"], 1)

    def test_line_ends_converted_wholesale_or_a_bom_pass_with_a_note(self):
        record = self.record_path("r").read_bytes()
        for data, said in ((record.replace(b"\n", b"\r\n"), "行尾被转换过（CRLF）"), (b"\xef\xbb\xbf" + record, "BOM"),
                           (b"\xef\xbb\xbf" + record.replace(b"\n", b"\r\n"), "行尾被转换过（CRLF）")):
            with self.subTest(said=said):
                self.put("r", data)
                verdict = self.verdict("r")
                self.assertEqual((verdict["result"], verdict["problems"]), ("pass", []))
                self.assertLessEqual(set(kinds_in(verdict["remarks"])), {"transport", "transport_at"})
                self.assertIn(said, " ".join(verdict["notes"]))  # verify_harness's words for a transport's change
                self.assertIn("loop-runs/r/loop.json", " ".join(verdict["notes"]))
                self.doCleanups()

    def test_line_ends_changed_in_part_are_an_edit(self):
        record = self.record_path("r").read_bytes()
        for data in (record.replace(b"\n", b"\r\n", 3), record.replace(b"\n", b"\r", 1)):
            with self.subTest(data=data[:40]):
                self.put("r", data)
                self.assertFails("r", "record_not_json", "loop-runs/r/loop.json")
                self.assertEqual(verdict_error(self.verdict("r")), findings.said("mixed_line_ends"))
                self.doCleanups()

    def test_every_record_of_a_loop_converted_to_crlf_passes_with_notes(self):
        # as git with core.autocrlf=true leaves a clone on Windows: every text file of the evidence in CRLF
        self.make("crlf", "repair")
        files = [self.record_path("crlf")] + [path for child in ("crlf-01", "crlf-02")
                                              for path in (self.root / "runs" / child).rglob("*") if path.is_file()]
        for path in files:
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        verdict = self.verdict("crlf")
        self.assertEqual((verdict["result"], verdict["problems"]), ("pass", []))
        self.assertIn("transport_at", kinds_in(verdict["remarks"]))
        self.assertIn("行尾被转换过（CRLF）", " ".join(verdict["notes"]))  # verify_harness's words
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = verify_loop.main([str(self.root / "loop-runs" / "crlf")])
        self.assertEqual((code, json.loads(out.getvalue())["result"]), (0, "pass"))
        self.assertIn("说明：", err.getvalue())


    def test_the_record_id_is_32_lowercase_hex(self):
        for value in ("ABCDEF0123456789ABCDEF0123456789", "0" * 31, 7, None):
            with self.subTest(value=value), self.forged("r", lambda rec: rec.update(id=value)):
                self.assertFails("r", "id_wrong")

    def test_an_unreadable_record_or_runs_folder_says_unreadable_not_missing(self):
        real_read = loop_records.read_evidence

        def refused(path, cap):
            if Path(path).name == "loop.json":
                raise PermissionError(13, "Permission denied", str(path))
            return real_read(path, cap)
        with mock.patch.object(loop_records, "read_evidence", refused):
            verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual((verdict["findings"][0].kind, verdict["findings"][0].fields["error_type"]),
                         ("record_unreadable", "PermissionError"))
        self.assertTrue(verdict["findings"][0].fields["record"].endswith("loop-runs/r/loop.json"), verdict)
        real_listing = loop_records.listing
        unlisted = lambda folder: ({}, PermissionError(13, "Permission denied")) if folder.name == "runs" \
            else real_listing(folder)  # noqa: E731
        with mock.patch.object(loop_records, "listing", unlisted):
            verdict = self.verdict("r")
        self.assertEqual(verdict["result"], "needs_human", verdict)
        self.assertEqual(fields_of(verdict, "children_unlistable")["error_type"], "PermissionError")
        self.assertNotIn("child_deleted", kinds_in(verdict))

    def test_a_file_where_runs_belongs_leaves_the_children_missing_not_unknown(self):
        # runs/ that is a file holds no child: the recorded ones are gone (fail), not unlistable (a person's)
        runs = self.root / "runs"
        os.rename(runs, runs.with_name("runs.kept"))
        self.addCleanup(os.rename, runs.with_name("runs.kept"), runs)
        runs.write_bytes(b"")
        self.addCleanup(runs.unlink)
        verdict = self.assertFails("r", "evidence_folder_not_folder", "child_deleted")
        self.assertNotIn("children_unlistable", kinds_in(verdict))


if __name__ == "__main__":
    unittest.main()
