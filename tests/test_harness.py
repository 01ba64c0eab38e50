"""Tests of harness.py, the single run of the export task (docs/harness/TASK.md).

Runs happen in the temporary workspace copy: in-process through run_harness()/main() (with the
module's ROOT pointed at the copy), and a few end to end as subprocesses for the CLI contract.
The fingerprint is recomputed here from the task document's definition, not with the harness's code.
"""
import json
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

import cli
import export_review
import harness
import verify_export
from tests.support import PYTHON, WorkspaceTestCase, skip_on_windows
from tests.test_export_review import REVERSED_ANSWER, run_main, sha256

WATCHED = (
    "harness.py", "verify_harness.py", "export_review.py", "verify_export.py", "AGENTS.md",
    "docs/harness/TASK.md", "samples/valid.json", "samples/bad-quote.json", "samples/semantic.json",
    "project/notes/A01.md", "project/notes/A02.md", "project/notes/A03.md", "project/notes/A05.md",
    "project/notes/A07.md",
)
RUN_KEYS = ("schema", "id", "run", "sample", "status", "semantic_review", "input", "context", "steps", "error",
            "artifact", "actual_api_calls", "started_at", "finished_at", "duration_seconds")
BAD_QUOTE = "第 1 张卡：引文不在对应笔记原文中。"
BAD_QUOTE_ERROR = {"type": "ValidationError", "message": BAD_QUOTE}
INVALID_NAMES = (".hidden", "-x", "a..b", "x.", "CON", "nul.txt", "com1", "LPT9", "aux.tar.gz", "a/b", "a b",
                 "a\\b", "n" * 65, "", "运行", "café")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def expected_fingerprint(root):
    """docs/harness/TASK.md: per file sha256 after CRLF -> LF or "missing"; combined over sorted PATH\\tSHA lines."""
    entries = {}
    for rel in sorted(WATCHED):
        path = root / rel
        entries[rel] = sha256(path.read_bytes().replace(b"\r\n", b"\n")) if path.exists() else "missing"
    combined = "".join(f"{rel}\t{sha}\n" for rel, sha in entries.items())
    return {"files": 14, "fingerprint": sha256(combined.encode("utf-8")), "entries": entries}


def snapshot(folder):
    """Every file below FOLDER with its bytes, to compare before and after."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class HarnessCase(WorkspaceTestCase):
    def run_dir(self, name):
        return self.root / "runs" / name

    def stored(self, name):
        return json.loads(self.run_dir(name).joinpath("run.json").read_text(encoding="utf-8"))

    def main_in_copy(self, *argv):
        """harness.main() in-process, its ROOT pointed at the workspace copy."""
        with mock.patch.object(harness, "ROOT", self.root):
            return run_main(harness.main, *argv)


class FingerprintTest(HarnessCase):
    def test_fingerprint_covers_the_14_watched_files(self):
        got = harness.fingerprint(self.root)
        self.assertEqual(got, expected_fingerprint(self.root))
        self.assertEqual(got["files"], 14)
        self.assertNotIn("missing", got["entries"].values())

    def test_crlf_checkout_fingerprints_the_same(self):
        before = harness.fingerprint(self.root)
        for rel in ("project/notes/A01.md", "samples/valid.json", "harness.py"):
            path = self.root / rel
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        self.assertEqual(harness.fingerprint(self.root), before)

    def test_missing_and_edited_files_change_the_fingerprint(self):
        before = harness.fingerprint(self.root)
        (self.root / "AGENTS.md").unlink()
        note = self.root / "project" / "notes" / "A05.md"
        note.write_bytes(note.read_bytes() + b"\n")
        after = harness.fingerprint(self.root)
        self.assertEqual(after["entries"]["AGENTS.md"], "missing")
        self.assertEqual(after, expected_fingerprint(self.root))
        self.assertEqual(sorted(k for k in WATCHED if after["entries"][k] != before["entries"][k]),
                         ["AGENTS.md", "project/notes/A05.md"])
        self.assertNotEqual(after["fingerprint"], before["fingerprint"])

    def test_unwatched_note_does_not_count(self):
        before = harness.fingerprint(self.root)
        (self.root / "project" / "notes" / "A04.md").write_text("# 改动\n", encoding="utf-8")
        self.assertEqual(harness.fingerprint(self.root), before)


class CheckTest(HarnessCase):
    def test_check_in_process(self):
        result = harness.check(self.root)
        self.assertEqual(list(result)[:3], ["ready", "missing", "watched_files"])
        self.assertEqual((result["ready"], result["missing"], result["watched_files"]), (True, [], 14))
        (self.root / "samples" / "semantic.json").unlink()
        (self.root / "project" / "notes" / "A07.md").unlink()
        result = harness.check(self.root)
        self.assertEqual((result["ready"], result["missing"]),
                         (False, ["samples/semantic.json", "project/notes/A07.md"]))

    def test_check_cli_ready(self):
        code, out, err = self.run_cli("harness.py", "--check")
        self.assertEqual(code, 0, err)
        self.assertOneJsonLine(out)
        self.assertTrue(out.startswith('{"ready": true, "missing": [], "watched_files": 14, '), out)
        self.assertIn("环境就绪", err)

    def test_a_workspace_that_cannot_be_written_is_not_ready(self):
        """A folder the records go in that cannot be written (a workspace opened inside a ZIP, a read-only share)."""
        root = str(self.root)
        cases = ((lambda path, mode: str(path) != root, ["."], None),  # runs/ and loop-runs/ still to be made
                 (lambda path, mode: Path(path).name != "runs", ["runs/"], "runs"))
        for writable, read_only, made in cases:
            with self.subTest(read_only):
                if made:
                    (self.root / "runs").mkdir()
                    (self.root / "loop-runs").mkdir()
                with mock.patch("os.access", side_effect=writable):
                    result = harness.check(self.root)
                    code, out, err = self.main_in_copy("--check")
                self.assertEqual((result["ready"], result["missing"], result["read_only"]), (False, [], read_only))
                self.assertEqual((code, json.loads(out)["read_only"]), (1, read_only))
                self.assertNotIn("环境就绪", err)
                self.assertIn("不能写入，而每次运行和循环都要在 runs/ 和 loop-runs/ 里写记录", err)
        with mock.patch("os.access", side_effect=lambda path, mode: str(path) != root):
            self.assertEqual(harness.check(self.root)["read_only"], [])  # both made: only they are written in
        (self.root / "loop-runs").rmdir()  # loop-runs/ to be made again: the workspace itself must be writable
        with mock.patch("os.access", side_effect=lambda path, mode: str(path) != root):
            self.assertEqual(harness.check(self.root)["read_only"], ["."])
        self.assertEqual(harness.check(self.root)["read_only"], [])

    def test_check_cli_with_a_watched_file_missing(self):
        (self.root / "docs" / "harness" / "TASK.md").unlink()
        code, out, err = self.run_cli("harness.py", "--check")
        self.assertEqual(code, 1)
        result = self.assertOneJsonLine(out)
        self.assertEqual((result["ready"], result["missing"], result["watched_files"]),
                         (False, ["docs/harness/TASK.md"], 14))
        self.assertIn("docs/harness/TASK.md", err)
        self.assertNoTraceback(err)


class RunRecordTest(HarnessCase):
    def assert_common_record(self, record, name, sample):
        self.assertEqual(self.stored(name), record, "run.json holds the returned record")
        self.assertEqual(tuple(record), RUN_KEYS)
        self.assertEqual((record["schema"], record["run"], record["sample"], record["actual_api_calls"]),
                         ("harness-run/2", name, sample, 0))
        self.assertRegex(record["id"], r"\A[0-9a-f]{32}\Z")
        self.assertIs(type(record["duration_seconds"]), float)
        self.assertGreaterEqual(record["duration_seconds"], 0)
        sample_bytes = (self.root / "samples" / f"{sample}.json").read_bytes()
        self.assertEqual(self.run_dir(name).joinpath("input", "candidate.json").read_bytes(), sample_bytes)
        self.assertEqual(record["input"], {"path": "input/candidate.json", "sha256": sha256(sample_bytes)})
        self.assertEqual(record["context"], expected_fingerprint(self.root))
        self.assertEqual(len(record["context"]["entries"]), 14)
        self.assertRegex(record["started_at"], TIMESTAMP)
        self.assertRegex(record["finished_at"], TIMESTAMP)
        self.assertEqual([p.name for p in self.run_dir(name).glob("*.tmp")], [])

    def assert_exported(self, record, name):
        folder = self.run_dir(name) / "artifact"
        self.assertEqual((record["status"], record["semantic_review"], record["error"]),
                         ("needs_review", "pending", None))
        self.assertEqual(record["steps"], [{"name": "export", "ok": True}, {"name": "verify", "ok": True}])
        self.assertEqual(record["artifact"], {"review.md": sha256((folder / "review.md").read_bytes()),
                                              "cards.json": sha256((folder / "cards.json").read_bytes())})

    def test_valid_run(self):
        record = harness.run_harness(self.root, "v1", "valid")
        self.assert_common_record(record, "v1", "valid")
        self.assert_exported(record, "v1")
        self.assertEqual(sorted(snapshot(self.run_dir("v1"))),
                         ["artifact/cards.json", "artifact/review.md", "input/candidate.json", "run.json"])

    def test_bad_quote_run_is_failed_with_the_exact_message(self):
        record = harness.run_harness(self.root, "b1", "bad-quote")
        self.assert_common_record(record, "b1", "bad-quote")
        self.assertEqual((record["status"], record["semantic_review"], record["artifact"]),
                         ("failed", "not_applicable", None))
        self.assertEqual(record["error"], BAD_QUOTE_ERROR)
        self.assertEqual(record["steps"], [{"name": "export", "ok": False, "error_type": "ValidationError",
                                            "message": BAD_QUOTE}])
        self.assertEqual(sorted(snapshot(self.run_dir("b1"))), ["input/candidate.json", "run.json"])

    def test_semantic_run_needs_review_and_keeps_the_reversed_answer(self):
        record = harness.run_harness(self.root, "s1", "semantic")
        self.assert_common_record(record, "s1", "semantic")
        self.assert_exported(record, "s1")
        review = self.run_dir("s1").joinpath("artifact", "review.md").read_text(encoding="utf-8")
        self.assertIn(REVERSED_ANSWER, review)

    def test_each_record_gets_its_own_id(self):
        ids = {harness.run_harness(self.root, f"id-{n}", "bad-quote")["id"] for n in range(3)}
        self.assertEqual(len(ids), 3)

    def test_duration_is_the_monotonic_span_in_milliseconds_and_null_while_running(self):
        seen = []

        def look_then_write(path, record):
            seen.append((record["status"], record["duration_seconds"]))
            real_write(path, record)
        real_write = cli.write_json_atomic
        # the wall clock stands still: the duration comes from the monotonic clock alone
        with mock.patch.object(harness, "now_iso", return_value="2026-01-31T08:00:00Z"), \
                mock.patch("time.monotonic", side_effect=[100.0, 102.34567]), \
                mock.patch.object(cli, "write_json_atomic", side_effect=look_then_write):
            record = harness.run_harness(self.root, "timed", "valid")
        self.assertEqual(seen, [("running", None), ("needs_review", 2.346)])
        self.assertEqual(self.stored("timed")["duration_seconds"], 2.346)
        self.assertEqual(record["started_at"], record["finished_at"])

    def test_crlf_sample_is_copied_as_lf(self):
        sample = self.root / "samples" / "valid.json"
        lf = sample.read_bytes()
        sample.write_bytes(lf.replace(b"\n", b"\r\n"))
        record = harness.run_harness(self.root, "crlf", "valid")
        self.assertEqual(record["status"], "needs_review")
        self.assertEqual(record["input"]["sha256"], sha256(lf))


class RunCliTest(HarnessCase):
    def test_each_sample_end_to_end(self):
        expected = {
            "valid": (0, "needs_review", "pending", None),
            "bad-quote": (1, "failed", "not_applicable", BAD_QUOTE_ERROR),
            "semantic": (0, "needs_review", "pending", None),
        }
        for sample, (exit_code, status, semantic_review, error) in expected.items():
            with self.subTest(sample):
                name = f"cli-{sample}"
                code, out, err = self.run_cli("harness.py", "--run", name, "--sample", sample)
                self.assertEqual(code, exit_code, err)
                self.assertNoTraceback(err)
                line = self.assertOneJsonLine(out)
                self.assertEqual({k: line.get(k) for k in ("run", "sample", "status", "semantic_review", "error")},
                                 {"run": name, "sample": sample, "status": status,
                                  "semantic_review": semantic_review, "error": error})
                record = self.stored(name)
                self.assertEqual((record["status"], record["error"]), (status, error))
                self.assertTrue(set(RUN_KEYS) <= set(record))
                self.assertEqual(len(record["context"]["entries"]), 14)
                self.assertTrue(self.run_dir(name).joinpath("input", "candidate.json").is_file())
                self.assertIn(BAD_QUOTE if error else "review.md", err)

    def test_used_name_exits_2_and_leaves_the_old_run_untouched(self):
        harness.run_harness(self.root, "taken", "bad-quote")
        before = snapshot(self.root / "runs")
        code, out, err = self.run_cli("harness.py", "--run", "taken", "--sample", "valid")
        self.assertEqual(code, 2)
        self.assertIn("runs/taken 已存在", err)
        self.assertNoTraceback(err)
        self.assertEqual(snapshot(self.root / "runs"), before)

    def test_used_name_in_process_touches_nothing(self):
        harness.run_harness(self.root, "taken", "valid")
        before = snapshot(self.root / "runs")
        with self.assertRaises(FileExistsError):
            harness.run_harness(self.root, "taken", "semantic")
        self.assertEqual(snapshot(self.root / "runs"), before)

    def test_invalid_names_exit_2_before_anything_is_created(self):
        for name in INVALID_NAMES:
            with self.subTest(name=name):
                with self.assertRaises(ValueError):
                    harness.run_harness(self.root, name, "valid")
                code, out, err = self.main_in_copy(f"--run={name}", "--sample", "valid")
                self.assertEqual(code, 2)
                self.assertIn("运行名", err)
                self.assertEqual(out, "")
                self.assertFalse((self.root / "runs").exists())

    def test_invalid_names_through_the_real_cli(self):
        for name in ("CON", "a..b"):
            with self.subTest(name=name):
                code, out, err = self.run_cli("harness.py", "--run", name, "--sample", "valid")
                self.assertEqual(code, 2)
                self.assertIn(f"运行名「{name}」", err)
                self.assertNoTraceback(err)
        self.assertFalse((self.root / "runs").exists())

    def test_allowed_names(self):
        for name in ("n" * 64, "a.b-c_D9", "CONSOLE", "com10", "x"):
            with self.subTest(name=name):
                record = harness.run_harness(self.root, name, "valid")
                self.assertEqual((record["run"], record["status"]), (name, "needs_review"))
                self.assertTrue(self.run_dir(name).joinpath("run.json").is_file())

    def test_unknown_sample_creates_nothing(self):
        with self.assertRaises(ValueError):
            harness.run_harness(self.root, "x1", "publish")
        self.assertFalse((self.root / "runs").exists())

    def test_usage_errors_exit_2_in_chinese(self):
        cases = [
            (("--run", "x1"), "--sample"),
            (("--run", "x1", "--sample", "other"), "不在可选范围内"),
            (("--check", "--run", "x1"), "不能和"),
            ((), "需要以下参数之一"),
        ]
        for argv, said in cases:
            with self.subTest(argv=argv):
                code, out, err = self.main_in_copy(*argv)
                self.assertEqual(code, 2)
                self.assertIn(said, err)
                self.assertIn("参数错误", err)
        self.assertFalse((self.root / "runs").exists())

    def test_help_lists_the_exit_codes(self):
        code, out, _ = self.main_in_copy("--help")
        self.assertEqual(code, 0)
        flowed = " ".join(out.split())  # argparse wraps the epilog to the terminal's width
        for words in ("0 就绪 / needs_review", "1 未就绪 / failed / needs_human", "2 参数错误、运行名已被使用",
                      "130 被 Ctrl-C 中断"):
            self.assertIn(words, flowed)


class UnexpectedErrorTest(HarnessCase):
    def assert_needs_human(self, record, name, error_type, message, step="export"):
        self.assertEqual(self.stored(name), record)
        self.assertEqual((record["status"], record["semantic_review"]), ("needs_human", "not_applicable"))
        self.assertEqual(record["error"], {"type": error_type, "message": message})
        self.assertEqual(record["steps"][-1], {"name": step, "ok": False, "error_type": error_type,
                                               "message": message})

    def test_exception_in_render_is_needs_human(self):
        with mock.patch.object(export_review, "render_review", side_effect=RuntimeError("渲染失败")):
            record = harness.run_harness(self.root, "boom", "valid")
        self.assert_needs_human(record, "boom", "RuntimeError", "渲染失败")
        self.assertEqual(len(record["steps"]), 1)
        self.assertIsNone(record["artifact"])
        self.assertFalse(self.run_dir("boom").joinpath("artifact").exists())

    def test_exception_in_export_is_recorded_once_without_retry(self):
        with mock.patch.object(export_review, "export_candidate", side_effect=RuntimeError("磁盘出错")) as export:
            record = harness.run_harness(self.root, "boom", "valid")
        self.assertEqual(export.call_count, 1)
        self.assert_needs_human(record, "boom", "RuntimeError", "磁盘出错")

    def test_validation_error_is_recorded_once_without_retry(self):
        with mock.patch.object(export_review, "export_candidate", wraps=export_review.export_candidate) as export:
            record = harness.run_harness(self.root, "once", "bad-quote")
        self.assertEqual((export.call_count, record["status"]), (1, "failed"))

    def test_failed_verification_is_needs_human(self):
        with mock.patch.object(verify_export, "check_artifact", return_value=["问题一", "问题二"]):
            record = harness.run_harness(self.root, "unverified", "valid")
        self.assert_needs_human(record, "unverified", "VerificationError", "问题一 问题二", step="verify")
        self.assertEqual(record["steps"][0], {"name": "export", "ok": True})

    def test_interrupt_leaves_running_record_and_cli_exits_130(self):
        with mock.patch.object(export_review, "export_candidate", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                harness.run_harness(self.root, "cut", "valid")
            code, out, err = self.main_in_copy("--run", "cut2", "--sample", "valid")
        self.assertEqual((self.stored("cut")["status"], self.stored("cut")["finished_at"]), ("running", None))
        self.assertEqual(code, 130)
        self.assertEqual(json.loads(out), {"run": "cut2", "sample": "valid", "status": "interrupted"})
        self.assertIn("已中断", err)

    def test_cli_exporter_crash_on_a_note_that_is_not_utf8(self):
        note = self.root / "project" / "notes" / "A02.md"
        note.write_bytes(note.read_bytes() + b"\xff\xfe\n")
        code, out, err = self.run_cli("harness.py", "--run", "crash", "--sample", "valid")
        self.assertEqual(code, 1)
        self.assertNoTraceback(err)
        line = self.assertOneJsonLine(out)
        self.assertEqual((line["status"], line["error"]["type"]), ("needs_human", "UnicodeDecodeError"))
        self.assertIn("出现意外情况：有一个文件不是 UTF-8 文本（UnicodeDecodeError", err)
        self.assertEqual(self.stored("crash")["error"]["type"], "UnicodeDecodeError")

    # once a traceback and a half-created run: a watched path that cannot be read
    def test_unreadable_watched_file_is_no_traceback_and_no_half_run(self):
        # a watched path that exists but cannot be read (here a folder; on Windows also a locked file)
        (self.root / "AGENTS.md").unlink()
        (self.root / "AGENTS.md").mkdir()
        try:
            code, out, err = self.main_in_copy("--run", "half", "--sample", "valid")
        except OSError as exc:
            self.fail(f"harness --run raised {type(exc).__name__}: {exc}")
        # an unreadable watched file is recorded as "missing", so the run goes on and says so
        self.assertEqual(code, 0)
        record = self.stored("half")
        self.assertEqual(record["context"]["entries"]["AGENTS.md"], "missing")
        self.assertTrue(self.run_dir("half").joinpath("run.json").is_file())


class ConsoleTest(WorkspaceTestCase):
    def test_a_console_without_chinese_still_gets_one_valid_json_line(self):
        candidate = self.root / "odd.json"
        # the message repeats the id: an emoji and an accented letter must survive any console
        candidate.write_text('{"title": "卡片", "cards": [{"note_id": "é😀", "question": "问题", '
                             '"answer": "答案", "quote": "不在原文里的引文"}]}', encoding="utf-8")
        for encoding in ("cp1252", "ascii", "gbk"):
            with self.subTest(encoding=encoding):
                proc = subprocess.run([sys.executable, str(self.root / "verify_export.py"), str(candidate)],
                                      cwd=self.root, capture_output=True, timeout=30,
                                      env=dict(os.environ, PYTHONIOENCODING=encoding))
                self.assertEqual(proc.returncode, 1)
                result = json.loads(proc.stdout.decode(encoding))
                self.assertEqual(result["problems"], ["第 1 张卡：note_id「é😀」不是笔记编号（应形如 A01）。"])
                self.assertNotIn(b"Traceback", proc.stderr)


if __name__ == "__main__":
    unittest.main()


class NameClaimTest(HarnessCase):
    """One name whatever its case; runs/NAME exists only with its input copy and first record."""

    def test_a_name_in_another_case_is_used(self):
        harness.run_harness(self.root, "Demo", "valid")
        before = snapshot(self.root / "runs")
        with self.assertRaises(cli.NameTaken) as caught:
            harness.run_harness(self.root, "demo", "bad-quote")
        self.assertEqual(caught.exception.path, "runs/Demo")
        code, out, err = self.run_cli("harness.py", "--run", "DEMO", "--sample", "semantic")
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err, "runs/Demo 已存在（运行名不区分大小写）：旧证据不会被覆盖，请换一个新的运行名，"
                              f"例如：{PYTHON} harness.py --run DEMO-2 --sample semantic\n")
        self.assertEqual(snapshot(self.root / "runs"), before)
        self.assertEqual(sorted(p.name for p in (self.root / "runs").iterdir()), ["Demo"])

    def test_the_same_name_in_the_same_case_is_refused_without_a_note_on_case(self):
        harness.run_harness(self.root, "demo", "valid")
        code, out, err = self.main_in_copy("--run", "demo", "--sample", "valid")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("runs/demo 已存在：旧证据不会被覆盖，请换一个新的运行名，", err)

    def test_a_suggested_name_never_ends_in_two_digits(self):
        harness.run_harness(self.root, "race-01", "valid")
        code, out, err = self.run_cli("harness.py", "--run", "race-01", "--sample", "valid")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("--run race-01-2 --sample valid", err)

    def test_a_name_that_reads_as_a_loops_child_is_refused(self):
        """runs/LOOP-NN is the shape of a loop's child: beside loop-runs/LOOP (any case, or its claim) a run of that
        name would read as one more attempt of that loop. Every other name, however close, is a run of its own."""
        (self.root / "loop-runs" / "Repair-01").mkdir(parents=True)
        (self.root / "loop-runs" / ".lock-stuck-01").mkdir()
        for name, loop in (("repair-01-03", "Repair-01"), ("REPAIR-01-01", "Repair-01"), ("stuck-01-02", "stuck-01")):
            with self.subTest(name):
                code, out, err = self.main_in_copy("--run", name, "--sample", "valid")
                self.assertEqual((code, out), (2, ""))
                self.assertIn(f"运行名「{name}」像是循环 {loop} 的第 {int(name[-2:])} 次尝试："
                              f"{cli.display_path(self.root / 'loop-runs' / loop)} 已存在", err)
                self.assertIn(f"--run {name}-2 --sample valid", err)  # the suggestion works, below
                self.assertFalse((self.root / "runs").exists())
        for name in ("repair-01-3", "repair-01-003", "repair-02-03", "repair-01-03-2", "repair-01", "lock-stuck-01-02"):
            with self.subTest(name):
                code, out, err = self.main_in_copy("--run", name, "--sample", "valid")
                self.assertEqual((code, json.loads(out)["status"]), (0, "needs_review"), err)
        record = harness.run_harness(self.root, "repair-01-04", "valid")  # the loop's own way: its child
        self.assertEqual(record["status"], "needs_review")

    def test_a_name_being_claimed_is_refused_and_nothing_is_touched(self):
        runs = self.root / "runs"
        runs.mkdir()
        (runs / ".lock-demo").write_bytes(b"")
        code, out, err = self.main_in_copy("--run", "Demo", "--sample", "valid")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("运行名「Demo」正被另一个进程占用（", err)
        self.assertIn("runs/.lock-demo 存在）：请换一个运行名", err)
        self.assertEqual(sorted(p.name for p in runs.iterdir()), [".lock-demo"])

    def test_two_processes_started_at_once_with_names_differing_in_case(self):
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        procs = [subprocess.Popen([sys.executable, str(self.root / "harness.py"), "--run", name, "--sample", "valid"],
                                  cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
                 for name in ("Twin", "twin")]
        results = [(proc.wait(timeout=60), proc.stdout.read().decode(), proc.stderr.read().decode()) for proc in procs]
        for proc in procs:
            proc.stdout.close()
            proc.stderr.close()
        self.assertEqual(sorted(code for code, _, _ in results), [0, 2], results)
        loser = next(result for result in results if result[0] == 2)
        self.assertEqual(loser[1], "")
        self.assertNoTraceback(loser[2])
        names = sorted(p.name for p in (self.root / "runs").iterdir())
        self.assertEqual(len(names), 1, names)
        self.assertIn(names[0], ("Twin", "twin"))
        self.assertEqual(self.stored(names[0])["status"], "needs_review")

    def test_the_run_folder_appears_with_its_input_copy_and_first_record(self):
        seen = []

        def look_then_write(path, record):
            seen.append(sorted(p.relative_to(self.root / "runs").as_posix() for p in (self.root / "runs").rglob("*")))
            real_write(path, record)

        real_write = cli.write_json_atomic
        with mock.patch.object(cli, "write_json_atomic", side_effect=look_then_write):
            harness.run_harness(self.root, "whole", "valid")
        # first write: still in a hidden staging folder, runs/whole does not exist yet
        self.assertFalse(any(path == "whole" or path.startswith("whole/") for path in seen[0]), seen[0])
        self.assertIn("whole/input/candidate.json", seen[1])
        self.assertIn("whole/run.json", seen[1])

    def test_runs_is_a_file(self):
        (self.root / "runs").write_text("不是文件夹", encoding="utf-8")
        code, out, err = self.run_cli("harness.py", "--run", "x", "--sample", "valid")
        self.assertEqual(code, 1)
        self.assertEqual(self.assertOneJsonLine(out), {"run": "x", "sample": "valid", "status": "not_started"})
        self.assertIn("运行没能开始：该是文件夹的地方是一个文件", err)
        self.assertNoTraceback(err)

    def test_a_final_record_that_cannot_replace_the_first_is_said_truly(self):
        final, real_replace = self.run_dir("held") / "run.json", os.replace

        def held_open(src, dst, **kwargs):  # an antivirus holds run.json while the final record replaces it
            if Path(dst) == final:
                raise PermissionError(13, "Access is denied", str(src), None, str(dst))
            return real_replace(src, dst, **kwargs)

        with mock.patch("os.replace", held_open):
            code, out, err = self.main_in_copy("--run", "held", "--sample", "valid")
        self.assertEqual((code, json.loads(out)), (1, {"run": "held", "sample": "valid", "status": "needs_human"}))
        self.assertIn("运行已完成，但记录没能写完：", err)
        self.assertIn("runs/held/run.json", err)
        self.assertIn("运行目录 ", err)
        self.assertNotIn("运行没能开始", err)
        self.assertEqual(self.stored("held")["status"], "running")
        self.assertEqual(sorted(p.name for p in self.run_dir("held").iterdir()), ["artifact", "input", "run.json"])

    def test_bad_characters_are_named_in_the_order_typed(self):
        self.assertIn("含有不允许的字符「张三」", harness.name_problem("张三-repair"))


class InterruptTest(HarnessCase):
    """Ctrl-C (or SIGTERM/SIGHUP) from the first line on: one JSON line, exit 130, no traceback."""

    def test_interrupt_while_python_loads_the_script(self):
        fake = self.root.parent / "fake-stdlib"
        fake.mkdir()
        (fake / "hashlib.py").write_text("raise KeyboardInterrupt\n", encoding="utf-8")
        code, out, err = self.run_cli("harness.py", "--run", "early", "--sample", "valid",
                                      env={"PYTHONPATH": str(fake)})
        self.assertEqual(code, 130)
        self.assertEqual(self.assertOneJsonLine(out), {"run": None, "sample": None, "status": "interrupted"})
        self.assertIn("已中断：harness.py 还在启动，没有创建任何文件。", err)
        self.assertNoTraceback(err)
        self.assertFalse((self.root / "runs").exists())

    def test_interrupt_before_the_run_folder_exists_names_no_record(self):
        nothing_yet = {"run": None, "sample": None, "status": "interrupted"}
        asked = {"run": "cut", "sample": "valid", "status": "interrupted"}
        cases = ((cli.ChineseArgumentParser, "parse_args", nothing_yet), (harness, "fingerprint", asked),
                 (cli, "write_json_atomic", asked))  # the last: inside the hidden staging folder
        for owner, name, line in cases:
            with self.subTest(name):
                with mock.patch.object(owner, name, side_effect=KeyboardInterrupt):
                    code, out, err = self.main_in_copy("--run", "cut", "--sample", "valid")
                self.assertEqual((code, json.loads(out)), (130, line))
                self.assertIn("已中断：", err)
                self.assertNotIn("run.json", err)
                self.assertEqual(list((self.root / "runs").iterdir()) if (self.root / "runs").exists() else [], [])

    def test_interrupt_after_the_final_record_shows_its_status(self):
        with mock.patch.object(harness, "status_text", side_effect=KeyboardInterrupt):
            code, out, err = self.main_in_copy("--run", "late", "--sample", "bad-quote")
        self.assertEqual(code, 130)
        self.assertEqual(json.loads(out), {"run": "late", "sample": "bad-quote", "status": "failed"})
        self.assertIn("运行已经结束并记录在", err)
        self.assertEqual(self.stored("late")["status"], "failed")

    def test_sigterm_during_the_export_is_handled_like_ctrl_c(self):
        driver = self.root / "terminate_driver.py"
        driver.write_text(
            "import os, signal\nimport cli, export_review, harness\n"
            "def terminate(*args, **kwargs):\n    os.kill(os.getpid(), signal.SIGTERM)\n"
            "export_review.export_candidate = terminate\n"
            "cli.run(harness.main)\n", encoding="utf-8")
        skip_on_windows(self, "os.kill(SIGTERM) 会直接结束进程，处理函数来不及运行")
        code, out, err = self.run_cli("terminate_driver.py", "--run", "term", "--sample", "valid")
        self.assertEqual(code, 130, err)
        self.assertEqual(self.assertOneJsonLine(out), {"run": "term", "sample": "valid", "status": "interrupted"})
        self.assertIn("已被终止：", err)
        self.assertIn("run.json 可能仍是 running", err)
        self.assertNoTraceback(err)
        self.assertEqual(self.stored("term")["status"], "running")


class ShapeTest(unittest.TestCase):
    def test_no_parameter_exists_for_the_loop(self):
        import inspect
        self.assertEqual(list(inspect.signature(harness.run_harness).parameters), ["root", "name", "sample"])
        self.assertEqual(list(inspect.signature(harness.fingerprint).parameters), ["root", "files"])


class FromAnotherFolderTest(HarnessCase):
    def test_paths_are_typed_and_printed_from_the_current_folder(self):
        elsewhere = self.root.parent
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")

        def run(*args):
            proc = subprocess.run([sys.executable, *args], cwd=elsewhere, capture_output=True, text=True,
                                  encoding="utf-8", env=env, timeout=60)
            return proc.returncode, proc.stdout, proc.stderr

        code, out, err = run("lesson-14/harness.py", "--run", "far", "--sample", "valid")
        self.assertEqual(code, 0, err)
        self.assertIn("请阅读 lesson-14/runs/far/artifact/review.md", err)
        self.assertTrue((elsewhere / "lesson-14/runs/far/artifact/review.md").is_file())
        code, out, err = run("lesson-14/verify_harness.py", "lesson-14/runs/far")
        self.assertEqual((code, json.loads(out)["result"]), (0, "pass"), err)
        code, out, err = run("lesson-14/export_review.py", "lesson-14/samples/semantic.json", "--out", "mine")
        self.assertEqual(code, 0, err)
        self.assertIn("已导出到 mine", err)
        code, out, err = run("lesson-14/verify_export.py", "mine")
        self.assertEqual((code, json.loads(out)["result"]), (0, "pass"), err)
        code, out, err = run("lesson-14/verify_export.py", "nowhere.json")
        self.assertEqual(code, 2)
        self.assertIn("找不到 nowhere.json", err)
