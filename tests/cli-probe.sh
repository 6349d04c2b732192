#!/bin/sh
# CLI tests of train --probe nvfp4: the table's header, rows and columns;
# what must hold whatever the run (16x16 weight blocks give the forward and
# backward passes the same weight: w_2d is 0; SR's mean of R casts is
# nearer g than RNE; the Linears counted are those of the blocks cast); the
# probe leaves the training itself alone; its numbers are the same on
# every SIMD path and thread count, keyed by --seed; and the options'
# errors.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp cliprobe

data="--data ${srcdir:-.}/data/corpus.txt"
tiny="--layers 2 --channels 32 --heads 2 --batch 4 --context 32 --eval-every 0 --steps 3 $data"
pols="nvfp4,nvfp4+2d=off,nvfp4+sr=off+bf16-last=0,fp32"

# the probe's table: the lines from its header to the end of the output
table() {
	awk '/^policy +linears/ { on = 1 } on' "$1"
}

echo "# the table"
run train $tiny --policy $pols --probe nvfp4 --csv "$tmp/with.csv"
expect_rc "train --probe nvfp4" 0
cp "$tmp/out" "$tmp/probe.out"
out_has "the title names R" "nvfp4 parts, on the final weights and the last step's gradients (R = 64 SR draws)"
table "$tmp/probe.out" >"$tmp/t"
[ "$(head -1 "$tmp/t" | tr -s ' ')" = "policy linears w_1d w_2d w_err sr_bias rne_bias sr_err sr_proj rne_proj" ]
check "the columns" $? "$(head -1 "$tmp/t")"
[ "$(awk 'NR > 1 { print $1 }' "$tmp/t" | tr '\n' ' ')" = "nvfp4 nvfp4+2d=off nvfp4+sr=off+bf16-last=0 fp32 " ]
check "a row per policy, in --policy's order" $? "$(cat "$tmp/t")"
# 2 blocks: nvfp4 leaves the last out (4 Linears), bf16-last=0 and fp32 none (8)
[ "$(awk 'NR > 1 { print $2 }' "$tmp/t" | tr '\n' ' ')" = "4 4 8 8 " ]
check "linears: the blocks the policy casts (all of them without fp8 scaling)" $? "$(cat "$tmp/t")"
res=$(awk 'NR > 1 { for (i = 3; i <= 10; i++) { if ($i !~ /%$/) print $1 " column " i ": " $i; v[i] = $i + 0 }
	if (v[4] != 0) print $1 ": w_2d " $4
	if (!(v[3] > 0)) print $1 ": w_1d " $3
	if (!(v[6] < v[7])) print $1 ": sr_bias " $6 " not below rne_bias " $7
	if (!(v[8] > v[6])) print $1 ": one SR cast " $8 " not above the mean of 64 " $6 }' "$tmp/t")
[ -z "$res" ] && ok "every cell in %; w_2d exactly 0, w_1d not; SR's mean nearer g than RNE and than one cast" \
	|| bad "the table's figures" "$res"

echo "# the probe changes nothing else"
run train $tiny --policy $pols --csv "$tmp/without.csv"
expect_rc "the same run without --probe" 0
# every column but ms (the 11th)
[ "$(cut -d, -f1-10,12- "$tmp/with.csv")" = "$(cut -d, -f1-10,12- "$tmp/without.csv")" ]
check "the training CSV is the same with and without --probe" $? "$(diff "$tmp/with.csv" "$tmp/without.csv" | head -4)"
grep -q "nvfp4 parts" "$tmp/out"
[ $? -ne 0 ]
check "no probe table without --probe" $? "$(tail -3 "$tmp/out")"

echo "# reproducible"
MIXPREC_SIMD=portable "$MIXPREC" train $tiny --policy $pols --probe nvfp4 --threads 1 </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "MIXPREC_SIMD=portable --threads 1" 0
table "$tmp/out" >"$tmp/t2"
same "the same table on the portable path, one thread" "$(cat "$tmp/t")" "$(cat "$tmp/t2")"
run train $tiny --policy $pols --probe nvfp4 --seed 2
table "$tmp/out" >"$tmp/t3"
[ "$(awk 'NR > 1 { print $6 }' "$tmp/t")" != "$(awk 'NR > 1 { print $6 }' "$tmp/t3")" ]
check "--seed 2: other weights, gradients and draws" $? "$(cat "$tmp/t3")"
run train $tiny --policy nvfp4 --probe nvfp4 --probe-draws 1
expect_rc "--probe-draws 1" 0
out_has "--probe-draws 1: the title says R = 1" "(R = 1 SR draws)"
# one draw: its mean is the draw, so the bias is the cast's error
res=$(table "$tmp/out" | awk 'NR == 2 && $6 != $8 { print "sr_bias " $6 ", sr_err " $8 }')
[ -z "$res" ] && ok "R = 1: sr_bias = sr_err" || bad "R = 1: sr_bias = sr_err" "$res"

echo "# errors"
run train $tiny --probe nvfp5
expect_rc "--probe nvfp5" 2
err_has "--probe nvfp5: names the known probe" "--probe: unknown probe 'nvfp5' (known: nvfp4)"
for r in 0 4097 abc; do
	run train $tiny --probe nvfp4 --probe-draws $r
	expect_rc "--probe-draws $r" 2
	err_has "--probe-draws $r: names the option" "--probe-draws: "
done
err_has "--probe-draws abc: not a whole number" "'abc' is not a whole number"
run train $tiny --probe nvfp4 --probe-draws 5000
err_has "--probe-draws 5000: the range" "--probe-draws: 5000 is not in 1..4096"
run train $tiny --probe-draws 8
expect_rc "--probe-draws without --probe" 2
err_has "--probe-draws without --probe: says so" "--probe-draws: only with --probe nvfp4"
run train $tiny --probe nvfp4 --csv -
expect_rc "--probe nvfp4 --csv -" 2
err_has "--csv -: the table would share stdout" "which --csv - takes"
run train $tiny --probe nvfp4 --tensor-stats -
expect_rc "--probe nvfp4 --tensor-stats -" 2
err_has "--tensor-stats -: the table would share stdout" "which --tensor-stats - takes"

finish
