#!/usr/bin/python3
"""Validates PrairieLearn results files against
tests/prairielearn-results.schema.json (the fields and their sources are in
the schema) and checks that they add up: every test's points within
0..max_points, and score = sum(points) / sum(max_points).

Usage: check-pl-results.py SCHEMA RESULTS.json[=POINTS/MAX]...
A file given with =POINTS/MAX must also have those points in all (the
caller derives them from the submission it built); =not-gradable expects
gradable false and score 0.
Exit 0 every file valid, 1 not, 77 when python3-jsonschema is missing.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3 has no jsonschema (Debian: apt-get install python3-jsonschema)")
    sys.exit(77)


def check(schema, arg):
    path, _, want = arg.partition("=")
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) > 1 << 20:
        return f"{path}: {len(raw)} bytes, over PrairieLearn's 1 MB"
    res = json.loads(raw.decode("utf-8"))
    try:
        jsonschema.validate(res, schema)
    except jsonschema.ValidationError as e:
        return f"{path}: {e.message} at {list(e.absolute_path)}"
    if want == "not-gradable":
        return None if not res["gradable"] and res["score"] == 0 else f"{path}: expected not gradable, score 0"
    if not res["gradable"]:
        return f"{path}: not gradable: {res['message']}"
    pts = sum(t["points"] for t in res["tests"])
    mx = sum(t["max_points"] for t in res["tests"])
    for t in res["tests"]:
        if t["points"] > t["max_points"]:
            return f"{path}: {t['name']}: {t['points']} points of {t['max_points']}"
    if mx == 0 or abs(res["score"] - pts / mx) > 1e-12:
        return f"{path}: score {res['score']} is not {pts}/{mx}"
    if want:
        wp, wm = (float(x) for x in want.split("/"))
        if abs(pts - wp) > 1e-9 or abs(mx - wm) > 1e-9:
            return f"{path}: {pts}/{mx} points, expected {wp:g}/{wm:g}"
    return None


def main():
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    failed = 0
    for arg in sys.argv[2:]:
        why = check(schema, arg)
        if why:
            print("FAIL " + why)
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
