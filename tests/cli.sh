#!/bin/sh
# CLI contract tests for mixprec (doc/DESIGN.md "CLI contract"): outputs, messages
# and exit statuses of the global options, formats, bits, bench, budget and
# lesson, and --help of every command. The other commands have scripts of
# their own: tests/cli-round.sh, tests/cli-train.sh (drift, train, gradhist,
# --device cuda), tests/cli-exercise.sh, tests/cli-plot.sh, tests/cli-lab.sh
# (lab new, grade) and tests/cli-hardening.sh (files, bounded input, numbers).
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
out_lines "formats --csv: header + 46 formats" 47
# Every row read back against the definition: E exponent bits, M fraction
# bits, bias 2^(E-1)-1, max (2 - 2^-M) 2^(2^E - 2 - bias) (e4m3: no inf, only
# S.1111.111 is NaN, so max = 1.75 * 2^(15 - 7) = 448), min normal 2^(1-bias),
# min subnormal 2^(1-bias-M), epsilon 2^-M, digits (M+1) log10 2.
res=$(awk -F, "$DECODE_AWK"'
NR == 1 { next }
{
	seen[$1] = 1
	spec($1)
	# the formats below 8 bits, FNUZ and e8m0 have other rules: tests/cli-formats.sh;
	# the integers, ml_dtypes and P3109 rows: tests/cli-formats-ext.sh
	if (E < 0 && $1 ~ /^(fp6-e3m2|fp6-e2m3|fp4-e2m1|fp8-e4m3fnuz|fp8-e5m2fnuz|e8m0)$/) next
	if (E < 0 && $1 ~ /^(int[248]|fp8-e3m4|fp8-e4m3-ieee|fp8-e4m3b11fnuz|p3109-8p[1-7](sf|ue|uf)?)$/) next
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
# the second baseline: a read-only pass, right after memcpy, on no SIMD path
res=$(awk -F, 'NR == 3 && $2 == "read only (baseline)" && $3 == "plain C" && $5 > 0 { print "ok" }' "$tmp/out")
[ "$res" = ok ] && ok "bench --csv: the read-only baseline" || bad "bench --csv: the read-only baseline" "$(sed -n 3p "$tmp/out")"
MIXPREC_SIMD=portable "$MIXPREC" bench --mib 4 --reps 1 --threads 1 --csv >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "MIXPREC_SIMD=portable bench" 0
res=$(awk -F, 'NR > 1 && $3 != "portable" && $3 != "libc" && $3 != "plain C" { print $2 " on " $3 }' "$tmp/out")
[ -z "$res" ] && ok "MIXPREC_SIMD=portable: only the portable path runs" || bad "MIXPREC_SIMD=portable: only the portable path runs" "$res"
run bench --simd portable --mib 4 --reps 1 --threads 1 --csv
expect_rc "bench --simd portable" 0
res=$(awk -F, 'NR > 1 && $3 != "portable" && $3 != "libc" && $3 != "plain C" { print $2 " on " $3 }' "$tmp/out")
[ -z "$res" ] && ok "bench --simd portable: only the portable path runs" || bad "bench --simd portable: only the portable path runs" "$res"
run bench --simd sse9 --mib 4
usage_error "bench --simd sse9" "'sse9'"

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
out_has "lesson list: rounding-rules" "Rounding rules: to odd, ties toward zero, equal-probability SR"
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
finish
