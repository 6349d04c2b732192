#!/bin/sh
# CLI tests of the misconceptions of mixprec grade: the table after the
# class summary, grade --misconceptions FILE (its CSV, written only when
# every input was read cleanly) and mixprec plot drawing that CSV as bars.
#
# The expected counts follow from how the submissions are built: every
# student gives the answer key of 'lab new', except
#   7.4c bytes_per_param: s1, s2, s3 give 16 and s4 gives 2. Every variant
#     keeps 20 bytes per parameter (2 bf16 weights + 2 bf16 gradients + 4
#     fp32 accumulator + 4 fp32 master + 4 + 4 Adam moments), so the three
#     4-byte omissions coincide at 16 and 7.4c names them in one mistake,
#     "4 bytes short: did you leave out ...", and 2 is its mistake "2 bytes
#     is only the bf16 weight copy ..." (src/teach/exercise_kinds_memory.c);
#   7.4e spacing: s1 and s2 give twice the key's spacing (a power of two, so
#     doubled exactly), the mistake every numeric field can show, tagged
#     "factor of two" (src/teach/exercise_check.c).
# So, most common first: 3 of 4 students (0.750) "4 bytes short", 2 (0.500)
# "factor of two", 1 (0.250) "2 bytes is only".
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp grademisc
private_state

printf 'student_id,name\ns1,A\ns2,B\ns3,C\ns4,D\n' >"$tmp/roster.csv"
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab" --course-seed c1
expect_rc "lab new" 0
awk -F, -v OFS=, 'NR == 1 { print "student_id,exercise,field,answer"; next }
	$2 == "7.4c" && $3 == "bytes_per_param" { $4 = $1 == "s4" ? 2 : 16 }
	$2 == "7.4e" && $3 == "spacing" && ($1 == "s1" || $1 == "s2") { $4 = sprintf("%.17g", 2 * $4) }
	{ print }' "$tmp/lab/answer-key.csv" >"$tmp/sub.csv"

short='4 bytes short: did you leave out the fp32 gradient accumulator'
only='2 bytes is only the bf16 weight copy'
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --out "$tmp/grades.csv" \
	--misconceptions "$tmp/misc.csv"
expect_rc "grade: some answers wrong" 1

# the CSV: the header, then exactly the three rows derived above, in order
if [ "$(head -n 1 "$tmp/misc.csv")" = "misconception,exercise,field,students,share" ] &&
	[ "$(wc -l <"$tmp/misc.csv")" -eq 4 ] &&
	sed -n 2p "$tmp/misc.csv" | grep -q "^\"$short.*\",7.4c,bytes_per_param,3,0.750$" &&
	[ "$(sed -n 3p "$tmp/misc.csv")" = "factor of two,7.4e,spacing,2,0.500" ] &&
	sed -n 4p "$tmp/misc.csv" | grep -q "^$only[^,]*,7.4c,bytes_per_param,1,0.250$"; then
	ok "--misconceptions: three misconceptions, counted and sorted"
else
	bad "--misconceptions: three misconceptions, counted and sorted" "$(cat "$tmp/misc.csv")"
fi

# the table, after the class summary
out_has "grade table: the misconceptions heading" "Misconceptions, most common first (3):"
line() { grep -F -e "$1" "$tmp/out" | grep -v 'made this mistake' | tr -s ' '; }
[ "$(line "factor of two")" = " 2 50% 7.4e spacing factor of two" ] && ok "grade table: factor of two, 2 students" ||
	bad "grade table: factor of two, 2 students" "$(line "factor of two")"
line "$short" | grep -q "^ 3 75% 7.4c bytes_per_param $short" && ok "grade table: 4 bytes short, 3 students" ||
	bad "grade table: 4 bytes short, 3 students" "$(line "$short")"
line "$only" | grep -q "^ 1 25% 7.4c bytes_per_param $only" && ok "grade table: 2 bytes only, 1 student" ||
	bad "grade table: 2 bytes only, 1 student" "$(line "$only")"
n1=$(grep -n 'most common wrong answer' "$tmp/out" | cut -d: -f1)
n2=$(grep -n 'Misconceptions' "$tmp/out" | cut -d: -f1)
[ -n "$n1" ] && [ -n "$n2" ] && [ "$n1" -lt "$n2" ] && ok "grade table: misconceptions after the summary" ||
	bad "grade table: misconceptions after the summary" "lines $n1 $n2"

# everyone right: no misconception, a CSV with the header alone
awk -F, -v OFS=, 'NR == 1 { print "student_id,exercise,field,answer"; next } { print }' \
	"$tmp/lab/answer-key.csv" >"$tmp/right.csv"
run grade --roster "$tmp/roster.csv" "$tmp/right.csv" --course-seed c1 --out "$tmp/g2.csv" --misconceptions "$tmp/m2.csv"
expect_rc "grade: everyone right" 0
[ "$(cat "$tmp/m2.csv")" = "misconception,exercise,field,students,share" ] && ok "--misconceptions: none, the header" ||
	bad "--misconceptions: none, the header" "$(cat "$tmp/m2.csv")"
out_has "grade table: no misconception" "Misconceptions, most common first (0):"

# a problem in an input: no file written, an existing one kept
cp "$tmp/sub.csv" "$tmp/sub-bad.csv"
printf 's9,7.4a,fp16_min_normal,1\n' >>"$tmp/sub-bad.csv"
echo old >"$tmp/m3.csv"
run grade --roster "$tmp/roster.csv" "$tmp/sub-bad.csv" --course-seed c1 --out "$tmp/g3.csv" --misconceptions "$tmp/m3.csv"
expect_rc "grade with an unknown student" 2
[ "$(cat "$tmp/m3.csv")" = old ] && [ ! -e "$tmp/g3.csv" ] && ok "--misconceptions: kept when an input has a problem" ||
	bad "--misconceptions: kept when an input has a problem" "$(head -2 "$tmp/m3.csv")"
err_has "--misconceptions: says it was not written" "--misconceptions: $tmp/m3.csv not written"

# one file for two outputs, or an input as output: refused
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --summary "$tmp/x.csv" --misconceptions "$tmp/x.csv"
expect_rc "--misconceptions onto --summary" 2
err_has "--misconceptions onto --summary: named" "--misconceptions: '$tmp/x.csv' is also where --summary goes"
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --course-seed c1 --misconceptions "$tmp/sub.csv"
expect_rc "--misconceptions onto the submission" 2
err_has "--misconceptions onto the submission: named" "is the submission"

# plot draws the CSV: a bar per misconception, its students as the value
run plot "$tmp/misc.csv" --ascii --width 100 --height 12
expect_rc "plot the misconceptions" 0
grep -F "factor of two" "$tmp/out" | grep -q ' 2$' && ok "plot: the factor-of-two bar, 2 students" ||
	bad "plot: the factor-of-two bar" "$(cat "$tmp/out")"
grep -F "2 bytes is only" "$tmp/out" | grep -q ' 1$' && ok "plot: the 2-bytes bar, 1 student" ||
	bad "plot: the 2-bytes bar" "$(cat "$tmp/out")"
grep -F "4 bytes short" "$tmp/out" | grep -q ' 3$' && ok "plot: the 4-bytes-short bar, 3 students" ||
	bad "plot: the 4-bytes-short bar" "$(cat "$tmp/out")"
# one misconception in two fields is one bar: 2 + 3 students
printf 'misconception,exercise,field,students,share\nx,e1,f1,2,0.2\ny,e1,f1,4,0.4\nx,e2,f2,3,0.3\n' >"$tmp/two.csv"
run plot "$tmp/two.csv" --ascii --width 60 --height 8
expect_rc "plot: one misconception in two fields" 0
[ "$(grep -c '^ *x ' "$tmp/out")" -eq 1 ] && grep '^ *x ' "$tmp/out" | grep -q ' 5$' &&
	grep '^ *y ' "$tmp/out" | grep -q ' 4$' && ok "plot: its fields summed into one bar (5)" ||
	bad "plot: its fields summed into one bar" "$(cat "$tmp/out")"
run plot "$tmp/misc.csv" --svg "$tmp/misc.svg" --width 600 --height 300
if [ "$rc" -eq 0 ]; then
	head -n 2 "$tmp/misc.svg" | grep -Fq 'width="600px" height="300px"' && tail -n 1 "$tmp/misc.svg" | grep -Fqx '</svg>' &&
		ok "plot --svg of the misconceptions" || bad "plot --svg of the misconceptions" "$(head -c 300 "$tmp/misc.svg")"
else
	expect_rc "plot --svg without cairo" 3
fi

finish
