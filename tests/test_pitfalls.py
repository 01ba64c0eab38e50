"""The learner's mistakes `--pack` recognises before a hand-in, each tried as a learner would make it.

The six lesson cases are run once in a copy of the workspace; each test copies that workspace (course files and
evidence) into a folder of its own, makes one mistake there (edits a course file, does the exercises in the
workspace itself, deletes a child run or a loop, packs to a Windows path on macOS / Linux) and packs. Each test
checks what --pack said and did, then that the teacher's class check of the same ZIP gives the very row --pack
printed. The teacher's course files are the shared copy, untouched; the released version is the one those loops
recorded (classroom/releases.py's table, patched to know it).
"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from unittest import mock

import cli
import harness
import loop_lab
import verify_loop
from classroom import check as class_check
from classroom import hand_in, pitfalls, releases
from tests.support import PYTHON, not_on_windows
from tests.test_hand_in import HONEST
from tests.test_loop_lab import SharedWorkspaceTestCase
from verifier.records import SCHEMA, CourseFiles, combined_fingerprint
from verifier.findings import Finding


def quietly(function, *args, **options):
    with contextlib.redirect_stderr(io.StringIO()):
        return function(*args, **options)


class PitfallTestCase(SharedWorkspaceTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name, scenario, options in HONEST:
            quietly(loop_lab.run_loop, cls.root, name, scenario, **options)
        cls.release = combined_fingerprint(CourseFiles(cls.root).entries())

    def setUp(self):
        patcher = mock.patch.object(releases, "_known", {self.release: "2026-12-01（本课）"})
        patcher.start()
        self.addCleanup(patcher.stop)

    def workspace(self, name="lesson-14"):
        """A fresh copy of the whole workspace, its six loops included, in a folder of its own."""
        folder = Path(tempfile.mkdtemp(dir=self.root.parent)) / name
        shutil.copytree(self.root, folder)
        self.addCleanup(shutil.rmtree, folder.parent)
        return folder

    def pack(self, workspace, out):
        """`verify_loop.py --pack OUT` in WORKSPACE as its own script would: (exit code, stdout, stderr)."""
        stdout, stderr = io.StringIO(), io.StringIO()
        with mock.patch.object(hand_in, "ROOT", workspace), mock.patch.object(class_check, "HERE", workspace), \
                contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code = verify_loop.main(["--pack", str(out)])
            except SystemExit as exc:
                code = exc.code
        self.assertNotIn("Traceback", stderr.getvalue())
        return code, stdout.getvalue(), stderr.getvalue()

    def teachers_row(self, archive):
        """The row the teacher's class check gives ARCHIVE, against the teacher's own (untouched) course files."""
        submissions = Path(tempfile.mkdtemp(dir=self.root.parent))
        self.addCleanup(shutil.rmtree, submissions)
        shutil.copy(archive, submissions / archive.name)
        stdout = io.StringIO()
        with mock.patch.object(class_check, "HERE", self.root), contextlib.redirect_stdout(stdout), \
                contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
            verify_loop.main(["--class", str(submissions)])
        (line,) = stdout.getvalue().splitlines()
        return json.loads(line)

    def assertSameRowAsTheTeacher(self, stdout, out):
        row = json.loads(stdout)
        self.assertEqual(self.teachers_row(out), row)
        return row


class EditedCourseFileTest(PitfallTestCase):
    def test_an_edited_course_file_is_named_with_how_to_restore_it_and_nothing_is_packed(self):
        workspace = self.workspace()
        task = workspace / "docs" / "loop" / "TASK.md"
        original = task.read_bytes()
        task.write_bytes(original + "\n我的笔记：预算先于候选。\n".encode("utf-8"))
        out = workspace.parent / "张三.zip"
        code, stdout, stderr = self.pack(workspace, out)
        self.assertEqual((code, stdout, out.exists()), (2, "", False))
        self.assertIn("docs/loop/TASK.md 与课程发布时的原样（2026-12-01（本课））不同", stderr)
        self.assertIn("git checkout -- docs/loop/TASK.md", stderr)
        self.assertIn("从课程的 ZIP 里重新取出这个文件", stderr)
        self.assertNotIn("旧版本的工作区做的", stderr)  # an edit, not an older version
        task.write_bytes(original)  # restored as the message says
        code, stdout, stderr = self.pack(workspace, out)
        self.assertEqual((code, self.assertSameRowAsTheTeacher(stdout, out)["result"]), (0, "pass"), stderr)

    def test_a_byte_order_mark_is_said_with_the_command_that_removes_it(self):
        workspace = self.workspace()
        sample = workspace / "samples" / "valid.json"
        sample.write_bytes(b"\xef\xbb\xbf" + sample.read_bytes())
        code, stdout, stderr = self.pack(workspace, workspace.parent / "张三.zip")
        self.assertEqual((code, stdout), (2, ""))
        (line,) = [line for line in stderr.splitlines() if "samples/valid.json：" in line]
        self.assertIn("开头多了 3 个字节的 BOM", line)
        command = line.split("去掉它就还原了：", 1)[1]
        code_text = command.split(' -c "', 1)[1].rstrip('"')
        exec(code_text, {})  # the command as said, from the current folder (its path is said from here)
        self.assertEqual(sample.read_bytes(), (self.root / "samples" / "valid.json").read_bytes())

    def test_loops_run_after_the_edit_are_named_and_fail_at_the_teachers_once_restored(self):
        workspace = self.workspace()
        note = workspace / "project" / "notes" / "A01.md"
        original = note.read_bytes()
        note.write_bytes(original + b"\n")
        quietly(loop_lab.run_loop, workspace, "repair-02", "repair")  # "re-run with new names", as once advised
        out = workspace.parent / "张三.zip"
        code, _, stderr = self.pack(workspace, out)
        self.assertEqual((code, out.exists()), (2, False))
        self.assertIn("改动之后运行的 1 个循环（repair-02）用的是改过的文件", stderr)
        note.write_bytes(original)
        code, stdout, stderr = self.pack(workspace, out)
        row = self.assertSameRowAsTheTeacher(stdout, out)
        self.assertEqual((code, row["result"], row["cases"]["repair"]), (1, "fail", "fail"))
        self.assertIn("project/notes/A01.md", row["problems"][0])

    def test_a_workspace_of_a_released_version_or_with_no_released_loop_is_left_alone(self):
        workspace = self.workspace()
        self.assertIsNone(pitfalls.edited(workspace, CourseFiles(workspace)))  # today's release itself
        (workspace / "AGENTS.md").write_bytes(b"# changed\n")
        found = pitfalls.edited(workspace, CourseFiles(workspace))
        self.assertEqual((found.files, found.before[:2], found.after),
                         (["AGENTS.md"], ["budget-01", "permission-01"], []))
        with mock.patch.object(releases, "_known", {}):  # no loop here recorded a release: nothing tells which
            self.assertIsNone(pitfalls.edited(workspace, CourseFiles(workspace)))


    def test_a_course_file_edited_before_any_loop_ran_is_named_from_this_versions_line(self):
        workspace = self.workspace("edited-first")
        for folder in ("loop-runs", "runs"):
            shutil.rmtree(workspace / folder)
        task = workspace / "docs" / "loop" / "TASK.md"
        original = task.read_bytes()
        task.write_bytes(original + "\n我的笔记\n".encode("utf-8"))
        quietly(loop_lab.run_loop, workspace, "repair-01", "repair")  # recorded the edited file: no release
        line = {"release": "2026-12-01（本课）", "schema": SCHEMA, "files": CourseFiles(self.root).entries()}
        out = workspace.parent / "张三.zip"
        with mock.patch.object(releases, "_known", {"e" * 64: dict(line, release="更早"), self.release: line}):
            code, stdout, stderr = self.pack(workspace, out)
            self.assertEqual((code, stdout, out.exists()), (2, "", False))
            self.assertIn("docs/loop/TASK.md 与课程发布时的原样（2026-12-01（本课））不同。改动在运行任何循环之前", stderr)
            self.assertIn("改动之后运行的 1 个循环（repair-01）用的是改过的文件", stderr)
            task.write_bytes(original)
            code, stdout, stderr = self.pack(workspace, out)  # restored: packed; that loop fails at the teacher's
            self.assertEqual((code, self.assertSameRowAsTheTeacher(stdout, out)["result"]), (1, "fail"), stderr)
        for table in ({self.release: dict(line, files=None)}, {self.release: dict(line, schema="loop-run/3")},
                      {self.release: line, "d" * 64: {"release": "今天的版本", "schema": SCHEMA}}):
            with self.subTest(table), mock.patch.object(releases, "_known", table):  # no line keeps today's files
                task.write_bytes(original + b"\n")
                self.assertIsNone(pitfalls.edited(workspace, CourseFiles(workspace)))

    def test_of_the_releases_the_loops_recorded_the_latest_is_the_reference(self):
        workspace = self.workspace()
        record_file = workspace / "loop-runs" / "budget-01" / "loop.json"
        record = json.loads(record_file.read_bytes())
        record["context"]["entries"]["docs/loop/TASK.md"] = "0" * 64  # made with an earlier release
        record_file.write_text(json.dumps(record), encoding="utf-8")
        earlier = combined_fingerprint(record["context"]["entries"])
        (workspace / "AGENTS.md").write_bytes(b"# changed\n")
        for table in ({earlier: "更早的版本", self.release: "今天的版本"}, {self.release: "今天的版本", earlier: "更早的版本"}):
            with self.subTest(list(table.values())), mock.patch.object(releases, "_known", table):
                found = pitfalls.edited(workspace, CourseFiles(workspace))
                latest = list(table.values())[-1]
                files = ["AGENTS.md"] if latest == "今天的版本" else ["AGENTS.md", "docs/loop/TASK.md"]
                self.assertEqual((found.release, found.files), (latest, files))


class ExerciseLoopsTest(PitfallTestCase):
    def test_exercise_loops_that_change_the_result_are_said_before_packing(self):
        workspace = self.workspace()
        quietly(loop_lab.run_loop, workspace, "ex-repair-01", "repair")
        (workspace / "runs" / "ex-repair-01-02" / "artifact" / "review.md").unlink()  # exercise 2.1, done here
        out = workspace.parent / "张三.zip"
        code, stdout, stderr = self.pack(workspace, out)
        self.assertEqual((code, stdout, out.exists()), (2, "", False))
        self.assertIn("loop-runs/ 里有 1 个练习的循环（ex-repair-01）", stderr)
        self.assertIn("带着它们，老师那一行是 fail；不带它们是 pass", stderr)
        (posix,) = [line.strip() for line in stderr.splitlines() if line.strip().startswith("macOS / Linux：")]
        folder = workspace.parent / "lesson-14-练习的循环"
        self.assertEqual(posix, "macOS / Linux：mkdir -p {0}/loop-runs {0}/runs && mv {1}/loop-runs/ex-* {0}/loop-runs/ "
                                "&& mv {1}/runs/ex-* {0}/runs/".format(*map(self.shown, (folder, workspace))))
        for top in ("loop-runs", "runs"):  # what the command does, done here on every OS
            (folder / top).mkdir(parents=True)
            for entry in (workspace / top).glob("ex-*"):
                shutil.move(entry, folder / top / entry.name)
        code, stdout, stderr = self.pack(workspace, out)
        self.assertEqual((code, self.assertSameRowAsTheTeacher(stdout, out)["result"]), (0, "pass"), stderr)
        self.assertTrue((folder / "runs" / "ex-repair-01-01" / "run.json").is_file())  # kept, not deleted

    def test_exercise_loops_that_make_a_pass_need_a_person_are_said_before_packing(self):
        workspace = self.workspace()

        def killed(root, name, sample):
            harness.run_harness(root, name, sample)
            raise SystemExit(137)  # the process ended outright: the exercise's record is left `running`
        with contextlib.suppress(SystemExit):
            quietly(loop_lab.run_loop, workspace, "ex-repair-01", "repair", run_child=killed)
        out = workspace.parent / "张三.zip"
        code, stdout, stderr = self.pack(workspace, out)
        self.assertEqual((code, stdout, out.exists()), (2, "", False), stderr)
        self.assertIn("ex-repair-01", stderr)

    def test_packing_in_the_exercises_copy_says_to_go_back(self):
        scratch = self.workspace(pitfalls.SCRATCH)  # the learner came back to the wrong folder
        quietly(loop_lab.run_loop, scratch, "ex-repair-01", "repair")
        (scratch / "runs" / "ex-repair-01-02" / "artifact" / "review.md").unlink()
        code, stdout, stderr = self.pack(scratch, scratch.parent / "张三.zip")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn(f"这里是练习副本 {cli.display_path(scratch)}（练习 0 复制出来的）", stderr)
        self.assertIn("要交的是你原来的工作区：回到那里", stderr)
        self.assertNotIn("mv ", stderr)  # nothing to move out of a copy that is to be deleted

    def test_exercise_loops_that_leave_the_result_as_it_is_are_packed_and_said(self):
        workspace = self.workspace()
        quietly(loop_lab.run_loop, workspace, "ex-semantic-01", "semantic")
        out = workspace.parent / "张三.zip"
        code, stdout, stderr = self.pack(workspace, out)
        self.assertEqual((code, self.assertSameRowAsTheTeacher(stdout, out)["loops"]), (0, 7))
        self.assertIn("1 个练习的循环（ex-semantic-01，名称以 ex- 开头）也交上去了，不改变结果", stderr)

    def test_exercise_loops_that_make_a_pass_are_packed(self):
        workspace = self.workspace()
        shutil.rmtree(workspace / "loop-runs" / "stuck-01")
        for child in (workspace / "runs").glob("stuck-01-*"):
            shutil.rmtree(child)
        quietly(loop_lab.run_loop, workspace, "ex-stuck-01", "stuck")  # the only stuck loop is the exercise's
        code, stdout, stderr = self.pack(workspace, workspace.parent / "张三.zip")
        self.assertEqual((code, json.loads(stdout)["result"]), (0, "pass"), stderr)
        self.assertIn("1 个练习的循环（ex-stuck-01，名称以 ex- 开头）也交上去了，不带它们是 incomplete", stderr)

    def shown(self, path):
        return cli.display_path(path)


class DeletedEvidenceTest(PitfallTestCase):
    def test_a_deleted_child_says_what_is_missing_and_the_copy_to_put_back(self):
        workspace = self.workspace()
        scratch = workspace.parent / "lesson-14-scratch"
        shutil.copytree(workspace, scratch)  # exercise 0's copy, made after the six loops
        shutil.rmtree(workspace / "runs" / "repair-01-02")
        out = workspace.parent / "张三.zip"
        code, stdout, stderr = self.pack(workspace, out)
        row = self.assertSameRowAsTheTeacher(stdout, out)
        self.assertEqual((code, row["cases"]["repair"]), (1, "fail"))
        self.assertIn(f"{self.shown(workspace / 'runs' / 'repair-01-02')} 不见了：", stderr)
        self.assertIn("记着第 2 次尝试在那里做的", stderr)
        source = scratch / "runs" / "repair-01-02"
        self.assertIn(f"{self.shown(source)} 还在（这个工作区的副本）：把它原样复制回来", stderr)
        shutil.copytree(source, workspace / "runs" / "repair-01-02")  # cp -R, as said
        code, stdout, stderr = self.pack(workspace, workspace.parent / "张三-2.zip")
        self.assertEqual((code, json.loads(stdout)["result"]), (0, "pass"), stderr)

    def test_an_attempt_cut_before_its_child_was_made_is_no_deleted_child(self):
        workspace = self.workspace()
        shutil.rmtree(workspace / "loop-runs" / "stuck-01")  # a row that is no pass: what is gone is looked for
        for child in (workspace / "runs").glob("stuck-01-*"):
            shutil.rmtree(child)
        quietly(loop_lab.run_loop, workspace, "slow-01", "slow", sleep=mock.Mock(side_effect=KeyboardInterrupt))
        out = workspace.parent / "张三.zip"
        code, stdout, stderr = self.pack(workspace, out)
        row = self.assertSameRowAsTheTeacher(stdout, out)
        self.assertEqual((code, row["result"], row["note_kinds"]), (1, "incomplete", ["cut_short"]), stderr)
        self.assertEqual(pitfalls.missing_children(workspace, out), [])
        record_file = workspace / "loop-runs" / "slow-01" / "loop.json"
        record = json.loads(record_file.read_bytes())
        record["attempts"][0]["state"] = "done"  # as if it had finished: then its child is evidence deleted
        record_file.write_text(json.dumps(record), encoding="utf-8")
        self.assertEqual([gone.child for gone in pitfalls.missing_children(workspace, out)], ["runs/slow-01-01"])

    def test_a_classmates_copy_is_never_offered_but_an_earlier_hand_in_is(self):
        workspace = self.workspace()
        classmate = workspace.parent / "李四的工作区"
        shutil.copytree(workspace, classmate)
        record = classmate / "loop-runs" / "repair-01" / "loop.json"
        record.write_bytes(record.read_bytes().replace(b'"id": "', b'"id": "0', 1))  # another loop of that name
        earlier = workspace.parent / "张三-第一次.zip"
        self.assertEqual(self.pack(workspace, earlier)[0], 0)
        shutil.rmtree(workspace / "runs" / "repair-01-02")
        _, _, stderr = self.pack(workspace, workspace.parent / "张三.zip")
        self.assertNotIn("李四的工作区", stderr)
        self.assertIn(f"{self.shown(earlier)} 里还有它（以前打包的）", stderr)
        earlier.unlink()
        _, _, stderr = self.pack(workspace, workspace.parent / "张三-2.zip")
        self.assertIn("没有找到它的副本", stderr)
        self.assertIn("向老师说明删了什么", stderr)

    def test_a_deleted_loop_is_noticed_by_the_children_it_leaves(self):
        workspace = self.workspace()
        shutil.rmtree(workspace / "loop-runs" / "stuck-01")
        out = workspace.parent / "张三.zip"
        code, stdout, stderr = self.pack(workspace, out)
        row = self.assertSameRowAsTheTeacher(stdout, out)
        self.assertEqual((code, row["result"], row["cases"]["stuck"]), (1, "incomplete", "missing"))
        self.assertEqual(row["note_kinds"], ["orphan_children"])
        self.assertEqual(row["notes"], [Finding("orphan_children", children=["runs/stuck-01-01", "runs/stuck-01-02"],
                                                loop="stuck-01", folder="loop-runs/stuck-01").sentence()])
        self.assertIn(f"{self.shown(workspace / 'loop-runs' / 'stuck-01')} 不见了，它的子运行", stderr)

    def test_lesson_13_runs_named_like_children_are_a_note_and_others_are_not(self):
        workspace = self.workspace()
        for name in ("valid-01", "valid-h1", "valid-001"):
            quietly(harness.run_harness, workspace, name, "valid")
        code, stdout, _ = self.pack(workspace, workspace.parent / "张三.zip")
        row = json.loads(stdout)
        self.assertEqual((code, row["result"], row["note_kinds"]), (0, "pass", ["orphan_children"]))
        self.assertIn("runs/valid-01", row["notes"][0])

    def test_a_run_named_like_a_child_gives_the_teacher_the_same_row(self):
        workspace = self.workspace()
        quietly(harness.run_harness, workspace, "repair-01-03", "valid")  # what harness.py's command line now refuses
        out = workspace.parent / "张三.zip"
        code, stdout, _ = self.pack(workspace, out)
        row = self.assertSameRowAsTheTeacher(stdout, out)
        self.assertEqual(code, 1)
        self.assertNotEqual(row["cases"]["repair"], "pass")  # fail, or needs_human once 2 s after the loop

    def shown(self, path):
        return cli.display_path(path)


class WindowsPathTest(PitfallTestCase):
    @not_on_windows("这就是 Windows 的路径写法，在那里它是一个普通的路径")
    def test_a_windows_path_on_macos_or_linux_is_refused_and_nothing_is_made(self):
        workspace = self.workspace()
        for typed in ("D:\\作业\\李雷.zip", "作业\\李雷.zip", "D:/作业/李雷.zip"):
            with self.subTest(typed), contextlib.chdir(workspace.parent):
                code, stdout, stderr = self.pack(workspace, typed)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn(f"{typed} 是 Windows 的路径写法", stderr)
                self.assertIn("例如 ../作业/李雷.zip，或只写文件名 李雷.zip", stderr)
                self.assertEqual(sorted(path.name for path in workspace.parent.iterdir()), ["lesson-14"])
        self.assertIsNone(hand_in.windows_style("作业/李雷.zip"))
        self.assertIsNone(hand_in.windows_style("a:b.zip"))


class ExerciseNamesTest(SharedWorkspaceTestCase):
    def test_every_loop_the_exercises_run_is_named_as_the_pack_recognises(self):
        text = (self.root / "docs" / "loop" / "EXERCISES.md").read_text(encoding="utf-8")
        names = {line.split("--run ", 1)[1].split()[0] for line in text.splitlines() if "loop_lab.py --run " in line}
        self.assertGreater(len(names), 10)
        self.assertEqual(sorted(name for name in names if not name.startswith(pitfalls.EXERCISE_PREFIX)), [])

    def test_a_zip_is_a_copy_only_with_the_manifest_and_the_same_record(self):
        folder = Path(tempfile.mkdtemp(dir=self.root.parent))
        self.addCleanup(shutil.rmtree, folder)
        record = json.dumps({"id": "abc"}).encode("utf-8")
        for name, members in (("both.zip", {"hand-in.json": b"{}", "loop-runs/x/loop.json": record, "runs/x-01/a": b""}),
                              ("no-manifest.zip", {"loop-runs/x/loop.json": record, "runs/x-01/a": b""})):
            with zipfile.ZipFile(folder / name, "w") as archive:
                for member, data in members.items():
                    archive.writestr(member, data)
        witness = "loop-runs/x/loop.json"
        self.assertTrue(pitfalls.zipped_copy(folder / "both.zip", "runs/x-01", witness, "abc"))
        self.assertFalse(pitfalls.zipped_copy(folder / "both.zip", "runs/x-01", witness, "abd"))
        self.assertFalse(pitfalls.zipped_copy(folder / "both.zip", "runs/x-02", witness, "abc"))
        self.assertFalse(pitfalls.zipped_copy(folder / "no-manifest.zip", "runs/x-01", witness, "abc"))


class WhereTheLoopsAreTest(PitfallTestCase):
    def test_a_loop_named_from_project_is_said_where_the_loops_are(self):
        """`../verify_loop.py loop-runs/X` typed in project/: the path is read from there; the answer says where the
        loops are, with the command that works from there."""
        env = dict(os.environ, PYTHONIOENCODING="utf-8")
        for typed, named in (("loop-runs/repair-01", "repair-01"), ("loop-runs/nothing-01", "repair-01")):
            with self.subTest(typed):
                proc = subprocess.run([sys.executable, "../verify_loop.py", typed], cwd=self.root / "project",
                                      capture_output=True, text=True, encoding="utf-8", timeout=30, env=env)
                self.assertEqual((proc.returncode, proc.stdout), (2, ""))
                self.assertIn(f"{typed} 不存在：路径按当前文件夹理解，而循环在工作区的 ../loop-runs/ 里，例如："
                              f"{PYTHON} ../verify_loop.py ../loop-runs/{named}（", proc.stderr)
        proc = subprocess.run([sys.executable, "verify_loop.py", "loop-runs/nothing-01"], cwd=self.root,
                              capture_output=True, text=True, encoding="utf-8", timeout=30, env=env)
        self.assertIn("loop-runs/nothing-01 不存在：请给出 loop-runs/ 下的循环目录", proc.stderr)  # from the workspace
