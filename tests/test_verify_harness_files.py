"""Tests of verify_harness.py on a run's files as they really arrive: line ends or a BOM changed by a transport,
and hostile files (links, FIFOs, devices, oversized or unreadable files) where evidence belongs.

VerifyCase (a run made in-process in the temporary workspace copy) and fails_instead_of_hanging are
tests/test_verify_harness.py's.
"""
import json
import os
import shutil
import socket
import stat
import unittest
from pathlib import Path
from unittest import mock

import cli
import verify_harness
from tests.support import not_on_windows
from tests.test_export_review import run_main
from tests.test_verify_harness import INPUT_EDITED, VerifyCase, fails_instead_of_hanging


EVIDENCE_FILES = ("run.json", "input/candidate.json", "artifact/cards.json", "artifact/review.md")
EVIDENCE_PATHS = ("", "input", "artifact", *EVIDENCE_FILES)


def crlf(data):
    return data.replace(b"\n", b"\r\n")


def first_line_crlf(data):
    return data.replace(b"\n", b"\r\n", 1)


class TransportTest(VerifyCase):
    """Line ends converted wholesale, or a BOM added, is the same content; a partial change is an edit."""

    def convert(self, run_dir, files, change):
        for rel in files:
            path = run_dir / rel
            path.write_bytes(change(path.read_bytes()))

    def test_every_evidence_file_converted_to_crlf_passes_with_a_note(self):
        for sample, files in (("valid", EVIDENCE_FILES), ("bad-quote", EVIDENCE_FILES[:2])):
            with self.subTest(sample):
                run_dir = self.make_run(sample)
                self.convert(run_dir, files, crlf)
                code, out, err = run_main(verify_harness.main, str(run_dir))
                line = json.loads(out)
                self.assertEqual((code, line["result"]), (0, "pass"), line)
                self.assertEqual(line["notes"], [
                    f"行尾被转换过（CRLF）：{'、'.join(files)} 的换行整体从 LF 变成了 CRLF（例如 Windows 上 git 的 "
                    "core.autocrlf），换回 LF 后与记录一致，按同一份内容核对。"])
                self.assertIn("说明：行尾被转换过（CRLF）", err)

    def test_a_bom_added_to_every_evidence_file_passes_with_a_note(self):
        run_dir = self.make_run("valid")
        self.convert(run_dir, EVIDENCE_FILES, lambda data: b"\xef\xbb\xbf" + data)
        result = verify_harness.verify_run(run_dir)
        self.assertEqual((result["result"], result["problems"]), ("pass", []))
        self.assertEqual(result["notes"], [f"文件开头被加了 BOM：{'、'.join(EVIDENCE_FILES)}（例如用记事本另存过），"
                                           "去掉后与记录一致，按同一份内容核对。"])

    def test_git_is_told_never_to_convert_evidence(self):
        rules = [line.split() for line in (self.root / ".gitattributes").read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.startswith("#")]
        for folder in ("runs/**", "loop-runs/**"):
            # the last rule naming a path wins: the evidence rule must come after `*.md text eol=lf`
            self.assertIn([folder, "-text"], rules)
            self.assertGreater(rules.index([folder, "-text"]), rules.index(["*.md", "text", "eol=lf"]))

    def test_a_partial_or_mixed_change_is_an_edit(self):
        cases = (("input/candidate.json", first_line_crlf, INPUT_EDITED),
                 ("input/candidate.json", lambda data: b"\xef\xbb\xbf" + first_line_crlf(data), INPUT_EDITED),
                 ("artifact/review.md", first_line_crlf, "产物 artifact/review.md 被改动或删除了"),
                 ("artifact/cards.json", lambda data: crlf(data)[:-2] + b"\n", "产物 artifact/cards.json 被改动或删除了"),
                 ("artifact/review.md", lambda data: crlf(data.replace("检索".encode(), "生成".encode(), 1)),
                  "产物 artifact/review.md 被改动或删除了"))
        for number, (rel, change, problem) in enumerate(cases):
            with self.subTest(rel=rel, case=number):
                run_dir = self.make_run("valid", f"partial-{number}")
                self.convert(run_dir, [rel], change)
                result = verify_harness.verify_run(run_dir)
                self.assertEqual(result["result"], "fail")
                self.assertTrue(any(p.startswith(problem) for p in result["problems"]), result["problems"])
                self.assertEqual(result["notes"], [])


class HostileFileTest(VerifyCase):
    """What a submission can hold at an evidence path: each is named and none is opened."""

    def replace_with(self, run_dir, rel, make):
        path = run_dir / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()
        make(path)
        return path

    def assert_named(self, run_dir, said, verdict="fail"):
        with fails_instead_of_hanging(self):
            result = verify_harness.verify_run(run_dir)
        self.assertEqual(result["result"], verdict, result)
        self.assertEqual(len(result["problems"]), 1, result["problems"])
        self.assertIn(said, result["problems"][0])
        return result

    @not_on_windows("没有命名管道（os.mkfifo）")
    def test_a_fifo_at_every_evidence_path_fails_unopened(self):
        for number, rel in enumerate(EVIDENCE_PATHS):
            with self.subTest(rel or "the run folder"):
                run_dir = self.make_run("valid", f"fifo-{number}")
                self.replace_with(run_dir, rel, os.mkfifo)
                expected = "文件夹" if rel in ("", "input", "artifact") else "普通文件"
                self.assert_named(run_dir, f"是命名管道（FIFO），不是{expected}：harness 只写下普通的文件和文件夹，核对时没有打开它")

    def test_a_device_at_every_evidence_path_fails_unopened(self):
        # making a device file needs privileges: the file system reports one at PATH, and nothing may open it
        for number, rel in enumerate(EVIDENCE_PATHS):
            with self.subTest(rel or "the run folder"):
                run_dir = self.make_run("valid", f"device-{number}")
                device = os.path.join(str(run_dir), rel) if rel else str(run_dir)
                device = os.path.normpath(device)
                real_lstat, real_open = os.lstat, os.open

                def lstat(path, *args, **kwargs):
                    found = real_lstat(path, *args, **kwargs)
                    if os.path.normpath(os.fspath(path)) != device:
                        return found
                    return os.stat_result((stat.S_IFCHR | 0o666, *tuple(found)[1:]))

                def opening(path, *args, **kwargs):
                    self.assertNotEqual(os.path.normpath(os.fspath(path)), device, "a device was opened")
                    return real_open(path, *args, **kwargs)
                with mock.patch("os.lstat", lstat), mock.patch("os.open", opening):
                    self.assert_named(run_dir, "是字符设备，不是")

    @not_on_windows("创建符号链接需要额外权限")
    @unittest.skipUnless(os.path.exists("/dev/zero"), "这里没有 /dev/zero")
    def test_a_link_to_dev_zero_fails_unread(self):
        for number, rel in enumerate(EVIDENCE_FILES):
            with self.subTest(rel):
                run_dir = self.make_run("valid", f"zero-{number}")
                self.replace_with(run_dir, rel, lambda path: path.symlink_to("/dev/zero"))
                self.assert_named(run_dir, "是符号链接或目录联接")

    @not_on_windows("没有这样的 Unix 套接字文件")
    @unittest.skipUnless(hasattr(socket, "AF_UNIX"), "这里没有 Unix 套接字")
    def test_a_socket_fails_unopened(self):
        run_dir = self.make_run("valid")
        server = socket.socket(socket.AF_UNIX)
        self.addCleanup(server.close)
        self.replace_with(run_dir, "artifact/review.md", lambda path: server.bind(str(path)))
        self.assert_named(run_dir, "review.md 是套接字，不是普通文件")

    @not_on_windows("没有命名管道（os.mkfifo）")
    def test_a_fifo_among_the_course_notes_fails_unopened(self):
        run_dir = self.make_run("valid")
        for rel in ("project/notes/A01.md", "project/notes/A04.md"):  # cited and watched; neither
            with self.subTest(rel):
                note = self.root / rel
                note.rename(note.with_suffix(".bak"))
                os.mkfifo(note)
                with fails_instead_of_hanging(self):
                    result = verify_harness.verify_run(run_dir)
                self.assertEqual(result["result"], "fail")
                self.assertIn(f"课程文件 {rel} 是命名管道（FIFO），不是普通文件：核对时没有打开它", result["problems"][0])
                note.unlink()
                note.with_suffix(".bak").rename(note)

    def test_a_folder_where_a_file_belongs_and_a_file_where_a_folder_belongs(self):
        for number, (rel, make, said) in enumerate((
                ("run.json", Path.mkdir, "run.json 是文件夹，不是普通文件"),
                ("input/candidate.json", Path.mkdir, "candidate.json 是文件夹，不是普通文件"),
                ("artifact", Path.touch, "artifact 是普通文件，不是文件夹"))):
            with self.subTest(rel):
                run_dir = self.make_run("valid", f"kind-{number}")
                self.replace_with(run_dir, rel, make)
                self.assert_named(run_dir, said)

    def test_a_file_over_its_cap_fails_naming_the_cap(self):
        for number, rel in enumerate(("run.json", "artifact/review.md")):
            with self.subTest(rel):
                run_dir = self.make_run("valid", f"large-{number}")
                path = run_dir / rel
                path.write_bytes(path.read_bytes() + b" " * (1 << 20))
                self.assert_named(run_dir, f"{Path(rel).name} 超过了读取上限（1 MiB）")

    def test_a_record_that_is_no_object_fails_naming_the_file(self):
        cases = ((b"null", "的顶层是 null，不是 JSON 对象"), (b"[]", "的顶层是数组，不是 JSON 对象"),
                 (b'"x"', "的顶层是字符串，不是 JSON 对象"), (b"3", "的顶层是数字，不是 JSON 对象"),
                 (b"", "是空的：harness 先把记录写到磁盘再改名，不会留下空的或被截断的记录"),
                 ('{"schema": "harness-run/2"}'.encode("utf-16"), "不是 UTF-8 文本（例如被另存成了 UTF-16）"))
        run_dir = self.make_run("valid")
        path = run_dir / "run.json"
        for data, said in cases:
            with self.subTest(data=data):
                path.write_bytes(data)
                result = self.assert_named(run_dir, said)
                self.assertTrue(result["problems"][0].startswith(f"{cli.display_path(path)} "), result["problems"])

    def test_a_record_cut_short_fails(self):
        run_dir = self.make_run("valid")
        path = run_dir / "run.json"
        path.write_bytes(path.read_bytes()[:200])
        self.assert_named(run_dir, "在结尾处中断（内容不完整，被截断）")

    def test_an_unreadable_file_says_unreadable_not_missing(self):
        for number, rel in enumerate(EVIDENCE_FILES):
            with self.subTest(rel):
                run_dir = self.make_run("valid", f"locked-{number}")
                locked = os.path.normpath(run_dir / rel)
                real_open = os.open

                def opening(path, *args, **kwargs):
                    if os.path.normpath(os.fspath(path)) == locked:
                        raise PermissionError(13, "Permission denied", locked)
                    return real_open(path, *args, **kwargs)
                with mock.patch("os.open", opening):
                    result = self.assert_named(run_dir, "无法读取（没有读写权限，PermissionError）：文件在", "needs_human")
                self.assertNotIn("不存在", result["problems"][0])

    @not_on_windows("chmod 锁不住文件")
    @unittest.skipIf(hasattr(os, "geteuid") and os.geteuid() == 0, "以 root 运行时 chmod 锁不住文件")
    def test_a_chmod_000_file_says_unreadable(self):
        run_dir = self.make_run("valid")
        path = run_dir / "input" / "candidate.json"
        path.chmod(0)
        self.addCleanup(path.chmod, 0o644)
        self.assert_named(run_dir, "无法读取", "needs_human")


if __name__ == "__main__":
    unittest.main()
