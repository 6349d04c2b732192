#!/bin/sh
# CLI tests of round --flip-prob and --flip-bits: soft errors after
# rounding as CPFloat defines them (one bit per struck value, with
# probability P; north-numerical-computing/cpfloat, src/cpfloat_template.h
# at 6ea1027). Expected bits are derived by hand from the formats' fields in
# the comments; counts against binomial bounds derived here.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp flip

# ---------------------------------------------------------------------------
echo "# round --flip-prob: a chosen bit"

# bf16 1.0 = 0 01111111 0000000 = 0x3f80; bit 14 is the exponent's top bit:
# 0x3f80 ^ 0x4000 = 0x7f80 = exponent all ones, fraction 0 = +inf.
run round 1 --to bf16 --flip-prob 1 --flip-bits 14 --csv
expect_rc "bf16 bit 14" 0
out_line "bf16 bit 14: 1.0 becomes +inf" "1,bf16,rne,0x7f80,inf,inf,inf,0x3f80,14"
# fp8-e4m3 1.0 = 0 0111 000 = 0x38; bit 7 is the sign: 0xb8 = -1.
run round 1 --to fp8-e4m3 --flip-prob 1 --flip-bits 7 --csv
out_line "e4m3 bit 7: 1.0 becomes -1" "1,fp8-e4m3,rne,0xb8,-1,2,2,0x38,7"
# fp16 1.0 = 0x3c00; bit 0 is the fraction's last: 0x3c01 = 1 + 2^-10.
run round 1 --to fp16 --flip-prob 1 --flip-bits 0
out_has "text: the note names the bit and the rounded bits" "bit 0 flipped (rounded: 0x3c00)"
out_has "text: the flipped bits" "0x3c01"

# ---------------------------------------------------------------------------
echo "# p = 0 and p = 1"
awk 'BEGIN { for (i = 1; i <= 600; i++) printf "%d/7\n", i }' >"$tmp/vals"
run_in "$tmp/vals" round --to fp32,bf16,fp8-e5m2 --csv
cut -d, -f1-7 "$tmp/out" | tail -n +2 >"$tmp/plain"
run_in "$tmp/vals" round --to fp32,bf16,fp8-e5m2 --csv --flip-prob 0
cut -d, -f1-7 "$tmp/out" | tail -n +2 >"$tmp/p0"
cmp -s "$tmp/plain" "$tmp/p0"; check "p = 0: every row as without --flip-prob" $? "rows differ"
res=$(awk -F, 'NR > 1 && $9 != "" { n++ } END { print n + 0 }' "$tmp/out")
same "p = 0: no flipped_bit" "$res" 0

# p = 1: every row's bits differ from rounded_bits in exactly the bit named,
# within the format's width (fp32 32, bf16 16, e5m2 8).
for where in any frac exp; do
	run_in "$tmp/vals" round --to fp32,bf16,fp8-e5m2 --csv --flip-prob 1 --flip-bits $where --seed 4
	res=$(awk -F, -v w=$where '
	function hex(s,   i, c, v) { v = 0; s = tolower(substr(s, 3))
		for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
		return v }
	NR > 1 {
		wid = $2 == "fp32" ? 32 : $2 == "bf16" ? 16 : 8
		fr = $2 == "fp32" ? 23 : $2 == "bf16" ? 7 : 2
		lo = w == "exp" ? fr : 0; hi = w == "frac" ? fr : w == "exp" ? wid - 1 : wid
		a = hex($4); b = hex($8); bit = $9 + 0
		if ($9 == "" || bit < lo || bit >= hi) { print "row " NR ": bit " $9 " outside [" lo "," hi ")"; exit }
		d = int(a / 2 ^ bit) % 2 != int(b / 2 ^ bit) % 2
		if (!d || a - b != (int(a / 2 ^ bit) % 2 ? 2 ^ bit : -2 ^ bit)) { print "row " NR ": " $4 " vs " $8; exit }
	}' "$tmp/out")
	[ -z "$res" ] && ok "p = 1, $where: one bit in the span, the one named" || bad "p = 1, $where" "$res"
done

# ---------------------------------------------------------------------------
echo "# frequency, seeds and paths"
# N = 20000 values at P = 0.01: Binomial mean 200, sd sqrt(200 * 0.99) = 14.07;
# 6 sd = 84.4.
awk 'BEGIN { for (i = 0; i < 20000; i++) print "0.3" }' >"$tmp/many"
run_in "$tmp/many" round --to bf16 --csv --flip-prob 0.01 --seed 9
n=$(awk -F, 'NR > 1 && $9 != "" { n++ } END { print n + 0 }' "$tmp/out")
awk -v n="$n" 'BEGIN { d = n - 200; if (d < 0) d = -d; exit !(d <= 84.4) }'
check "P = 0.01: $n of 20000 struck, within 200 +- 84" $? "$n"
cp "$tmp/out" "$tmp/s9"
run_in "$tmp/many" round --to bf16 --csv --flip-prob 0.01 --seed 9
cmp -s "$tmp/out" "$tmp/s9"; check "the same seed: the same flips" $? "differ"
run_in "$tmp/many" round --to bf16 --csv --flip-prob 0.01 --seed 10
if cmp -s "$tmp/out" "$tmp/s9"; then bad "another seed: other flips"; else ok "another seed: other flips"; fi
for path in portable avx2; do
	MIXPREC_SIMD=$path "$MIXPREC" round --to bf16 --csv --flip-prob 0.01 --seed 9 <"$tmp/many" >"$tmp/p_$path" 2>&1
	cmp -s "$tmp/p_$path" "$tmp/s9"; check "MIXPREC_SIMD=$path: the same flips" $? "differ"
done

# ---------------------------------------------------------------------------
echo "# bad values"
run round 1 --flip-prob 1.5
usage_error "--flip-prob 1.5" "--flip-prob" "1.5"
run round 1 --flip-prob x
usage_error "--flip-prob x" "--flip-prob" "'x'"
run round 1 --flip-prob 1 --flip-bits sign
usage_error "--flip-bits sign" "--flip-bits" "'sign'"
run round 1 --to fp8-e4m3 --flip-prob 1 --flip-bits 8
usage_error "--flip-bits 8 for fp8" "--flip-bits" "bit 8" "fp8-e4m3"
run round 1 --to e8m0 --flip-prob 1 --flip-bits frac
usage_error "--flip-bits frac for e8m0" "--flip-bits" "e8m0 has no fraction bits"
run round 1 --flip-bits exp
usage_error "--flip-bits alone" "--flip-bits needs --flip-prob"
run round --help
out_has "round --help: --flip-prob" "--flip-prob P"
out_has "round --help: --flip-bits" "--flip-bits B"

finish
