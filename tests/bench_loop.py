"""Benchmark of the lesson-14 loop commands as ratios to a baseline (SPEC §9); not a test.

    python3 tests/bench_loop.py [--rounds N] [--no-bytecode-cache] [--dir DIR]

B is the whole-process time of `python3 -c "import argparse, hashlib, json, pathlib"`, measured
interleaved with the commands in the same run (so machine load affects both alike); the medians
are compared. Targets: `loop_lab.py --scenario repair` <= 1.5 B; `verify_loop.py` on that run
<= 1.5 B; one `verify_loop.py` call over 100 loop folders < 5 s, and over 200 at most 2.2x that.
Everything runs in a temporary copy of the workspace; the checkout is not written to. By default
Python may cache bytecode there, as on a learner's machine from the second run on (a warm-up run
fills the cache); `--no-bytecode-cache` measures with PYTHONDONTWRITEBYTECODE=1 instead.
`--dir DIR` puts the temporary workspace in DIR (e.g. /dev/shm) to separate the programs' own
cost from a slow disk's: every run creates folders and replaces record files.
Prints one JSON line with the figures; exit 0 when every target is met, 1 otherwise.
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


def timed(command, cwd, env):
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def make_loops(root, names):
    """Loop runs made in-process (the benchmark times verifying them, not making them)."""
    sys.path.insert(0, str(root))
    import loop_lab
    with contextlib.redirect_stderr(io.StringIO()):
        for name in names:
            loop_lab.run_loop(root, name, "repair")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--no-bytecode-cache", action="store_true")
    parser.add_argument("--dir", default=None, help="where the temporary workspace goes")
    args = parser.parse_args()
    rounds, env = args.rounds, dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.no_bytecode_cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory(prefix="bench-loop-", dir=args.dir) as tmp:
        root = Path(tmp) / "lesson-14"
        shutil.copytree(ROOT, root, ignore=lambda folder, names: [n for n in names if n in SKIP])
        py = sys.executable
        # warm-up: compile the .pyc files once, as a learner's second run would find them
        for warm_up in (["loop_lab.py", "--run", "warm", "--scenario", "repair"], ["verify_loop.py", "loop-runs/warm"]):
            timed([py, *warm_up], root, env)
        base, loop, verify = [], [], []
        for i in range(rounds):
            base.append(timed(BASELINE, root, env))
            loop.append(timed([py, "loop_lab.py", "--run", f"bench-{i}", "--scenario", "repair"], root, env))
            verify.append(timed([py, "verify_loop.py", f"loop-runs/bench-{i}"], root, env))
        b = statistics.median(base)
        make_loops(root, [f"many-{i:03d}" for i in range(200)])
        folders = sorted(str(p.relative_to(root)) for p in (root / "loop-runs").iterdir() if p.name.startswith("many-"))
        many_100 = min(timed([py, "verify_loop.py", *folders[:100]], root, env) for _ in range(5))
        many_200 = min(timed([py, "verify_loop.py", *folders], root, env) for _ in range(5))
        check = subprocess.run([py, "verify_loop.py", *folders], cwd=root, env=env, capture_output=True, text=True)
        passed = check.stdout.count('"result": "pass"')
    figures = {
        "baseline_s": round(b, 4),
        "loop_repair_s": round(statistics.median(loop), 4), "loop_ratio": round(statistics.median(loop) / b, 2),
        "verify_one_s": round(statistics.median(verify), 4), "verify_ratio": round(statistics.median(verify) / b, 2),
        "verify_100_s": round(many_100, 3), "verify_200_s": round(many_200, 3),
        "scale_200_over_100": round(many_200 / many_100, 2), "passed_of_200": passed, "rounds": rounds,
        "bytecode_cache": not args.no_bytecode_cache, "dir": str(Path(tmp).parent),
    }
    met = (figures["loop_ratio"] <= 1.5 and figures["verify_ratio"] <= 1.5 and many_100 < 5
           and many_200 <= 2.2 * many_100 and passed == 200)
    figures["targets_met"] = met
    print(json.dumps(figures))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
