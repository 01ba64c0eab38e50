"""Benchmark of the lesson-14 loop commands as ratios to a baseline; not a test.

    python3 tests/bench_loop.py [--rounds N] [--dir DIR] [--skip-many] [--skip-submission]

B is the whole-process time of `python3 -c "import argparse, hashlib, json, pathlib"`, measured
interleaved with the commands (B, loop, verify, B, loop, verify ...) so machine load affects all
alike; medians are compared. Targets: `loop_lab.py --scenario repair` <= 1.5 B and `verify_loop.py`
on that run <= 1.2 B, with Python's default bytecode cache (PYTHONDONTWRITEBYTECODE removed, a
warm-up run fills the cache, as on a learner's machine from the second run on). The same figures
without the cache (PYTHONDONTWRITEBYTECODE=1, as this course's test environment sets) are reported
beside them, for information. Then one `verify_loop.py` call over 100 loop folders (<= 0.3 s) and
over 200 (at most 2.2x that), and one submission of 3000 loops (500 of each lesson case, made by
copying six real loops under new names and ids): `verify_loop.py` over all of them and `--class` on
that one student, each under 5 s. Beside those wall times, the CPU time the command used (where the
platform says it), which other load on the machine changes less. Everything runs in a temporary copy
of the workspace; the checkout is not written to. `--dir DIR` puts that copy in DIR (e.g. /dev/shm) to
separate the programs' own cost from a slow disk's (the loop writes its records durably: each is flushed to
disk before it replaces the last). Prints one JSON line with the figures, and on stderr each figure beside its
target, in Chinese, then which targets were missed; exit 0 when every target is met and every loop checked
passes, 1 otherwise (said: a slowdown, not an error, unless a result was wrong).
"""
import sys  # noqa: E402 (the next three lines run on any Python: the workspace's cli.py refuses an old one)
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402
import contextlib
import io
import json
import os
import secrets
import shutil
import statistics
import subprocess
import tempfile
import time

from tests.support import benchmark_verdict

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".git", "runs", "loop-runs", "__pycache__", ".ci"}
BASELINE = [sys.executable, "-c", "import argparse, hashlib, json, pathlib"]
TARGETS = {"loop_ratio": 1.5, "verify_ratio": 1.2, "verify_100_s": 0.3, "scale_200_over_100": 2.2,
           "submission_3000_s": 5}
# the lesson's six cases as loop_lab options: (scenario, options)
CASES = (("repair", {}), ("stuck", {}), ("repair", {"max_attempts": 1}), ("repair", {"max_seconds": 0}),
         ("semantic", {}), ("permission", {}))


def timed(command, cwd, env):
    return timed_with_cpu(command, cwd, env)[0]


def timed_with_cpu(command, cwd, env):
    """(wall seconds, CPU seconds of the command's process or None where the platform does not say)."""
    try:
        import resource
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
    except ImportError:  # Windows
        resource = None
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    if resource is None:
        return wall, None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def environment(bytecode_cache):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not bytecode_cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def ratios(root, rounds, bytecode_cache):
    """Medians of B, loop_lab repair and verify_loop on that run, measured interleaved."""
    env, py, tag = environment(bytecode_cache), sys.executable, "c" if bytecode_cache else "n"
    # warm-up: with the cache this compiles the .pyc files once, as a learner's second run finds them
    timed([py, "loop_lab.py", "--run", f"warm-{tag}", "--scenario", "repair"], root, env)
    timed([py, "verify_loop.py", f"loop-runs/warm-{tag}"], root, env)
    base, loop, verify = [], [], []
    for i in range(rounds):
        base.append(timed(BASELINE, root, env))
        loop.append(timed([py, "loop_lab.py", "--run", f"bench-{tag}-{i}", "--scenario", "repair"], root, env))
        verify.append(timed([py, "verify_loop.py", f"loop-runs/bench-{tag}-{i}"], root, env))
    b, loop_s, verify_s = (statistics.median(times) for times in (base, loop, verify))
    return {"baseline_s": round(b, 4), "loop_repair_s": round(loop_s, 4), "loop_ratio": round(loop_s / b, 2),
            "verify_one_s": round(verify_s, 4), "verify_ratio": round(verify_s / b, 2)}


def make_loops(root, names):
    """Real loops made in-process, quietly: NAMES maps a loop name to (scenario, options)."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    import loop_lab
    with contextlib.redirect_stderr(io.StringIO()):
        for name, (scenario, options) in names.items():
            loop_lab.run_loop(root, name, scenario, **options)


def many_loops(root):
    """One verify_loop call over 100 and over 200 loop folders (made in-process: not what is timed)."""
    make_loops(root, {f"many-{i:03d}": ("repair", {}) for i in range(200)})
    env, py = environment(True), sys.executable
    folders = sorted(f"loop-runs/{p.name}" for p in (root / "loop-runs").iterdir() if p.name.startswith("many-"))
    many_100 = [timed_with_cpu([py, "verify_loop.py", *folders[:100]], root, env) for _ in range(5)]
    many_200 = [timed_with_cpu([py, "verify_loop.py", *folders], root, env) for _ in range(5)]
    check = subprocess.run([py, "verify_loop.py", *folders], cwd=root, env=env, capture_output=True, text=True)
    best_100, best_200 = min(wall for wall, _ in many_100), min(wall for wall, _ in many_200)
    return {"verify_100_s": round(best_100, 3), "verify_200_s": round(best_200, 3),
            "scale_200_over_100": round(best_200 / best_100, 2), "verify_100_cpu_s": least_cpu(many_100),
            "passed_of_200": check.stdout.count('"result": "pass"')}


def least_cpu(runs):
    """The least CPU time of RUNS ((wall, cpu) pairs): what the program costs, whatever else the machine runs."""
    cpu = [seconds for _, seconds in runs if seconds is not None]
    return round(min(cpu), 3) if cpu else None


def copy_loop(workspace, template, name):
    """loop-runs/TEMPLATE and its children copied as loop NAME, every record with a fresh id."""
    def renamed(path, new_path):
        record = json.loads(path.read_text(encoding="utf-8").replace(template, name))
        record["id"] = secrets.token_hex(16)
        new_path.write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (workspace / "loop-runs" / name).mkdir()
    renamed(workspace / "loop-runs" / template / "loop.json", workspace / "loop-runs" / name / "loop.json")
    for child in sorted((workspace / "runs").glob(f"{template}-[0-9][0-9]")):
        new_child = workspace / "runs" / child.name.replace(template, name)
        shutil.copytree(child, new_child)
        renamed(child / "run.json", new_child / "run.json")


def one_submission(root, count=3000):
    """One student's workspace of COUNT loops, the six lesson cases alike, next to ROOT: verify_loop over all
    its loop folders in one call, and --class on it; each the best of two calls."""
    student = root.parent / "class-3000" / "student"
    shutil.copytree(root, student, ignore=lambda folder, names: [n for n in names if n in SKIP])
    templates = {f"zq{chr(97 + i)}": case for i, case in enumerate(CASES)}  # names no other name contains
    make_loops(student, templates)
    for number in range(count):
        copy_loop(student, list(templates)[number % len(templates)], f"s{number:04d}")
    for template in templates:
        shutil.rmtree(student / "loop-runs" / template)
        for child in (student / "runs").glob(f"{template}-[0-9][0-9]"):
            shutil.rmtree(child)
    env, py = environment(True), sys.executable
    one_call = [py, "verify_loop.py", *(f"loop-runs/{name}" for name in sorted(os.listdir(student / "loop-runs"))
                                        if not name.startswith("."))]  # as the shell's loop-runs/* lists them
    verify = [timed_with_cpu(one_call, student, env) for _ in range(2)]
    class_check = [timed_with_cpu([py, "verify_loop.py", "--class", str(student.parent)], root, env) for _ in range(2)]
    check = subprocess.run(one_call, cwd=student, env=env, capture_output=True, text=True)
    return {"loops": count, "verify_all_s": round(min(wall for wall, _ in verify), 3),
            "verify_all_cpu_s": least_cpu(verify),
            "class_one_student_s": round(min(wall for wall, _ in class_check), 3),
            "class_one_student_cpu_s": least_cpu(class_check), "passed": check.stdout.count('"result": "pass"')}


def main():
    parser = cli.ChineseArgumentParser(description="循环相关命令的基准：相对基线 B 的倍数和秒数（不是测试）。")
    parser.add_argument("--rounds", type=int, default=21, help="每条命令交替运行的遍数（默认 21）")
    parser.add_argument("--dir", default=None, help="临时工作区放在哪里（例如 /dev/shm）")
    parser.add_argument("--skip-many", action="store_true", help="不测一次核对 100 / 200 个循环")
    parser.add_argument("--skip-submission", action="store_true", help="不测 3000 个循环的那份提交")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-loop-", dir=args.dir) as tmp:
        root = Path(tmp) / "lesson-14"
        shutil.copytree(ROOT, root, ignore=lambda folder, names: [n for n in names if n in SKIP])
        figures = {"bytecode_cache": ratios(root, args.rounds, True),
                   "no_bytecode_cache": ratios(root, args.rounds, False)}
        if not args.skip_many:
            figures["many"] = many_loops(root)
        if not args.skip_submission:
            figures["submission"] = one_submission(root)
    missed, wrong = missed_targets(figures)
    figures.update(targets=TARGETS, rounds=args.rounds, dir=str(Path(tmp).parent), targets_met=not missed and not wrong)
    print(json.dumps(figures))
    verdict, code = benchmark_verdict(missed, wrong)
    for line in [*figure_lines(figures), verdict]:
        print(line, file=sys.stderr)
    return code


WHAT = {"loop_ratio": "loop_lab.py --scenario repair", "verify_ratio": "verify_loop.py 核对一个循环"}


def figure_lines(figures):
    """Each measured figure beside its target, one line each, for a person (in Chinese)."""
    cached, plain = figures["bytecode_cache"], figures["no_bytecode_cache"]
    yield (f"B = {cached['baseline_s'] * 1000:.1f} 毫秒（启动 Python、导入 argparse 等四个模块的整进程时间；"
           f"没有字节码缓存时 {plain['baseline_s'] * 1000:.1f} 毫秒）")
    for key, what in WHAT.items():
        yield f"{what}：{cached[key]} B（目标 ≤ {TARGETS[key]} B；没有字节码缓存时 {plain[key]} B）"
    many, submission = figures.get("many"), figures.get("submission")
    if many:
        yield (f"verify_loop.py 一次核对 100 个循环：{many['verify_100_s']} 秒（目标 ≤ {TARGETS['verify_100_s']} 秒）；"
               f"200 个用的时间是 100 个的 {many['scale_200_over_100']} 倍（目标 ≤ {TARGETS['scale_200_over_100']} 倍）")
    if submission:
        yield (f"一份 {submission['loops']} 个循环的提交：verify_loop.py {submission['verify_all_s']} 秒，"
               f"--class {submission['class_one_student_s']} 秒（目标各 < {TARGETS['submission_3000_s']} 秒）")


def missed_targets(figures):
    """([the figures that missed their targets], [the results that were wrong]), each said in Chinese."""
    cached, many, submission = figures["bytecode_cache"], figures.get("many"), figures.get("submission")
    missed = [f"{WHAT[key]} {cached[key]} B > {TARGETS[key]} B" for key in WHAT if cached[key] > TARGETS[key]]
    wrong = []
    if many:
        if many["verify_100_s"] > TARGETS["verify_100_s"]:
            missed.append(f"100 个循环 {many['verify_100_s']} 秒 > {TARGETS['verify_100_s']} 秒")
        if many["scale_200_over_100"] > TARGETS["scale_200_over_100"]:
            missed.append(f"200 个循环是 100 个的 {many['scale_200_over_100']} 倍 > {TARGETS['scale_200_over_100']} 倍")
        if many["passed_of_200"] != 200:
            wrong.append(f"200 个诚实的循环只有 {many['passed_of_200']} 个 pass")
    if submission:
        slowest = max(submission["verify_all_s"], submission["class_one_student_s"])
        if slowest >= TARGETS["submission_3000_s"]:
            missed.append(f"{submission['loops']} 个循环的提交用了 {slowest} 秒 ≥ {TARGETS['submission_3000_s']} 秒")
        if submission["passed"] != submission["loops"]:
            wrong.append(f"{submission['loops']} 个诚实的循环只有 {submission['passed']} 个 pass")
    return missed, wrong


if __name__ == "__main__":
    sys.exit(main())
