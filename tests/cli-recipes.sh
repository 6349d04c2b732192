#!/bin/sh
# CLI tests of the per-tensor fp8 scaling recipes (fp8-delayed,
# fp8-current): the train CSV's overflow_frac column, --tensor-stats'
# columns and names, the delayed and current scales against the rules
# (scale = fp8_max / amax / 2^margin, fp8_max 448 for E4M3, 57344 for
# E5M2; delayed: the previous steps' amaxes), and the options' errors.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp clirecipes


data="--data ${srcdir:-.}/data/corpus.txt"
tiny="--layers 1 --channels 16 --heads 2 --batch 2 --context 16 --eval-every 0 $data"

echo "# train --csv and --tensor-stats"
run train $tiny --steps 3 --policy fp8-delayed,fp8-current,bf16-mixed --grad-noise --csv "$tmp/t.csv" --tensor-stats "$tmp/s.csv"
expect_rc "train fp8-delayed,fp8-current,bf16-mixed" 0
[ "$(head -1 "$tmp/t.csv")" = "step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,lost_update_frac,resid_lost_frac,ms,overflow_frac,grad_noise_ratio,wgrad_noise_ratio" ]
check "train --csv: overflow_frac, grad_noise_ratio, wgrad_noise_ratio the last columns" $? "$(head -1 "$tmp/t.csv")"
# the per-tensor recipes measure their casts (ratio above 1), not their
# weight gradients
res=$(awk -F, 'NR > 1 { if (NF != 14) print "row " NR ": " NF " fields"
	if ($2 == "bf16-mixed" && ($12 != "" || $13 != "" || $14 != "")) print "row " NR ": bf16-mixed " $12 "," $13 "," $14
	if ($2 != "bf16-mixed" && ($12 == "" || $12 < 0 || $12 > 1)) print "row " NR ": overflow_frac " $12
	if ($2 != "bf16-mixed" && ($13 == "" || $13 <= 1 || $14 != "")) print "row " NR ": ratios " $13 "," $14 }' "$tmp/t.csv")
[ -z "$res" ] && ok "train --csv: 14 fields; overflow_frac a fraction for fp8, empty for bf16-mixed" \
	|| bad "train --csv: 14 fields; overflow_frac a fraction for fp8, empty for bf16-mixed" "$res"

[ "$(head -1 "$tmp/s.csv")" = "step,policy,tensor,format,amax,scale,overflow_frac,underflow_frac" ]
check "--tensor-stats: header" $? "$(head -1 "$tmp/s.csv")"
# 3 steps x 2 scaled policies x 1 layer x 4 Linears x 3 tensors = 72 rows
[ "$(awk 'NR > 1' "$tmp/s.csv" | wc -l)" -eq 72 ]
check "--tensor-stats: 72 rows (3 steps x 2 policies x 12 tensors; none for bf16-mixed)" $? \
	"$(awk 'NR > 1' "$tmp/s.csv" | wc -l) rows"
names=$(awk -F, '$1 == 0 && $2 == "fp8-delayed" { printf "%s ", $3 }' "$tmp/s.csv")
want="h.0.attn.c_attn.weight h.0.attn.c_attn.input h.0.attn.c_attn.grad_output h.0.attn.c_proj.weight h.0.attn.c_proj.input h.0.attn.c_proj.grad_output h.0.mlp.c_fc.weight h.0.mlp.c_fc.input h.0.mlp.c_fc.grad_output h.0.mlp.c_proj.weight h.0.mlp.c_proj.input h.0.mlp.c_proj.grad_output "
[ "$names" = "$want" ]
check "--tensor-stats: GPT-2's tensor names, in the model's order" $? "got $names"
res=$(awk -F, 'NR > 1 { f = ($3 ~ /grad_output$/) ? "fp8-e5m2" : "fp8-e4m3"; if ($4 != f) print $3 ": " $4 }' "$tmp/s.csv")
[ -z "$res" ] && ok "--tensor-stats: HYBRID (E5M2 for output gradients, E4M3 else)" || bad "--tensor-stats: HYBRID" "$res"
# delayed: step 0 casts with the initial scale 1; step 1 with fp8_max /
# step 0's amax (the window holds one amax); 9 significant digits printed
res=$(awk -F, '$2 == "fp8-delayed" {
	key = $3; m = ($4 == "fp8-e5m2") ? 57344 : 448
	if ($1 == 0) { if ($6 != 1) print "step 0 " key ": scale " $6; a0[key] = $5 }
	if ($1 == 1) { want = m / a0[key]; d = $6 / want - 1; if (d < 0) d = -d; if (d > 1e-7) print "step 1 " key ": scale " $6 ", want " want }
}' "$tmp/s.csv")
[ -z "$res" ] && ok "fp8-delayed: scale 1 at step 0, fp8_max / amax(step 0) at step 1" \
	|| bad "fp8-delayed: scale 1 at step 0, fp8_max / amax(step 0) at step 1" "$res"
# current: the weights are the same in both batch halves, so their scale is
# fp8_max / this step's amax; nothing overflows under current scaling
res=$(awk -F, '$2 == "fp8-current" {
	if ($3 ~ /weight$/) { d = $6 * $5 / 448 - 1; if (d < 0) d = -d; if (d > 1e-6) print $1 " " $3 ": scale*amax " $6 * $5 }
	if ($7 != 0) print $1 " " $3 ": overflow " $7 }' "$tmp/s.csv")
[ -z "$res" ] && ok "fp8-current: weight scale = 448 / amax of the step; no overflow" \
	|| bad "fp8-current: weight scale = 448 / amax of the step; no overflow" "$res"

echo "# the parts"
# margin 1 and most_recent: step 1's scale is 448 / 2 / amax(step 0) = 224 / amax
run train $tiny --steps 2 --policy fp8-delayed --amax-history 2 --amax-algo most_recent --fp8-margin 1 \
	--tensor-stats "$tmp/m.csv"
expect_rc "train --amax-history 2 --amax-algo most_recent --fp8-margin 1" 0
res=$(awk -F, '$4 == "fp8-e4m3" { if ($1 == 0) a0[$3] = $5
	if ($1 == 1) { d = $6 * a0[$3] / 224 - 1; if (d < 0) d = -d; if (d > 1e-6) print $3 ": " $6 * a0[$3] } }' "$tmp/m.csv")
[ -z "$res" ] && ok "--fp8-margin 1: step 1's scale x amax(step 0) = 448 / 2" || bad "--fp8-margin 1" "$res"
grep -q "fp8-delayed+amax-history=2+amax-algo=most_recent+fp8-margin=1" "$tmp/m.csv"
check "the changed parts are in the policy's name" $? "$(sed -n 2p "$tmp/m.csv")"
run train $tiny --steps 1 --policy bf16-mixed --fp8-scaling current --tensor-stats -
expect_rc "train bf16-mixed --fp8-scaling current" 0
[ "$(grep -c 'bf16-mixed+fp8-scaling=current,h.0' "$tmp/out")" -eq 12 ]
check "--fp8-scaling current turns a preset's Linears to per-tensor fp8" $? "$(head -3 "$tmp/out")"
run train $tiny --steps 1 --policy fp32 --tensor-stats -
[ "$(cat "$tmp/out")" = "step,policy,tensor,format,amax,scale,overflow_frac,underflow_frac" ]
check "--tensor-stats without a scaled policy: the header only" $? "$(head -3 "$tmp/out")"

echo "# errors"
run train $tiny --steps 1 --policy fp8-delayed --amax-history 0
expect_rc "--amax-history 0" 2
err_has "--amax-history 0: names the option and the range" "--amax-history: amax-history '0' is not a whole number in 1..1024"
run train $tiny --steps 1 --policy fp8-delayed --amax-algo mean
expect_rc "--amax-algo mean" 2
err_has "--amax-algo mean: names the choices" "max or most_recent"
run train $tiny --steps 1 --policy fp8-delayed --fp8-margin x
expect_rc "--fp8-margin x" 2
run train $tiny --steps 1 --policy fp8-current --fp8-format e5m2
expect_rc "--fp8-format e5m2" 2
err_has "--fp8-format e5m2: names hybrid and e4m3" "hybrid"
run train $tiny --steps 1 --policy fp8-delayed --device cuda
if [ "$rc" -eq 3 ]; then
	ok "# SKIP --device cuda refusal: no GPU here (exit 3 before the policy check)"
else
	expect_rc "fp8-delayed --device cuda" 2
	err_has "fp8-delayed --device cuda: CPU only" "device cpu only"
fi
run bench train --policy bf16-mixed,fp9
expect_rc "bench train --policy bf16-mixed,fp9" 2
err_has "bench --policy fp9: names it" "--policy: unknown policy 'fp9' (known: fp32, bf16-mixed,"
run bench train --threads 1 --reps 1 --policy bf16-mixed,nvfp4+rht=off
expect_rc "bench train --policy bf16-mixed,nvfp4+rht=off: a preset with changes, as train takes it" 0
out_has "bench train: the changed policy's row" "nvfp4+rht=off"
run train --policy list
grep -q "fp8-delayed" "$tmp/out" && grep -q "fp8-current" "$tmp/out"
check "train --policy list: both recipes" $? ""
run train --help
grep -q -- "--tensor-stats" "$tmp/out" && grep -q -- "--amax-history" "$tmp/out"
check "train --help: --tensor-stats and --amax-history" $? ""

echo "# the block recipes: fp8-block, mxfp8, nvfp4"
tiny2="--layers 2 --channels 16 --heads 2 --batch 2 --context 16 --eval-every 0 $data"
run train $tiny2 --steps 2 --policy fp8-block,mxfp8,nvfp4,bf16-mixed --tensor-stats "$tmp/b.csv"
expect_rc "train fp8-block,mxfp8,nvfp4,bf16-mixed" 0
# fp8-block: E4M3 for every tensor (gradients too); its scales and mxfp8's
# (1 / the e8m0 scale) are powers of two; nvfp4: fp4-e2m1, and its last
# block (h.1) is left in bf16, so only h.0's 12 tensors are listed
res=$(awk -F, 'NR > 1 {
	if ($2 == "fp8-block" && $4 != "fp8-e4m3") print $3 ": " $4
	if ($2 == "fp8-block" || $2 == "mxfp8") { x = $6; e = 0; while (x >= 2) { x /= 2; e++ } while (x < 1) { x *= 2; e-- }
		if (x != 1) print $2 " " $3 ": scale " $6 " is not a power of two" }
	if ($2 == "nvfp4") { n++; if ($4 != "fp4-e2m1") print $3 ": " $4; if ($3 !~ /^h\.0\./) print "nvfp4 lists " $3 } }
	END { if (n != 24) print "nvfp4: " n " rows, not 2 steps x 12" }' "$tmp/b.csv")
[ -z "$res" ] && ok "block recipes: formats, power-of-two scales, nvfp4's last block left out" \
	|| bad "block recipes: formats, power-of-two scales, nvfp4's last block left out" "$res"
grep -q "^policy  *cast_over  *cast_under$" "$tmp/out"
check "the summary's casts table" $? "$(cat "$tmp/out")"
[ "$(awk '/cast_over/ { on = 1; next } on && NF == 3 { print $1 }' "$tmp/out" | tr '\n' ' ')" = "fp8-block mxfp8 nvfp4 " ]
check "the casts table lists the scaled policies only" $? "$(cat "$tmp/out")"
# the casts' copies count as activation memory: mxfp8 and nvfp4 gather
# blocks into scratch, bf16-mixed and fp8-delayed have none
res=$(awk '/^policy +master/ { on = 1; next } on && NF == 7 { a[$1] = $7 }
	END { if (!(a["mxfp8"] > a["bf16-mixed"] && a["nvfp4"] > a["bf16-mixed"])) print "acts " a["bf16-mixed"] " " a["mxfp8"] " " a["nvfp4"] }' "$tmp/out")
[ -z "$res" ] && ok "memory: the block casts' scratch is in acts" || bad "memory: the block casts' scratch is in acts" "$res"
run train $tiny2 --steps 1 --policy nvfp4,fp8-delayed --no-rht --no-2d --bf16-last 0 --tensor-stats "$tmp/c.csv"
expect_rc "--no-rht --no-2d --bf16-last 0 with nvfp4,fp8-delayed" 0
cut -d, -f2 "$tmp/c.csv" | sort -u | tr '\n' ' ' | grep -q "fp8-delayed+bf16-last=0 nvfp4+rht=off+2d=off+bf16-last=0 "
check "an nvfp4 part applies to nvfp4 only; bf16-last to both" $? "$(cut -d, -f2 "$tmp/c.csv" | sort -u | tr '\n' ' ')"
run train $tiny2 --steps 1 --policy nvfp4,nvfp4+sr=off+2d=off
expect_rc "--policy nvfp4+sr=off+2d=off" 0
grep -q "^nvfp4+sr=off+2d=off " "$tmp/out"
check "--policy PRESET+KEY=VALUE: the row's name" $? "$(head -12 "$tmp/out")"
run train $tiny2 --steps 1 --policy fp8-delayed --no-rht
expect_rc "--no-rht without nvfp4" 2
err_has "--no-rht without nvfp4: says what it applies to" "no-rht: rht applies to nvfp4 scaling only"
run train $tiny2 --steps 1 --policy nvfp4 --bf16-last 3
expect_rc "--bf16-last 3 of 2 layers" 2
err_has "--bf16-last 3: names the layers" "the model has 2 (--layers)"
run train $tiny2 --steps 1 --policy nvfp4+rht
expect_rc "--policy nvfp4+rht" 2
err_has "--policy nvfp4+rht: KEY=VALUE" "'rht' in policy 'nvfp4+rht' is not KEY=VALUE"
run train $tiny2 --steps 1 --policy mxfp8 --scale-rule round
expect_rc "--scale-rule round" 2
run train $tiny2 --steps 1 --policy nvfp4 --fp8-format hybrid
expect_rc "nvfp4 --fp8-format hybrid" 2
err_has "nvfp4 --fp8-format: fp4, not fp8" "casts to fp4-e2m1"

# --bf16-from N: the steps from N on cast nothing (their casts' columns and
# tensor rows empty), the others' do; a policy without fp8 scaling keeps
# its name; the gradients-over-noise table lists the scaled policies
run train $tiny2 --steps 3 --policy nvfp4,bf16-mixed --bf16-from 2 --grad-noise --csv "$tmp/sw.csv" --tensor-stats "$tmp/sw-t.csv"
expect_rc "--bf16-from 2" 0
res=$(awk -F, 'NR == 1 { if ($12 != "overflow_frac" || $13 != "grad_noise_ratio" || $14 != "wgrad_noise_ratio" || NF != 14)
		print "header " $0; next }
	$2 == "nvfp4+bf16-from=2" && $1 < 2 && !($13 > 1 && $14 > 1 && $12 != "") { print "cast step " $0 }
	$2 == "nvfp4+bf16-from=2" && $1 >= 2 && ($12 != "" || $13 != "" || $14 != "") { print "bf16 step " $0 }
	$2 == "bf16-mixed" && ($12 != "" || $13 != "" || $14 != "") { print "bf16-mixed " $0 }
	$2 != "nvfp4+bf16-from=2" && $2 != "bf16-mixed" { print "name " $2 }' "$tmp/sw.csv")
[ -z "$res" ] && ok "--bf16-from 2: steps 0 and 1 cast, step 2 does not; bf16-mixed untouched" \
	|| bad "--bf16-from 2: steps 0 and 1 cast, step 2 does not; bf16-mixed untouched" "$res"
same "--bf16-from 2: tensor rows for steps 0 and 1 only" "$(cut -d, -f1 "$tmp/sw-t.csv" | sed 1d | sort -u | tr '\n' ' ')" "0 1 "
grep -Eq "^nvfp4\+bf16-from=2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0 +2$" "$tmp/out"
check "the gradients-over-noise table: nvfp4's row, 2 steps cast" $? "$(cat "$tmp/out")"
run train $tiny2 --steps 1 --policy bf16-mixed --bf16-from 1
expect_rc "--bf16-from without fp8 scaling" 2
err_has "--bf16-from without fp8 scaling: says what it applies to" "bf16-from applies to fp8 or fp4 scaling only"
# without --grad-noise nothing is measured: the two ratios empty, no table
run train $tiny2 --steps 2 --policy nvfp4 --csv "$tmp/nn.csv"
expect_rc "nvfp4 without --grad-noise" 0
res=$(awk -F, 'NR > 1 && ($13 != "" || $14 != "") { print }' "$tmp/nn.csv")
[ -z "$res" ] && ok "without --grad-noise: grad_noise_ratio and wgrad_noise_ratio empty" \
	|| bad "without --grad-noise: grad_noise_ratio and wgrad_noise_ratio empty" "$res"
! grep -q "gnr_first" "$tmp/out"
check "without --grad-noise: no gradients-over-noise table" $? "$(cat "$tmp/out")"
run train $tiny2 --steps 1 --policy nvfp4 --bf16-from x
expect_rc "--bf16-from x" 2
err_has "--bf16-from x: names the value" "bf16-from 'x' is not a whole number in 0..100000000"
run train $tiny2 --steps 1 --policy nvfp4+bf16-from=-2
expect_rc "--policy nvfp4+bf16-from=-2" 2
err_has "--policy nvfp4+bf16-from=-2: names the policy" "policy 'nvfp4+bf16-from=-2': bf16-from '-2' is not a whole number"

finish
