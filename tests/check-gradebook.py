#!/usr/bin/python3
"""Checks a gradebook CSV of mixprec grade --format canvas|moodle against
what the caller derived: the header, the Points Possible row (Canvas), one
row per roster student keyed as the tool matches it, the points of every
exercise, their sum, and that no cell would run as a spreadsheet formula.

Canvas (the Ohio State CarmenCanvas guide "Import a CSV file to Carmen
Grades", and nemogb's "Detailed Canvas Export Info" for the columns of the
Gradebook export that the import takes): Student, ID, SIS User ID, SIS
Login ID, Section, then one column per assignment, "Name (id)" for an
existing one; the second row, Student cell "Points Possible", as the export
writes it. Moodle (Moodle Docs, "Grade import", CSV import): "Map from"
Email address to the user's email, or ID number to the user's ID number;
the other columns map to grade items.

Usage: check-gradebook.py canvas|moodle FILE.csv ROSTER.csv EXERCISES STUDENTS
  EXERCISES  id=points,... (the points each exercise is worth)
  STUDENTS   student_id=p1/p2/...;...  (points per exercise, in order)
Exit 0 good, 1 not.
"""
import csv
import sys


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def same(a, b):
    """Whether a roster cell a is given and is b."""
    return bool(a) and a == b


def main():
    fmt, path, roster_path, exs, studs = sys.argv[1:6]
    exercises = [(e.split("=")[0], float(e.split("=")[1])) for e in exs.split(",")]
    expect = {}
    for s in studs.split(";"):
        sid, pts = s.split("=")
        expect[sid] = [float(p) for p in pts.split("/")]
    with open(roster_path, newline="", encoding="utf-8") as f:
        roster = {r["student_id"]: r for r in csv.DictReader(f)}
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    ident = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] if fmt == "canvas" else \
        ["Email address", "ID number", "Full name"]
    head = rows[0]
    if head[:len(ident)] != ident:
        fail(f"header starts {head[:len(ident)]}, expected {ident}")
    cols = head[len(ident):]
    if len(cols) != len(exercises) or any(not c.startswith(e + " ") for c, (e, _) in zip(cols, exercises)):
        fail(f"exercise columns {cols}, expected one per exercise {[e for e, _ in exercises]}")
    body = rows[1:]
    if fmt == "canvas":
        pp = body[0]
        if pp[0] != "Points Possible" or any(pp[1:len(ident)]):
            fail(f"second row is not the Points Possible row: {pp}")
        if [float(x) for x in pp[len(ident):]] != [p for _, p in exercises]:
            fail(f"Points Possible {pp[len(ident):]}, expected {[p for _, p in exercises]}")
        body = body[1:]
    for r in rows:
        if len(r) != len(head):
            fail(f"row of {len(r)} cells, header has {len(head)}: {r}")
        for c in r:
            if c[:1] in ("=", "+", "-", "@", "\t", "\r"):
                try:
                    float(c)
                except ValueError:
                    fail(f"cell {c!r} would run as a formula")
    if len(body) != len(roster):
        fail(f"{len(body)} student rows, the roster has {len(roster)}")
    seen = set()
    for r in body:
        # the row's student, by the key the tool matches on
        if fmt == "canvas":
            key = [s for s, x in roster.items() if same(x.get("canvas_id"), r[1])
                   or same(x.get("sis_user_id"), r[2]) or same(x.get("sis_login_id"), r[3])]
        else:
            key = [s for s, x in roster.items() if same(x.get("email"), r[0]) or same(x.get("sis_user_id"), r[1])]
        if len(key) != 1:
            fail(f"row {r[:len(ident)]} matches {len(key)} roster students")
        sid = key[0]
        if sid in seen:
            fail(f"student {sid} has two rows")
        seen.add(sid)
        got = [float(x) for x in r[len(ident):]]
        if sid not in expect:
            fail(f"student {sid}: no expected points given")
        if got != expect[sid] or abs(sum(got) - sum(expect[sid])) > 1e-9:
            fail(f"student {sid}: points {got}, expected {expect[sid]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
