#!/bin/sh
# train with the policy parts of train/policy_parts.c: parts naming fp32 (or
# the preset's own formats) leave every figure of the run as it was; an
# operand format changes the run; the parts give the same rows on every
# SIMD path; bit flips in exponents can stop a run with a NaN loss (exit 2,
# the CSV kept); bad values are refused naming the part; --help has them.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp train-parts

# rows FILE POLICY: FILE's rows of POLICY without the policy and ms columns
rows() {
	awk -F, -v p="$2" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "ms") ms = i; if ($i == "policy") pc = i }; next }
		$pc == p { s = ""; for (i = 1; i <= NF; i++) if (i != ms && i != pc) s = s $i ","; print s }' "$1"
}

# ---------------------------------------------------------------------------
echo "# parts equal to the preset"
a=fp32+fwd=fp32+dgrad=fp32+wgrad=fp32+elementwise=fp32+flip=weights:0
b=bf16-mixed+fwd=bf16+dgrad=dy:bf16/w:bf16+wgrad=bf16
c=bf16-mixed+fwd=x:fp8-e4m3
run train --preset tiny --steps 6 --policy "fp32,$a,bf16-mixed,$b,$c" --csv -
expect_rc "train with parts" 0
cp "$tmp/out" "$tmp/parts.csv"
rows "$tmp/parts.csv" fp32 >"$tmp/r1"
rows "$tmp/parts.csv" "$a" >"$tmp/r2"
[ -s "$tmp/r1" ] && cmp -s "$tmp/r1" "$tmp/r2"; check "fp32 parts: the fp32 run's rows" $? "$(diff "$tmp/r1" "$tmp/r2" | head -3)"
rows "$tmp/parts.csv" bf16-mixed >"$tmp/r3"
rows "$tmp/parts.csv" "$b" >"$tmp/r4"
[ -s "$tmp/r3" ] && cmp -s "$tmp/r3" "$tmp/r4"; check "bf16 parts: the bf16-mixed run's rows" $? "$(diff "$tmp/r3" "$tmp/r4" | head -3)"
rows "$tmp/parts.csv" "$c" >"$tmp/r5"
if cmp -s "$tmp/r3" "$tmp/r5"; then bad "fwd=x:fp8-e4m3 changes the run"; else ok "fwd=x:fp8-e4m3 changes the run"; fi

# ---------------------------------------------------------------------------
echo "# every SIMD path"
d="bf16-mixed+fwd=x:fp8-e4m3/w:bf16+dgrad=dy:fp8-e5m2+wgrad=x:fp8-e4m3/dy:fp8-e5m2+elementwise=bf16+flip=grads:0.001:frac"
e="fp16-mixed+softmax=fp8-e4m3+layernorm=fp16+gelu=fp8-e5m2+flip=weights:0.0005:frac"
paths=portable
grep -qw avx2 /proc/cpuinfo 2>/dev/null && paths="$paths avx2"
"$MIXPREC" train --preset tiny --steps 6 --policy "$d,$e" --threads 2 --csv "$tmp/ref.csv" >/dev/null 2>"$tmp/ref.err"
check "all parts: the run" $? "$(head -3 "$tmp/ref.err")"
for p in $paths; do
	for th in 1 2; do
		MIXPREC_SIMD=$p "$MIXPREC" train --preset tiny --steps 6 --policy "$d,$e" --threads $th \
			--csv "$tmp/$p$th.csv" >/dev/null 2>&1
		for q in "$d" "$e"; do
			rows "$tmp/ref.csv" "$q" >"$tmp/x1"
			rows "$tmp/$p$th.csv" "$q" >"$tmp/x2"
			[ -s "$tmp/x1" ] && cmp -s "$tmp/x1" "$tmp/x2"
			check "MIXPREC_SIMD=$p, $th thread(s): ${q%%+*} with parts, the same rows" $? "$(diff "$tmp/x1" "$tmp/x2" | head -2)"
		done
	done
done

# ---------------------------------------------------------------------------
echo "# a flipped exponent"
# fp16 activations near 1 have exponent field 01111 (biased 15): flipping its
# top bit gives 11111, inf or NaN, which the GEMM carries into the loss
f=fp16-noscale+flip=activations:0.0001:exp
run train --preset tiny --steps 6 --policy "fp32,$f" --csv "$tmp/nan.csv"
expect_rc "flips into fp16 exponents" 2
err_has "the stop names the policy" "policy $f, step"
err_has "the stop says NaN" "the loss is NaN"
n=$(awk -F, -v p="$f" '$2 == p && $3 == "nan"' "$tmp/nan.csv" | wc -l)
[ "$n" -ge 1 ] && ok "the CSV keeps the NaN step" || bad "the CSV keeps the NaN step" "$(cat "$tmp/nan.csv")"
m=$(awk -F, '$2 == "fp32"' "$tmp/nan.csv" | wc -l)
[ "$m" -ge 1 ] && ok "the CSV keeps the other policy's rows" || bad "the CSV keeps the other policy's rows"

# ---------------------------------------------------------------------------
echo "# bad values"
run train --preset tiny --steps 1 --policy fp32+fwd=fp4
usage_error "fwd=fp4" "fwd:" "'fp4'"
run train --preset tiny --steps 1 --policy fp32+wgrad=y:bf16
usage_error "wgrad=y:bf16" "wgrad:" "'y:bf16'"
run train --preset tiny --steps 1 --policy fp32+flip=weights:2
usage_error "flip=weights:2" "flip:" "'2'"
run train --preset tiny --steps 1 --policy fp32+gelu=bogus
usage_error "gelu=bogus" "gelu:" "'bogus'"
run train --preset tiny --steps 1 --policy nvfp4+dgrad=bf16
usage_error "nvfp4+dgrad=bf16" "dgrad:" "fp8-scaling"
run train --help
out_has "train --help: fwd" "fwd=F | fwd=x:F/w:G"
out_has "train --help: flip" "flip=weights|activations|grads:P[:any|frac|exp]"
out_has "train --help: elementwise" "elementwise=F"

finish
