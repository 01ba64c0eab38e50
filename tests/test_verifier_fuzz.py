"""No traceback from any verifier, on any record or name (fixed seed, bounded time).

Every field of a loop.json, a run.json and a cards.json, at every depth, gets hostile values in turn (numbers
too large for a float, infinite ones read from 1e400, huge integers, lone surrogates, NUL, a wrong type, deep or
empty containers): verify_loop (one loop with --explain), verify_harness and verify_export must each answer with
one JSON line and a result, never a traceback, and the loop check never by its last-resort safety net. Names that
are not UTF-8 under runs/ and loop-runs/ go through the one-loop check, --class and --pack.
"""
import contextlib
import io
import json
import os
import random
import shutil
import sys
import unittest
from unittest import mock

import cli
import verify_export
import verify_harness
import verify_loop
from classroom import check as class_check
from classroom import hand_in
from tests.support import not_on_windows
from tests.test_verify_loop import VerifyTestCase

SEED = 20261221
PER_FIELD = 3  # hostile values tried in each field: every field is reached, the run stays within seconds
HOSTILE = ("1e400", "-1e400", "1e-400", "123456789012345678901234567890", "-1", "0", "2.5", "true", "null",
           '"\\ud800"', '"x\\udfff"', '"\\u0000"', '""', '"' + "长" * 3000 + '"', "[]", "{}", "[[[]]]",
           '{"\\ud800": 1}', '["runs/f-01"]', '"../../x"')
SAFETY_NETS = ("无法解释", "有无法逐轮说明")


def paths(value, prefix=()):
    """The path of VALUE itself and of everything inside it."""
    yield prefix
    children = value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
    for key, child in children:
        yield from paths(child, prefix + (key,))


def with_raw(record, path, raw):
    """RECORD's JSON text with the value at PATH replaced by the JSON text RAW."""
    marker = "\u0001hostile\u0001"
    copy = json.loads(json.dumps(record))
    if not path:
        return raw
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = marker
    return json.dumps(copy, ensure_ascii=False, indent=2).replace(json.dumps(marker, ensure_ascii=False), raw)


def called(main, *args):
    """main(ARGS) in-process: (exit code, stdout, stderr); an exception escapes as it would as a traceback."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


class HostileFieldsTest(VerifyTestCase):
    def fuzz(self, path_of, checks):
        """Each field of the record at PATH_OF, PER_FIELD hostile values each, through CHECKS (name, main, args)."""
        original = path_of.read_bytes()
        self.addCleanup(path_of.write_bytes, original)
        record, rng = json.loads(original), random.Random(SEED)
        for path in paths(record):
            for raw in rng.sample(HOSTILE, PER_FIELD):
                path_of.write_bytes(with_raw(record, path, raw).encode("utf-8"))
                for name, main, args in checks:
                    with self.subTest(field=path, value=raw[:20], check=name):
                        code, out, err = called(main, *args)
                        self.assertIn(code, (0, 1), err[-2000:])
                        self.assertIn(json.loads(out.splitlines()[-1])["result"], ("pass", "fail", "needs_human"))
                        self.assertFalse([net for net in SAFETY_NETS if net in out + err], err[-2000:])

    def test_every_field_of_loop_json(self):
        self.fuzz(self.record_path("r"), [("loop", verify_loop.main, [self.root / "loop-runs" / "r", "--explain"])])

    def test_every_field_of_run_json(self):
        self.fuzz(self.root / "runs" / "r-02" / "run.json",
                  [("harness", verify_harness.main, [self.root / "runs" / "r-02"]),
                   ("loop", verify_loop.main, [self.root / "loop-runs" / "r"])])

    def test_every_field_of_cards_json(self):
        self.fuzz(self.root / "runs" / "r-02" / "artifact" / "cards.json",
                  [("export", verify_export.main, [self.root / "runs" / "r-02" / "artifact"])])

    def test_the_known_tracebacks(self):
        """verify_harness on a duration of 1e400 (OverflowError) and a context entry with a lone surrogate."""
        path = self.root / "runs" / "r-01" / "run.json"
        self.keep(path)
        text = path.read_text(encoding="utf-8")
        record = json.loads(text)
        for raw in ('"duration_seconds": 1e400', '"duration_seconds": ' + "9" * 400):
            with self.subTest(raw=raw[:30]):
                path.write_bytes(text.replace(f'"duration_seconds": {record["duration_seconds"]}', raw).encode("utf-8"))
                code, out, err = called(verify_harness.main, self.root / "runs" / "r-01")
                self.assertEqual((code, json.loads(out)["result"]), (1, "fail"), err)
        path.write_bytes(text.replace('"AGENTS.md": "', '"AGENTS.md": "\\ud800').encode("utf-8"))
        code, out, err = called(verify_harness.main, self.root / "runs" / "r-01")
        self.assertEqual((code, json.loads(out)["result"]), (1, "fail"), err)
        self.assertIn("\\ud800", json.loads(out)["problems"][0])


@not_on_windows("文件名必须是 UTF-8")
@unittest.skipIf(sys.platform == "darwin", "macOS 上的文件名必须是 UTF-8")
class NonUtf8NamesTest(VerifyTestCase):
    def test_names_that_are_not_utf8_through_every_command(self):
        for top, name in ((b"runs", b"r-0\xff"), (b"runs", b"\xff\xfe-01"), (b"loop-runs", b"caf\xe9")):
            folder = os.path.join(os.fsencode(self.root), top, name)
            os.mkdir(folder)
            self.addCleanup(shutil.rmtree, folder)
            with open(os.path.join(folder, b"run.json" if top == b"runs" else b"loop.json"), "wb") as file:
                file.write(b'{"schema": "x"}')
            out_zip = self.root / f"out-{len(name)}-{top[0]}.zip"
            with self.subTest(name=name), contextlib.chdir(self.root), \
                    mock.patch.object(class_check, "HERE", self.root):
                for args in ([self.root / "loop-runs" / "r", "--explain"], [os.fsdecode(folder)],
                             ["--class", self.root.parent]):
                    code, out, err = called(verify_loop.main, *args)
                    self.assertIn(code, (0, 1, 2), err[-2000:])
                code, out, err = called(lambda argv: hand_in.pack(cli.ChineseArgumentParser(), str(out_zip),
                                                                  root=self.root), "")
                self.assertEqual(code, 2, err[-2000:])  # refused before anything is written, the name said
                self.assertIn("不是 UTF-8", err)
                self.assertFalse(out_zip.exists())


if __name__ == "__main__":
    unittest.main()
