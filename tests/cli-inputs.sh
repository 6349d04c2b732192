#!/bin/sh
# CLI tests of what a person types: parameter counts are whole numbers in a
# stated range, integer options explain integer syntax, one rule for student
# ids at every entry point, and unknown commands and options suggest the
# nearest known one.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
# $MIXPREC is the binary under test (exported by the harness; default ./mixprec).
#
# Expected values are derived by hand in the comments next to them; none is
# copied from the program's output.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp inputs
private_state

# err_lacks NAME TEXT: stderr does not have TEXT.
err_lacks() {
	if grep -Fq -e "$2" "$tmp/err"; then bad "$1" "stderr has: $2"; show_io; else ok "$1"; fi
}

# ---------------------------------------------------------------------------
echo "# budget: a parameter count is a whole number from 1 to 10^15"
run budget --params 0.5
usage_error "budget --params 0.5" "--params" "'0.5' is not a whole number" "1 to 10^15"
run budget --params 1e300
usage_error "budget --params 1e300" "--params" "out of range (1 to 10^15)"
# 10^15 + 1 is one past the range; 1000T is 10^15 exactly and accepted
run budget --params 1000000000000001
usage_error "budget --params 10^15+1" "--params" "1 to 10^15"
run budget --params 1000T --csv
expect_rc "budget --params 1000T (10^15)" 0
# 1.5k is 1500 parameters, a whole number
run budget --params 1.5k
expect_rc "budget --params 1.5k" 0
out_has "budget --params 1.5k: 1500 parameters" "(1500)"
# the other counts of budget keep the same rule
for opt in --layers --heads --gpus; do
	run budget --params 7e9 $opt 2.5
	usage_error "budget $opt 2.5" "$opt" "not a whole number"
	run budget --params 7e9 $opt 1e20
	usage_error "budget $opt 1e20" "$opt" "out of range"
done
run budget --params abc
usage_error "budget --params abc" "--params" "6.7B"
err_lacks "budget --params abc: no hex float example" "hex float"

# ---------------------------------------------------------------------------
echo "# integer options: the message shows integer syntax"
for c in "train --seed" "train --steps" "round 1 --to fp16 --mode sr --seed" "drift --steps" \
	"quantize 1 --to mxfp8 --seed" "amax --history" "accum --seed"; do
	run $c abc
	usage_error "$c abc" "'abc' is not a whole number" "42"
	err_lacks "$c abc: no hex float example" "hex float"
	err_lacks "$c abc: no fraction example" "a/b"
done

# ---------------------------------------------------------------------------
echo "# student ids: one rule everywhere"
# -bad starts with '-', 'a b' has a blank, .x starts with '.': each refused
for id in -bad "a b" .x; do
	run exercise show 7.4c --student "$id"
	usage_error "exercise show --student '$id'" "--student" "is not usable"
	run exercise hint 7.4c --student "$id"
	usage_error "exercise hint --student '$id'" "--student" "is not usable"
	run exercise solve 7.4c --student "$id"
	usage_error "exercise solve --student '$id'" "--student" "is not usable"
	run check 7.4c bytes_per_param=20 --student "$id" --no-progress
	usage_error "check --student '$id'" "--student" "is not usable"
done
run exercise show 7.4c --student s1.b-2_x@y
expect_rc "exercise show: an id of every allowed kind of character" 0
# the roster of lab new and grade, and a submission's rows, by the same rule
printf 'student_id\ns1\n-bad\n' >"$tmp/roster.csv"
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab" --course-seed c
expect_rc "lab new: roster with id -bad" 2
err_has "lab new: -bad named with file:line" "roster.csv:3: student id '-bad' is not usable"
printf 'student_id,exercise,field,answer\n-bad,7.4c,bytes_per_param,20\n' >"$tmp/sub.csv"
printf 'student_id\ns1\n' >"$tmp/roster1.csv"
run grade --roster "$tmp/roster1.csv" "$tmp/sub.csv" --course-seed c --exercises 7.4c
expect_rc "grade: submission row with id -bad" 2
err_has "grade: the row's id refused by the id rule" "sub.csv:2: student id '-bad' is not usable"
# the workbench's $MIXPREC_STUDENT: refused before any screen starts
MIXPREC_STUDENT=-bad run tui --keys /dev/null
usage_error "tui with MIXPREC_STUDENT=-bad" "MIXPREC_STUDENT" "is not usable"

# ---------------------------------------------------------------------------
echo "# unknown commands and options suggest the nearest known one"
run ema
usage_error "mixprec ema" "unknown command 'ema'" "did you mean 'drift --ema'?"
# one deletion from round, one swap from train, one substitution from exercise
run rond
usage_error "mixprec rond" "did you mean 'round'?"
run trian
usage_error "mixprec trian" "did you mean 'train'?"
run exercize list
usage_error "mixprec exercize" "did you mean 'exercise'?"
run zzzzzz
usage_error "mixprec zzzzzz: nothing near" "unknown command 'zzzzzz'"
err_lacks "mixprec zzzzzz: no suggestion" "did you mean"
# options of several commands: one edit from a real option
run round 1 --to fp16 --mdoe rne
usage_error "round --mdoe" "unknown option '--mdoe'" "did you mean '--mode'?"
run train --seeed 1
usage_error "train --seeed" "did you mean '--seed'?"
run budget --parms 7e9
usage_error "budget --parms" "did you mean '--params'?"
run lab new --rooster r.csv
usage_error "lab --rooster" "did you mean '--roster'?"
run formats --cvs
usage_error "formats --cvs" "did you mean '--csv'?"
run drift --ema --stepz 3
usage_error "drift --ema --stepz" "did you mean '--steps'?"
run exercise show 7.4c --studnet s1
usage_error "exercise --studnet" "did you mean '--student'?"
run quantize 1 --to mxfp8 --blokc 32
usage_error "quantize --blokc" "did you mean '--block'?"
run round 1 --qqqqqqq
usage_error "round --qqqqqqq: nothing near" "unknown option '--qqqqqqq'"
err_lacks "round --qqqqqqq: no suggestion" "did you mean"

finish
