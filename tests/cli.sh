#!/bin/sh
# CLI contract tests for mixprec (doc/DESIGN.md "CLI contract"): outputs, messages
# and exit statuses of formats, bits and round (and --help of every command).
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

make_tmp cli

# run ARG...: runs the program with stdin from /dev/null; sets $rc, $tmp/out, $tmp/err.
run() {
	"$MIXPREC" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# run_in FILE ARG...: the same with stdin from FILE.
run_in() {
	in=$1
	shift
	"$MIXPREC" "$@" <"$in" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

show_io() {
	echo "     stdout: $(head -c 600 "$tmp/out" | head -n 8)"
	echo "     stderr: $(head -c 600 "$tmp/err" | head -n 4)"
}

# expect_rc NAME STATUS
expect_rc() {
	if [ "$rc" -eq "$2" ]; then
		ok "$1: exit $2"
	else
		bad "$1: exit $2" "got exit $rc"
		show_io
	fi
}

# out_line NAME LINE: stdout has LINE as a whole line.
out_line() {
	if grep -Fqx -e "$2" "$tmp/out"; then
		ok "$1"
	else
		bad "$1" "no stdout line: $2"
		show_io
	fi
}

# out_has NAME TEXT: stdout contains TEXT.
out_has() {
	if grep -Fq -e "$2" "$tmp/out"; then
		ok "$1"
	else
		bad "$1" "stdout lacks: $2"
		show_io
	fi
}

# out_lacks NAME TEXT
out_lacks() {
	if grep -Fq -e "$2" "$tmp/out"; then
		bad "$1" "stdout has: $2"
		show_io
	else
		ok "$1"
	fi
}

# err_has NAME TEXT: stderr contains TEXT.
err_has() {
	if grep -Fq -e "$2" "$tmp/err"; then
		ok "$1"
	else
		bad "$1" "stderr lacks: $2"
		show_io
	fi
}

out_empty() {
	if [ -s "$tmp/out" ]; then
		bad "$1: nothing on stdout"
		show_io
	else
		ok "$1: nothing on stdout"
	fi
}

err_empty() {
	if [ -s "$tmp/err" ]; then
		bad "$1: nothing on stderr"
		show_io
	else
		ok "$1: nothing on stderr"
	fi
}

# out_lines NAME N: stdout has exactly N lines.
out_lines() {
	n=$(wc -l <"$tmp/out" | tr -d ' ')
	if [ "$n" -eq "$2" ]; then
		ok "$1: $2 lines"
	else
		bad "$1: $2 lines" "got $n lines"
		show_io
	fi
}

# usage_error NAME TEXT... ARGS: a usage error: exit 2, stdout empty, stderr
# starts with "mixprec" and names every TEXT. Call after run.
usage_error() {
	name=$1
	shift
	expect_rc "$name" 2
	out_empty "$name"
	for t in "$@"; do
		err_has "$name: stderr names $t" "$t"
	done
}

# csv_bits NAME INPUT FORMAT BITS: the --csv row for INPUT,FORMAT has BITS.
csv_bits() {
	got=$(awk -F, -v i="$2" -v f="$3" '$1 "" == i "" && $2 == f { print $4 }' "$tmp/out")
	if [ "$got" = "$4" ]; then
		ok "$1: $2 as $3 is $4"
	else
		bad "$1: $2 as $3 is $4" "got '$got'"
		show_io
	fi
}

# csv_value NAME INPUT FORMAT VALUE: the value field, compared as text.
csv_value() {
	got=$(awk -F, -v i="$2" -v f="$3" '$1 "" == i "" && $2 == f { print $5 }' "$tmp/out")
	if [ "$got" = "$4" ]; then
		ok "$1: $2 as $3 has value $4"
	else
		bad "$1: $2 as $3 has value $4" "got '$got'"
		show_io
	fi
}

# Decoding a bit pattern in awk, from the format definition (exponent bits E,
# fraction bits M, bias B; e4m3 has no inf and only S.1111.111 is NaN).
# A round --csv row is consistent when its value field equals the decoded bits.
DECODE_AWK='
function hexval(s,   i, c, v) {
	s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		v = v * 16 + c
	}
	return v
}
function spec(name) {
	if (name == "fp32")     { E = 8; M = 23; B = 127; INF = 1; return }
	if (name == "tf32")     { E = 8; M = 10; B = 127; INF = 1; return }
	if (name == "fp16")     { E = 5; M = 10; B = 15;  INF = 1; return }
	if (name == "bf16")     { E = 8; M = 7;  B = 127; INF = 1; return }
	if (name == "fp8-e4m3") { E = 4; M = 3;  B = 7;   INF = 0; return }
	if (name == "fp8-e5m2") { E = 5; M = 2;  B = 15;  INF = 1; return }
	E = -1
}
# value of pattern v in the format set by spec(); "inf", "-inf", "nan" as text
function decode(v,   s, e, f, emax, x) {
	s = int(v / 2^(E + M)); e = int(v / 2^M) % 2^E; f = v % 2^M
	emax = 2^E - 1
	if (INF && e == emax) return f ? "nan" : (s ? "-inf" : "inf")
	if (!INF && e == emax && f == 2^M - 1) return "nan"
	if (e == 0) x = f * 2^(1 - B - M)
	else x = (2^M + f) * 2^(e - B - M)
	return s ? -x : x
}
'

# csv_consistent NAME: every row of round --csv has value == decode(bits) and
# abs_error == |value - input| (inputs plain decimals; to 1e-9 relative plus
# the binary64 reading error of the input).
csv_consistent() {
	res=$(awk -F, "$DECODE_AWK"'
	NR == 1 { next }
	{
		spec($2)
		if (E < 0) { print "unknown format " $2; bad++; next }
		d = decode(hexval($4))
		if (d == "nan" || d == "inf" || d == "-inf") {
			if ($5 != d) { print $0 ": value should be " d; bad++ }
			next
		}
		if ($5 + 0 != d) { printf "%s: bits decode to %.17g\n", $0, d; bad++ }
		if ($1 ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) {
			# the input read as binary64 is off by up to 2^-53 relative
			ae = $1 - d; if (ae < 0) ae = -ae
			tol = 1e-9 * ae + 2^-52 * ($1 < 0 ? -$1 : $1)
			if ($6 - ae > tol || ae - $6 > tol) {
				printf "%s: abs_error should be %.10g\n", $0, ae; bad++
			}
		}
	}
	END { if (NR < 2) print "no rows" }' "$tmp/out")
	if [ -z "$res" ]; then
		ok "$1: values match their bits, errors match |value - input|"
	else
		bad "$1: values match their bits, errors match |value - input|" "$res"
	fi
}

# ---------------------------------------------------------------------------
echo "# global options"

run --version
expect_rc "--version" 0
if grep -Eqx 'mixprec [0-9]+\.[0-9]+(\.[0-9]+)?([-.+~][A-Za-z0-9.]*)?' "$tmp/out"; then
	ok "--version prints 'mixprec X.Y.Z'"
else
	bad "--version prints 'mixprec X.Y.Z'"
	show_io
fi
cp "$tmp/out" "$tmp/version"
run -V
if cmp -s "$tmp/out" "$tmp/version"; then ok "-V is --version"; else bad "-V is --version"; show_io; fi

run --help
expect_rc "--help" 0
for w in formats bits round bench --help --version "Exit status"; do
	out_has "--help mentions $w" "$w"
done
err_empty "--help"

run formats --help
expect_rc "formats --help" 0
out_has "formats --help mentions --csv" "--csv"
out_has "formats --help mentions --help" "--help"

run bits --help
expect_rc "bits --help" 0
for o in --format --raw --mode --csv --help; do
	out_has "bits --help mentions $o" "$o"
done

run round --help
expect_rc "round --help" 0
for o in --to --mode --seed --saturate --csv --help rne rna rtz up down sr; do
	out_has "round --help mentions $o" "$o"
done

run bench --help
expect_rc "bench --help" 0
for o in --threads --mib --simd --help; do
	out_has "bench --help mentions $o" "$o"
done

run frobnicate
usage_error "unknown command 'frobnicate'" "'frobnicate'"
run round 1 --frob
usage_error "round: unknown option --frob" "--frob"
run formats --frob
usage_error "formats: unknown option --frob" "--frob"
run bits 1 --frob
usage_error "bits: unknown option --frob" "--frob"
run round 1 --to
usage_error "round: --to without a value" "--to"
run formats extra
usage_error "formats: unexpected argument" "'extra'"

# No command and stdout not a terminal (a file here): a clear error.
run
expect_rc "no command, stdout not a terminal" 2
out_empty "no command, stdout not a terminal"
if [ -s "$tmp/err" ]; then ok "no command: message on stderr"; else bad "no command: message on stderr"; fi

# ---------------------------------------------------------------------------
echo "# formats"

run formats --csv
expect_rc "formats --csv" 0
err_empty "formats --csv"
if [ "$(head -n 1 "$tmp/out")" = "name,bits,exponent_bits,fraction_bits,bias,max,min_normal,min_subnormal,epsilon,decimal_digits,has_inf" ]; then
	ok "formats --csv: contract header"
else
	bad "formats --csv: contract header" "got: $(head -n 1 "$tmp/out")"
fi
out_lines "formats --csv: header + 12 formats" 13
# Every row read back against the definition: E exponent bits, M fraction
# bits, bias 2^(E-1)-1, max (2 - 2^-M) 2^(2^E - 2 - bias) (e4m3: no inf, only
# S.1111.111 is NaN, so max = 1.75 * 2^(15 - 7) = 448), min normal 2^(1-bias),
# min subnormal 2^(1-bias-M), epsilon 2^-M, digits (M+1) log10 2.
res=$(awk -F, "$DECODE_AWK"'
NR == 1 { next }
{
	seen[$1] = 1
	spec($1)
	# the formats below 8 bits, FNUZ and e8m0 have other rules: tests/cli-formats.sh
	if (E < 0 && $1 ~ /^(fp6-e3m2|fp6-e2m3|fp4-e2m1|fp8-e4m3fnuz|fp8-e5m2fnuz|e8m0)$/) next
	if (E < 0) { print "unknown format " $1; next }
	if ($2 != 1 + E + M) print $1 ": bits " $2 " != " 1 + E + M
	if ($3 != E) print $1 ": exponent_bits " $3 " != " E
	if ($4 != M) print $1 ": fraction_bits " $4 " != " M
	if ($5 != 2^(E - 1) - 1 || $5 != B) print $1 ": bias " $5 " != " B
	max = INF ? (2 - 2^-M) * 2^(2^E - 2 - B) : (2 - 2^(1 - M)) * 2^(2^E - 1 - B)
	if ($6 + 0 != max) printf "%s: max %s != %.17g\n", $1, $6, max
	if ($7 + 0 != 2^(1 - B)) printf "%s: min_normal %s != %.17g\n", $1, $7, 2^(1 - B)
	if ($8 + 0 != 2^(1 - B - M)) printf "%s: min_subnormal %s != %.17g\n", $1, $8, 2^(1 - B - M)
	if ($9 + 0 != 2^-M) printf "%s: epsilon %s != %.17g\n", $1, $9, 2^-M
	dd = sprintf("%.2f", (M + 1) * log(2) / log(10))
	if ($10 != dd) print $1 ": decimal_digits " $10 " != " dd
	if ($11 != (INF ? "yes" : "no")) print $1 ": has_inf " $11
}
END {
	n = split("fp32 tf32 fp16 bf16 fp8-e4m3 fp8-e5m2", names, " ")
	for (i = 1; i <= n; i++) if (!(names[i] in seen)) print "missing format " names[i]
}' "$tmp/out")
if [ -z "$res" ]; then
	ok "formats --csv: every number matches the format definitions"
else
	bad "formats --csv: every number matches the format definitions" "$res"
fi
# The brief's literal values: fp16 max 65504 = (2 - 2^-10) 2^15, min normal
# 2^-14 = 6.103515625e-05, e4m3 max 448 without inf, e5m2 max 1.75 * 2^15 =
# 57344, bf16 epsilon 2^-7 = 0.0078125.
field() { awk -F, -v n="$1" -v c="$2" '$1 == n { print $c }' "$tmp/out"; }
[ "$(field fp16 6)" = 65504 ] && ok "fp16 max is 65504" || bad "fp16 max is 65504" "got $(field fp16 6)"
[ "$(field fp16 7)" = 6.103515625e-05 ] && ok "fp16 min_normal is 6.103515625e-05" || bad "fp16 min_normal is 6.103515625e-05" "got $(field fp16 7)"
[ "$(field fp8-e4m3 6),$(field fp8-e4m3 11)" = 448,no ] && ok "fp8-e4m3 max 448, has_inf no" || bad "fp8-e4m3 max 448, has_inf no" "got $(field fp8-e4m3 6),$(field fp8-e4m3 11)"
[ "$(field fp8-e5m2 6)" = 57344 ] && ok "fp8-e5m2 max is 57344" || bad "fp8-e5m2 max is 57344" "got $(field fp8-e5m2 6)"
[ "$(field bf16 9)" = 0.0078125 ] && ok "bf16 epsilon is 0.0078125" || bad "bf16 epsilon is 0.0078125" "got $(field bf16 9)"

run formats
expect_rc "formats (table)" 0
out_has "formats table: fp16 max 65504" "65504"
out_has "formats table: fp8-e4m3 row" "fp8-e4m3"

# ---------------------------------------------------------------------------
echo "# bits"

# 600 = 1.171875 * 2^9: exponent field 127 + 9 = 136 = 10001000, fraction
# 0.171875 * 128 = 22 = 0010110; 0 10001000 0010110 = 0100 0100 0001 0110 =
# 0x4416. Spacing 2^(9-7) = 4, neighbours 596 (0x4415) and 604 (0x4417).
run bits 600 --format bf16
expect_rc "bits 600 --format bf16" 0
out_has "bits 600 bf16: bits" "0x4416 = 0 10001000 0010110"
out_has "bits 600 bf16: exponent 2^9" "(2^9)"
out_line "bits 600 bf16: class normal" "  class      normal"
out_line "bits 600 bf16: value" "  value      600"
out_has "bits 600 bf16: spacing 4" "  spacing    4 "
out_line "bits 600 bf16: prev 596" "  prev       596 (0x4415)"
out_line "bits 600 bf16: next 604" "  next       604 (0x4417)"
run bits 600 --format bf16 --csv
out_line "bits 600 bf16 --csv" "600,bf16,0x4416,0,10001000,0010110,normal,600,9,4,0x4415,596,0x4417,604"

# -2 in bf16: 1 10000000 0000000 = 0xc000; ulp 2^(1-7); toward -inf is
# -2 - 2^-6 = -2.015625 (0xc001), toward +inf -2 + 2^-7 = -1.9921875 (0xbfff).
run bits -2 --format bf16 --csv
expect_rc "bits -2 (negative value)" 0
out_line "bits -2 bf16 --csv" "-2,bf16,0xc000,1,10000000,0000000,normal,-2,1,0.015625,0xc001,-2.015625,0xbfff,-1.9921875"

# 0x7c00 in fp16: 0 11111 0000000000 = inf; below it the max 65504 = 0x7bff.
run bits --raw 0x7c00 --format fp16
expect_rc "bits --raw 0x7c00 --format fp16" 0
out_line "raw 0x7c00: class inf" "  class      inf"
out_line "raw 0x7c00: value inf" "  value      inf"
out_line "raw 0x7c00: prev 65504" "  prev       65504 (0x7bff)"
out_line "raw 0x7c00: next none" "  next       none"
tail -n +2 "$tmp/out" >"$tmp/raw-hex"
run bits --raw 0b0111110000000000 --format fp16
expect_rc "bits --raw 0b0111110000000000" 0
tail -n +2 "$tmp/out" >"$tmp/raw-bin"
if cmp -s "$tmp/raw-hex" "$tmp/raw-bin"; then ok "raw binary gives the same as 0x7c00"; else bad "raw binary gives the same as 0x7c00"; show_io; fi
run bits --raw "0 11111 0000000000" --format fp16
expect_rc "bits --raw '0 11111 0000000000'" 0
tail -n +2 "$tmp/out" >"$tmp/raw-grp"
if cmp -s "$tmp/raw-hex" "$tmp/raw-grp"; then ok "raw grouped binary gives the same as 0x7c00"; else bad "raw grouped binary gives the same as 0x7c00"; show_io; fi
run bits --raw "0 11111 0000000000" --format fp16 --csv
out_line "raw grouped --csv" "0 11111 0000000000,fp16,0x7c00,0,11111,0000000000,inf,inf,,,0x7bff,65504,,"

run bits --raw 0x17c00 --format fp16
usage_error "raw 0x17c00 is wider than fp16" "'0x17c00'" "fp16"
run bits --raw 0b10111110000000000 --format fp16
usage_error "raw 17 binary digits are wider than fp16" "'0b10111110000000000'"
run bits --raw 0x100 --format fp8-e4m3
usage_error "raw 0x100 is wider than fp8-e4m3" "'0x100'"
run bits --raw 0x7g00 --format fp16
usage_error "raw 0x7g00 is not hex" "'g'"
run bits --raw 0x7c00
usage_error "raw without --format" "--format"
run bits
usage_error "bits without a value" "no value"
run bits 1 --format bf16 --mode sr
usage_error "bits --mode sr is refused" "sr"
run bits 1e --format bf16
usage_error "bits 1e" "'1e'"
run bits 1 --format fp17
usage_error "bits --format fp17" "'fp17'"

# NaN decodes: canonical quiet NaN of fp16 is 0 11111 1000000000 = 0x7e00.
run bits nan --format fp16 --csv
out_has "bits nan fp16 is 0x7e00, class nan" "nan,fp16,0x7e00,0,11111,1000000000,nan,nan,"
# e4m3 0x7f = 0 1111 111 is its only NaN (per sign); 0x7e = 448 is normal.
run bits --raw 0x7f --format fp8-e4m3 --csv
out_has "raw 0x7f fp8-e4m3 is nan" "0x7f,fp8-e4m3,0x7f,0,1111,111,nan,nan,"
run bits --raw 0x7e --format fp8-e4m3 --csv
out_has "raw 0x7e fp8-e4m3 is 448, no next" "0x7e,fp8-e4m3,0x7e,0,1111,110,normal,448,8,32,0x7d,416,,"

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
echo "# bench (a small smoke run: 4 MiB, one repetition, one thread)"

run bench foo
usage_error "bench foo" "'foo'"
run bench --mib 0
usage_error "bench --mib 0" "--mib"
run bench --mib 4 --reps 1 --threads 1 --csv
expect_rc "bench --mib 4 --csv" 0
if [ "$(head -n 1 "$tmp/out")" = "threads,kernel,path,seconds,gb_per_s,ratio_to_memcpy" ]; then
	ok "bench --csv: header"
else
	bad "bench --csv: header" "got: $(head -n 1 "$tmp/out")"
fi
# the baseline's ratio to itself is 1; every other row has a positive rate
# and its ratio is its rate over the baseline's (3 decimals printed).
res=$(awk -F, 'NR == 1 { next }
	$2 ~ /^memcpy/ { base = $5; if ($6 != "1.000") print "memcpy ratio " $6; next }
	{ n++; if (!base) { print "no memcpy row before " $2; exit }
	  if ($5 <= 0 || $4 <= 0) print $2 ": rate " $5 " time " $4
	  r = $5 / base; if (r - $6 > 0.002 + 0.002 * r || $6 - r > 0.002 + 0.002 * r) print $2 ": ratio " $6 " != " r }
	END { if (!n) print "no kernel rows" }' "$tmp/out")
[ -z "$res" ] && ok "bench --csv: ratios are rate / memcpy rate" || bad "bench --csv: ratios are rate / memcpy rate" "$res"
MIXPREC_SIMD=portable "$MIXPREC" bench --mib 4 --reps 1 --threads 1 --csv >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "MIXPREC_SIMD=portable bench" 0
res=$(awk -F, 'NR > 1 && $3 != "portable" && $3 != "libc" { print $2 " on " $3 }' "$tmp/out")
[ -z "$res" ] && ok "MIXPREC_SIMD=portable: only the portable path runs" || bad "MIXPREC_SIMD=portable: only the portable path runs" "$res"
run bench --simd portable --mib 4 --reps 1 --threads 1 --csv
expect_rc "bench --simd portable" 0
res=$(awk -F, 'NR > 1 && $3 != "portable" && $3 != "libc" { print $2 " on " $3 }' "$tmp/out")
[ -z "$res" ] && ok "bench --simd portable: only the portable path runs" || bad "bench --simd portable: only the portable path runs" "$res"
run bench --simd sse9 --mib 4
usage_error "bench --simd sse9" "'sse9'"

# ---------------------------------------------------------------------------
echo "# drift"

# x0 = 600 and a constant update 0.5: the bf16 spacing there is 4, so
# 600 + 0.5 rounds back to 600 every step (0% retained, all unchanged); fp32
# adds 0.5 exactly 100 times: drift 50.
run drift --x0 600 --dist constant --mean 0.5 --steps 100 --elements 8 --csv -
expect_rc "drift --csv -" 0
out_line "drift --csv: header" "variant,step,mean,drift,retained,unchanged_frac"
last() { awk -F, -v v="$1" '$1 == v { row = $0 } END { print row }' "$tmp/out"; }
[ "$(last bf16-rne)" = "bf16-rne,100,600,0,0,1" ] && ok "drift: bf16-rne stays at 600" \
	|| bad "drift: bf16-rne stays at 600" "got $(last bf16-rne)"
[ "$(last fp32)" = "fp32,100,650,50,1,0" ] && ok "drift: fp32 keeps all 50" \
	|| bad "drift: fp32 keeps all 50" "got $(last fp32)"
run drift --steps 50000 --elements 4 --csv -
rows=$(($(wc -l <"$tmp/out") - 1))
[ "$rows" -le 2000 ] && [ "$rows" -gt 600 ] && ok "drift --csv: at most 2,000 rows ($rows)" \
	|| bad "drift --csv: at most 2,000 rows" "got $rows"
run drift --sweep x0=1,600 --steps 200 --elements 16
expect_rc "drift --sweep" 0
out_has "drift --sweep: a row for 600" "600 "
run drift --dist gaussian
usage_error "drift --dist gaussian" "gaussian" "constant, uniform, normal"
run drift --steps 0
usage_error "drift --steps 0" "--steps"
run drift --x0 abc
usage_error "drift --x0 abc" "--x0" "abc"
run drift --csv /nonexistent/dir/x.csv --steps 1
expect_rc "drift --csv into a missing folder" 3
err_has "drift --csv into a missing folder: names it" "/nonexistent/dir/x.csv"
run drift --help
expect_rc "drift --help" 0
out_has "drift --help: --sweep" "--sweep"
run bench drift --mib 4 --reps 1 --threads 1 --csv
expect_rc "bench drift" 0
out_line "bench drift --csv: header" "threads,variant,seconds,updates_per_s,bound_per_s,ratio"

# ---------------------------------------------------------------------------
echo "# train and gradhist (tiny shapes)"

tiny="--layers 1 --channels 16 --heads 2 --batch 2 --context 16"
run train $tiny --steps 3 --eval-every 2 --policy fp32,bf16-resid --csv -
expect_rc "train --csv -" 0
out_line "train --csv: header" \
	"step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,lost_update_frac,resid_lost_frac,ms,overflow_frac,grad_noise_ratio,wgrad_noise_ratio"
out_lines "train: 3 steps x 2 policies" 7
res=$(awk -F, 'NR > 1 { if (NF != 14) print "row " NR ": " NF " fields"
	if (($1 == 1) != ($4 != "")) print "row " NR ": val_loss \"" $4 "\" at step " $1
	if ($3 <= 0 || $3 > 10) print "row " NR ": loss " $3 }' "$tmp/out")
[ -z "$res" ] && ok "train --csv: 14 fields, val_loss only after step 2, sane losses" \
	|| bad "train --csv: 14 fields, val_loss only after step 2, sane losses" "$res"
# the same seed gives the same first loss for both policies (same weights, same batch)
l0=$(awk -F, '$1 == 0 && $2 == "fp32" { print $3 }' "$tmp/out")
l1=$(awk -F, '$1 == 0 && $2 == "bf16-resid" { print $3 }' "$tmp/out")
awk -v a="$l0" -v b="$l1" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 0.05) }' \
	&& ok "train: policies start from the same weights" || bad "train: policies start from the same weights" "$l0 vs $l1"
run train $tiny --steps 2 --policy fp33
usage_error "train --policy fp33" "fp33" "bf16-mixed"
run train $tiny --steps 2 --residual bf61
usage_error "train --residual bf61" "bf61"
run train $tiny --steps 2 --weights bf16:up
usage_error "train --weights bf16:up" "up"
run train $tiny --steps 2 --policy bf16-mixed --reductions low --csv -
expect_rc "train --reductions low" 0
out_lines "train --reductions low: 2 steps" 3
run train $tiny --steps 2 --policy fp32 --reductions low
usage_error "train --policy fp32 --reductions low" "--reductions"
# long policy names (every change appends "+key=value") keep the table's columns aligned
run train $tiny --steps 2 --policy fp32,bf16-mixed --gemm fp16 --loss-scale static:1024
expect_rc "train with long policy names" 0
if awk '/^memory/ { exit }
	/^policy +loss/ { h = index($0, "loss") + 3; next }
	/^(fp32|bf16-mixed)\+gemm=fp16\+loss-scale=static:1024 / { n++; if (match($0, /[0-9]\.[0-9][0-9][0-9][0-9] /) == 0 || RSTART + 5 != h) bad = 1 }
	END { exit !(h && n == 2 && !bad) }' "$tmp/out"; then
	ok "train: long policy names, the loss column under its header"
else
	bad "train: long policy names, the loss column under its header" "$(cat "$tmp/out")"
fi
run train $tiny --heads 3
usage_error "train --heads 3 --channels 16" "--heads"
# 0 on a machine with a usable GPU, else 3 naming why (as the block below)
run train $tiny --device cuda
if [ "$rc" -eq 0 ]; then
	ok "train --device cuda: trains on the GPU"
else
	expect_rc "train --device cuda without a usable GPU" 3
	err_has "train --device cuda: says why" "CUDA"
fi
run train $tiny --data /nonexistent/text.txt
expect_rc "train --data missing" 3
err_has "train --data missing: names the file" "/nonexistent/text.txt"
printf 'too short\n' >"$tmp/short.txt"
run train $tiny --data "$tmp/short.txt"
expect_rc "train --data too short" 2
err_has "train --data too short: names the file" "short.txt"
run train --help
expect_rc "train --help" 0
out_has "train --help: --resid-offset" "--resid-offset"
# every preset listed, and every line within 80 columns
for p in $("$MIXPREC" train --policy nosuch 2>&1 | sed -n 's/.*(known: \(.*\)).*/\1/p' | tr -d ','); do
	grep -q -- "$p" "$tmp/out" || bad "train --help lists $p"
done
# every command's help (the list from mixprec --help) fits an 80-column terminal;
# a line that is only a path (where the lessons are: it depends on the build) may not
for c in "" $("$MIXPREC" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }'); do
	# shellcheck disable=SC2086
	"$MIXPREC" $c --help >"$tmp/help" 2>&1
	if awk 'length > 80 && !/^ *\/[^ ]*$/ { bad = 1 } END { exit bad }' "$tmp/help"; then
		ok "mixprec $c --help: within 80 columns"
	else
		bad "mixprec $c --help: within 80 columns" "$(awk 'length > 80' "$tmp/help")"
	fi
done
run gradhist $tiny --steps 2 --scale 1024 --csv
expect_rc "gradhist --csv" 0
out_line "gradhist --csv: header" "log2_lo,log2_hi,count,share,fp16_at_scale"
res=$(awk -F, 'NR > 1 { s += $4; if ($2 != $1 + 1) print "bucket " $1 " to " $2
	# a bucket 2^k at S=1024 is below fp16 min normal 2^-14 iff k + 10 < -14
	want = ($1 + 10 < -25) ? "flushed" : ($1 + 10 < -14) ? "subnormal" : ($1 + 10 >= 16) ? "overflow" : "normal"
	if ($5 != want) print "bucket " $1 ": " $5 " != " want }
	END { if (s < 0.999 || s > 1.001) print "shares sum to " s }' "$tmp/out")
[ -z "$res" ] && ok "gradhist --csv: buckets, shares and fp16 regions" || bad "gradhist --csv: buckets, shares and fp16 regions" "$res"

# ---------------------------------------------------------------------------
echo "# budget"

run budget --help
expect_rc "budget --help" 0
for o in --params --recipe --optimizer --convention --zero --gpus --preset --layers --hidden \
	--heads --seq --micro-batch --recompute --csv --help bf16-mixed eleuther deepspeed accelerate; do
	out_has "budget --help mentions $o" "$o"
done

# bf16-mixed + Adam: fp32 master 4 + bf16 copy 2 + bf16 gradient 2 + fp32
# accumulator 4 + Adam 8 = 20 bytes; 7e9 * 20 = 140e9 bytes = 140 GB,
# 140e9 / 2^30 = 130.385160446167 GiB.
run budget --params 7e9 --csv
expect_rc "budget --params 7e9 --csv" 0
out_line "budget csv header" "component,bytes_per_param,bytes,gb,gib"
out_line "budget 7e9: master 4 * 7e9 = 28e9" "master_weights,4,28000000000,28,26.0770320892334"
out_line "budget 7e9: Adam 8 * 7e9 = 56e9" "optimizer_state,8,56000000000,56,52.1540641784668"
out_line "budget 7e9: total 140 GB" "total,20,140000000000,140,130.385160446167"
if [ "$(tail -n 1 "$tmp/out" | cut -d, -f1)" = total ]; then ok "budget csv: total last"; else bad "budget csv: total last"; show_io; fi
out_lines "budget 7e9 csv" 7

# LLaMA-7B (6.7e9) with the SI suffix: 6.7e9 * 20 = 134e9 = 134 GB.
run budget --params 6.7B --csv
out_has "budget 6.7B: 134 GB" "total,20,134000000000,134,"
run budget --params 175B --recipe fp32 --csv
# GPT-3 in fp32: weights 175e9 * 4 = 700 GB; + gradients 4 + Adam 8 = 16 bytes.
out_has "budget 175B fp32: weights 700 GB" "weights,4,700000000000,700,"
out_has "budget 175B fp32: 16 bytes" "total,16,2800000000000,2800,"
# Transformer Math 101: no fp32 accumulator: 16 bytes, 7e9 * 16 = 112 GB.
run budget --params 7e9 --convention eleuther --csv
out_has "budget eleuther: 16 bytes" "total,16,112000000000,112,"
# ZeRO-3 on 8 GPUs: everything / 8: 140 GB / 8 = 17.5 GB per GPU, 2.5 bytes.
run budget --params 7e9 --zero 3 --gpus 8 --csv
out_has "budget zero-3 on 8: per GPU" "total,2.5,17500000000,17.5,"
# ZeRO-1 on 8: only master + Adam (12 bytes) / 8: 2 + 2 + 4 + 1.5 = 9.5.
run budget --params 7e9 --zero 1 --gpus 8 --csv
out_has "budget zero-1 on 8: per GPU" "total,9.5,66500000000,66.5,"
# Activations, s = 4, b = 3, h = 8, a = 2: 4*3*8 * (34 + 5*2*4/8) = 3744 bytes
# per layer, 2 layers 7488; selective 96 * 34 * 2 = 6528; full 2 * 96 * 2 = 384.
run budget --params 1000 --layers 2 --hidden 8 --heads 2 --seq 4 --micro-batch 3 --csv
out_has "budget activations by hand" "activations,7.488,7488,"
out_has "budget total with activations" "total,27.488,27488,"
run budget --params 1000 --layers 2 --hidden 8 --heads 2 --seq 4 --micro-batch 3 --recompute selective --csv
out_has "budget selective recompute" "activations,6.528,6528,"
run budget --params 1000 --layers 2 --hidden 8 --heads 2 --seq 4 --micro-batch 3 --recompute full --csv
out_has "budget full recompute" "activations,0.384,384,"
run budget --preset llama-7b
expect_rc "budget --preset llama-7b" 0
out_has "budget table: total row" "total"
out_has "budget table: GiB column" "GiB"
out_has "budget table: convention note" "fp32 gradient accumulator"
run budget --params 7e9 --convention accelerate
out_has "budget accelerate explains itself" "largest single stage"

run budget
usage_error "budget without --params" "--params"
run budget --params -7e9
usage_error "budget --params negative" "--params"
run budget --params 6.7X
usage_error "budget --params 6.7X" "--params"
run budget --params 7e9 --zero 4
usage_error "budget --zero 4" "--zero"
run budget --params 7e9 --gpus 0
usage_error "budget --gpus 0" "--gpus"
run budget --params 7e9 --recipe bf61
usage_error "budget --recipe bf61" "--recipe" "'bf61'" "bf16-mixed"
run budget --params 7e9 --optimizer lion
usage_error "budget --optimizer lion" "--optimizer" "'lion'"
run budget --params 7e9 --layers 2
usage_error "budget partial shape" "--channels" "--heads" "--context"
run budget --params 7e9 --frob
usage_error "budget: unknown option --frob" "--frob"
if [ -c /dev/full ]; then
	"$MIXPREC" budget --params 7e9 --csv >/dev/full 2>"$tmp/err"
	rc=$?
	expect_rc "budget --csv > /dev/full" 3
fi

# ---------------------------------------------------------------------------
echo "# lesson"

run lesson list
expect_rc "lesson list" 0
out_has "lesson list: mixed-precision" "mixed-precision"
out_has "lesson list: residual-drift" "residual-drift"
out_has "lesson list: low-precision" "Below 16 bits: formats and scales"
out_has "lesson list: fp32-state" "fp32-state"
out_has "lesson list: low-precision-training" "Training in fp8 and fp4"
# the titles start in one column, after the longest name
res=$(awk '{ match($0, /^[^ ]+ +/); print RLENGTH }' "$tmp/out" | sort -u | wc -l)
[ "$res" -eq 1 ] && ok "lesson list: the titles start in one column" || bad "lesson list: the titles start in one column" "$(cat "$tmp/out")"
run lesson show mixed-precision --width 60
expect_rc "lesson show" 0
# columns, not bytes: UTF-8 continuation bytes (0x80-0xbf) take no column
res=$(LC_ALL=C awk '{ s = $0; gsub(/[\200-\277]/, "", s) }
	length(s) > 60 && $0 !~ /^    / && $0 !~ /^  [^ ]/ { print NR ": " length(s) }' "$tmp/out" | head -3)
[ -z "$res" ] && ok "lesson show --width 60: prose wraps at 60" || bad "lesson show --width 60: prose wraps at 60" "$res"
out_has "lesson show: commands get a prompt" "    \$ mixprec "
run lesson commands residual-drift
expect_rc "lesson commands" 0
res=$(grep -v '^mixprec ' "$tmp/out" | head -3)
[ -s "$tmp/out" ] && [ -z "$res" ] && ok "lesson commands: one mixprec command per line" \
	|| bad "lesson commands: one mixprec command per line" "$res"
run lesson show no-such-lesson
usage_error "lesson show no-such-lesson" "no-such-lesson"
run lesson show ../etc/passwd
usage_error "lesson show ../etc/passwd" "not a lesson name"
run lesson dance
usage_error "lesson dance" "dance"
mkdir -p "$tmp/lessons"
printf '# Tiny\n\nHello *there*.\n' >"$tmp/lessons/tiny.md"
MIXPREC_LESSONDIR="$tmp/lessons" "$MIXPREC" lesson show tiny >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "MIXPREC_LESSONDIR lesson" 0
out_line "MIXPREC_LESSONDIR lesson: rendered" "Hello there."

# ---------------------------------------------------------------------------
echo "# exercise and check"

MIXPREC_STATEDIR=$tmp/state
export MIXPREC_STATEDIR
unset MIXPREC_COURSE_SEED MIXPREC_EXERCISEDIR

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
echo "# plot"

run plot --help
expect_rc "plot --help" 0
for o in --x --y --by --logx --logy --linear --title --width --height --ascii --png --svg NO_COLOR; do
	out_has "plot --help mentions $o" "$o"
done
res=$(awk 'length($0) > 80 { print NR ": " length($0) }' "$tmp/out" | head -3)
[ -z "$res" ] && ok "plot --help fits 80 columns" || bad "plot --help fits 80 columns" "$res"
"$MIXPREC" budget --params 7e9 --csv >"$tmp/budget.csv" 2>/dev/null
run plot "$tmp/budget.csv" --width 60 --height 12
expect_rc "plot budget csv" 0
# total 20 * 7e9 = 1.4e11 bytes, in the title; 60 columns: labels as wide as
# grad_accumulator (16), the axis at 17, bars from 18, 6 columns for the
# widest value (2.8e10) and one spare: 35 cells for 0..5.6e10. Adam's 5.6e10
# fills all 35, the weights' 1.4e10 35/4 = 8.75 -> 9, the master's 2.8e10
# 17.5 -> 18 (C locale: ASCII bars)
out_has "plot budget: total in the title" "(total 1.4e11 bytes)"
out_line "plot budget: optimizer_state bar" \
	"$(printf '%-16s |%s %s' optimizer_state "$(printf '%035d' 0 | tr 0 '#')" 5.6e10)"
out_line "plot budget: weights bar" "$(printf '%-16s |%s %s' weights '#########' 1.4e10)"
out_line "plot budget: master_weights bar" \
	"$(printf '%-16s |%s %s' master_weights "$(printf '%018d' 0 | tr 0 '#')" 2.8e10)"
grep -q '^total' "$tmp/out" && bad "plot budget: the total row is no bar" || ok "plot budget: the total row is no bar"
run_in "$tmp/budget.csv" plot - --width 60 --height 12
expect_rc "plot - (stdin)" 0
out_has "plot -: named <stdin>" "<stdin> (total 1.4e11 bytes)"

# a drift CSV by hand: not a terminal -> 80x24, ASCII in the C locale
cat >"$tmp/drift.csv" <<'EOF_CSV'
variant,step,mean,drift,retained,unchanged_frac
fp64,0,600,0,,0
fp64,100,650,50,1,0
fp64,200,700,100,1,0
bf16-rne,0,600,0,,0
bf16-rne,100,600,0,0,1
bf16-rne,200,600,0,0,1
EOF_CSV
run plot "$tmp/drift.csv"
expect_rc "plot drift csv" 0
res=$(awk 'length($0) > 80 { print NR ": " length($0) }' "$tmp/out" | head -3)
[ -z "$res" ] && ok "plot: lines fit 80 columns" || bad "plot: lines fit 80 columns" "$res"
[ "$(wc -l <"$tmp/out")" -le 24 ] && ok "plot: at most 24 lines" || bad "plot: at most 24 lines" "$(wc -l <"$tmp/out")"
out_line "plot drift: legend (fp64 '*', bf16-rne '+')" "** fp64   ++ bf16-rne"
out_line "plot drift: x label" "$(printf '%80s' step)"
out_has "plot drift: y label" "retained"
if LC_ALL=C grep -q "$(printf '[\200-\377\033]')" "$tmp/out"; then
	bad "plot C locale, not a tty: plain ASCII, no colour"; show_io
else
	ok "plot C locale, not a tty: plain ASCII, no colour"
fi
if locale -a 2>/dev/null | grep -qix 'c.utf-\{0,1\}8'; then
	LC_ALL=C.UTF-8 "$MIXPREC" plot "$tmp/drift.csv" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	expect_rc "plot in a UTF-8 locale" 0
	# piped, so no colour: two series are told apart by their marks, not
	# braille dots (U+2800..U+28FF, e2 a0..a3 xx in UTF-8); the axes stay
	# box-drawing (braille in colour: tests/test_plot.c and tui-script.sh)
	if ! LC_ALL=C grep -q "$(printf '\342[\240-\243]')" "$tmp/out" && grep -q '└' "$tmp/out"; then
		ok "plot UTF-8, piped: marks instead of braille, box-drawing axes"
	else
		bad "plot UTF-8, piped: marks instead of braille, box-drawing axes"; show_io
	fi
	LC_ALL=C.UTF-8 "$MIXPREC" plot "$tmp/drift.csv" --ascii >"$tmp/out" 2>"$tmp/err"
	out_line "plot --ascii in a UTF-8 locale" "** fp64   ++ bf16-rne"
fi
# colour only on a terminal (script(1) gives it one), and not with NO_COLOR
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
	esc=$(printf '\033')
	NO_COLOR= TERM=xterm script -qec "'$MIXPREC' plot '$tmp/drift.csv' --width 40 --height 10" /dev/null \
		>"$tmp/out" 2>&1 </dev/null
	grep -q "$esc\[34m" "$tmp/out" && ok "plot on a terminal: series 0 in blue" \
		|| { bad "plot on a terminal: series 0 in blue"; show_io; }
	NO_COLOR=1 TERM=xterm script -qec "'$MIXPREC' plot '$tmp/drift.csv' --width 40 --height 10" /dev/null \
		>"$tmp/out" 2>&1 </dev/null
	grep -q "$esc" "$tmp/out" && { bad "plot on a terminal with NO_COLOR: no escapes"; show_io; } \
		|| ok "plot on a terminal with NO_COLOR: no escapes"
	NO_COLOR= TERM=dumb script -qec "'$MIXPREC' plot '$tmp/drift.csv' --width 40 --height 10" /dev/null \
		>"$tmp/out" 2>&1 </dev/null
	grep -q "$esc" "$tmp/out" && { bad "plot on a dumb terminal: no escapes"; show_io; } \
		|| ok "plot on a dumb terminal: no escapes"
	grep -q "fp64" "$tmp/out" && ok "plot on a dumb terminal: drawn" || { bad "plot on a dumb terminal: drawn"; show_io; }
else
	echo "skip plot colour checks (no script(1))"
fi
run plot "$tmp/drift.csv" --by= --y mean,drift --title "My T"
expect_rc "plot --by= --y mean,drift" 0
out_has "plot --title" "My T"
out_line "plot two y columns: legend" "** mean   ++ drift"

printf 'step,policy,loss\n1,a,0.5\n2,a,abc\n' >"$tmp/bad.csv"
run plot "$tmp/bad.csv"
usage_error "plot bad cell" "bad.csv:3: column 'loss': 'abc' is not a number"
printf 'x,y\n1,2\n3,4,5\n' >"$tmp/bad.csv"
run plot "$tmp/bad.csv" --y y
usage_error "plot wrong field count" "bad.csv:3: 3 fields, the header has 2"
printf 'x,y\n1,"2\n' >"$tmp/bad.csv"
run plot "$tmp/bad.csv" --y y
usage_error "plot unclosed quote" "bad.csv:2:" "quote"
run plot "$tmp/drift.csv" --y nope
usage_error "plot --y nope" "--y: no column 'nope'" "variant, step"
printf 'a,b\n1,2\n' >"$tmp/other.csv"
run plot "$tmp/other.csv"
usage_error "plot unknown CSV without --y" "--y" "a, b"
run plot "$tmp/other.csv" --y b
expect_rc "plot unknown CSV with --y" 0
run plot "$tmp/drift.csv" --width 10
usage_error "plot --width 10" "20x6"
run plot "$tmp/drift.csv" --width x
usage_error "plot --width x" "--width"
run plot
usage_error "plot without a file" "no CSV file"
run plot "$tmp/drift.csv" "$tmp/budget.csv"
usage_error "plot two files" "one CSV file"
run plot "$tmp/drift.csv" --frob
usage_error "plot --frob" "--frob"
run plot "$tmp/no-such.csv"
expect_rc "plot missing file" 3
err_has "plot missing file: named" "no-such.csv"

run plot "$tmp/drift.csv" --svg "$tmp/p.svg" --title "Drift <1>" --width 300 --height 200
if [ "$rc" -eq 0 ]; then
	out_empty "plot --svg"
	# through cairo: an SVG document of 300x200 pixels, its text drawn as glyphs
	if head -n 2 "$tmp/p.svg" | grep -Fq 'width="300px" height="200px"' && grep -Fq '<symbol' "$tmp/p.svg" \
		&& tail -n 1 "$tmp/p.svg" | grep -Fqx '</svg>'; then
		ok "plot --svg: a 300x200 SVG through cairo"
	else
		bad "plot --svg: a 300x200 SVG through cairo" "$(head -c 300 "$tmp/p.svg")"
	fi
else
	expect_rc "plot --svg without cairo" 3
	err_has "plot --svg without cairo: says so" "without cairo"
fi
run plot "$tmp/drift.csv" --png "$tmp/p.png" --width 300 --height 200
if [ "$rc" -eq 0 ]; then
	# PNG signature, then IHDR width 300 = 0x12c, height 200 = 0xc8
	sig=$(od -An -tx1 -N24 "$tmp/p.png" | tr -d ' \n')
	[ "$sig" = "89504e470d0a1a0a0000000d494844520000012c000000c8" ] && ok "plot --png: a 300x200 PNG" \
		|| bad "plot --png: a 300x200 PNG" "$sig"
	run plot "$tmp/drift.csv" --png "$tmp/no-such-dir/p.png"
	expect_rc "plot --png into a missing directory" 3
	err_has "plot --png error names the file" "no-such-dir/p.png"
else
	expect_rc "plot --png without cairo" 3
	err_has "plot --png without cairo: says so" "built without cairo"
fi
run plot "$tmp/drift.csv" --png "$tmp/p.png" --svg "$tmp/p.svg"
usage_error "plot --png and --svg" "one image"
if [ -c /dev/full ]; then
	"$MIXPREC" plot "$tmp/drift.csv" >/dev/full 2>"$tmp/err"
	rc=$?
	expect_rc "plot > /dev/full" 3
fi

# ---------------------------------------------------------------------------
echo "# lab new and grade"

printf 'student_id,name\ns1,Ada\ns2,"=HYPERLINK(""http://evil"")"\ns3,Grace\nbad id,X\ns1,Dup\n' >"$tmp/roster.csv"
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab" --course-seed c1
expect_rc "lab new with two bad roster rows" 2
err_has "lab new: unusable id named with file:line" "roster.csv:5: student id 'bad id'"
err_has "lab new: duplicate named with both lines" "roster.csv:6: student s1 is listed twice (first on line 2)"
for f in s1.md s1.txt s1-answers.csv s2.md s3-answers.csv answer-key.csv; do
	[ -f "$tmp/lab/$f" ] && ok "lab new wrote $f" || bad "lab new wrote $f"
done
grep -q '^s1,7.4c,total_gb,$' "$tmp/lab/s1-answers.csv" && ok "answer template row" || bad "answer template row" "$(head -3 "$tmp/lab/s1-answers.csv")"
# the sheet shows the student's own parameters, as exercise show --params does
# lab new prints the seed on the sheets, in Markdown code spans and a shell
# line: a backtick, a space, a newline or a leading '-' is refused there,
# from the option or the environment; check, show and grade take any seed
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab-bad" --course-seed 'c`1'
usage_error "lab new --course-seed with a backtick" "--course-seed" "'\`'"
[ ! -e "$tmp/lab-bad" ] && ok "lab new with a bad seed: no folder" || bad "lab new with a bad seed: no folder"
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab-bad" --course-seed "c 1"
usage_error "lab new --course-seed with a space" "--course-seed"
export MIXPREC_COURSE_SEED=-rf
run lab new --roster "$tmp/roster.csv" --out "$tmp/lab-bad"
usage_error "lab new, MIXPREC_COURSE_SEED starting with -" "MIXPREC_COURSE_SEED" "start with '-'"
run exercise list
expect_rc "exercise list ignores MIXPREC_COURSE_SEED=-rf" 0
unset MIXPREC_COURSE_SEED
run exercise show 7.4c --student s3 --course-seed "Fall 2024" --params
expect_rc "exercise show: a seed with a space (an existing course's)" 0
run exercise show 7.4c --student s3 --course-seed ML101-2026/fall:b+c@x.y=z, --params
expect_rc "exercise show with every allowed seed character" 0
run exercise show 7.4c --student s3 --course-seed c1 --params
P=$(sed -n 's/^P=//p' "$tmp/out")
grep -q "P = $P parameters" "$tmp/lab/s3.txt" && ok "sheet of s3 has its P=$P" || bad "sheet of s3 has its P=$P"
# 7.4c for s3 by hand: 20 bytes per parameter, total = 20 x P / 1e9 GB
gb=$(awk -v p="$P" 'BEGIN { printf "%.6g", 20 * p / 1e9 }')
# a submission: s1 all right (the key), s3 one mistake and formula-like answers, an unknown student, a bad row
awk -F, 'NR == 1 { print "student_id,exercise,field,answer"; next } $1 == "s1" || $1 == "s3" { print }' "$tmp/lab/answer-key.csv" >"$tmp/sub.csv"
sed -i -e 's/^s3,7.4c,total_gb,.*/s3,7.4c,total_gb,@SUM(1)/' -e 's/^s3,7.4c,bytes_per_param,.*/s3,7.4c,bytes_per_param,16/' "$tmp/sub.csv"
printf 's9,7.4a,fp16_min_normal,1\ns3,7.4a,bf16_min_normal,1"2\n' >>"$tmp/sub.csv"
run grade --roster "$tmp/roster.csv" "$tmp/sub.csv" --out "$tmp/grades.csv" --summary "$tmp/summary.csv" --course-seed c1
expect_rc "grade with bad rows" 2
err_has "grade: unknown student with file:line" "sub.csv:$(($(wc -l <"$tmp/sub.csv") - 1)): unknown student 's9'"
err_has "grade: malformed row with file:line" "sub.csv:$(wc -l <"$tmp/sub.csv"):"
nf=$(grep -c '^s1,' "$tmp/lab/answer-key.csv")   # one key row per field of the lab
grep -q "^s1,Ada,total,1.000,$nf,$nf," "$tmp/grades.csv" && ok "grade: s1 all right" || bad "grade: s1 all right" "$(grep '^s1' "$tmp/grades.csv" | tail -1)"
grep -q '^s3,Grace,7.4c,0.333,1,3,.*accumulator' "$tmp/grades.csv" && ok "grade: s3 7.4c wrong, explained" || bad "grade: s3 7.4c" "$(grep '^s3,Grace,7.4c' "$tmp/grades.csv")"
grep -q '^s2,"'"'"'=HYPERLINK(""http://evil"")",7.4a,' "$tmp/grades.csv" && ok "grade: formula-like name neutralised" || bad "grade: formula-like name neutralised" "$(grep '^s2' "$tmp/grades.csv" | head -1)"
grep -q "^7.4c,total_gb,3,1,0.333,'@SUM(1),1,,0$" "$tmp/summary.csv" && ok "grade summary: formula-like answer neutralised" || bad "grade summary: formula-like answer" "$(grep '^7.4c,total_gb' "$tmp/summary.csv")"
grep -q "^7.4c,bytes_per_param,3,1,0.333,16,1,.*accumulator.*,1$" "$tmp/summary.csv" && ok "grade summary: most common wrong answer and mistake" || bad "grade summary: most common wrong answer" "$(grep '^7.4c,bytes' "$tmp/summary.csv")"
out_has "grade: class table" "most common wrong answer"
# s3 corrects the answer: gb computed by hand above
sed -i -e "s/^s3,7.4c,total_gb,.*/s3,7.4c,total_gb,$gb/" -e 's/^s3,7.4c,bytes_per_param,.*/s3,7.4c,bytes_per_param,20/' -e '/^s9/d' -e '/1"2/d' "$tmp/sub.csv"
printf 'student_id\ns1\ns3\n' >"$tmp/roster2.csv"
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1
expect_rc "grade: everyone right" 0
grep -q "^s3,,total,1.000,$nf,$nf," "$tmp/out" && ok "grade to stdout: s3 all right with P=$P" || bad "grade to stdout: s3" "$(grep '^s3' "$tmp/out" | tail -2)"
# one mistake in two variants: s1 and s3 both give twice 7.4e's spacing,
# which by hand is 2^(floor(log2 w) - 7) for bf16's 8 significant bits (floor, not
# awk's int, which rounds toward zero below w = 1):
# two different answers, one mistake ("off by a factor of two")
run exercise show 7.4e --student s1 --course-seed c1 --params
w1=$(sed -n 's/^w=//p' "$tmp/out")
run exercise show 7.4e --student s3 --course-seed c1 --params
w3=$(sed -n 's/^w=//p' "$tmp/out")
twice() { awk -v w="$1" 'BEGIN { l = log(w) / log(2); e = int(l); if (e > l) e--; printf "%.10g", 2 * 2^(e - 7) }'; }
x1=$(twice "$w1")
x3=$(twice "$w3")
sed -e "s/^s1,7.4e,spacing,.*/s1,7.4e,spacing,$x1/" -e "s/^s3,7.4e,spacing,.*/s3,7.4e,spacing,$x3/" "$tmp/sub.csv" >"$tmp/sub-x2.csv"
run grade --roster "$tmp/roster2.csv" "$tmp/sub-x2.csv" --course-seed c1 --summary "$tmp/summary-x2.csv"
expect_rc "grade: two students, the same mistake" 1
if [ "$x1" != "$x3" ] && grep -q "^7.4e,spacing,2,0,0.000,[0-9.e+-]*,1,\"spacing: wrong, off by a factor of two.\",2$" "$tmp/summary-x2.csv"; then
	ok "grade summary: one mistake in two variants counted for both (answers $x1 and $x3)"
else
	bad "grade summary: one mistake in two variants" "w1=$w1 w3=$w3: $(grep '^7.4e,spacing' "$tmp/summary-x2.csv")"
fi
err_has "grade table: the mistake and how many made it" "2 made this mistake"
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv"
expect_rc "grade with another course seed: answers wrong" 1
run grade --roster "$tmp/nonexistent.csv" "$tmp/sub.csv"
expect_rc "grade: missing roster" 3
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --out /nonexistent/dir/g.csv --course-seed c1
expect_rc "grade: unwritable output" 3
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --exercises 7.4a,nosuch
expect_rc "grade: unknown exercise in --exercises" 2
err_has "grade --exercises: names it" "nosuch"
# a teacher's file whose parameters combine into a variant that cannot be
# solved for some students (gmin > gmax): those are reported, the rest graded
mkdir "$tmp/exsc"
printf '[sc]\ntitle: T\nkind: scale-choice\nparam gmax: 4\nvary gmax: list 1 4\nparam gmin: 0.5\nvary gmin: list 0.5 3\nprompt: p\nfield fits: choice yes|no\n' >"$tmp/exsc/sc.ex"
printf 'student_id\n' >"$tmp/roster3.csv"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do echo "p$i" >>"$tmp/roster3.csv"; done
printf 'student_id,exercise,field,answer\np1,sc,fits,yes\n' >"$tmp/sub3.csv"
run grade --roster "$tmp/roster3.csv" "$tmp/sub3.csv" --exercise-dir "$tmp/exsc" --exercises sc
expect_rc "grade with unsolvable variants" 2
err_has "grade: unsolvable variant named" "must not exceed gmax"
n_bad=$(grep -c 'not graded' "$tmp/out")
n_rows=$(grep -c '^p[0-9]*,,sc,' "$tmp/out")
[ "$n_rows" -eq 16 ] && [ "$n_bad" -gt 0 ] && [ "$n_bad" -lt 16 ] && ok "grade: unsolvable variants marked, others graded ($n_bad of 16)" \
	|| bad "grade: unsolvable variants marked, others graded" "rows $n_rows, not graded $n_bad"
run lab --help
expect_rc "lab --help" 0
run grade --help
expect_rc "grade --help" 0
# review: a roster name is shown literally on the sheet: no HTML, links or a
# heading of its own (a quoted name may hold a line break)
printf 'student_id,name\ns1,"Eve <img src=x> [x](http://e)\n# Forged"\n' >"$tmp/roster-md.csv"
run lab new --roster "$tmp/roster-md.csv" --out "$tmp/lab-md" --exercises 7.4c
expect_rc "lab new: name with Markdown" 0
if ! grep -q '^# Forged' "$tmp/lab-md/s1.md" && grep -qF 'Eve \<img src\=x\>' "$tmp/lab-md/s1.md" && grep -q 'Eve <img src=x> \[x\](http://e) # Forged' "$tmp/lab-md/s1.txt"; then
	ok "lab new: name escaped in the sheet, shown as typed in the text"
else
	bad "lab new: name escaped in the sheet" "$(head -2 "$tmp/lab-md/s1.md"; head -1 "$tmp/lab-md/s1.txt")"
fi
# review: --summary onto the grades' own file would lose one of them
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1 --out "$tmp/same.csv" --summary "$tmp/same.csv"
expect_rc "grade --summary = --out" 2
err_has "grade --summary = --out: names it" "--summary: '$tmp/same.csv'"
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1 --summary -
expect_rc "grade --summary - with grades on stdout" 2
# review: a failed write names the file (it used to exit 3 in silence)
if [ -w /dev/full ]; then
	run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1 --out /dev/full
	expect_rc "grade --out /dev/full" 3
	err_has "grade --out /dev/full: names the file" "/dev/full: No space left on device"
fi
# review: --out into a FIFO writes through it (it is not replaced by a file)
mkfifo "$tmp/grades.fifo"
timeout 20 cat "$tmp/grades.fifo" >"$tmp/fifo.out" &
reader=$!
run grade --roster "$tmp/roster2.csv" "$tmp/sub.csv" --course-seed c1 --out "$tmp/grades.fifo"
expect_rc "grade --out FIFO" 0
wait "$reader"
if [ -p "$tmp/grades.fifo" ] && grep -q '^student_id,' "$tmp/fifo.out"; then
	ok "grade --out FIFO: still a FIFO, the reader got the grades"
else
	bad "grade --out FIFO" "$(ls -l "$tmp/grades.fifo"; head -2 "$tmp/fifo.out")"
fi

# ---------------------------------------------------------------------------
echo "# --device cuda"

# Without a usable GPU (no CUDA in the build, no driver, no device) every
# --device cuda exits 3 naming the reason; with one, the GPU's output must be
# the CPU's, byte for byte.
gpu_reasons="built without CUDA|no CUDA driver|no CUDA device|older than|cannot run this build"
"$MIXPREC" drift --device cuda --steps 1 --elements 1 >/dev/null 2>&1
if [ $? -ne 0 ]; then
	for cmd in "drift --steps 10" "round 0.5 --to bf16" "bench round --mib 1 --reps 1" "train $tiny" \
		"gradhist $tiny --steps 1" "bench train --reps 1"; do
		# shellcheck disable=SC2086
		run $cmd --device cuda
		expect_rc "$cmd --device cuda without a GPU" 3
		if grep -Eq "$gpu_reasons" "$tmp/err" && grep -Fq -e "--device cuda:" "$tmp/err"; then
			ok "$cmd --device cuda: names the reason"
		else
			bad "$cmd --device cuda: names the reason" "stderr: $(cat "$tmp/err")"
		fi
	done
else
	run drift --elements 3001 --steps 200 --seed 9 --csv -
	cp "$tmp/out" "$tmp/drift-cpu.csv"
	run drift --elements 3001 --steps 200 --seed 9 --csv - --device cuda
	expect_rc "drift --device cuda" 0
	cmp -s "$tmp/out" "$tmp/drift-cpu.csv" && ok "drift --device cuda: the CPU's CSV" \
		|| bad "drift --device cuda: the CPU's CSV" "$(diff "$tmp/drift-cpu.csv" "$tmp/out" | head -5)"
	run round 1 0x1.921fb6p+1 65520 464 -0x1p-149 inf nan --to fp16,bf16,fp8-e4m3,fp8-e5m2 --mode sr --csv
	cp "$tmp/out" "$tmp/round-cpu.csv"
	run round 1 0x1.921fb6p+1 65520 464 -0x1p-149 inf nan --to fp16,bf16,fp8-e4m3,fp8-e5m2 --mode sr --csv \
		--device cuda
	expect_rc "round --device cuda" 0
	cmp -s "$tmp/out" "$tmp/round-cpu.csv" && ok "round --device cuda: the CPU's CSV" \
		|| bad "round --device cuda: the CPU's CSV" "$(diff "$tmp/round-cpu.csv" "$tmp/out" | head -5)"
	# 0.1 is not an fp32 value: the GPU kernels round fp32 arrays
	run round 0.1 --device cuda
	usage_error "round 0.1 --device cuda" "not an fp32 value"
	# training: the same columns, a loss that falls (tests/gpu/train_gpu
	# compares the numbers with the CPU's)
	run train $tiny --steps 30 --policy fp32,bf16-mixed --csv - --device cuda
	expect_rc "train --device cuda" 0
	if head -1 "$tmp/out" | grep -qx 'step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,lost_update_frac,resid_lost_frac,ms,overflow_frac' &&
		[ "$(grep -c ',bf16-mixed,' "$tmp/out")" -eq 30 ] &&
		awk -F, 'NR == 2 { first = $3 } $1 == 29 && $2 == "fp32" { last = $3 } END { exit !(last < first - 0.3) }' "$tmp/out"; then
		ok "train --device cuda: 30 rows per policy, the train CSV's columns, fp32's loss falls"
	else
		bad "train --device cuda: CSV" "$(head -3 "$tmp/out")"
	fi
fi
run round 0.5 --device cuda --mode rtz
usage_error "round --device cuda --mode rtz" "rne or sr"
for cmd in drift round bench; do
	run $cmd --device tpu
	usage_error "$cmd --device tpu" "tpu" "cpu, cuda"
done

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
echo "# I/O errors"

if [ -c /dev/full ]; then
	"$MIXPREC" round 1 >/dev/full 2>"$tmp/err"
	rc=$?
	expect_rc "round 1 > /dev/full" 3
	err_has "round 1 > /dev/full: message" "writing standard output"
	"$MIXPREC" formats --csv >/dev/full 2>"$tmp/err"
	rc=$?
	expect_rc "formats --csv > /dev/full" 3
else
	echo "skip /dev/full checks (no /dev/full)"
fi


# ---------------------------------------------------------------------------
echo "# hardening: files written safely, bounded input, options"

H=$tmp/h
mkdir -p "$H"
TINY="--layers 1 --channels 16 --context 8 --batch 2 --heads 2"
printf 'student_id,name\ns1,One\ns2,Two\n' >"$H/r.csv"

# lab new never writes through a link in its folder; it refuses before
# writing anything (a link, a FIFO, a link to a folder alike)
mkdir -p "$H/lab" "$H/out"
echo ORIG >"$H/out/victim"
ln -s ../out/victim "$H/lab/s2.md"
run lab new --roster "$H/r.csv" --out "$H/lab" --course-seed c
usage_error "lab new: a link in the folder" "s2.md" "symbolic link" "nothing written"
[ "$(cat "$H/out/victim")" = ORIG ] && ok "lab new: the link's target is intact" || bad "lab new: the link's target was overwritten"
[ ! -e "$H/lab/s1.md" ] && ok "lab new: no sheet written before refusing" || bad "lab new: s1.md written before the refusal"
rm "$H/lab/s2.md"
mkfifo "$H/lab/s2.txt"
timeout 20 "$MIXPREC" lab new --roster "$H/r.csv" --out "$H/lab" --course-seed c </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
usage_error "lab new: a FIFO in the folder (no hang)" "s2.txt" "not a regular file"
ls "$H/lab" | grep -q 'tmp-' && bad "lab new: FIFO left a temporary file" || ok "lab new: FIFO: no temporary file left"
rm "$H/lab/s2.txt"
ln -s "$H/out" "$H/lab/s2-answers.csv"
run lab new --roster "$H/r.csv" --out "$H/lab" --course-seed c
usage_error "lab new: a link to a folder" "s2-answers.csv"
[ ! -e "$H/lab/s1.md" ] && ok "lab new: link to a folder: nothing written" || bad "lab new: sheets written before the folder link was refused"
rm "$H/lab/s2-answers.csv"
# a stale temporary file of a killed run is removed by the next write of that file
: >"$H/lab/answer-key.csv.tmp-Ab12Cd"
: >"$H/lab/answer-key.csv.tmp-keep"
run lab new --roster "$H/r.csv" --out "$H/lab" --course-seed c
expect_rc "lab new after the refusals" 0
[ ! -e "$H/lab/answer-key.csv.tmp-Ab12Cd" ] && ok "lab new: stale answer-key.csv.tmp-XXXXXX removed" || bad "lab new: stale temporary file kept"
[ -e "$H/lab/answer-key.csv.tmp-keep" ] && ok "lab new: a file outside the pattern is kept" || bad "lab new: removed a file not its own"
# the roster is never an output, by inode (here: the key itself)
cp "$H/lab/answer-key.csv" "$H/key-before"
run lab new --roster "$H/lab/answer-key.csv" --out "$H/lab" --course-seed c
usage_error "lab new --roster DIR/answer-key.csv" "answer-key.csv" "roster"
cmp -s "$H/lab/answer-key.csv" "$H/key-before" && ok "lab new: the roster-key is intact" || bad "lab new: overwrote its roster"

# grade refuses outputs that are inputs, by device and inode
# (where formats tie the key lists both, fp32|fp16: a student gives one)
awk 'NR == 1 { print "student_id,exercise,field,answer"; next } { sub(/\|[^,"]*$/, ""); print }' \
	"$H/lab/answer-key.csv" >"$H/sub.csv"
cp "$H/sub.csv" "$H/sub-before"
ln "$H/sub.csv" "$H/sub-hard.csv"
run grade --roster "$H/r.csv" "$H/sub.csv" --course-seed c --out "$H/sub-hard.csv"
usage_error "grade --out = a submission (hard link)" "--out" "an input"
cmp -s "$H/sub.csv" "$H/sub-before" && ok "grade: the submission is intact" || bad "grade: overwrote a submission"
run grade --roster "$H/r.csv" "$H/sub.csv" --course-seed c --out "$H/g.csv" --summary "$H/./r.csv"
usage_error "grade --summary = the roster" "--summary" "roster"
run grade --roster "$H/r.csv" "$H/sub.csv" --course-seed c --out "$H/g.csv"
expect_rc "grade: the key's own answers are all right" 0

# ids starting with @ are refused with the reason; names become valid UTF-8
printf 'student_id,name\n@x1,At\ns3,\342\202\254 ok \377\376Ba\001d\n' >"$H/r2.csv"
run lab new --roster "$H/r2.csv" --out "$H/lab2" --course-seed c
expect_rc "lab new: an @ id is a skipped row" 2
err_has "lab new: @x1 refused" "'@x1' is not usable"
err_has "lab new: says why" "formula"
[ ! -e "$H/lab2/@x1.md" ] && ok "lab new: no sheet for @x1" || bad "lab new: wrote a sheet for @x1"
printf 'student_id,exercise,field,answer\n' >"$H/empty-sub.csv"
run grade --roster "$H/r2.csv" "$H/empty-sub.csv" --course-seed c --out "$H/g2.csv"
# 0xE2 0x82 0xAC is the euro sign (valid); 0xFF, 0xFE are never UTF-8 (each
# becomes ?), 0x01 is a control (a blank, as the sheets show controls)
if grep -q "^s3,€ ok ??Ba d,7.4a," "$H/g2.csv"; then ok "grade: invalid UTF-8 in a name becomes ?, a control a blank"; else bad "grade: name not sanitised" "$(grep '^s3' "$H/g2.csv" | head -1)"; fi

# a header of more than 1024 fields is an error, never skipped
awk 'BEGIN { for (i = 1; i <= 1025; i++) printf "c%d%s", i, i < 1025 ? "," : "\n"; print "student_id"; print "s9" }' >"$H/wide.csv"
run lab new --roster "$H/wide.csv" --out "$H/lab3" --course-seed c
expect_rc "lab new: a 1025-field header" 2
err_has "lab new: 1025-field header named" "more than 1024 fields"
[ ! -e "$H/lab3/s9.md" ] && ok "lab new: the row after a bad header is not taken as the header" || bad "lab new: used the next row as the header"
# a field over 64 KiB is refused while reading (an unclosed quote would
# otherwise be buffered to the end of the file first)
{ printf 'student_id,name\ns1,"'; head -c 200000 /dev/zero | tr '\0' a; } >"$H/long.csv"
run lab new --roster "$H/long.csv" --out "$H/lab4" --course-seed c
err_has "lab new: a 200000-byte field" "longer than 65536 bytes"

# outputs are atomic: a failed write (file size limit, as a full disk)
# leaves the earlier file whole and no temporary file
atomic_check() {
	name=$1
	file=$2
	shift 2
	echo ORIG >"$file"
	(ulimit -f 1; trap '' XFSZ; exec "$MIXPREC" "$@") </dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	expect_rc "$name under a 512-byte limit" 3
	[ "$(cat "$file")" = ORIG ] && ok "$name: the earlier file is intact" || bad "$name: the earlier file was damaged"
	ls "$(dirname "$file")" | grep -q "$(basename "$file").tmp-" && bad "$name: left a temporary file" || ok "$name: no temporary file left"
}
atomic_check "train --csv" "$H/t.csv" train --steps 30 $TINY --csv "$H/t.csv"
atomic_check "drift --csv" "$H/d.csv" drift --csv "$H/d.csv"
"$MIXPREC" drift --csv "$H/d2.csv" >/dev/null 2>&1
if "$MIXPREC" plot "$H/d2.csv" --png "$H/p0.png" >/dev/null 2>&1; then
	atomic_check "plot --png" "$H/p.png" plot "$H/d2.csv" --png "$H/p.png"
	atomic_check "plot --svg" "$H/p.svg" plot "$H/d2.csv" --svg "$H/p.svg"
else
	echo "skip plot --png/--svg atomic checks (built without cairo)"
fi
if [ -c /dev/full ]; then
	run drift --csv /dev/full
	expect_rc "drift --csv /dev/full" 3
	err_has "drift --csv /dev/full: reason" "No space left"
fi
mkfifo "$H/fifo.csv"
timeout 20 "$MIXPREC" drift --csv "$H/fifo.csv" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "drift --csv FIFO without a reader: refused, no hang" 3
err_has "drift --csv FIFO: reason" "no process reads"

# bounded input, checked while reading
timeout 20 "$MIXPREC" round --to bf16 </dev/zero >"$tmp/out" 2>"$tmp/err"
rc=$?
usage_error "round < /dev/zero ends" "line 1" "longer than 8192 bytes"
run plot /dev/zero
usage_error "plot /dev/zero" "NUL byte"
{ printf 'x,y\n1,'; head -c 300000 /dev/zero | tr '\0' 7; printf '\n'; } >"$H/bigfield.csv"
run plot "$H/bigfield.csv" --y y
usage_error "plot: a 300000-byte field" "longer than 65536 bytes"
timeout 60 "$MIXPREC" train --steps 1 $TINY --data /dev/zero </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
usage_error "train --data /dev/zero" "larger than 67108864 bytes"
truncate -s 100M "$H/sparse.txt"
run train --steps 1 $TINY --data "$H/sparse.txt"
usage_error "train --data 100 MB" "larger than 67108864 bytes"

# progress: a FIFO is refused without hanging, a failed save exits 3, and
# stale temporary files go with the next save
mkdir -p "$H/state"
mkfifo "$H/state/progress.csv"
MIXPREC_STATEDIR=$H/state timeout 20 "$MIXPREC" check 7.4a fp16_min_normal=2^-14 </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "check with a FIFO as the progress file" 3
err_has "check: FIFO named" "not a regular file"
rm "$H/state/progress.csv"
: >"$H/state/progress.csv.tmp-Zz9Yy8"
MIXPREC_STATEDIR=$H/state "$MIXPREC" check 7.4a fp16_min_normal=2^-14 </dev/null >"$tmp/out" 2>"$tmp/err"
[ ! -e "$H/state/progress.csv.tmp-Zz9Yy8" ] && ok "check: stale progress.csv.tmp-XXXXXX removed" || bad "check: stale progress temporary kept"
echo file >"$H/notadir"
MIXPREC_STATEDIR=$H/notadir/state "$MIXPREC" check 7.4a fp16_min_normal=2^-14 </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "check: progress cannot be saved" 3
err_has "check: says so" "progress not saved"

# numbers in options: doc/DESIGN.md's syntax, and the real problem named
run gradhist --steps 1 $TINY --scale 2^16
expect_rc "gradhist --scale 2^16" 0
out_has "gradhist --scale 2^16 = 65536" "S = 65536"
run train --steps 1 $TINY --loss-scale static:2^30 --csv -
expect_rc "train --loss-scale static:2^30" 0
# 2^30 = 1073741824, which %.6g shows as 1.07374e+09
out_has "static:2^30 is the scale" ",1.07374e+09,"
run train --steps 1 $TINY --loss-scale static:1e300
usage_error "--loss-scale static:1e300" "out of range" "1e+30"
run train --steps 1 $TINY --policy fp16-mixed --loss-scale dynamic:16777216 --csv -
expect_rc "train --loss-scale dynamic:16777216" 0
# 16777216 = 2^24, the dynamic scaler's first S
out_has "dynamic:2^24 is the first scale" ",1.67772e+07,"
run train --steps 1 $TINY --seed 1.5
usage_error "train --seed 1.5" "--seed" "not a whole number"
run train --steps 2^3 $TINY --csv -
expect_rc "train --steps 2^3" 0
out_lines "train --steps 2^3: header and 8 rows" 9
run budget --params 7e9 --gpus 1e30
usage_error "budget --gpus 1e30" "--gpus" "out of range"
run exercise hint 7.4d 4 --no-progress
usage_error "exercise hint 7.4d 4" "not a hint number" "1 to 3"
run drift --sweep x0=1,,2
usage_error "drift --sweep x0=1,,2" "--sweep" "empty value"

# one set of shape names: train's are canonical, budget's are aliases, both ways
run budget --params 1000 --layers 2 --hidden 8 --heads 2 --seq 4 --micro-batch 3 --csv
cp "$tmp/out" "$H/b1"
run budget --params 1000 --layers 2 --channels 8 --heads 2 --context 4 --batch 3 --csv
expect_rc "budget --channels/--context/--batch" 0
cmp -s "$tmp/out" "$H/b1" && ok "budget: train's names = budget's" || bad "budget: the aliases differ"
run train --steps 1 --layers 1 --hidden 16 --seq 8 --micro-batch 2 --heads 2
expect_rc "train --hidden/--seq/--micro-batch" 0
out_has "train aliases: the same shape" "batch 2 x 8, 1 layers, 2 heads, 16 channels"
run budget --help
out_has "budget --help: --channels" "--channels"
out_has "budget --help: aliases" "aliases"

# --saturate: inf into fp8-e4m3 gives 448 (max finite), labelled saturated
run round inf --to fp8-e4m3 --saturate
expect_rc "round inf --saturate" 0
out_has "round inf --saturate: 448, saturated" "saturated"
out_lacks "round inf --saturate: not exact" "exact"

# data/submission-example.csv is a lab round trip: everyone right
run grade --roster "${srcdir:-.}/data/roster-example.csv" "${srcdir:-.}/data/submission-example.csv" --course-seed fall26 \
	--out "$H/ex-grades.csv"
expect_rc "grade the example submission (course seed fall26)" 0
n=$(awk -F, 'NR > 1' "${srcdir:-.}/data/roster-example.csv" | wc -l | tr -d ' ')
out_has "example: all $n right" "; $n answered everything right"
# and the round trip itself: lab new, answers from the key, grade
run lab new --roster "${srcdir:-.}/data/roster-example.csv" --out "$H/rt" --course-seed fall26
awk 'NR == 1 { print "student_id,exercise,field,answer"; next } { print }' "$H/rt/answer-key.csv" >"$H/rt/sub.csv"
run grade --roster "${srcdir:-.}/data/roster-example.csv" "$H/rt/sub.csv" --course-seed fall26 --out "$H/rt/g.csv"
expect_rc "lab round trip: the key's answers grade right" 0


# the budget footer explains the recipe shown: fp32 + Adam is weights 4 +
# gradients 4 + Adam's m and v 8 = 16 bytes, not bf16-mixed's 20
run budget --params 7e9 --recipe fp32
expect_rc "budget --recipe fp32" 0
out_has "budget fp32 footer: its own recipe" "fp32 with adam:"
out_has "budget fp32 footer: 16 bytes" "= 16 bytes per"
out_lacks "budget fp32 footer: not bf16-mixed's count" "bf16-mixed with Adam"

# docs agree with the output: README's round example, the man SYNOPSIS,
# data/README.md
S=${srcdir:-.}
run round 0.3 --to fp32,fp16,bf16
sed 's/ *$//' "$tmp/out" >"$H/round-out"
awk '/^    \$ mixprec round 0.3 --to fp32,fp16,bf16$/ { n = 4; next } n > 0 { sub(/^    /, ""); print; n-- }' \
	"$S/README.md" >"$H/round-readme"
cmp -s "$H/round-out" "$H/round-readme" && ok "README: the round example is the program's output" \
	|| bad "README: the round example differs" "$(diff "$H/round-readme" "$H/round-out" | head -4)"
syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$S/doc/mixprec.1")
echo "$syn" | grep -q '^\.B mixprec lesson$' && ok "man SYNOPSIS: lesson" || bad "man SYNOPSIS lacks lesson"
echo "$syn" | grep -q 'round | drift | train | tui | all' && ok "man SYNOPSIS: bench tui" || bad "man SYNOPSIS lacks bench tui"
echo "$syn" | grep -B1 '^\.B mixprec plot$' | head -1 | grep -q '^\.br$' && ok "man SYNOPSIS: grade and plot on lines of their own" \
	|| bad "man SYNOPSIS runs grade into plot"
grep -q '\.\./' "$S/data/README.md" && bad "data/README.md points outside the repository" || ok "data/README.md stays inside the repository"

# ---------------------------------------------------------------------------
echo "# train: lr schedule, optimiser state, offsets, progress; drift --ema"

tiny="--layers 1 --channels 16 --heads 2 --batch 2 --context 16"
# the default schedule is the plain lr: the same CSV as naming it (ms aside)
run train $tiny --steps 4 --policy fp32 --csv -
cut -d, -f1-10 "$tmp/out" >"$tmp/plain.csv"
run train $tiny --steps 4 --policy fp32 --lr-schedule constant --warmup 0 --csv -
cut -d, -f1-10 "$tmp/out" >"$tmp/named.csv"
cmp -s "$tmp/plain.csv" "$tmp/named.csv" && ok "train: --lr-schedule constant --warmup 0 is the default" \
	|| bad "train: --lr-schedule constant --warmup 0 is the default"
run train $tiny --steps 4 --policy fp32 --lr-schedule cosine --warmup 2 --lr-min 1e-4 --csv -
expect_rc "train --lr-schedule cosine" 0
cut -d, -f1-10 "$tmp/out" >"$tmp/cos.csv"
cmp -s "$tmp/plain.csv" "$tmp/cos.csv" && bad "train: cosine changes the run" || ok "train: cosine changes the run"
run train $tiny --steps 4 --lr-schedule linear
usage_error "train --lr-schedule linear" "--lr-schedule" "'linear'" "cosine"
run train $tiny --steps 4 --warmup 5
usage_error "train --warmup past --steps" "--warmup" "--steps 4"
run train $tiny --steps 4 --lr-min 1e-4
usage_error "train --lr-min without cosine" "--lr-min" "cosine"
run train $tiny --steps 4 --lr 1e-3 --lr-schedule cosine --lr-min 1e-2
usage_error "train --lr-min above --lr" "--lr-min" "--lr"
run train $tiny --steps 2 --policy fp32 --optim-state bf16:sr --csv -
expect_rc "train --optim-state bf16:sr" 0
out_has "train --optim-state bf16:sr: named in the policy" "fp32+optim-state=bf16:sr"
run train $tiny --steps 2 --optim-state fp16:rtz
usage_error "train --optim-state fp16:rtz" "--optim-state" "rtz"
run train $tiny --steps 2 --resid-offset 1e39
usage_error "train --resid-offset 1e39 (beyond fp32)" "--resid-offset" "fp32"
run train $tiny --steps 2 --policy bf16-mixed --residual fp16 --resid-offset 1e5
usage_error "train --resid-offset 1e5 in an fp16 residual" "--resid-offset" "fp16" "65504"
run train $tiny --steps 2 --resid-offset 600 --resid-offset-channels 1000
usage_error "train --resid-offset-channels 1000 of 16" "--resid-offset-channels" "1000" "16"
run gradhist $tiny --steps 2 --resid-offset-channels 17
usage_error "gradhist --resid-offset-channels 17 of 16" "--resid-offset-channels"
# fits in fp32, but the stream's sums overflow: the run stops, status 2, the CSV keeps step 0
run train $tiny --steps 5 --resid-offset 3e38 --resid-offset-channels 2 --csv -
expect_rc "train: a loss that turns NaN" 2
err_has "train: a NaN loss is named" "diverged"
out_lines "train: the CSV up to the step that diverged" 2
# progress off a terminal: whole lines, one per step with --progress-every 0, none with a long interval
run train $tiny --steps 3 --progress-every 0
n=$(grep -c '^train: step [0-9]*/3, loss ' "$tmp/err")
[ "$n" -eq 3 ] && ok "train --progress-every 0: a line per step on stderr" \
	|| bad "train --progress-every 0: a line per step on stderr" "got $n: $(head -c 300 "$tmp/err")"
if tr -d '\n' <"$tmp/err" | grep -q "$(printf '\r')"; then
	bad "train progress off a terminal: no carriage returns"
else
	ok "train progress off a terminal: no carriage returns"
fi
run train $tiny --steps 3 --progress-every 1e6
err_empty "train --progress-every 1e6"
run train $tiny --steps 3 --progress-every -1
usage_error "train --progress-every -1" "--progress-every"
run train $tiny --steps 2 --beta2 1
usage_error "train --beta2 1" "--beta2" "[0, 1)"
run train $tiny --steps 2 --beta2 0.999 --beta1 0.8
expect_rc "train --beta1 0.8 --beta2 0.999" 0
run train $tiny --steps 3 --policy fp32 --optim-state bf16:sr
out_has "train --optim-state bf16:sr: the v_ratio table" "v_ratio"
run train $tiny --steps 3 --policy fp32
out_lacks "train fp32 state: no v_ratio table" "v_ratio"
run train --help
out_has "train --help: --lr-schedule" "--lr-schedule constant|cosine"
out_has "train --help: --progress-every" "--progress-every"

# drift --ema: bf16, beta2 0.999 stops at 0.25 (at 0.25 an update adds
# 0.001 * 0.75 = 0.00075 < 2^-10, half the bf16 spacing there)
run drift --ema --beta2 0.999 --format bf16
expect_rc "drift --ema" 0
out_has "drift --ema: v stops at 0.25" "v stops at 0.25 after"
out_has "drift --ema: half the spacing 2^-10" "(0.000976562)"
run drift --ema --beta2 0.999 --format bf16 --csv -
expect_rc "drift --ema --csv -" 0
out_line "drift --ema --csv: header" "step,format,mode,v,v_fp32,v_fp64,unchanged_frac"
last=$(tail -n 1 "$tmp/out")
case "$last" in 20000,bf16,rne,0.25,*) ok "drift --ema --csv: 20000 steps, ends at 0.25" ;;
	*) bad "drift --ema --csv: 20000 steps, ends at 0.25" "last row: $last" ;; esac
run drift --ema --mode sr --elements 200 --csv -
v=$(tail -n 1 "$tmp/out" | cut -d, -f4)
awk -v v="$v" 'BEGIN { exit !(v > 0.98 && v < 1.02) }' && ok "drift --ema --mode sr: the mean reaches about 1 ($v)" \
	|| bad "drift --ema --mode sr: the mean reaches about 1" "got $v"
run drift --ema --beta2 1
usage_error "drift --ema --beta2 1" "--beta2"
run drift --ema --mode rtz
usage_error "drift --ema --mode rtz" "--mode" "rne or sr"
run drift --ema --format bf61
usage_error "drift --ema --format bf61" "--format" "bf61"
run drift --ema --help
expect_rc "drift --ema --help" 0
out_has "drift --ema --help: the recurrence" "round_F(fl32(fl32(b*v) + fl32(c*G)))"
run drift --help
out_has "drift --help: --ema" "--ema"

# gradhist --of activations: the forward pass's values, every one in a
# bucket. At 2 layers, C 32, the first half-batch of 4 x 32 tokens (BT = 128),
# V 128: 128 x (2 x (C + 3C + C + C + C + C + 4C + 4C + C + C) + C + V)
# = 128 x (2 x 576 + 160) = 167936 values.
run gradhist --of activations --layers 2 --channels 32 --heads 2 --context 32 --batch 8 --steps 2 --csv
expect_rc "gradhist --of activations" 0
total=$(awk -F, 'NR > 1 { n += $3 } END { print n + 0 }' "$tmp/out")
run gradhist --of activations --layers 2 --channels 32 --heads 2 --context 32 --batch 8 --steps 2
zero=$(sed -n 's/.*values (\([0-9]*\) exactly zero).*/\1/p' "$tmp/out")
out_has "gradhist --of activations: all 167936 values" "167936 values"
if [ -n "$zero" ] && [ $((total + zero)) -eq 167936 ]; then
	ok "gradhist --of activations: the buckets and the zeros add up to 167936"
else
	bad "gradhist --of activations: the buckets and the zeros add up to 167936" "buckets $total, zeros $zero"
fi
run gradhist --of weights
usage_error "gradhist --of weights" "--of" "weights"

# an optional field (7.4f's steps) left unanswered neither counts against a
# student nor in the field's success rate; the stall value alone solves it
printf 'student_id,name\ns1,A\ns2,B\n' >"$tmp/opt-r.csv"
run lab new --roster "$tmp/opt-r.csv" --out "$tmp/opt-lab" --course-seed c --exercises 7.4f
expect_rc "lab new --exercises 7.4f" 0
awk -F, 'NR == 1 { print "student_id,exercise,field,answer"; next } $3 != "steps" { print }' \
	"$tmp/opt-lab/answer-key.csv" >"$tmp/opt-sub.csv"
run grade --roster "$tmp/opt-r.csv" "$tmp/opt-sub.csv" --course-seed c --exercises 7.4f --out "$tmp/opt-g.csv"
expect_rc "grade: optional field unanswered" 0
out_has "grade: both solved without the optional field" "2 answered everything right"
out_has "grade: the optional field is rated over those who answered it" "steps                 0/0"
grep -q '^s1,A,7.4f,1.000,1,1,' "$tmp/opt-g.csv" && ok "grade: the optional field is not in the score" \
	|| bad "grade: the optional field is not in the score" "$(grep '^s1,A,7.4f' "$tmp/opt-g.csv")"

# train --preset tiny: the TUI labs' tiny model (train/shape.c). Its
# parameters by hand, V = T = 128 (the model's own), C = 32, L = 1: wte and
# wpe 2 x 128 x 32 = 8192; a layer 2C + 3C^2 + 3C + C^2 + C + 2C + 4C^2 + 4C
# + 4C^2 + C = 12 x 1024 + 13 x 32 = 12704; lnf 2C = 64; 20960 in all
run train --preset tiny --steps 1
expect_rc "train --preset tiny" 0
out_line "train --preset tiny: the tiny shape in the summary" \
	"train: 1 steps, batch 4 x 32, 1 layers, 2 heads, 32 channels, 20960 parameters"
# no held-out loss in 100 steps (the default --eval-every 100 has one), unless
# --eval-every is given, even before --preset: steps 49 and 99
run train --preset tiny --steps 100 --csv -
n=$(awk -F, 'NR > 1 && $4 != ""' "$tmp/out" | wc -l | tr -d ' ')
[ "$n" = 0 ] && ok "train --preset tiny: no held-out loss" || bad "train --preset tiny: no held-out loss" "$n rows"
run train --eval-every 50 --preset tiny --steps 100 --csv -
n=$(awk -F, 'NR > 1 && $4 != ""' "$tmp/out" | wc -l | tr -d ' ')
[ "$n" = 2 ] && ok "train --eval-every 50 --preset tiny: 2 held-out losses" \
	|| bad "train --eval-every 50 --preset tiny: 2 held-out losses" "$n rows"
# a shape option wins over the preset whichever comes first: 2 layers add
# one layer's 12704 parameters
run train --layers 2 --preset tiny --steps 1
out_line "train --layers 2 --preset tiny: --layers kept" \
	"train: 1 steps, batch 4 x 32, 2 layers, 2 heads, 32 channels, 33664 parameters"
run gradhist --preset tiny --steps 1
expect_rc "gradhist --preset tiny" 0
out_has "gradhist --preset tiny: the tiny model's 20960 parameters" "20960 parameters"
# the Training lab's tiny run (z's shape, as the lab opens) is train --preset
# tiny: its export equals the command's CSV, ms aside
printf 'keys j Space n C-u\ntype 5\nkeys Enter f C-u\ntype %s\nkeys Enter s\nwait\nkeys e\n' \
	"$tmp/lab-tiny.csv" >"$tmp/lab-tiny.keys"
XDG_STATE_HOME=$tmp/lab-state "$MIXPREC" tui --keys "$tmp/lab-tiny.keys" --dump "$tmp/lab-tiny.out" \
	--start train </dev/null >/dev/null 2>&1
cut -d, -f1-10 "$tmp/lab-tiny.csv" >"$tmp/lab-tiny10.csv" 2>/dev/null
run train --preset tiny --policy fp32,bf16-mixed --steps 5 --csv -
cut -d, -f1-10 "$tmp/out" >"$tmp/cmd-tiny10.csv"
if [ -s "$tmp/lab-tiny10.csv" ] && cmp -s "$tmp/lab-tiny10.csv" "$tmp/cmd-tiny10.csv"; then
	ok "the Training lab's tiny export is train --preset tiny's CSV"
else
	bad "the Training lab's tiny export is train --preset tiny's CSV" \
		"$(diff "$tmp/lab-tiny10.csv" "$tmp/cmd-tiny10.csv" 2>&1 | head -4)"
fi
run train --preset huge --steps 1
usage_error "train --preset huge" "--preset" "huge" "known: tiny"

# ---------------------------------------------------------------------------
finish
