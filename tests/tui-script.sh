#!/bin/sh
# In-process TUI tests: key scripts rendered off-screen by
# `mixprec tui --keys FILE --dump OUT` (no terminal needed), each dumped
# screen compared with the expected text in tests/tui/NAME.txt.
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
need_mixprec
expdir=$srcdir/tests/tui

# The ASCII fallback and the monochrome scheme: what the dumps are written in.
LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp tui
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME

# script NAME [OPTIONS...] < KEYS: runs a key script; dumps in $tmp/NAME.out
script() {
	name=$1
	shift
	cat >"$tmp/$name.keys"
	"$MIXPREC" tui --keys "$tmp/$name.keys" --dump "$tmp/$name.out" "$@" </dev/null >"$tmp/$name.stdout" 2>"$tmp/$name.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "$name: the key script exits 0" "got $rc: $(head -c 300 "$tmp/$name.err")"
	fi
}

# screen DUMPFILE LABEL > text of that dump
screen() {
	awk -v l="--- $2 ---" '$0 == l { on = 1; next } /^--- .* ---$/ { on = 0 } on' "$1"
}

# expect SCRIPT LABEL [EXPECTED]: compares a dumped screen with tests/tui/EXPECTED.txt
expect() {
	want=$expdir/${3:-$2}.txt
	screen "$tmp/$1.out" "$2" >"$tmp/got"
	if [ ! -s "$tmp/got" ]; then
		bad "$1: screen '$2' was dumped"
		return
	fi
	if awk -v want="$want" '
		BEGIN { while ((getline l < want) > 0) e[++ne] = l }
		{ a[++na] = $0 }
		END {
			n = ne > na ? ne : na
			for (i = 1; i <= n && bad < 6; i++) {
				x = e[i]; y = a[i]
				if (substr(x, 1, 1) == "~") {
					if (y !~ ("^" substr(x, 2) "$")) {
						printf "line %d: want /%s/\n      got  %s\n", i, substr(x, 2), y; bad++
					}
				} else if (x != y) {
					printf "line %d: want %s\n      got  %s\n", i, x, y; bad++
				}
			}
			exit bad > 0
		}' "$tmp/got" >"$tmp/diff"; then
		ok "$1: screen '$2' as in $(basename "$want")"
	else
		bad "$1: screen '$2' as in $(basename "$want")"
		sed 's/^/     /' "$tmp/diff"
	fi
}

# has SCRIPT LABEL REGEX DESCRIPTION: the dumped screen has a line matching REGEX
has() {
	if screen "$tmp/$1.out" "$2" | grep -Eq -- "$3"; then
		ok "$1: $4"
	else
		bad "$1: $4" "no line of screen '$2' matches /$3/"
		screen "$tmp/$1.out" "$2" | sed 's/^/     | /'
	fi
}

# --- Home, help, a terminal too small, resize ---
# Home lists the lessons with their section counts (the headings of each
# lesson file, counted here with grep) and the seven labs; the ? overlay lists
# the Home keys and then the global ones from the same tables as the keymap.
script home <<'EOF'
dump home
keys ?
dump home-help
keys Esc
resize 60x20
dump too-small
resize 80x24
dump home-again
EOF
expect home home
expect home home-help
# below 80x24: only the message, naming both sizes
expect home too-small
# back at 80x24 the same Home screen again
expect home home-again home
for lesson in mixed-precision fp32-state residual-drift low-precision low-precision-training frontier; do
	n=$(grep -c '^#' "$srcdir/lessons/$lesson.md")
	case $lesson in
	mixed-precision) title='Mixed precision training' ;;
	fp32-state) title='Why fp32 stays' ;;
	low-precision) title='Below 16 bits: formats and scales' ;;
	low-precision-training) title='Training in fp8 and fp4' ;;
	frontier) title='The 4-bit frontier' ;;
	*) title='Why long bf16 runs stall' ;;
	esac
	has home home "$title.* 0/$n sections read" "$lesson: $n sections (its headings), none read"
done

# --- Bit explorer ---
# 0.1: fp32 0x3dcccccd = 0.100000001490116119384765625 (the classic), rel.err
# 1.49e-8, ulp 2^-27 = 7.45e-9; tf32 keeps the top 19 bits: the 13 dropped,
# 0x0ccd, are below half of 0x2000, so 0x3dcc c000 >> 13 = 0x1ee66 =
# 0.0999755859375, as fp16 0x2e66 (both 10 fraction bits), rel.err 2.44e-4,
# ulp 2^-14 = 6.1e-5; bf16 0x3dcd = 0.10009765625 (the fp32 pattern rounded
# up at bit 16: 0xcccd > 0x8000), rel.err 9.77e-4, ulp 2^-11 = 4.88e-4;
# 0.1 = 1.6 * 2^-4: e4m3 (bias 7) 1.625 * 2^-4 = 0.1015625 = 0 0011 101 = 0x1d,
# rel.err 0.0156, ulp 2^-7; e5m2 (bias 15) 1.5 * 2^-4 = 0.09375 = 0 01011 10 =
# 0x2e, rel.err 0.0625, ulp 2^-6 = 0.0156.
# 600 = 1.171875 * 2^9 = 1.0010110b * 2^9: bf16 0 10001000 0010110 = 0x4416,
# fp32 0x44160000, fp16 (bias 15) 0 11000 0010110000 = 0x60b0; e4m3's largest
# value is 448, so 600 overflows to its NaN 0x7f; e5m2 rounds 1.171875 to 1.25:
# 640 = 0x61, rel.err 40/600 = 0.0667, ulp 2^(9-2) = 128. Toggling bf16's last
# bit gives 0x4417 = 604 (the spacing there is 4), rel.err 4/600 = 0.00667.
script bits --start bits <<'EOF'
dump bits-0.1
keys e C-u
type 600
keys Enter j j j
keys l l l l l l l l l l l l l l l Space
dump bits-600-toggled
keys r +
dump next
keys - -
dump prev
keys e C-u
type 1/0x
keys Enter
dump bad-value
EOF
expect bits bits-0.1
expect bits bits-600-toggled
has bits next '^>bf16 .* 0x4417 ' "+ steps bf16 600 to its neighbour 604 = 0x4417"
has bits next '^ += 604 ' "... whose value is 604"
has bits prev '^>bf16 .* 0x4415 ' "- - steps back past 600 to 596 = 0x4415"
has bits prev '^ += 596 ' "... whose value is 596"
has bits bad-value '1/0x' "a malformed value is reported, the text kept for editing"

# The fp6, fp4, FNUZ and e8m0 formats, below fp8-e5m2, reached by scrolling (six formats fit
# at 80x24). 0.1 in fp4-e2m1 is 0 (below 0.25, half the min subnormal 0.5):
# 0x0. In e8m0 it is 2^-3 = 0x7c (above 0.09375, the midpoint of 2^-4 and
# 2^-3), eight exponent bits and no sign bit. fp8-e4m3fnuz (shown by its
# alias) has bias 8: 0.1 = 1.625 * 2^-4 = 0 0100 101. nan has no fp4 code.
script bitsnew --start bits <<'EOF'
keys j j j j j j j j j j j
dump e8m0
keys e C-u
type nan
keys Enter
dump nan
EOF
has bitsnew e8m0 'class  7-12 of 12$' "scrolled to the last six of the twelve formats"
has bitsnew e8m0 '^>e8m0     01111100  +0x7c  +normal' "e8m0: 0.1 -> 2^-3 = 0x7c, eight exponent bits, no sign"
has bitsnew e8m0 '^ fp4-e2m1 0 00 0  +0x0  +zero' "fp4-e2m1: 0.1 -> 0 = 0x0"
has bitsnew e8m0 '^ e4m3fnuz 0 0100 101  +0x25 ' "fp8-e4m3fnuz: 0.1 -> 0 0100 101 = 0x25"
has bitsnew nan '^ fp4-e2m1 .* no encoding$' "nan: fp4-e2m1 has no encoding for it"
has bitsnew nan '^>e8m0 .* 0xff  +nan$' "nan: e8m0's NaN 0xff"

# --- Drift lab ---
# dist constant, mean 0.5, x0 600, 10,000 steps: fp64 and fp32 add every 0.5
# exactly (600 + 5000 = 5600 < 2^13 needs 13 of fp32's 24 bits): drift 5000,
# retained 1, unchanged 0. bf16's spacing at 600 is 4: 600.5 rounds back to
# 600 every time: drift 0, unchanged 1. fp16's spacing is 0.5 up to 1024 and 1
# above, where 1024.5 is a tie that goes to the even 1024: the value stops
# after (1024 - 600) / 0.5 = 848 steps, drift 424, retained 424/5000 = 0.0848,
# unchanged (10000 - 848)/10000 = 0.9152. Stochastic rounding is unbiased and
# Kahan's compensation recovers the lost parts: both within 1% of 5000.
script drift --start drift <<'EOF'
keys j j j j Enter s
wait
dump drift-constant
EOF
expect drift drift-constant

# A value is checked as it is entered: 'abc' for std is refused at once (the
# field stays open, the reason on the status line, wrapped rather than cut at
# 80 columns: it ends in "inf or nan)"), as is a step count of 1e9999.
# Leaving the lab (Esc) and opening it again from Home keeps what was typed
# (std 0.25), for the rest of the session.
script driftkeep <<'EOF'
keys j j j j j j j j j Enter
keys j j j j j j Enter C-u
type abc
keys Enter
dump bad-std
keys C-u
type 0.25
keys Enter k k k k k Enter C-u
type 1e9999
keys Enter
dump bad-steps
keys Esc Esc
dump left
keys Enter
dump back
EOF
has driftkeep bad-std "^ std: 'abc': not a number" "std 'abc' is refused on Enter"
has driftkeep bad-std 'inf or nan\)$' "... the whole message is shown, wrapped"
has driftkeep bad-std '^ dist <[a-z]+> +mean \[0\.5\] +std abc' "... and the field stays open for editing"
has driftkeep bad-steps "^ steps: '1e9999' is not a whole number in 1\.\.100000000" "steps 1e9999 is refused on Enter"
has driftkeep left '^ mixprec \| Home ' "Esc Esc leaves the lab"
has driftkeep back '^ dist <[a-z]+> +mean \[0\.5\] +std \[0\.25\]' "reopened, the lab keeps std 0.25"
has driftkeep back '^ x0 \[600\] +steps \[10000\] ' "... and steps its valid 10000"

# --- Lesson reader: search, a runnable claim opens its lab ---
# The search puts the line with "zero 3" at the top, Tab selects that claim
# (the position line's numbers follow the lesson's length, so only its form
# is checked),
# Enter opens the Memory budget lab with --preset llama-7b --zero 3 --gpus 8.
# llama-7b: 6.7e9 parameters; bf16-mixed keeps 4 + 2 + 2 + 4 + 8 = 20 bytes a
# parameter: 26.8, 13.4, 13.4, 26.8 and 53.6 GB (GiB = GB / 1.073741824);
# ZeRO-3 over 8 GPUs shards all of it: 3.35, 1.675, 1.675, 3.35, 6.7 GB per GPU.
# Activations (Korthikanti et al.: s*b*h*(34 + 5*a*s/h) bytes per layer,
# s 2048, b 1, h 4096, a 32): 8388608 * 114 = 956301312 bytes, x 32 layers =
# 30.602 GB, 4.57 bytes a parameter, never sharded: 16.75 + 30.602 = 47.352 GB
# per GPU = 44.100 GiB; the whole replica 134 + 30.602 = 164.602 GB.
# Below, mixprec train's GPT (V 128, T 128, C 128, 4 layers: embeddings
# 2 * 128 * 128, per layer 4C + (3C*C + 3C) + (C*C + C) + (4C*C + 4C) +
# (4C*C + C) = 198272, final LayerNorm 2C: 826112 parameters) under
# bf16-mixed keeps 4, 2, 2, 4 and 8 bytes of each: 3.30, 1.65, 1.65, 3.30 and
# 6.61 MB, as the formula says for 826112 parameters; the activations as
# allocated are only checked for their form here (their formula, 135.45 MB,
# is checked against the allocation in test_budget.c).
script lesson <<'EOF'
keys Enter /
type zero 3
keys Enter Tab
dump lesson-zero3
keys Enter
wait
dump budget-zero3
keys k Enter C-u
type none
keys Enter
dump budget-noshape
EOF
# (the lesson's prose around the block is not compared: lessons change)
has lesson lesson-zero3 '^ > \$ mixprec budget --preset llama-7b --zero 3 --gpus 8$' "the search puts the block at the top, Tab selects it"
has lesson lesson-zero3 '^ >   Tab selects, Enter opens it in the Memory budget lab$' "... and says what Enter does"
# the reader's last row fits 80 columns: the position, then the key
# reminders in their short form (the full form ran out at "n: next")
has lesson lesson-zero3 '^ mixed-precision  section [0-9]+/[0-9]+  line [0-9]+/[0-9]+  [0-9]+%  Tab: claims  n: next$' "the status line fits, its reminders shortened"
expect lesson budget-zero3
# without a shape there are no activations: 20 bytes x 6.7e9 = 134 GB
# (124.797 GiB), all of it sharded over 8 GPUs: 16.750 GB each
has lesson budget-noshape '^ total +20\.00 +134\.000 +124\.797 +16\.750$' "Shape 'none': 134 GB, 16.75 GB per GPU"

# The fp32 recipe (Recipe, Left twice from bf16-mixed): one weight copy of
# 826112 x 4 bytes = 3.30 MB, the weights the GEMMs read; trainer and formula
# put it in the same column (working), with no master. Activations: the
# formula of budget/tinygpt.h for the trainer's default shape is 135454720
# bytes = 135.45 MB (derived by hand in test_budget.c, which also checks it
# against the trainer's allocation), in both rows.
script memfp32 --start budget <<'EOF'
wait
keys j j h h
dump fp32
EOF
has memfp32 fp32 '^ Recipe +< fp32 >' "Left twice picks the fp32 recipe"
has memfp32 fp32 '^ mixprec train, MB +0\.00 +3\.30 +3\.30 +0\.00 +6\.61 +135\.45$' "the trainer's fp32 copy in the working column"
has memfp32 fp32 '^ formula, MB +0\.00 +3\.30 +3\.30 +0\.00 +6\.61 +135\.45$' "... where the formula has it, and the activation formula beside the allocation"

# --- Progress and resume ---
# Reading the first pages of a lesson marks its sections read; the state
# survives the program and r resumes at the same line.
script progress <<'EOF'
keys j j Enter Space Space
dump reading
keys q
dump home-after
EOF
top=$(screen "$tmp/progress.out" reading | sed -n 's/.*line \([0-9]*\)\/.*/\1/p')
has progress home-after "^  [> ] \\[~\\] Why long bf16 runs stall.* [1-8]/9 sections read" "a lesson read in part is marked [~]"
has progress home-after "r: resume residual-drift at line $top\$" "Home offers to resume at line $top"
if grep -q '^resume residual-drift$' "$XDG_STATE_HOME/mixprec/tui-state" 2>/dev/null; then
	ok "progress: written to \$XDG_STATE_HOME/mixprec/tui-state"
else
	bad "progress: written to \$XDG_STATE_HOME/mixprec/tui-state" "$(cat "$XDG_STATE_HOME/mixprec/tui-state" 2>&1)"
fi
if grep -q '^lesson:residual-drift#1,0,1,0$' "$XDG_STATE_HOME/mixprec/progress.csv" 2>/dev/null; then
	ok "progress: the sections read are in progress.csv (lesson:residual-drift#1 ...)"
else
	bad "progress: the sections read are in progress.csv" "$(cat "$XDG_STATE_HOME/mixprec/progress.csv" 2>&1)"
fi
script resume <<'EOF'
keys r
dump resumed
EOF
has resume resumed "residual-drift  section [0-9]+/9  line $top/" "a new run's r reopens the lesson at line $top"

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
EOF
has train trained 'done after 5 of 5 steps' "the run finishes its 5 steps"
has train trained '^\*fp32 +5 +[0-9]+\.[0-9]{4} ' "fp32's row shows step 5"
has train trained '^\*bf16-mixed +5 +[0-9]+\.[0-9]{4} ' "bf16-mixed's row shows step 5"
has train trained '^ +\|.*[*+]' "the loss plot has points"
has train exported "wrote 5 steps x 2 policies to $tmp/train.csv" "e exports and says where"
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
keys j j Enter /
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
keys j Enter /
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

# --- Exercises at 80x24: a field label too long for its row ---
# 7.4b's longest field name is unscaled_flushes (16): answers from column
# 3 + 16 + 1 = 20, 22 wide, labels from 20 + 22 + 1 = 43 with 80 - 43 - 1 = 36
# columns: "step 2: what every gradient is multiplied by" (44) keeps 35 and an
# ellipsis ("~" in ASCII); the current field's label follows in full.
script cut --start exercises <<'EOF'
wait
keys Down Down Down Enter
wait
keys j
dump factor
EOF
has cut factor '^ > factor +\.{22} step 2: what every gradient is mult~$' "a label cut short at 80 columns ends in an ellipsis"
has cut factor '^   step 2: what every gradient is multiplied by$' "the current field's label is shown in full"

# greedy SCRIPT LABEL START WIDTH DESCRIPTION: from the first line matching
# START to the next blank line, a paragraph is filled greedily at WIDTH
# columns (from column 3): no line could have taken the next line's first
# word, so no break comes from the source file's own line length.
greedy() {
	if screen "$tmp/$1.out" "$2" | awk -v start="$3" -v w="$4" '
		!on && $0 ~ start { on = 1; match($0, /^ */); ind = RLENGTH }
		on && (/^ *$/ || (match($0, /^ */) && RLENGTH != ind && n > 0 && RLENGTH < ind)) { exit }
		on {
			sub(/^ +/, ""); n++
			if (n > 1) { split($0, f, " "); if (length(prev) + 1 + length(f[1]) <= w) { bad = 1; print prev " | " f[1] } }
			prev = $0
		}
		END { exit bad || n < 2 }' >"$tmp/greedy"; then
		ok "$1: $5"
	else
		bad "$1: $5" "$(cat "$tmp/greedy")"
	fi
}

# --- Exercises at 80x24: every hint in reach, text filled to the width ---
# 7.4d has three hints; with all three shown they no longer fit below its
# eight fields: the page scrolls so that the newest is in view (h), K scrolls
# back up to the prompt, and J past the end stops at the last page instead
# of a blank one. Hints and the worked solution are filled to the screen's
# width (76 columns from column 3; the solution's prose 77 from column 2),
# not broken where the exercise file breaks them.
script exscroll --start exercises <<'EOF'
wait
keys j j j j j Enter h h h
dump hints
keys K K K K K K
dump top
keys J J J J J J J J J J J J J J J J J J J J
dump bottom
keys w J J J J J J J J J J J J J J J J J J J J J J J J J J J J J J
dump worked-end
keys w K K K K K K K K k k k k k k k k
keys Up Up Up Up Up Up Up Up
EOF
has exscroll hints '^   Hint 3 of 3: ' "h h h: the third hint is in view"
has exscroll hints 'J/K scroll 100%$' "... the page says it scrolls, and is at its end"
has exscroll top '^ 7\.4d  ' "K scrolls back to the top"
has exscroll top '^   Hint 1 of 3: ' "... where the first hint is"
has exscroll bottom '^   Hint 3 of 3: ' "J past the end stops at the last page"
greedy exscroll hints '^   Hint 3 of 3: ' 76 "hint 3 is filled to the width, not the file's line breaks"
greedy exscroll top '^   Hint 1 of 3: ' 76 "hint 1 likewise"
n=$(screen "$tmp/exscroll.out" worked-end | sed '1d;$d' | sed '$d' | grep -c '[^ ]')
if [ "$n" -ge 12 ]; then
	ok "exscroll: J past the worked solution's end keeps its last page ($n lines)"
else
	bad "exscroll: J past the worked solution's end keeps its last page" "$n non-blank lines"
fi
has exscroll worked-end 'J/K scroll 100%$' "... at 100%"
# 7.4a's solution opens with a paragraph of prose the engine wraps at its
# own width: on screen it is refilled at 77 columns from column 2.
script exflow --start exercises <<'EOF'
wait
keys j j Enter w
dump worked
keys w
type zz
keys Enter
dump malformed
EOF
greedy exflow worked '^  [A-Z]' 77 "the worked solution's prose is filled to the width"
# an answer that is not a number at all: the verdict fits its 11 columns
has exflow malformed '^ > fp16_min_normal zz\.* x malformed ' "a malformed answer says so in full"

# --- Exercises: wrong, then right ---
# 7.4d for the default variant V = 0.1: fp16 0.1 is 0x2e66 (see the Bit
# explorer above); 0x2e67 is its upper neighbour, which the engine recognises
# as rounding the wrong way. The answer is checked on Enter.
script exercise --start exercises <<'EOF'
dump loading
wait
keys j j j j j Enter
dump ex-7.4d
type 0x2e67
keys Enter
dump ex-wrong
keys e C-u
type 0x2e66
keys Enter
dump ex-right
keys h
dump ex-hint
EOF
has exercise loading 'Loading the exercises' "the list loads in the background, saying so"
has exercise ex-7.4d '^ 7\.4d  Round a value by hand to fp16, bf16 and fp32' "the list opens exercise 7.4d"
has exercise ex-7.4d 'Round V = 0\.1 by hand' "the prompt has the default variant, V = 0.1"
has exercise ex-wrong '^ > fp16_bits +0x2e67\.* x wrong ' "0x2e67: wrong"
has exercise ex-wrong 'other neighbour' "... and the feedback names the mistake (the other neighbour)"
has exercise ex-right '^   fp16_bits +0x2e66\.* \* right ' "0x2e66: right"
has exercise ex-right '^ > bf16_bits ' "the cursor moves on to the next field"
has exercise ex-right '^ fp16_bits right; the cursor moved on to bf16_bits$' "... and the status line says so"
has exercise ex-hint 'Hint 1 of 3: Start with the exponent of 0\.1: between' "h shows the first hint, with V filled in"

# 7.4f's steps field is optional: the right stall value alone solves it
# (bf16, beta2 = 0.995 by default: v stops at 0.609375, derived in
# tests/test_exercise_premise.c).
script optional --start exercises <<'EOF'
wait
keys j j j j j j j Enter
dump ex-7.4f
type 0.609375
keys Enter
dump ex-solved
EOF
has optional ex-7.4f '^ 7\.4f  ' "the list opens exercise 7.4f"
has optional ex-solved 'Solved: every required field right' "the stall value alone solves it: steps is optional"

# --- the hand-rounding lab: one checked step at a time ---
# 0.1 to fp16 (derived in tests/cli.sh too): 0.1 = 1.6 * 2^-4, e = -4, field
# -4 + 15 = 11; 1.6 = 1.1001100110|011...b: the kept fraction 1001100110,
# guard 0, round 1, sticky 1, so no rounding up; 0 01011 1001100110 = 0x2e66.
# Only the first step is shown at first; a wrong step keeps the next one
# hidden. Field names are up to 14 wide (fp16_exp_field): answers from
# 3 + 14 + 1 = 18, 22 wide, a verdict from 41 (12 columns), labels from 53
# with 80 - 53 - 1 = 26 columns: a longer label keeps 25 and ends in "~" (the
# ASCII ellipsis), and the current field's label follows in full under the
# fields ("the exponent field, e + 15, as a number", "the fp16 bit pattern of
# 0.1").
script handround --start handround <<'EOF'
dump hr-start
type -4
keys Enter
type 10
keys Enter
dump hr-wrong
keys e C-u
type 11
keys Enter
type 1001100110
keys Enter
type 1
keys Enter
keys e C-u
type 0
keys Enter
type 1
keys Enter
type 1
keys Enter
type no
keys Enter
type 0x2e66
keys Enter
dump hr-solved
keys q j j j j j j Enter
wait
dump list-after
EOF
expect handround hr-start
expect handround hr-wrong
expect handround hr-solved
has handround list-after '^ > \[\*\] round\.1 ' "the Exercises list marks round.1 solved"
if grep -q '^exercise:round\.1,' "$XDG_STATE_HOME/mixprec/progress.csv" 2>/dev/null; then
	ok "handround: progress recorded in progress.csv, as mixprec check records it"
else
	bad "handround: progress recorded in progress.csv" "$(cat "$XDG_STATE_HOME/mixprec/progress.csv" 2>&1)"
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
# F F from nvfp4: mxfp4, then mxfp6-e2m3 (bias 1, max 7.5 = 1.875 x 2^2): X = 2^0
# under both rules (7 / 7.5 -> 2^0); 7 = 1.75 x 2^2 fits: exponent field 2 + 1 = 11,
# fraction .75 = 110: 0 11 110 = 0x1e; 0.3 = 0.25 + 0.05 -> 0 00 010 (subnormal 2/8)
has block mxfp6 '^ format < mxfp6-e2m3 >' "F goes back through the formats"
has block mxfp6 '^>   0 7 +0 11 110 +0x1e +7 +0 *$' "mxfp6-e2m3: 7 is exact (0x1e)"
has block mxfp6 '^    1 0\.3 +0 00 010 +0x02 +0\.25 ' "mxfp6-e2m3: 0.3 -> the subnormal 0.25"
has block mxfp6 'ceil 2\^0 = e8m0 0x7f  \(the same\)' "... where both rules give one scale"
has block help '^ +\| f +next block format \(mxfp8, mxfp6, mxfp4, nvfp4\) +\|$' "? lists the block keys"
# the screen opened on wte row 0 (no values given); g after the typed values loads the next row
has block gpt 'tiny GPT \(seed 1\): wte row 1, values 0\.\.31' "g loads the next row: 32 initial weights of the tiny GPT"
has block gpt 'elements 0-14 of 32' "... and shows the first 15 at 80x24"
has block gpt-scrolled '^>  16 ' "j moves the cursor, the table scrolls"
has block wide 'elements [0-9]+-[0-9]+ of 32' "resized to 100x30 the table grows"
has block wide '^ +i input' "... keeping its header"
has block bad "value 2: 'inf' has no place in a block" "an inf value is refused, naming it"

# A lesson's quantize block opens the Block explorer with its values and options.
script lessonblock <<'EOF'
keys j j j Enter /
type quantize 7 0.3
keys Enter Tab Enter
dump opened
EOF
has lessonblock opened '^ mixprec \| Home > .* > Block explorer' "Enter on a quantize block opens the Block explorer"
has lessonblock opened '^ Values 7 0\.3 -1\.2 2\.5$' "... with the block's values"
has lessonblock opened '^ format < mxfp4 >  f   rule < ocp >' "... and its format"

# --- the mouse ---
# Home's "Bit explorer" row is screen row 12 (title bar, a blank, "Lessons",
# six lessons, "Exercises", its item, "Labs": with six lessons the groups
# lose their blank lines to fit 80x24); in the explorer bf16 is the fourth format, its
# bits on screen row 2 + 1 + 3 * 3 = 12: sign at column 10, a blank, 8 exponent
# bits at 12..19, a blank, 7 fraction bits at 21..27. Clicking column 27 and
# pressing Space flips bf16's last bit: 0x3dcd (0.1) becomes 0x3dcc =
# 1.1001100b * 2^-4 = 1.59375 / 16 = 0.099609375. The wheel scrolls a lesson
# by three lines.
script mouse <<'EOF'
click 10 12
dump clicked
click 27 12
keys Space
dump bit-clicked
keys q
keys k k Enter g
wheel down
dump wheel
EOF
has mouse clicked 'Home > Bit explorer' "a click on Home opens the Bit explorer"
has mouse bit-clicked '^>bf16 .* 0x3dcc ' "a click on bf16's last bit and Space give 0x3dcc"
has mouse bit-clicked '= 0\.099609375 ' "... = 0.099609375"
has mouse wheel 'line 4/' "the wheel scrolls the lesson three lines"

# --- glyphs: ASCII in the C locale, braille under UTF-8 ---
if LC_ALL=C grep -q "$(printf '[\200-\377]')" "$tmp"/*.out; then
	bad "C locale: every dump is ASCII" "$(LC_ALL=C grep -l "$(printf '[\200-\377]')" "$tmp"/*.out)"
else
	ok "C locale: every dump is ASCII"
fi
if locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$'; then
	# in colour (NO_COLOR empty): without colour the marks replace braille, below
	NO_COLOR= LC_ALL=C.UTF-8 script utf8 --start drift <<'EOF'
keys j Enter C-u
type 200
keys Enter s
wait
dump utf8
EOF
	# U+2800..U+28FF (braille) are e2 a0..a3 xx in UTF-8
	if LC_ALL=C grep -q "$(printf '\342[\240-\243]')" "$tmp/utf8.out"; then
		ok "UTF-8 locale: the plot is drawn in braille"
	else
		bad "UTF-8 locale: the plot is drawn in braille"
	fi
else
	echo "skip UTF-8 locale check: no C.UTF-8 locale"
fi

# Without colour but in a UTF-8 locale the plot view still tells the six
# variants apart: the legend shows each one's mark (the ASCII marks of the
# plot module: * + o x # @ for series 1 to 6), not six identical line
# swatches, and the data area uses those marks instead of braille dots
# (U+2800..U+28FF: bytes e2 a0..a3).
if locale -a 2>/dev/null | grep -qi '^c\.utf-\{0,1\}8$'; then
	LC_ALL=C.UTF-8
	export LC_ALL
	script driftmono --start drift <<'EOF'
keys j j j j Enter s
wait
dump mono
EOF
	LC_ALL=C
	export LC_ALL
	has driftmono mono '^\*\* fp64   \+\+ fp32   oo bf16-rne   xx bf16-sr   ## bf16-kahan   @@ fp16-rne$' \
		"UTF-8, NO_COLOR: the legend shows each variant's mark"
	if screen "$tmp/driftmono.out" mono | LC_ALL=C grep -q "$(printf '\342[\240-\243]')"; then
		bad "driftmono: no braille dots without colour"
	else
		ok "driftmono: no braille dots without colour"
	fi
	has driftmono mono '[└]' "... while the axes stay box-drawing (UTF-8)"
else
	echo "skip driftmono: no C.UTF-8 locale"
fi


# --- errors ---
printf 'keys j\nkeys Bogus\n' >"$tmp/bad.keys"
"$MIXPREC" tui --keys "$tmp/bad.keys" --dump "$tmp/bad.out" </dev/null >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "bad.keys:2: unknown key 'Bogus'" "$tmp/err"; then
	ok "a bad key script: exit 2 naming file:line"
else
	bad "a bad key script: exit 2 naming file:line" "rc $rc: $(cat "$tmp/err")"
fi
"$MIXPREC" tui --keys "$tmp/none.keys" </dev/null >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 3 ] && grep -q "none.keys" "$tmp/err" && ok "an unreadable key script: exit 3" ||
	bad "an unreadable key script: exit 3" "rc $rc: $(cat "$tmp/err")"
"$MIXPREC" tui --size 80 </dev/null >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--size: '80'" "$tmp/err" && ok "tui --size 80: exit 2 naming the option" ||
	bad "tui --size 80: exit 2 naming the option" "rc $rc: $(cat "$tmp/err")"
"$MIXPREC" tui --start nowhere </dev/null >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--start: unknown screen 'nowhere'" "$tmp/err" && ok "tui --start nowhere: exit 2" ||
	bad "tui --start nowhere: exit 2" "rc $rc: $(cat "$tmp/err")"
# no command and no terminal: the workbench refuses and points at the CLI
"$MIXPREC" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "mixprec --help" "$tmp/err" && [ ! -s "$tmp/out" ] &&
	ok "mixprec without a terminal: exit 2, pointing at 'mixprec --help'" ||
	bad "mixprec without a terminal: exit 2, pointing at 'mixprec --help'" "rc $rc: $(cat "$tmp/err")"
"$MIXPREC" tui --help >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^Usage: mixprec \[tui\]' "$tmp/out" && ok "tui --help" || bad "tui --help" "rc $rc"

# --- the keys as documented: README's list is the program's own ---
"$MIXPREC" tui --list-keys >"$tmp/keys" 2>&1
awk '/^<!-- keys:begin -->$/ { on = 1; next } /^<!-- keys:end -->$/ { on = 0 } on && !/^```$/' \
	"$srcdir/README.md" >"$tmp/readme-keys"
if [ -s "$tmp/keys" ] && cmp -s "$tmp/keys" "$tmp/readme-keys"; then
	ok "README lists every key as the keymaps have them (tui --list-keys)"
else
	bad "README lists every key as the keymaps have them (tui --list-keys)" \
		"$(diff "$tmp/readme-keys" "$tmp/keys" | head -n 8)"
fi

finish
