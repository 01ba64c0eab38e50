"""Earlier releases of the course: which version of the workspace a loop's recorded course files come from.

Part of verify_loop's class check. A loop records the hash of every course file it ran on (its context); when
they differ from the teacher's copy, the loop is either from an edited workspace or from an earlier release of
the course. classroom/releases.json keeps, for each release, the combined fingerprint of its course files
(verifier/records.py's combined_fingerprint of the files the loop watches), the release's name and the schema its
loop writes (entries made before the table kept it hold the name alone: their loops wrote loop-run/3 or older),
and, since then, the hash of each of its course files (`files`), so --pack can name a file edited before any loop
ran (classroom/pitfalls.py). A loop whose files match one of them was made with an older version of the workspace:
judged on those files (what they change is a person's call, never "altered"), every other rule as for today's; a
record of another schema than its release's loop writes had its context swapped.

Making a release adds its line (docs/loop/TEACHER.md「发布新版本」):

    python3 -m classroom.releases 2027-03-01

prints what it added. What it shares: verifier/records.py (the watched files, their hashing, the fingerprint).
"""
import json
import sys
from pathlib import Path

from verifier.records import LOOP_FILES, SCHEMA, combined_fingerprint, file_sha256

TABLE = Path(__file__).resolve().with_name("releases.json")
_known = None


def known():
    """{fingerprint: release} of every earlier release (read once): {"release": name, "schema": its loop's}, or the
    name alone for the entries made before the table kept the schema."""
    global _known
    if _known is None:
        try:
            _known = json.loads(TABLE.read_text(encoding="utf-8"))["releases"]
        except (OSError, ValueError, KeyError, TypeError):  # a workspace without the table knows no release
            _known = {}
    return _known


def names():
    """{fingerprint: release name} of every earlier release, in the table's order, whatever form its entry has."""
    return {fingerprint: release["release"] if type(release) is dict else release
            for fingerprint, release in known().items()}


def release_of(entries):
    """(name, schema its loop writes or None when the table does not say) of the earlier release whose course files
    are ENTRIES (a loop record's context entries: path -> sha256), or None."""
    if type(entries) is not dict or not all(type(key) is str and type(value) is str for key, value in entries.items()):
        return None
    release = known().get(combined_fingerprint(entries))
    if type(release) is dict and type(release.get("release")) is str:
        return release["release"], release.get("schema") if type(release.get("schema")) is str else None
    return (release, None) if type(release) is str else None


def newest_files():
    """(name, course files: path -> sha256) of the newest release in the table whose loop writes today's schema, when
    its entry keeps its files (entries made by main() do): once a release added its line, this version's own. None
    when that entry keeps none, or no entry is of today's schema (a version whose line is not added yet)."""
    for release in reversed(list(known().values())):
        if type(release) is dict and release.get("schema") == SCHEMA:
            files = release.get("files")
            kept = type(files) is dict and set(files) == set(LOOP_FILES) and all(type(v) is str for v in files.values())
            return (release["release"], files) if kept and type(release["release"]) is str else None
    return None


def current_fingerprint(root):
    return combined_fingerprint({rel: file_sha256(Path(root) / rel) for rel in LOOP_FILES})


def main(argv):
    """Adds the course files of this workspace to the table under the name ARGV[0] (e.g. a date)."""
    if len(argv) != 1 or not argv[0].strip():
        sys.stderr.write("用法：python3 -m classroom.releases 版本名称（例如发布日期 2027-03-01）\n")
        return 2
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    files = {rel: file_sha256(TABLE.parent.parent / rel) for rel in LOOP_FILES}
    fingerprint = combined_fingerprint(files)
    table["releases"].pop(fingerprint, None)  # made again: the newest line
    table["releases"][fingerprint] = {"release": argv[0].strip(), "schema": SCHEMA, "files": files}
    TABLE.write_bytes((json.dumps(table, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    print(json.dumps({"release": argv[0].strip(), "schema": SCHEMA, "fingerprint": fingerprint}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
