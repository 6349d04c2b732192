#!/bin/sh
# CLI tests of formats --values [--mode] and bits --interval: the CSV
# columns, rows derived by hand in the comments, and the refusals with
# their messages and exit statuses. Expected values come from the formats'
# definitions (OCP MX v1.0's fp4-e2m1 table 0, 0.5, 1, 1.5, 2, 3, 4, 6;
# IEEE binary16), never from the program's output.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp cliinterval

# row BITS: the CSV row of formats --values (in $tmp/out) whose bits are BITS
row() { grep "^$1," "$tmp/out"; }

echo "# formats --values"
run formats --values fp4 --csv
expect_rc "formats --values fp4 --csv" 0
out_lines "formats --values fp4: header + 16 patterns" 17
same "formats --values: header" "$(head -n 1 "$tmp/out")" "bits,class,value,value_hex"
# pattern 7: 0 11 1 = 2^(3-1) x 1.5 = 6 = 0x1.8p+2; pattern 8 is -0; 1 the subnormal 0.5
same "formats --values fp4: 6" "$(row 0x7)" "0x7,normal,6,0x1.8p+2"
same "formats --values fp4: -0" "$(row 0x8)" "0x8,zero,-0,-0x0p+0"
same "formats --values fp4: 0.5" "$(row 0x1)" "0x1,subnormal,0.5,0x1p-1"

run formats --values fp4 --mode rne --csv
expect_rc "formats --values fp4 --mode rne --csv" 0
same "formats --values --mode: header" "$(head -n 1 "$tmp/out")" \
	"bits,class,value,value_hex,interval,lo,lo_hex,lo_closed,hi,hi_hex,hi_closed,rule"
# rne: ends are the midpoints; 1 (pattern 2, even) keeps both ties:
# [0.75, 1.25]; 1.5 (pattern 3, odd) loses both; 6 keeps all above 5 and
# the typed inf (fp4 saturates); -0 takes [-0.25, -0]
same "rne: 1" "$(row 0x2)" '0x2,normal,1,0x1p+0,"[0.75, 1.25]",0.75,0x1.8p-1,yes,1.25,0x1.4p+0,yes,1'
same "rne: 1.5" "$(row 0x3)" '0x3,normal,1.5,0x1.8p+0,"(1.25, 1.75)",1.25,0x1.4p+0,no,1.75,0x1.cp+0,no,1'
same "rne: 6" "$(row 0x7)" '0x7,normal,6,0x1.8p+2,"(5, inf]",5,0x1.4p+2,no,inf,inf,yes,1'
same "rne: -0" "$(row 0x8)" '0x8,zero,-0,-0x0p+0,"[-0.25, -0]",-0.25,-0x1p-2,yes,-0,-0x0p+0,yes,1'
same "rne: -6" "$(row 0xf)" '0xf,normal,-6,-0x1.8p+2,"[-inf, -5)",-inf,-inf,yes,-5,-0x1.4p+2,no,1'

# rto: odd patterns take the open gap, even ones only themselves
run formats --values fp4 --mode rto --csv
same "rto: 1.5" "$(row 0x3 | cut -d, -f5-6)" '"(1, 2)"'
same "rto: 1.5 ends" "$(row 0x3 | awk -F'",' '{ print $2 }')" '1,0x1p+0,no,2,0x1p+1,no,1'
same "rto: 2" "$(row 0x4 | awk -F'",' '{ print $2 }')" '2,0x1p+1,yes,2,0x1p+1,yes,1'

# fp16: 65504 (0x7bff, odd) loses the tie 65520 with 2^16 to overflow:
# (65488, 65520); inf takes [65520, inf] (IEEE 754-2019 section 7.4)
run formats --values fp16 --mode rne --csv
expect_rc "formats --values fp16 --mode rne --csv" 0
out_lines "fp16: header + 65536 patterns" 65537
same "fp16 rne: 65504" "$(row 0x7bff | cut -d, -f3,5,6)" '65504,"(65488, 65520)"'
same "fp16 rne: inf" "$(row 0x7c00 | cut -d, -f3,5,6)" 'inf,"[65520, inf]"'
same "fp16 rne: a NaN has none" "$(row 0x7e00)" "0x7e00,nan,nan,nan,none,,,,,,,"

run formats --values fp16 --mode rne --saturate --csv
same "fp16 rne saturating: 65504 takes the rest" "$(row 0x7bff | cut -d, -f5,6)" '"(65488, inf]"'
same "fp16 rne saturating: inf has none" "$(row 0x7c00 | cut -d, -f5)" "none"

# FNUZ: the one NaN 0x80 takes both signs' overflow, a row each; 240 is
# odd (0x7f), so the tie 248 with 256 overflows
run formats --values fp8-e4m3fnuz --mode rne --csv
same "fnuz: two rows for 0x80" "$(grep -c '^0x80,' "$tmp/out")" 2
out_line "fnuz: the positive overflow" '0x80,nan,nan,nan,"[248, inf]",248,0x1.fp+7,yes,inf,inf,yes,1'

# sr: 1 in fp16 has neighbours 1 - 2^-11 and 1 + 2^-10; the support stops
# 2^-32 of the upper gap short: 1 + 2^-10 - 2^-42 = 0x1.003fffffffcp+0
run formats --values fp16 --mode sr --csv
same "sr: support of 1" "$(row 0x3c00 | awk -F'",' '{ print $2 }' | cut -d, -f1-6)" \
	'0.99951171875,0x1.ffcp-1,no,1.000976562499772626324556767940521240234375,0x1.003fffffffcp+0,yes'

echo "# bits --interval"
run bits --interval 65519 --format fp16 --csv
expect_rc "bits --interval 65519 --format fp16 --csv" 0
same "bits --interval: header" "$(head -n 1 "$tmp/out")" \
	"input,format,mode,bits,class,value,value_hex,probability,interval,lo,lo_hex,lo_closed,hi,hi_hex,hi_closed,rule,holds_input"
same "bits --interval 65519: 65504 and its interval" "$(sed -n 2p "$tmp/out")" \
	'65519,fp16,rne,0x7bff,normal,65504,0x1.ffcp+15,1,"(65488, 65520)",65488,0x1.ffap+15,no,65520,0x1.ffep+15,no,1,yes'
run bits --interval 65520 --format fp16
expect_rc "bits --interval 65520" 0
out_has "bits --interval 65520: inf" "0x7c00 = inf"
out_has "bits --interval 65520: [65520, inf]" "[65520, inf]"
# 1.1 lies 0.4 of the way from 1.099609375 to 1.1005859375 (gap 2^-10):
# up with probability ceil(0.4 x 2^32) / 2^32 = 1717986919 / 2^32
run bits --interval 1.1 --format fp16 --mode sr --csv
expect_rc "bits --interval 1.1 --mode sr" 0
out_lines "sr: two results" 3
same "sr: the step up" "$(grep '^1.1,fp16,sr,0x3c67,' "$tmp/out" | cut -d, -f8)" \
	"$(awk 'BEGIN { printf "%.32f", 1717986919 / 4294967296 }' | sed 's/0*$//')"
# the two probabilities sum to 1
same "sr: probabilities sum to 1" "$(awk -F, 'NR > 1 { s += $8 } END { print s }' "$tmp/out")" 1

echo "# refusals"
run formats --values fp32
expect_rc "formats --values fp32" 2
err_has "formats --values fp32: why" "--values: fp32 has 32 bits"
run formats --values fp99
expect_rc "formats --values fp99" 2
err_has "formats --values fp99: unknown" "--values: unknown format 'fp99'"
run formats --values fp4 --mode nearest
expect_rc "formats --mode nearest" 2
err_has "formats --mode nearest: unknown" "--mode: unknown rounding mode 'nearest'"
run formats --mode rne
expect_rc "formats --mode without --values" 2
err_has "formats --mode without --values: why" "--mode needs --values"
run bits --interval abc --format fp16
expect_rc "bits --interval abc" 2
err_has "bits --interval abc: not a number" "--interval: "
err_has "bits --interval abc: names it" "abc"
run bits --interval nan --format fp16
expect_rc "bits --interval nan" 2
err_has "bits --interval nan: why" "--interval: 'nan' is a NaN, not a real"
run bits --interval 1 --format fp16 --mode nearest
expect_rc "bits --interval --mode nearest" 2
err_has "bits --interval --mode nearest: unknown" "--mode: unknown rounding mode 'nearest'"
run bits --interval 1
expect_rc "bits --interval without --format" 2
err_has "bits --interval without --format: why" "--interval needs exactly one --format"
run bits --interval 1 2 --format fp16
expect_rc "bits --interval with a VALUE" 2
err_has "bits --interval with a VALUE: why" "--interval: its VALUE is the option's own"
run bits 1 --mode sr --format fp16
expect_rc "bits --mode sr without --interval" 2
err_has "bits --mode sr without --interval: why" "--mode: sr is not offered here"
run bits --interval 0 --format e8m0
expect_rc "bits --interval 0 --format e8m0" 2
err_has "bits --interval 0 into e8m0: why" "e8m0 has no zero"

finish
