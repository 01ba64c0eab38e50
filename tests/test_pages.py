"""Tests of the pages verify_loop writes with --html: what they show, what they hold back, where they may be written.

The class page is made from the real class of tests/test_class_check.py (honest work packed every way, packaging
mistakes, hostile ZIPs, a forged record, copies, names that try to fake markup), checked once with --html beside the
JSON, the CSV, the feedback and its ZIP; the loop page from the six lesson loops, a tampered one and one whose
record carries hostile text. Every count a page shows is compared with the JSON and the CSV of the same run; every
reason and round with what the verdict holds (kinds, attempts). A page is read with html.parser, never with the code
that made it. How the pages look in a real browser (widths, requests): tests/test_pages_in_browser.py.
"""
import csv
import html
import io
import json
import os
import re
import shutil
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

from classroom import page as class_page
from tests.test_class_check import EXPECTED, HONEST, ODD_NAME, RealClassTestCase, forge, in_process
from tests.test_loop_lab import SharedWorkspaceTestCase
from verifier.findings import Finding

FIRST_LINE = "<!DOCTYPE html><!-- verify_loop.py --html -->"  # docs/loop/TEACHER.md: how a page is known
HOSTILE = "<script>alert(1)</script>\u202e"


class Page(HTMLParser):
    """A page as parsed: each element (tag, attributes, its text), the text of the whole, the links."""

    def __init__(self, source):
        super().__init__(convert_charrefs=True)
        self.source, self.elements, self.open, self.texts = source, [], [], []
        self.feed(source)

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": []}
        self.elements.append(element)
        if tag not in ("meta", "input", "br", "img", "link"):
            self.open.append(element)

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        self.texts.append(data)
        for element in self.open:
            element["text"].append(data)

    def text(self):
        return "".join(self.texts)

    def all(self, tag=None, cls=None, **attrs):
        return [element for element in self.elements if (tag is None or element["tag"] == tag)
                and (cls is None or cls in element["attrs"].get("class", "").split())
                and all(element["attrs"].get(name.replace("_", "-")) == value for name, value in attrs.items())]

    def kinds(self, within=None):
        found = within["kinds"] if within else self.elements
        return [element["attrs"]["data-kind"] for element in found if "data-kind" in element["attrs"]]


def words(element):
    return "".join(element["text"])


class SelfContained:
    """What every page must be: one file needing nothing else and reaching nothing outside."""

    def assertSelfContained(self, path):
        source = Path(path).read_text(encoding="utf-8")
        self.assertEqual(source.splitlines()[0], FIRST_LINE)
        page = Page(source)
        metas = [element["attrs"] for element in page.all("meta")]
        self.assertIn({"charset": "utf-8"}, metas)
        self.assertTrue(any(meta.get("name") == "viewport" for meta in metas))
        policy = next(meta["content"] for meta in metas if meta.get("http-equiv") == "Content-Security-Policy")
        self.assertIn("default-src 'none'", policy)
        self.assertNotIn("script-src", policy)  # default-src 'none' forbids every script
        self.assertEqual(page.all("script") + page.all("link") + page.all("img") + page.all("iframe"), [])
        self.assertNotRegex(source, r"(?i)\b(src|srcset|action)=|url\(|@import|javascript:")
        for element in page.all("a"):
            url = element["attrs"]["href"]
            self.assertNotRegex(url, r"^(/|\\|[A-Za-z][A-Za-z0-9+.-]*:|//)", url)  # relative, never absolute
        return page

    def targets(self, page, page_path):
        """The files a page's links (other than its own anchors) reach."""
        return [Path(os.path.normpath(Path(page_path).parent / unquote(element["attrs"]["href"])))
                for element in page.all("a") if not element["attrs"]["href"].startswith("#")]


class ClassPageTest(SelfContained, RealClassTestCase):
    OUTPUTS = (*RealClassTestCase.OUTPUTS, "--html", "全班.html", "--feedback-zip", "反馈.zip")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.page_path = cls.root / "全班.html"
        cls.page = Page(cls.page_path.read_text(encoding="utf-8"))

    def test_the_class_page_is_one_self_contained_file(self):
        self.assertSelfContained(self.page_path)
        self.assertLess(self.page_path.stat().st_size, 400_000)  # a 5 MB reason is cut here as everywhere

    def test_every_student_and_every_status_count_the_json_and_the_csv_show(self):
        lines = self.lines()
        rows = self.page.all("tr", cls="student")
        self.assertEqual([row["attrs"]["class"].split()[1] for row in rows], [f"r-{line['result']}" for line in lines])
        links = [element for element in self.page.all("a") if element["attrs"]["href"].startswith("#student-")]
        self.assertEqual([words(link) for link in links[-len(lines):]], [line["student"].replace("\n", "\\n")
                                                                         for line in lines])
        with open(self.root / "全班.csv", encoding="utf-8-sig", newline="") as handle:
            in_csv = [row["result"] for row in csv.DictReader(handle)]
        bars = {element["attrs"]["data-result"]: int(next(words(cell) for cell in self.inside(element)
                                                          if "count" in cell["attrs"].get("class", "").split()))
                for element in self.page.all("tr") if "data-result" in element["attrs"]}
        self.assertEqual(len(bars), 5)
        for result, count in bars.items():
            self.assertEqual(count, [line["result"] for line in lines].count(result), result)
            self.assertEqual(count, in_csv.count(result), result)
        self.assertIn(self.stderr.splitlines()[-1], self.page.text())  # the totals sentence
        for line, row in zip(lines, rows):
            cells = [words(cell).split() for cell in self.inside(row) if cell["tag"] == "td"][3:9]
            self.assertEqual([said[0] for said in cells], list(line["cases"].values()), line["student"])

    def inside(self, element):
        """The elements inside ELEMENT (up to the next element of its tag)."""
        start = next(number for number, other in enumerate(self.page.elements) if other is element) + 1
        end = next((number for number, other in enumerate(self.page.elements[start:], start)
                    if other["tag"] == element["tag"]), len(self.page.elements))
        return self.page.elements[start:end]

    def test_each_student_has_a_section_whose_reasons_carry_the_rows_kinds(self):
        sections = self.page.all("section", cls="student")
        self.assertEqual(len(sections), len(self.lines()))
        for line, section in zip(self.lines(), sections):
            with self.subTest(student=line["student"]):
                start = self.page.elements.index(section)
                end = next((self.page.elements.index(other) for other in sections if
                            self.page.elements.index(other) > start), len(self.page.elements))
                items = [element for element in self.page.elements[start:end] if element["tag"] == "li"
                         and "finding" in element["attrs"].get("class", "")]
                kinds = [item["attrs"]["data-kind"] for item in items]
                self.assertEqual(kinds[:len(line["kinds"])], line["kinds"])
                self.assertEqual(kinds[len(line["kinds"]):][:len(line.get("note_kinds", []))],
                                 line.get("note_kinds", []))

    def test_hostile_names_are_only_text(self):
        source = self.page_path.read_text(encoding="utf-8")
        if ODD_NAME not in self.odd_names:
            self.skipTest("这个文件系统不接受这样的文件夹名")
        self.assertNotIn("<b>乙", source)
        self.assertNotIn("<i>", source)
        self.assertIn(html.escape("甲|<b>乙<i>"), source)
        self.assertIn("\\n", self.page.text())  # the newline in the name, shown as its escape
        self.assertEqual([element for element in self.page.all("b") if words(element).startswith("乙")], [])
        self.assertEqual(self.page.all("i"), [])

    def test_copies_and_entries_set_aside_are_named(self):
        text = self.page.text()
        for entry in ("交作业/名单.txt", "交作业/张三_100001_assignsubmission_onlinetext_"):
            self.assertIn(entry, text)
        listed = self.copies_list()
        copies = [words(element) for element in self.page.all("a")
                  if element["attrs"]["href"].startswith("#student-") and any(element is item for item in listed)]
        shared = [line["student"] for line in self.lines() if {"shared_record", "shared_clock", "shared_readings",
                                                                  "copy_inside", "loop_copy"} & set(line["kinds"])]
        self.assertEqual(copies, shared)
        self.assertLessEqual({"吕菊", "施桃", "孔杏", "曹莲"}, set(copies))

    def test_a_students_id_and_name_are_text_in_the_table_and_a_quote_cannot_end_an_attribute(self):
        from verifier import page as loop_page
        row = {"student": "<i>张三</i>", "id": "<b>100</b>", "result": "pass", "cases": {}, "loops": 6,
               "problems": [], "kinds": []}
        cells = Page("<table>" + class_page.table_row(1, row) + "</table>").all("td")
        self.assertEqual([words(cell) for cell in cells[:2]], ["<i>张三</i>", "<b>100</b>"])
        self.assertEqual(loop_page.text('" onmouseover="x'), "&quot; onmouseover=&quot;x")

    def test_an_entry_set_aside_is_named_as_text(self):
        page = Page("".join(class_page.first_things([], [("交作业/<i>名单</i>.txt", Finding("aside_document"))], None, ())))
        self.assertEqual(page.all("i"), [])
        self.assertIn("交作业/<i>名单</i>.txt", [words(item) for item in page.all("span", cls="path")])

    def test_entries_set_aside_and_copies_are_folded_only_when_many(self):
        few = self.page.all("details", cls="aside")  # this class: a few of each
        self.assertEqual([("open" in element["attrs"]) for element in few], [True, True])
        for count in (class_page.OPEN_ASIDE, class_page.OPEN_ASIDE + 1):
            aside = [(f"交作业/{number}.txt", Finding("aside_document")) for number in range(count)]
            copied = [({"student": f"学生{number}"}, SimpleNamespace(reasons=[SimpleNamespace(kind="shared_record")]))
                      for number in range(count)]
            page = Page("".join(class_page.first_things(copied, aside, None, ())))
            with self.subTest(count=count):
                lists = page.all("details", cls="aside")
                self.assertEqual([("open" in element["attrs"]) for element in lists],
                                 [count <= class_page.OPEN_ASIDE] * 2)
                self.assertEqual([words(summary).rsplit("：", 1)[1] for summary in page.all("summary")],
                                 [f"{count} 个", f"{count} 人"])
                self.assertEqual((len(page.all("li", data_kind="aside_document")),
                                  len(page.all("span", data_kind="shared_record"))), (count, count))

    def copies_list(self):
        heading = next(element for element in self.page.all("h2") if "副本" in words(element))
        start = self.page.elements.index(heading)
        end = next(self.page.elements.index(element) for element in self.page.elements[start:]
                   if element["tag"] == "input")
        return self.page.elements[start:end]

    def test_links_reach_only_what_outlasts_the_check(self):
        targets = self.targets(self.page, self.page_path)
        self.assertTrue(targets)
        for target in targets:
            self.assertTrue(os.path.lexists(target), target)
            self.assertTrue(target.is_relative_to(self.class_dir), target)
        zipped = [target for target in targets if ".zip" in str(target)]
        self.assertTrue(all(target.suffix == ".zip" for target in zipped), zipped)  # never a path inside one

    def test_a_students_page_holds_that_students_own_results_only(self):
        folder = self.root / "反馈"
        pages = sorted(folder.glob("*.html"))
        self.assertEqual(sorted(path.stem for path in pages), sorted(path.stem for path in folder.glob("*.md")))
        names = [name for name in EXPECTED if len(name) > 1 and name.isalpha()]
        for path in pages:
            with self.subTest(page=path.name):
                page = self.assertSelfContained(path)
                own = path.stem.split("-")[0]
                self.assertEqual([name for name in names if name != own and name in page.text()], [])
                self.assertEqual(page.all("a"), [])  # nothing on the teacher's machine is linked
                self.assertNotIn("交作业/", page.text())
        copy = Page((folder / "吕菊.html").read_text(encoding="utf-8"))
        self.assertIn("shared_record", copy.kinds())
        self.assertNotIn("施桃", copy.text())

    def test_the_feedback_zip_carries_both_files_of_each_student(self):
        with zipfile.ZipFile(self.root / "反馈.zip") as archive:
            names = archive.namelist()
        folders = {name.rpartition("/")[0] for name in names}
        for folder in folders:
            self.assertEqual(sorted(name.rpartition(".")[2] for name in names if name.startswith(folder + "/")),
                             ["html", "md"], folder)


class LoopPageTest(SelfContained, SharedWorkspaceTestCase):
    """The six lesson loops, a tampered one and one whose record says hostile things, on one page."""
    LOOPS = [name for name, _, _ in HONEST] + ["tampered", "hostile"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        RealClassTestCase.make_records.__func__(cls, cls.root / "made", HONEST)
        for folder in ("loop-runs", "runs"):
            shutil.move(cls.root / "made" / folder, cls.root / folder)
        cls.renamed("stuck-01", "tampered", status="needs_review", reason="mechanical_pass", handoff=None)
        cls.renamed("budget-01", "hostile", status="needs_human", reason="unexpected_error", error_type=HOSTILE)
        cls.page_path = cls.root / "循环.html"
        args = [f"loop-runs/{name}" for name in cls.LOOPS]
        cls.code, cls.stdout, cls.stderr = in_process(cls.root, *args, "--html", "循环.html")
        cls.plain = in_process(cls.root, *args)
        cls.page = Page(cls.page_path.read_text(encoding="utf-8"))

    @classmethod
    def renamed(cls, loop, name, **changes):
        """A copy of LOOP (its children too) named NAME, its record then changed by CHANGES."""
        shutil.copytree(cls.root / "loop-runs" / loop, cls.root / "loop-runs" / name)
        for child in sorted((cls.root / "runs").glob(f"{loop}-0?")):
            copy = cls.root / "runs" / child.name.replace(loop, name)
            shutil.copytree(child, copy)
            forge(copy / "run.json", lambda run: run.update(run=copy.name))
        forge(cls.root / "loop-runs" / name / "loop.json", lambda rec: [
            rec.update(run=name, **changes),
            [entry.update(child_run=entry["child_run"].replace(loop, name)) for entry in rec["attempts"]]])

    def test_the_loop_page_is_one_self_contained_file_and_changes_no_output(self):
        self.assertSelfContained(self.page_path)
        self.assertEqual((self.code, self.stdout), self.plain[:2])
        self.assertEqual(self.code, 1)  # the tampered loop fails: the page was written all the same

    def test_a_row_a_loop_in_the_order_given_with_its_verdict(self):
        lines = [json.loads(line) for line in self.stdout.splitlines()]
        rows = self.page.all("tbody")[0]
        summary = [element for element in self.page.elements if element["tag"] == "tr"
                   and element["attrs"].get("class", "").startswith("r-")]
        self.assertEqual([row["attrs"]["class"] for row in summary], [f"r-{line['result']}" for line in lines])
        self.assertEqual([words(link) for link in self.page.all("a") if link["attrs"]["href"].startswith("#loop-")],
                         [line["run"] for line in lines])
        self.assertTrue(rows)

    def test_the_stop_the_evidence_supports_is_beside_the_recorded_one_where_they_differ(self):
        marked = self.page.all("td", cls="differs")
        self.assertEqual([(cell["attrs"].get("data-kind"), words(cell)) for cell in marked],
                         [("stop_contradicted", "stalled/repeated_failure")])
        self.assertIn("differs_stop", self.page.kinds())
        verdicts = [json.loads(line) for line in self.stdout.splitlines()]
        tampered = next(line for line in verdicts if line["run"] == "tampered")
        self.assertEqual(tampered["result"], "fail")

    def test_every_round_with_its_offsets_and_its_childs_own_duration(self):
        rounds = self.page.all("div", cls="round")
        expected = 0
        for name in self.LOOPS:
            record = json.loads((self.root / "loop-runs" / name / "loop.json").read_text(encoding="utf-8"))
            expected += len(record["attempts"])
            for entry in record["attempts"]:
                child = json.loads((self.root / entry["child_run"] / "run.json").read_text(encoding="utf-8"))
                said = [words(element) for element in rounds]
                self.assertTrue(any(f"开始 {entry['started_offset']:.3f} 秒" in text and f"结束 "
                                    f"{entry['finished_offset']:.3f} 秒" in text and
                                    f"{child['duration_seconds']:.3f} 秒" in text for text in said), entry)
        self.assertEqual(len(rounds), expected)

    def test_a_loop_without_an_attempt_shows_the_check_that_stopped_it(self):
        for number, name in enumerate(self.LOOPS, 1):
            if name in ("permission-01", "time-01"):
                section = next(element for element in self.page.all("section") if element["attrs"]["id"]
                               == f"loop-{number}")
                self.assertIn("第 1 轮", words(section))
                self.assertIn("预算检查", words(section))

    def test_findings_carry_their_kinds_and_hostile_text_is_only_text(self):
        source = self.page_path.read_text(encoding="utf-8")
        self.assertNotIn("<script>", source)
        self.assertNotIn("\u202e", source)
        self.assertIn(html.escape("<script>alert(1)</script>"), source)
        self.assertIn("\\u202e", self.page.text())
        self.assertIn("stop_contradicted", self.page.kinds())

    def test_links_are_relative_to_the_pages_folder_and_reach_the_evidence(self):
        targets = self.targets(self.page, self.page_path)
        self.assertIn(self.root / "loop-runs" / "tampered", targets)
        self.assertIn(self.root / "runs" / "tampered-02", targets)
        for target in targets:
            self.assertTrue(os.path.lexists(target), target)

    def test_a_path_a_record_names_outside_its_workspace_is_text_never_linked(self):
        from verifier import page as loop_page
        # a hand-off's `inspect` is the record's own word: "../" reaches the teacher's folders beside the workspace
        inside = loop_page.link(self.root / "runs", "runs", self.root, within=self.root)
        outside = loop_page.link(self.root.parent, "..", self.root, within=self.root)
        self.assertEqual((inside.startswith("<a href="), outside.startswith("<a ")), (True, False))

    def test_a_record_of_any_shape_still_gets_its_page(self):
        self.renamed("permission-01", "shapeless")
        record = self.root / "loop-runs" / "shapeless" / "loop.json"
        original = record.read_bytes()
        for path in ("loop-runs/shapeless", "shapeless.html"):
            self.addCleanup(lambda path=self.root / path: shutil.rmtree(path) if path.is_dir() else path.unlink())
        for change in ({"attempts": 2.5}, {"attempts": "runs/x-01"}, {"blocked_proposal": None},
                       {"blocked_proposal": ["publish"]}, {"handoff": {"inspect": 3, "done": {}}}):
            with self.subTest(change=change):
                record.write_bytes(original)
                forge(record, lambda rec: rec.update(change))
                code, _, stderr = in_process(self.root, "loop-runs/shapeless", "--explain", "--html", "shapeless.html")
                page = Page((self.root / "shapeless.html").read_text(encoding="utf-8"))
                self.assertEqual(code, 1, stderr)
                self.assertNotIn("check_crashed", page.kinds())
                self.assertNotIn("无法逐轮说明的内容", stderr)  # --explain's own safety net

    def test_evidence_that_is_gone_is_named_as_text_never_linked(self):
        self.renamed("repair-01", "gone")
        shutil.rmtree(self.root / "runs" / "gone-01")
        for path in ("loop-runs/gone", "runs/gone-02", "gone.html"):
            self.addCleanup(lambda path=self.root / path: shutil.rmtree(path) if path.is_dir() else path.unlink())
        code, _, stderr = in_process(self.root, "loop-runs/gone", "--html", "gone.html")
        page = Page((self.root / "gone.html").read_text(encoding="utf-8"))
        self.assertEqual(code, 1, stderr)
        self.assertIn("child_deleted", page.kinds())
        targets = self.targets(page, self.root / "gone.html")
        self.assertIn(self.root / "runs" / "gone-02", targets)
        self.assertNotIn(self.root / "runs" / "gone-01", targets)
        self.assertIn("runs/gone-01", page.text())


class LinkedEvidenceTest(SelfContained, SharedWorkspaceTestCase):
    def test_nothing_reached_through_a_link_is_linked(self):
        # a submission's link (its entry, a child folder) may point at another student's work or the teacher's files
        RealClassTestCase.make_records.__func__(self, self.root / "made", HONEST[:1])
        outside = self.root / "made"
        student = shutil.copytree(outside, self.root / "linked" / "张三")
        try:
            shutil.rmtree(student / "runs" / "repair-01-01")
            os.symlink(outside / "runs" / "repair-01-01", student / "runs" / "repair-01-01", target_is_directory=True)
            os.symlink(outside, self.root / "linked" / "李四", target_is_directory=True)
        except (OSError, NotImplementedError):  # Windows without the privilege
            self.skipTest("这里不能创建符号链接")
        code, _, stderr = in_process(self.root, "--class", "linked", "--html", "linked.html")
        self.assertEqual(code, 1, stderr)
        targets = self.targets(self.assertSelfContained(self.root / "linked.html"), self.root / "linked.html")
        self.assertIn(student / "runs" / "repair-01-02", targets)  # the real evidence is linked
        code, _, stderr = in_process(self.root, "linked/张三/loop-runs/repair-01", "--html", "loop.html")
        self.assertEqual(code, 1, stderr)
        loop_targets = self.targets(self.assertSelfContained(self.root / "loop.html"), self.root / "loop.html")
        self.assertIn(student / "runs" / "repair-01-02", loop_targets)
        for target in targets + loop_targets:
            self.assertTrue(Path(os.path.realpath(target)).is_relative_to(os.path.realpath(student)), target)


class PageTargetTest(SharedWorkspaceTestCase):
    """Where a page may be written: as every other output, known by its first line, refused before anything."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        RealClassTestCase.make_records.__func__(cls, cls.root / "made" / "honest", HONEST[:1])
        cls.made = cls.root / "made"
        RealClassTestCase.student.__func__(cls, cls.root / "good" / "张三")
        for folder in ("loop-runs", "runs"):
            shutil.copytree(cls.made / "honest" / folder, cls.root / folder)

    def refused(self, *args):
        code, stdout, stderr = in_process(self.root, *args)
        self.assertEqual((code, stdout), (2, ""), stderr)
        return stderr

    def test_an_earlier_page_is_replaced_and_any_other_file_is_not(self):
        for args in (("loop-runs/repair-01",), ("--class", "good")):
            with self.subTest(args=args):
                page = self.root / "page.html"
                page.unlink(missing_ok=True)
                plain = in_process(self.root, *args)
                self.assertEqual(in_process(self.root, *args, "--html", "page.html")[:2], plain[:2])
                page.write_bytes(page.read_bytes() + b"<!-- edited -->")
                self.assertEqual(in_process(self.root, *args, "--html", "page.html")[:2], plain[:2])
                self.assertNotIn("edited", page.read_text(encoding="utf-8"))
                (self.root / "mine.html").write_bytes(b"<!DOCTYPE html><p>my own page</p>\n")
                self.refused(*args, "--html", "mine.html")
                self.assertEqual((self.root / "mine.html").read_bytes(), b"<!DOCTYPE html><p>my own page</p>\n")

    def test_a_folder_a_link_a_missing_folder_and_the_evidence_are_refused(self):
        linked = self.root / "linked.html"
        try:
            os.symlink(self.root / "AGENTS.md", linked)
            targets = ["linked.html"]
        except (OSError, NotImplementedError):  # Windows without the privilege
            targets = []
        for target in [*targets, "samples", "no/such/page.html"]:
            for args in (("loop-runs/repair-01",), ("--class", "good")):
                with self.subTest(target=target, args=args):
                    self.refused(*args, "--html", target)
        for target in ("loop-runs/page.html", "runs/repair-01-01/page.html"):
            with self.subTest(target=target):
                self.refused("loop-runs/repair-01", "--html", target)
                self.assertFalse((self.root / target).exists())
        self.refused("--class", "good", "--html", "good/张三/page.html")
        self.assertFalse((self.root / "good" / "张三" / "page.html").exists())

    def test_a_page_is_no_other_output_and_no_hand_in(self):
        self.refused("--class", "good", "--report", "same.html", "--html", "same.html")
        self.refused("--class", "good", "--csv", "./same.html", "--html", "same.html")
        (self.root / "feedback").mkdir(exist_ok=True)
        (self.root / "feedback" / "张三.html").write_bytes("老师自己的网页\n".encode("utf-8"))
        self.refused("--class", "good", "--feedback", "feedback", "--html", "all.html")
        self.assertEqual((self.root / "feedback" / "张三.html").read_text(encoding="utf-8"), "老师自己的网页\n")
        self.assertNotIn("all.html", os.listdir(self.root))
        self.assertIn("--pack", self.refused("--pack", "x.zip", "--html", "x.html"))
        self.assertFalse((self.root / "x.zip").exists() or (self.root / "x.html").exists())

    def test_a_page_that_cannot_be_written_is_said_and_the_exit_says_so(self):
        page = self.root / ("长" * 300 + ".html")
        code, stdout, stderr = in_process(self.root, "loop-runs/repair-01", "--html", page.name)
        self.assertEqual(code, 1, stderr)
        self.assertEqual(json.loads(stdout)["result"], "pass")  # stdout is what it was
        self.assertIn("长" * 50, stderr)
