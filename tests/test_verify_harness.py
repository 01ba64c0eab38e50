"""Tests of verify_harness.py: a harness run re-judged from its files (docs/harness/TASK.md).

Runs are made in-process with harness.run_harness() in the temporary workspace copy, then
tampered with one way each; the verdict comes from verify_run() and from main() in-process
(exit code, one JSON line, no exception), and a few cases run the real CLI as subprocesses.
A run's files as they really arrive (transports, hostile files) are tested in tests/test_verify_harness_files.py,
which imports its helpers from here.
"""
import contextlib
import inspect
import json
import os
import shutil
import signal
import sys
import unittest
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import export_review
import harness
import verify_export
import verify_harness
from tests.support import WorkspaceTestCase
from tests.test_export_review import run_main, sha256
from tests.test_verify_export import imported_names, modules_loaded_by

BAD_QUOTE = "第 1 张卡：引文不在对应笔记原文中。"
ONE_FAILED_STEP = "failed 的运行应只有一个失败的 export 步骤，且 error 与它一致（ValidationError）。"
INPUT_EDITED = "输入副本 input/candidate.json 的哈希与记录不符：输入被改动或删除了。"
OTHER_QUOTE_ERROR = "第 2 张卡：引文不在对应笔记原文中。"


def replace_once(rel, old, new):
    """A tamper: the first OLD in RUN/REL becomes NEW."""
    def tamper(run_dir):
        path = run_dir / rel
        data = path.read_bytes()
        assert old in data, (rel, old)
        path.write_bytes(data.replace(old, new, 1))
    return tamper


def write(rel, text):
    def tamper(run_dir):
        (run_dir / rel).write_bytes(text.encode("utf-8"))
    return tamper


def delete(rel):
    return lambda run_dir: (run_dir / rel).unlink()


def change_record(change):
    """A tamper: CHANGE(record, run_dir) applied to run.json, saved as the harness saves it."""
    def tamper(run_dir):
        path = run_dir / "run.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        change(record, run_dir)
        path.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return tamper


def both(*tampers):
    def tamper(run_dir):
        for each in tampers:
            each(run_dir)
    return tamper


def reword_error(record, _):
    record["error"]["message"] = record["steps"][0]["message"] = OTHER_QUOTE_ERROR


def retype_error(record, _):
    record["error"]["type"] = record["steps"][0]["error_type"] = "RuntimeError"


def rehash(rel, key):
    """Records the current sha256 of RUN/REL under record[KEY...] (a forger covering their edit)."""
    def change(record, run_dir):
        digest = sha256((run_dir / rel).read_bytes())
        if key == "input":
            record["input"]["sha256"] = digest
        else:
            record["artifact"][key] = digest
    return change


def copy_semantic_input(run_dir):
    (run_dir / "input" / "candidate.json").write_bytes(
        (run_dir.parent.parent / "samples" / "semantic.json").read_bytes())


def rename_folder(run_dir):
    return run_dir.rename(run_dir.with_name("moved"))


# (what was done, sample of the run, the tamper, a problem the verifier must report)
TAMPERS = [
    ("edited review.md", "valid", replace_once("artifact/review.md", "先根据问题检索".encode(), "先根据问题生成".encode()),
     "产物 artifact/review.md 被改动或删除了（与 run.json 记录的哈希不符）。"),
    ("edited cards.json", "semantic", replace_once("artifact/cards.json", b'"A07"', b'"A05"'),
     "产物 artifact/cards.json 被改动或删除了（与 run.json 记录的哈希不符）。"),
    ("deleted review.md", "valid", delete("artifact/review.md"),
     "产物 artifact/review.md 被改动或删除了（与 run.json 记录的哈希不符）。"),
    ("deleted cards.json", "semantic", delete("artifact/cards.json"),
     "产物 artifact/cards.json 被改动或删除了（与 run.json 记录的哈希不符）。"),
    ("review.md edited and its hash in run.json too", "valid",
     both(replace_once("artifact/review.md", b"\n", b"\n\n"),
          change_record(rehash("artifact/review.md", "review.md"))),
     "artifact/review.md 与按 cards.json 和笔记重新生成的内容不同：第 3 行是「」，应为「共 4 张卡片，引用 4 篇笔记。」"),
    ("failed run with an artifact folder", "bad-quote", lambda run_dir: (run_dir / "artifact").mkdir(),
     "failed 的运行不应留下产物：artifact 应为空。"),
    ("status needs_review -> failed", "valid", change_record(lambda r, _: r.update(status="failed")),
     "failed 的运行没有产物可审，semantic_review 应为 not_applicable。"),
    ("status -> failed and semantic_review -> not_applicable", "valid",
     change_record(lambda r, _: r.update(status="failed", semantic_review="not_applicable")), ONE_FAILED_STEP),
    ("status failed -> needs_review", "bad-quote",
     change_record(lambda r, _: r.update(status="needs_review", semantic_review="pending")),
     "needs_review 的运行应有 export 与 verify 两个成功步骤且没有 error。"),
    ("unknown status", "valid", change_record(lambda r, _: r.update(status="passed")),
     "run.json 的 status 'passed' 不是 harness 的状态。"),
    ("semantic review marked done", "semantic", change_record(lambda r, _: r.update(semantic_review="approved")),
     "needs_review 的运行 semantic_review 必须是 pending：机械通过不等于内容正确。"),
    ("error message edited in error and step", "bad-quote", change_record(reword_error),
     f"独立规则没有复现记录的失败「{OTHER_QUOTE_ERROR}」（独立规则给出：{BAD_QUOTE}）。"),
    ("error message edited in error only", "bad-quote",
     change_record(lambda r, _: r["error"].update(message=OTHER_QUOTE_ERROR)), ONE_FAILED_STEP),
    ("error message edited in the step only", "bad-quote",
     change_record(lambda r, _: r["steps"][0].update(message=OTHER_QUOTE_ERROR)), ONE_FAILED_STEP),
    ("error type changed in both places", "bad-quote", change_record(retype_error), ONE_FAILED_STEP),
    ("edited input copy of a needs_review run", "valid", replace_once("input/candidate.json", b"RAG", b"LLM"),
     INPUT_EDITED),
    ("edited input copy of a failed run", "bad-quote", replace_once("input/candidate.json", b"RAG", b"LLM"),
     INPUT_EDITED),
    ("input copy replaced and its hash in run.json too", "valid",
     both(copy_semantic_input, change_record(rehash("input/candidate.json", "input"))),
     "输入副本与运行时 samples/valid.json 的指纹不符：sample 标签被改动过，或输入不是这个样例。"),
    ("broken run.json", "valid", replace_once("run.json", b'"schema"', b'"schema'),
     "run.json 不是合法的 JSON（第 "),
    ("missing run.json", "valid", delete("run.json"), "run.json 不存在：这不是一个完整的运行目录。"),
    ("sample relabelled valid -> bad-quote", "valid", change_record(lambda r, _: r.update(sample="bad-quote")),
     "输入副本与运行时 samples/bad-quote.json 的指纹不符：sample 标签被改动过，或输入不是这个样例。"),
    ("sample relabelled semantic -> valid", "semantic", change_record(lambda r, _: r.update(sample="valid")),
     "输入副本与运行时 samples/valid.json 的指纹不符：sample 标签被改动过，或输入不是这个样例。"),
    ("run.json nested too deep to read", "valid", write("run.json", "[" * 100000),
     "run.json 嵌套超过 64 层：harness 写的记录是 UTF-8 的标准 JSON，记录被改动或损坏了，不能采信。"),
    ("cards.json holding a 5000-digit number", "valid", write("artifact/cards.json", "1" * 5000),
     "cards.json 或 review.md 不是合法的 UTF-8/JSON：产物被改动过。"),
    ("run renamed in run.json", "valid", change_record(lambda r, _: r.update(run="other")),
     "run.json 记录的运行名 'other' 与目录名 'tampered-"),
    ("run folder renamed", "bad-quote", rename_folder, "与目录名 'moved' 不符。"),
    ("actual_api_calls 1", "valid", change_record(lambda r, _: r.update(actual_api_calls=1)),
     "run.json 的 actual_api_calls 是 1：本任务不调用模型，只能是 0。"),
    ("actual_api_calls false", "valid", change_record(lambda r, _: r.update(actual_api_calls=False)),
     "run.json 的 actual_api_calls 是 False：本任务不调用模型，只能是 0。"),
    ("status needs_review -> needs_human", "valid", change_record(lambda r, _: r.update(status="needs_human")),
     "status 是 needs_human，但记录里没有出错的步骤与 error：状态与记录不符。"),
    ("status failed -> running", "bad-quote", change_record(lambda r, _: r.update(status="running")),
     "status 是 running，但记录已有 error、finished_at 或 duration_seconds：状态被改动过。"),
    ("steps key removed", "valid", change_record(lambda r, _: r.pop("steps")),
     "run.json 缺少必需的字段（应为 harness-run/2 记录）。"),
    ("id removed", "valid", change_record(lambda r, _: r.pop("id")), "run.json 缺少必需的字段（应为 harness-run/2 记录）。"),
    ("id in capitals", "valid", change_record(lambda r, _: r.update(id=r["id"].upper())),
     "不是 32 位小写十六进制：harness 建立记录时随机生成它，记录被改动过。"),
    ("id shortened", "bad-quote", change_record(lambda r, _: r.update(id=r["id"][:31])), "不是 32 位小写十六进制"),
    ("unknown schema", "valid", change_record(lambda r, _: r.update(schema="harness-run/3")),
     "run.json 的 schema 是 'harness-run/3'，应为 harness-run/2。"),
    ("negative duration", "valid", change_record(lambda r, _: r.update(duration_seconds=-0.5)),
     "run.json 的 duration_seconds -0.5 不是不小于 0 的秒数"),
    ("duration as text", "bad-quote", change_record(lambda r, _: r.update(duration_seconds="1.2")),
     "run.json 的 duration_seconds '1.2' 不是不小于 0 的秒数"),
    ("duration missing on a finished run", "valid", change_record(lambda r, _: r.update(duration_seconds=None)),
     "run.json 的 duration_seconds None 不是不小于 0 的秒数"),
    ("duration true", "valid", change_record(lambda r, _: r.update(duration_seconds=True)),
     "run.json 的 duration_seconds True 不是不小于 0 的秒数"),
]


class VerifyCase(WorkspaceTestCase):
    def make_run(self, sample, name=None):
        name = name or f"{sample}-1"
        harness.run_harness(self.root, name, sample)
        return self.root / "runs" / name

    def verdict(self, run_dir):
        """verify_run() and main() in-process agree; returns verify_run()'s result."""
        result = verify_harness.verify_run(run_dir)
        code, out, err = run_main(verify_harness.main, str(run_dir))
        line = json.loads(out)
        self.assertEqual(code, 0 if result["result"] == "pass" else 1)
        self.assertEqual((line["result"], line["status"]), (result["result"], result["status"]))
        self.assertEqual(len(out.splitlines()), 1)
        return result

    def assert_fails(self, run_dir, problem, changed_files=()):
        result = self.verdict(run_dir)
        self.assertEqual(result["result"], "fail", result)
        self.assertTrue(any(problem in p for p in result["problems"]), (problem, result["problems"]))
        self.assertEqual(result["changed_files"], list(changed_files))
        return result


class PassTest(VerifyCase):
    def test_three_sample_runs_pass_through_the_cli(self):
        for sample, status in (("valid", "needs_review"), ("bad-quote", "failed"), ("semantic", "needs_review")):
            with self.subTest(sample):
                run_dir = self.make_run(sample)
                # one given as an absolute path: the workspace is found from the run folder
                target = run_dir if sample == "semantic" else f"runs/{run_dir.name}"
                code, out, err = self.run_cli("verify_harness.py", target)
                self.assertEqual(code, 0, err)
                self.assertEqual(self.assertOneJsonLine(out),
                                 {"result": "pass", "run": run_dir.name, "status": status})
                self.assertIn("核对通过", err)
                self.assertNoTraceback(err)

    def test_verify_run_result_shape(self):
        result = self.verdict(self.make_run("bad-quote"))
        self.assertEqual(result, {"result": "pass", "run": "bad-quote-1", "status": "failed",
                                  "problems": [], "changed_files": [], "notes": [], "clock_step": None})

    def test_run_json_resaved_with_bom_and_crlf_still_passes(self):
        run_dir = self.make_run("valid")
        path = run_dir / "run.json"
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
        result = self.verdict(run_dir)
        self.assertEqual((result["result"], len(result["notes"])), ("pass", 2))
        self.assertTrue(result["notes"][0].startswith("行尾被转换过（CRLF）：run.json 的换行整体从 LF 变成了 CRLF"))
        self.assertTrue(result["notes"][1].startswith("文件开头被加了 BOM：run.json"))


class TamperTest(VerifyCase):
    def test_each_tampered_run_fails(self):
        for number, (label, sample, tamper, problem) in enumerate(TAMPERS, 1):
            with self.subTest(label):
                run_dir = self.make_run(sample, f"tampered-{number:02}")
                run_dir = tamper(run_dir) or run_dir
                self.assert_fails(run_dir, problem)

    def test_recorded_fingerprint_edited(self):
        run_dir = self.make_run("valid")
        change_record(lambda r, _: r["context"]["entries"].update({"AGENTS.md": "0" * 64}))(run_dir)
        self.assert_fails(run_dir, "请找到与记录对应的版本再核对",
                          ["run.json 的 context.fingerprint（与逐文件哈希不符）"])


class ChangedFilesTest(VerifyCase):
    def test_runs_checked_against_a_course_are_judged_against_its_readings(self):
        runs = [self.make_run("valid"), self.make_run("bad-quote")]
        course = verify_harness.Course(self.root)  # the reference: the course files as they are now
        agents = self.root / "AGENTS.md"
        agents.write_bytes(agents.read_bytes() + "# 参照之后的改动\n".encode())
        for run_dir in runs:
            self.assertEqual(verify_harness.verify_run(run_dir, course)["result"], "pass")
        self.assertEqual(verify_harness.verify_run(runs[0])["changed_files"], ["AGENTS.md"])  # read afresh

    def test_changed_watched_file_is_named(self):
        for sample in ("valid", "bad-quote"):
            with self.subTest(sample):
                run_dir = self.make_run(sample)
                agents = self.root / "AGENTS.md"
                agents.write_bytes(agents.read_bytes() + f"# 改动 {sample}\n".encode())
                result = self.assert_fails(run_dir, "这些文件在运行之后变了：AGENTS.md。", ["AGENTS.md"])
                self.assertEqual(len(result["problems"]), 1)

    def test_changed_note_is_named_and_the_artifact_rechecked(self):
        run_dir = self.make_run("valid")
        note = self.root / "project" / "notes" / "A03.md"
        note.write_bytes(note.read_bytes() + "\n新增的一段。\n".encode())
        result = self.assert_fails(run_dir, "project/notes/A03.md", ["project/notes/A03.md"])
        self.assertIn("笔记 A03 已与导出时不同（或已不存在）：引文需要按现在的笔记重新核对。", result["problems"])

    def test_crlf_conversion_is_not_a_change(self):
        run_dir = self.make_run("valid")
        for rel in ("AGENTS.md", "harness.py", "samples/semantic.json"):
            path = self.root / rel
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        self.assertEqual(self.verdict(run_dir)["result"], "pass")

    # once a traceback: a cited note that cannot be read or decoded
    def test_note_no_longer_utf8_fails_instead_of_crashing(self):
        run_dir = self.make_run("valid")
        note = self.root / "project" / "notes" / "A01.md"
        note.write_bytes(note.read_bytes() + b"\xff\xfe\n")
        try:
            result = verify_harness.verify_run(run_dir)
        except UnicodeDecodeError as exc:
            self.fail(f"verify_run raised {type(exc).__name__}")
        self.assertEqual((result["result"], result["changed_files"]), ("fail", ["project/notes/A01.md"]))


class NeedsHumanTest(VerifyCase):
    def test_needs_human_run(self):
        with mock.patch.object(export_review, "render_review", side_effect=RuntimeError("渲染失败")):
            run_dir = self.make_run("valid")
        result = self.verdict(run_dir)
        self.assertEqual((result["result"], result["status"]), ("needs_human", "needs_human"))
        self.assertIn("RuntimeError：渲染失败", result["problems"][0])
        code, out, err = self.run_cli("verify_harness.py", f"runs/{run_dir.name}")
        self.assertEqual(code, 1)
        self.assertEqual(self.assertOneJsonLine(out)["result"], "needs_human")
        self.assertIn("需要人工核查", err)
        self.assertNoTraceback(err)

    def test_running_record(self):
        with mock.patch.object(export_review, "export_candidate", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                self.make_run("valid", "cut")
        result = self.verdict(self.root / "runs" / "cut")
        self.assertEqual((result["result"], result["status"]), ("needs_human", "running"))
        self.assertIn("仍是 running", result["problems"][0])


class CliTest(VerifyCase):
    def test_tampered_runs_exit_1_without_traceback(self):
        edited = self.make_run("valid")
        review = edited / "artifact" / "review.md"
        review.write_bytes(review.read_bytes() + b" ")
        broken = self.make_run("bad-quote")
        (broken / "run.json").write_bytes("{\"schema\": ".encode("utf-8"))
        for run_dir in (edited, broken):
            with self.subTest(run_dir.name):
                code, out, err = self.run_cli("verify_harness.py", f"runs/{run_dir.name}")
                self.assertEqual(code, 1)
                line = self.assertOneJsonLine(out)
                self.assertEqual(list(line), ["result", "run", "status", "problems", "changed_files"])
                self.assertEqual(line["result"], "fail")
                self.assertIn("核对失败", err)
                self.assertIn("问题：", err)
                self.assertNoTraceback(err)

    def test_not_a_directory_exits_2(self):
        run_dir = self.make_run("valid")
        for target, said in ((self.root / "runs" / "nothing", "不存在"), (run_dir / "run.json", "不是运行目录")):
            with self.subTest(target=target.name):
                code, out, err = run_main(verify_harness.main, str(target))
                self.assertEqual((code, out), (2, ""))
                self.assertIn(said, err)
        code, out, err = self.run_cli("verify_harness.py", "runs/nothing")
        self.assertEqual(code, 2)
        self.assertIn("runs/nothing 不存在：请给出 runs/ 下的某个运行目录，例如 runs/valid-01。", err)
        self.assertNoTraceback(err)

    # once a traceback: a failed run whose input copy was deleted
    def test_failed_run_with_deleted_input_copy_fails_instead_of_crashing(self):
        run_dir = self.make_run("bad-quote")
        (run_dir / "input" / "candidate.json").unlink()
        try:
            result = verify_harness.verify_run(run_dir)
        except OSError as exc:
            self.fail(f"verify_run raised {type(exc).__name__}: {exc}")
        self.assertEqual(result["result"], "fail")
        self.assertIn("输入副本 input/candidate.json 的哈希与记录不符：输入被改动或删除了。", result["problems"])

    # once a wrong verdict: the run folder given as `.` from inside it
    def test_run_given_as_dot_from_inside_its_folder_passes(self):
        run_dir = self.make_run("valid")
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(run_dir)
        result = verify_harness.verify_run(Path("."))
        self.assertEqual((result["result"], result["run"], result["problems"]), ("pass", "valid-1", []))


if __name__ == "__main__":
    unittest.main()


def as_harness_saves(path, record):
    path.write_bytes((json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


class ForgedArtifactTest(VerifyCase):
    """A forger who rewrites the artifact consistently (every hash recomputed) is caught by the input copy."""

    def add_a_card(self, run_dir, change=lambda cards: cards.append(dict(cards[0], answer="多出来的一张卡。"))):
        # the forger's tool is the exporter itself: cards.json, review.md and their hashes all agree
        folder, candidate = run_dir / "artifact", json.loads((run_dir / "input" / "candidate.json").read_bytes())
        change(candidate["cards"])
        notes = export_review.validate(candidate, self.root / "project" / "notes")
        review = export_review.render_review(candidate, notes)
        (folder / "review.md").write_bytes(review.encode("utf-8"))
        (folder / "cards.json").write_bytes(export_review.build_cards_json(candidate, notes, review).encode("utf-8"))
        record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        record["artifact"] = {name: sha256((folder / name).read_bytes()) for name in ("cards.json", "review.md")}
        as_harness_saves(run_dir / "run.json", record)
        return candidate, record

    def test_an_artifact_folder_taken_away_is_said_once(self):
        """Not a problem per missing file, nor "not exported from this input": there is no artifact at all."""
        run_dir = self.make_run("valid")
        (run_dir / "artifact").rename(self.root / "artifact-backup")
        result = self.assert_fails(run_dir, "产物文件夹 artifact/ 不存在")
        self.assertEqual(len(result["problems"]), 1, result["problems"])

    def test_extra_card_with_every_hash_recomputed_fails(self):
        run_dir = self.make_run("valid")
        self.add_a_card(run_dir)
        self.assertEqual(verify_export.check_artifact(run_dir / "artifact", self.root / "project" / "notes"), [])
        self.assert_fails(run_dir, "产物里的卡片与输入副本不一致：产物不是由这份输入导出的。")

    def test_a_card_answered_otherwise_with_every_hash_recomputed_fails(self):
        run_dir = self.make_run("valid")
        self.add_a_card(run_dir, lambda cards: cards[0].update(answer="另一种回答。"))  # as many cards as the input
        self.assertEqual(verify_export.check_artifact(run_dir / "artifact", self.root / "project" / "notes"), [])
        self.assert_fails(run_dir, "产物里的卡片与输入副本不一致：产物不是由这份输入导出的。")

    def test_extra_card_with_the_input_copy_forged_too_fails(self):
        run_dir = self.make_run("valid")
        candidate, record = self.add_a_card(run_dir)
        data = json.dumps(candidate, ensure_ascii=False, indent=2).encode("utf-8")
        (run_dir / "input" / "candidate.json").write_bytes(data)
        record["input"]["sha256"] = sha256(data)
        as_harness_saves(run_dir / "run.json", record)
        self.assert_fails(run_dir, "输入副本与运行时 samples/valid.json 的指纹不符")


class StrictRecordTest(VerifyCase):
    def test_duplicate_key_in_run_json_fails_naming_file_and_key(self):
        cases = (("status", b'{\n  "schema"', b'{\n  "status": "needs_review",\n  "schema"'),
                 ("AGENTS.md", b'"AGENTS.md": ', b'"AGENTS.md": "0", "AGENTS.md": '))
        for key, old, new in cases:
            with self.subTest(key):
                run_dir = self.make_run("bad-quote", f"dup-{len(key)}")
                replace_once("run.json", old, new)(run_dir)
                result = self.verdict(run_dir)
                self.assertEqual(result["result"], "fail")
                self.assertEqual(len(result["problems"]), 1)
                self.assertTrue(result["problems"][0].endswith(
                    f"run.json 里同一个对象中的键 {key} 出现了两次：记录被改动过，不能采信。"), result["problems"])

    def test_duplicate_key_in_cards_json_fails(self):
        run_dir = self.make_run("valid")
        replace_once("artifact/cards.json", b'  "title": ', b'  "title": "x", "title": ')(run_dir)
        change_record(rehash("artifact/cards.json", "cards.json"))(run_dir)
        self.assert_fails(run_dir, "artifact/cards.json 里同一个对象中的键 title 出现了两次：产物被改动过，不能采信。")

    def test_timestamps_must_be_times_in_order(self):
        cases = (
            ({"started_at": "2026-13-01T00:00:00Z"}, "run.json 的 started_at '2026-13-01T00:00:00Z' 不是形如"),
            ({"finished_at": "2026-01-01 00:00:00"}, "run.json 的 finished_at '2026-01-01 00:00:00' 不是形如"),
            ({"finished_at": None}, "run.json 的 finished_at None 不是形如"),
            ({"started_at": 20260101}, "run.json 的 started_at 20260101 不是形如"),
        )
        for number, (change, problem) in enumerate(cases):
            with self.subTest(change):
                run_dir = self.make_run("bad-quote", f"times-{number}")
                change_record(lambda r, _: r.update(change))(run_dir)
                self.assert_fails(run_dir, problem)

    def test_same_second_start_and_finish_passes(self):
        run_dir = self.make_run("valid")
        change_record(lambda r, _: r.update(finished_at=r["started_at"]))(run_dir)
        self.assertEqual(self.verdict(run_dir)["result"], "pass")


class ExactRecordTest(VerifyCase):
    """Edits that keep every recorded hash right: the record must still be what the harness writes."""

    def test_steps_must_be_written_as_the_harness_writes_them(self):
        def set_ok(index, value):
            return lambda record, _: record["steps"][index].update(ok=value)
        cases = (("valid", set_ok(0, 1), "run.json 的 steps 第 1 项的 ok 是 1：只能是 true 或 false"),
                 ("valid", set_ok(1, "true"), 'run.json 的 steps 第 2 项的 ok 是 "true"'),
                 ("bad-quote", set_ok(0, 0), "run.json 的 steps 第 1 项的 ok 是 0"),
                 ("valid", lambda record, _: record["steps"][1].update(message="已通过"),
                  "run.json 的 steps 第 2 项成功了却带着 message：只有失败的步骤才记录错误"),
                 ("bad-quote", lambda record, _: record["steps"][0].pop("message"),
                  "run.json 的 steps 第 1 项失败了，却没有字符串 error_type 与 message"))
        for number, (sample, change, problem) in enumerate(cases):
            with self.subTest(problem):
                run_dir = self.make_run(sample, f"steps-{number}")
                change_record(change)(run_dir)
                self.assert_fails(run_dir, problem)

    def test_nan_or_infinity_anywhere_in_run_json_fails(self):
        for number, constant in enumerate(("NaN", "Infinity", "-Infinity")):
            with self.subTest(constant):
                run_dir = self.make_run("valid", f"constant-{number}")
                replace_once("run.json", b'{\n  "schema"', f'{{\n  "note": [{constant}],\n  "schema"'.encode())(run_dir)
                result = self.assert_fails(run_dir, f"run.json 含有 {constant}（标准 JSON 没有这样的数）")
                self.assertEqual(len(result["problems"]), 1)


@contextlib.contextmanager
def fails_instead_of_hanging(test, seconds=5):
    """A check that opened a FIFO would wait forever: after SECONDS the test fails instead."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def hung(signum, frame):
        raise AssertionError(f"the check hung for {seconds} s: it opened something it must not open")
    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


START = datetime(2026, 1, 31, 8, 0, 0)


def timed(wall_seconds, duration):
    """A record change: the run started at START, finished WALL_SECONDS later by the wall clock, DURATION by
    the monotonic clock."""
    def change(record, _):
        record.update(started_at=f"{START:%Y-%m-%dT%H:%M:%SZ}", duration_seconds=duration,
                      finished_at=f"{START + timedelta(seconds=wall_seconds):%Y-%m-%dT%H:%M:%SZ}")
    return change


class ClockTest(VerifyCase):
    """The wall clock against the monotonic duration: a step an honest machine makes is for a person."""

    def test_wall_and_monotonic_clocks_that_agree_pass(self):
        run_dir = self.make_run("valid")
        for wall, duration in ((0, 0.012), (3, 1.5), (1, 2.9), (3600, 3599.2)):
            with self.subTest(wall=wall, duration=duration):
                change_record(timed(wall, duration))(run_dir)
                self.assertEqual(verify_harness.verify_run(run_dir)["result"], "pass")

    def test_one_clock_step_is_needs_human_naming_the_step(self):
        cases = ((-3, 2.0, "被往回调了约 5 秒（例如 NTP 校时）"), (7, 2.0, "电脑休眠过约 5 秒，或系统时钟被往前调了这么多"),
                 (-3598, 2.0, "被往回调了约 3600 秒"), (3602, 2.0, "电脑休眠过约 3600 秒"),
                 (3601, 1.234, "单调时钟量得运行用了 1.234 秒：在这两次读数之间电脑休眠过约 3600 秒"),
                 (-5 * 365 * 86400, 0.5, "被往回调了约 157680000 秒"))
        run_dir = self.make_run("bad-quote")
        for wall, duration, said in cases:
            with self.subTest(wall=wall):
                change_record(timed(wall, duration))(run_dir)
                result = self.verdict(run_dir)
                self.assertEqual(result["result"], "needs_human", result)
                self.assertEqual(len(result["problems"]), 1)
                self.assertIn(said, result["problems"][0])
                self.assertIn("诚实的机器也会这样", result["problems"][0])

    def test_a_clock_step_beside_an_edit_still_fails(self):
        run_dir = self.make_run("valid")
        change_record(timed(-5, 1.0))(run_dir)
        replace_once("artifact/review.md", "检索".encode(), "生成".encode())(run_dir)
        result = verify_harness.verify_run(run_dir)
        self.assertEqual(result["result"], "fail")
        self.assertTrue(any("往回调了" in p for p in result["problems"]), result["problems"])

    def test_a_running_record_with_a_duration_fails(self):
        with mock.patch.object(export_review, "export_candidate", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                self.make_run("valid", "cut")
        run_dir = self.root / "runs" / "cut"
        change_record(lambda r, _: r.update(duration_seconds=0.5))(run_dir)
        result = verify_harness.verify_run(run_dir)
        self.assertEqual(result["result"], "fail")
        self.assertIn("记录已有 error、finished_at 或 duration_seconds", result["problems"][0])


class OldSchemaTest(VerifyCase):
    def test_a_record_of_an_older_workspace_is_for_a_person(self):
        run_dir = self.make_run("valid")

        def older(record, _):
            record.update(schema="harness-run/1")
            del record["id"], record["duration_seconds"]
        change_record(older)(run_dir)
        result = self.verdict(run_dir)
        self.assertEqual(result["result"], "needs_human")
        self.assertEqual(len(result["problems"]), 1)
        self.assertIn("run.json 的 schema 是 harness-run/1：由旧版本的工作区生成", result["problems"][0])


class TypedNameTest(VerifyCase):
    def test_a_run_typed_in_another_case_is_checked_by_its_own_name(self):
        # Windows and macOS open runs/VALID-1 for runs/valid-1; on this file system the opening is simulated
        run_dir = self.make_run("valid")
        typed = run_dir.with_name("VALID-1")
        real_isdir = os.path.isdir
        opens = lambda path: os.fspath(path) == os.fspath(typed) or real_isdir(path)  # noqa: E731
        with mock.patch("os.path.isdir", side_effect=opens):
            code, out, err = run_main(verify_harness.main, str(typed))
        self.assertEqual((code, json.loads(out)), (0, {"result": "pass", "run": "valid-1", "status": "needs_review"}))


class LinkTest(VerifyCase):
    def link(self, target, link):
        try:
            os.symlink(target, link, target_is_directory=target.is_dir())
        except (OSError, NotImplementedError) as exc:  # Windows without the right to make links
            self.skipTest(f"这里不能创建符号链接：{exc}")

    def moved_away(self, path):
        """PATH moved out of the workspace; a link to it put in its place."""
        elsewhere = self.root.parent / "elsewhere" / path.name
        elsewhere.parent.mkdir(exist_ok=True)
        path.rename(elsewhere)
        self.link(elsewhere, path)

    def test_linked_run_folder_or_evidence_fails(self):
        for number, rel in enumerate(("", "input", "artifact", "run.json", "input/candidate.json",
                                      "artifact/review.md", "artifact/cards.json")):
            with self.subTest(rel or "the run folder"):
                run_dir = self.make_run("valid", f"linked-{number}")
                self.moved_away(run_dir / rel if rel else run_dir)
                result = self.verdict(run_dir)
                self.assertEqual(result["result"], "fail")
                self.assertEqual(len(result["problems"]), 1)
                self.assertIn("是符号链接或目录联接：运行证据必须是运行目录里真实的文件和文件夹", result["problems"][0])
                (self.root.parent / "elsewhere").rename(self.root.parent / f"elsewhere-{number}")

    def test_a_junction_fails_where_the_platform_reports_one(self):
        run_dir = self.make_run("valid")
        is_input = lambda path: os.fspath(path).endswith("input")  # noqa: E731
        with mock.patch.object(os.path, "isjunction", side_effect=is_input, create=True):
            self.assertIn("input 是符号链接或目录联接", verify_harness.verify_run(run_dir)["problems"][0])

    def test_a_junction_on_python_3_11_windows(self):
        run_dir = self.make_run("valid")
        real_lstat = os.lstat

        def lstat(path):  # what Windows reports for a junction: a mount-point reparse tag
            result = real_lstat(path)
            if os.fspath(path).endswith("artifact"):
                return SimpleNamespace(st_mode=result.st_mode, st_reparse_tag=0xA0000003)
            return result

        with mock.patch.object(os.path, "isjunction", None, create=True), mock.patch.object(os, "lstat", lstat):
            self.assertIn("artifact 是符号链接或目录联接", verify_harness.verify_run(run_dir)["problems"][0])


class CourseRootTest(VerifyCase):
    def reference_copy(self):
        reference = self.root.parent / "teacher"
        shutil.copytree(self.root, reference, ignore=shutil.ignore_patterns("runs"))
        return reference

    def test_a_run_made_with_edited_course_files_fails_against_the_reference(self):
        reference = self.reference_copy()
        sample = self.root / "samples" / "bad-quote.json"
        sample.write_text(sample.read_text(encoding="utf-8").replace("然后再让模型", "然后让模型"),
                          encoding="utf-8")
        run_dir = self.make_run("bad-quote")
        self.assertEqual(verify_harness.verify_run(run_dir)["result"], "pass")  # honest against its own files
        result = verify_harness.verify_run(run_dir, course_root=reference)
        self.assertEqual((result["result"], result["changed_files"]), ("fail", ["samples/bad-quote.json"]))
        # against a reference copy nothing changed "after the run": the run used other files
        self.assertTrue(any(problem.startswith("运行时用的这些文件与参照的课程文件（") and
                            "不同：samples/bad-quote.json。运行用的不是课程原样的文件" in problem
                            for problem in result["problems"]), result["problems"])
        self.assertFalse(any("在运行之后变了" in problem for problem in result["problems"]))

    def test_the_reference_notes_are_the_ones_checked(self):
        reference = self.reference_copy()
        run_dir = self.make_run("valid")
        self.assertEqual(verify_harness.verify_run(run_dir, course_root=reference)["result"], "pass")
        note = reference / "project" / "notes" / "A02.md"
        note.write_bytes(note.read_bytes() + b"\n")
        result = verify_harness.verify_run(run_dir, course_root=reference)
        self.assertEqual(result["changed_files"], ["project/notes/A02.md"])
        self.assertIn("笔记 A02 已与导出时不同（或已不存在）：引文需要按现在的笔记重新核对。", result["problems"])
        self.assertEqual(verify_harness.verify_run(run_dir)["result"], "pass")


class IndependenceTest(unittest.TestCase):
    def test_verify_harness_imports_nothing_of_what_it_verifies(self):
        checked = {"harness", "export_review", "loop_lab"}
        self.assertEqual(imported_names("verify_harness.py") & checked, set())
        self.assertEqual(modules_loaded_by("verify_harness") & checked, set())
        outside_stdlib = imported_names("verify_harness.py") - set(sys.stdlib_module_names)
        self.assertLessEqual(outside_stdlib, {"cli", "verify_export"})

    def test_no_parameter_exists_for_the_loop(self):
        self.assertEqual(list(inspect.signature(verify_harness.verify_run).parameters), ["run_dir", "course_root"])
