"""Records that submissions share: the same record (its random id, or its very bytes) or the same clock readings.

Part of verify_loop's class check (classroom/check.py calls `record_keys` for each submission, in its worker, and
`mark_copies` once for the class). A shared record is named for the teacher, never failed: it may be a copy, or
have another reason. Two kinds of evidence, each found by grouping, never by building pairs (a class handing in
one record 2,000 times, or one submission holding 2,500 copies of one run, costs one group):
- the same record: a loop.json or run.json whose id, or whose bytes (line ends made LF), another one has, in
  another submission or in the same one (a loop copied and renamed inside one workspace);
- the same clock: the monotonic offsets and durations a loop recorded, to the millisecond. Changing a record's
  id is one hex digit; its readings are many numbers that must stay consistent with each other. Honest machines
  share some by chance (a loop takes a few milliseconds, so loops with one or two attempts often agree), so the
  threshold is measured (docs/loop/TEACHER.md), in two tiers: submissions sharing the readings and the wall times
  (start and finish, to the second) of at least SHARED_LOOPS loops that made attempts are named as the same
  clock; submissions sharing the readings alone, wall times shifted or rewritten, of at least SHARED_READINGS
  readings are named as a possible copy, with how often chance did so. Loops without attempts weigh nothing.
  Never inside one submission: one machine repeats itself.

Each reason is a finding (`shared_record`, `copy_inside`, `shared_clock`, `shared_readings`: its words, and the
student's, are verifier/findings.py's). It does not import loop_lab.py, harness.py, export_review.py or machinery/.
What it shares: cli.py's plumbing (the capped reading of evidence, strict JSON, line endings) and
verifier/records.py's is_reading.
"""
import hashlib
from collections import Counter, defaultdict

from cli import loads_record, read_evidence, to_lf
from verifier.findings import Finding
from verifier.records import is_reading

RECORD_CAP = 2 ** 20  # a loop.json or run.json is far below 1 MiB; a bigger one is judged by the loop check
# Loops (each with attempts) whose clocks two submissions must share to be named as the same clock. A loop's clock:
# its monotonic offsets and its children's durations to the millisecond, and its start and finish to the second.
# Of 160 honest submissions of the six cases run one after another on one machine, with the wall times too (80
# more, each a second after the one before, as a class in step), 4 of 3,160 pairs shared one loop, 1 pair two, none
# three (docs/loop/TEACHER.md). A copy of the six cases shares four.
SHARED_LOOPS = 3
# Readings two submissions must share, wall times left aside, to be named as a possible copy: every reading of the
# four loops of the six cases that make attempts (7 + 7 + 4 + 4). Readings alone are a weak fingerprint of this
# fast loop: of 548 honest submissions of the six cases run on one machine (idle or busy, Python 3.11 to 3.13),
# 3 of 149,878 pairs shared all 22 and 6 more shared 18 (docs/loop/TEACHER.md), so the reason says so.
SHARED_READINGS = 22
SHOWN_PEOPLE = 5


# --- what one submission holds (in the worker that checked it) -----------------------------------

def record_keys(folders, where, copies=()):
    """(key, path) of every loop.json and run.json of the workspace FOLDERS (records.Workspace), paths under WHERE:
    ("id", its id), ("bytes", sha256 of its LF bytes), and for a loop that made attempts its clock_keys. COPIES: loop
    folders the loop check found to be byte copies of another beside them (said as such), left out."""
    loops = {name: where / "loop-runs" / name / "loop.json" for name in sorted(folders.loops()) if name not in copies}
    runs = {name: where / "runs" / name / "run.json" for name in sorted(folders.runs())}
    keys, parsed = [], {}
    for rel in [*loops.values(), *runs.values()]:
        data = read_record(folders.root.joinpath(*rel.parts[len(where.parts):]))
        if data is None:
            continue
        keys.append((("bytes", hashlib.sha256(data).hexdigest()), str(rel)))
        parsed[rel] = parse(data)
        record_id = parsed[rel].get("id")
        if type(record_id) is str and record_id:
            keys.append((("id", record_id), str(rel)))
    durations = {name: parsed.get(rel, {}).get("duration_seconds") for name, rel in runs.items()}
    for rel in loops.values():
        keys += [(key, str(rel)) for key in clock_keys(parsed.get(rel, {}), durations)]
    return keys


def read_record(path):
    """The bytes of a record with a BOM taken off and line ends made LF; None when it is no plain readable file."""
    try:
        data = read_evidence(path, RECORD_CAP)
    except OSError:  # not a plain readable file: the loop check names it
        return None
    return to_lf(data.removeprefix(b"\xef\xbb\xbf"))


def parse(data):
    try:
        record = loads_record(data)
    except ValueError:
        return {}
    return record if type(record) is dict else {}


def clock_keys(record, durations):
    """The keys of a loop record that made attempts: ("readings", its case, its readings) and, when it says its
    start and finish, ("clock", its case, those, its readings). Its readings: each attempt's started and finished
    offsets, the elapsed seconds and each child's duration, as millisecond text. No key when it made no attempt or
    one of them is no reading."""
    attempts, budget = record.get("attempts"), record.get("budget")
    if type(attempts) is not list or not attempts or type(budget) is not dict:
        return []
    values = [entry.get(field) if type(entry) is dict else None
              for entry in attempts for field in ("started_offset", "finished_offset")]
    values.append(record.get("elapsed_seconds"))
    children = [entry.get("child_run") if type(entry) is dict else None for entry in attempts]
    values += [durations.get(child.rpartition("/")[2]) if type(child) is str else None for child in children]
    if not all(is_reading(value) for value in values):
        return []
    case = (str(record.get("scenario")), str(budget.get("max_attempts")), str(budget.get("max_seconds")))
    readings = tuple(f"{value:.3f}" for value in values)
    wall = (record.get("started_at"), record.get("finished_at"))
    clock = [("clock", *case, *wall, readings)] if all(type(text) is str for text in wall) else []
    return [("readings", *case, readings), *clock]


# --- what the class shares ------------------------------------------------------------------------

def mark_copies(checked, reason):
    """Adds to each submission of CHECKED (items with .records, .copies, .student, .student_id) a REASON(finding)
    per group of others it shares records with, one for what it holds twice itself, and one per tier (TIERS) for
    the others whose clocks it shares that nothing before named. Never a fail by itself."""
    holders = defaultdict(lambda: defaultdict(list))  # key -> submission -> its paths holding it
    for index, item in enumerate(checked):
        for key, rel in item.records:
            holders[key][index].append(rel)
    shared, inside = defaultdict(lambda: defaultdict(set)), defaultdict(set)
    for key, owners in holders.items():
        if key[0] in TIERS:
            continue
        members = frozenset(owners)
        for index, rels in owners.items():
            if len(rels) > 1:  # its id and its bytes name the same places once
                inside[index].add(tuple(sorted(rels)))
            if len(members) > 1:
                shared[index][members].update(rels)
    in_order = {}  # members -> their indexes sorted, worked out once per group
    for index, item in enumerate(checked):
        if inside[index]:
            item.copies.append(reason(inside_copy(sorted(inside[index]))))
        for members, rels in sorted(shared[index].items(), key=lambda pair: sorted(pair[0])):
            everyone = in_order.setdefault(members, sorted(members))
            others = [checked[j] for j in everyone[:SHOWN_PEOPLE + 1] if j != index][:SHOWN_PEOPLE]
            item.copies.append(reason(copy_texts(sorted(rels), others, len(members) - 1)))
    named = {index: tuple(sorted(shared[index], key=id)) for index in range(len(checked))}  # groups said already
    for kind, (enough, texts) in TIERS.items():
        clocks = {key: owners for key, owners in holders.items() if key[0] == kind and len(owners) > 1}
        found = same_readings(clocks, enough)
        unnamed = {}  # (those sharing clocks, the groups one is named in) -> who of them nothing names yet
        for index, (everyone, count, loops) in found.items():
            memo = (id(everyone), tuple(map(id, named[index])))
            if memo not in unnamed:  # worked out once for a whole class of copies of one workspace
                rest = everyone.difference(*named[index])
                unnamed[memo] = sorted(rest), rest
            in_order, rest = unnamed[memo]
            many = len(rest) - (index in rest)
            if many:
                others = [checked[j] for j in in_order[:SHOWN_PEOPLE + 1] if j != index][:SHOWN_PEOPLE]
                checked[index].copies.append(reason(texts(others, many, count, loops)))
        for index, (everyone, *_) in found.items():
            named[index] += (everyone,)


def same_readings(readings, enough):
    """{submission: (everyone sharing ENOUGH(loops, readings) of the clock keys READINGS with it, itself included,
    the most readings shared, its loops)}.

    Submissions holding the very same shared keys are one profile, counted once (a class of copies of one
    workspace is one profile); profiles are then counted against each other per key, never per pair of
    submissions."""
    mine = defaultdict(list)  # submission -> the shared reading keys it holds
    for key, owners in readings.items():
        for index in owners:
            mine[index].append(key)
    profiles = defaultdict(list)  # the keys one holds -> the submissions holding exactly those
    for index, keys in mine.items():
        profiles[frozenset(keys)].append(index)
    by_key = defaultdict(list)
    for profile in profiles:
        for key in profile:
            by_key[key].append(profile)
    found = {}
    for profile, members in profiles.items():
        counts, loops_shared = Counter(), Counter()
        for key in profile:
            for other in by_key[key]:
                counts[other] += len(key[-1])
                loops_shared[other] += 1
        close = [other for other in loops_shared if enough(loops_shared[other], counts[other])
                 and (other != profile or len(members) > 1)]
        if not close:
            continue
        most = max(counts[other] for other in close)
        loops = sorted({rel for key in profile for index in members[:1] for rel in readings[key][index]})
        everyone = frozenset(index for other in close for index in profiles[other])
        for index in members:
            found[index] = (everyone, most, loops)
    return found


def copy_texts(records, others, count):
    """The reason of a submission sharing RECORDS with COUNT others (OTHERS: the first of them)."""
    shown = Finding("records_more", records=records[:2], count=len(records)) if len(records) > 2 else \
        Finding("records", records=records)
    return Finding("shared_record", people=people_said(others, count), records=shown, count=count)


def clock_texts(others, many, count, loops):
    """The reason of a submission whose loops LOOPS share COUNT readings and their wall times with MANY others
    (OTHERS: the first of them)."""
    return Finding("shared_clock", people=people_said(others, many), many=many, count=count,
                   loops=[str(loop) for loop in loops], most=SHARED_LOOPS)


def readings_texts(others, many, count, loops):
    """The reason of a submission whose loops LOOPS share COUNT readings, not their wall times, with MANY others
    (OTHERS: the first of them): it may be chance, and how often chance did it (the sentence says)."""
    return Finding("shared_readings", people=people_said(others, many), many=many, count=count,
                   loops=[str(loop) for loop in loops])


# Each tier: the key kind clock_keys gives, whether what two submissions share of it is enough to be named (loops,
# readings), and the texts that name them. The first tier that names two submissions is the one they read.
TIERS = {"clock": (lambda loops, readings: loops >= SHARED_LOOPS, clock_texts),
         "readings": (lambda loops, readings: readings >= SHARED_READINGS, readings_texts)}


def people_said(others, count):
    names = [Finding("person_id", name=other.student, id=other.student_id) if other.student_id else other.student
             for other in others]
    return Finding("people_more", names=names, count=count) if count > len(names) else Finding("people", names=names)


def inside_copy(groups):
    """The reason of a submission holding the same record in several places: each group of places once."""
    shown = [Finding("pair", first=group[0], second=group[1]) if len(group) == 2 else Finding("group", names=group)
             for group in groups[:3]]
    return Finding("copy_inside", groups=Finding("groups_more", groups=shown, count=len(groups))
                   if len(groups) > 3 else Finding("groups", groups=shown))
