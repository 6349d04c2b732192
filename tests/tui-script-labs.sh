#!/bin/sh
# In-process TUI tests of the labs: the Training lab (its runs, exports and
# lessons' blocks equal to mixprec train's records, the GPU key), the
# Loss-scaling lab and the Block explorer, from key scripts rendered
# off-screen by `mixprec tui --keys FILE --dump OUT` (no terminal needed),
# each dumped screen compared with the expected text in tests/tui/NAME.txt.
#
# An expected line that starts with "~" is an extended regular expression for
# the whole line; it is used only where a value is random by design
# (stochastic rounding), drawn by the plot module, which has its own tests,
# or taken from a lesson (its prose, titles and section counts), which the
# lessons' authors edit: the screens check the reader, not the lesson text.
# Every other value on the expected screens was derived by hand; the
# derivations are in the comments below, next to each screen.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

srcdir=${srcdir:-.}
. "$srcdir/tests/harness.sh"
tui_start tuilabs
tui_dumps

# --- Training lab ---
# Two policies, 5 steps at the tiny shape; the table fills with step 5 for
# both, and the CSV export has the train --csv header and 2 x 5 rows. An
# untrained character model predicts about uniformly over 128 symbols: the
# first loss is near ln 128 = 4.85.
script train --start train <<EOF
keys j Space n C-u
type 5
keys Enter f C-u
type $tmp/train.csv
keys Enter s
wait
dump trained
keys e
dump exported
keys f C-u
type /dev/full
keys Enter e
dump full
EOF
has train trained 'done after 5 of 5 steps' "the run finishes its 5 steps"
has train trained '^\*fp32 +[0-9]+\.[0-9]{4} ' "fp32's row shows its loss"
has train trained '^\*bf16-mixed +[0-9]+\.[0-9]{4} ' "bf16-mixed's row shows its loss"
has train trained '^ +\|.*[*+]' "the loss plot has points"
has train exported "wrote 5 steps x 2 policies to $tmp/train.csv" "e exports and says where"
has train full "writing /dev/full: .*No space left" "an export that cannot be written says so"
if [ -f "$tmp/train.csv" ]; then
	head=$(head -n 1 "$tmp/train.csv")
	want='step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,lost_update_frac,resid_lost_frac,ms,overflow_frac,grad_noise_ratio,wgrad_noise_ratio'
	[ "$head" = "$want" ] && ok "train.csv: the train --csv header" || bad "train.csv: the train --csv header" "got $head"
	rows=$(awk -F, 'NR > 1 && ($2 == "fp32" || $2 == "bf16-mixed") && $1 >= 0 && $1 <= 4' "$tmp/train.csv" | wc -l)
	[ "$rows" -eq 10 ] && ok "train.csv: 2 policies x steps 0..4" || bad "train.csv: 2 policies x steps 0..4" "got $rows rows"
	if awk -F, 'NR == 2 { exit !($3 > 4.6 && $3 < 5.1) }' "$tmp/train.csv"; then
		ok "train.csv: the first loss is near ln 128 = 4.85"
	else
		bad "train.csv: the first loss is near ln 128 = 4.85" "$(sed -n 2p "$tmp/train.csv")"
	fi
else
	bad "train.csv was written"
fi

# A lesson's block opened in the Training lab runs exactly its command: the
# block with --resid-offset (found in the lesson file, not typed here) is
# searched for, selected with Tab and opened with Enter; the screen names the
# options, the steps field takes the block's count, and one step run from
# the lab and exported (e) gives the same records as the command itself with
# --steps 1 (same seed: the same bits; only the ms column differs).
blk=$(grep -m 1 '^mixprec train .*--resid-offset' "$srcdir/lessons/residual-drift.md")
blk_steps=$(printf '%s\n' "$blk" | sed -n 's/.*--steps \([0-9]*\).*/\1/p')
script trainblock <<EOF
keys j j j Enter /
type ${blk#mixprec train }
keys Enter Tab Enter
dump opened
keys n C-u
type 1
keys Enter f C-u
type $tmp/block.csv
keys Enter s
wait
keys e
dump ran
EOF
if screen "$tmp/trainblock.out" opened | sed 's/^ //' | tr '\n' ' ' | grep -qF "from the lesson: $blk "; then
	ok "trainblock: the lab shows the block's command in full"
else
	bad "trainblock: the lab shows the block's command in full" "want: $blk"
fi
has trainblock opened "^ steps \\[$blk_steps\\] " "... and takes its --steps $blk_steps"
has trainblock opened "^ CPU the lesson's options: " "... and its model, not the tiny one"
# shellcheck disable=SC2086
"$MIXPREC" ${blk#mixprec } --steps 1 --csv "$tmp/block-cli.csv" >/dev/null 2>&1
if [ -s "$tmp/block.csv" ] && [ -s "$tmp/block-cli.csv" ] &&
	cut -d, -f1-10 "$tmp/block.csv" >"$tmp/block.a" && cut -d, -f1-10 "$tmp/block-cli.csv" >"$tmp/block.b" &&
	cmp -s "$tmp/block.a" "$tmp/block.b"; then
	ok "trainblock: the lab's run equals 'mixprec train <the block's options> --steps 1'"
else
	bad "trainblock: the lab's run equals 'mixprec train <the block's options> --steps 1'" \
		"$(diff "$tmp/block.a" "$tmp/block.b" 2>&1 | head -n 6)"
fi

# The lab reads a block with the same parser as `mixprec train`, so it takes
# the schedule and optimiser options too: the fp32-state lesson's block
# with --lr-schedule cosine --warmup 20 --lr-min 1e-5 opens without an
# error, with its 400 steps, and two steps run from the lab give the records
# of `mixprec train <the block> --stop-at 2` (the first two steps of the
# 400-step schedule, warmup included); the same for the block with --beta2
# 0.999 after one step.
for opt in lr-schedule beta2; do
	blk=$(grep -m 1 "^mixprec train .*--$opt " "$srcdir/lessons/fp32-state.md")
	blk_steps=$(printf '%s\n' "$blk" | sed -n 's/.*--steps \([0-9]*\).*/\1/p')
	if [ $opt = beta2 ]; then n=1; else n=2; fi
	script "sched-$opt" <<EOF
keys j j Enter /
type ${blk#mixprec train }
keys Enter Tab Enter
dump opened
keys n C-u
type $n
keys Enter f C-u
type $tmp/sched-$opt.csv
keys Enter s
wait
keys e
dump ran
EOF
	if screen "$tmp/sched-$opt.out" opened | sed 's/^ //' | tr '\n' ' ' | grep -qF "from the lesson: $blk "; then
		ok "sched-$opt: the lab opens the block with --$opt"
	else
		bad "sched-$opt: the lab opens the block with --$opt" "$(screen "$tmp/sched-$opt.out" opened | tail -n 3)"
	fi
	has "sched-$opt" opened "^ steps \\[$blk_steps\\] " "... and takes its --steps $blk_steps"
	# shellcheck disable=SC2086
	"$MIXPREC" ${blk#mixprec } --stop-at $n --csv "$tmp/sched-$opt-cli.csv" >/dev/null 2>&1
	if [ -s "$tmp/sched-$opt.csv" ] && [ -s "$tmp/sched-$opt-cli.csv" ] &&
		cut -d, -f1-10 "$tmp/sched-$opt.csv" >"$tmp/sched.a" &&
		cut -d, -f1-10 "$tmp/sched-$opt-cli.csv" >"$tmp/sched.b" && cmp -s "$tmp/sched.a" "$tmp/sched.b"; then
		ok "sched-$opt: the lab's first $n step(s) equal 'mixprec train <the block> --stop-at $n'"
	else
		bad "sched-$opt: the lab's first $n step(s) equal 'mixprec train <the block> --stop-at $n'" \
			"$(diff "$tmp/sched.a" "$tmp/sched.b" 2>&1 | head -n 6)"
	fi
done

# The model line has a row of its own, whole at 80 columns (it ran into the
# csv field): the default model (train.h: 4 layers of 128 channels, 4 heads,
# B = 16 sequences of t = 128, lr 1e-3), and the csv field beside the steps.
script trainline --start train <<'EOF2'
keys z
dump default
EOF2
has trainline default '^ CPU default: 4 layers, 128 ch, 4 heads, batch 16x128, lr 0\.001$' "the default model's line is whole"
has trainline default '^ steps \[50\] +csv mixprec-train\.csv$' "the csv field has its own place beside the steps"

# g trains the next run on the GPU: without one it stays on the CPU and the
# message names why (with one, the shape line says GPU)
script traingpu --start train <<'EOF2'
dump before
keys g
dump after
EOF2
has traingpu before 'CPU tiny: 1 layer' "the shape line names the CPU"
if "$MIXPREC" drift --device cuda --steps 1 --elements 1 >/dev/null 2>&1; then
	has traingpu after 'GPU tiny: 1 layer' "g: the next run on the GPU"
else
	has traingpu after 'no GPU to train on: (built without CUDA|no CUDA driver|no CUDA device|.*older than|.*cannot run)' \
		"g without a GPU: says why"
	has traingpu after 'CPU tiny: 1 layer' "g without a GPU: still the CPU"
fi

# --- Memory budget lab: the explanation follows the recipe ---
# The custom model (no shape) leaves three rows between the bar and the
# tiny trainer's comparison at 80x24, where the explanation goes. Its
# figures, by hand from what each recipe keeps: bf16-mixed with Adam is
# fp32 master 4 + bf16 copy 2 + bf16 gradient 2 + fp32 accumulator 4 +
# Adam's m and v 2 x 4 = 20 bytes per parameter; fp32 (one copy, fp32
# gradients and states) is weights 4 + gradients 4 + 2 x 4 = 16; bf16-pure
# (no master, no accumulator, bf16 states; four choices on from fp32) is
# 2 + 2 + 2 x 2 = 8.
script budgetnote --start budget <<'EOF2'
keys h
dump bf16-mixed
keys j j h h
dump fp32
keys l l l l
dump bf16-pure
EOF2
has budgetnote bf16-mixed 'for$' "bf16-mixed: the explanation is on screen at 80x24"
has budgetnote bf16-mixed "^ bf16-mixed with Adam: fp32 master 4, 16-bit working copy 2, 16-bit gradient 2,\$" \
	"bf16-mixed: 4 + 2 + 2 + 4 + 8 ..."
has budgetnote bf16-mixed '20 bytes per parameter\.$' "bf16-mixed: ... = 20 bytes per parameter"
has budgetnote fp32 '^ fp32 with adam: weights 4 \+ gradients 4 \+ optimizer_state 8 = 16 bytes per$' \
	"fp32: its own count, 4 + 4 + 8 = 16"
has budgetnote bf16-pure '^ bf16-pure with adam: weights 2 \+ gradients 2 \+ optimizer_state 4 = 8 bytes per$' \
	"bf16-pure: its own count, 2 + 2 + 4 = 8"
if screen "$tmp/budgetnote.out" fp32 | grep -q 'bf16-mixed with Adam\|20 bytes'; then
	bad "budgetnote: fp32's screen does not explain bf16-mixed"
else
	ok "budgetnote: fp32's screen does not explain bf16-mixed"
fi

# --- Memory budget lab: the serving view (s) ---
# s shows the training view's model served (gpt2-small), h steps back to
# the last preset, llama-3-8b (Meta's config.json: 32 layers, 8 KV heads of
# 128): 2 * 32 * 8 * 128 * 2 = 131072 bytes per token, bf16 weights 2 *
# 8030261248 = 16060522496 bytes; on the default 80 GB at 0.9,
# floor((72e9 - 16060522496) / 2^21) = 26674 blocks of 16 tokens, 426784
# tokens, 52 sequences of 8192 (512 blocks each). Four fields down and four
# choices on, nvfp4: codes 6979321856 / 2 and the 16-bit rest 2 *
# 1050939392 = 5591539712 bytes, scales 6979321856 / 16 + 32 * 7 * 4 =
# 436208512. s again: the training view as it was.
script budgetserve --start budget <<'EOF2'
keys s h
dump llama
keys j j j j l l l l
dump nvfp4
keys s
dump training
EOF2
has budgetserve llama '^ Model +< llama-3-8b > +Weights +< bf16 >' "s: the serving view, h: llama-3-8b"
has budgetserve llama '^ \$ mixprec budget --serve --preset llama-3-8b --context 8192 --batch 1' "... its CLI twin"
has budgetserve llama '^ kv_cache_per_token +131072 ' "... 128 KiB of KV cache per token"
has budgetserve llama '^ weights +16060522496 ' "... bf16 weights"
has budgetserve llama '^ blocks 26674 of 16 tokens +max tokens 426784 +max batch at 8192: 52$' "... 26674 blocks on 80 GB"
has budgetserve nvfp4 '^ Model +< llama-3-8b > +Weights +< nvfp4 >' "nvfp4 four choices on"
has budgetserve nvfp4 '^ weights +5591539712 ' "nvfp4: codes and the 16-bit rest"
has budgetserve nvfp4 '^ weight_scales +436208512 ' "nvfp4: an e4m3 per 16, an fp32 per matrix"
has budgetserve nvfp4 '--weights-dtype nvfp4' "nvfp4: the CLI twin names it"
has budgetserve training '^ Model +< gpt2-small > +ZeRO stage' "s again: the training view"

# --- Loss-scaling lab ---
# Multiplying by S = 2^16 moves every gradient 16 binades up: the share that
# underflows to 0 in fp16 can only shrink, and the markers follow.
script scale --start scale <<'EOF'
wait
dump s1
keys + + + + + + + + + + + + + + + +
dump s65536
keys i i s
wait
dump trace24
keys d
wait
keys d
dump derivation
EOF
has scale derivation '^ 7\.4b  Scaling the loss scales every gradient' "d opens the derivation, exercise 7.4b"
u1=$(screen "$tmp/scale.out" s1 | sed -n 's/.*underflow to 0: \([0-9.]*\)%.*/\1/p')
u16=$(screen "$tmp/scale.out" s65536 | sed -n 's/.*underflow to 0: \([0-9.]*\)%.*/\1/p')
has scale s65536 'loss scale S = 2\^16 = 65536' "+ x16 gives S = 2^16 = 65536"
has scale s1 'min sub.*max' "fp16's min subnormal and max are marked (min normal between them)"
if [ -n "$u1" ] && [ -n "$u16" ] && awk -v a="$u1" -v b="$u16" 'BEGIN { exit !(b <= a) }'; then
	ok "scale: the underflow share falls from $u1% (S=1) to $u16% (S=2^16)"
else
	bad "scale: the underflow share does not grow with S" "S=1: '$u1', S=2^16: '$u16'"
fi

# The dynamic scaler started at 2^24 (i twice, then s): fp16's max is 65504
# < 2^16, so every gradient above 2^16 / 2^24 = 2^-8 overflows when scaled,
# and s1 shows gradients of 2^-8 and more: the first step must be skipped.
# Each skip halves S and growth needs 2000 clean steps, so after K skips in
# 20 steps the last S is 2^(24 - K); the trace plot marks K steps with '+'
# (series 1 in ASCII, drawn over the S line), one per step: 20 steps over
# more than 20 cells never share a cell.
has scale trace24 'dynamic loss scale S per fp16-mixed step, from 2\^24' "the scaler's trace is a plot, from S = 2^24"
has scale trace24 '\+ skipped step' "the trace's legend names the skipped-step marks"
tr=$(screen "$tmp/scale.out" trace24 | sed -n 's/.*dynamic scaler: S 2^24 -> 2^\([0-9]*\) over 20 steps, \([0-9]*\) skipped.*/\1 \2/p')
marks=$(screen "$tmp/scale.out" trace24 | awk '
	/dynamic loss scale S per fp16-mixed step/ { on = 1; next }
	on && /^ *[0-9.e-]*[|+]/ {
		sub(/^ *[0-9.e-]*[|+]/, "")
		if ($0 ~ /^[-+]*$/) next   # the x axis
		n += gsub(/\+/, "")
	}
	END { print n + 0 }')
set -- $tr
if [ $# -eq 2 ] && [ "$2" -ge 1 ] && [ "$1" -eq $((24 - $2)) ] && [ "$marks" -eq "$2" ]; then
	ok "scale: $2 skipped steps from 2^24 end at 2^$1 = 2^(24 - $2), and the plot marks $marks"
else
	bad "scale: the dynamic scaler's trace" "summary '$tr', marks $marks" \
		"$(screen "$tmp/scale.out" trace24 | tail -n 9)"
fi

# --- Block explorer ---
# 7, 0.3, -1.2, 2.5 in MXFP4 (E2M1: magnitudes 0 0.5 1 1.5 2 3 4 6, 6 = 1.5 x 2^2):
# amax 7 = 1.75 x 2^2. OCP: X = 2^(2 - 2) = 2^0, e8m0 127 = 0x7f; ceil: 7 / 6 =
# 1.17 -> 2^1, e8m0 0x80. Under OCP: 7 > 6 saturates to 6 (0 11 1 = 0x7), 0.3 is
# past the midpoint 0.25 -> 0.5 (0x1), -1.2 -> -1 (1 01 0 = 0xa), 2.5 is the tie
# between 2 (code 100) and 3 (101) -> the even code, 2 (0x4); errors 1, 0.2,
# 0.2, 0.5; relative error sqrt(1.33) / sqrt(56.78) = 0.153. Under ceil (V / 2):
# 3.5 ties between 3 and 4 -> 4 (0x6) = 8; 0.15 -> 0 (flushed); -0.6 -> -0.5
# (0x9) = -1; 1.25 ties between 1 and 1.5 -> 1 (0x2) = 2; nothing saturates.
# nvfp4: s_t = 7 / 2688, s_b = e4m3(7 / (6 s_t)) = 448 (0x7e); V / (448 s_t)
# = 6V / 7: 6 (0x7), 0.257 -> 0.5 (0x1), -1.03 -> -1 (0xa), 2.14 -> 2 (0x4).
script block --start block <<'EOF'
keys e
type 7, 0.3, -1.2, 2.5
keys Enter
dump mxfp4
keys r
dump ceil
keys f
dump nvfp4
keys r
dump nvfp4-rule
keys F F
dump mxfp6
keys ?
dump help
keys Esc g
dump gpt
keys j j j j j j j j j j j j j j j j
dump gpt-scrolled
resize 100x30
dump wide
keys e C-u
type 1, inf
keys Enter
dump bad
EOF
expect block mxfp4 block-mxfp4
has block ceil '^ format < mxfp4 >  f   rule < ceil >  r ' "r switches to the ceil rule"
has block ceil '^>   0 7 +0 11 0 +0x6 +8 +1 *$' "ceil: 7 / 2 = 3.5 ties to 4: 0x6 = 8, not saturated"
has block ceil '^    1 0\.3 +0 00 0 +0x0 +0 +0\.3 +flushed$' "ceil: 0.3 / 2 flushes to zero"
has block ceil '^    3 2\.5 +0 01 0 +0x2 +2 +0\.5 *$' "ceil: 1.25 ties to 1: 0x2 = 2"
has block ceil 'saturated 0, flushed to zero 1 of 4' "ceil: nothing saturates, one flushes"
has block nvfp4 '^ format < nvfp4 >  f   rule \(one rule\) +fp4-e2m1, e4m3 scale per 16$' "f switches to nvfp4 (e4m3 scales per 16)"
has block nvfp4 'block scale s_b 448 \(e4m3 0x7e\)' "nvfp4: s_b = 448"
has block nvfp4 '^    1 0\.3 +0 00 1 +0x1 ' "nvfp4: 0.3 -> 0.5 element (0x1)"
has block nvfp4 '^    2 -1\.2 +1 01 0 +0xa ' "nvfp4: -1.2 -> -1 element (0xa)"
has block nvfp4-rule 'nvfp4 has one rule' "r on nvfp4 says it has one rule"
# F F from nvfp4 (mxint8 follows nvfp4): mxfp4, then mxfp6-e2m3 (bias 1, max 7.5 =
# 1.875 x 2^2): X = 2^0 under ocp (floor(log2 7) - 2), ceil (7 / 7.5 -> 2^0), even
# (7 below (2 - 2^-4) x 4 = 7.75) and rceil; torchao-ceil: ceil(log2 7) - 2 = 1.
# 7 = 1.75 x 2^2 fits: exponent field 2 + 1 = 11, fraction .75 = 110: 0 11 110 = 0x1e; 0.3 = 0.25 + 0.05 -> 0 00 010 (subnormal 2/8)
has block mxfp6 '^ format < mxfp6-e2m3 >' "F goes back through the formats"
has block mxfp6 '^>   0 7 +0 11 110 +0x1e +7 +0 *$' "mxfp6-e2m3: 7 is exact (0x1e)"
has block mxfp6 '^    1 0\.3 +0 00 010 +0x02 +0\.25 ' "mxfp6-e2m3: 0.3 -> the subnormal 0.25"
has block mxfp6 'by rule: ocp 0  ceil 0  even 0  rceil 0  torchao-ceil 1$' "... each rule's exponent"
has block help '^ +\| f +next block format \(mxfp8, mxfp6, mxfp4, nvfp4, mxint8\) +\|$' "? lists the block keys"
has block help '^ +\| r +next scale rule \(ocp, ceil, even, rceil, torchao-ceil\) +\|$' "? lists the rules"
# the screen opened on wte row 0 (no values given); g after the typed values loads the next row
has block gpt 'tiny GPT \(seed 1\): wte row 1, values 0\.\.31' "g loads the next row: 32 initial weights of the tiny GPT"
has block gpt 'elements 0-14 of 32' "... and shows the first 15 at 80x24"
has block gpt-scrolled '^>  16 ' "j moves the cursor, the table scrolls"
has block wide 'elements [0-9]+-[0-9]+ of 32' "resized to 100x30 the table grows"
has block wide '^ +i input' "... keeping its header"
has block bad "value 2: 'inf' has no place in a block" "an inf value is refused, naming it"

# The Block explorer keeps what was typed and chosen for the session: the
# values above, switched to nvfp4 (f) and to element 2 (j j), left for Home
# (q) and opened again from there (Tab Tab: the Labs, from the first lesson;
# j x 6: the Block explorer, the seventh lab). The nvfp4 figures are the ones
# derived above: s_b = 448, -1.2 -> -1 (0xa).
script blockkeep --start block <<'EOF'
keys e
type 7, 0.3, -1.2, 2.5
keys Enter f j j q
dump home
keys Tab Tab j j j j j j Enter
dump again
EOF
has blockkeep home '^ mixprec \| Home  ' "q leaves the Block explorer for Home"
has blockkeep again '^ mixprec \| Home > Block explorer ' "Enter on Home's seventh lab opens the Block explorer again"
has blockkeep again '^ Values 7, 0\.3, -1\.2, 2\.5$' "... with the values typed before leaving"
has blockkeep again '^ format < nvfp4 >' "... in the format chosen before leaving"
has blockkeep again 'block scale s_b 448 \(e4m3 0x7e\)' "... quantized as before (s_b = 448)"
has blockkeep again '^>   2 -1\.2 +1 01 0 +0xa ' "... the cursor on element 2, where it was left"

# The Block explorer's model rows are `quantize --from-model`'s: options typed
# in the Values field load row 3 of a tiny checkpoint's wte.weight, and the
# rows on screen (index, element bits, value to 6 digits) and block 0's e8m0
# scale under both rules are those of the command's CSV for the same row
# (under --scale-rule ocp and ceil); g loads row 4, as --row 4 gives it.
"$MIXPREC" train --preset tiny --steps 2 --save "$tmp/m.safetensors" >/dev/null 2>&1
script blockmodel --start block <<EOF
keys e
type --from-model $tmp/m.safetensors --tensor wte.weight --row 3
keys Enter
dump row3
keys g
dump row4
keys e C-u
type --from-model $tmp/m.safetensors --tensor wte --row 3
keys Enter
dump badtensor
EOF
# screen_rows LABEL: "index hex value" of each element row on the screen
screen_rows() {
	screen "$tmp/blockmodel.out" "$1" | awk '/^[> ] +[0-9]+ [-0-9.e]+ +[01 ]+ 0x[0-9a-f]+ / {
		sub(/^[> ] +/, ""); for (i = 3; i <= NF; i++) if ($i ~ /^0x/) { print $1, $i, $(i + 1); break } }'
}
# cli_rows ROW RULE: the same from quantize --from-model's CSV, the first 15
cli_rows() {
	"$MIXPREC" quantize --to mxfp4 --scale-rule "$2" --from-model "$tmp/m.safetensors" --tensor wte.weight --row "$1" --csv |
		awk -F, 'NR > 1 && NR <= 16 { printf "%s %s %.6g\n", $1, $7, $8 }'
}
cli_scale() {
	"$MIXPREC" quantize --to mxfp4 --scale-rule "$2" --from-model "$tmp/m.safetensors" --tensor wte.weight --row "$1" --csv |
		awk -F, 'NR == 2 { print $5 }'
}
for r in 3 4; do
	screen_rows row$r >"$tmp/tui-rows"
	cli_rows $r ocp >"$tmp/cli-rows"
	if [ "$(wc -l <"$tmp/tui-rows")" -eq 15 ] && cmp -s "$tmp/tui-rows" "$tmp/cli-rows"; then
		ok "blockmodel: row $r's 15 rows on screen are quantize --from-model's (bits and values)"
	else
		bad "blockmodel: row $r's rows on screen are quantize --from-model's" "$(diff "$tmp/tui-rows" "$tmp/cli-rows" | head -n 6)"
	fi
	# the e8m0 byte b is 2^(b - 127): the exponent each rule gives, from the command
	eo=$(( $(cli_scale $r ocp) - 127 )) ec=$(( $(cli_scale $r ceil) - 127 ))
	has blockmodel row$r "scale 2\\^$eo = $(cli_scale $r ocp) +by rule: ocp $eo  ceil $ec " \
		"row $r: block 0's scales under both rules are the command's"
	has blockmodel row$r "m\\.safetensors wte\\.weight row $r of 128, 32 values" "row $r: the screen says which file, tensor and row"
done
# (the message takes two status rows; joined, it lists the names)
if screen "$tmp/blockmodel.out" badtensor | tr '\n' ' ' | tr -s ' ' |
	grep -q "tensor: 'wte' is not a weight of $tmp/m.safetensors (known: wte.weight, wpe.weight, h.N.ln_1.weight"; then
	ok "blockmodel: an unknown tensor is refused, listing the known ones"
else
	bad "blockmodel: an unknown tensor is refused, listing the known ones" "$(screen "$tmp/blockmodel.out" badtensor | tail -n 3)"
fi

# A lesson's quantize block opens the Block explorer with its values and options.
script lessonblock <<'EOF'
keys j j j j Enter /
type quantize 7 0.3
keys Enter Tab Enter
dump opened
EOF
has lessonblock opened '^ mixprec \| Home > .* > Block explorer' "Enter on a quantize block opens the Block explorer"
has lessonblock opened '^ Values 7 0\.3 -1\.2 2\.5$' "... with the block's values"
has lessonblock opened '^ format < mxfp4 >  f   rule < ocp >' "... and its format"

# --- glyphs: every dump ASCII in the C locale (tests/tui-script.sh counts
# this check once, for its own dumps; here it speaks only when it fails) ---
if LC_ALL=C grep -q "$(printf '[\200-\377]')" "$tmp"/*.out; then
	bad "C locale: every dump is ASCII" "$(LC_ALL=C grep -l "$(printf '[\200-\377]')" "$tmp"/*.out)"
fi

finish
