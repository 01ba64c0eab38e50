"""The verifiers' cost on hostile submissions: time, peak memory and output size of each case (not part of the suite).

    python3 tests/measure_costs.py          each case under 5 s and 300 MB, or it says which is not

Each case is built in a temporary copy of the workspace and checked by `verify_loop.py` in a process of its own;
its peak memory is that process's ru_maxrss (resource.getrusage of the children), measured by a small parent
process started for that case alone. The cases: a 128 MiB note in the checked workspace; 2,500 run.json sharing
one id in one submission; 240 loop folders differing only in case; 20 loops with 1,000 attempts each; 100
submissions that are copies of one workspace with every id changed. Linux and macOS (the resource module).
"""
import sys  # noqa: E402 (the next three lines run on any Python: the workspace's cli.py refuses an old one)
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cli  # noqa: E402,F401
import json
import shutil
import subprocess
import tempfile

ROOT = Path(__file__).resolve().parent.parent
LIMITS = (5.0, 300)  # seconds, MB
MEASURE = """import resource, subprocess, sys, time
start = time.monotonic()
done = subprocess.run(sys.argv[1:], capture_output=True)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(time.monotonic() - start, rss / (1 << 20 if sys.platform == "darwin" else 1 << 10),
      len(done.stdout) + len(done.stderr), done.returncode)
"""


def workspace(base):
    root = base / "ws"
    shutil.copytree(ROOT, root, ignore=lambda folder, names: [n for n in names if n in
                                                              (".git", "runs", "loop-runs", "__pycache__")])
    return root


def loop(root, name, scenario, *options):
    subprocess.run([sys.executable, "loop_lab.py", "--run", name, "--scenario", scenario, *options], cwd=root,
                   capture_output=True, check=False)


def measured(root, *args):
    out = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "verify_loop.py", *map(str, args)],
                         cwd=root, capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), int(out[2]), int(out[3])


def big_note(base):
    root = workspace(base)
    loop(root, "r", "repair")
    with open(root / "project" / "notes" / "A01.md", "ab") as note:
        note.truncate(128 << 20)
    return measured(root, "loop-runs/r")


def shared_id(base):
    root = workspace(base)
    loop(root, "r", "repair")
    student = base / "class" / "甲"
    shutil.copytree(root / "loop-runs", student / "loop-runs")
    shutil.copytree(root / "runs", student / "runs")
    data = (root / "runs" / "r-01" / "run.json").read_bytes()
    for number in range(2500):
        (student / "runs" / f"x{number:04d}").mkdir()
        (student / "runs" / f"x{number:04d}" / "run.json").write_bytes(data)
    return measured(root, "--class", base / "class")


def case_twins(base):
    root = workspace(base)
    loop(root, "abcdefgh", "permission")
    student = base / "class" / "甲"
    (student / "runs").mkdir(parents=True)
    for number in range(240):
        spelled = "".join(ch.upper() if number >> bit & 1 else ch for bit, ch in enumerate("abcdefgh"))
        shutil.copytree(root / "loop-runs" / "abcdefgh", student / "loop-runs" / spelled)
    return measured(root, "--class", base / "class", "--report", base / "r.md")


def long_loops(base):
    root = workspace(base)
    loop(root, "s", "stuck")
    student = base / "class" / "甲"
    shutil.copytree(root / "runs", student / "runs")
    record = json.loads((root / "loop-runs" / "s" / "loop.json").read_text(encoding="utf-8"))
    record["attempts"] = [dict(record["attempts"][0], attempt=number) for number in range(1, 1001)]
    for number in range(20):
        (student / "loop-runs" / f"s{number}").mkdir(parents=True)
        (student / "loop-runs" / f"s{number}" / "loop.json").write_text(json.dumps(record), encoding="utf-8")
    return measured(root, "--class", base / "class", "--report", base / "r.md")


def copied_class(base):
    root = workspace(base)
    for name, scenario, *options in (("r", "repair"), ("s", "stuck"), ("b", "repair", "--max-attempts", "1"),
                                     ("m", "semantic")):
        loop(root, name, scenario, *options)
    for number in range(100):  # 300 take 5-7 s here, nearly all of it checking 1,200 loops, not finding copies
        student = base / "class" / f"学生{number:03d}"
        shutil.copytree(root / "loop-runs", student / "loop-runs")
        shutil.copytree(root / "runs", student / "runs")
        for path in [*student.glob("loop-runs/*/loop.json"), *student.glob("runs/*/run.json")]:
            text = path.read_text(encoding="utf-8")
            old = json.loads(text)["id"]
            path.write_text(text.replace(old, f"{number:03x}{old[3:]}"), encoding="utf-8")
    return measured(root, "--class", base / "class")


CASES = {"128 MiB note, one loop": big_note, "2,500 run.json sharing one id": shared_id,
         "240 loop folders differing only in case": case_twins, "20 loops x 1,000 attempts": long_loops,
         "100 copies, every id changed": copied_class}


def main():
    over = []
    for label, build in CASES.items():
        with tempfile.TemporaryDirectory(prefix="cost-") as scratch:
            seconds, megabytes, output, code = build(Path(scratch))
        print(f"{label}: {seconds:.2f} s, {megabytes:.0f} MB peak, {output} bytes of output, exit {code}")
        if seconds > LIMITS[0] or megabytes > LIMITS[1]:
            over.append(label)
    print("all under 5 s and 300 MB" if not over else f"over the limits: {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
