#!/bin/sh
# CLI tests of mixprec lab autograder (the Gradescope bundle) and of the
# run_autograder it writes, run in temporary roots with PATH pointing at the
# built program: right, wrong and malformed submissions, each results.json
# validated against tests/gradescope-results.schema.json by
# tests/gradescope-check.py (Python's jsonschema; skipped without it).
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
#
# The expected scores are derived here, not copied from the program:
# data/submission-example.csv is the lab's example (course seed fall26, every
# answer right: tests/cli-hardening.sh grades it), one point per answer, so
# a student's full score is the number of their rows (counted with awk); a
# changed answer costs exactly its own point; a submission that cannot be
# graded scores 0 with every test failed.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

PY=/usr/bin/python3
if ! [ -x "$PY" ] || ! "$PY" -c 'import jsonschema' 2>/dev/null; then
	echo "SKIP: $PY with jsonschema is needed (Debian: python3-jsonschema)"
	exit 77
fi

make_tmp autograder
private_state
S=${srcdir:-.}
schema=$S/tests/gradescope-results.schema.json
example=$S/data/submission-example.csv
roster=$S/data/roster-example.csv
case $MIXPREC in /*) prog=$MIXPREC ;; *) prog=$(pwd)/$MIXPREC ;; esac
mkdir "$tmp/bin" && ln -s "$prog" "$tmp/bin/mixprec"
# any gzip file passes as --source here; tests/autograder-setup.sh builds a real one
# with the setup.sh written here
printf 'not a real tarball\n' | gzip >"$tmp/src.tar.gz"

# ---------------------------------------------------------------------------
echo "# lab autograder: the bundle"

run lab autograder --out "$tmp/b0" --course-seed fall26
expect_rc "no --source" 2
err_has "no --source: says what to give" "--source TARBALL (from 'make dist') is required"
printf 'plain text\n' >"$tmp/notgz"
run lab autograder --out "$tmp/b0" --source "$tmp/notgz" --course-seed fall26
expect_rc "--source not gzip" 2
err_has "--source not gzip: named" "is not a gzip tarball"
run lab autograder --out "$tmp/b0" --source "$tmp/missing.tar.gz" --course-seed fall26
expect_rc "--source missing" 3
printf 'student_id\ns1\nbad id\n' >"$tmp/badroster.csv"
run lab autograder --out "$tmp/b0" --source "$tmp/src.tar.gz" --roster "$tmp/badroster.csv"
expect_rc "a roster with a bad row" 2
err_has "bad roster row: file:line" "badroster.csv:3"
run lab autograder --out "$tmp/b0" --source "$tmp/src.tar.gz" --exercises 7.4a,nope
expect_rc "unknown exercise" 2
err_has "unknown exercise named" "no exercise 'nope'"
[ ! -e "$tmp/b0" ] && ok "refused runs write nothing" || bad "refused runs write nothing" "$(ls "$tmp/b0")"

run lab autograder --out "$tmp/b" --source "$tmp/src.tar.gz" --course-seed fall26 --roster "$roster"
expect_rc "lab autograder" 0
for f in setup.sh run_autograder lab.json roster.csv mixprec-src.tar.gz; do
	[ -f "$tmp/b/$f" ] && ok "bundle has $f" || bad "bundle has $f"
done
[ -x "$tmp/b/setup.sh" ] && [ -x "$tmp/b/run_autograder" ] && ok "the scripts are executable" \
	|| bad "the scripts are executable" "$(ls -l "$tmp/b")"
cmp -s "$tmp/src.tar.gz" "$tmp/b/mixprec-src.tar.gz" && ok "the tarball is --source's bytes" || bad "the tarball is --source's bytes"
cmp -s "$roster" "$tmp/b/roster.csv" && ok "the roster is --roster's bytes" || bad "the roster is --roster's bytes"
sh -n "$tmp/b/setup.sh" && ok "setup.sh: sh -n" || bad "setup.sh: sh -n"
sh -n "$tmp/b/run_autograder" && ok "run_autograder: sh -n" || bad "run_autograder: sh -n"
# setup.sh installs every package ./run installs, but the test-only ones
pkgs=$(sed -n '/^packages=(/,/^)/p' "$S/run" | sed '1d;$d' | tr -s ' \t' '\n\n' | grep -v '^$')
[ -n "$pkgs" ] && ok "./run's package list read" || bad "./run's package list read"
inst=$(grep 'apt-get install' "$tmp/b/setup.sh")
for p in $pkgs; do
	case $p in tmux | python3-jsonschema) continue ;; esac
	case " $inst " in *" $p "*) ok "setup.sh installs $p" ;; *) bad "setup.sh installs $p" "$inst" ;; esac
done
"$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
assert c == {"course_seed": "fall26", "exercises": ["7.4a", "7.4b", "7.4c", "7.4d", "7.4e"], "roster": "roster.csv"}, c
' "$tmp/b/lab.json" && ok "lab.json: the seed, the default exercises, the roster" || bad "lab.json"

# ---------------------------------------------------------------------------
echo "# run_autograder"

# mkroot NAME [BUNDLE]: a Gradescope root: source/ is the bundle, run_autograder
# copied beside it, an empty submission/ and s001's metadata.
mkroot() {
	r=$tmp/$1
	mkdir -p "$r/submission"
	cp -R "$tmp/${2:-b}" "$r/source"
	cp "$r/source/run_autograder" "$r/run_autograder"
	printf '{"id": 1, "users": [{"email": "ada@example.org", "id": 7, "name": "Ada", "sid": "s001"}]}\n' \
		>"$r/submission_metadata.json"
}
# grade NAME: runs the root's run_autograder; its exit status in $rc
grade() {
	PATH=$tmp/bin:$PATH AUTOGRADER_ROOT=$tmp/$1 sh "$tmp/$1/run_autograder" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
# verdict NAME SCORE NTESTS FAILED [TEXT...]: results.json checked by gradescope-check.py
verdict() {
	name=$1
	shift
	if msg=$("$PY" "$S/tests/gradescope-check.py" "$schema" "$tmp/$name/results/results.json" "$@" 2>&1); then
		ok "$name: results.json valid, score $1, the scores add up"
	else
		bad "$name: results.json" "$msg"
	fi
}

n=$(awk -F, '$1 == "s001"' "$example" | wc -l | tr -d ' ')
[ "$n" -eq 25 ] && ok "s001 has 25 answers in the example" || bad "s001 has 25 answers in the example" "$n"

mkroot right
grep -e '^student_id,' -e '^s001,' "$example" >"$tmp/right/submission/any name.csv"
grade right
expect_rc "right answers" 0
verdict right "$n" "$n" -

# two answers changed: fp16's smallest subnormal 2^-24 for its smallest
# normal 2^-14, and bf16's bits of 0.1 (0x3dcd) for fp16's
mkroot wrong
grep -e '^student_id,' -e '^s001,' "$example" | sed -e 's/^s001,7.4a,fp16_min_normal,.*/s001,7.4a,fp16_min_normal,5.9604644775390625e-08/' \
	-e 's/^s001,7.4d,fp16_bits,.*/s001,7.4d,fp16_bits,0x3dcd/' >"$tmp/wrong/submission/answers.csv"
grade wrong
expect_rc "two wrong answers" 0
verdict wrong $((n - 2)) "$n" "7.4a fp16_min_normal|7.4d fp16_bits"
# the wrong test says what check says about that answer, and not the answer
"$MIXPREC" check 7.4a fp16_min_normal=5.9604644775390625e-08 --student s001 --course-seed fall26 >"$tmp/check.txt" 2>&1
"$PY" -c '
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["tests"]}
want = open(sys.argv[2]).read().splitlines()[0]
out = t["7.4a fp16_min_normal"]["output"]
assert out == want, (out, want)
assert "6.103515625e-05" not in out and "0x2e66" not in t["7.4d fp16_bits"]["output"], out
' "$tmp/wrong/results/results.json" "$tmp/check.txt" && ok "wrong: the output is check's diagnosis, without the answer" \
	|| bad "wrong: the output is check's diagnosis, without the answer"
ls "$tmp/wrong/results" >"$tmp/ls.txt"
[ "$(cat "$tmp/ls.txt")" = results.json ] && ok "results/: results.json only, no temporary file" \
	|| bad "results/: results.json only" "$(cat "$tmp/ls.txt")"
# a second run replaces the first result
grep -e '^student_id,' -e '^s001,' "$example" >"$tmp/wrong/submission/answers.csv"
grade wrong
verdict wrong "$n" "$n" -

# the email when the metadata has no sid: a roster of that id, the answers
# from lab new's key for it (the round trip of tests/cli-hardening.sh)
printf 'student_id\nada@example.org\n' >"$tmp/eroster.csv"
run lab new --roster "$tmp/eroster.csv" --out "$tmp/esheets" --course-seed fall26
run lab autograder --out "$tmp/be" --source "$tmp/src.tar.gz" --course-seed fall26 --roster "$tmp/eroster.csv"
mkroot email be
printf '{"users": [{"email": "ada@example.org", "id": 7, "name": "Ada"}]}\n' >"$tmp/email/submission_metadata.json"
awk 'NR == 1 { print "student_id,exercise,field,answer"; next } { print }' "$tmp/esheets/answer-key.csv" \
	>"$tmp/email/submission/mine.CSV"
grade email
verdict email "$n" "$n" - "ada@example.org"

# malformed NAME TEXT: score 0, all tests failed, TEXT in the output
malformed() {
	grade "$1"
	expect_rc "$1" 0
	verdict "$1" 0 "$n" '*' "Not graded" "$2"
}
good_csv() {
	grep -e '^student_id,' -e '^s001,' "$example" >"$tmp/$1/submission/${2:-answers.csv}"
}

mkroot notutf8
good_csv notutf8
printf 's001,7.4e,steps,6\37765\n' >>"$tmp/notutf8/submission/answers.csv"
malformed notutf8 "answers.csv:$((n + 2)): not UTF-8"

mkroot columns
printf 'student,exercise,answer\ns001,7.4a,1\n' >"$tmp/columns/submission/answers.csv"
malformed columns "answers.csv:1: the header needs the columns"

mkroot huge
{ echo "student_id,exercise,field,answer"; printf 's001,7.4a,fp16_min_normal,'; head -c 10485760 /dev/zero | tr '\0' 7; echo; } \
	>"$tmp/huge/submission/answers.csv"
malformed huge "answers.csv:2: a field longer than"

mkroot formula
good_csv formula
printf '{"users": [{"email": "x@example.org", "sid": "=HYPERLINK(\\"http://evil\\")"}]}\n' >"$tmp/formula/submission_metadata.json"
malformed formula "users[0].sid: student id '=HYPERLINK"

mkroot nocsv
printf 'hello\n' >"$tmp/nocsv/submission/answers.txt"
malformed nocsv "no CSV file in the submission"

mkroot twocsv
good_csv twocsv a.csv
good_csv twocsv b.csv
malformed twocsv "more than one CSV file"

mkroot nometa
good_csv nometa
rm "$tmp/nometa/submission_metadata.json"
malformed nometa "submission_metadata.json: missing"

mkroot badmeta
good_csv badmeta
printf '{"users": [' >"$tmp/badmeta/submission_metadata.json"
malformed badmeta "submission_metadata.json:1: not JSON"

mkroot group
good_csv group
printf '{"users": [{"sid": "s001"}, {"sid": "s002"}]}\n' >"$tmp/group/submission_metadata.json"
malformed group "a group submission (2 users)"

mkroot stranger
good_csv stranger
printf '{"users": [{"sid": "s999"}]}\n' >"$tmp/stranger/submission_metadata.json"
malformed stranger "student id 's999' is not in the course's roster"

mkroot other
good_csv other
printf '{"users": [{"sid": "s002"}]}\n' >"$tmp/other/submission_metadata.json"
malformed other "unknown student 's001'"

# the lab's configuration broken: still a results.json, score 0, exit 3
mkroot broken
good_csv broken
printf '{"course_seed": 5}\n' >"$tmp/broken/source/lab.json"
grade broken
expect_rc "a broken lab.json" 3
"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["score"] == 0 and r["tests"] == [] and "course_seed" in r["output"], r
' "$tmp/broken/results/results.json" && ok "broken lab.json: score 0, the reason" || bad "broken lab.json"

# ---------------------------------------------------------------------------
finish
