#!/bin/sh
# CLI contract tests of mixprec round (doc/DESIGN.md "CLI contract"): the
# contract CSV, bad input, the number syntax, every rounding mode, overflow
# and saturation, and stochastic rounding's draws.
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

make_tmp round

# ---------------------------------------------------------------------------
echo "# round: the contract CSV"

# 0.1 = 1.6 * 2^-4. fp32: 0.6 * 2^23 = 5033164.8 -> 5033165 = 0x4ccccd, exponent
# 123 = 0x7b: 0x3d800000 | 0x4ccccd = 0x3dcccccd, value 13421773 * 2^-27.
# fp16: exponent 11 = 01011, 0.6 * 1024 = 614.4 -> 614 = 0x266: 0x2c00|0x266 =
# 0x2e66, value 1638 * 2^-14 = 0.0999755859375. bf16: 0.6 * 128 = 76.8 -> 77 =
# 0x4d, 0x3d80 | 0x4d = 0x3dcd, value 205 * 2^-11 = 0.10009765625.
run round 0.1 --to fp32,fp16,bf16 --csv
expect_rc "round 0.1 --csv" 0
err_empty "round 0.1 --csv"
if [ "$(head -n 1 "$tmp/out")" = "input,format,mode,bits,value,abs_error,rel_error" ]; then
	ok "round --csv: contract header"
else
	bad "round --csv: contract header" "got: $(head -n 1 "$tmp/out")"
fi
out_lines "round 0.1: header + 3 rows" 4
csv_bits "round" 0.1 fp32 0x3dcccccd
csv_bits "round" 0.1 fp16 0x2e66
csv_bits "round" 0.1 bf16 0x3dcd
csv_value "round" 0.1 fp32 0.100000001490116119384765625
csv_value "round" 0.1 fp16 0.0999755859375
csv_value "round" 0.1 bf16 0.10009765625
out_has "round 0.1: mode rne" "0.1,fp16,rne,"
csv_consistent "round 0.1"
# relative errors: fp16 (0.1 - 0.0999755859375)/0.1 = 2.44140625e-4,
# bf16 (0.10009765625 - 0.1)/0.1 = 9.765625e-4
res=$(awk -F, 'NR > 1 && $2 == "fp16" && ($7 - 2.44140625e-4 > 1e-13 || $7 - 2.44140625e-4 < -1e-13) { print "fp16 rel " $7 }
	NR > 1 && $2 == "bf16" && ($7 - 9.765625e-4 > 1e-13 || $7 - 9.765625e-4 < -1e-13) { print "bf16 rel " $7 }' "$tmp/out")
[ -z "$res" ] && ok "round 0.1: rel_error fields" || bad "round 0.1: rel_error fields" "$res"

# Text output: default formats fp32,fp16,bf16.
run round 0.1
expect_rc "round 0.1 (text)" 0
out_line "round text: input line" "0.1"
out_has "round text: fp32 bits" "0x3dcccccd"
out_has "round text: fp16 bits" "0x2e66"
out_has "round text: bf16 bits" "0x3dcd"

# stdin: 1.0, 1.1, ..., 3.0 (what `seq 1 0.1 3` prints) -> header + 21 rows.
# 1.1 in bf16: 0.1 * 128 = 12.8 -> 13 = 0x0d, 0x3f80 | 0x0d = 0x3f8d = 1 + 13/128.
awk 'BEGIN { for (i = 10; i <= 30; i++) printf "%.1f\n", i / 10 }' >"$tmp/seq"
run_in "$tmp/seq" round --to bf16 --csv
expect_rc "stdin 1.0..3.0 step 0.1" 0
out_lines "stdin 1.0..3.0: header + 21 rows" 22
csv_bits "stdin" 1.1 bf16 0x3f8d
csv_value "stdin" 1.1 bf16 1.1015625
# 2.0 = 2^1: exponent 128 = 0x80 -> 0x4000; 3.0 = 1.5 * 2: 0x4040.
csv_bits "stdin" 2.0 bf16 0x4000
csv_bits "stdin" 3.0 bf16 0x4040
csv_consistent "stdin 1.0..3.0"
# nearest: |value - input| is at most half the spacing 2^(e-7) (e = 0 below 2, 1 from 2)
res=$(awk -F, 'NR > 1 { d = $5 - $1; if (d < 0) d = -d; h = ($1 < 2 ? 2^-7 : 2^-6) / 2
	if (d > h) print $1 " -> " $5 " is not nearest" }' "$tmp/out")
[ -z "$res" ] && ok "stdin 1.0..3.0: every row is a nearest value" || bad "stdin 1.0..3.0: every row is a nearest value" "$res"

printf '0.5\r\n' >"$tmp/crlf"
run_in "$tmp/crlf" round --to bf16 --csv
expect_rc "stdin CRLF line" 0
csv_bits "stdin CRLF" 0.5 bf16 0x3f00

# ---------------------------------------------------------------------------
echo "# round: bad input"

run round 1e --to bf16
usage_error "round 1e" "'1e'" "exponent"
run round 1 --to bf61
usage_error "round --to bf61" "'bf61'" fp32 tf32 fp16 bf16 fp8-e4m3 fp8-e5m2
run round 1 --to bf16 --mode nearest
usage_error "round --mode nearest" "'nearest'" rne
run round 1/0 --to bf16
usage_error "round 1/0" "'1/0'"
run round 1 --to bf16 --seed -1
usage_error "round --seed -1" "--seed"
run round 1 --to bf16 --seed x
usage_error "round --seed x" "--seed" "'x'"

# One bad value among good ones: reported, the others still rounded, exit 2.
run round 1 1e 2 --to bf16 --csv
expect_rc "round 1 1e 2" 2
err_has "round 1 1e 2: names value 2" "value 2:"
err_has "round 1 1e 2: names '1e'" "'1e'"
out_lines "round 1 1e 2: header + 2 rows" 3
csv_bits "round 1 1e 2" 1 bf16 0x3f80
csv_bits "round 1 1e 2" 2 bf16 0x4000
out_lacks "round 1 1e 2: no row for 1e" "1e,"

# The same with a negative value first: 1e is still value 2.
run round -1 1e --to bf16 --csv
expect_rc "round -1 1e" 2
err_has "round -1 1e: names value 2 (command-line position)" "value 2:"

# stdin with an empty line 2: line 2 reported, lines 1 and 3 still converted.
printf '1\n\n2\n' >"$tmp/empty-line"
run_in "$tmp/empty-line" round --to bf16 --csv
expect_rc "stdin with an empty line" 2
err_has "stdin empty line: 'line 2:'" "line 2:"
out_lines "stdin empty line: header + 2 rows" 3
csv_bits "stdin empty line" 1 bf16 0x3f80
csv_bits "stdin empty line" 2 bf16 0x4000
printf '0.5\nabc\n0.25\n' >"$tmp/bad-line"
run_in "$tmp/bad-line" round --to bf16 --csv
expect_rc "stdin with a bad line" 2
err_has "stdin bad line: 'line 2:'" "line 2:"
err_has "stdin bad line: names 'abc'" "abc"
out_lines "stdin bad line: header + 2 rows" 3

# ---------------------------------------------------------------------------
echo "# round: number syntax"

# 0x1.99999ap-4: 24 fraction bits 0x99999a end in a 0 bit, so it is exactly
# the fp32 0x4ccccd fraction at exponent -4: 0x3dcccccd, no error.
run round 0x1.99999ap-4 --to fp32 --csv
expect_rc "hex float" 0
csv_bits "hex float" 0x1.99999ap-4 fp32 0x3dcccccd
out_has "hex float is exact in fp32" "0x1.99999ap-4,fp32,rne,0x3dcccccd,0.100000001490116119384765625,0,0"

# 1/3 = 1.333.. * 2^-2. fp16: exponent 13 = 01101, .333 * 1024 = 341.3 -> 341 =
# 0x155: 0x3400 | 0x155 = 0x3555, value 1365 * 2^-12 = 0.333251953125.
# bf16: exponent 125, .333 * 128 = 42.7 -> 43 = 0x2b: 0x3e80 | 0x2b = 0x3eab,
# value 171 * 2^-9 = 0.333984375.
run round 1/3 --to fp16,bf16 --csv
expect_rc "fraction 1/3" 0
csv_bits "1/3" 1/3 fp16 0x3555
csv_value "1/3" 1/3 fp16 0.333251953125
csv_bits "1/3" 1/3 bf16 0x3eab
csv_value "1/3" 1/3 bf16 0.333984375

# 2^-14: fp16 min normal, exponent field 1 -> 0x0400; bf16 exponent 113 = 0x71
# -> 0x3880. 3*2^-10 = 1.5 * 2^-9: fp16 exponent 6 -> 0 00110 1000000000 =
# 0x1a00; bf16 exponent 118 -> 0 01110110 1000000 = 0x3b40.
run round 2^-14 '3*2^-10' --to fp16,bf16 --csv
expect_rc "powers of two" 0
csv_bits "2^k" 2^-14 fp16 0x0400
csv_bits "2^k" 2^-14 bf16 0x3880
csv_value "2^k" 2^-14 fp16 0.00006103515625
csv_bits "m*2^k" '3*2^-10' fp16 0x1a00
csv_bits "m*2^k" '3*2^-10' bf16 0x3b40
csv_value "m*2^k" '3*2^-10' fp16 0.0029296875

# -6.5e-5 = -1.06496 * 2^-14 (just above the fp16 min normal 6.1035e-5).
# fp16: .06496 * 1024 = 66.5 -> 67 = 0x43: 1 00001 0001000011 = 0x8443,
# value -(1024 + 67) * 2^-24 = -0.000065028667449951171875.
# bf16: .06496 * 128 = 8.3 -> 8: 1 01110001 0001000 = 0xb888, value
# -(128 + 8) * 2^-21 = -0.000064849853515625.
run round -6.5e-5 --to fp16,bf16 --csv
expect_rc "negative positional value -6.5e-5" 0
csv_bits "-6.5e-5" -6.5e-5 fp16 0x8443
csv_value "-6.5e-5" -6.5e-5 fp16 -0.000065028667449951171875
csv_bits "-6.5e-5" -6.5e-5 bf16 0xb888
csv_value "-6.5e-5" -6.5e-5 bf16 -0.000064849853515625
csv_consistent "-6.5e-5"

# inf: exponent all ones, fraction 0. nan: canonical quiet NaN, the top
# fraction bit set: fp16 0 11111 1000000000 = 0x7e00, bf16 0x7fc0, fp32
# 0x7fc00000, e5m2 0 11111 10 = 0x7e; e4m3's only NaN is 0 1111 111 = 0x7f.
run round inf -inf nan --to fp32,fp16,bf16,fp8-e4m3,fp8-e5m2 --csv
expect_rc "inf, -inf, nan" 0
csv_bits "inf" inf fp16 0x7c00
csv_bits "inf" inf bf16 0x7f80
csv_bits "inf" inf fp32 0x7f800000
csv_bits "inf" inf fp8-e5m2 0x7c
csv_bits "-inf" -inf fp16 0xfc00
csv_bits "-inf" -inf bf16 0xff80
csv_bits "nan" nan fp16 0x7e00
csv_bits "nan" nan bf16 0x7fc0
csv_bits "nan" nan fp32 0x7fc00000
csv_bits "nan" nan fp8-e5m2 0x7e
csv_bits "nan" nan fp8-e4m3 0x7f
csv_bits "inf without --saturate in e4m3 is NaN" inf fp8-e4m3 0x7f
# -inf: the NaN with the sign, 1 1111 111 (PyTorch, ml_dtypes, cuda_fp8.h)
csv_bits "-inf in e4m3 is the negative NaN" -inf fp8-e4m3 0xff
csv_value "-inf in e4m3 is NaN" -inf fp8-e4m3 nan
csv_value "nan" nan fp16 nan
csv_value "inf" inf fp16 inf
csv_value "-inf" -inf fp16 -inf

# Exact decimal parsing, never via binary64: 1 + 2^-8 = 1.00390625 is the bf16
# tie between 1 (0x3f80) and 1 + 2^-7 (0x3f81), rne picks the even 0x3f80; a
# hair above it (not representable in binary64) rounds up to 0x3f81.
run round 1.00390625000000000001 1.00390625 --to bf16 --csv
expect_rc "near-tie decimals" 0
csv_bits "just above the tie" 1.00390625000000000001 bf16 0x3f81
csv_bits "exact tie" 1.00390625 bf16 0x3f80

# Subnormals: fp16 2^-24 is the smallest subnormal 0x0001; 2^-25 is the tie
# between 0 and 2^-24 -> even 0x0000; 3*2^-26 = 0.75 * 2^-24 -> 0x0001;
# -0 keeps its sign: 0x8000.
run round 2^-24 2^-25 '3*2^-26' --to fp16 --csv
csv_bits "subnormal" 2^-24 fp16 0x0001
csv_bits "subnormal tie to even zero" 2^-25 fp16 0x0000
csv_bits "subnormal" '3*2^-26' fp16 0x0001
run round -0 --to fp16 --csv
csv_bits "negative zero" -0 fp16 0x8000

# Negative values keep their place among positional arguments.
run round 1 -2 3 --to bf16 --csv
expect_rc "round 1 -2 3" 0
got=$(awk -F, 'NR > 1 { printf "%s ", $1 }' "$tmp/out")
if [ "$got" = "1 -2 3 " ]; then
	ok "round 1 -2 3: rows in command-line order"
else
	bad "round 1 -2 3: rows in command-line order" "got inputs in order: $got"
fi

# ---------------------------------------------------------------------------
echo "# round: rounding modes"

# 1 + 2^-8 lies halfway between 1 (0x3f80) and 1 + 2^-7 (0x3f81).
# rne: even -> 0x3f80; rna: away -> 0x3f81; rtz/down -> 0x3f80; up -> 0x3f81.
# Negated (sign bit 0x8000): rne -> 0xbf80, rna -> 0xbf81, rtz -> 0xbf80,
# down (toward -inf) -> 0xbf81, up (toward +inf) -> 0xbf80.
for spec in rne:0x3f80:0xbf80 rna:0x3f81:0xbf81 rtz:0x3f80:0xbf80 down:0x3f80:0xbf81 up:0x3f81:0xbf80; do
	mode=${spec%%:*}
	rest=${spec#*:}
	pos=${rest%%:*}
	neg=${rest#*:}
	run round 1.00390625 -1.00390625 --to bf16 --mode "$mode" --csv
	expect_rc "mode $mode" 0
	csv_bits "mode $mode" 1.00390625 bf16 "$pos"
	csv_bits "mode $mode" -1.00390625 bf16 "$neg"
	out_has "mode $mode: the mode column" ",bf16,$mode,"
done

# fp8-e4m3: max 448 = 0 1111 110 (0x7e); 464 is halfway between 448 and
# 480 = 0 1111 111 (which is NaN), ties to even -> 448; 480 overflows -> NaN
# 0x7f, and -480, -1000 to the NaN with the sign, 1 1111 111 = 0xff; --saturate
# clamps to 448 (0x7e), -480 to -448 (0xfe).
run round 464 480 -480 -1000 --to fp8-e4m3 --csv
expect_rc "fp8-e4m3 overflow" 0
csv_bits "e4m3" 464 fp8-e4m3 0x7e
csv_value "e4m3" 464 fp8-e4m3 448
csv_bits "e4m3 overflow is NaN" 480 fp8-e4m3 0x7f
csv_value "e4m3 overflow is NaN" 480 fp8-e4m3 nan
csv_bits "e4m3 negative overflow is the negative NaN" -480 fp8-e4m3 0xff
csv_bits "e4m3 negative overflow is the negative NaN" -1000 fp8-e4m3 0xff
csv_value "e4m3 negative overflow is NaN" -1000 fp8-e4m3 nan
run round 480 -480 1e9 inf --to fp8-e4m3 --saturate --csv
expect_rc "fp8-e4m3 --saturate" 0
csv_bits "e4m3 --saturate" 480 fp8-e4m3 0x7e
csv_bits "e4m3 --saturate" -480 fp8-e4m3 0xfe
csv_bits "e4m3 --saturate" 1e9 fp8-e4m3 0x7e
csv_bits "e4m3 --saturate" inf fp8-e4m3 0x7e

# fp8-e5m2: max 1.75 * 2^15 = 57344 = 0 11110 11 = 0x7b; 65536 = 2^16 is
# beyond the exponent range -> inf 0 11111 00 = 0x7c.
run round 65536 57344 --to fp8-e5m2 --csv
csv_bits "e5m2 overflow is inf" 65536 fp8-e5m2 0x7c
csv_bits "e5m2 max" 57344 fp8-e5m2 0x7b

# fp16: max 65504 = 0x7bff, the next step would be 65536, so 65520 is the tie
# -> even (65536) -> overflow -> inf 0x7c00; 65519 is below it -> 0x7bff.
# --saturate: 65520 -> 0x7bff. rtz never rounds up to inf: 1e6 -> 0x7bff.
run round 65520 65519 --to fp16 --csv
csv_bits "fp16 overflow at the tie" 65520 fp16 0x7c00
csv_bits "fp16 below the tie" 65519 fp16 0x7bff
run round 65520 --to fp16 --saturate --csv
csv_bits "fp16 --saturate" 65520 fp16 0x7bff
run round 1e6 --to fp16 --mode rtz --csv
csv_bits "fp16 rtz overflow is max finite" 1e6 fp16 0x7bff

# ---------------------------------------------------------------------------
echo "# round: stochastic rounding"

# 0.1 in bf16 lies between 204 * 2^-11 = 0.099609375 (0x3dcc) and 205 * 2^-11 =
# 0.10009765625 (0x3dcd).
run round 0.1 --to bf16 --mode sr --seed 1 --csv
expect_rc "sr --seed 1" 0
cp "$tmp/out" "$tmp/sr1"
run round 0.1 --to bf16 --mode sr --seed 1 --csv
if cmp -s "$tmp/out" "$tmp/sr1"; then ok "sr --seed 1 is reproducible"; else bad "sr --seed 1 is reproducible"; fi
got=$(awk -F, 'NR == 2 { print $4 " " $5 }' "$tmp/out")
case $got in
"0x3dcc 0.099609375" | "0x3dcd 0.10009765625") ok "sr: 0.1 goes to a neighbour ($got)" ;;
*) bad "sr: 0.1 goes to a neighbour" "got '$got'" ;;
esac
out_has "sr: the mode column" ",bf16,sr,"

# Over 2000 values the share rounded up is the fraction of the gap,
# p = (0.1 - lo) / (hi - lo) = 0.8; allow 4 standard errors sqrt(p(1-p)/n).
awk 'BEGIN { for (i = 0; i < 2000; i++) print "0.1" }' >"$tmp/tenths"
run_in "$tmp/tenths" round --to bf16 --mode sr --seed 1 --csv
expect_rc "sr over 2000 lines" 0
out_lines "sr over 2000 lines: header + 2000 rows" 2001
res=$(awk -F, 'NR > 1 { n++; if ($4 == "0x3dcd") up++; else if ($4 != "0x3dcc") other++ }
END {
	lo = 204 / 2048; hi = 205 / 2048
	p = (0.1 - lo) / (hi - lo); se = sqrt(p * (1 - p) / n); share = up / n
	d = share - p; if (d < 0) d = -d
	if (other) printf "%d rows are neither neighbour\n", other
	else if (d > 4 * se) printf "share up %.4f, expected %.4f +- %.4f\n", share, p, 4 * se
}' "$tmp/out")
[ -z "$res" ] && ok "sr: share rounded up is near the fraction of the gap" || bad "sr: share rounded up is near the fraction of the gap" "$res"
cp "$tmp/out" "$tmp/sr2000"
run_in "$tmp/tenths" round --to bf16 --mode sr --seed 2 --csv
if cmp -s "$tmp/out" "$tmp/sr2000"; then bad "sr: another seed gives other draws"; else ok "sr: another seed gives other draws"; fi

# ---------------------------------------------------------------------------
echo "# round: rto, rnz, sr-equal"

# fp16 around 1 (spacing 2^-10): 1 + 2^-11 is the midpoint of 1 (0x3c00)
# and 1 + 2^-10 (0x3c01). rto truncates to 0x3c00 (even) and sets the last
# bit -> 0x3c01; rnz ties toward zero -> 0x3c00; 1 + 3 2^-11 truncates to
# the odd 0x3c01, which rto keeps, and rnz takes the tie toward zero too.
run round 1.00048828125 1.00146484375 --to fp16 --mode rto --csv
expect_rc "rto" 0
csv_bits "rto: even truncation gets its last bit" 1.00048828125 fp16 0x3c01
csv_bits "rto: odd truncation stays" 1.00146484375 fp16 0x3c01
out_has "rto: the mode column" ",fp16,rto,"
run round 1.00048828125 -1.00048828125 1.00146484375 --to fp16 --mode rnz --csv
csv_bits "rnz: the tie toward zero" 1.00048828125 fp16 0x3c00
csv_bits "rnz: the negative tie toward zero" -1.00048828125 fp16 0xbc00
csv_bits "rnz: 1 + 3 2^-11 toward zero" 1.00146484375 fp16 0x3c01
# rto never rounds a finite value to inf: 1e6 -> max 0x7bff; 1e-30 is below
# fp16's min subnormal 2^-24 -> 0x0001; rnz at 65520 (the tie max|65536)
# keeps max, above it overflows to inf.
run round 1e6 1e-30 --to fp16 --mode rto --csv
csv_bits "rto: past max stays at max" 1e6 fp16 0x7bff
csv_bits "rto: below the min subnormal gives it" 1e-30 fp16 0x0001
run round 65520 65521 --to fp16 --mode rnz --csv
csv_bits "rnz: the overflow tie keeps max" 65520 fp16 0x7bff
csv_bits "rnz: above it inf" 65521 fp16 0x7c00

# sr-equal: 0.1 in bf16 (between 0x3dcc and 0x3dcd, 0.8 of the gap up) goes
# up half the time, not 80%: over 2000 values the share up is within four
# standard errors sqrt(1/4 / 2000) of 1/2 (and far from sr's 0.8).
run_in "$tmp/tenths" round --to bf16 --mode sr-equal --seed 1 --csv
expect_rc "sr-equal over 2000 lines" 0
res=$(awk -F, 'NR > 1 { n++; if ($4 == "0x3dcd") up++; else if ($4 != "0x3dcc") other++ }
END {
	se = sqrt(0.25 / n); d = up / n - 0.5; if (d < 0) d = -d
	if (other) printf "%d rows are neither neighbour\n", other
	else if (d > 4 * se) printf "share up %.4f, expected 0.5 +- %.4f\n", up / n, 4 * se
}' "$tmp/out")
[ -z "$res" ] && ok "sr-equal: half go up whatever the fraction" || bad "sr-equal: half go up whatever the fraction" "$res"

# ---------------------------------------------------------------------------
echo "# round --via: double rounding"

# x = 0x1.0100000001p0 = 1 + 2^-8 + 2^-40, just above the midpoint 1 + 2^-8
# of bf16's 1 (0x3f80) and 1 + 2^-7 (0x3f81): directly -> 0x3f81. fp32 rne
# gives the midpoint 0x3f808000 (2^-40 is below half of fp32's 2^-23), which
# bf16 rne ties to the even 0x3f80; fp32 rto truncates to 0x3f808000 and sets
# the last bit, 0x3f808001, above the midpoint -> 0x3f81.
run round 0x1.0100000001p0 --via fp32:rto --to bf16 --csv
expect_rc "--via fp32:rto" 0
if [ "$(head -n 1 "$tmp/out")" = "input,via,via_bits,format,mode,bits,value,abs_error,rel_error" ]; then
	ok "--via --csv: header"
else
	bad "--via --csv: header" "got: $(head -n 1 "$tmp/out")"
fi
out_has "--via fp32:rto: rto bits, then the direct result" "0x1.0100000001p0,fp32,0x3f808001,bf16,rne,0x3f81,"
run round 0x1.0100000001p0 --via fp32:rne --to bf16 --csv
out_has "--via fp32:rne: double rounding to 1" "0x1.0100000001p0,fp32,0x3f808000,bf16,rne,0x3f80,1,"
run round 0x1.0100000001p0 --via fp32:rto --to bf16
out_has "--via: the first rounding's line" "via fp32  0x3f808001"
run round 1 --via fp32:sr
expect_rc "--via fp32:sr" 2
err_has "--via: stochastic refused" "--via: the first rounding takes a deterministic mode, not sr"
run round 1 --via fp32
expect_rc "--via without a mode" 2
err_has "--via without a mode" "--via: 'fp32' is not FORMAT:MODE"
run round 1 --via fp99:rne
expect_rc "--via unknown format" 2
err_has "--via unknown format" "--via: unknown format 'fp99'"
run round 1 --via fp32:rto --device cuda
expect_rc "--via with cuda" 2
err_has "--via with cuda" "--device cuda: --via rounds on the CPU only"

# ---------------------------------------------------------------------------
finish
