#!/bin/sh
# CLI tests of mixprec drift, train and gradhist at tiny shapes: their CSVs,
# options and errors, the lr schedule, optimiser state, residual offsets,
# progress lines, drift --ema, train --preset tiny (and the Training lab's
# export of it), and --device cuda (the CPU's bytes, or exit 3 naming why).
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

make_tmp train
private_state

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
# every preset listed
for p in $("$MIXPREC" train --policy nosuch 2>&1 | sed -n 's/.*(known: \(.*\)).*/\1/p' | tr -d ','); do
	grep -q -- "$p" "$tmp/out" || bad "train --help lists $p"
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
