#!/bin/sh
# PrairieLearn external grader for a mixprec classroom lab: the entrypoint
# of a question's externalGradingOptions. Grades the one CSV the student
# submitted (the answers format of 'mixprec lab new', student_id,exercise,
# field,answer) against that student's variant and writes PrairieLearn's
# results file.
#
# Every path is under one root, $MIXPREC_GRADE_ROOT (default /grade, where
# PrairieLearn mounts the job):
#   ROOT/student/*.csv       the submission (exactly one CSV)
#   ROOT/tests/roster.csv    the course roster (the question's tests/ folder)
#   ROOT/tests/lab.conf      course-seed=S and, optionally, exercises=LIST
#   ROOT/results/results.json  written: gradable, score in [0, 1], message,
#                            output, tests[] (mixprec grade --format prairielearn)
# $MIXPREC names the program (default: mixprec on PATH).
#
# A submission that cannot be graded (no CSV or several, not UTF-8, a bad
# row, an unknown or unusable student id, a student id that is not the only one in
# the file) gets "gradable": false, score 0 and a message that says why;
# the script itself always exits 0 once results.json is written.
set -u
root=${MIXPREC_GRADE_ROOT:-/grade}
mixprec=${MIXPREC:-mixprec}
results=$root/results
mkdir -p "$results" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/mixprec-grade.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# stdin as the inside of a JSON string: printable ASCII and line breaks
# only (a submission's bytes may be anything), at most 20000 bytes
json_text() {
	LC_ALL=C tr -cd '\n\040-\176' | head -c 20000 |
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' |
		awk 'BEGIN { ORS = "" } NR > 1 { print "\\n" } { print }'
}

# A submission that cannot be graded: score 0, and why.
not_gradable() {
	msg=$(printf '%s\n' "$1" | json_text)
	printf '{"gradable": false, "score": 0, "message": "%s", "format_errors": ["%s"], "output": "%s", "tests": []}\n' \
		"$msg" "$msg" "$msg" >"$results/results.json.tmp" &&
		mv "$results/results.json.tmp" "$results/results.json"
	exit 0
}

conf=$root/tests/lab.conf
roster=$root/tests/roster.csv
[ -r "$conf" ] || not_gradable "grader set-up: $conf is missing (course-seed=S)"
[ -r "$roster" ] || not_gradable "grader set-up: $roster is missing"
seed=$(sed -n 's/^course-seed=//p' "$conf" | head -n 1)
exercises=$(sed -n 's/^exercises=//p' "$conf" | head -n 1)

n=0
for f in "$root"/student/*.csv; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	sub=$f
done
[ "$n" -eq 1 ] || not_gradable "expected one CSV file of answers (student_id,exercise,field,answer), found $n"
if command -v iconv >/dev/null 2>&1 && ! iconv -f UTF-8 -t UTF-8 "$sub" >/dev/null 2>&1; then
	not_gradable "the submission is not UTF-8 text: save it as CSV in UTF-8"
fi

# the student: the one id of the student_id column (a student id never holds
# a comma or a quote, so the column is found by splitting on commas)
ids=$(LC_ALL=C awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) { h = tolower($i); gsub(/^[ \t"]+|[ \t"\r]+$/, "", h); if (h == "student_id" || h == "id") col = i }; next }
	col { v = $col; gsub(/^[ \t"]+|[ \t"\r]+$/, "", v); if (v != "" && !(v in seen)) { seen[v] = 1; print v } }' "$sub" | head -n 3)
case $ids in
'') not_gradable "no student_id in the submission (its header must be student_id,exercise,field,answer)" ;;
*'
'*) not_gradable "the submission holds answers of more than one student id; give only your own" ;;
esac
id=$ids
case $id in
*[!A-Za-z0-9._@-]* | .* | -* | @*) not_gradable "student id '$id' is not usable (letters, digits, '.', '_', '@', '-')" ;;
esac

set -- grade --roster "$roster" --course-seed "$seed" --format prairielearn --out "$work/out"
[ -n "$exercises" ] && set -- "$@" --exercises "$exercises"
"$mixprec" "$@" "$sub" >/dev/null 2>"$work/log"
rc=$?
if [ "$rc" -le 1 ] && [ -f "$work/out/$id/results.json" ]; then
	cp "$work/out/$id/results.json" "$results/results.json.tmp" &&
		mv "$results/results.json.tmp" "$results/results.json"
	exit 0
fi
# what mixprec said, less the line about the results it kept back
why=$(grep -v 'not written (the inputs above have problems)' "$work/log" | sed "s|$root/student/||g")
not_gradable "the submission could not be graded:
$why"
