#!/bin/sh
# A failed run leaves every existing file as it was: for each command that
# writes a file, a sentinel at the output path survives a run with one bad
# input (exit status not 0), and a full disk (/dev/full) is an error exit.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
# $MIXPREC is the binary under test (exported by the harness; default ./mixprec).
#
# The oracle is the sentinel itself: the bytes put at the output path before
# the run, compared after it.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp safety
private_state

S="sentinel: an earlier run's file"

# kept NAME FILE ARGS...: puts the sentinel at FILE, runs ARGS, and checks a
# failing exit and FILE unchanged.
kept() {
	name=$1 file=$2
	shift 2
	printf '%s\n' "$S" >"$file"
	run "$@"
	if [ "$rc" -ne 0 ]; then ok "$name: exit $rc"; else bad "$name: a failing exit" "got exit 0"; show_io; fi
	if [ "$(cat "$file" 2>/dev/null)" = "$S" ]; then
		ok "$name: $(basename "$file") unchanged"
	else
		bad "$name: $(basename "$file") unchanged" "now: $(head -c 200 "$file" | head -n 2)"
		show_io
	fi
}

# full NAME ARGS...: ARGS with an output on /dev/full exit with an error that names it.
full() {
	name=$1
	shift
	run "$@"
	if [ "$rc" -ne 0 ] && grep -Fq "/dev/full" "$tmp/err"; then ok "$name: /dev/full is an error (exit $rc)"; else
		bad "$name: /dev/full is an error" "exit $rc"
		show_io
	fi
}

# a lab of one student and a good submission of theirs
printf 'student_id,name\ns1,Ada\n' >"$tmp/roster.csv"
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab" --course-seed c
expect_rc "lab new" 0
awk -F, 'NR == 1 { print "student_id,exercise,field,answer"; next } { print }' "$tmp/lab/answer-key.csv" >"$tmp/sub.csv"
# the same with a row of an unknown student, and with a malformed row
cp "$tmp/sub.csv" "$tmp/sub-unknown.csv"
printf 's9,7.4c,bytes_per_param,20\n' >>"$tmp/sub-unknown.csv"
printf 'student_id,exercise,field,answer\ns1,7.4c,bytes_per_param,"20\n' >"$tmp/sub-malformed.csv"

echo "# grade"
G="$tmp/grades.csv"
kept "grade, a mistyped submission path" "$G" grade --roster "$tmp/roster.csv" "$tmp/sub.csv" "$tmp/sub-typo.csv" \
	--out "$G" --course-seed c
err_has "grade, a mistyped submission: says the file is kept" "--out: $G not written"
kept "grade, the only submission mistyped" "$G" grade --roster "$tmp/roster.csv" "$tmp/sub-typo.csv" --out "$G" --course-seed c
kept "grade, a submission row of an unknown student" "$G" grade --roster "$tmp/roster.csv" "$tmp/sub-unknown.csv" \
	--out "$G" --course-seed c
kept "grade, a malformed submission" "$G" grade --roster "$tmp/roster.csv" "$tmp/sub-malformed.csv" --out "$G" --course-seed c
kept "grade, a mistyped roster" "$G" grade --roster "$tmp/roster-typo.csv" "$tmp/sub.csv" --out "$G" --course-seed c
kept "grade, an unknown exercise" "$G" grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --out "$G" --exercises 7.4c,nosuch \
	--course-seed c
kept "grade --summary, a mistyped submission" "$tmp/summary.csv" grade --roster "$tmp/roster.csv" "$tmp/sub-typo.csv" \
	--out "$G" --summary "$tmp/summary.csv" --course-seed c
# and when every input is good, both files are written: s1 answered the key, all right
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --out "$G" --summary "$tmp/summary.csv" --course-seed c
expect_rc "grade, good inputs" 0
grep -q '^s1,Ada,total,1.000,' "$G" && ok "grade, good inputs: the grades written" || bad "grade, good inputs: grades" "$(cat "$G")"
grep -q '^exercise,field,' "$tmp/summary.csv" && ok "grade, good inputs: the summary written" ||
	bad "grade, good inputs: summary" "$(head -2 "$tmp/summary.csv")"
full "grade --out" grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --out /dev/full --course-seed c
full "grade --summary" grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --summary /dev/full --out "$G" --course-seed c

echo "# lab new"
# an existing lab folder: a roster with a bad row, or a mistyped one, changes none of its files
printf 'student_id,name\ns1,Ada\n-bad,X\n' >"$tmp/roster-bad.csv"
kept "lab new, a bad roster row" "$tmp/lab/s1.md" lab new --roster "$tmp/roster-bad.csv" --out "$tmp/lab" --course-seed c
kept "lab new, a bad roster row: the key" "$tmp/lab/answer-key.csv" lab new --roster "$tmp/roster-bad.csv" --out "$tmp/lab" \
	--course-seed c
kept "lab new, a mistyped roster" "$tmp/lab/s1-answers.csv" lab new --roster "$tmp/roster-typo.csv" --out "$tmp/lab" \
	--course-seed c
kept "lab new, an unknown exercise" "$tmp/lab/s1.txt" lab new --roster "$tmp/roster.csv" --out "$tmp/lab" \
	--exercises nosuch --course-seed c

echo "# drift, drift --ema, train, plot"
C="$tmp/out.csv"
kept "drift --csv, a bad --steps" "$C" drift --csv "$C" --steps abc
kept "drift --csv, an unknown format" "$C" drift --csv "$C" --steps 10 --formats nosuch
kept "drift --ema --csv, a bad --beta2" "$C" drift --ema --csv "$C" --beta2 5
kept "drift --ema --csv, an unknown format" "$C" drift --ema --csv "$C" --format nosuch
kept "train --csv, an unknown policy" "$C" train --csv "$C" --steps 2 --policy nosuch
kept "train --tensor-stats, an unknown policy" "$C" train --tensor-stats "$C" --steps 2 --policy nosuch
kept "train --save, an unknown policy" "$tmp/m.safetensors" train --save "$tmp/m.safetensors" --steps 2 --policy nosuch
kept "train --csv, a mistyped --resume" "$C" train --csv "$C" --steps 2 --resume "$tmp/typo.safetensors"
kept "plot --png, a mistyped CSV" "$tmp/p.png" plot "$tmp/typo.csv" --png "$tmp/p.png"
kept "plot --svg, a mistyped CSV" "$tmp/p.svg" plot "$tmp/typo.csv" --svg "$tmp/p.svg"
printf 'a,b\n1,x\n' >"$tmp/notnum.csv"
kept "plot --png, a CSV without numbers" "$tmp/p.png" plot "$tmp/notnum.csv" --png "$tmp/p.png"
full "drift --csv" drift --csv /dev/full --steps 10
full "drift --ema --csv" drift --ema --csv /dev/full --steps 10
full "train --csv" train --csv /dev/full --steps 1

echo "# tui --dump"
kept "tui --dump, a mistyped key script" "$tmp/dump.txt" tui --keys "$tmp/typo.keys" --dump "$tmp/dump.txt"
printf 'dump\nnosuch-command\n' >"$tmp/bad.keys"
kept "tui --dump, a bad key script" "$tmp/dump.txt" tui --keys "$tmp/bad.keys" --dump "$tmp/dump.txt"
printf 'dump\n' >"$tmp/good.keys"
run tui --keys "$tmp/good.keys" --dump "$tmp/dump.txt"
expect_rc "tui --dump, a good key script" 0
grep -q '^--- ' "$tmp/dump.txt" && ok "tui --dump, a good key script: the screen written" ||
	bad "tui --dump: the screen written" "$(head -2 "$tmp/dump.txt")"
full "tui --dump" tui --keys "$tmp/good.keys" --dump /dev/full

finish
