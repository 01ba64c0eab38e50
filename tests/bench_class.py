"""Benchmark of `verify_loop.py --class` over a class of 40 students x 6 loops; not a test.

    python3 tests/bench_class.py [--students N] [--rounds N] [--dir DIR]

Builds the class in a temporary folder: a copy of the workspace (the teacher's reference), the
lesson's six cases run there once with loop_lab.py, then that student's loop-runs/ and runs/
copied into SUBMISSIONS/student-01 ... Times whole `verify_loop.py --class SUBMISSIONS` processes
(with --report and --csv), with Python's default bytecode cache after a warm-up and without it
(PYTHONDONTWRITEBYTECODE=1). Target: under 3 s on a 2-core machine. Prints one JSON line with the
figures; exit 0 when the target is met and every student passed, 1 otherwise. The checkout is not
written to; `--dir DIR` puts the temporary folder in DIR.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".git", "runs", "loop-runs", "__pycache__", ".ci"}
CASES = (("repair-01", "repair"), ("stuck-01", "stuck"), ("budget-01", "repair", "--max-attempts", "1"),
         ("time-01", "repair", "--max-seconds", "0"), ("semantic-01", "semantic"),
         ("permission-01", "permission"))
TARGET_SECONDS = 3.0


def build_class(folder, students):
    """The teacher's workspace copy and SUBMISSIONS with STUDENTS copies of one student's six loops."""
    teacher = folder / "teacher"
    shutil.copytree(ROOT, teacher, ignore=lambda _, names: [n for n in names if n in SKIP or n.endswith(".pyc")])
    student = folder / "one-student"
    shutil.copytree(teacher, student)
    for name, scenario, *budget in CASES:
        subprocess.run([sys.executable, "loop_lab.py", "--run", name, "--scenario", scenario, *budget],
                       cwd=student, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    submissions = folder / "submissions"
    for number in range(1, students + 1):
        for records in ("loop-runs", "runs"):
            shutil.copytree(student / records, submissions / f"student-{number:02d}" / records)
    return teacher, submissions


def timed_class(teacher, submissions, env):
    command = [sys.executable, str(teacher / "verify_loop.py"), "--class", str(submissions),
               "--report", str(submissions.parent / "report.md"), "--csv", str(submissions.parent / "class.csv")]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=teacher, env=env, capture_output=True, text=True, encoding="utf-8")
    seconds = time.perf_counter() - start
    passed = proc.stdout.count('"result": "pass"')
    return seconds, passed


def environment(bytecode_cache):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not bytecode_cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def main():
    parser = argparse.ArgumentParser(description="Times verify_loop.py --class over a generated class.")
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-class-", dir=args.dir) as tmp:
        teacher, submissions = build_class(Path(tmp), args.students)
        figures = {"students": args.students, "loops": args.students * len(CASES)}
        all_passed = True
        for label, cache in (("seconds_cached", True), ("seconds_uncached", False)):
            env = environment(cache)
            timed_class(teacher, submissions, env)  # warm-up: fills the bytecode cache, reads the files once
            runs = [timed_class(teacher, submissions, env) for _ in range(args.rounds)]
            figures[label] = round(statistics.median(seconds for seconds, _ in runs), 3)
            all_passed = all_passed and all(passed == args.students for _, passed in runs)
        figures["all_passed"] = all_passed
        figures["target_seconds"] = TARGET_SECONDS
    print(json.dumps(figures))
    return 0 if all_passed and figures["seconds_cached"] < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
