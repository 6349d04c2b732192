#!/bin/sh
# Every command mixprec prints for a student's variant checks that variant
# when pasted, and check counts the
# answers given, not the fields.
#
# The answers are computed here with awk from the exercise's definition
# (20 bytes per parameter; GB = 10^9, GiB = 2^30 bytes), not copied from the
# program's output.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR
make_tmp excmd
MIXPREC_STATEDIR=$tmp/state
export MIXPREC_STATEDIR
unset MIXPREC_COURSE_SEED MIXPREC_EXERCISEDIR

# the 7.4c answers for P, by hand: 20 bytes per parameter
answers() {
	awk -v P="$1" 'BEGIN { printf "bytes_per_param=20 total_gb=%.6f total_gib=%.6f", 20 * P / 1e9, 20 * P / 2^30 }'
}

# paste_check STUDENT SEED (empty: the one in force): shows 7.4c for the variant, takes its printed
# "Answer with:" command, fills in the answers and runs it.
paste_check() {
	if [ -n "$2" ]; then set -- "$1" --course-seed "$2"; else set -- "$1"; fi
	"$MIXPREC" exercise show 7.4c --student "$@" >"$tmp/show" 2>&1
	P=$("$MIXPREC" exercise show 7.4c --student "$@" --params | sed -n 's/^P=//p')
	cmd=$(sed -n 's/^Answer with: //p' "$tmp/show")
	for a in $(answers "$P"); do
		cmd=$(printf '%s\n' "$cmd" | sed "s|${a%%=*}=\.\.\.|$a|")
	done
	# the printed command names mixprec; run the binary under test instead
	cmd=$(printf '%s\n' "$cmd" | sed 's|^mixprec |"$MIXPREC" |')
	eval "$cmd --no-progress" >"$tmp/out" 2>&1
	rc=$?
}

paste_check alice fall26
[ "$P" != 7e9 ] && ok "alice's P differs from the default ($P)" || bad "alice's P is the default: pick another id"
case $cmd in
*"--student alice --course-seed fall26"*) ok "Answer with: names the student and the course seed" ;;
*) bad "Answer with: names the student and the course seed" "$cmd" ;;
esac
[ "$rc" -eq 0 ] && ok "the pasted command accepts the right answers" || bad "pasted command: exit $rc" "$cmd" "$(cat "$tmp/out")"
grep -q "exercise 7.4c solved" "$tmp/out" && ok "the pasted command solves the exercise" || bad "pasted: solved" "$(cat "$tmp/out")"
grep -q "mixprec exercise solve 7.4c --student alice --course-seed fall26" "$tmp/out" &&
	ok "the solve command it prints names the variant" || bad "solve command names the variant" "$(cat "$tmp/out")"
grep -q "mixprec exercise hint 7.4c --student alice --course-seed fall26" "$tmp/show" &&
	ok "the hint command names the variant" || bad "hint command names the variant" "$(cat "$tmp/show")"

# the same answers without the variant's options are the default's, and wrong
"$MIXPREC" check 7.4c $(answers "$P") --no-progress >"$tmp/out" 2>&1
[ $? -eq 1 ] && ok "without --student the default variant is checked" || bad "default variant" "$(cat "$tmp/out")"

# a seed that needs quoting (an id never does: class_id_check), from the environment
MIXPREC_COURSE_SEED="spring'27 x" paste_check "o.brien" ""
case $cmd in
*"--student o.brien --course-seed 'spring'\\''27 x' "*) ok "a seed with a quote and a blank is shell-quoted" ;;
*) bad "shell-quoted seed" "$cmd" ;;
esac
[ "$rc" -eq 0 ] && ok "the pasted command with a quoted seed checks that variant" || bad "quoted seed: exit $rc" "$cmd" "$(cat "$tmp/out")"
"$MIXPREC" exercise show 7.4c --student bob >"$tmp/show" 2>&1 </dev/null
MIXPREC_COURSE_SEED=spring27 "$MIXPREC" exercise show 7.4c --student bob >"$tmp/show2" 2>&1 </dev/null
grep -q -- "--course-seed 0 " "$tmp/show" && grep -q -- "--course-seed spring27 " "$tmp/show2" &&
	ok "the seed in force is printed, from the option or the environment" ||
	bad "seed in force printed" "$(grep Answer "$tmp/show" "$tmp/show2")"

# one field submitted: one answer counted, the rest listed as not answered
"$MIXPREC" check 7.4d fp16_bits=0x2e66 --no-progress >"$tmp/out" 2>&1
grep -q "^1 of 1 answer correct; not answered: bf16_bits" "$tmp/out" && ok "one field: 1 of 1 answer correct" ||
	bad "one field counted" "$(cat "$tmp/out")"
grep -q "of 8 fields" "$tmp/out" && bad "one field: no 'of 8 fields'" "$(cat "$tmp/out")" || ok "one field: no count of all fields"
# a wrong optional answer is no part of a solution: mx.4's default block 3.8,-2.5,1.1,0.4
# has amax 3.8 = 1.9 x 2^1, X = 2^(1 - 8) = 2^-7, and 3.8 / 2^-7 = 486.4 > 448 saturates:
# element 0, stored as 448 x 2^-7 = 3.5 (not -3.5)
"$MIXPREC" check mx.4 saturates=0 stored=-3.5 --no-progress >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "^1 of 2 answers correct\.$" "$tmp/out" && ! grep -q "solved" "$tmp/out" &&
	ok "mx.4: a wrong optional answer leaves the exercise unsolved" ||
	bad "mx.4 wrong optional answer" "rc $rc: $(cat "$tmp/out")"
"$MIXPREC" check mx.4 saturates=0 stored=3.5 --no-progress >"$tmp/out" 2>&1
[ $? -eq 0 ] && grep -q "exercise mx.4 solved" "$tmp/out" && ok "mx.4: both right solves it" ||
	bad "mx.4 both right" "$(cat "$tmp/out")"
# 7.4f's steps is optional: stall_value alone solves it (bf16, beta2 0.995: 0.609375, derived in
# tests/test_exercise_premise.c)
"$MIXPREC" check 7.4f stall_value=0.609375 --no-progress >"$tmp/out" 2>&1
[ $? -eq 0 ] && grep -q "exercise 7.4f solved" "$tmp/out" && ok "7.4f: the optional steps field is not needed" ||
	bad "7.4f optional steps" "$(cat "$tmp/out")"

# rr.1 for a student's t, answered from the E2M1 grid here: the neighbours,
# rto the one with the odd pattern (index 1, 3, 5, 7), rnz the nearer (a tie
# the smaller), sr-equal's mean the midpoint and its bias the midpoint - t
t=$("$MIXPREC" exercise show rr.1 --student carol --course-seed fall26 --params | sed -n 's/^t=//p')
ans=$(awk -v t="$t" 'BEGIN { split("0 0.5 1 1.5 2 3 4 6", g, " ");
	for (j = 1; j < 8 && g[j + 1] < t; j++) ;
	a = g[j]; b = g[j + 1]; m = (a + b) / 2
	rto = (j % 2 == 0) ? a : b; rnz = (t <= m) ? a : b
	printf "down=%s up=%s rto=%s rnz=%s sre_mean=%.10g sre_bias=%.10g", a, b, rto, rnz, m, m - t }')
"$MIXPREC" check rr.1 --student carol --course-seed fall26 $ans --no-progress >"$tmp/out" 2>&1
[ $? -eq 0 ] && grep -q "exercise rr.1 solved" "$tmp/out" && ok "rr.1: answers from the grid solve carol's variant (t=$t)" ||
	bad "rr.1 from the grid" "t=$t $ans: $(cat "$tmp/out")"

finish
