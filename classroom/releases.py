"""Earlier releases of the course: which version of the workspace a loop's recorded course files come from.

Part of verify_loop's class check. A loop records the hash of every course file it ran on (its context); when
they differ from the teacher's copy, the loop is either from an edited workspace or from an earlier release of
the course. classroom/releases.json keeps, for each release, the combined fingerprint of its course files
(verifier/records.py's combined_fingerprint of the files the loop watches) and the release's name; a loop whose files
match one of them was made with an older version of the workspace: a person's call, never "altered".

Making a release adds its line (docs/loop/TEACHER.md「发布新版本」):

    python3 -m classroom.releases 2027-03-01

prints what it added. What it shares: verifier/records.py (the watched files, their hashing, the fingerprint).
"""
import json
import sys
from pathlib import Path

from verifier.records import LOOP_FILES, combined_fingerprint, file_sha256

TABLE = Path(__file__).resolve().with_name("releases.json")
_known = None


def known():
    """{fingerprint: release name} of every earlier release (read once)."""
    global _known
    if _known is None:
        try:
            _known = json.loads(TABLE.read_text(encoding="utf-8"))["releases"]
        except (OSError, ValueError, KeyError, TypeError):  # a workspace without the table knows no release
            _known = {}
    return _known


def release_of(record):
    """The name of the earlier release whose course files a loop RECORD ran on, or None."""
    context = record.get("context") if type(record) is dict else None
    entries = context.get("entries") if type(context) is dict else None
    if type(entries) is not dict or not all(type(key) is str and type(value) is str for key, value in entries.items()):
        return None
    return known().get(combined_fingerprint(entries))


def current_fingerprint(root):
    return combined_fingerprint({rel: file_sha256(Path(root) / rel) for rel in LOOP_FILES})


def main(argv):
    """Adds the course files of this workspace to the table under the name ARGV[0] (e.g. a date)."""
    if len(argv) != 1 or not argv[0].strip():
        sys.stderr.write("用法：python3 -m classroom.releases 版本名称（例如发布日期 2027-03-01）\n")
        return 2
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    fingerprint = current_fingerprint(TABLE.parent.parent)
    table["releases"][fingerprint] = argv[0].strip()
    TABLE.write_bytes((json.dumps(table, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    print(json.dumps({"release": argv[0].strip(), "fingerprint": fingerprint}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
