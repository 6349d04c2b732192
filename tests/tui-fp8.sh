#!/bin/sh
# The Training lab's fp8 view (v) and its loss panels side by side (l), in
# key scripts rendered off-screen (mixprec tui --keys FILE --dump OUT) at
# 80x24, in the C locale (ASCII) and with NO_COLOR.
#
# The oracle is a separate run of the same training from the command line,
# `mixprec train --preset tiny` with the same policies (the lab's tiny run:
# same seed, same batches, the same bits, as tui-script-labs.sh's trainblock
# checks for a lesson's options): its --csv and --tensor-stats files. The
# policy's shares are recomputed here from the per-tensor shares and element
# counts derived by hand from the tiny shape (below), not read from the
# program's own total.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

srcdir=${srcdir:-.}
. "$srcdir/tests/harness.sh"
tui_start tuifp8
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME

# script NAME < KEYS: runs a key script on the Training lab; dumps in $tmp/NAME.out
script() {
	cat >"$tmp/$1.keys"
	"$MIXPREC" tui --keys "$tmp/$1.keys" --dump "$tmp/$1.out" --start train </dev/null >/dev/null 2>"$tmp/$1.err"
	rc=$?
	[ $rc -eq 0 ] || bad "$1: the key script exits 0" "got $rc: $(head -c 300 "$tmp/$1.err")"
}

# screen NAME LABEL > the text of that dump
screen() {
	awk -v l="--- $2 ---" '$0 == l { on = 1; next } /^--- .* ---$/ { on = 0 } on' "$tmp/$1.out"
}

# has NAME LABEL REGEX DESCRIPTION: a line of the dumped screen matches REGEX
has() {
	if screen "$1" "$2" | grep -Eq -- "$3"; then
		ok "$1/$2: $4"
	else
		bad "$1/$2: $4" "no line matches /$3/"
		screen "$1" "$2" | sed 's/^/     | /'
	fi
}

# same DESCRIPTION GOT WANT
same() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		bad "$1" "want '$3'" "got  '$2'"
	fi
}

# fp8row NAME LABEL OFFSET: the line OFFSET rows below the view's first row
# (" fp8 scaling" or " fp8: +N more"); the rows, as drawn: 0 names, 1
# overflow, 2 its sparkline, 3 underflow, 4 its sparkline, 5 worst tensor,
# 6 its name, 7 log2(scale), 8 weight, 9 input, 10 grad_output, 11 max and
# 12 min log2(scale) sparklines
fp8row() {
	screen "$1" "$2" | awk -v k="$3" '/^ fp8( scaling|: \+)/ { at = NR } at && NR == at + k { print; exit }'
}

# cell LINE C CW: column C (0-based) of a view line, cells CW wide after a
# 1 + 15 column label (14 and a blank), trailing blanks dropped
cell() {
	printf '%s\n' "$1" | awk -v c="$2" -v w="$3" '{ s = substr($0, 17 + c * w, w - 1); sub(/ +$/, "", s); print s }'
}

# The policies by their place in the lab's list (train --policy list order)
pos() {
	"$MIXPREC" train --policy list | awk -v p="$1" '/^[^ ]/ { if ($1 == p) { print n; exit } n++ }'
}
# js N: N times "j"
js() {
	i=0
	while [ "$i" -lt "$1" ]; do
		printf 'j '
		i=$((i + 1))
	done
}
bf=$(pos bf16-mixed)
f8=$(pos fp8-delayed)
if [ -z "$bf" ] || [ -z "$f8" ] || [ "$f8" -le "$bf" ]; then
	bad "train --policy list has bf16-mixed before fp8-delayed" "got places '$bf' and '$f8'"
	finish
fi
# the cursor starts on fp32, the one chosen: drop it, choose the two
choose="Space $(js "$bf")Space $(js $((f8 - bf)))Space"

# --- the oracle: the same runs from the command line ---
"$MIXPREC" train --preset tiny --policy bf16-mixed,fp8-delayed --steps 5 --csv "$tmp/cli.csv" \
	--tensor-stats "$tmp/ts.csv" >/dev/null 2>"$tmp/cli.err" ||
	bad "train --preset tiny --policy bf16-mixed,fp8-delayed runs" "$(head -c 300 "$tmp/cli.err")"

# Elements each tensor casts in a step of the tiny shape (train/shape.c:
# batch 4 x context 32, 1 layer of 32 channels; attn.c_attn maps 32 to 96
# channels, attn.c_proj 32 to 32, mlp.c_fc 32 to 128, mlp.c_proj 128 to 32).
# A weight IN x OUT is cast by each of the two batch halves, both counted:
# 2 * IN * OUT; an input is 4 * 32 * IN, a grad_output 4 * 32 * OUT. Over the
# 12 tensors: 24576 + 28672 + 36864 = 90112 elements.
# share STEP COLUMN (7 overflow, 8 underflow): the fp8-delayed policy's share
# at STEP as %.6g: the tensors' counts (share x elements, whole numbers)
# summed, over 90112; with "counts" the counts of steps 0..STEP instead.
count_awk='
function elems(name,   a, n, lin, io) {
	n = split(name, a, ".")
	lin = a[3] "." a[4]
	io["attn.c_attn"] = "32 96"; io["attn.c_proj"] = "32 32"; io["mlp.c_fc"] = "32 128"; io["mlp.c_proj"] = "128 32"
	split(io[lin], d, " ")
	if (a[n] == "weight") return 2 * d[1] * d[2]
	if (a[n] == "input") return 128 * d[1]
	return 128 * d[2]
}
NR > 1 && $2 == "fp8-delayed" && $1 <= step {
	c = $col * elems($3)
	cnt[$1] += int(c + 0.5)
	tot[$1] += elems($3)
}'
share() {
	awk -F, -v step="$1" -v col="$2" "$count_awk"'
	END { if (tot[step] != 90112) { print "elements " tot[step]; exit 1 } printf "%.6g\n", cnt[step] / 90112 }' "$tmp/ts.csv"
}
# spark STEP COLUMN: the sparkline of that share over steps 0..STEP: level
# ceil(v / max * 7) of "_.:-=+*#" (all 0: "_")
spark() {
	awk -F, -v step="$1" -v col="$2" "$count_awk"'
	END {
		g = "_.:-=+*#"; hi = 0
		for (k = 0; k <= step; k++) if (cnt[k] / 90112 > hi) hi = cnt[k] / 90112
		for (k = 0; k <= step; k++) {
			x = hi > 0 ? cnt[k] / 90112 / hi * 7 : 0
			l = int(x) + (x > int(x))
			s = s substr(g, l + 1, 1)
		}
		print s
	}' "$tmp/ts.csv"
}
# csvover STEP: train --csv's overflow_frac of fp8-delayed at STEP
csvover() {
	awk -F, -v s="$1" 'NR > 1 && $1 == s && $2 == "fp8-delayed" { print $12 }' "$tmp/cli.csv"
}
# worst STEP: "SHARE NAME" of the first tensor with the greatest overflow share, or "none"
worst() {
	awk -F, -v s="$1" 'NR > 1 && $1 == s && $2 == "fp8-delayed" && $7 > 0 && $7 > m { m = $7; n = $3 }
		END { if (n == "") print "none"; else printf "%.6g %s\n", m, n }' "$tmp/ts.csv"
}
# log2s STEP ROLE: min, median (of an even count the mean of the middle two)
# and max of log2(scale) over ROLE's tensors, %.1f each
log2s() {
	awk -F, -v s="$1" -v r="$2" 'NR > 1 && $1 == s && $2 == "fp8-delayed" {
		n = split($3, a, "."); if (a[n] == r) v[++k] = log($6) / log(2) }
	END {
		for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		med = k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
		printf "%.1f %.1f %.1f\n", v[1], med, v[k] }' "$tmp/ts.csv"
}

# --- one step, then five: the view against the oracle ---
script lab <<EOF
keys $choose n C-u
type 1
keys Enter s
wait
keys v
dump step1
keys n C-u
type 5
keys Enter s
wait
dump step5
keys ?
dump help
keys Esc
resize 120x30
dump wide
resize 80x24
dump back
EOF
has lab step1 '^ CPU tiny: 1 layer, 32 ch, 2 heads, batch 4x32' "the tiny shape the element counts above are for"
has lab step1 '^ done after 1 of 1 steps' "the one-step run is done"
cw=32   # (80 - 1 - 15) / 2 policies
for s in 1 5; do
	k=$((s - 1))
	head=$(fp8row lab step$s 0)
	same "step $s: the view names both policies, the one that scales first" \
		"$(cell "$head" 0 $cw) $(cell "$head" 1 $cw)" "fp8-delayed bf16-mixed"
	row=$(fp8row lab step$s 1)
	same "step $s: bf16-mixed has no fp8 scaling" "$(cell "$row" 1 $cw)" "no fp8 scaling"
	same "step $s: overflow = train --csv's overflow_frac at step $k" "$(cell "$row" 0 $cw)" "$(csvover $k)"
	same "step $s: overflow = the tensors' saturated elements over 90112" "$(cell "$row" 0 $cw)" "$(share $k 7)"
	same "step $s: underflow = the tensors' elements cast to 0 over 90112" "$(cell "$(fp8row lab step$s 3)" 0 $cw)" \
		"$(share $k 8)"
	same "step $s: overflow sparkline" "$(cell "$(fp8row lab step$s 2)" 0 $cw)" "$(spark $k 7)"
	same "step $s: underflow sparkline" "$(cell "$(fp8row lab step$s 4)" 0 $cw)" "$(spark $k 8)"
	w=$(worst $k)
	got="$(cell "$(fp8row lab step$s 5)" 0 $cw)"
	[ "$w" != none ] && got="$got $(cell "$(fp8row lab step$s 6)" 0 $cw)"
	same "step $s: the worst tensor and its overflow share ($w)" "$got" "$w"
	r=8
	for role in weight input grad_output; do
		row=$(fp8row lab step$s $r)
		same "step $s: $role: min, median, max of log2(scale)" "$(printf '%s' "$row" | cut -c1-15 | sed 's/ *$//')|$(cell "$row" 0 $cw)" \
			"   $role|$(log2s $k $role)"
		r=$((r + 1))
	done
done
# TE's delayed scaling starts every scale at 1: at step 0 every log2 is 0,
# and nothing can overflow what was cast with scale 1 (amax ~3.4 < 448)
same "step 1: every log2(scale) is 0 (the initial scales)" "$(cell "$(fp8row lab step1 8)" 0 $cw)" "0.0 0.0 0.0"
same "step 1: no tensor overflowed" "$(cell "$(fp8row lab step1 5)" 0 $cw)" "none"
# after step 0 the scales grow from 1 (log2 0, the sparkline's lowest) to
# fp8_max / amax, amax far below 448 and 57344: every later step is higher
for r in 11 12; do
	sp=$(cell "$(fp8row lab step5 $r)" 0 $cw)
	if printf '%s\n' "$sp" | grep -Eq '^_[^_]{4}$'; then
		ok "step 5: log2(scale) sparkline $r rises after step 0 ($sp)"
	else
		bad "step 5: log2(scale) sparkline $r rises after step 0" "got '$sp'"
	fi
done
has lab help '\| v +fp8 view: scales, overflow and underflow per policy' "? lists v"
has lab help '\| l +plot: one panel per policy side by side, or all in one' "? lists l"
has lab step5 '^ k Up .* m Tab  l  v  z ' "the key line lists l and v"
# resize: at 120 columns the cells are (120 - 1 - 15) / 2 = 52 wide, the same numbers
row=$(fp8row lab wide 1)
same "120x30: the same overflow share" "$(cell "$row" 0 52)" "$(csvover 4)"
same "120x30: the same grad_output scales" "$(cell "$(fp8row lab wide 10)" 0 52)" "$(log2s 4 grad_output)"
screen lab step5 >"$tmp/before"
screen lab back >"$tmp/after"
if [ -s "$tmp/before" ] && cmp -s "$tmp/before" "$tmp/after"; then
	ok "back at 80x24: the same screen as before the resize"
else
	bad "back at 80x24: the same screen as before the resize" "$(diff "$tmp/before" "$tmp/after" | head -n 6)"
fi
if LC_ALL=C grep -q '[^ -~]' "$tmp/lab.out"; then
	bad "C locale: every dumped cell is ASCII" "$(LC_ALL=C grep -n '[^ -~]' "$tmp/lab.out" | head -n 3)"
else
	ok "C locale: every dumped cell is ASCII"
fi

# --- loss panels side by side ---
# l: one panel per policy, two side by side at 80 columns (40 each), titled
# with the policy; m m plots lost_update_frac: bf16-mixed's is 0 at every step
# (fp32 master weights keep every update), bf16-pure's is not (its weights
# are bf16: a few per cent of the updates round away from the first step,
# on every machine, as the oracle's CSV shows; fp8-delayed's fp32 master
# weights lose one only rarely, on some OpenBLAS kernels and not others);
# on one shared y range both panels have the same ticks, and bf16-mixed's
# points ('*', its mark in the overlaid legend) lie on the row of the 0
# tick. On its own range bf16-mixed's would be -1..1, 0 mid-way.
bp=$(pos bf16-pure)
"$MIXPREC" train --preset tiny --policy bf16-mixed,bf16-pure --steps 5 --csv "$tmp/pure.csv" >/dev/null 2>&1
choose_pure="Space $(js "$bf")Space $(js $((bp - bf)))Space"
script panels <<EOF
keys $choose_pure n C-u
type 5
keys Enter s
wait
keys l
dump loss
keys m m
dump lost
resize 120x30
dump wide
EOF
has panels loss '^ {8,}bf16-mixed {20,}bf16-pure$' "two panels titled with the policies"
has panels loss '^loss {20,}loss$' "each with the metric as its y label"
lostmax=$(awk -F, 'NR > 1 && $2 == "bf16-pure" && $9 > m { m = $9 } END { print m + 0 }' "$tmp/pure.csv")
lostbf=$(awk -F, 'NR > 1 && $2 == "bf16-mixed" && $9 != 0 { n++ } END { print n + 0 }' "$tmp/pure.csv")
same "oracle: bf16-mixed loses no update, bf16-pure some" "$lostbf $( [ "$lostmax" != 0 ] && echo some)" "0 some"
if screen panels lost | awk '
	/^ *[-0-9.e]*\+|^ +\|/ && !/--/ { l = substr($0, 1, 4); r = substr($0, 41, 4); rows++
		if (l != r) bad = bad " [" l "|" r "]"
		if (l ~ /[0-9]/) ticks++
		if (index(substr($0, 1, 40), "*")) { stars++; if (l !~ /^ *0$/) off++ } }
	END { if (rows < 4 || ticks < 2 || bad != "" || !stars || off) {
		print rows " rows, " ticks " ticks, differing:" bad ", " stars " rows with *, " off " off the 0 row"; exit 1 } }' \
	>"$tmp/why"; then
	ok "lost_update_frac panels share the y range; bf16-mixed's zeros on the 0 row"
else
	bad "lost_update_frac panels share the y range; bf16-mixed's zeros on the 0 row" "$(cat "$tmp/why")"
fi
has panels wide '^ {15,}bf16-mixed {40,}bf16-pure$' "120 columns: still both, each 60 wide"

# --- four policies fit 80x24 ---
# fp32, bf16-mixed, fp8-delayed, fp8-current: the two that scale first,
# each with its overflow share at step 1 as train --csv prints it
fc=$(pos fp8-current)
"$MIXPREC" train --preset tiny --policy fp32,bf16-mixed,fp8-delayed,fp8-current --steps 2 --csv "$tmp/four.csv" \
	>/dev/null 2>&1
script four <<EOF
keys $(js "$bf")Space $(js $((f8 - bf)))Space $(js $((fc - f8)))Space n C-u
type 2
keys Enter s
wait
keys v
dump four
EOF
cw4=16   # (80 - 1 - 15) / 4
head=$(fp8row four four 0)
same "four policies: the scaled ones first" \
	"$(cell "$head" 0 $cw4),$(cell "$head" 1 $cw4),$(cell "$head" 2 $cw4),$(cell "$head" 3 $cw4)" \
	"fp8-delayed,fp8-current,fp32,bf16-mixed"
row=$(fp8row four four 1)
for c in 0 1; do
	p=$(cell "$head" $c $cw4)
	same "four policies: $p's overflow at step 1" "$(cell "$row" $c $cw4)" \
		"$(awk -F, -v p="$p" 'NR > 1 && $1 == 1 && $2 == p { print $12 }' "$tmp/four.csv")"
done
same "four policies: fp32 and bf16-mixed say so" "$(cell "$row" 2 $cw4),$(cell "$row" 3 $cw4)" "no fp8 scaling,no fp8 scaling"
has four four '^   min, last 2 ' "four policies: all 13 rows of the view fit"

finish
