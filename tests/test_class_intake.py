"""Tests of classroom/intake.py: what each entry of a class folder is taken for, and where its workspace is.

No loop is run here: a workspace is a few small files in a temporary folder (the intake only looks at where
loop-runs/ and runs/ are). ZIPs are written by the helpers below the way the platforms and the operating
systems write them (PowerShell's `\\`, Chinese Windows' GBK names without the UTF-8 flag, macOS's __MACOSX/),
and the way an attacker would (a member outside the archive, an absolute one, a link, a bomb, a password,
a cut-off file). The class check itself is tested in tests/test_class_check.py, which uses these helpers.
"""
import os
import random
import shutil
import stat
import struct
import tempfile
import unittest
import zipfile
from pathlib import Path
from unittest import mock

from classroom import intake as class_intake
from classroom.intake import student_and_id, taken_in
from classroom.platforms import handed_in
from tests import support


class RawInfo(zipfile.ZipInfo):
    """A member whose stored name bytes and flags are given exactly (zipfile would write UTF-8 and flag it)."""

    def __init__(self, raw_name, flags=0, mode=0o644):
        super().__init__(raw_name.decode("cp437"))
        self.raw_name, self.extra_flags = raw_name, flags
        self.external_attr = mode << 16
        self.create_system = 3

    def _encodeFilenameFlags(self):
        return self.raw_name, self.flag_bits | self.extra_flags


def zip_folder(folder, target, top="", separator="/", encoding=None, extra=()):
    """FOLDER's files as a ZIP at TARGET, under TOP/ when given. SEPARATOR `\\` writes names as PowerShell does;
    ENCODING (e.g. gbk) stores names in it without the UTF-8 flag; EXTRA adds (ZipInfo or name, bytes)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                name = "/".join(filter(None, [top, path.relative_to(folder).as_posix()])).replace("/", separator)
                info = RawInfo(name.encode(encoding)) if encoding else zipfile.ZipInfo(name)
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
        for member, data in extra:
            archive.writestr(member, data)
    return Path(target)


def fake_workspace(folder, loops=("repair-01",)):
    """The shape of a workspace with LOOPS: loop-runs/NAME/loop.json and runs/NAME-01/run.json."""
    for name in loops:
        (folder / "loop-runs" / name).mkdir(parents=True)
        (folder / "loop-runs" / name / "loop.json").write_bytes("{}\n".encode("utf-8"))
        (folder / "runs" / f"{name}-01").mkdir(parents=True)
        (folder / "runs" / f"{name}-01" / "run.json").write_bytes("{}\n".encode("utf-8"))
    return folder


class IntakeTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="intake-", dir=support._FAST_TEMP)
        self.addCleanup(tmp.cleanup)
        self.base = Path(tmp.name)
        self.class_dir, self.scratch = self.base / "交作业", self.base / "scratch"
        self.class_dir.mkdir()
        self.scratch.mkdir()
        self.workspace = fake_workspace(self.base / "ws")

    def take(self, name):
        """(packaging, workspace relative to the submission's root as text) of the entry NAME."""
        with taken_in(self.class_dir / name, self.scratch) as submission:
            where = None
            if submission.workspace is not None:
                where = submission.workspace.relative_to(submission.root).as_posix()
                self.assertTrue((submission.workspace / "loop-runs" / "repair-01" / "loop.json").is_file())
            return submission.packaging, where

    def assertPackaging(self, name, kinds, *texts):
        """The entry NAME is packaging: its finding holds the findings KINDS and names TEXTS (paths, members)."""
        packaging, where = self.take(name)
        self.assertIsNone(where)
        self.assertEqual(packaging.kind, "packaging", packaging)
        found = support.kinds_in(packaging)
        for kind in kinds:
            self.assertIn(kind, found)
        for text in texts:
            self.assertIn(text, support.texts_in(packaging))
        return packaging

    def zip(self, name, **options):
        return zip_folder(self.workspace, self.class_dir / name, **options)

    # --- names and entries

    def test_student_and_id_come_from_the_entry_name(self):
        for name, expected in (("张三_100006_assignsubmission_file_", ("张三", "100006")),
                               ("Mary_Ann_42_assignsubmission_file_", ("Mary_Ann", "42")),
                               ("张三_100006_assignsubmission_file_张三.zip", ("张三", "100006")),
                               ("李四.zip", ("李四", "")), ("李四.ZIP", ("李四", "")), ("王五", ("王五", "")),
                               ("readme.zip.txt", ("readme.zip.txt", ""))):
            with self.subTest(name=name):
                self.assertEqual(student_and_id(name), expected)

    def test_entries_in_code_point_order_without_os_junk_or_hidden_ones(self):
        for name in ("b", "a", "张三", "Z", "__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini", ".git", "._a"):
            (self.class_dir / name).mkdir()
        self.assertEqual([p.entry.name for p in handed_in(self.class_dir)[0]], ["Z", "a", "b", "张三"])

    def test_a_moodle_online_text_beside_the_file_submission_is_part_of_it(self):
        for name in ("张三_1_assignsubmission_file_", "张三_1_assignsubmission_onlinetext_",
                     "李四_2_assignsubmission_onlinetext_", "张三_9_assignsubmission_onlinetext_"):
            (self.class_dir / name).mkdir()
        flat = ("王五_3_assignsubmission_file_王五.zip", "王五_3_assignsubmission_file_说明.txt",  # without folders
                "王五_3_assignsubmission_onlinetext_onlinetext.html", "赵六_4_assignsubmission_file_说明.txt")
        for name in flat:
            (self.class_dir / name).write_bytes(b"x")
        entries, aside = handed_in(self.class_dir)
        self.assertEqual([p.entry.name for p in entries], ["张三_1_assignsubmission_file_",
                                                           "张三_9_assignsubmission_onlinetext_",
                                                           "李四_2_assignsubmission_onlinetext_",
                                                           "王五_3_assignsubmission_file_王五.zip", flat[3]])
        self.assertEqual({why.kind for _, why in aside}, {"aside_moodle_part"})
        self.assertEqual([(name, why.fields["chosen"]) for name, why in aside],
                         [("张三_1_assignsubmission_onlinetext_", "张三_1_assignsubmission_file_"),
                          (flat[1], flat[0]), (flat[2], flat[0])])

    # --- folders

    def test_a_workspace_up_to_four_folders_down_is_found(self):
        for depth in range(5):
            folder = self.class_dir / f"d{depth}"
            shutil.copytree(self.workspace, folder.joinpath(*[f"level{i}" for i in range(depth)]))
            with self.subTest(depth=depth):
                self.assertEqual(self.take(f"d{depth}"), (None, "/".join(f"level{i}" for i in range(depth)) or "."))
        shutil.copytree(self.workspace, self.class_dir.joinpath("d5", *[f"level{i}" for i in range(5)]))
        self.assertPackaging("d5", ["nothing_found"], "level0")

    def test_two_workspaces_are_packaging_and_only_loop_runs_is_noted(self):
        shutil.copytree(self.workspace, self.class_dir / "two" / "a")
        shutil.copytree(self.workspace, self.class_dir / "two" / "b" / "c")
        packaging = self.assertPackaging("two", ["several_workspaces"], "a/loop-runs", "b/c/loop-runs")
        self.assertEqual(support.fields_of(packaging, "several_workspaces")["count"], 2)
        shutil.copytree(self.workspace / "loop-runs", self.class_dir / "only" / "lesson" / "loop-runs")
        zip_folder(self.workspace / "loop-runs", self.class_dir / "only.zip", top="lesson/loop-runs")
        for name in ("only", "only.zip"):  # packaging once a loop made an attempt: the class check reads the loops
            with self.subTest(name=name), taken_in(self.class_dir / name, self.scratch) as submission:
                self.assertIsNone(submission.packaging)
                self.assertIn("inside", support.kinds_in(submission.without_runs))
                self.assertIn("lesson", support.texts_in(submission.without_runs))
                self.assertFalse((submission.workspace / "runs").exists())

    def test_a_clone_without_evidence_says_gitignore(self):
        clone = self.class_dir / "wang-clone"
        (clone / ".git").mkdir(parents=True)
        (clone / ".gitignore").write_bytes("runs/\nloop-runs/\n".encode("utf-8"))
        (clone / "README.md").write_bytes("# x\n".encode("utf-8"))
        self.assertPackaging("wang-clone", ["nothing_in_git", "git_hint"])
        shutil.copytree(self.workspace / "loop-runs", clone / "loop-runs")  # loop-runs/ added by hand, runs/ still ignored
        with taken_in(clone, self.scratch) as submission:
            self.assertEqual(support.kinds_in(submission.without_runs), ["only_loop_runs", "then", "git_hint"])

    def test_an_unreadable_folder_is_packaging_naming_the_permission(self):
        student = fake_workspace(self.class_dir / "周九")
        real_scandir = os.scandir

        def refuse(path):  # the suite may run as root, who reads every folder whatever its mode
            if Path(path) in (student, student / "loop-runs"):
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)
        with mock.patch("classroom.intake.os.scandir", side_effect=refuse):
            self.assertPackaging("周九", ["folder_unreadable"], "周九")
        with mock.patch("classroom.intake.os.scandir", side_effect=lambda path: refuse(path) if Path(path).name ==
                        "loop-runs" else real_scandir(path)):
            self.assertPackaging("周九", ["evidence_unreadable", "no_permission"], "loop-runs")

    def test_other_entries_are_packaging_or_refused(self):
        (self.class_dir / "名单.txt").write_bytes("x".encode("utf-8"))
        self.assertPackaging("名单.txt", ["entry_not_submission"], "名单.txt", "普通文件")
        try:
            os.symlink(self.workspace, self.class_dir / "linked", target_is_directory=True)
        except (OSError, NotImplementedError):
            return
        with taken_in(self.class_dir / "linked", self.scratch) as submission:
            self.assertEqual(submission.refused.kind, "entry_link")
            self.assertIsNone(submission.workspace)

    # --- ZIPs

    def test_honest_zips_packed_every_way_are_found(self):
        moodle = self.class_dir / "张三_1_assignsubmission_file_"
        moodle.mkdir()
        zip_folder(self.workspace, moodle / "张三.zip")
        macos_junk = [("__MACOSX/lesson/._loop-runs", b"\0"), ("lesson/.DS_Store", b"\0"),
                      ("__MACOSX/lesson/loop-runs/repair-01/._loop.json", b"\0")]
        for name, options, where in (("plain.zip", {}, "."), ("top.zip", {"top": "lesson-14"}, "lesson-14"),
                                     ("powershell.zip", {"separator": "\\", "top": "作业"}, "作业"),
                                     ("gbk.zip", {"encoding": "gbk", "top": "钱七的作业"}, "钱七的作业"),
                                     ("mac.zip", {"top": "lesson", "extra": macos_junk}, "lesson")):
            self.zip(name, **options)
            with self.subTest(name=name):
                self.assertEqual(self.take(name), (None, where))
        self.assertEqual(self.take(moodle.name), (None, "."))
        self.assertEqual(sorted(p.name for p in self.scratch.iterdir()), [])  # every private copy removed
        self.assertEqual(sorted(p.name for p in moodle.iterdir()), ["张三.zip"])  # nothing unpacked beside it

    def test_a_member_outside_absolute_or_linked_refuses_the_whole_zip(self):
        link = RawInfo(b"loop-runs/repair-01/evil", mode=stat.S_IFLNK | 0o777)
        for name, member, why, shown in (("up.zip", "../../outside.txt", "member_outside", "../../outside.txt"),
                                          ("inner-up.zip", "loop-runs/../../x", "member_outside", "loop-runs/../../x"),
                                          ("backslash-up.zip", RawInfo(b"loop-runs\\..\\..\\x"), "member_outside",
                                           "loop-runs/../../x"),
                                          ("absolute.zip", "/etc/cron.d/x", "member_absolute", "/etc/cron.d/x"),
                                          ("drive.zip", RawInfo(b"C:\\Windows\\x"), "member_absolute", "C:/Windows/x"),
                                          ("link.zip", link, "member_link", "loop-runs/repair-01/evil")):
            self.zip(name, extra=[(member, b"/etc/passwd")])
            with self.subTest(name=name):
                self.assertPackaging(name, ["zip_untrusted", "zip_member_outside", why], shown)
        self.assertFalse((self.base / "outside.txt").exists())
        self.assertEqual(list(self.scratch.iterdir()), [])

    def test_a_member_just_over_the_ratio_is_refused_and_one_just_under_it_is_read(self):
        noise = random.Random(14).randbytes  # incompressible: with a MiB of zeros it sets how far a member deflates
        for name, data, over in (("over.zip", noise(6000) + bytes(2 ** 20), True),
                                 ("under.zip", noise(12000) + bytes(2 ** 20), False)):
            with self.subTest(name=name):
                with zipfile.ZipFile(self.zip(name, extra=[("loop-runs/repair-01/notes.bin", data)])) as archive:
                    info = next(i for i in archive.infolist() if i.filename.endswith("notes.bin"))
                self.assertEqual(info.file_size > 100 * info.compress_size, over)  # the rule: at most 100 times
                self.assertLess(info.file_size, 200 * info.compress_size)  # and near it on either side
                self.assertGreater(info.file_size, 50 * info.compress_size)
                if over:
                    self.assertPackaging(name, ["zip_member", "member_ratio"], "loop-runs/repair-01/notes.bin")
                else:
                    self.assertEqual(self.take(name)[0], None)

    def test_bombs_passwords_and_broken_zips_are_packaging_not_crashes(self):
        self.zip("bomb.zip", extra=[("loop-runs/repair-01/big.bin", bytes(3 * 2 ** 20))])
        bomb = self.assertPackaging("bomb.zip", ["zip_member", "member_ratio"], "loop-runs/repair-01/big.bin")
        self.assertEqual(support.fields_of(bomb, "member_ratio")["most"], 100)
        self.zip("secret.zip", extra=[(RawInfo(b"loop-runs/x.txt", flags=0x1), b"x")])
        self.assertPackaging("secret.zip", ["zip_member", "member_encrypted"], "loop-runs/x.txt")
        data = self.zip("whole.zip").read_bytes()
        (self.class_dir / "cut.zip").write_bytes(data[:len(data) // 2])
        self.assertPackaging("cut.zip", ["zip_untrusted", "zip_broken"], "cut.zip")
        (self.class_dir / "text.zip").write_bytes("not a zip".encode("utf-8"))
        self.assertPackaging("text.zip", ["zip_broken"])
        self.zip("clash.zip", extra=[("runs/x", b"a file"), ("runs/x/y", b"and a file inside it")])
        self.assertPackaging("clash.zip", ["zip_member_unextracted"], "runs/x/y")
        self.zip("twice.zip", extra=[("loop-runs/repair-01/LOOP.json", b"{}")])
        self.assertPackaging("twice.zip", ["zip_same_name"], "loop-runs/repair-01/LOOP.json")
        with mock.patch.object(class_intake, "MAX_MEMBERS", 1):
            whole = self.assertPackaging("whole.zip", ["zip_members"])
            self.assertEqual(support.fields_of(whole, "zip_members"), {"count": 2, "cap": 1})
        end = data.rindex(b"PK\x05\x06")  # an end record announcing 60,000 members: never handed to zipfile
        (self.class_dir / "many.zip").write_bytes(data[:end + 8] + (60000).to_bytes(2, "little") * 2 + data[end + 12:])
        with mock.patch("classroom.intake.zipfile.ZipFile", side_effect=AssertionError("read")):
            many = self.assertPackaging("many.zip", ["zip_members"])
            self.assertEqual(support.fields_of(many, "zip_members"), {"count": 60000, "cap": 10000})
        zip64 = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 60000, 60000,
                            *struct.unpack_from("<II", data, end + 12))  # the directory's size and offset
        locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, end, 1)  # the classic record understates, zip64 tells
        (self.class_dir / "many64.zip").write_bytes(data[:end] + zip64 + locator + data[end:])
        with mock.patch("classroom.intake.zipfile.ZipFile", side_effect=AssertionError("read")):
            many = self.assertPackaging("many64.zip", ["zip_members"])
            self.assertEqual(support.fields_of(many, "zip_members"), {"count": 60000, "cap": 10000})
        with mock.patch.object(class_intake, "MAX_UNPACKED", 5):
            self.assertPackaging("whole.zip", ["zip_unpacked"])

    def test_a_crc_error_in_a_member_is_packaging(self):
        path = self.class_dir / "crc.zip"
        with zipfile.ZipFile(path, "w") as archive:  # stored: the member's bytes can be changed in place
            archive.writestr("loop-runs/repair-01/loop.json", b"{}\n")
            archive.writestr("runs/repair-01-01/run.json", b"{}\n")
        data = path.read_bytes()
        path.write_bytes(data.replace(b"{}\n", b"[]\n", 1))
        self.assertPackaging("crc.zip", ["zip_member_broken"], "loop-runs/repair-01/loop.json")

    def test_a_zip_without_loop_runs_names_each_top_folder_once(self):
        """`python3 -m zipfile -c` and most tools store a folder's own entry beside its files: one name each."""
        with zipfile.ZipFile(self.class_dir / "下载.zip", "w") as archive:
            archive.writestr("张三_1_assignsubmission_file_/", b"")
            archive.writestr("张三_1_assignsubmission_file_/张三.zip", b"x")
            archive.writestr("说明.txt", b"x")
        packaging = self.assertPackaging("下载.zip", ["zip_no_workspace", "names"])
        self.assertEqual(support.fields_of(packaging, "names")["names"], ["张三_1_assignsubmission_file_/", "说明.txt"])

    def test_a_folder_with_two_zips_names_them(self):
        folder = self.class_dir / "李四_2_assignsubmission_file_"
        folder.mkdir()
        zip_folder(self.workspace, folder / "a.zip")
        zip_folder(self.workspace, folder / "b.zip")
        packaging = self.assertPackaging(folder.name, ["several_zips"])
        self.assertEqual(support.fields_of(packaging, "several_zips"), {"count": 2, "names": ["a.zip", "b.zip"]})

    @support.not_on_windows("没有命名管道（FIFO）")
    def test_a_fifo_named_like_a_zip_is_never_opened(self):
        os.mkfifo(self.class_dir / "pipe.zip")
        self.assertPackaging("pipe.zip", ["entry_not_submission"], "pipe.zip")
