"""Tests of `verify_loop.py --pack OUT.zip`, the student's hand-in, through the real command line in-process.

The six lesson cases are run once (loop_lab in-process) in a copy of the workspace; each test copies
that evidence into a student folder of its own, changes it the way a student (or an accident) would,
packs it and reads the ZIP back with zipfile. What a ZIP should hold is found by walking the folder
here, not taken from classroom/hand_in.py.
"""
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest
import zipfile
from pathlib import Path
from unittest import mock

from classroom import hand_in
import loop_lab
import verify_loop
from tests.test_loop_lab import SharedWorkspaceTestCase

# The lesson's six cases, one loop each: (name, scenario, budget options).
HONEST = (("repair-01", "repair", {}), ("stuck-01", "stuck", {}), ("budget-01", "repair", {"max_attempts": 1}),
          ("time-01", "repair", {"max_seconds": 0}), ("semantic-01", "semantic", {}),
          ("permission-01", "permission", {}))


def try_link(target, link):
    """A symbolic link LINK -> TARGET, or False where the system does not let this user make one (Windows)."""
    try:
        os.symlink(target, link, target_is_directory=os.path.isdir(target))
    except (OSError, NotImplementedError):
        return False
    return True


def evidence_on_disk(root):
    """Every regular file under ROOT/loop-runs and ROOT/runs as a ZIP entry name, sorted; the loops' lock files
    (loop-runs/.held-NAME, docs/loop/TASK.md「续跑」) are no evidence."""
    names = []
    for top in ("loop-runs", "runs"):
        for folder, _, files in os.walk(root / top):
            rel = Path(folder).relative_to(root).as_posix()
            names += [f"{rel}/{name}" for name in files if not (rel == "loop-runs" and name.startswith(".held-"))]
    return sorted(names)


class HandInTest(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with contextlib.redirect_stderr(io.StringIO()):
            for name, scenario, options in HONEST:
                loop_lab.run_loop(cls.root, name, scenario, **options)

    def student(self, name="张三"):
        """A fresh folder holding a copy of the six honest loops' loop-runs/ and runs/."""
        folder = Path(tempfile.mkdtemp(dir=self.root.parent)) / name
        for top in ("loop-runs", "runs"):
            shutil.copytree(self.root / top, folder / top)
        self.addCleanup(shutil.rmtree, folder.parent)
        return folder

    def pack(self, workspace, out):
        """`verify_loop.py --pack OUT` for WORKSPACE, in-process: (exit code, stdout, stderr)."""
        stdout, stderr = io.StringIO(), io.StringIO()
        with mock.patch.object(hand_in, "ROOT", workspace), contextlib.redirect_stdout(stdout), \
                contextlib.redirect_stderr(stderr):
            try:
                code = verify_loop.main(["--pack", str(out)])
            except SystemExit as exc:
                code = exc.code
        return code, stdout.getvalue(), stderr.getvalue()

    def assertPacked(self, workspace, out):
        """The pack exited 0 or 1 and wrote OUT: its row (parsed), its entries and the ZIP."""
        code, stdout, stderr = self.pack(workspace, out)
        self.assertIn(code, (0, 1), stderr)
        self.assertNotIn("Traceback", stderr)
        self.assertEqual(len(stdout.splitlines()), 1, stdout)
        archive = zipfile.ZipFile(out)
        self.addCleanup(archive.close)
        return code, json.loads(stdout), stderr, archive

    def test_a_passing_workspace_packs_exactly_its_evidence_and_a_manifest(self):
        workspace = self.student()
        code, row, stderr, archive = self.assertPacked(workspace, workspace / "张三.zip")
        self.assertEqual((code, row["student"], row["result"], row["loops"], row["problems"]), (0, "张三", "pass", 6, []))
        expected = evidence_on_disk(workspace)
        self.assertEqual(archive.namelist(), expected + ["hand-in.json"])
        for name in expected:
            self.assertEqual(archive.read(name), (workspace / name).read_bytes(), name)
        self.assertEqual({info.date_time for info in archive.infolist()}, {(1980, 1, 1, 0, 0, 0)})
        manifest = json.loads(archive.read("hand-in.json").decode("utf-8"))
        self.assertEqual(manifest["row"], row)
        self.assertEqual(manifest["loops"], sorted(name for name, _, _ in HONEST))
        self.assertEqual(manifest["files"], len(expected))
        self.assertIn("已写出", stderr)
        self.assertIn("结果 pass", stderr)

    def test_the_same_evidence_gives_the_same_bytes(self):
        workspace = self.student()
        self.assertPacked(workspace, workspace / "张三.zip")
        for path in (workspace / "runs").rglob("*"):
            os.utime(path, (1_000_000, 1_000_000))  # a copy made later: new times, same evidence
        self.assertPacked(workspace, workspace.parent / "张三.zip")
        self.assertEqual((workspace / "张三.zip").read_bytes(), (workspace.parent / "张三.zip").read_bytes())

    def test_a_failing_loop_is_packed_all_the_same_and_exits_1(self):
        workspace = self.student("李四")
        (workspace / "runs" / "repair-01-02" / "artifact" / "review.md").unlink()
        code, row, stderr, archive = self.assertPacked(workspace, workspace / "李四.zip")
        self.assertEqual((code, row["result"], row["cases"]["repair"]), (1, "fail", "fail"))
        self.assertTrue(any("repair-01" in problem for problem in row["problems"]), row["problems"])
        self.assertNotIn("runs/repair-01-02/artifact/review.md", archive.namelist())
        self.assertIn("runs/repair-01-02/artifact/cards.json", archive.namelist())
        self.assertIn("交不交由你决定", stderr)

    def test_a_workspace_whose_loops_made_no_child_run_is_not_packaging(self):
        workspace = self.student("尤二")
        shutil.rmtree(workspace / "runs")  # permission and --max-seconds 0 make no child: loop_lab makes no runs/
        for name in ("repair-01", "stuck-01", "budget-01", "semantic-01"):
            shutil.rmtree(workspace / "loop-runs" / name)
        code, row, stderr, archive = self.assertPacked(workspace, workspace / "尤二.zip")
        self.assertEqual((code, row["result"], row["loops"]), (1, "incomplete", 2), row["problems"])
        self.assertEqual((row["cases"]["permission"], row["cases"]["repair --max-seconds 0"]), ("pass", "pass"))
        self.assertEqual(row["kinds"], ["missing_cases"], row["problems"])

    def test_names_the_teachers_intake_refuses_are_refused_before_anything_is_written(self):
        workspace = self.student("钱七")
        made = []
        for name in ("a:b.txt", "aux.txt", "dot.", "Icon\r", "a\\b.txt", "Case.txt", "case.txt"):
            try:
                (workspace / "runs" / "repair-01-01" / name).write_bytes(b"x")
                made.append(name)
            except OSError:  # a disk that cannot hold the name: nothing to pack either
                continue
        code, stdout, stderr = self.pack(workspace, workspace / "钱七.zip")
        self.assertEqual((code, stdout), (2, ""))
        self.assertFalse((workspace / "钱七.zip").exists())
        refused = [line for line in stderr.splitlines() if "请把它改名" in line]
        self.assertEqual(len(refused), len(made) - ("case.txt" in made and "Case.txt" in made), stderr)
        self.assertIn("Icon\\r", stderr)  # shown as its escape, never a bare carriage return
        if "a:b.txt" in made:  # each name is told why, so the student knows what to rename
            self.assertIn("runs/repair-01-01/a:b.txt：名称里有冒号", stderr)

    def test_a_name_ending_in_a_dot_or_a_space_is_refused_windows_holds_neither(self):
        self.assertEqual([hand_in.name_problem(name) is None for name in ("end.", "end ", "end", "a b")],
                         [False, False, True, True])

    def test_empty_folders_a_zip_does_not_carry_are_said_and_the_zips_row_printed(self):
        workspace = self.student("孙二")
        (workspace / "loop-runs" / "empty-01").mkdir()  # in the workspace: a loop without its record
        code, row, stderr, _ = self.assertPacked(workspace, workspace / "孙二.zip")
        self.assertEqual((row["result"], row["loops"]), ("pass", 6))  # what the teacher will see of the ZIP
        self.assertIn("注意：在工作区里核对是 needs_human，老师核对这个 ZIP 是 pass", stderr)
        self.assertIn("空文件夹 loop-runs/empty-01/ 不会进 ZIP", stderr)

    def test_no_runs_and_an_unreadable_record_is_packaging_not_an_accusation(self):
        workspace = self.student("周二")
        shutil.rmtree(workspace / "runs")
        (workspace / "loop-runs" / "repair-01" / "loop.json").write_bytes(b"{not json")
        code, row, stderr, _ = self.assertPacked(workspace, workspace / "周二.zip")
        self.assertEqual((code, row["result"]), (1, "packaging"), row["problems"])
        self.assertEqual(row["kinds"], ["packaging"], row["problems"])
        self.assertIn(" runs/", row["problems"][0])  # what is missing (only_loop_runs)
        self.assertNotIn("改动", " ".join(row["problems"]))  # the words never accuse

    def test_an_existing_out_is_never_replaced(self):
        workspace = self.student()
        out = workspace / "张三.zip"
        out.write_bytes(b"an earlier hand-in")
        (workspace / "张三-2.zip").write_bytes(b"")
        code, stdout, stderr = self.pack(workspace, out)
        self.assertEqual((code, stdout), (2, ""))
        self.assertEqual(out.read_bytes(), b"an earlier hand-in")
        self.assertIn("张三-3.zip", stderr)  # the first free name is suggested
        self.assertEqual(sorted(p.name for p in workspace.iterdir()), ["loop-runs", "runs", "张三-2.zip", "张三.zip"])

    def test_usage_errors_exit_2_and_write_nothing(self):
        workspace = self.student()
        cases = {"inside loop-runs/": workspace / "loop-runs" / "repair-01" / "x.zip",
                 "inside runs/": workspace / "runs" / "x.zip",
                 "not a .zip": workspace / "张三.tar",
                 "folder missing": workspace / "nowhere" / "x.zip"}
        for why, out in cases.items():
            with self.subTest(why):
                code, stdout, stderr = self.pack(workspace, out)
                self.assertEqual((code, stdout), (2, ""), stderr)
                self.assertFalse(os.path.lexists(out))
                self.assertIn("参数错误", stderr)
        self.assertEqual(evidence_on_disk(workspace), evidence_on_disk(self.root))
        shutil.rmtree(workspace / "loop-runs")
        code, _, stderr = self.pack(workspace, workspace / "x.zip")
        self.assertEqual(code, 2)
        self.assertIn("没有 loop-runs/", stderr)
        self.assertFalse(os.path.lexists(workspace / "x.zip"))

    def test_links_pipes_and_claim_folders_are_left_out_and_said(self):
        workspace = self.student()
        (workspace / "loop-runs" / ".lock-repair-02").mkdir()
        (workspace / "loop-runs" / ".lock-repair-02" / "loop.json").write_bytes("{}".encode("utf-8"))
        left_out = ["loop-runs/.lock-repair-02"]
        if try_link(workspace / "runs" / "repair-01-01", workspace / "runs" / "link-01"):
            left_out.append("runs/link-01")
        if hasattr(os, "mkfifo"):
            os.mkfifo(workspace / "runs" / "repair-01-02" / "pipe")  # opening it would block for ever
            left_out.append("runs/repair-01-02/pipe")
        _, _, stderr, archive = self.assertPacked(workspace, workspace / "张三.zip")
        names = archive.namelist()
        for name in left_out:
            self.assertFalse([entry for entry in names if entry.startswith(name)], name)
            self.assertIn(f"没有打包 {name}", stderr)
        if "runs/link-01" in left_out:
            self.assertIn("符号链接", stderr)
        if hasattr(os, "mkfifo"):
            self.assertIn("命名管道（FIFO）", stderr)

    def test_names_and_bytes_are_kept_as_they_are(self):
        workspace = self.student()
        note = workspace / "runs" / "repair-01-02" / "artifact" / "笔记 α.md"
        note.write_bytes(b"line one\r\nline two\n\xe4\xb8\xad")  # CRLF and LF mixed: no conversion in either way
        (workspace / "loop-runs" / "说明.txt").write_bytes("我的六个循环\r\n".encode("utf-8"))
        _, _, _, archive = self.assertPacked(workspace, workspace / "作业 α.zip")
        for name in ("runs/repair-01-02/artifact/笔记 α.md", "loop-runs/说明.txt"):
            info = archive.getinfo(name)
            self.assertTrue(info.flag_bits & 0x800, name)  # names marked UTF-8 for every unzip tool
            self.assertEqual(archive.read(name), (workspace / name).read_bytes())
        self.assertTrue(all("\\" not in name for name in archive.namelist()))

    def test_the_teacher_sees_the_row_the_student_saw(self):
        workspace = self.student()
        (workspace / "runs" / "stuck-01-02" / "run.json").unlink()
        _, row, _, archive = self.assertPacked(workspace, workspace.parent / "张三.zip")
        archive.close()  # Windows moves no file a process holds open
        submissions = workspace.parent / "交作业"
        submissions.mkdir()
        shutil.move(workspace.parent / "张三.zip", submissions / "张三.zip")
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
            with contextlib.suppress(SystemExit):
                verify_loop.main(["--class", str(submissions)])
        self.assertEqual([json.loads(line) for line in stdout.getvalue().splitlines()], [row])


if __name__ == "__main__":
    unittest.main()
