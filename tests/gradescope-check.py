"""Checks one results.json of mixprec lab autograde (used by
tests/cli-autograder.sh): valid against tests/gradescope-results.schema.json,
the tests' scores add up to the top-level score, each test's status agrees
with its score, and the score and the failed tests are the ones expected.

usage: gradescope-check.py SCHEMA RESULTS SCORE NTESTS FAILED [TEXT...]
  SCORE   the expected total (the test derives it by hand)
  NTESTS  the expected number of tests
  FAILED  the names of the tests expected to fail, '|'-separated ('*': all,
          '-': none)
  TEXT    strings the top-level output must contain
Exit 0 when every check holds; otherwise prints what failed and exits 1."""
import json
import sys

import jsonschema


def main():
    schema_path, results_path, score, ntests, failed = sys.argv[1:6]
    texts = sys.argv[6:]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(results_path, encoding="utf-8") as f:
        res = json.load(f)
    problems = []
    try:
        jsonschema.validate(res, schema)
    except jsonschema.ValidationError as e:
        problems.append("schema: %s at %s" % (e.message, list(e.absolute_path)))
        print("\n".join(problems))
        return 1
    tests = res["tests"]
    total = sum(t["score"] for t in tests)
    if total != res["score"]:
        problems.append("the tests add up to %r, the score is %r" % (total, res["score"]))
    if res["score"] != float(score):
        problems.append("score %r, expected %s" % (res["score"], score))
    if len(tests) != int(ntests):
        problems.append("%d tests, expected %s" % (len(tests), ntests))
    for t in tests:
        right = t["score"] == t["max_score"]
        if (t["status"] == "passed") != right:
            problems.append("%s: status %s with score %r of %r" % (t["name"], t["status"], t["score"], t["max_score"]))
        if t["score"] not in (0, t["max_score"]):
            problems.append("%s: partial score %r" % (t["name"], t["score"]))
    got = {t["name"] for t in tests if t["status"] == "failed"}
    want = {t["name"] for t in tests} if failed == "*" else set() if failed == "-" else set(failed.split("|"))
    if got != want:
        problems.append("failed tests %s, expected %s" % (sorted(got), sorted(want)))
    for text in texts:
        if text not in res["output"]:
            problems.append("output lacks %r: %r" % (text, res["output"][:400]))
    print("\n".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
