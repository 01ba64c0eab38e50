"""Tests of `verify_loop.py --class`: a class handed in every way a platform, a student or an attacker would.

The loops are made once in a copy of the workspace (loop_lab in-process); every student gets
a copy of them with fresh record identifiers (as if each had run the lesson), then the class folder is built
(once in a run of the suite, then copied into each test class's own copy of the workspace):
honest workspaces packed every way (a per-student ZIP, Moodle's folder holding the ZIP, Explorer's "Extract
All" nesting, an extra top folder, PowerShell's `\\`, GBK names, a macOS ZIP, the `--pack` ZIP), packaging
mistakes (only loop-runs/, a clone whose evidence .gitignore left out), hostile ZIPs (a `../` member, an
absolute one, a link, a bomb, a password, a cut-off file), damaged work (a missing case, a naive status edit,
an edited course file, a killed loop, a 5 MB reason), copies (byte-identical, renamed, inside one submission)
and names that try to fake a row or a formula. The check runs once, in-process, over that class; each test
reads what it printed and wrote. The intake's own cases are in tests/test_class_intake.py.
cut_short() is tested in tests/test_class_cut_short.py, the report's escaping in tests/test_class_escaping.py.
"""
import atexit
import contextlib
import csv
import io
import itertools
import json
import os
import re
import secrets
import shutil
import string
import tempfile
import zipfile
from pathlib import Path
from unittest import mock

from classroom import check as class_check
from classroom import releases
from classroom import report as class_report
from classroom.intake import student_and_id
import cli
import loop_lab
import verify_loop
from cli import visible
from tests.support import _FAST_TEMP, assert_found
from verifier import findings
from tests.test_class_intake import RawInfo, zip_folder
from tests.test_loop_lab import SharedWorkspaceTestCase

SIX_CASES = ["repair", "stuck", "repair --max-attempts 1", "repair --max-seconds 0", "semantic", "permission"]
HONEST = (("repair-01", "repair", {}), ("stuck-01", "stuck", {}), ("budget-01", "repair", {"max_attempts": 1}),
          ("time-01", "repair", {"max_seconds": 0}), ("semantic-01", "semantic", {}),
          ("permission-01", "permission", {}))
ODD_NAME = "甲|<b>乙<i>\n| 丙 | pass | `x` |"
EXPECTED = {  # student (from the entry's name) -> result
    "张三": "pass", "李四": "pass", "王五": "pass", "赵六": "pass", "钱七": "pass", "孙八": "pass", "周九": "pass",
    "吴十": "pass", "郑冬": "packaging", "冯春": "packaging", "陈夏": "packaging", "褚秋": "packaging",
    "卫东": "packaging", "蒋南": "packaging", "沈西": "packaging", "韩北": "packaging",
    "朱松": "incomplete", "秦竹": "fail", "许梅": "fail", "何兰": "needs_human", "吕菊": "needs_human",
    "施桃": "needs_human", "孔杏": "needs_human", "曹莲": "needs_human", "严荷": "fail", "作业.rar": "packaging",
    "=1+1": "pass", ODD_NAME: "pass", "尤夏": "incomplete", "尤秋": "incomplete",
}
CHILDLESS = (("permission-01", "permission", {}), ("time-01", "repair", {"max_seconds": 0}))  # no child run, no runs/
IDS = {"张三": "100001", "王五": "100003"}
# RealClassTestCase's records and class folder, built by the first class of tests that needs them and copied for
# the others (the build runs a dozen loops): {"folder": where they are kept, "odd_names": the names made}
BUILT = {}
STUDENT_NUMBERS = itertools.count(1)


def in_process(root, *args, cwd=None, checked=None):
    """verify_loop.main(ARGS) in-process, from CWD (default ROOT), with ROOT as the teacher's workspace; CHECKED, a
    list, gets the class check's Checked submissions (each row's reasons as findings)."""
    out, err = io.StringIO(), io.StringIO()
    check_all = class_check.check_all

    def kept(*given):
        found = check_all(*given)
        checked.extend(found)
        return found
    with contextlib.chdir(cwd or root), mock.patch.object(class_check, "HERE", Path(root)), \
            mock.patch.object(class_check, "check_all", kept if checked is not None else check_all), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = verify_loop.main(list(args))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def fresh_ids(folder):
    """Gives every record under FOLDER an identifier of its own, and its monotonic readings a few milliseconds
    more (the same for each, as another machine's run would differ): a copy then looks like another student's run."""
    later = next(STUDENT_NUMBERS) / 1000
    for path in [*Path(folder).glob("loop-runs/*/loop.json"), *Path(folder).glob("runs/*/run.json")]:
        record = json.loads(path.read_text(encoding="utf-8"))
        if not record.get("id"):
            continue
        record["id"] = secrets.token_hex(16)
        for entry, field in [(record, "elapsed_seconds"),  # a child's duration is a span: it stays
                             *((segment, "elapsed_seconds") for segment in record.get("segments", [])),
                             *((attempt["decision"], "decided_offset") for attempt in record.get("attempts", [])
                               if attempt.get("decision")),
                             *((attempt, field) for attempt in record.get("attempts", [])
                               for field in ("started_offset", "finished_offset"))]:
            if type(entry.get(field)) in (int, float):
                entry[field] = round(entry[field] + later, 3)
        path.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def remove_loop(student, name):
    shutil.rmtree(student / "loop-runs" / name)
    for child in (student / "runs").glob(f"{name}-??"):
        shutil.rmtree(child)


def forge(path, change):
    record = json.loads(path.read_text(encoding="utf-8"))
    change(record)
    path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))


def rename_loops(folder):
    """Every loop and run renamed (repair-01 -> mine-repair-01 ...), inside the records too."""
    names = sorted(path.name for path in (folder / "loop-runs").iterdir())
    for path in sorted((folder / "loop-runs").glob("*/loop.json")) + sorted((folder / "runs").glob("*/run.json")):
        text = path.read_text(encoding="utf-8")
        for name in names:
            text = text.replace(f'"{name}', f'"mine-{name}').replace(f"/{name}", f"/mine-{name}")
        path.write_bytes(text.encode("utf-8"))
    for top in ("loop-runs", "runs"):
        for path in sorted((folder / top).iterdir()):
            path.rename(path.with_name("mine-" + path.name))


class RealClassTestCase(SharedWorkspaceTestCase):
    """A class of real submissions (honest ones packed every way, packaging mistakes, hostile ZIPs, damaged work,
    copies, odd names) checked once, in-process, with the outputs OUTPUTS names; its tests read what it wrote."""
    OUTPUTS = ("--report", "全班.md", "--csv", "全班.csv", "--feedback", "反馈")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.made, cls.class_dir = cls.root / "made", cls.root / "交作业"
        if BUILT:  # another class of tests built it already: the same records and class, copied
            for folder in (cls.made, cls.class_dir):
                shutil.copytree(BUILT["folder"] / folder.name, folder, symlinks=True)
            cls.odd_names = list(BUILT["odd_names"])
        else:
            cls.build_records_and_class()
        cls.checked = []
        cls.code, cls.stdout, cls.stderr = in_process(cls.root, "--class", "交作业", *cls.OUTPUTS, checked=cls.checked)

    @classmethod
    def build_records_and_class(cls):
        """The records made, the class folder built, and both kept aside in BUILT for the next class of tests."""
        made = cls.made
        cls.make_records(made / "honest", HONEST, pack=made / "packed.zip")
        cls.make_records(made / "stopped", (("repair-02", "repair", {"run_child": broken_disk}),))
        sample = cls.root / "samples" / "semantic.json"
        original = sample.read_bytes()
        sample.write_bytes(original + b"\n")  # an edit that changes nothing the loop decides by
        cls.make_records(made / "edited", (("repair-01", "repair", {}), ("semantic-01", "semantic", {}),
                                           ("permission-01", "permission", {})))
        sample.write_bytes(original)
        cls.make_records(made / "childless", CHILDLESS, pack=made / "childless.zip")
        cls.build_class()
        kept = Path(tempfile.mkdtemp(prefix="lesson14-class-", dir=_FAST_TEMP))
        atexit.register(shutil.rmtree, kept, ignore_errors=True)
        for folder in (cls.made, cls.class_dir):
            shutil.copytree(folder, kept / folder.name, symlinks=True)
        BUILT.update(folder=kept, odd_names=list(cls.odd_names))

    @classmethod
    def make_records(cls, destination, loops, pack=None):
        """Runs LOOPS in the copy (and packs them with --pack when PACK is given), then moves the records away."""
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            for name, scenario, options in loops:
                loop_lab.run_loop(cls.root, name, scenario, **options)
            if pack is not None:
                from classroom import hand_in
                pack.parent.mkdir(parents=True, exist_ok=True)
                with mock.patch.object(class_check, "HERE", cls.root):
                    hand_in.pack(cli.ChineseArgumentParser(), str(pack), root=cls.root)
        destination.mkdir(parents=True)
        for folder in ("loop-runs", "runs"):
            (cls.root / folder).mkdir(exist_ok=True)  # a loop stopped before its first child made no runs/
            shutil.move(cls.root / folder, destination / folder)

    @classmethod
    def student(cls, path, source="honest"):
        """A copy of the records SOURCE at PATH, with identifiers of its own."""
        shutil.copytree(cls.made / source, path)
        fresh_ids(path)
        return path

    @classmethod
    def zipped(cls, name, **options):
        """An honest student's workspace as the ZIP NAME in the class folder."""
        folder = cls.student(cls.root / "zipping" / name)
        return zip_folder(folder, cls.class_dir / name, **options)

    @classmethod
    def build_class(cls):
        cd, made = cls.class_dir, cls.made
        (cd / "张三_100001_assignsubmission_file_").mkdir(parents=True)
        zip_folder(cls.student(cls.root / "zipping" / "张三"), cd / "张三_100001_assignsubmission_file_" / "张三.zip")
        (cd / "张三_100001_assignsubmission_onlinetext_").mkdir()  # Moodle's folder of the same submission's text
        (cd / "张三_100001_assignsubmission_onlinetext_" / "onlinetext.html").write_bytes("<p>已交</p>".encode("utf-8"))
        cls.zipped("李四.zip")
        cls.student(cd / "王五_100003_assignsubmission_file_" / "王五" / "王五")  # Explorer's Extract All
        cls.zipped("赵六.zip", top="lesson-14")
        cls.zipped("钱七.zip", top="作业", separator="\\")  # PowerShell's Compress-Archive
        cls.zipped("孙八.zip", top="孙八的作业", encoding="gbk")  # Chinese Windows, no UTF-8 flag
        cls.zipped("周九.zip", top="lesson", extra=[("__MACOSX/lesson/._loop-runs", b"\0"), ("lesson/.DS_Store", b"\0")])
        if (made / "packed.zip").exists():
            shutil.copy(made / "packed.zip", cd / "吴十.zip")
        else:  # without the hand-in the same ZIP is made by hand
            cls.zipped("吴十.zip")
        cls.student(cd / "郑冬" / "lesson-14")
        shutil.rmtree(cd / "郑冬" / "lesson-14" / "runs")  # zipped loop-runs/ only
        (cd / "冯春" / ".git").mkdir(parents=True)  # a clone whose evidence .gitignore left out
        (cd / "冯春" / ".gitignore").write_bytes("runs/\nloop-runs/\n".encode("utf-8"))
        (cd / "冯春" / "README.md").write_bytes("# 工作区\n".encode("utf-8"))
        for name, member in (("陈夏.zip", "../../outside.txt"), ("褚秋.zip", "/etc/passwd"),
                             ("卫东.zip", RawInfo(b"loop-runs/repair-01/evil", mode=0o120777))):
            cls.zipped(name, extra=[(member, b"/etc/shadow")])
        cls.zipped("蒋南.zip", extra=[("runs/big.bin", bytes(3 * 2 ** 20))])  # a ZIP bomb, small
        cls.zipped("沈西.zip", extra=[(RawInfo(b"runs/secret.txt", flags=0x1), b"x")])
        whole = cls.zipped("韩北.zip").read_bytes()
        (cd / "韩北.zip").write_bytes(whole[:len(whole) // 2])  # cut off in the download
        remove_loop(cls.student(cd / "朱松"), "stuck-01")
        forge(cls.student(cd / "秦竹") / "loop-runs" / "stuck-01" / "loop.json",  # a naive status edit
              lambda record: record.update(status="needs_review", reason="mechanical_pass"))
        xu = cls.student(cd / "许梅")
        for name in ("repair-01", "semantic-01", "permission-01"):
            remove_loop(xu, name)
        shutil.copytree(made / "edited", xu, dirs_exist_ok=True)
        shutil.copytree(made / "stopped", cls.student(cd / "何兰"), dirs_exist_ok=True)
        cls.student(cd / "吕菊")
        shutil.copytree(cd / "吕菊", cd / "施桃")  # a byte-identical copy
        cls.student(cd / "孔杏")
        shutil.copytree(cd / "孔杏", cd / "曹莲")
        rename_loops(cd / "曹莲")  # every loop and run renamed
        forge(cls.student(cd / "严荷") / "loop-runs" / "stuck-01" / "loop.json",
              lambda record: record.update(reason="x" * 5_000_000))
        cls.odd_names = []
        for name in ("=1+1", ODD_NAME):
            try:
                cls.student(cd / name)
                cls.odd_names.append(name)
            except OSError:  # Windows refuses | < > and a newline in a name
                shutil.rmtree(cd / name, ignore_errors=True)
        (cd / "名单.txt").write_bytes("张三\n".encode("utf-8"))  # the teacher's list: set aside, no row
        (cd / "作业.rar").write_bytes(b"Rar!\x1a\x07\x00")  # an archive the check cannot open: a packaging row
        if (made / "childless.zip").exists():  # the hand-in of loops that made no child run holds no runs/
            shutil.copy(made / "childless.zip", cd / "尤夏.zip")
        else:
            zip_folder(made / "childless" / "loop-runs", cd / "尤夏.zip", top="loop-runs")
        shutil.rmtree(cls.student(cd / "尤秋", "childless") / "runs")  # a clone: git keeps no empty folder
        (cd / ".DS_Store").write_bytes(b"\0")
        (cd / "__MACOSX" / "张三").mkdir(parents=True)

    def lines(self):
        return [json.loads(line) for line in self.stdout.splitlines()]

    def expected(self):
        return {name: result for name, result in EXPECTED.items()
                if name not in ("=1+1", ODD_NAME) or name in self.odd_names}

    def row(self, student):
        return next(line for line in self.lines() if line["student"] == student)

    def reasons(self, student):
        """The findings of STUDENT's reasons, in the row's order (the cause of each)."""
        return [reason.finding for item in self.checked if item.row["student"] == student for reason in item.reasons]


class ClassCheckTest(RealClassTestCase):
    def test_every_entry_is_one_row_in_code_point_order(self):
        lines = self.lines()
        self.assertEqual({line["student"]: line["result"] for line in lines}, self.expected())
        entries = sorted(path.name for path in self.class_dir.iterdir()
                         if path.name not in (".DS_Store", "__MACOSX", "名单.txt") and "onlinetext" not in path.name)
        self.assertEqual([line["student"] for line in lines],
                         [student_and_id(name)[0] for name in entries])
        for line in lines:
            self.assertEqual(list(line), ["student", "id", "result", "cases", "loops", "problems", "kinds"])
            self.assertEqual(len(line["kinds"]), len(line["problems"]))
            self.assertEqual(list(line["cases"]), SIX_CASES)
            self.assertEqual(line["id"], IDS.get(line["student"], ""))
        self.assertEqual(self.code, 1)

    def test_totals_count_every_entry(self):
        counts = {result: list(self.expected().values()).count(result) for result in class_report.RESULTS}
        self.assertEqual(self.stderr.splitlines()[-1], f"全班 {len(self.expected())} 人：pass {counts['pass']}，incomplete "
                         f"{counts['incomplete']}，fail {counts['fail']}，needs_human {counts['needs_human']}，"
                         f"packaging {counts['packaging']}。")
        self.assertNotIn("Traceback", self.stderr)

    def test_honest_work_packed_every_way_passes_with_six_cases(self):
        for student in ("张三", "李四", "王五", "赵六", "钱七", "孙八", "周九", "吴十"):
            with self.subTest(student=student):
                row = self.row(student)
                self.assertEqual((row["cases"], row["loops"], row["problems"]),
                                 (dict.fromkeys(SIX_CASES, "pass"), 6, []))
        self.assertFalse((self.root / "outside.txt").exists() or (self.root.parent / "outside.txt").exists())
        for zipped in self.class_dir.glob("*.zip"):  # nothing was unpacked beside a ZIP
            self.assertEqual(list(self.class_dir.glob(zipped.stem + "/*")), [])

    def test_packaging_names_what_was_found_and_never_accuses(self):
        said = {"郑冬": ("only_loop_runs", "lesson-14"), "冯春": ("nothing_in_git",),
                "陈夏": ("member_outside", "../../outside.txt"), "褚秋": ("member_absolute", "/etc/passwd"),
                "卫东": ("member_link", "loop-runs/repair-01/evil"), "蒋南": ("member_ratio", "runs/big.bin"),
                "沈西": ("member_encrypted", "runs/secret.txt"), "韩北": ("zip_broken", "韩北.zip"),
                "作业.rar": ("entry_not_submission", "作业.rar")}
        for student, expected in said.items():
            with self.subTest(student=student):
                self.assertEqual(self.row(student)["kinds"], ["packaging"])
                (finding,) = self.reasons(student)
                assert_found(self, finding, *expected)
                self.assertNotRegex(self.row(student)["problems"][0], "伪造|作弊|篡改|改动过")  # the words: never accuse

    def test_no_runs_folder_is_complete_when_no_loop_made_an_attempt(self):
        for student in ("尤夏", "尤秋"):
            with self.subTest(student=student):
                row = self.row(student)
                self.assertEqual((row["loops"], row["cases"]["permission"], row["cases"]["repair --max-seconds 0"]),
                                 (2, "pass", "pass"))
                self.assertEqual(row["kinds"], ["missing_cases"], row["problems"])
                self.assertEqual(self.reasons(student)[0].fields["cases"][0], "repair")

    def test_a_moodle_online_text_is_part_of_the_file_submission(self):
        self.assertEqual([line["student"] for line in self.lines()].count("张三"), 1)
        said = findings.Finding("set_aside", entry="交作业/张三_100001_assignsubmission_onlinetext_",
                                why=findings.Finding("aside_moodle_part", chosen="张三_100001_assignsubmission_file_"))
        self.assertIn(said.sentence(), self.stderr.splitlines())
        report = (self.root / "全班.md").read_text(encoding="utf-8")
        self.assertIn(" `交作业/张三_100001_assignsubmission_onlinetext_`", report)
        feedback = (self.root / "反馈" / "张三.md").read_text(encoding="utf-8")
        self.assertEqual(feedback.count("\n## "), 1, feedback)
        self.assertNotIn("packaging", feedback)

    def test_a_status_edit_is_said_first_as_contradicting_the_evidence(self):
        qin = self.row("秦竹")
        self.assertEqual(qin["cases"]["stuck"], "fail")
        self.assertEqual(qin["kinds"][0], "stop_contradicted")
        self.assertTrue(qin["problems"][0].startswith("loop-runs/stuck-01"), qin["problems"])

    def test_an_edited_course_file_is_one_reason_with_the_loops_it_touches(self):
        xu = self.row("许梅")
        self.assertEqual(xu["kinds"], ["course_files_differ"], xu["problems"])
        fields = self.reasons("许梅")[0].fields
        self.assertEqual((fields["files"], fields["count"], fields["runs"]),
                         (["samples/semantic.json"], 3, ["permission-01", "repair-01", "semantic-01"]))
        self.assertNotIn("课程版本", self.stderr)  # one student's edit is no other version of the course

    def test_copies_are_named_with_whom_and_need_a_person(self):
        for student, other in (("吕菊", "施桃"), ("施桃", "吕菊"), ("孔杏", "曹莲"), ("曹莲", "孔杏")):
            with self.subTest(student=student):
                copies = [finding for finding in self.reasons(student) if finding.kind == "shared_record"]
                self.assertEqual([copy.fields["people"].fields["names"] for copy in copies], [[other]])
        self.assertEqual(self.row("吕菊")["result"], "needs_human")  # never a fail by itself
        self.assertEqual(self.row("张三")["kinds"], [])

    def test_a_copy_inside_one_submission_is_named(self):
        yan = self.root / "inside"
        self.student(yan / "尤一")
        shutil.copytree(yan / "尤一" / "loop-runs" / "repair-01", yan / "尤一" / "loop-runs" / "repair-09")
        row = class_check.workspace_row(yan / "尤一", "尤一", course=class_check.TeacherCourse(self.root))
        self.assertEqual(row["result"], "needs_human", row)  # a byte copy of a folder: named, never a forgery
        copy = findings.Finding("loop_copy", folder="loop-runs/repair-09", original="loop-runs/repair-01")
        self.assertEqual([(kind, problem) for kind, problem in zip(row["kinds"], row["problems"])
                          if "repair-09" in problem],
                         [("loop_copy", findings.Finding("in_loop", loop="loop-runs/repair-09",
                                                         finding=copy).sentence())])
        text = json.loads((yan / "尤一" / "loop-runs" / "repair-09" / "loop.json").read_text(encoding="utf-8"))
        text["semantic_review"] = "approved"  # no longer a byte copy: a renamed, edited record fails as ever
        forge(yan / "尤一" / "loop-runs" / "repair-09" / "loop.json", lambda rec: rec.update(text))
        row = class_check.workspace_row(yan / "尤一", "尤一", course=class_check.TeacherCourse(self.root))
        self.assertEqual(row["result"], "fail", row)
        inside = [problem for kind, problem in zip(row["kinds"], row["problems"]) if kind == "copy_inside"]
        self.assertEqual(len(inside), 1, row["problems"])
        pair = findings.Finding("pair", first="loop-runs/repair-01/loop.json", second="loop-runs/repair-09/loop.json")
        self.assertIn(pair.sentence(), inside[0])

    def test_a_stopped_loop_needs_a_person_and_a_missing_case_is_said(self):
        he = self.row("何兰")
        self.assertEqual((he["cases"]["repair"], he["loops"]), ("pass", 7))
        self.assertTrue(all(problem.startswith("loop-runs/repair-02") for problem in he["problems"]), he["problems"])
        self.assertEqual([(finding.kind, finding.fields) for finding in self.reasons("朱松")],
                         [("missing_case", {"cases": ["stuck"]})])

    def test_a_huge_reason_is_cut_everywhere(self):
        self.assertLess(max(map(len, self.stdout.splitlines())), 20_000)
        self.assertLess(len(self.stderr), 100_000)
        self.assertLess((self.root / "全班.md").stat().st_size, 200_000)
        self.assertLess((self.root / "反馈" / "严荷.md").stat().st_size, 20_000)

    def test_names_cannot_fake_a_row_a_tag_or_a_formula(self):
        if ODD_NAME not in self.odd_names:
            self.skipTest("这个系统不允许这样的文件夹名")
        escaped = "| 甲\\|<b>乙<i>\\n\\| 丙 \\| pass \\| `x` \\| |  | pass |"
        self.assertIn(escaped, self.stderr)
        self.assertNotIn("\n| 丙 |", self.stderr)
        report = (self.root / "全班.md").read_text(encoding="utf-8")
        self.assertIn("| 甲\\|\\<b\\>乙\\<i\\>\\\\n\\| 丙 \\| pass \\| \\`x\\` \\| |  | pass |", report)
        outside_code = [line for line in report.splitlines() if not line.startswith("提交：``")]  # code shows a tag
        self.assertNotIn("<b>", "\n".join(outside_code))
        self.assertIn("提交：``交作业/甲|<b>乙<i>\\n| 丙 | pass | `x` |``（文件夹）。", report)
        self.assertNotIn("\n| 丙 |", report)
        rows = list(csv.reader(io.StringIO((self.root / "全班.csv").read_text(encoding="utf-8-sig"))))
        self.assertIn("'=1+1", [row[0] for row in rows])
        self.assertIn(ODD_NAME.replace("\n", "\\n"), [row[0] for row in rows])

    def test_csv_has_id_and_problems_one_row_per_entry(self):
        data = (self.root / "全班.csv").read_bytes()
        self.assertTrue(data.startswith(b"\xef\xbb\xbf"))
        self.assertEqual(data.count(b"\r\n"), len(self.expected()) + 1)
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
        self.assertEqual(rows[0], ["student", "id", "result", *SIX_CASES, "loops", "problems", "kinds"])
        self.assertEqual(len(rows), len(self.expected()) + 1)
        self.assertIn(["张三", "100001", "pass", *["pass"] * 6, "6", "", ""], rows)
        zhu = next(row for row in rows if row[0] == "朱松")
        self.assertEqual(zhu[:3] + [zhu[-3], zhu[-1]], ["朱松", "", "incomplete", "5", "missing_case"])
        self.assertEqual(zhu[-2].rstrip("。"), self.row("朱松")["problems"][0].rstrip("。"))
        for row, line in zip(rows[1:], self.lines(), strict=True):  # one kind for each reason, in their order
            self.assertEqual(len(row[-1].split()), len(line["problems"]), row)

    def test_every_sentence_comes_from_the_table_and_rewording_it_changes_no_row(self):
        """Every sentence of the table made a marker naming its kind and fields: each reason and note of every row
        is then a marker (cut after 500 characters where a huge record made it so), and every row's result, cases,
        loops, number of reasons and their kinds are what the real words gave."""
        def marker(template):
            named = [(name, spec) for _, name, spec, _ in string.Formatter().parse(template) if name]
            return "⟦" + "".join(f" {{{name}{':' + spec if spec else ''}}}" for name, spec in named) + "⟧"
        marked = {kind: (entry[0], *(f"{kind}:{marker(text)}" for text in entry[1:]))
                  for kind, entry in findings.SENTENCES.items()}
        for path in ("全班-标记.csv",):
            (self.root / path).unlink(missing_ok=True)
        with mock.patch.dict(findings.SENTENCES, marked):
            code, stdout, _ = in_process(self.root, "--class", "交作业", "--csv", "全班-标记.csv")
        rows = [json.loads(line) for line in stdout.splitlines()]
        cut = re.compile(r"…（共 [0-9]+ 个字符）$")
        for row, before in zip(rows, self.lines(), strict=True):
            with self.subTest(student=row["student"]):
                self.assertEqual([row[key] for key in ("student", "result", "cases", "loops")],
                                 [before[key] for key in ("student", "result", "cases", "loops")])
                self.assertEqual(len(row["problems"]), len(before["problems"]))
                for said in row["problems"] + row.get("notes", []):
                    self.assertRegex(cut.sub("⟧", said), r"^[a-z_0-9]+:⟦.*⟧$")
        self.assertEqual(code, self.code)
        marked_kinds = [row[-1] for row in csv.reader(io.StringIO((self.root / "全班-标记.csv").read_text("utf-8-sig")))]
        self.assertEqual(marked_kinds, [row[-1] for row in csv.reader(io.StringIO(
            (self.root / "全班.csv").read_text("utf-8-sig")))])

    def test_the_report_shows_each_submission_with_paths_inside_it(self):
        report = (self.root / "全班.md").read_text(encoding="utf-8").splitlines()
        self.assertEqual(report[0], "# 全班核对：交作业")
        self.assertIn("## 张三（学号 100001）：pass", report)
        self.assertIn("提交：`交作业/赵六.zip`（压缩包），工作区在其中的 `lesson-14`。", report)
        self.assertIn("提交：`交作业/张三_100001_assignsubmission_file_`（文件夹里的压缩包 张三.zip）。", report)
        qin = report.index("## 秦竹：fail")
        self.assertTrue(report[qin + 4].startswith("- loop-runs/stuck-01") and report[qin + 4].endswith(
            " `stop_contradicted`"), report[qin + 4])
        self.assertTrue(any(line.startswith("- `loop-runs/stuck-01`（stuck）：fail；查看 `loop-runs/stuck-01`、"
                                            "`runs/stuck-01-01`") for line in report[qin:]))

    def test_every_submission_gets_feedback_about_itself_only(self):
        folder = self.root / "反馈"
        by_student = {(row["student"], row["id"]): row for row in self.lines()}
        names = class_report.feedback_names(by_student)
        self.assertEqual(sorted(p.name for p in folder.iterdir()), sorted(names.values()))
        for (student, _), row in by_student.items():
            with self.subTest(student=student):
                text = (folder / names[student, row["id"]]).read_text(encoding="utf-8")
                self.assertTrue(text.startswith(f"# 作业核对反馈："))
                self.assertIn(f"：{row['result']}\n", text)
                self.assertIn("下一步：" + class_report.NEXT_STEP[row["result"]], text)
                others = [name for name in EXPECTED if name != student and len(name) > 1 and name.isalpha()]
                self.assertEqual([name for name in others if name in text], [])
                self.assertNotIn("交作业/", text)
        copy = next(finding for finding in self.reasons("吕菊") if finding.kind == "shared_record")
        self.assertIn(visible(copy.sentence(student=True)), (folder / "吕菊.md").read_text(encoding="utf-8"))
        self.assertNotIn("施桃", copy.sentence(student=True))

    def test_the_hand_in_row_is_the_teachers_row(self):
        packed = self.made / "packed.zip"
        with zipfile.ZipFile(packed) as archive:
            row = json.loads(archive.read("hand-in.json"))["row"]
        self.assertEqual({**row, "student": "吴十"}, self.row("吴十"))


class ClassOutputsTest(SharedWorkspaceTestCase):
    """Where the reports may go, and what a small class prints; one honest student made once."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        ClassCheckTest.make_records.__func__(cls, cls.root / "made" / "honest", HONEST)
        cls.made = cls.root / "made"
        ClassCheckTest.student.__func__(cls, cls.root / "good" / "张三")

    def run_class(self, *args, cwd=None):
        return in_process(self.root, *args, cwd=cwd)

    def test_a_class_that_all_passes_exits_0_and_replaces_its_own_earlier_outputs(self):
        args = ("--class", "good", "--report", "old.md", "--csv", "old.csv", "--feedback", "old")
        self.assertEqual(self.run_class(*args)[0], 0)
        for path in (self.root / "old.md", self.root / "old.csv", self.root / "old" / "张三.md"):
            path.write_bytes(path.read_bytes() + b"\n(edited)\n")
        code, stdout, stderr = self.run_class(*args)
        self.assertEqual(code, 0, stderr)
        self.assertEqual(len(stdout.splitlines()), 1)
        self.assertTrue((self.root / "old.md").read_text(encoding="utf-8").startswith("# 全班核对：good\n"))
        self.assertNotIn("(edited)", (self.root / "old" / "张三.md").read_text(encoding="utf-8"))
        self.assertEqual(sorted(p.name for p in self.root.glob("*old*")), ["old", "old.csv", "old.md"])  # no leftovers
        self.assertIn("全班 1 人：pass 1，incomplete 0，fail 0，needs_human 0，packaging 0。", stderr)

    def test_targets_inside_the_class_links_and_other_files_are_refused_and_nothing_is_written(self):
        readme = (self.root / "README.md").read_bytes()
        (self.root / "notes.csv").write_bytes("student,result\n".encode("utf-8"))
        (self.root / "fb").mkdir()
        (self.root / "fb" / "张三.md").write_bytes("老师自己的笔记\n".encode("utf-8"))
        linked = self.root / "linked.md"
        with contextlib.suppress(OSError, NotImplementedError):  # Windows without the privilege
            os.symlink(self.root / "AGENTS.md", linked)
        refused = [(("--report", "good/r.md"), "在提交目录 good 里面"),
                   (("--csv", "good/张三/loop-runs/c.csv"), "在提交目录 good 里面"),
                   (("--feedback", "good/反馈"), "在提交目录 good 里面"),
                   (("--report", "README.md"), "README.md 已经存在，而且不是这个核对以前写出的报告"),
                   (("--csv", "notes.csv"), "notes.csv 已经存在，而且不是这个核对以前写出的CSV"),
                   (("--report", "全班.csv"), None), (("--feedback", "fb"), "fb/张三.md 已经存在"),
                   (("--report", "samples"), "是一个文件夹"), (("--csv", "no/such/x.csv"), "所在的文件夹不存在"),
                   (("--report", "same.txt", "--csv", "same.txt"), "不能是同一个文件")]
        if linked.is_symlink():
            refused.append((("--report", "linked.md"), "linked.md 是一个链接"))
        for args, said in refused:
            with self.subTest(args=args):
                code, stdout, stderr = self.run_class("--class", "good", *args)
                if said is None:
                    self.assertEqual(code, 0, stderr)  # a name nobody uses is fine
                    continue
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn(said, stderr)
        self.assertEqual((self.root / "README.md").read_bytes(), readme)
        self.assertEqual((self.root / "fb" / "张三.md").read_text(encoding="utf-8"), "老师自己的笔记\n")
        self.assertEqual(sorted(p.name for p in (self.root / "good").iterdir()), ["张三"])
        self.assertFalse((self.root / "same.txt").exists())

    def test_bad_arguments_exit_2_in_chinese(self):
        (self.root / "empty").mkdir()
        (self.root / "junk-only" / "__MACOSX").mkdir(parents=True)
        for args in (("--class", "nowhere"), ("--class", "empty"), ("--class", "junk-only"),
                     ("--report", "r.md", "loop-runs/x"), ("--feedback", "fb"), ("--class", "good", "loop-runs/x"), ()):
            with self.subTest(args=args):
                code, stdout, stderr = self.run_class(*args)
                self.assertEqual((code, stdout), (2, ""))
                self.assertIn("参数错误", stderr)

    def test_a_class_folder_it_may_not_list_exits_2(self):
        with mock.patch("classroom.intake.os.scandir", side_effect=PermissionError(13, "Permission denied")):
            code, stdout, stderr = self.run_class("--class", "good")
        self.assertEqual((code, stdout), (2, ""))
        self.assertIn("good 无法列出里面的内容（", stderr)  # the class check's own words for its argument

    def test_a_report_that_cannot_be_written_is_said_and_the_old_one_stays(self):
        code, stdout, stderr = self.run_class("--class", "good", "--report", "长" * 300 + ".md")
        self.assertEqual((code, len(stdout.splitlines())), (1, 1))
        self.assertIn("长" * 50, stderr)  # the output that could not be written is named (output_failed)
        report = self.root / "kept.md"
        report.write_bytes("上一次的报告\n".encode("utf-8"))
        with mock.patch("classroom.report.os.replace", side_effect=OSError("disk full")), self.assertRaises(OSError):
            class_report.write_text_atomic(report, "# 新报告\n", "utf-8")
        self.assertEqual(report.read_text(encoding="utf-8"), "上一次的报告\n")
        self.assertEqual(sorted(p.name for p in self.root.glob("*kept*")), ["kept.md"])

    def test_from_another_folder_entries_are_shown_from_there(self):
        code, stdout, stderr = self.run_class("--class", "lesson-14/good", "--report", "r.md", cwd=self.root.parent)
        self.assertEqual(code, 0, stderr)
        self.assertIn("提交：`lesson-14/good/张三`（文件夹）。", (self.root.parent / "r.md").read_text(encoding="utf-8"))
        (self.root.parent / "r.md").unlink()

    def test_a_big_class_checked_by_several_processes_prints_the_same(self):
        for name in ("张三", "李四"):  # 李四 handed in a copy of 张三's records
            shutil.copytree(self.root / "good" / "张三", self.root / "pooled" / name)
        alone = self.run_class("--class", "pooled")
        with mock.patch.object(class_check, "POOL_FROM", 1), mock.patch("classroom.check.os.cpu_count", return_value=2), \
                mock.patch.object(class_check, "ProcessPoolExecutor", wraps=class_check.ProcessPoolExecutor) as pool:
            pooled = self.run_class("--class", "pooled")
        self.assertEqual(pooled, alone)
        self.assertEqual(pool.call_count, 1)
        self.assertEqual(alone[0], 1)
        self.assertEqual([json.loads(line)["result"] for line in alone[1].splitlines()], ["needs_human"] * 2)

    def test_a_teacher_on_another_course_version_is_told_so_above_the_table(self):
        for name in ("张三", "李四"):
            ClassCheckTest.student.__func__(type(self), self.root / "later" / name)
        task = self.root / "docs" / "loop" / "TASK.md"
        original = task.read_bytes()
        self.addCleanup(task.write_bytes, original)
        students_version = releases.current_fingerprint(self.root)
        task.write_bytes(original + b"\n")  # the teacher updated the course after the students ran
        with mock.patch.object(releases, "_known", {}):  # a release the table does not know: said above the table
            code, stdout, stderr = self.run_class("--class", "later", "--report", "later.md")
        self.assertEqual([json.loads(line)["result"] for line in stdout.splitlines()], ["fail", "fail"])
        note = findings.Finding("course_version", files=["docs/loop/TASK.md"],
                                course=findings.Finding("course_teacher")).sentence()
        self.assertEqual(stderr.splitlines()[0], note)
        self.assertIn(note, (self.root / "later.md").read_text(encoding="utf-8"))
        earlier = {students_version: {"release": "2026-12-01", "schema": "loop-run/4"}}  # an earlier release
        with mock.patch.object(releases, "_known", earlier):
            code, stdout, stderr = self.run_class("--class", "later", "--feedback", "later-feedback")
        rows = [json.loads(line) for line in stdout.splitlines()]
        self.assertEqual([row["result"] for row in rows], ["needs_human", "needs_human"])
        older = findings.Finding("older_versions", versions=[findings.Finding("version_release", release="2026-12-01")],
                                 count=6, runs=[name for name, _, _ in sorted(HONEST)])
        for row in rows:
            self.assertEqual(row["kinds"].count("older_versions"), 1, row)
            self.assertIn(older.sentence(), row["problems"])
            self.assertNotRegex(" ".join(row["problems"]), "被改过|改动过|不能算数")  # the words never accuse
        feedback = (self.root / "later-feedback" / "张三.md").read_text(encoding="utf-8")
        self.assertEqual(feedback.count(older.sentence(student=True)), 1)
        self.assertNotRegex(feedback, "被改过|改动过")

    def test_two_students_of_one_name_get_a_feedback_file_each(self):
        for entry in ("张三_100001_assignsubmission_file_", "张三_100002_assignsubmission_file_"):
            shutil.copytree(self.made / "honest", self.root / "namesakes" / entry / "lesson")
        (self.root / "namesakes" / "张三_100002_assignsubmission_file_" / "lesson" / "runs" / "repair-01-02" /
         "artifact" / "review.md").unlink()
        code, stdout, stderr = self.run_class("--class", "namesakes", "--feedback", "namesakes-feedback")
        self.assertEqual([json.loads(line)["id"] for line in stdout.splitlines()], ["100001", "100002"])
        files = sorted((self.root / "namesakes-feedback").iterdir())
        self.assertEqual([path.name for path in files], ["张三-2.md", "张三.md"], stderr)
        texts = [path.read_text(encoding="utf-8") for path in files]
        self.assertEqual([text.count("\n## ") for text in texts], [1, 1])
        self.assertEqual(sorted("100002" in text for text in texts), [False, True])
        self.assertNotIn("100001", texts[["100002" in text for text in texts].index(True)])

    def test_a_surprise_in_one_submission_is_its_row_not_a_crash(self):
        with mock.patch("classroom.intake.folder_submission", side_effect=RuntimeError("坏了")):
            code, stdout, stderr = self.run_class("--class", "good")
        self.assertEqual(code, 1)
        self.assertEqual((json.loads(stdout)["result"], json.loads(stdout)["kinds"]), ("packaging", ["packaging"]))
        self.assertIn("RuntimeError", stderr)
        self.assertNotIn("Traceback", stderr)

    def test_the_row_of_one_workspace_is_the_row_of_the_class(self):
        row = class_check.workspace_row(self.root / "good" / "张三", "张三")
        code, stdout, _ = self.run_class("--class", "good")
        self.assertEqual([row], [json.loads(line) for line in stdout.splitlines()])
        self.assertEqual(class_report.row_text(row).splitlines()[2],
                         "| 张三 |  | pass | pass | pass | pass | pass | pass | pass | 6 |")

    def test_the_report_excerpt_in_the_teachers_page_is_what_the_report_says(self):
        page = (self.root / "docs" / "loop" / "TEACHER.md").read_text(encoding="utf-8")
        excerpt = page.split("`全班.md` 是给人读的报告", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
        class_dir = self.root / "交作业"  # the page's class: 李四 left out stuck, 赵六 copied him, then he deleted a file
        li = ClassCheckTest.student.__func__(type(self), class_dir / "李四")
        remove_loop(li, "stuck-01")
        shutil.copytree(li, class_dir / "赵六")
        (li / "runs" / "repair-01-02" / "artifact" / "review.md").unlink()
        self.run_class("--class", "交作业", "--report", "全班.md")
        self.assertIn(re.sub(r"\n+$", "\n", excerpt), (self.root / "全班.md").read_text(encoding="utf-8"))


def broken_disk(root, name, sample):
    raise RuntimeError("磁盘出错")
