#!/bin/sh
# CLI contract tests for mixprec quantize (MX and NVFP4): the CSV header, scales
# and elements of hand-derived blocks, the text paragraphs and summary,
# stdin with bad lines, option errors and exit statuses.
#
# Every expected value is derived by hand in the comment beside it from the
# rules (OCP MX v1.0 floor rule, the ceil rule, nvfp4's two levels); none is
# copied from the program's output.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp cliq

run_in() {
	in=$1
	shift
	"$MIXPREC" "$@" <"$in" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

out_line() {
	if grep -Fqx -e "$2" "$tmp/out"; then
		ok "$1"
	else
		bad "$1" "no stdout line: $2"
		show_io
	fi
}

err_empty() {
	if [ -s "$tmp/err" ]; then
		bad "$1: no stderr" "stderr: $(head -n 3 "$tmp/err")"
	else
		ok "$1: no stderr"
	fi
}

HEADER=index,block,input,tensor_scale,scale_bits,scale,bits,value,abs_error

# csv_row NAME INDEX EXPECTED: the CSV row of element INDEX (column 1) is EXPECTED.
csv_row() {
	got=$(awk -F, -v i="$2" 'NR > 1 && $1 == i' "$tmp/out")
	if [ "$got" = "$3" ]; then
		ok "$1"
	else
		bad "$1" "want: $3" "got:  $got"
	fi
}

echo "# help and usage"
run quantize --help
expect_rc "quantize --help" 0
out_has "--help lists the block formats" "mxfp8-e4m3"
out_has "--help names the CSV header" "index,block,input,tensor_scale,scale_bits,scale,bits,"
run quantize 1 2
expect_rc "no --to" 2
err_has "no --to: says so" "--to: a block format is required"
run quantize 1 --to mxfp9
expect_rc "--to mxfp9" 2
err_has "--to mxfp9: names it and the known ones" "--to: unknown block format 'mxfp9' (known: mxfp8-e4m3"
for b in 0 65537 -1 1.5 x; do
	run quantize 1 --to mxfp8-e4m3 --block "$b"
	expect_rc "--block $b" 2
	err_has "--block $b: names the option" "--block"
done
run quantize 1 --to mxfp8-e4m3 --scale-rule round
expect_rc "--scale-rule round" 2
err_has "--scale-rule round: known rules" "unknown rule 'round' (known: ocp (or floor), ceil, even, rceil, torchao-ceil)"
run quantize 1 --to mxfp8-e4m3 --mode rtz
expect_rc "--mode rtz" 2
err_has "--mode rtz: elements take rne, sr, rto, rnz or sr-equal" "elements round with rne, sr, rto, rnz or sr-equal, not rtz"

# 1 and 2.5 in one mxfp4 block: amax 2.5, X = 2^(floor(log2 2.5) - 2) = 0.5,
# elements 2 (exact, 0x4) and 5, between e2m1's 4 (0x6) and 6 (0x7): rto
# sets 0x6's last bit -> 0x7 (6 * 0.5 = 3); rnz ties toward zero -> 0x6 (2).
run quantize 1 2.5 --to mxfp4 --mode rto --csv
expect_rc "--mode rto" 0
out_has "rto: 5 -> 6 (odd)" "1,0,2.5,1,0x7e,0.5,0x7,3,0.5"
out_has "rto: exact 2 stays" "0,0,1,1,0x7e,0.5,0x4,1,0"
run quantize 1 2.5 --to mxfp4 --mode rnz --csv
out_has "rnz: the tie 4|6 toward zero" "1,0,2.5,1,0x7e,0.5,0x6,2,0.5"
# nvfp4, the same values: s_t = 2.5 / 2688 (fp32), s_b = e4m3(2.5 / (6 s_t)) =
# 448 (0x7e), and 1 / (448 s_t) = 2688 / 1120 = 2.4 (to fp32's rounding of
# s_t), between e2m1's 2 (0x4, even) and 3 (0x5): rto gives 0x5, rne 0x4.
run quantize 1 2.5 --to nvfp4 --mode rto --csv
out_has "nvfp4 rto: 2.4 -> 3 (odd)" "0,0,1,"
res=$(awk -F, 'NR == 2 && ($5 != "0x7e" || $7 != "0x5") { print "scale " $5 " bits " $7 }' "$tmp/out")
[ -z "$res" ] && ok "nvfp4 rto: scale 0x7e, element 0x5" || bad "nvfp4 rto: scale 0x7e, element 0x5" "$res"
run quantize 1 2.5 --to nvfp4 --csv
res=$(awk -F, 'NR == 2 && $7 != "0x4" { print "bits " $7 }' "$tmp/out")
[ -z "$res" ] && ok "nvfp4 rne: element 0x4" || bad "nvfp4 rne: element 0x4" "$res"
run quantize --to mxfp4 --random 64 --mode rto --draws 3
expect_rc "--draws with rto" 2
err_has "--draws with rto" "need --mode sr or sr-equal"

echo "# MXFP8 e4m3: the floor rule saturates 500, the ceil rule does not"
# amax 500: floor(log2 500) = 8, emax_elem 8 -> X = 2^0, e8m0 0x7f; 500 > 448
# saturates to 448 (0x7e), abs error 52. 1 = 2^0: field 7 -> 0x38. -3 = -1.5 *
# 2: field 8, fraction 100 -> 0xc4. 0.1 = 1.6 * 2^-4 -> 1.625 * 2^-4 =
# 0.1015625 (field 3, fraction 101: 0x1d), error 0.0015625.
run quantize 500 1 -3 0.1 --to mxfp8-e4m3 --csv
expect_rc "e4m3 ocp --csv" 0
err_empty "e4m3 ocp --csv"
out_line "e4m3 ocp: the contract header" "$HEADER"
csv_row "e4m3 ocp: 500 saturates" 0 "0,0,500,1,0x7f,1,0x7e,448,52"
csv_row "e4m3 ocp: 1" 1 "1,0,1,1,0x7f,1,0x38,1,0"
csv_row "e4m3 ocp: -3" 2 "2,0,-3,1,0x7f,1,0xc4,-3,0"
csv_row "e4m3 ocp: 0.1" 3 "3,0,0.1,1,0x7f,1,0x1d,0.1015625,0.0015625"
# ceil: 500 / 448 = 1.116 -> X = 2^1 (0x80); 250 -> 256 (above the midpoint
# 248 of 240 and 256): field 15 -> 0x78, value 512, error 12.
run quantize 500 1 -3 0.1 --to mxfp8-e4m3 --scale-rule ceil --csv
expect_rc "e4m3 ceil --csv" 0
csv_row "e4m3 ceil: 500 does not saturate" 0 "0,0,500,1,0x80,2,0x78,512,12"
csv_row "e4m3 ceil: 1 -> 0.5 * 2" 1 "1,0,1,1,0x80,2,0x30,1,0"

echo "# text: one paragraph per block and a summary"
run quantize 500 1 -3 0.1 --to mxfp8-e4m3
expect_rc "e4m3 text" 0
out_has "text: the block's scale" "scale X = 2^0 (e8m0 0x7f)"
out_has "text: the saturated element is marked" "saturated"
# 1 of 4 saturated = 25.0%; none flushed
out_has "text: block shares" "saturated 1 of 4 (25.0%), flushed to zero 0 of 4 (0.0%)"
out_has "text: the summary" "summary: saturated 1 of 4 (25.0%)"
# storage: 8 + 8/32 = 8.25 bits; mxfp4 4 + 8/32 = 4.25; nvfp4 4 + 8/16 = 4.5; --block 8 on mxfp6: 6 + 1 = 7
out_has "text: mxfp8 storage" "storage: 8.25 bits per element (8-bit elements, an 8-bit scale per 32)"
run quantize 1 --to mxfp4
out_has "text: mxfp4 storage" "storage: 4.25 bits per element (4-bit elements, an 8-bit scale per 32)"
run quantize 1 --to nvfp4
out_has "text: nvfp4 storage" "storage: 4.5 bits per element (4-bit elements, an 8-bit scale per 16), and 32 bits of tensor scale"
run quantize 1 --to mxfp6-e2m3 --block 8
out_has "text: storage follows --block" "storage: 7 bits per element (6-bit elements, an 8-bit scale per 8)"

echo "# all-zero block, signed zero, the clamp, short last block"
# all zero: X = 2^-127, e8m0 0x00; -0 keeps its sign: e4m3 0x80
run quantize 0 -0 --to mxfp8-e4m3 --csv
expect_rc "all-zero block" 0
out_has "all-zero block: scale 0x00" "0,0,0,1,0x00,"
out_has "all-zero block: -0 is 0x80" ",0x80,-0,0"
# 2^140: 140 - 8 = 132 clamps to 127 (0xfe); 2^13 saturates to 448 (0x7e)
run quantize 2^140 --to mxfp8-e4m3
expect_rc "clamp at 127" 0
out_has "clamp at 127: scale byte" "scale X = 2^127 (e8m0 0xfe), exponent clamped to [-127, 127]"
# beyond binary64's range (see test_quant's beyond_binary64): 1e400 and 1
# give amax 1e400 (not inf) and a relative error of 1 (not 0); 1e-400 and
# 3e-400 both flush (100%) and the relative error is ||V|| / ||V|| = 1
run quantize 1e400 1 --to mxfp4
expect_rc "1e400" 0
out_has "1e400: amax from the exact value" "block 0 (elements 0..1): amax 1e+400"
out_has "1e400: relative error 1" "saturated 1 of 2 (50.0%), flushed to zero 1 of 2 (50.0%), relative error 1"
run quantize 1e-400 3e-400 --to mxfp4
out_has "1e-400: amax from the exact value" "amax 3e-400"
out_has "1e-400: all flushed, relative error 1" "summary: saturated 0 of 2 (0.0%), flushed to zero 2 of 2 (100.0%), relative error 1"
# --block 2 over 4, 1, 3: {4, 1} X = 2^(2-8) (0x79), {3} X = 2^(1-8) (0x78): 384 -> 0x7c
run quantize 4 1 3 --to mxfp8-e4m3 --block 2 --csv
expect_rc "--block 2" 0
csv_row "--block 2: short last block" 2 "2,1,3,1,0x78,0.0078125,0x7c,3,0"
csv_row "--block 2: first block" 1 "1,0,1,1,0x79,0.015625,0x68,1,0"

echo "# stdin with bad lines"
# line 2 is not a number, line 4 is inf: both reported as line N and left
# out; the rest (1, 2) is one block: X = 2^(1-8) (0x78); 2 * 128 = 256 -> 0x78.
# Values keep their input positions: 2 is line 3, index 2; indices 1 and 3
# have no row.
printf '1\nabc\n2\ninf\n' >"$tmp/in"
run_in "$tmp/in" quantize --to mxfp8-e4m3 --csv
expect_rc "stdin with bad lines" 2
err_has "stdin: line 2 named" "line 2: "
err_has "stdin: line 4 (inf) named" "line 4: 'inf': inf and nan have no encoding"
csv_row "stdin: the good values are quantized at their positions" 2 "2,0,2,1,0x78,0.0078125,0x78,2,0"
csv_row "stdin: no row for bad line 2" 1 ""
csv_row "stdin: no row for bad line 4" 3 ""
# the reviewer's case: mxfp4 over {1, bad, 2}: amax 2, X = 2^(1-2) (0x7e);
# 1 / 0.5 = 2 = 1.0 * 2^1 (field 2: 0x4) at index 0, 2 / 0.5 = 4 (field 3: 0x6)
# at index 2
printf '1\nabc\n2\n' >"$tmp/in"
run_in "$tmp/in" quantize --to mxfp4 --csv
expect_rc "mxfp4 with a bad line" 2
err_has "mxfp4 bad line: line 2 named" "line 2: 'abc'"
csv_row "mxfp4 bad line: 1 at index 0" 0 "0,0,1,1,0x7e,0.5,0x4,1,0"
csv_row "mxfp4 bad line: 2 at index 2" 2 "2,0,2,1,0x7e,0.5,0x6,2,0"
rows=$(awk 'END { print NR - 1 }' "$tmp/out")
[ "$rows" = 2 ] && ok "mxfp4 bad line: two rows" || bad "mxfp4 bad line: two rows" "got $rows"
# --block 2 over 4, x, 1, 3: the blocks are positions {0, 1} and {2, 3}, not
# {4, 1} and {3}: block 0 is {4}: X = 2^(2-8) (0x79), 4 * 64 = 256 = 2^8
# (field 15: 0x78); block 1 is {1, 3}: X = 2^(1-8) (0x78), 1 * 128 = 2^7
# (field 14: 0x70), 3 * 128 = 384 (0x7c)
printf '4\nx\n1\n3\n' >"$tmp/in"
run_in "$tmp/in" quantize --to mxfp8-e4m3 --block 2 --csv
expect_rc "--block 2 with a bad line" 2
csv_row "--block 2 bad line: block 0 is 4 alone" 0 "0,0,4,1,0x79,0.015625,0x78,4,0"
csv_row "--block 2 bad line: 1 is in block 1" 2 "2,1,1,1,0x78,0.0078125,0x70,1,0"
csv_row "--block 2 bad line: 3 is in block 1" 3 "3,1,3,1,0x78,0.0078125,0x7c,3,0"
run_in "$tmp/in" quantize --to mxfp8-e4m3 --block 2
out_has "--block 2 bad line text: block 0's amax is 4" "block 0 (elements 0..1): amax 4"
out_has "--block 2 bad line text: its shares count 1 value" "saturated 0 of 1 (0.0%)"
out_has "--block 2 bad line text: the summary counts 3" "summary: saturated 0 of 3 (0.0%)"

echo "# no values from a terminal: a usage error (exit 2), for quantize and round"
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
	for cmd in "quantize --to mxfp4" "round --to bf16"; do
		script -qec "'$MIXPREC' $cmd; echo \"rc=\$?\"" /dev/null >"$tmp/out" 2>&1 </dev/null
		out_has "$cmd on a terminal, no values: says so" "no values given"
		out_has "$cmd on a terminal, no values: exit 2" "rc=2"
	done
else
	echo "# no script(1): the terminal case is not checked"
fi

echo "# MXFP4, MXFP6 and NVFP4"
# mxfp4: amax 7 -> X = 2^(2-2) = 1 (0x7f); 7 saturates to 6 (0x7); -0.3 is
# above the midpoint 0.25: -0.5 (0x9); 0.25, the midpoint, goes to the even
# 0 (0x0); -0.1 is -0 (0x8, fp4's -0)
run quantize 7 1 -0.3 0.25 -0.1 --to mxfp4 --csv
expect_rc "mxfp4" 0
csv_row "mxfp4: 7 saturates" 0 "0,0,7,1,0x7f,1,0x7,6,1"
csv_row "mxfp4: -0.3 -> -0.5" 2 "2,0,-0.3,1,0x7f,1,0x9,-0.5,0.2"
csv_row "mxfp4: the tie 0.25 -> 0" 3 "3,0,0.25,1,0x7f,1,0x0,0,0.25"
csv_row "mxfp4: -0.1 -> -0 (0x8)" 4 "4,0,-0.1,1,0x7f,1,0x8,-0,0.1"
# mxfp6-e3m2: 30 -> X = 2^(4-4) = 1; saturates to 28 = 1.75 * 2^4 (field 7,
# fraction 11: 0x1f), two hex digits
run quantize 30 --to mxfp6-e3m2 --csv
csv_row "mxfp6-e3m2: 30 saturates to 28" 0 "0,0,30,1,0x7f,1,0x1f,28,2"
# nvfp4, --block 4, amax 2688: s_t = 2688 / 2688 = 1; block 1 {6, 1.25, 0.25,
# 5}: s_b = e4m3(6 / 6) = 1 (0x38); 1.25 ties to 1 (0x2), 5 ties to 4 (0x6)
run quantize 2688 0 0 0 6 1.25 0.25 5 --to nvfp4 --block 4 --csv
expect_rc "nvfp4" 0
csv_row "nvfp4: block 0, s_b = 448" 0 "0,0,2688,1,0x7e,448,0x7,2688,0"
csv_row "nvfp4: 1.25 ties to 1" 5 "5,1,1.25,1,0x38,1,0x2,1,0.25"
csv_row "nvfp4: 5 ties to 4" 7 "7,1,5,1,0x38,1,0x6,4,1"
# s_t = fp32(6 / 2688) = fp32(1/448): 8/7 = 1.001001...b rounds up at the
# 24th bit: 0x3b124925
run quantize 6 1 --to nvfp4
out_has "nvfp4 text: the tensor scale's pattern" "(fp32 0x3b124925)"
out_has "nvfp4 text: s_b = 448" "scale s_b = 448 (fp8-e4m3 0x7e)"
run quantize 1 --to nvfp4 --scale-rule ceil
expect_rc "nvfp4 --scale-rule" 2
err_has "nvfp4 --scale-rule: one rule" "nvfp4 has one rule"
# 1e42 / 2688 = 3.7e38 > fp32's max 3.4e38: the tensor scale overflows
run quantize 1 -1e42 --to nvfp4
expect_rc "nvfp4 tensor scale overflow" 2
err_has "nvfp4 overflow: names the value" "value 2: '-1e42': nvfp4: the tensor scale"

echo "# SR: seeded and reproducible"
# 1.0375 in blocks of its own amax: 265.6 between 256 and 288 -> 1 or 1.125
awk 'BEGIN { for (i = 0; i < 256; i++) print "1.0375" }' >"$tmp/sr"
run_in "$tmp/sr" quantize --to mxfp8-e4m3 --mode sr --seed 5 --csv
expect_rc "sr" 0
cp "$tmp/out" "$tmp/sr1"
res=$(awk -F, 'NR > 1 && $8 != "1" && $8 != "1.125" { print $1 ": " $8 }' "$tmp/sr1")
[ -z "$res" ] && ok "sr: every element is a neighbour" || bad "sr: every element is a neighbour" "$res"
run_in "$tmp/sr" quantize --to mxfp8-e4m3 --mode sr --seed 5 --csv
cmp -s "$tmp/out" "$tmp/sr1" && ok "sr: the same seed, the same bits" || bad "sr: the same seed, the same bits"
run_in "$tmp/sr" quantize --to mxfp8-e4m3 --mode sr --seed 6 --csv
cmp -s "$tmp/out" "$tmp/sr1" && bad "sr: another seed, other bits" || ok "sr: another seed, other bits"

# the amax is a magnitude even when the largest element is negative: |-3| = 3,
# printed short (the exact value is a binary64)
run quantize --to mxfp4 -- -3 1 2
expect_rc "a negative largest element" 0
out_has "a negative largest element: amax 3" "block 0 (elements 0..2): amax 3"

echo "# --rht: the 16-point Hadamard transform, exactly"
# e_2 times 4: row 2 of S H16 (signs 0xa53c: sign 2 is -) is -(-1)^(bit 1 of j),
# so the rotated inputs are -1 where bit 1 of j is clear and +1 where set
run quantize 0 0 4 0 0 0 0 0 0 0 0 0 0 0 0 0 --to nvfp4 --rht --csv
expect_rc "rht" 0
res=$(awk -F, 'NR > 1 { want = (int($1 / 2) % 2) ? 1 : -1; if ($3 != want) print $1 ": " $3 " not " want }' "$tmp/out")
[ -z "$res" ] && ok "rht: the rotated inputs are row 2 of S H16" || bad "rht: the rotated inputs are row 2 of S H16" "$res"
# values past the last full 16 stay as they are
run quantize 4 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 3 --to nvfp4 --rht --csv
res=$(awk -F, 'NR > 1 && NR < 18 && $3 != 1 { print $1 ": " $3 } NR == 18 && $3 != 3 { print "16: " $3 }' "$tmp/out")
[ -z "$res" ] && ok "rht: e_0 rotates to 1s, the 17th value stays" || bad "rht: e_0 rotates to 1s, the 17th value stays" "$res"
run quantize 1 x 2 --to nvfp4 --rht
expect_rc "rht with a bad value" 2
err_has "rht with a bad value" "--rht: every value must be good"

echo "# --random: a generated tensor, with and without the RHT"
# cell COL ROW: the word under COL (a header word) in the row whose first word is ROW
cell() {
	awk -v col="$1" -v row="$2" '
		$1 == "format" { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		c && $1 == row { print $c; exit }' "$tmp/out"
}
# table_rows [FILE]: the lines below the table's header
table_rows() {
	awk '$1 == "format" { t = 1; next } t' "${1:-$tmp/out}"
}
run quantize --to nvfp4 --random 1024 --outliers 8:30 --compare-rht --seed 3
expect_rc "random" 0
same "random: the plain row" "$(cell transform nvfp4)" plain
same "random: the rht row" "$(cell transform nvfp4+rht)" rht
out_has "random: the header says where the outliers are" "8 outliers of +-30 in 8 of the 64 blocks of 16 (one each)"
first=$(cat "$tmp/out")
run quantize --to nvfp4 --random 1024 --outliers 8:30 --rht --seed 3
same "random --rht: only the rht row" "$(table_rows | wc -l | tr -d ' ')" 1
same "random --rht: the rht row" "$(cell transform nvfp4+rht)" rht
run quantize --to nvfp4 --random 1024 --seed 3
same "random without outliers: no outlier error" "$(cell outliers nvfp4)" "-"
# the same seed, the same table; every SIMD path gives it (the cast is the
# bulk kernels', the sums fixed-order binary64)
for path in portable avx2 avx512; do
	MIXPREC_SIMD=$path "$MIXPREC" quantize --to nvfp4 --random 1024 --outliers 8:30 --compare-rht --seed 3 >"$tmp/p" 2>&1
	same "random: the same table under MIXPREC_SIMD=$path" "$(cat "$tmp/p")" "$first"
done
run quantize --to nvfp4 --random 1024 --outliers 8:30 --compare-rht --seed 4
[ "$(cat "$tmp/out")" != "$first" ] && ok "random: another seed, another table" || bad "random: another seed, another table" "same output"
run quantize --to nvfp4 --random 512 --mode sr --draws 16 --compare-rht --dist laplace
expect_rc "random sr draws" 0
out_has "random sr draws: the SR columns" "sr_var    sr_bias   sr_noise"

echo "# --random over several formats: a row each, the same values"
run quantize --to mxfp8-e4m3,mxfp4,nvfp4 --random 1024 --seed 3
expect_rc "random formats" 0
err_empty "random formats"
out_has "random formats: the header names them" "mxfp8-e4m3, mxfp4, nvfp4 on 1024 generated values"
out_has "random formats: the blocks and the rule" "blocks: mxfp8-e4m3 32, mxfp4 32, nvfp4 16; MX scale rule ocp"
# bits by hand: an 8-bit scale per 32 adds 0.25 to 8 and to 4; nvfp4 an
# 8-bit scale per 16 (0.5) and 32 bits over 1024 values (1/32 = 0.03125)
same "random formats: mxfp8 bits 8 + 8/32" "$(cell bits mxfp8-e4m3)" 8.25
same "random formats: mxfp4 bits 4 + 8/32" "$(cell bits mxfp4)" 4.25
same "random formats: nvfp4 bits 4 + 8/16 + 32/1024" "$(cell bits nvfp4)" 4.53125
same "random formats: MX has no tensor scale" "$(cell tensor_scale mxfp4)" "-"
# the same generated values for each: a format's row alone is its row in the list
for f in mxfp8-e4m3 mxfp4 nvfp4; do
	want=$(table_rows | grep "^$f ")
	"$MIXPREC" quantize --to "$f" --random 1024 --seed 3 >"$tmp/one"
	got=$(table_rows "$tmp/one")
	same "random formats: $f alone gives its row in the list" "$got" "$want"
done
# two more fraction bits, a quarter of the spacing: e4m3's error well below e2m1's
awk -v a="$(cell error mxfp8-e4m3)" -v b="$(cell error mxfp4)" 'BEGIN { exit !(a * 2 < b) }' &&
	ok "random formats: mxfp8-e4m3 below mxfp4" || bad "random formats: mxfp8-e4m3 below mxfp4" "$(cat "$tmp/out")"
# nvfp4 alone over 16 values: 4 + 8/16 + 32/16 = 6.5; mxfp4 --block 16: 4 + 8/16
run quantize --to nvfp4 --random 16
same "random: nvfp4 bits over 16 values" "$(cell bits nvfp4)" 6.5
run quantize --to mxfp4,nvfp4 --random 64 --block 16
same "random --block 16: mxfp4 bits 4 + 8/16" "$(cell bits mxfp4)" 4.5
same "random --block 16: nvfp4 bits 4 + 8/16 + 32/64" "$(cell bits nvfp4)" 5
run quantize --to nvfp4 --random 64 --block 32
same "random nvfp4 --block 32: 4 + 8/32 + 32/64" "$(cell bits nvfp4)" 4.75
# the ceil rule never clips an element: X = 2^ceil(log2(amax / max_elem))
run quantize --to mxfp4,mxfp6-e3m2,nvfp4 --random 4096 --outliers 20:9 --scale-rule ceil --seed 2
expect_rc "random ceil" 0
out_has "random ceil: the rule in the header" "MX scale rule ceil"
same "random ceil: mxfp4 saturates nothing" "$(cell saturated mxfp4)" "0.000%"
same "random ceil: mxfp6-e3m2 saturates nothing" "$(cell saturated mxfp6-e3m2)" "0.000%"
# blocks of 32 take the outliers: 20 of the 4096 / 32 = 128
out_has "random formats: outliers one per block of 32" "20 outliers of +-9 in 20 of the 128 blocks of 32 (one each)"
run quantize --to mxfp4 --random 4096 --outliers 20:9 --seed 2
case "$(cell saturated mxfp4)" in 0.000%) bad "random ocp: mxfp4 clips some" "$(cat "$tmp/out")" ;; *) ok "random ocp: mxfp4 clips some" ;; esac
# every format at once, SR over draws with outliers: the same on every SIMD path
all=mxfp8-e4m3,mxfp8-e5m2,mxfp6-e3m2,mxfp6-e2m3,mxfp4,nvfp4
MIXPREC_SIMD=portable "$MIXPREC" quantize --to $all --random 4096 --outliers 8:30 --mode sr --draws 3 --seed 5 >"$tmp/q0" 2>&1
rows=$(table_rows "$tmp/q0" | wc -l | tr -d ' ')
same "random all formats: six rows" "$rows" 6
for path in avx2 avx512; do
	MIXPREC_SIMD=$path "$MIXPREC" quantize --to $all --random 4096 --outliers 8:30 --mode sr --draws 3 --seed 5 >"$tmp/p" 2>&1
	same "random all formats: the same table under MIXPREC_SIMD=$path" "$(cat "$tmp/p")" "$(cat "$tmp/q0")"
done

echo "# --random: errors name the bad argument"
run quantize --to nvfp4 --random 100
expect_rc "random 100" 2
err_has "random 100: not a multiple of 16" "--random: 100 is not a multiple of 16"
run quantize --to mxfp4,nvfp4 --random 48
expect_rc "random 48 for mxfp4" 2
err_has "random 48 for mxfp4: blocks of 32" "--random: 48 is not a multiple of 32 in 32..16777216 (the blocks: mxfp4 32, nvfp4 16)"
run quantize 1 2 --to nvfp4 --random 32
err_has "random with a VALUE" "--random: takes no VALUE (got '1')"
run quantize --to mxfp4 --random 1024 --rht
expect_rc "random mxfp4 --rht" 2
err_has "random mxfp4 --rht: nvfp4 only" "--rht: nvfp4 only (the trainer's RHT precedes NVFP4's cast; got mxfp4)"
run quantize --to mxfp4,nvfp4 --random 1024 --compare-rht
expect_rc "random formats --compare-rht" 2
err_has "random formats --compare-rht: nvfp4 only" "--compare-rht: nvfp4 only (the trainer's RHT precedes NVFP4's cast; got mxfp4)"
run quantize --to nvfp4 --random 64 --block 32 --compare-rht
expect_rc "random --compare-rht --block 32" 2
err_has "random --compare-rht --block 32" "--block: --compare-rht casts nvfp4's blocks of 16, one RHT group each (got 32)"
run quantize --to mxfp4,mxfp4 --random 32
err_has "random: a format twice" "--to: mxfp4 is listed twice in 'mxfp4,mxfp4'"
run quantize --to mxfp4,fp8 --random 32
err_has "random: an unknown format in the list" "--to: unknown block format 'fp8' in 'mxfp4,fp8' (known: mxfp8-e4m3"
run quantize --to mxfp4, --random 32
err_has "random: an empty name in the list" "--to: unknown block format '' in 'mxfp4,'"
run quantize 1 2 --to mxfp4,nvfp4
expect_rc "a list without --random" 2
err_has "a list without --random" "--to: a list of formats ('mxfp4,nvfp4') only with --random N"
run quantize --to nvfp4 --random 32 --scale-rule ceil
expect_rc "random nvfp4 --scale-rule" 2
err_has "random nvfp4 --scale-rule: one rule" "--scale-rule: nvfp4 has one rule"
run quantize --to mxfp4 --random 32 --scale-rule round
err_has "random --scale-rule round" "--scale-rule: unknown rule 'round'"
run quantize --to nvfp4 --random 32 --csv
err_has "random with --csv" "--csv: not with --random"
run quantize --to nvfp4 --random 32 --dist cauchy
err_has "random --dist cauchy" "--dist: unknown distribution 'cauchy'"
run quantize --to nvfp4 --random 32 --outliers 5
err_has "random --outliers 5" "--outliers: '5' is not K:V"
run quantize --to nvfp4 --random 32 --outliers 3:30
expect_rc "random: 3 outliers in 2 blocks" 2
err_has "random: 3 outliers in 2 blocks" "--outliers: 3:30: more outliers than blocks"
run quantize --to mxfp4,nvfp4 --random 64 --outliers 3:30
err_has "random: 3 outliers in 2 blocks of 32" "--outliers: 3:30: more outliers than blocks (one each with --outliers-in blocks) (2)"
run quantize --to nvfp4 --random 32 --outliers 3:30 --outliers-in tensor
expect_rc "random: 3 outliers anywhere in 32" 0
run quantize --to nvfp4 --random 32 --outliers 2:-1
err_has "random --outliers 2:-1" "--outliers (V): -1 is out of range"
run quantize --to nvfp4 --random 32 --outliers-in rows
err_has "random --outliers-in rows" "--outliers-in: unknown placement 'rows'"
run quantize --to nvfp4 --random 32 --draws 4
err_has "random --draws without sr" "--draws: 4 draws need --mode sr"
run quantize 1 2 --to nvfp4 --dist gauss
err_has "--dist without --random" "--dist: only with --random N"
run quantize 1 2 --to nvfp4 --compare-rht
err_has "--compare-rht without --random" "--compare-rht: only with --random N"

echo "# --from-model: a row of a saved model's weight"
# A tiny checkpoint (2 steps, so the weights are trained ones, not only the
# initial draw). The oracle reads the file itself, with od and awk: the
# 8-byte little-endian header length N, the JSON header's entry for
# wte.weight (its shape [V, C] and its data_offsets [A, B]), then row R's C
# fp32 values at byte 8 + N + A + 4 R C, each turned from its four
# little-endian bytes into an exact C99 hex float (0x1.FFFFFFpE; subnormals
# 0x0.FFFFFFp-126), which `quantize` parses exactly. Quantizing those typed
# values must give every column of the --from-model CSV but input.
model=$tmp/m.safetensors
"$MIXPREC" train --preset tiny --steps 2 --save "$model" >/dev/null 2>&1
hlen=$(od -A n -t u1 -N 8 "$model" | awk '{ v = 0; for (i = NF; i >= 1; i--) v = v * 256 + $i; print v }')
entry=$(tail -c +9 "$model" | head -c "$hlen" | grep -o '"wte\.weight":{[^}]*}')
V=$(printf '%s\n' "$entry" | sed -n 's/.*"shape":\[\([0-9]*\),\([0-9]*\)\].*/\1/p')
C=$(printf '%s\n' "$entry" | sed -n 's/.*"shape":\[\([0-9]*\),\([0-9]*\)\].*/\2/p')
A=$(printf '%s\n' "$entry" | sed -n 's/.*"data_offsets":\[\([0-9]*\),.*/\1/p')
# row_words R: row R of wte.weight as 32-bit words, one per line, in hex
row_words() {
	od -A n -t u1 -j $((8 + hlen + A + 4 * $1 * C)) -N $((4 * C)) "$model" |
		awk '{ for (i = 1; i <= NF; i++) b[n++] = $i }
		     END { for (k = 0; k < n; k += 4) printf "%08x\n", ((b[k+3] * 256 + b[k+2]) * 256 + b[k+1]) * 256 + b[k] }'
}
# hex_floats: the words of stdin as exact hex floats
hex_floats() {
	awk '{ w = 0; for (i = 1; i <= 8; i++) w = w * 16 + index("0123456789abcdef", substr($1, i, 1)) - 1
	       s = w >= 2^31 ? "-" : ""; if (w >= 2^31) w -= 2^31
	       e = int(w / 2^23); f = (w - e * 2^23) * 2
	       if (e == 0) printf "%s0x0.%06xp-126\n", s, f; else printf "%s0x1.%06xp%d\n", s, f, e - 127 }'
}
if [ -s "$model" ] && [ -n "$V" ] && [ -n "$C" ] && [ -n "$A" ]; then
	ok "--from-model: train --save wrote a checkpoint with wte.weight [$V, $C]"
else
	bad "--from-model: train --save wrote a checkpoint with wte.weight" "entry: $entry"
fi
R=3
row_words $R >"$tmp/words"
hex_floats <"$tmp/words" >"$tmp/hex"
for fmt in mxfp4 mxfp8-e4m3 nvfp4; do
	run quantize --to "$fmt" --from-model "$model" --tensor wte.weight --row $R --csv
	expect_rc "--from-model $fmt --csv" 0
	cut -d, -f1,2,4- "$tmp/out" >"$tmp/model.csv"
	# shellcheck disable=SC2046
	"$MIXPREC" quantize --to "$fmt" --csv $(cat "$tmp/hex") >"$tmp/typed-full.csv" 2>"$tmp/err"
	cut -d, -f1,2,4- "$tmp/typed-full.csv" >"$tmp/typed.csv"
	rows=$(($(wc -l <"$tmp/model.csv") - 1))
	if [ "$rows" -eq "$C" ] && cmp -s "$tmp/model.csv" "$tmp/typed.csv"; then
		ok "--from-model $fmt: row $R's $C rows equal quantize of the row's values read from the file"
	else
		bad "--from-model $fmt: row $R equals quantize of the row's values read from the file" \
			"$rows rows; $(diff "$tmp/model.csv" "$tmp/typed.csv" | head -n 4)"
	fi
done
# The input column reads back as the stored value: round's fp32 bits of each
# input text are the file's words.
run quantize --to mxfp4 --from-model "$model" --tensor wte.weight --row $R --csv
# shellcheck disable=SC2046
"$MIXPREC" round --to fp32 --csv $(awk -F, 'NR > 1 { print $3 }' "$tmp/out") |
	awk -F, 'NR > 1 { print substr($4, 3) }' >"$tmp/inbits"
if cmp -s "$tmp/inbits" "$tmp/words"; then
	ok "--from-model: each input text reads back as the stored fp32 value"
else
	bad "--from-model: each input text reads back as the stored fp32 value" "$(diff "$tmp/inbits" "$tmp/words" | head -n 4)"
fi
# One block's scale by hand: mxfp8-e4m3 under the ocp rule is X =
# 2^(floor(log2 amax) - 8), e8m0 byte floor(log2 amax) - 8 + 127; for a
# normal amax floor(log2 amax) is its exponent field E - 127, so the byte is
# E - 8. The amax of block 0 (the first 32 values) is the largest magnitude,
# whose word (sign bit cleared) is the largest.
E=$(head -n 32 "$tmp/words" | awk '{ w = 0; for (i = 1; i <= 8; i++) w = w * 16 + index("0123456789abcdef", substr($1, i, 1)) - 1
	if (w >= 2^31) w -= 2^31; if (w > m) m = w } END { print int(m / 2^23) }')
want=$(printf '0x%02x' $((E - 8)))
run quantize --to mxfp8-e4m3 --from-model "$model" --tensor wte.weight --row $R --csv
got=$(awk -F, 'NR == 2 { print $5 }' "$tmp/out")
same "--from-model mxfp8-e4m3: block 0's e8m0 scale is its amax's exponent field - 8 ($want)" "$want" "$got"
run quantize --to mxfp4 --from-model "$model" --tensor wte.weight --row $R
expect_rc "--from-model text" 0
out_line "--from-model text: a line names the file, the tensor, its dtype and shape, and the row" \
	"$model: wte.weight F32 [$V, $C], row $R of $V ($C values)"
out_has "--from-model text: then the usual paragraphs" "mxfp4 (OCP MXFP4"
# A BF16 checkpoint (bf16-pure keeps its weights only in bf16): each stored
# 2-byte element widens to the fp32 word with those 16 bits on top, exactly.
bmodel=$tmp/b.safetensors
"$MIXPREC" train --preset tiny --policy bf16-pure --steps 2 --save "$bmodel" >/dev/null 2>&1
bhlen=$(od -A n -t u1 -N 8 "$bmodel" | awk '{ v = 0; for (i = NF; i >= 1; i--) v = v * 256 + $i; print v }')
bentry=$(tail -c +9 "$bmodel" | head -c "$bhlen" | grep -o '"wte\.weight":{[^}]*}')
bA=$(printf '%s\n' "$bentry" | sed -n 's/.*"data_offsets":\[\([0-9]*\),.*/\1/p')
case $bentry in
*'"BF16"'*) ok "--from-model: bf16-pure saves wte.weight as BF16" ;;
*) bad "--from-model: bf16-pure saves wte.weight as BF16" "entry: $bentry" ;;
esac
od -A n -t u1 -j $((8 + bhlen + bA + 2 * R * C)) -N $((2 * C)) "$bmodel" |
	awk '{ for (i = 1; i <= NF; i++) b[n++] = $i } END { for (k = 0; k < n; k += 2) printf "%08x\n", (b[k+1] * 256 + b[k]) * 65536 }' |
	hex_floats >"$tmp/bhex"
run quantize --to mxfp4 --from-model "$bmodel" --tensor wte.weight --row $R --csv
cut -d, -f1,2,4- "$tmp/out" >"$tmp/model.csv"
# shellcheck disable=SC2046
"$MIXPREC" quantize --to mxfp4 --csv $(cat "$tmp/bhex") 2>"$tmp/err" | cut -d, -f1,2,4- >"$tmp/typed.csv"
if [ "$(wc -l <"$tmp/model.csv")" -eq $((C + 1)) ] && cmp -s "$tmp/model.csv" "$tmp/typed.csv"; then
	ok "--from-model BF16: row $R equals quantize of the row's bf16 values widened"
else
	bad "--from-model BF16: row $R equals quantize of the row's bf16 values widened" \
		"$(diff "$tmp/model.csv" "$tmp/typed.csv" | head -n 4)"
fi
# a vector is one row: ln_f.bias [C], row 0
run quantize --to mxfp4 --from-model "$model" --tensor ln_f.bias --csv
expect_rc "--from-model ln_f.bias (a vector, --row left at 0)" 0
same "--from-model ln_f.bias: its $C values" "$C" "$(($(wc -l <"$tmp/out") - 1))"

echo "# --from-model errors"
run quantize --to mxfp4 --from-model "$model" --tensor wte --row 1
usage_error "--tensor unknown" "--tensor: 'wte' is not a weight of $model" "known: wte.weight, wpe.weight" \
	"h.N.attn.c_attn.weight" "ln_f.bias"
run quantize --to mxfp4 --from-model "$model" --tensor wte.weight --row $V
usage_error "--row past the last" "--row: $V is out of range: wte.weight [$V, $C] has rows 0..$((V - 1))"
run quantize --to mxfp4 --from-model "$model" --tensor ln_f.bias --row 1
usage_error "--row 1 of a vector" "--row: 1 is out of range: ln_f.bias [$C] is a vector, one row (0)"
run quantize --to mxfp4 --from-model "$model" --tensor wte.weight --row 1.5
usage_error "--row not whole" "--row: 1.5 is not a whole number"
printf 'abcde' >"$tmp/short.safetensors"
run quantize --to mxfp4 --from-model "$tmp/short.safetensors" --tensor wte.weight
usage_error "--from-model not a checkpoint" "--from-model: $tmp/short.safetensors: truncated"
run quantize --to mxfp4 --from-model "$tmp/absent.safetensors" --tensor wte.weight
expect_rc "--from-model absent file" 3
err_has "--from-model absent file: names it" "--from-model: $tmp/absent.safetensors"
run quantize --to mxfp4 --tensor wte.weight
usage_error "--tensor without --from-model" "--tensor: only with --from-model FILE"
run quantize --to mxfp4 --row 2
usage_error "--row without --from-model" "--row: only with --from-model FILE"
run quantize --to mxfp4 --from-model "$model"
usage_error "--from-model without --tensor" "--from-model: --tensor NAME is required"
run quantize --to mxfp4 --from-model "$model" --tensor wte.weight 1 2
usage_error "--from-model with VALUEs" "value 1: '1': no VALUEs with --from-model"
run quantize --to mxfp4 --from-model "$model" --tensor wte.weight --random 64
usage_error "--from-model with --random" "--from-model: not with --random"
run quantize --help
out_has "--help documents --from-model" "--from-model FILE"
out_has "--help documents --tensor" "--tensor NAME"
out_has "--help documents --row" "--row I"

finish
