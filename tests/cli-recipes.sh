#!/bin/sh
# CLI tests of the per-tensor fp8 scaling recipes of issue 15 (fp8-delayed,
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

run() {
	"$MIXPREC" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

check() {
	if [ "$2" -eq 0 ]; then ok "$1"; else bad "$1" "$3"; fi
}

expect_rc() {
	[ "$rc" -eq "$2" ]
	check "$1: exit $2" $? "got exit $rc; stderr: $(head -c 300 "$tmp/err")"
}

err_has() {
	grep -q -- "$2" "$tmp/err"
	check "$1" $? "stderr: $(head -c 300 "$tmp/err")"
}

data="--data ${srcdir:-.}/data/corpus.txt"
tiny="--layers 1 --channels 16 --heads 2 --batch 2 --context 16 --eval-every 0 $data"

echo "# train --csv and --tensor-stats"
run train $tiny --steps 3 --policy fp8-delayed,fp8-current,bf16-mixed --csv "$tmp/t.csv" --tensor-stats "$tmp/s.csv"
expect_rc "train fp8-delayed,fp8-current,bf16-mixed" 0
[ "$(head -1 "$tmp/t.csv")" = "step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,lost_update_frac,resid_lost_frac,ms,overflow_frac" ]
check "train --csv: overflow_frac is the last column" $? "$(head -1 "$tmp/t.csv")"
res=$(awk -F, 'NR > 1 { if (NF != 12) print "row " NR ": " NF " fields"
	if ($2 == "bf16-mixed" && $12 != "") print "row " NR ": bf16-mixed overflow_frac " $12
	if ($2 != "bf16-mixed" && ($12 == "" || $12 < 0 || $12 > 1)) print "row " NR ": overflow_frac " $12 }' "$tmp/t.csv")
[ -z "$res" ] && ok "train --csv: 12 fields; overflow_frac a fraction for fp8, empty for bf16-mixed" \
	|| bad "train --csv: 12 fields; overflow_frac a fraction for fp8, empty for bf16-mixed" "$res"

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
err_has "--amax-history 0: names the option and the range" "--amax-history.*1..1024"
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
err_has "bench --policy fp9: names it and the presets" "'fp9'.*fp8-delayed"
run train --policy list
grep -q "fp8-delayed" "$tmp/out" && grep -q "fp8-current" "$tmp/out"
check "train --policy list: both recipes" $? ""
run train --help
grep -q -- "--tensor-stats" "$tmp/out" && grep -q -- "--amax-history" "$tmp/out"
check "train --help: --tensor-stats and --amax-history" $? ""

finish
