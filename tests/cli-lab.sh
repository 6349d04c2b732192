#!/bin/sh
# CLI tests of mixprec lab new and grade: rosters and their bad rows, the
# sheets and answer key, grading against students' variants, the class
# summary, formula-like text neutralised, optional fields, and outputs that
# must not overwrite inputs.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
# $MIXPREC is the binary under test (exported by the harness; default ./mixprec).
#
# Every expected value below is derived by hand (the derivation is in the
# comment next to it) or computed here with awk from the format definitions;
# none is copied from the program's output.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp lab
private_state

# ---------------------------------------------------------------------------
echo "# lab new and grade"

printf 'student_id,name\ns1,Ada\ns2,"=HYPERLINK(""http://evil"")"\ns3,Grace\nbad id,X\ns1,Dup\n' >"$tmp/roster.csv"
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab" --course-seed c1
expect_rc "lab new with two bad roster rows" 2
err_has "lab new: unusable id named with file:line" "roster.csv:5: student id 'bad id'"
err_has "lab new: duplicate named with both lines" "roster.csv:6: student s1 is listed twice (first on line 2)"
[ ! -e "$tmp/lab" ] && ok "lab new with bad roster rows: nothing written" || bad "lab new with bad rows wrote" "$(ls "$tmp/lab")"
# the roster without its two bad rows (lines 5 and 6)
head -n 4 "$tmp/roster.csv" >"$tmp/roster-ok.csv"
run lab new --roster "$tmp/roster-ok.csv" --out "$tmp/lab" --course-seed c1
expect_rc "lab new with a good roster" 0
for f in s1.md s1.txt s1-answers.csv s2.md s3-answers.csv answer-key.csv; do
	[ -f "$tmp/lab/$f" ] && ok "lab new wrote $f" || bad "lab new wrote $f"
done
grep -q '^s1,7.4c,total_gb,$' "$tmp/lab/s1-answers.csv" && ok "answer template row" || bad "answer template row" "$(head -3 "$tmp/lab/s1-answers.csv")"
# the sheet shows the student's own parameters, as exercise show --params does
# lab new prints the seed on the sheets, in Markdown code spans and a shell
# line: a backtick, a space, a newline or a leading '-' is refused there,
# from the option or the environment; check, show and grade take any seed
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab-bad" --course-seed 'c`1'
usage_error "lab new --course-seed with a backtick" "--course-seed" "'\`'"
[ ! -e "$tmp/lab-bad" ] && ok "lab new with a bad seed: no folder" || bad "lab new with a bad seed: no folder"
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab-bad" --course-seed "c 1"
usage_error "lab new --course-seed with a space" "--course-seed"
export MIXPREC_COURSE_SEED=-rf
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab-bad"
usage_error "lab new, MIXPREC_COURSE_SEED starting with -" "MIXPREC_COURSE_SEED" "start with '-'"
run exercise list
expect_rc "exercise list ignores MIXPREC_COURSE_SEED=-rf" 0
unset MIXPREC_COURSE_SEED
run exercise show 7.4c --student s3 --course-seed "Fall 2024" --params
expect_rc "exercise show: a seed with a space (an existing course's)" 0
run exercise show 7.4c --student s3 --course-seed ML101-2026/fall:b+c@x.y=z, --params
expect_rc "exercise show with every allowed seed character" 0
run exercise show 7.4c --student s3 --course-seed c1 --params
P=$(sed -n 's/^P=//p' "$tmp/out")
grep -q "P = $P parameters" "$tmp/lab/s3.txt" && ok "sheet of s3 has its P=$P" || bad "sheet of s3 has its P=$P"
# 7.4c for s3 by hand: 20 bytes per parameter, total = 20 x P / 1e9 GB
gb=$(awk -v p="$P" 'BEGIN { printf "%.6g", 20 * p / 1e9 }')
# a submission: s1 all right (the key), s3 one mistake and formula-like answers, an unknown student, a bad row
awk -F, 'NR == 1 { print "student_id,exercise,field,answer"; next } $1 == "s1" || $1 == "s3" { print }' "$tmp/lab/answer-key.csv" >"$tmp/sub.csv"
sed -i -e 's/^s3,7.4c,total_gb,.*/s3,7.4c,total_gb,@SUM(1)/' -e 's/^s3,7.4c,bytes_per_param,.*/s3,7.4c,bytes_per_param,16/' "$tmp/sub.csv"
printf 's9,7.4a,fp16_min_normal,1\ns3,7.4a,bf16_min_normal,1"2\n' >>"$tmp/sub.csv"
run grade --roster "$tmp/roster-ok.csv" "$tmp/sub.csv" --out "$tmp/grades.csv" --summary "$tmp/summary.csv" --course-seed c1
expect_rc "grade with bad rows" 2
err_has "grade: unknown student with file:line" "sub.csv:$(($(wc -l <"$tmp/sub.csv") - 1)): unknown student 's9'"
err_has "grade: malformed row with file:line" "sub.csv:$(wc -l <"$tmp/sub.csv"):"
[ ! -e "$tmp/grades.csv" ] && [ ! -e "$tmp/summary.csv" ] && ok "grade with bad rows: no file written" ||
	bad "grade with bad rows wrote a file" "$(ls "$tmp")"
out_has "grade with bad rows: the class table still shown" "most common wrong answer"
# the same submission without its two bad rows (its last two lines): graded into the files
head -n -2 "$tmp/sub.csv" >"$tmp/sub-ok.csv"
run grade --roster "$tmp/roster-ok.csv" "$tmp/sub-ok.csv" --out "$tmp/grades.csv" --summary "$tmp/summary.csv" --course-seed c1
expect_rc "grade: s3 and s2 not all right" 1
nf=$(grep -c '^s1,' "$tmp/lab/answer-key.csv")   # one key row per field of the lab
grep -q "^s1,Ada,total,1.000,$nf,$nf," "$tmp/grades.csv" && ok "grade: s1 all right" || bad "grade: s1 all right" "$(grep '^s1' "$tmp/grades.csv" | tail -1)"
grep -q '^s3,Grace,7.4c,0.333,1,3,.*accumulator' "$tmp/grades.csv" && ok "grade: s3 7.4c wrong, explained" || bad "grade: s3 7.4c" "$(grep '^s3,Grace,7.4c' "$tmp/grades.csv")"
grep -q '^s2,"'"'"'=HYPERLINK(""http://evil"")",7.4a,' "$tmp/grades.csv" && ok "grade: formula-like name neutralised" || bad "grade: formula-like name neutralised" "$(grep '^s2' "$tmp/grades.csv" | head -1)"
grep -q "^7.4c,total_gb,3,1,0.333,'@SUM(1),1,,0$" "$tmp/summary.csv" && ok "grade summary: formula-like answer neutralised" || bad "grade summary: formula-like answer" "$(grep '^7.4c,total_gb' "$tmp/summary.csv")"
grep -q "^7.4c,bytes_per_param,3,1,0.333,16,1,.*accumulator.*,1$" "$tmp/summary.csv" && ok "grade summary: most common wrong answer and mistake" || bad "grade summary: most common wrong answer" "$(grep '^7.4c,bytes' "$tmp/summary.csv")"
out_has "grade: class table" "most common wrong answer"
# s3 corrects the answer: gb computed by hand above
sed -i -e "s/^s3,7.4c,total_gb,.*/s3,7.4c,total_gb,$gb/" -e 's/^s3,7.4c,bytes_per_param,.*/s3,7.4c,bytes_per_param,20/' -e '/^s9/d' -e '/1"2/d' "$tmp/sub.csv"
printf 'student_id\ns1\ns3\n' >"$tmp/roster2.csv"
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1
expect_rc "grade: everyone right" 0
grep -q "^s3,,total,1.000,$nf,$nf," "$tmp/out" && ok "grade to stdout: s3 all right with P=$P" || bad "grade to stdout: s3" "$(grep '^s3' "$tmp/out" | tail -2)"
# one mistake in two variants: s1 and s3 both give twice 7.4e's spacing,
# which by hand is 2^(floor(log2 w) - 7) for bf16's 8 significant bits (floor, not
# awk's int, which rounds toward zero below w = 1):
# two different answers, one mistake ("off by a factor of two")
run exercise show 7.4e --student s1 --course-seed c1 --params
w1=$(sed -n 's/^w=//p' "$tmp/out")
run exercise show 7.4e --student s3 --course-seed c1 --params
w3=$(sed -n 's/^w=//p' "$tmp/out")
twice() { awk -v w="$1" 'BEGIN { l = log(w) / log(2); e = int(l); if (e > l) e--; printf "%.10g", 2 * 2^(e - 7) }'; }
x1=$(twice "$w1")
x3=$(twice "$w3")
sed -e "s/^s1,7.4e,spacing,.*/s1,7.4e,spacing,$x1/" -e "s/^s3,7.4e,spacing,.*/s3,7.4e,spacing,$x3/" "$tmp/sub.csv" >"$tmp/sub-x2.csv"
run grade --roster "$tmp/roster2.csv" "$tmp/sub-x2.csv" --course-seed c1 --summary "$tmp/summary-x2.csv"
expect_rc "grade: two students, the same mistake" 1
if [ "$x1" != "$x3" ] && grep -q "^7.4e,spacing,2,0,0.000,[0-9.e+-]*,1,\"spacing: wrong, off by a factor of two.\",2$" "$tmp/summary-x2.csv"; then
	ok "grade summary: one mistake in two variants counted for both (answers $x1 and $x3)"
else
	bad "grade summary: one mistake in two variants" "w1=$w1 w3=$w3: $(grep '^7.4e,spacing' "$tmp/summary-x2.csv")"
fi
err_has "grade table: the mistake and how many made it" "2 made this mistake"
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv"
expect_rc "grade with another course seed: answers wrong" 1
run grade --roster "$tmp/nonexistent.csv" "$tmp/sub.csv"
expect_rc "grade: missing roster" 3
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --out /nonexistent/dir/g.csv --course-seed c1
expect_rc "grade: unwritable output" 3
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --exercises 7.4a,nosuch
expect_rc "grade: unknown exercise in --exercises" 2
err_has "grade --exercises: names it" "nosuch"
# a teacher's file whose parameters combine into a variant that cannot be
# solved for some students (gmin > gmax): those are reported, the rest graded
mkdir "$tmp/exsc"
printf '[sc]\ntitle: T\nkind: scale-choice\nparam gmax: 4\nvary gmax: list 1 4\nparam gmin: 0.5\nvary gmin: list 0.5 3\nprompt: p\nfield fits: choice yes|no\n' >"$tmp/exsc/sc.ex"
printf 'student_id\n' >"$tmp/roster3.csv"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do echo "p$i" >>"$tmp/roster3.csv"; done
printf 'student_id,exercise,field,answer\np1,sc,fits,yes\n' >"$tmp/sub3.csv"
run grade --roster "$tmp/roster3.csv" "$tmp/sub3.csv" --exercise-dir "$tmp/exsc" --exercises sc
expect_rc "grade with unsolvable variants" 2
err_has "grade: unsolvable variant named" "must not exceed gmax"
n_bad=$(grep -c 'not graded' "$tmp/out")
n_rows=$(grep -c '^p[0-9]*,,sc,' "$tmp/out")
[ "$n_rows" -eq 16 ] && [ "$n_bad" -gt 0 ] && [ "$n_bad" -lt 16 ] && ok "grade: unsolvable variants marked, others graded ($n_bad of 16)" \
	|| bad "grade: unsolvable variants marked, others graded" "rows $n_rows, not graded $n_bad"
run lab --help
expect_rc "lab --help" 0
run grade --help
expect_rc "grade --help" 0
# review: a roster name is shown literally on the sheet: no HTML, links or a
# heading of its own (a quoted name may hold a line break)
printf 'student_id,name\ns1,"Eve <img src=x> [x](http://e)\n# Forged"\n' >"$tmp/roster-md.csv"
run lab new --roster "$tmp/roster-md.csv" --out "$tmp/lab-md" --exercises 7.4c
expect_rc "lab new: name with Markdown" 0
if ! grep -q '^# Forged' "$tmp/lab-md/s1.md" && grep -qF 'Eve \<img src\=x\>' "$tmp/lab-md/s1.md" && grep -q 'Eve <img src=x> \[x\](http://e) # Forged' "$tmp/lab-md/s1.txt"; then
	ok "lab new: name escaped in the sheet, shown as typed in the text"
else
	bad "lab new: name escaped in the sheet" "$(head -2 "$tmp/lab-md/s1.md"; head -1 "$tmp/lab-md/s1.txt")"
fi
# review: --summary onto the grades' own file would lose one of them
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1 --out "$tmp/same.csv" --summary "$tmp/same.csv"
expect_rc "grade --summary = --out" 2
err_has "grade --summary = --out: names it" "--summary: '$tmp/same.csv'"
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1 --summary -
expect_rc "grade --summary - with grades on stdout" 2
# review: a failed write names the file (it used to exit 3 in silence)
if [ -w /dev/full ]; then
	run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1 --out /dev/full
	expect_rc "grade --out /dev/full" 3
	err_has "grade --out /dev/full: names the file" "/dev/full: No space left on device"
fi
# review: --out into a FIFO writes through it (it is not replaced by a file)
mkfifo "$tmp/grades.fifo"
timeout 20 cat "$tmp/grades.fifo" >"$tmp/fifo.out" &
reader=$!
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1 --out "$tmp/grades.fifo"
expect_rc "grade --out FIFO" 0
wait "$reader"
if [ -p "$tmp/grades.fifo" ] && grep -q '^student_id,' "$tmp/fifo.out"; then
	ok "grade --out FIFO: still a FIFO, the reader got the grades"
else
	bad "grade --out FIFO" "$(ls -l "$tmp/grades.fifo"; head -2 "$tmp/fifo.out")"
fi

# an optional field (7.4f's steps) left unanswered neither counts against a
# student nor in the field's success rate; the stall value alone solves it
printf 'student_id,name\ns1,A\ns2,B\n' >"$tmp/opt-r.csv"
run lab new --roster "$tmp/opt-r.csv" --out "$tmp/opt-lab" --course-seed c --exercises 7.4f
expect_rc "lab new --exercises 7.4f" 0
awk -F, 'NR == 1 { print "student_id,exercise,field,answer"; next } $3 != "steps" { print }' \
	"$tmp/opt-lab/answer-key.csv" >"$tmp/opt-sub.csv"
run grade --roster "$tmp/opt-r.csv" "$tmp/opt-sub.csv" --course-seed c --exercises 7.4f --out "$tmp/opt-g.csv"
expect_rc "grade: optional field unanswered" 0
out_has "grade: both solved without the optional field" "2 answered everything right"
out_has "grade: the optional field is rated over those who answered it" "steps                 0/0"
grep -q '^s1,A,7.4f,1.000,1,1,' "$tmp/opt-g.csv" && ok "grade: the optional field is not in the score" \
	|| bad "grade: the optional field is not in the score" "$(grep '^s1,A,7.4f' "$tmp/opt-g.csv")"

# ---------------------------------------------------------------------------
finish
