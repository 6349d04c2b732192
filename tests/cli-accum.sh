#!/bin/sh
# mixprec accum (a tensor core's short accumulator) and train's
# --accum-bits / --promote-every: the CSV contract, the size of the effect
# against the estimate below, the CLI contract's errors, and that plot reads
# the CSV.
#
# The estimate (positive e4m3 products, mean 1/4, 14 bits, blocks of 32):
# after k products the partial sum is ~k/4 and each new product loses about
# half a cut, 2^(E-14) with 2^E ~ k/6, so the relative error of a K-long dot
# is ~ 2^-14 / 1.5 * K / 2: about 8% at K = 4096, 2% at 1024, growing like K.
# Promoted every 128 the partial sums stop at ~32 and most products keep
# every bit: the error drops by two orders of magnitude, to a floor set by
# the products below 2^(E-6) (the few-hundredths-of-a-percent level).

. "${srcdir:-.}/tests/harness.sh"
need_mixprec
LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR
make_tmp accum

# field NAME ROW-SELECTOR: the column NAME of the CSV row whose k and
# accumulator are given
field() {
	awk -F, -v col="$1" -v k="$2" -v acc="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		$1 == k && $2 == acc { print $c }' "$tmp/a.csv"
}

# --help
if "$MIXPREC" accum --help >"$tmp/help" 2>&1; then ok "accum --help: exit 0"; else bad "accum --help: exit 0"; fi
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/help")
if [ "$w" -le 80 ]; then ok "accum --help fits 80 columns"; else bad "accum --help fits 80 columns" "widest $w"; fi

# the table fits 80 columns
"$MIXPREC" accum --k 4096 --trials 3 --dist mixed >"$tmp/t" 2>&1
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/t")
if [ "$w" -le 80 ] && grep -q "14-bit+fp32/128" "$tmp/t"; then ok "accum table fits 80 columns"; else bad "accum table fits 80 columns" "widest $w"; fi

# the summary under the table: K = 4096 (--at), the largest error with and
# without promotion in both measures, the same figures as the CSV's K = 4096
# rows. For positive products |exact| = sum |x y|, so the two measures agree.
# summ ROW COL: the figure (without %) of the summary row ROW, column COL
# (2: unpromoted, 3: promoted)
summ() { awk -v r="$1" -v c="$2" '$1 == r { v = $c; sub(/%$/, "", v); print v }' "$tmp/t"; }
"$MIXPREC" accum --k 300 --trials 12 >"$tmp/t" 2>&1
if grep -q "At K = 4096, 14 bits, blocks of 32" "$tmp/t" && grep -q "every 128 products" "$tmp/t" &&
	[ "$(summ relative 2)" = "$(summ normwise 2)" ] && [ "$(summ relative 3)" = "$(summ normwise 3)" ]; then
	ok "accum summary: K = 4096; positive products: relative = normwise"
else
	bad "accum summary: K = 4096; positive products: relative = normwise" "$(cat "$tmp/t")"
fi
"$MIXPREC" accum --csv --k 4096 --trials 12 --dist mixed >"$tmp/a.csv"
"$MIXPREC" accum --k 300 --trials 12 --dist mixed >"$tmp/t"
same() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && (a - b) / a < 1e-3 && (b - a) / a < 1e-3) }'; }
if same "$(summ relative 2)" "$(awk -v v="$(field max_rel_error 4096 14-bit)" 'BEGIN { print 100 * v }')" &&
	same "$(summ relative 3)" "$(awk -v v="$(field max_rel_error 4096 14-bit+fp32/128)" 'BEGIN { print 100 * v }')" &&
	same "$(summ normwise 2)" "$(awk -v v="$(field max_scaled_error 4096 14-bit)" 'BEGIN { print 100 * v }')" &&
	same "$(summ normwise 3)" "$(awk -v v="$(field max_scaled_error 4096 14-bit+fp32/128)" 'BEGIN { print 100 * v }')"; then
	ok "accum summary: the CSV's K = 4096 figures (mixed signs)"
else
	bad "accum summary: the CSV's K = 4096 figures (mixed signs)" "$(cat "$tmp/t")" "$(cat "$tmp/a.csv")"
fi
"$MIXPREC" accum --k 300 --trials 3 --at 512 --promote-every 0 >"$tmp/t"
if grep -q "At K = 512" "$tmp/t" && ! grep -qw "promoted" "$tmp/t" && [ -n "$(summ normwise 2)" ]; then
	ok "accum --at 512 --promote-every 0: one summary column"
else
	bad "accum --at 512 --promote-every 0: one summary column" "$(cat "$tmp/t")"
fi

# the CSV: header, one row per K and accumulator
"$MIXPREC" accum --csv --k 1024,4096 --trials 12 >"$tmp/a.csv" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ]; then ok "accum --csv: exit 0"; else bad "accum --csv: exit 0" "rc $rc" "$(cat "$tmp/err")"; fi
head -1 "$tmp/a.csv" >"$tmp/h"
if [ "$(cat "$tmp/h")" = "k,accumulator,bits,block,promote_every,format,dist,trials,max_rel_error,mean_rel_error,max_scaled_error" ]; then
	ok "accum --csv: header"
else
	bad "accum --csv: header" "$(cat "$tmp/h")"
fi
n=$(($(wc -l <"$tmp/a.csv") - 1))
if [ "$n" -eq 6 ]; then ok "accum --csv: 2 K x 3 accumulators"; else bad "accum --csv: 2 K x 3 accumulators" "$n rows"; fi
if [ "$(field bits 4096 fp32)" = 24 ] && [ "$(field promote_every 4096 14-bit+fp32/128)" = 128 ] &&
	[ "$(field format 4096 14-bit)" = fp8-e4m3 ] && [ "$(field dist 4096 14-bit)" = positive ]; then
	ok "accum --csv: the series' parameters"
else
	bad "accum --csv: the series' parameters" "$(cat "$tmp/a.csv")"
fi

# the size of the effect, against the estimate above
e14=$(field max_rel_error 4096 14-bit)
m14=$(field mean_rel_error 4096 14-bit)
e14k=$(field mean_rel_error 1024 14-bit)
ep=$(field max_rel_error 4096 14-bit+fp32/128)
e32=$(field max_rel_error 4096 fp32)
if awk -v e="$e14" 'BEGIN { exit !(e > 0.02 && e < 0.2) }'; then
	ok "14 bits, K=4096: an error of the order of 1% (estimate ~8%; got $e14)"
else
	bad "14 bits, K=4096: an error of the order of 1% (estimate ~8%)" "got $e14"
fi
if awk -v a="$m14" -v b="$e14k" 'BEGIN { r = a / b; exit !(r > 3 && r < 6) }'; then
	ok "14 bits: the error grows like K (4096 against 1024: $m14 / $e14k)"
else
	bad "14 bits: the error grows like K (4096 against 1024, ratio ~4)" "$m14 / $e14k"
fi
if awk -v p="$ep" -v e="$m14" 'BEGIN { exit !(p > 0 && p < 0.002 && p < e / 50) }'; then
	ok "promoted every 128: two orders of magnitude smaller ($ep)"
else
	bad "promoted every 128: two orders of magnitude smaller" "got $ep against $m14"
fi
if awk -v e="$e32" 'BEGIN { exit !(e < 1e-6) }'; then ok "fp32 accumulator: $e32"; else bad "fp32 accumulator below 1e-6" "$e32"; fi

# mixed signs: the norm-wise error of the promoted sum is below 0.01%
"$MIXPREC" accum --csv --k 4096 --trials 12 --dist mixed >"$tmp/a.csv"
s=$(field max_scaled_error 4096 14-bit+fp32/128)
if awk -v s="$s" 'BEGIN { exit !(s > 0 && s < 1e-4) }'; then
	ok "mixed signs, promoted: norm-wise error below 0.01% ($s)"
else
	bad "mixed signs, promoted: norm-wise error below 0.01%" "$s"
fi

# seeded: the same seed, the same bytes; another seed, other numbers
"$MIXPREC" accum --csv --k 300 --trials 5 --seed 9 >"$tmp/s1"
"$MIXPREC" accum --csv --k 300 --trials 5 --seed 9 >"$tmp/s2"
"$MIXPREC" accum --csv --k 300 --trials 5 --seed 10 >"$tmp/s3"
if cmp -s "$tmp/s1" "$tmp/s2" && ! cmp -s "$tmp/s1" "$tmp/s3"; then ok "accum: seeded"; else bad "accum: seeded"; fi
"$MIXPREC" accum --csv --k 300 --trials 5 --promote-every 0 >"$tmp/a.csv"
if [ "$(($(wc -l <"$tmp/a.csv") - 1))" -eq 2 ]; then ok "--promote-every 0: no promoted rows"; else bad "--promote-every 0: no promoted rows"; fi

# plot reads it
"$MIXPREC" accum --csv --k 256,1024,4096 --trials 4 >"$tmp/a.csv"
if "$MIXPREC" plot "$tmp/a.csv" --x k --y max_rel_error --by accumulator --logx --logy >"$tmp/plot" 2>&1 &&
	grep -q "14-bit+fp32/128" "$tmp/plot"; then
	ok "plot reads accum's CSV, one series per accumulator"
else
	bad "plot reads accum's CSV" "$(cat "$tmp/plot")"
fi

# usage errors: exit 2, the option named
usage() {
	name=$1 want=$2
	shift 2
	"$MIXPREC" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$want" "$tmp/err" && [ ! -s "$tmp/out" ]; then
		ok "$name: exit 2, names $want"
	else
		bad "$name: exit 2, names $want" "rc $rc" "$(cat "$tmp/err")"
	fi
}
usage "accum --bits 30" "--bits: 30 is out of range" accum --bits 30
usage "accum --bits 1" "--bits: 1 is out of range" accum --bits 1
usage "accum --k 0" "--k: 0 is out of range" accum --k 0
usage "accum --at 0" "--at: 0 is out of range" accum --at 0
usage "accum --k x" "--k" accum --k 12,x
usage "accum --format" "--format: unknown format 'fp9'" accum --format fp9
usage "accum --dist" "--dist: 'normal'" accum --dist normal
usage "accum --trials 0" "--trials: 0 is out of range" accum --trials 0
usage "accum --block 0" "--block: 0 is out of range" accum --block 0
usage "accum stray argument" "unexpected argument 'x'" accum x
usage "accum unknown option" "--frob" accum --frob
usage "train --accum-bits 30" "accum-bits" train --preset tiny --steps 1 --policy fp8-mixed --accum-bits 30
usage "train --accum-bits on an fp32 GEMM" "--accum-bits: policy fp32+accum-bits=14 multiplies in fp32" \
	train --preset tiny --steps 1 --policy fp32 --accum-bits 14
usage "train --promote-every x" "promote-every" train --preset tiny --steps 1 --policy fp8-mixed --promote-every x

# train with the emulated accumulator: runs, and names it
if "$MIXPREC" train --preset tiny --steps 2 --policy fp8-mixed --accum-bits 14 --promote-every 128 \
	--csv "$tmp/t.csv" >"$tmp/out" 2>"$tmp/err" &&
	grep -q "fp8-mixed+accum-bits=14+promote-every=128" "$tmp/t.csv"; then
	ok "train --accum-bits 14 --promote-every 128"
else
	bad "train --accum-bits 14 --promote-every 128" "$(cat "$tmp/err")"
fi
finish
