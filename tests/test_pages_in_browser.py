"""The pages of --html in a real browser: no sideways scrolling at 390 and 1280 px, no request, the content there.

Headless Chromium, where it is installed (the test skips saying so where it is not, as on most learners' and CI
machines), started once for every page: a driver page beside them holds each page in a fixed-size frame, 390 x 844
and 1280 x 800 (the headless window itself does not go below 500 px), and once every frame has loaded copies out
what each shows: how wide its content is against its frame (the document, and any element that scrolls sideways in a
box of its own), whether its tables' rows are cards, how many requests it made, and its text. The pages are the
class page, a student's page and a loop page of the real class of tests/test_class_check.py (honest work, a forged
record, packaging, copies, hostile names); their Content-Security-Policy allows no script, so what the frames show
is the content with scripts off. The frames are files beside the driver (file://), read with
--allow-file-access-from-files.
"""
import json
import re
import subprocess
import tempfile
import unittest

from tests.test_class_check import RealClassTestCase, in_process
from tests.test_page_in_browser import BROWSERS, browser

SIZES = ((390, 844), (1280, 800))
DRIVER = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><pre id="out">(nothing measured)</pre>
<script>
const PAGES = __PAGES__, SIZES = __SIZES__, frames = [];
for (const page of PAGES) for (const [width, height] of SIZES) {
  const frame = document.createElement("iframe");
  frame.style.cssText = `width:${width}px;height:${height}px;border:0;display:block`;
  frame.dataset.page = page; frame.dataset.width = width; frame.src = page;
  document.body.append(frame); frames.push(frame);
}
let loaded = 0;
for (const frame of frames) frame.onload = () => { if (++loaded === frames.length) measure(); };
function measure() {
  const found = frames.map((frame) => {
    const doc = frame.contentDocument, view = doc.documentElement.clientWidth;
    let right = doc.documentElement.scrollWidth, boxes = 0;
    for (const element of doc.querySelectorAll("*")) {
      const style = getComputedStyle(element);
      if (["auto", "scroll"].includes(style.overflowX) && element.scrollWidth > element.clientWidth) boxes++;
      right = Math.max(right, element.getBoundingClientRect().right);
    }
    const rows = [...doc.querySelectorAll("table.cards tr")];
    const cards = rows.filter((row) => getComputedStyle(row).display === "block").length;
    return {page: frame.dataset.page, width: +frame.dataset.width, view, right, boxes, rows: rows.length, cards,
            requests: frame.contentWindow.performance.getEntriesByType("resource").length,
            text: doc.body.innerText};
  });
  document.getElementById("out").textContent = JSON.stringify(found);
}
</script></body></html>"""


@unittest.skipUnless(browser(), f"没有找到 Chromium 或 Chrome（{'、'.join(BROWSERS)}）：网页在真实浏览器里的检查跳过")
class PagesInABrowserTest(RealClassTestCase):
    OUTPUTS = (*RealClassTestCase.OUTPUTS, "--html", "全班.html")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        loops = [f"made/honest/loop-runs/{name}" for name in ("repair-01", "stuck-01", "budget-01", "time-01",
                                                                 "semantic-01", "permission-01")]
        cls.loop_code = in_process(cls.root, *loops, "交作业/秦竹/loop-runs/stuck-01", "--html", "循环.html")[0]
        cls.pages = ["全班.html", "循环.html", "反馈/秦竹.html", "反馈/张三.html"]
        driver = cls.root / "driver.html"
        driver.write_text(DRIVER.replace("__PAGES__", json.dumps(cls.pages)).replace("__SIZES__", json.dumps(SIZES)),
                          encoding="utf-8")
        with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:  # Windows: files held a moment
            run = subprocess.run(
                [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--allow-file-access-from-files", "--virtual-time-budget=20000",
                 "--dump-dom", driver.as_uri()], capture_output=True, text=True, encoding="utf-8", timeout=120)
        out = re.search(r'<pre id="out">(.*?)</pre>', run.stdout, re.DOTALL)
        import html
        cls.shown = json.loads(html.unescape(out.group(1))) if out and out.group(1).startswith("[") else []

    def test_every_page_was_measured_at_both_widths(self):
        self.assertEqual(sorted((shown["page"], shown["width"]) for shown in self.shown),
                         sorted((page, width) for page in self.pages for width, _ in SIZES))

    def test_no_page_scrolls_sideways_at_390_or_1280_px(self):
        for shown in self.shown:
            with self.subTest(page=shown["page"], width=shown["width"]):
                self.assertGreaterEqual(shown["view"], shown["width"] - 20)  # less a vertical scroll bar, if any
                self.assertLessEqual(shown["right"], shown["view"] + 0.5)  # nothing reaches past the frame
                self.assertEqual(shown["boxes"], 0)  # and no box of its own scrolls sideways

    def test_a_tables_rows_are_cards_at_390_px_and_rows_at_1280(self):
        for shown in self.shown:
            with self.subTest(page=shown["page"], width=shown["width"]):
                self.assertEqual(shown["cards"], shown["rows"] if shown["width"] == 390 else 0)
        self.assertTrue(all(shown["rows"] for shown in self.shown if not shown["page"].startswith("反馈/")))

    def test_no_page_makes_a_request(self):
        self.assertEqual([(shown["page"], shown["requests"]) for shown in self.shown if shown["requests"]], [])

    def test_the_content_is_there_without_a_script(self):
        by_page = {shown["page"]: shown["text"] for shown in self.shown if shown["width"] == 1280}
        for line in self.lines():
            self.assertIn(line["student"].replace("\n", "\\n").split("|")[0], by_page["全班.html"])
        self.assertIn(self.stderr.splitlines()[-1], by_page["全班.html"])  # the totals sentence
        self.assertIn("stalled/repeated_failure", by_page["循环.html"])  # the stop the evidence supports
        self.assertIn("stop_contradicted", by_page["循环.html"])
        self.assertIn("秦竹", by_page["反馈/秦竹.html"])
        self.assertNotIn("张三", by_page["反馈/秦竹.html"])
        self.assertEqual(self.loop_code, 1)
