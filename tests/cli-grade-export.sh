#!/bin/sh
# CLI tests of mixprec grade --format canvas|moodle|prairielearn and of the
# PrairieLearn grader script (data/prairielearn/grade.sh): each output
# checked against its tool's published format (the JSON schema
# tests/prairielearn-results.schema.json and tests/check-gradebook.py name
# the pages), the points against what the submissions were built to score,
# rows matched by the roster's identities, students not on the roster
# reported and never invented, bad submissions graded 0 with a reason, and
# no output written when an input has a problem.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip (no
# /usr/bin/python3 with jsonschema: Debian python3-jsonschema).
#
# The expected points are derived here: the right answers come from the
# answer key of 'lab new', and a submission's points on an exercise are the
# key's fields it keeps (every corrupted answer, "999" or "zz", is wrong for
# any variant of these exercises: none asks for 999, and "zz" is no number
# or choice). An exercise's points possible are its fields in the key (the
# default lab 7.4a-7.4e has no optional field).

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

PY=/usr/bin/python3
if ! "$PY" -c 'import jsonschema' 2>/dev/null; then
	echo "SKIP: $PY has no jsonschema (Debian: apt-get install python3-jsonschema)"
	exit 77
fi
src=${srcdir:-.}
schema=$src/tests/prairielearn-results.schema.json
MIXPREC_ABS=$(cd "$(dirname "$MIXPREC")" && pwd)/$(basename "$MIXPREC")

make_tmp gradeexp
private_state

# s1 Ada: all right. s2: 7.4b with 2 fields wrong, 7.4d with 1. s3, whose
# name is a formula: 7.4a with every field wrong; only a SIS login id.
# s4: nothing submitted; only a Canvas id.
cat >"$tmp/roster.csv" <<'CSV'
student_id,name,email,canvas_id,sis_user_id,sis_login_id,section
s1,Ada,ada@example.org,,1001,,A
s2,Alan,alan@example.org,,1002,alan,A
s3,"=HYPERLINK(""http://x"")",,,,grace,B
s4,Bo,,4004,,,B
CSV
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab" --course-seed c1
expect_rc "lab new with the identity columns" 0
key=$tmp/lab/answer-key.csv
# points possible: the key's rows of s1 per exercise
pp=$(awk -F, 'NR > 1 && $1 == "s1" { n[$2]++; if (!($2 in seen)) { seen[$2] = 1; o[++k] = $2 } }
	END { for (i = 1; i <= k; i++) printf "%s%s=%d", (i > 1 ? "," : ""), o[i], n[o[i]] }' "$key")
[ "$pp" = "7.4a=5,7.4b=6,7.4c=3,7.4d=8,7.4e=3" ] && ok "points possible from the key: $pp" ||
	bad "points possible from the key" "$pp"
# the submissions: the key's answers, corrupted where the comment above says
awk -F, -v OFS=, 'NR == 1 { print "student_id,exercise,field,answer"; next }
	$1 == "s4" { next }
	$1 == "s2" && $2 == "7.4b" && b++ < 2 { $4 = "999" }
	$1 == "s2" && $2 == "7.4d" && d++ < 1 { $4 = "zz" }
	$1 == "s3" && $2 == "7.4a" { $4 = "999" }
	{ print }' "$key" >"$tmp/sub.csv"
want='s1=5/6/3/8/3;s2=5/4/3/7/3;s3=0/6/3/8/3;s4=0/0/0/0/0'

# ---- Canvas --------------------------------------------------------------------
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format canvas --out "$tmp/canvas.csv"
expect_rc "grade --format canvas (some wrong)" 1
msg=$("$PY" "$src/tests/check-gradebook.py" canvas "$tmp/canvas.csv" "$tmp/roster.csv" "$pp" "$want")
check "canvas CSV: header, Points Possible, rows by id, points" $? "$msg"
grep -q "^\"'=HYPERLINK" "$tmp/canvas.csv" && ok "canvas CSV: the formula name neutralised" ||
	bad "canvas CSV: formula name" "$(grep -i hyperlink "$tmp/canvas.csv")"
# Canvas assignment ids: "Title (id)" for the exercises given one
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format canvas --out "$tmp/canvas-ids.csv" \
	--assignment-ids 7.4b=4242,7.4e=7
expect_rc "canvas with assignment ids" 1
cols=$("$PY" -c 'import csv, sys; h = next(csv.reader(open(sys.argv[1]))); print("|".join(c[c.rfind("("):] if c.endswith(")") else "-" for c in h[5:]))' "$tmp/canvas-ids.csv")
[ "$cols" = "-|(4242)|-|-|(7)" ] && ok "canvas: assignment ids in parentheses where given" || bad "canvas: assignment ids" "$cols"
msg=$("$PY" "$src/tests/check-gradebook.py" canvas "$tmp/canvas-ids.csv" "$tmp/roster.csv" "$pp" "$want")
check "canvas CSV with ids: the same rows and points" $? "$msg"
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format canvas --assignment-ids 7.4b=12x
expect_rc "canvas: an assignment id that is no whole number" 2
err_has "canvas: the bad id named" "--assignment-ids: '7.4b=12x' is not EXERCISE=ID with ID a whole number"
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format canvas --assignment-ids 7.4f=1
expect_rc "canvas: an assignment id for an exercise not graded" 2
err_has "canvas: the exercise named" "--assignment-ids: '7.4f' is not an exercise of this lab"
# a student of a submission who is not on the roster: reported, never a row
cp "$tmp/sub.csv" "$tmp/sub9.csv"
echo "s9,7.4a,fp16_flushes,yes" >>"$tmp/sub9.csv"
run grade --roster "$tmp/roster.csv" "$tmp/sub9.csv" --course-seed c1 --format canvas --out "$tmp/canvas9.csv"
expect_rc "canvas with a student not on the roster" 2
err_has "canvas: the unknown student named with file:line" "sub9.csv:$(wc -l <"$tmp/sub9.csv"): unknown student 's9'"
[ ! -e "$tmp/canvas9.csv" ] && ok "canvas with an unknown student: nothing written" || bad "canvas9.csv written"
# a roster student Canvas cannot match (no canvas_id, sis_user_id or sis_login_id)
printf 'student_id,name\ns1,Ada\n' >"$tmp/roster-noid.csv"
run grade --roster "$tmp/roster-noid.csv" "$tmp/sub.csv" --course-seed c1 --format canvas --out "$tmp/canvas-noid.csv"
expect_rc "canvas: a roster student without a Canvas identity" 2
err_has "canvas: the unmatched student named with roster:line" "roster-noid.csv:2: student s1 has no canvas_id, sis_user_id or sis_login_id"
[ ! -e "$tmp/canvas-noid.csv" ] && ok "canvas without identities: nothing written" || bad "canvas-noid.csv written"

# ---- Moodle --------------------------------------------------------------------
# s3 and s4 have neither an email nor a sis_user_id: Moodle cannot key their rows
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format moodle --out "$tmp/moodle.csv"
expect_rc "moodle with a student it cannot match" 2
err_has "moodle: the unmatched students named (s3)" "roster.csv:4: student s3 has no email or sis_user_id"
err_has "moodle: the unmatched students named (s4)" "roster.csv:5: student s4 has no email or sis_user_id"
[ ! -e "$tmp/moodle.csv" ] && ok "moodle with an unmatched student: nothing written" || bad "moodle.csv written"
sed -e 's/^s4,Bo,,4004,,,B$/s4,Bo,bo@example.org,4004,,,B/' -e 's/^\(s3,.*\),,,,grace,B$/\1,,,3003,grace,B/' \
	"$tmp/roster.csv" >"$tmp/roster-m.csv"
run grade --roster "$tmp/roster-m.csv" "$tmp/sub.csv" --course-seed c1 --format moodle --out "$tmp/moodle.csv"
expect_rc "grade --format moodle" 1
msg=$("$PY" "$src/tests/check-gradebook.py" moodle "$tmp/moodle.csv" "$tmp/roster-m.csv" "$pp" "$want")
check "moodle CSV: header, rows by email or ID number, points" $? "$msg"

# the identity columns spelt as Canvas's and Moodle's exports spell them
{
	echo 'student_id,Full name,Email address,SIS User ID'
	awk -F, 'NR > 1 { print $1 ",x," ($3 == "" ? $1 "@example.org" : $3) "," $5 }' "$tmp/roster.csv"
} >"$tmp/roster-spelt.csv"
run grade --roster "$tmp/roster-spelt.csv" "$tmp/sub.csv" --course-seed c1 --format moodle --out "$tmp/moodle-spelt.csv"
expect_rc "moodle with 'Email address' and 'SIS User ID' columns" 1
awk -F, 'NR > 1 { printf "%s;", $1 }' "$tmp/moodle-spelt.csv" >"$tmp/emails"
[ "$(cat "$tmp/emails")" = "ada@example.org;alan@example.org;s3@example.org;s4@example.org;" ] &&
	ok "moodle: the emails read from an 'Email address' column" || bad "moodle: spelt columns" "$(cat "$tmp/emails")"

# ---- PrairieLearn, from grade ------------------------------------------------------
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format prairielearn
expect_rc "prairielearn without --out" 2
err_has "prairielearn without --out: says so" "--format prairielearn needs --out DIR"
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format prairielearn --out "$tmp/pl"
expect_rc "grade --format prairielearn" 1
msg=$("$PY" "$src/tests/check-pl-results.py" "$schema" "$tmp/pl/s1/results.json=25/25" "$tmp/pl/s2/results.json=22/25" \
	"$tmp/pl/s3/results.json=20/25" "$tmp/pl/s4/results.json=0/25")
check "prairielearn results: schema, scores add up, points as built" $? "$msg"
[ "$(ls "$tmp/pl")" = "$(printf 's1\ns2\ns3\ns4')" ] && ok "prairielearn: one folder per roster student, nothing else" ||
	bad "prairielearn folders" "$(ls -a "$tmp/pl")"
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format prairielearn --out "$tmp/pl"
expect_rc "prairielearn into a folder that is not empty" 2
err_has "prairielearn into a full folder: says so" "exists and is not an empty folder"
run grade --roster "$tmp/roster.csv" "$tmp/sub9.csv" --course-seed c1 --format prairielearn --out "$tmp/pl9"
expect_rc "prairielearn with a student not on the roster" 2
[ ! -e "$tmp/pl9" ] && [ -z "$(ls "$tmp" | grep 'pl9\.part')" ] && ok "prairielearn with a bad input: no folder, no leftovers" ||
	bad "prairielearn with a bad input wrote" "$(ls "$tmp")"
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --format gradescope
expect_rc "an unknown --format" 2
err_has "an unknown --format: named" "--format: unknown format 'gradescope'"

# ---- PrairieLearn's grader script --------------------------------------------------
# grade_in NAME: runs the script in a fresh root $tmp/NAME whose student/
# holds what the caller put in $tmp/NAME.in/
grade_in() {
	r=$tmp/$1
	mkdir -p "$r/student" "$r/tests"
	cp "$tmp/roster.csv" "$r/tests/roster.csv"
	printf 'course-seed=c1\n' >"$r/tests/lab.conf"
	cp "$tmp/$1.in"/* "$r/student/" 2>/dev/null
	MIXPREC_GRADE_ROOT=$r MIXPREC=$MIXPREC_ABS sh "$src/data/prairielearn/grade.sh" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	res=$r/results/results.json
}
# not_gradable NAME WHY: the script's verdict on a bad submission
not_gradable() {
	grade_in "$1"
	msg=$("$PY" "$src/tests/check-pl-results.py" "$schema" "$res=not-gradable")
	check "grader, $1: valid results, not gradable, score 0" $? "$msg"
	grep -Fq -e "$2" "$res" && ok "grader, $1: says why" || bad "grader, $1: says why" "$(head -c 400 "$res")"
	[ "$rc" -eq 0 ] && ok "grader, $1: exit 0" || bad "grader, $1: exit $rc"
}
for s in s1 s2; do
	mkdir -p "$tmp/$s.in"
	grep -E "^(student_id|$s)," "$tmp/sub.csv" >"$tmp/$s.in/my answers.csv"
done
grade_in s1
msg=$("$PY" "$src/tests/check-pl-results.py" "$schema" "$res=25/25")
check "grader, all right: valid, 25 of 25 points" $? "$msg"
grep -q '"score": 1' "$res" && ok "grader, all right: score 1" || bad "grader, all right: score" "$(grep score "$res")"
grade_in s2
msg=$("$PY" "$src/tests/check-pl-results.py" "$schema" "$res=22/25")
check "grader, three wrong: valid, 22 of 25 points" $? "$msg"
mkdir -p "$tmp/none.in"
not_gradable none "expected one CSV file of answers"
mkdir -p "$tmp/columns.in" && printf 'who,what\ns1,7.4a\n' >"$tmp/columns.in/a.csv"
not_gradable columns "no student_id in the submission"
mkdir -p "$tmp/shortrow.in" && printf 'student_id,exercise,field,answer\ns1,7.4a\n' >"$tmp/shortrow.in/a.csv"
not_gradable shortrow "a.csv:2: 2 fields; expected at least 3"
mkdir -p "$tmp/utf8.in" && printf 'student_id,exercise,field,answer\ns1,7.4a,fp16_flushes,\377\376yes\n' >"$tmp/utf8.in/a.csv"
not_gradable utf8 "not UTF-8 text"
mkdir -p "$tmp/huge.in"
{ printf 'student_id,exercise,field,answer\ns1,7.4a,fp16_flushes,'; head -c 10485760 /dev/zero | tr '\0' 7; echo; } >"$tmp/huge.in/a.csv"
not_gradable huge "a field longer than"
[ "$(wc -c <"$res")" -lt 4096 ] && ok "grader, a 10 MB answer: a short results file" || bad "grader, huge: $(wc -c <"$res") bytes"
mkdir -p "$tmp/formula.in" && printf 'student_id,exercise,field,answer\n=s1,7.4a,fp16_flushes,yes\n' >"$tmp/formula.in/a.csv"
not_gradable formula "student id '=s1' is not usable"
mkdir -p "$tmp/two.in" && grep -E '^(student_id|s1|s2),' "$tmp/sub.csv" >"$tmp/two.in/a.csv"
not_gradable two "more than one student id"
mkdir -p "$tmp/unknown.in" && printf 'student_id,exercise,field,answer\ns9,7.4a,fp16_flushes,yes\n' >"$tmp/unknown.in/a.csv"
not_gradable unknown "unknown student 's9'"
mkdir -p "$tmp/twofiles.in" && cp "$tmp/s1.in/my answers.csv" "$tmp/twofiles.in/a.csv" && cp "$tmp/s1.in/my answers.csv" "$tmp/twofiles.in/b.csv"
not_gradable twofiles "found 2"
# a bad submission leaves another student's grading as it was
grade_in s1
msg=$("$PY" "$src/tests/check-pl-results.py" "$schema" "$res=25/25")
check "grader after bad submissions: s1 still 25 of 25" $? "$msg"

finish
