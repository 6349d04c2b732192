#!/bin/sh
# mixprec amax (delayed against current scaling): one tensor's
# amax per step through Transformer Engine's delayed and current rules,
# against values worked out by hand here, and the CLI contract's errors.
#
# By hand, E4M3 (fp8_max 448), history H = 4, amax 1,1,1,40,1,1,1,1,1,1:
# step 1 casts with TE's initial scale 1 (peak 1); step 2 with 448 / 1 = 448
# (peak 448: on the largest value, not past it); the spike, step 4, still
# casts with 448: 40 x 448 = 17920 = 40 x fp8_max, clipped to 448, read back
# as 448 / 448 = 1. Its amax then stays in the history for 4 pushes: steps
# 5..8 cast with 448 / 40 = 11.2 (peak 11.2, 1/40 = 0.025 of the range),
# step 9 is back at 448. With most_recent only step 5 has 11.2. Current
# scaling: 448 / amax every step, 11.2 at the spike; it never clips.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec
LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR
make_tmp amax

# col NAME STEP: the CSV column NAME at step STEP of $tmp/out
col() {
	awk -F, -v c="$1" -v s="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		$1 == s { print $k }' "$tmp/out"
}
# near A B: |A - B| <= 1e-6 |B|
near() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= 1e-6 * m + 1e-12) }'
}
check_near() {
	if near "$2" "$3"; then ok "$1 ($2)"; else bad "$1" "got '$2', want $3"; fi
}

run amax --help
expect_rc "amax --help" 0
out_has "amax --help names both rules" "Float8CurrentScaling"
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/out")
if [ "$w" -le 80 ]; then ok "amax --help fits 80 columns"; else bad "amax --help fits 80 columns" "widest $w"; fi

seq=1,1,1,40,1,1,1,1,1,1
run amax --amax $seq --history 4 --csv
expect_rc "amax --csv" 0
same "amax --csv header" "$(head -1 "$tmp/out")" \
	"step,amax,history_amax,delayed_scale,delayed_peak,delayed_of_max,delayed_saturates,delayed_stored,current_scale,current_peak,current_saturates,current_stored"
same "amax --csv: one row per step" "$(($(wc -l <"$tmp/out") - 1))" 10
check_near "step 1 casts with the initial scale 1" "$(col delayed_scale 1)" 1
check_near "step 2: 448 / 1" "$(col delayed_scale 2)" 448
same "step 2: peak 448 is not clipped" "$(col delayed_saturates 2)" 0
check_near "the spike casts with the old scale 448" "$(col delayed_scale 4)" 448
check_near "the spike's peak: 40 x 448" "$(col delayed_peak 4)" 17920
check_near "the spike is 40 times fp8_max" "$(col delayed_of_max 4)" 40
same "the spike saturates under delayed scaling" "$(col delayed_saturates 4)" 1
check_near "the spike reads back as 448 / 448 = 1" "$(col delayed_stored 4)" 1
for s in 5 6 7 8; do
	check_near "max, H = 4: step $s casts with 448 / 40" "$(col delayed_scale $s)" 11.2
	same "step $s does not saturate" "$(col delayed_saturates $s)" 0
done
check_near "step 5 uses 1/40 of the range" "$(col delayed_of_max 5)" 0.025
check_near "step 9: the spike has left the history" "$(col delayed_scale 9)" 448
check_near "step 5's scale came from amax 40" "$(col history_amax 5)" 40
check_near "current scaling at the spike: 448 / 40" "$(col current_scale 4)" 11.2
n=$(awk -F, 'NR > 1 && $11 != 0' "$tmp/out" | wc -l)
same "current scaling never saturates" "$n" 0
check_near "current scaling keeps the spike: 40" "$(col current_stored 4)" 40

run amax --amax $seq --history 4 --algo most_recent --csv
check_near "most_recent: step 5 casts with 11.2" "$(col delayed_scale 5)" 11.2
check_near "most_recent: step 6 is back at 448" "$(col delayed_scale 6)" 448

# --csv - is --csv (train's --csv FILE takes -); a stray - elsewhere is refused
run amax --amax $seq --history 4 --csv
cp "$tmp/out" "$tmp/plain.csv"
run amax --amax $seq --history 4 --csv -
expect_rc "amax --csv -" 0
if cmp -s "$tmp/out" "$tmp/plain.csv"; then ok "amax --csv - prints what --csv prints"; else bad "amax --csv - prints what --csv prints"; fi
# the margin halves the scale per binade: 448 / 2 / 2^1 at step 2 for amax 2
run amax --amax 2,2 --margin 1 --csv
check_near "margin 1: 448 / 2 / 2" "$(col delayed_scale 2)" 112
# e5m2: 57344 / 4
run amax --amax 4,4 --format e5m2 --csv
check_near "e5m2: 57344 / 4" "$(col delayed_scale 2)" 14336
# an amax of 0 keeps the previous scale (TE: only a finite positive amax updates it)
run amax --amax 2,0,5 --history 1 --csv
check_near "amax 0 keeps the scale: step 3 still 448 / 2" "$(col delayed_scale 3)" 224

# the text table and its summary
run amax --amax $seq --history 4
expect_rc "amax (table)" 0
out_has "table: the spike step" "saturates on 1 of 10 steps (step 4)"
out_has "table: by how much" "the worst, step 4, is 40 times fp8_max"
out_has "table: current never" "current: saturates on 0 of 10 steps"
# after step 10 the history holds 1,1,1,1: the next scale is 448 again; after the spike
# alone (4 values) it would be 448 / 40
out_has "table: the next step's scale" "delayed: the next step would cast with 448"
run amax --amax 1,1,1,40 --history 4
out_has "table: the next step's scale after the spike" "delayed: the next step would cast with 11.2"
run amax --amax 1,1.1,1.2 --history 4
out_has "table: several steps named" "saturates on 2 of 3 steps (steps 2, 3)"
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/out")
if [ "$w" -le 80 ]; then ok "amax table fits 80 columns"; else bad "amax table fits 80 columns" "widest $w"; fi

# values on standard input, one per line
printf '1\n\n40\n1\n' | "$MIXPREC" amax --history 2 --csv >"$tmp/out" 2>"$tmp/err"
check_near "stdin: step 2 casts with 448" "$(col delayed_scale 2)" 448
check_near "stdin: step 3 casts with 448 / 40" "$(col delayed_scale 3)" 11.2
printf '1\nx\n' | "$MIXPREC" amax >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "stdin: a bad line" 2
err_has "stdin: the bad line named" "line 2"

# usage errors: exit 2, the argument named, nothing on stdout
usage() {
	name=$1 want=$2
	shift 2
	run "$@"
	if [ $rc -eq 2 ] && grep -Fq -- "$want" "$tmp/err" && [ ! -s "$tmp/out" ]; then
		ok "$name: exit 2, names $want"
	else
		bad "$name: exit 2, names $want" "rc $rc"
		show_io
	fi
}
usage "negative amax" "--amax: -1 is out of range" amax --amax 1,-1
usage "amax not a number" "--amax" amax --amax 1,x
usage "infinite amax" "--amax: inf is out of range" amax --amax inf
usage "history 0" "--history: 0 is out of range" amax --amax 1 --history 0
usage "history too long" "--history: 2000 is out of range" amax --amax 1 --history 2000
usage "unknown algo" "--algo: 'mean'" amax --amax 1 --algo mean
usage "margin not whole" "--margin: 0.5 is not a whole number" amax --amax 1 --margin 0.5
usage "margin too large" "--margin: 40 is out of range" amax --amax 1 --margin 40
usage "not an fp8 format" "--format: 'bf16'" amax --amax 1 --format bf16
usage "stray argument" "unexpected argument '3'" amax --amax 1 3
usage "stray -" "unexpected argument '-'" amax --amax 1 -
usage "unknown option" "--frob" amax --frob
usage "no values on stdin" "no amax" amax
finish
