#!/bin/sh
# CLI tests of the sub-8-bit and FNUZ formats (fp6-e3m2, fp6-e2m3, fp4-e2m1,
# fp8-e4m3fnuz, fp8-e5m2fnuz, e8m0) in formats, bits and round: the table,
# the bits, every mode and the special rules, their messages and exit
# statuses. Expected values are derived by hand in the comments (OCP MX v1.0's
# table and the formats' definitions), never copied from the program.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp cliformats


# csv_cell FORMAT COLUMN: the cell of formats --csv (in $tmp/out)
csv_cell() { awk -F, -v n="$1" -v c="$2" '$1 == n { print $c }' "$tmp/out"; }

# round_bits VALUE FORMAT MODE [OPTION...]: the bits column of round --csv
round_bits() {
	v=$1 f=$2 m=$3
	shift 3
	"$MIXPREC" round "$v" --to "$f" --mode "$m" --csv "$@" 2>/dev/null | awk -F, 'NR == 2 { print $4 }'
}

# expect_bits VALUE FORMAT MODE WANT [OPTION...]
expect_bits() {
	v=$1 f=$2 m=$3 want=$4
	shift 4
	got=$(round_bits "$v" "$f" "$m" "$@")
	[ "$got" = "$want" ]
	check "round $v --to $f --mode $m $*: $want" $? "got '$got'"
}

echo "# formats"
run formats --csv
expect_rc "formats --csv" 0
[ "$(wc -l <"$tmp/out")" -eq 47 ]
check "formats --csv: header + 46 formats" $? "got $(wc -l <"$tmp/out") lines"
# the formats' table: name bits bias max min_normal min_subnormal; e8m0 has no
# subnormals (empty cell), 2^127 = 1.7014118346046923e+38, 2^-127 =
# 5.877471754111438e-39
# num_eq A B: A and B are the same number (read exactly by awk)
num_eq() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 == b + 0) }'; }
while read -r name bits bias max minn mins; do
	got="$(csv_cell "$name" 2) $(csv_cell "$name" 5)"
	[ "$got" = "$bits $bias" ] && num_eq "$(csv_cell "$name" 6)" "$max" && num_eq "$(csv_cell "$name" 7)" "$minn"
	check "formats: $name bits, bias, max, min normal" $? "got $(grep "^$name," "$tmp/out")"
	if [ "$mins" = - ]; then
		[ -z "$(csv_cell "$name" 8)" ]
	else
		num_eq "$(csv_cell "$name" 8)" "$mins"
	fi
	check "formats: $name min subnormal ${mins}" $? "got '$(csv_cell "$name" 8)'"
	[ "$(csv_cell "$name" 11)" = no ]
	check "formats: $name has no inf" $? "got $(csv_cell "$name" 11)"
done <<'TABLE'
fp6-e3m2 6 3 28 0.25 0.0625
fp6-e2m3 6 1 7.5 1 0.125
fp4-e2m1 4 1 6 1 0.5
fp8-e4m3fnuz 8 8 240 0.0078125 0.0009765625
fp8-e5m2fnuz 8 16 57344 3.0517578125e-05 7.62939453125e-06
e8m0 8 127 1.7014118346046923e+38 5.877471754111438e-39 -
TABLE
run formats
expect_rc "formats" 0
grep -q '^e8m0 .* unsigned, no zero; NaN = 0xff$' "$tmp/out"
check "formats: e8m0's specials in the table" $? "$(grep e8m0 "$tmp/out")"
grep -q '^fp4-e2m1 .* no inf, no NaN; saturates$' "$tmp/out"
check "formats: fp4's specials in the table" $? "$(grep fp4 "$tmp/out")"
grep -q '^fp8-e4m3fnuz .* no inf, no -0; NaN = 0x80$' "$tmp/out"
check "formats: FNUZ specials in the table" $? "$(grep fnuz "$tmp/out")"

echo "# round: values and modes"
# fp4-e2m1 values 0 0.5 1 1.5 2 3 4 6 = patterns 0..7; 5 ties 4 (0x6) | 6 (0x7)
expect_bits 5 fp4 rne 0x6
expect_bits 5 fp4 rna 0x7
expect_bits 5 fp4 up 0x7
expect_bits 5 fp4 down 0x6
expect_bits -5 fp4 down 0xf
expect_bits -5 fp4 rtz 0xe
expect_bits 2.5 fp4 rne 0x4      # tie 2 (0x4) | 3 (0x5)
expect_bits 0.3 fp4 rne 0x1      # above the tie 0.25 -> 0.5
# bits printed as 0x + ceil(width/4) digits: fp4 one, fp6 and fp8 two
expect_bits 1 fp6-e3m2 rne 0x0c  # 0 011 00: exponent 3 = bias
expect_bits 1 fp6-e2m3 rne 0x08  # 0 01 000
expect_bits 1 e4m3fnuz rne 0x40  # 0 1000 000
expect_bits 1 e5m2fnuz rne 0x40  # 0 10000 00
expect_bits 1 e8m0 rne 0x7f      # 2^0: 127
# e8m0 rounds to a power of two: 3 ties 2 (0x80, even) | 4 (0x81); 1.5 ties
# 1 (0x7f, odd) | 2 -> 2; up/down take the neighbours
expect_bits 3 e8m0 rne 0x80
expect_bits 1.5 e8m0 rne 0x80
expect_bits 3 e8m0 up 0x81
expect_bits 3.5 e8m0 down 0x80
expect_bits 2^-130 e8m0 rne 0x00  # below 2^-127: clamped to it
expect_bits 2^128 e8m0 rtz 0xfe
expect_bits 2^128 e8m0 rne 0xff   # past 2^127: NaN
expect_bits 2^128 e8m0 rne 0xfe --saturate
# SR with seed 1: value i uses element i's bits; 3 in e8m0 is half way, 0x80
# or 0x81 -- both in a thousand draws
"$MIXPREC" round --to e8m0 --mode sr --seed 1 --csv <"$(printf '3\n%.0s' $(seq 1 1000) >"$tmp/sr.in"; echo "$tmp/sr.in")" \
	>"$tmp/out" 2>"$tmp/err"
n80=$(grep -c ',0x80,' "$tmp/out"); n81=$(grep -c ',0x81,' "$tmp/out")
[ "$n80" -gt 400 ] && [ "$n81" -gt 400 ] && [ $((n80 + n81)) -eq 1000 ]
check "round 3 --to e8m0 --mode sr: 2 or 4, about half each" $? "0x80 $n80, 0x81 $n81"

echo "# round: the special rules"
# fp6/fp4 saturate beyond max and for +-inf in every mode
for m in rne rna rtz up down sr; do
	expect_bits 1000 fp4 $m 0x7
	expect_bits -inf fp6-e3m2 $m 0x3f
	expect_bits inf fp6-e2m3 $m 0x1f
done
# signed zero: fp4 -0 is 0x8; a negative value rounding to zero is -0
expect_bits -0 fp4 rne 0x8
expect_bits -0.1 fp4 rne 0x8
expect_bits -0.01 fp6-e3m2 rne 0x20
# FNUZ: -0 and negatives rounding to zero give 0x00; overflow NaN 0x80 unless --saturate
expect_bits -0 e4m3fnuz rne 0x00
expect_bits -1e-9 e5m2fnuz rne 0x00
expect_bits 1000 e4m3fnuz rne 0x80
expect_bits -1000 e4m3fnuz rne 0x80
expect_bits -1000 e4m3fnuz rne 0xff --saturate   # -240
expect_bits inf e5m2fnuz rne 0x80
expect_bits nan e4m3fnuz rne 0x80
# fp8-e4m3 and e5m2 are unchanged by the new formats
expect_bits 1 fp8-e4m3 rne 0x38
expect_bits 1 fp8-e5m2 rne 0x3c

# NaN has no fp4 encoding: a message naming the format, exit 2, the other
# formats still printed
run round nan --to fp4,fp16 --csv
expect_rc "round nan --to fp4,fp16" 2
grep -q "fp4-e2m1" "$tmp/err" && grep -q "no NaN" "$tmp/err"
check "round nan --to fp4: the message names fp4-e2m1" $? "$(cat "$tmp/err")"
grep -q '^nan,fp16,rne,0x7e00,' "$tmp/out"
check "round nan --to fp4,fp16: the fp16 row is still there" $? "$(cat "$tmp/out")"
! grep -q ',fp4-e2m1,' "$tmp/out"
check "round nan --to fp4: no fp4 row" $? "$(cat "$tmp/out")"
for v in 0 -1 -inf; do
	run round "$v" --to e8m0
	expect_rc "round $v --to e8m0" 2
	grep -q "e8m0" "$tmp/err"
	check "round $v --to e8m0: the message names e8m0" $? "$(cat "$tmp/err")"
done
printf '1\nnan\n2\n' >"$tmp/in"
"$MIXPREC" round --to fp4 --csv <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "round --to fp4 < 1, nan, 2" 2
grep -q '^mixprec round: line 2: ' "$tmp/err"
check "round stdin: the bad line is named" $? "$(cat "$tmp/err")"
[ "$(awk -F, 'NR > 1 { print $1 "=" $4 }' "$tmp/out" | tr '\n' ' ')" = "1=0x2 2=0x4 " ]
check "round stdin: the other lines are rounded" $? "$(cat "$tmp/out")"
run round 1 --to fp4 --device cuda
expect_rc "round --to fp4 --device cuda" 2
grep -q "fp4-e2m1 is not available on the GPU" "$tmp/err"
check "round --to fp4 --device cuda: the message says why" $? "$(cat "$tmp/err")"

# training policies keep to the kernel formats: a clear refusal, exit 2
for opt in --gemm --grads --residual; do
	run train $opt e4m3fnuz --steps 1
	expect_rc "train $opt e4m3fnuz" 2
	grep -q "'e4m3fnuz' is not available to training policies" "$tmp/err"
	check "train $opt e4m3fnuz: the message says why" $? "$(cat "$tmp/err")"
done

echo "# bits"
run bits --raw 0x8 --format fp4 --csv
expect_rc "bits --raw 0x8 --format fp4" 0
grep -q '^0x8,fp4-e2m1,0x8,1,00,0,zero,-0,' "$tmp/out"
check "bits --raw 0x8 --format fp4: -0" $? "$(cat "$tmp/out")"
# e8m0: 0x7f = 2^0, 0x00 = 2^-127 (normal, no zero), 0xff NaN; no sign, no fraction
run bits --raw 0x7f --raw 0 --raw 0xff --format e8m0 --csv
expect_rc "bits --raw ... --format e8m0" 0
grep -q '^0x7f,e8m0,0x7f,,01111111,,normal,1,0,1,0x7e,0.5,0x80,2$' "$tmp/out"
check "bits --raw 0x7f --format e8m0: 1, neighbours 0.5 and 2" $? "$(cat "$tmp/out")"
grep -q '^0,e8m0,0x00,,00000000,,normal,5.877471754111' "$tmp/out"
check "bits --raw 0 --format e8m0: 2^-127, normal" $? "$(cat "$tmp/out")"
grep -q '^0xff,e8m0,0xff,,11111111,,nan,nan,' "$tmp/out"
check "bits --raw 0xff --format e8m0: NaN" $? "$(cat "$tmp/out")"
run bits --raw 0x80 --format e4m3fnuz --csv
grep -q '^0x80,fp8-e4m3fnuz,0x80,1,0000,000,nan,' "$tmp/out"
check "bits --raw 0x80 --format e4m3fnuz: the NaN" $? "$(cat "$tmp/out")"
# FNUZ neighbours of 0: -2^-10 (0x81) and 2^-10 (0x01), never the NaN
grep_next() { awk -F, 'NR == 2 { print $11 " " $13 }' "$tmp/out"; }
run bits --raw 0 --format e4m3fnuz --csv
[ "$(grep_next)" = "0x81 0x01" ]
check "bits --raw 0 --format e4m3fnuz: neighbours 0x81 and 0x01" $? "$(grep_next)"
run bits --raw 0x10 --format fp4
expect_rc "bits --raw 0x10 --format fp4 (5 bits)" 2
run bits nan --format fp6-e2m3
expect_rc "bits nan --format fp6-e2m3" 2
run bits -1 --csv
expect_rc "bits -1 (all formats)" 0
! grep -q ',e8m0,' "$tmp/out" && grep -q '^-1,fp4-e2m1,0xa,' "$tmp/out"
check "bits -1: e8m0 left out, fp4 -1 = 0xa" $? "$(cut -c1-30 "$tmp/out")"

echo "# help"
for c in formats bits round; do
	run $c --help
	[ "$(awk 'length > 80' "$tmp/out" | wc -l)" -eq 0 ] && grep -q e8m0 "$tmp/out"
	check "$c --help: names e8m0, within 80 columns" $? "$(awk 'length > 80' "$tmp/out")"
done
run round --help
grep -q "fp8-e4m3fnuz" "$tmp/out" && grep -q "fp4-e2m1" "$tmp/out" && grep -q "2^-127" "$tmp/out"
check "round --help: the new formats and e8m0's rules" $? ""

finish
