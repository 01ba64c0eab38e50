"""Benchmark of the lesson-14 loop commands as ratios to a baseline; not a test.

    python3 tests/bench_loop.py [--rounds N] [--dir DIR] [--skip-many]

B is the whole-process time of `python3 -c "import argparse, hashlib, json, pathlib"`, measured
interleaved with the commands (B, loop, verify, B, loop, verify ...) so machine load affects all
alike; medians are compared. Targets: `loop_lab.py --scenario repair` <= 1.5 B and `verify_loop.py`
on that run <= 1.3 B, with Python's default bytecode cache (PYTHONDONTWRITEBYTECODE removed, a
warm-up run fills the cache, as on a learner's machine from the second run on). The same figures
without the cache (PYTHONDONTWRITEBYTECODE=1, as this course's test environment sets) are reported
beside them, for information. Then one `verify_loop.py` call over 100 loop folders (< 5 s) and over
200 (at most 2.2x that). Everything runs in a temporary copy of the workspace; the checkout is not
written to. `--dir DIR` puts that copy in DIR (e.g. /dev/shm) to separate the programs' own cost
from a slow disk's. Prints one JSON line with the figures; exit 0 when every target is met, 1 otherwise.
"""
import argparse
import contextlib
import io
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
BASELINE = [sys.executable, "-c", "import argparse, hashlib, json, pathlib"]
TARGETS = {"loop_ratio": 1.5, "verify_ratio": 1.3}


def timed(command, cwd, env):
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


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


def many_loops(root):
    """One verify_loop call over 100 and over 200 loop folders (made in-process: not what is timed)."""
    sys.path.insert(0, str(root))
    import loop_lab
    with contextlib.redirect_stderr(io.StringIO()):
        for i in range(200):
            loop_lab.run_loop(root, f"many-{i:03d}", "repair")
    env, py = environment(True), sys.executable
    folders = sorted(f"loop-runs/{p.name}" for p in (root / "loop-runs").iterdir() if p.name.startswith("many-"))
    many_100 = min(timed([py, "verify_loop.py", *folders[:100]], root, env) for _ in range(5))
    many_200 = min(timed([py, "verify_loop.py", *folders], root, env) for _ in range(5))
    check = subprocess.run([py, "verify_loop.py", *folders], cwd=root, env=env, capture_output=True, text=True)
    return {"verify_100_s": round(many_100, 3), "verify_200_s": round(many_200, 3),
            "scale_200_over_100": round(many_200 / many_100, 2),
            "passed_of_200": check.stdout.count('"result": "pass"')}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--dir", default=None, help="where the temporary workspace goes")
    parser.add_argument("--skip-many", action="store_true", help="leave out the 100 / 200 folder figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-loop-", dir=args.dir) as tmp:
        root = Path(tmp) / "lesson-14"
        shutil.copytree(ROOT, root, ignore=lambda folder, names: [n for n in names if n in SKIP])
        figures = {"bytecode_cache": ratios(root, args.rounds, True),
                   "no_bytecode_cache": ratios(root, args.rounds, False)}
        if not args.skip_many:
            figures["many"] = many_loops(root)
    cached, many = figures["bytecode_cache"], figures.get("many")
    met = all(cached[key] <= limit for key, limit in TARGETS.items()) and (
        many is None or (many["verify_100_s"] < 5 and many["scale_200_over_100"] <= 2.2
                         and many["passed_of_200"] == 200))
    figures.update(targets=TARGETS, rounds=args.rounds, dir=str(Path(tmp).parent), targets_met=met)
    print(json.dumps(figures))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
