"""Benchmark of `verify_loop.py --class` at the sizes a course meets; not a test.

    python3 tests/bench_class.py [--students N] [--zips N] [--rounds N] [--dir DIR]

Builds, in a temporary folder: a copy of the workspace (the teacher's reference), one student's six lesson
cases run there with loop_lab.py, then two classes of that student's records, each copy given identifiers and
monotonic readings of its own (as if every student had run the lesson on a machine of their own): N students
(default 2000) with one loop each (repair, two child runs) as folders, and M students (default 300) with all six
loops, each handed in as a ZIP named as Moodle, Canvas (a note beside it), Blackboard (its receipt) or nobody
names it, with a grading worksheet listing them all. Times whole `verify_loop.py --class CLASS --report --csv`
processes (the ZIP class with `--feedback`, `--roster`, `--grades` and `--feedback-zip` too), bytecode cache on,
after a warm-up: wall seconds, CPU seconds and the peak memory of the check (its worker processes
included). Targets: both classes under 10 s on a 2-core machine, the ZIP class under 200 MB. Prints one JSON
line with the figures (and the machine's load, which slows them all); exit 0 when the targets are met and every
submission got the row it should, 1 otherwise, and on stderr (in Chinese) each figure beside its target and which were
missed (a slowdown, not an error, unless a row was wrong). The checkout is not written to.
"""
import sys  # noqa: E402 (the next three lines run on any Python: the workspace's cli.py refuses an old one)
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402
import json
import os
import secrets
import shutil
import statistics
import subprocess
import tempfile
import time
import zipfile

from tests.support import benchmark_verdict

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".git", "runs", "loop-runs", "__pycache__", ".ci"}
CASES = (("repair-01", "repair"), ("stuck-01", "stuck"), ("budget-01", "repair", "--max-attempts", "1"),
         ("time-01", "repair", "--max-seconds", "0"), ("semantic-01", "semantic"),
         ("permission-01", "permission"))
TARGET_SECONDS, TARGET_MB = 10.0, 200
# Runs COMMAND (its stdout into the file named first) and prints the peak memory of the check in KiB: on Linux
# the resident sets of the process and its worker processes summed, sampled every 20 ms; elsewhere the largest
# single process (resource), or None without either.
MEASURE = r"""
import json, os, subprocess, sys, time
def tree(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as file:
            return [pid] + [p for child in file.read().split() for p in tree(int(child))]
    except OSError:
        return []
def rss(pid):
    try:
        with open(f"/proc/{pid}/status") as file:
            return next(int(line.split()[1]) for line in file if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0
with open(sys.argv[1], "wb") as out:
    proc = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, sum(rss(pid) for pid in tree(proc.pid)))
        time.sleep(0.02)
try:
    import resource
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = used.ru_utime + used.ru_stime
    if not os.path.isdir("/proc"):
        peak = used.ru_maxrss // (1024 if sys.platform == "darwin" else 1)
except ImportError:
    cpu, peak = None, peak or None
print(json.dumps({"code": proc.returncode, "peak_kib": peak, "cpu": cpu}))
"""


def one_student(folder):
    """The teacher's workspace copy, and one student's loop-runs/ and runs/ with the six cases."""
    teacher = folder / "teacher"
    shutil.copytree(ROOT, teacher, ignore=lambda _, names: [n for n in names if n in SKIP or n.endswith(".pyc")])
    student = folder / "one-student"
    shutil.copytree(teacher, student)
    for name, scenario, *budget in CASES:
        subprocess.run([sys.executable, "loop_lab.py", "--run", name, "--scenario", scenario, *budget],
                       cwd=student, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return teacher, student


def records_of(student, loops):
    """{relative path: bytes} of LOOPS and their child runs."""
    files = {}
    for top, names in (("loop-runs", loops), ("runs", [p.name for p in (student / "runs").iterdir()
                                                       if p.name.rsplit("-", 1)[0] in loops])):
        for name in names:
            for path in (student / top / name).rglob("*"):
                if path.is_file():
                    files[path.relative_to(student).as_posix()] = path.read_bytes()
    return files


def own_ids(files, number):
    """The same records as student NUMBER's own: identifiers of their own, and every monotonic reading a few
    milliseconds later (another machine's run differs so; under a second, which the wall clock's whole seconds
    would notice), or the class check names them all as copies."""
    later = (number % 900 + 1) / 1000
    return {rel: own_record(data, later) if rel.endswith(("/loop.json", "/run.json")) else data
            for rel, data in files.items()}


def own_record(data, later):
    record = json.loads(data)
    record["id"] = secrets.token_hex(16)
    for entry, field in [(record, "elapsed_seconds"),  # a child's duration is a span: it stays
                         *((segment, "elapsed_seconds") for segment in record.get("segments", [])),
                         *((attempt["decision"], "decided_offset") for attempt in record.get("attempts", [])
                           if attempt.get("decision")),
                         *((attempt, field) for attempt in record.get("attempts", [])
                           for field in ("started_offset", "finished_offset"))]:
        if type(entry.get(field)) in (int, float):
            entry[field] = round(entry[field] + later, 3)
    return (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def folder_class(folder, files, students):
    for number in range(1, students + 1):
        for rel, data in own_ids(files, number).items():
            path = folder / f"student-{number:04d}" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return folder


def zip_class(folder, files, students):
    """STUDENTS ZIPs named as the platforms name them, in turn: Moodle (a folder per participant), Canvas (with a
    note beside the ZIP), Blackboard (with its receipt) and a plain ZIP; and a grading worksheet listing them all."""
    folder.mkdir(parents=True)
    sheet = ["Identifier,Full name,Status,Grade,Maximum Grade,Last modified (grade),Feedback comments"]
    for number in range(1, students + 1):
        name, user = f"学生{number:03d}", f"s{number:03d}"
        target = [folder / f"{name}_{100000 + number}_assignsubmission_file_" / f"{name}.zip",
                  folder / f"{user}_{5000 + number}_{90000 + number}_{name}.zip",
                  folder / f"作业14_{user}_attempt_2026-12-01-10-00-00_{name}.zip", folder / f"{name}.zip"][number % 4]
        target.parent.mkdir(exist_ok=True)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for rel, data in sorted(own_ids(files, number).items()):
                archive.writestr(rel, data)
        if number % 4 == 1:
            (folder / f"{user}_{5000 + number}_{90001 + number}_说明.txt").write_bytes("说明".encode("utf-8"))
        if number % 4 == 2:
            (folder / f"作业14_{user}_attempt_2026-12-01-10-00-00.txt").write_bytes(f"Name: {name} ({user})\n".encode())
        shown = user if number % 4 == 1 else name  # Canvas shows the login: the worksheet lists each as shown
        sheet.append(f"Participant {100000 + number},{shown},Submitted,,100.00,-,")
    (folder.parent / "worksheet.csv").write_bytes(("\r\n".join(sheet) + "\r\n").encode("utf-8"))
    return folder


def timed_class(teacher, class_dir, out, feedback):
    """(seconds, peak MiB or None, stdout rows) of one whole class check (with the feedback files if FEEDBACK)."""
    command = [sys.executable, str(teacher / "verify_loop.py"), "--class", str(class_dir),
               "--report", str(out / "report.md"), "--csv", str(out / "class.csv")]
    command += ["--feedback", str(out / "feedback"), "--roster", str(class_dir.parent / "worksheet.csv"),
                "--grades", str(out / "grades.csv"), "--feedback-zip", str(out / "feedback.zip")] if feedback else []
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(out / "rows.jsonl"), *command], cwd=teacher,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    measured = json.loads(proc.stdout)
    rows = (out / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    peak, cpu = measured["peak_kib"], measured["cpu"]
    return seconds, peak and round(peak / 1024, 1), [json.loads(line) for line in rows], cpu and round(cpu, 2)


def measure(teacher, class_dir, rounds, expected, feedback):
    out = class_dir.parent / f"{class_dir.name}-out"
    out.mkdir()
    timed_class(teacher, class_dir, out, feedback)  # warm-up: fills the bytecode cache and the file cache
    runs = [timed_class(teacher, class_dir, out, feedback) for _ in range(rounds)]
    rows = runs[0][2]
    peaks = [peak for _, peak, _, _ in runs if peak is not None]
    cpus = [cpu for *_, cpu in runs if cpu is not None]
    return {"students": len(rows), "seconds": round(statistics.median(run[0] for run in runs), 2),
            "cpu_seconds": statistics.median(cpus) if cpus else None, "peak_mb": max(peaks) if peaks else None,
            "rows_as_expected": all(row["result"] == expected for row in rows)}


def load():
    """The machine's 1-minute load average where there is one: other work slows every figure down."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def main():
    parser = cli.ChineseArgumentParser(description="全班核对（verify_loop.py --class）的基准：生成两个班，计时（不是测试）。")
    parser.add_argument("--students", type=int, default=2000, help="每人一个循环、交文件夹的学生数（默认 2000）")
    parser.add_argument("--zips", type=int, default=300, help="每人六个循环、交 ZIP 的学生数（默认 300）")
    parser.add_argument("--rounds", type=int, default=3, help="每个班核对的遍数（默认 3）")
    parser.add_argument("--dir", default=None, help="临时文件夹放在哪里（例如 /dev/shm）")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-class-", dir=args.dir) as tmp:
        teacher, student = one_student(Path(tmp))
        folders = folder_class(Path(tmp) / "folders", records_of(student, ["repair-01"]), args.students)
        zips = zip_class(Path(tmp) / "zips", records_of(student, [name for name, *_ in CASES]), args.zips)
        figures = {"one_loop_each": measure(teacher, folders, args.rounds, "incomplete", feedback=False),
                   "six_loops_as_zips": measure(teacher, zips, args.rounds, "pass", feedback=True),
                   "cpus": os.cpu_count(), "load": load(), "target_seconds": TARGET_SECONDS, "target_mb": TARGET_MB}
    print(json.dumps(figures, ensure_ascii=False))
    verdict, code = benchmark_verdict(*missed_targets(figures))
    for line in [*figure_lines(figures), verdict]:
        print(line, file=sys.stderr)
    return code


CLASSES = {"one_loop_each": "每人一个循环的班（文件夹）", "six_loops_as_zips": "每人六个循环的班（ZIP，带名单、成绩和反馈）"}


def figure_lines(figures):
    """Each class's figures beside the targets, in Chinese."""
    for key, what in CLASSES.items():
        got = figures[key]
        memory = "" if got["peak_mb"] is None else f"，内存峰值 {got['peak_mb']} MB"
        yield f"{what}：{got['students']} 位学生，{got['seconds']} 秒（目标 < {TARGET_SECONDS} 秒）{memory}"
    yield f"机器：{figures['cpus']} 个处理器，负载 {figures['load']}（负载高时每个数字都会变大）"


def missed_targets(figures):
    """([figures over their targets], [classes whose rows were not what every student should get]), in Chinese."""
    missed = [f"{CLASSES[key]} {figures[key]['seconds']} 秒 ≥ {TARGET_SECONDS} 秒" for key in CLASSES
              if figures[key]["seconds"] >= TARGET_SECONDS]
    six = figures["six_loops_as_zips"]
    if six["peak_mb"] is not None and six["peak_mb"] >= TARGET_MB:
        missed.append(f"内存峰值 {six['peak_mb']} MB ≥ {TARGET_MB} MB")
    wrong = [f"{CLASSES[key]}有学生的结果不是应有的那一个" for key in CLASSES if not figures[key]["rows_as_expected"]]
    return missed, wrong


if __name__ == "__main__":
    sys.exit(main())
