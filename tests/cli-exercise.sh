#!/bin/sh
# CLI tests of mixprec exercise and check: the shipped exercises, answers
# and their feedback, hints, students' variants, the progress file, a
# teacher's exercise folder, and the round-steps kind (the workbench's
# hand-rounding lab) step by step.
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

make_tmp exercise
private_state

# ---------------------------------------------------------------------------
echo "# exercise and check"

run exercise list
expect_rc "exercise list" 0
for id in 7.4a 7.4b 7.4c 7.4d 7.4e drift.1 drift.2 drift.3 drift.4; do
	out_has "exercise list: $id" "$id "
done
run exercise lint
expect_rc "exercise lint (shipped files)" 0
run exercise show 7.4c
expect_rc "exercise show 7.4c" 0
out_has "exercise show 7.4c: parameter in the prompt" "P = 7e9 parameters"
out_has "exercise show 7.4c: the fields" "total_gb"
run exercise show 7.4e --student s042 --params
expect_rc "exercise show --params" 0
out_lines "exercise show --params: one name=value line" 1
w=$(sed -n 's/^w=//p' "$tmp/out")
[ -n "$w" ] && ok "exercise show --params: w=..." || bad "exercise show --params: w=..." "$(cat "$tmp/out")"
# the same student gets the same variant; the default is 600
run exercise show 7.4e --student s042 --params
out_has "exercise show --params: deterministic" "w=$w"
run exercise show 7.4e --params
out_has "exercise show --params: default" "w=0.5"

# 7.4c by hand: 4 + 2 + 2 + 4 + 4 + 4 = 20 bytes; 20 x 7e9 = 140e9 bytes = 140 GB
# and 140e9 / 2^30 = 130.385 GiB
run check 7.4c bytes_per_param=20 total_gb=140 total_gib=130.385
expect_rc "check 7.4c right" 0
out_has "check 7.4c right: solved" "3 of 3 answers correct"
run check 7.4c bytes_per_param=16 total_gb=140
expect_rc "check 7.4c wrong" 1
out_has "check 7.4c: forgot the accumulator" "accumulator"
run check 7.4c total_gb=lots
expect_rc "check malformed answer" 2
out_has "check malformed: names the field" "total_gb:"
run check 7.4c nosuch=1
expect_rc "check unknown field" 2
out_has "check unknown field: lists the fields" "bytes_per_param"
run check 9.9z x=1
expect_rc "check unknown exercise" 2
err_has "check unknown exercise: names it" "9.9z"
run check 7.4c
expect_rc "check without answers" 2
# answers from stdin
printf 'bytes_per_param = 20\n# a comment\n\ntotal_gb=140 GB\n' >"$tmp/answers"
run_in "$tmp/answers" check 7.4c
expect_rc "check answers from stdin" 0
# review: a file saved by a Windows editor (byte-order mark, CRLF)
printf '\357\273\277bytes_per_param=20\r\ntotal_gb=140\r\n' >"$tmp/answers-bom"
run_in "$tmp/answers-bom" check 7.4c
expect_rc "check answers from stdin with BOM and CRLF" 0
# 7.4d by hand: 0.1 = 1.6 x 2^-4; bf16 keeps 1.1001100|11..: rounds up to 0x3dcd
run check 7.4d bf16_bits="0011 1101 1100 1101" fp16_bits=0x2e66 fp32_bits=0x3dcccccd best=fp32 worst=bf16
expect_rc "check 7.4d bits in three syntaxes" 0
run check 7.4d bf16_bits=0x3dcc
expect_rc "check 7.4d truncated" 1
out_has "check 7.4d: wrong neighbour" "other neighbour"
# the variant of a student: the answer for the default is wrong for most students
run exercise solve 7.4e --student s042
expect_rc "exercise solve --student" 0
sp=$(sed -n 's/^  spacing=//p' "$tmp/out")
run check 7.4e spacing="$sp" --student s042
expect_rc "check --student with the student's answer" 0
run exercise solve 7.4d
out_has "exercise solve 7.4d: guard/round/sticky" "guard 1, round 1, sticky 1"
run exercise hint 7.4a
expect_rc "exercise hint" 0
out_has "exercise hint: first hint" "Hint 1 of 3"
run exercise hint 7.4a
out_has "exercise hint again: the next one" "Hint 2 of 3"
run exercise list
out_has "exercise list: 7.4c solved" "* 7.4c"
[ -f "$tmp/state/progress.csv" ] && ok "progress saved under MIXPREC_STATEDIR" || bad "progress saved"
echo "item,attempts" >"$tmp/state/progress.csv"
run check 7.4c bytes_per_param=20
expect_rc "check with a corrupt progress file" 0
err_has "corrupt progress: reported" "corrupt"
[ -f "$tmp/state/progress.csv.corrupt-1" ] && ok "corrupt progress set aside" || bad "corrupt progress set aside"
# a teacher's broken file: file:line, and the good exercises still load
mkdir "$tmp/ex"
cp "$tmp/answers" "$tmp/ex/ignored.txt"
printf '[mine]\ntitle: T\nkind: spacing\nparam x: 600\nprompt: Spacing at {x}?\nfield spacing: number\n\n[broken]\ntitle: B\nkind: nosuch\n' >"$tmp/ex/t.ex"
run exercise lint --exercise-dir "$tmp/ex"
expect_rc "exercise lint of a broken file" 2
err_has "exercise lint: file:line" "t.ex:10: unknown kind 'nosuch'"
run check mine spacing=4 --exercise-dir "$tmp/ex"
expect_rc "check an exercise next to a broken one" 0
run exercise --help
expect_rc "exercise --help" 0
run check --help
expect_rc "check --help" 0

# ---------------------------------------------------------------------------
echo "# exercise kind round-steps (the workbench's hand-rounding lab)"

# 0.1 = 1.6 * 2^-4: e = -4, fp16 field -4 + 15 = 11; 1.6 = 1.1001100110|011...b:
# the 10 kept fraction bits 1001100110, then guard 0, round 1, sticky 1
# (0.1's binary expansion repeats 0011 forever): round down, 0 01011
# 1001100110 = 0x2e66.
run check round.1 fp16_exponent=-4 fp16_exp_field=11 fp16_fraction=1001100110 fp16_guard=0 fp16_round=1 \
	fp16_sticky=1 fp16_round_up=no fp16_bits=0x2e66
expect_rc "round-steps: 0.1 to fp16, every step right" 0
out_has "round-steps: 0.1 to fp16 solved" "8 of 8 answers correct"
# the biased field given as e is a recognised mistake
run check round.1 fp16_exponent=11
expect_rc "round-steps: the field given as e" 1
out_has "round-steps: says which mistake" "biased exponent field"
# 601.9 = 1.1755859...b * 2^9 in bf16: e = 9, field 136; 601.9 / 4 = 150.475:
# kept 150 (600 = 1.0010110b * 2^9), .475 = .0111...b: guard 0, round 1,
# sticky 1: down, to 600 = 0x4416. 602 / 4 = 150.5: guard 1, round 0, sticky
# 0, a tie; 150 is even: down, 0x4416. 606 / 4 = 151.5: a tie, 151 odd: up
# to 152 * 4 = 608 = 0x4418.
run check round.2 bf16_exponent=9 bf16_exp_field=136 bf16_guard=0 bf16_round=1 bf16_sticky=1 \
	bf16_round_up=no bf16_bits=0x4416
expect_rc "round-steps: 601.9 to bf16" 0
for v in 602:1:0:0:no:0x4416 606:1:0:0:yes:0x4418; do
	IFS=: read -r V g r st up b <<EOF_V
$v
EOF_V
	printf '[t]\ntitle: T\nkind: round-steps\nparam V: %s\nprompt: {V}\nfield bf16_guard: choice 0|1\nfield bf16_round: choice 0|1\nfield bf16_sticky: choice 0|1\nfield bf16_round_up: choice yes|no\nfield bf16_bits: bits bf16\n' "$V" >"$tmp/ex/t.ex"
	run check t bf16_guard="$g" bf16_round="$r" bf16_sticky="$st" bf16_round_up="$up" bf16_bits="$b" --exercise-dir "$tmp/ex"
	expect_rc "round-steps: $V to bf16 is a tie, rounded to even ($b)" 0
done

# ---------------------------------------------------------------------------
finish
