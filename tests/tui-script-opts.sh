#!/bin/sh
# Each lab opens a lesson's block with the values the CLI's parser reads
# from it: blocks of every lab (drift, budget, quantize, bits/round), found in
# the lesson file (not typed here), searched for in the lesson reader,
# selected with Tab and opened with Enter; the fields shown are the block's
# words. Key scripts rendered off-screen (`mixprec tui --keys`).
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

srcdir=${srcdir:-.}
. "$srcdir/tests/harness.sh"
tui_start tuiopts
tui_dumps

# word OPT LINE: the value after OPT in LINE
word() {
	printf '%s\n' "$2" | sed -n "s/.* $1 \([^ ]*\).*/\1/p"
}

# open_block NAME KEYS LINE: opens the block LINE of the lesson that KEYS
# select on Home (Enter: the first lesson, j Enter the second, ...; the
# second is memory-at-scale, so fp32-state is j j Enter)
open_block() {
	script "$1" <<EOF
keys $2 /
type ${3#mixprec }
keys Enter Tab Enter
wait
dump opened
EOF
}

# --- Drift lab: fp32-state's block with every field given (the third lesson) ---
blk=$(grep -m 1 '^mixprec drift --x0 .*--mean .*--std .*--steps .*--elements ' "$srcdir/lessons/fp32-state.md")
open_block drift 'j j Enter' "$blk"
steps=$(word --steps "$blk")
has drift opened '^ mixprec \| Home > Lesson > Drift lab' "a drift block opens the Drift lab"
has drift opened "^ x0 \\[$(word --x0 "$blk")\\] +steps \\[$steps\\] +elements \\[$(word --elements "$blk")\\] " \
	"... with its --x0, --steps and --elements"
# the shortest text of the block's mean: 1e-5 reads as 1e-05
has drift opened "^ dist <$(word --dist "$blk")> +mean \\[$(word --mean "$blk" | sed 's/e-\([1-9]\)$/e-0\1/')\\] +std \\[$(word --std "$blk")\\]" \
	"... its --dist, --mean and --std"
has drift opened "done after $steps of $steps steps" "... and runs it"

# --- Memory budget lab: mixed-precision's block with a named model, ZeRO and GPUs ---
blk=$(grep -m 1 '^mixprec budget --preset [^ ]* --zero [0-9] --gpus [0-9]*$' "$srcdir/lessons/mixed-precision.md")
open_block budget Enter "$blk"
has budget opened '^ mixprec \| Home > Lesson > Memory budget lab' "a budget block opens the Memory budget lab"
has budget opened "^ Model +< $(word --preset "$blk") > +ZeRO stage +< $(word --zero "$blk") >" "... with its --preset and --zero"
has budget opened "^ Params +\[[0-9.e+]*\] +GPUs +\[$(word --gpus "$blk")\]" "... and its --gpus"
blk=$(grep -m 1 '^mixprec budget --params [^ ]* --convention deepspeed .*--offload ' "$srcdir/lessons/mixed-precision.md")
open_block budgetds Enter "$blk"
has budgetds opened "^ Params +\[$(word --params "$blk")\] +GPUs +\[$(word --gpus "$blk")\]" "a --params block: its --params as typed, its --gpus"
has budgetds opened "^ Recipe +< [a-z0-9-]* > +Convention +< $(word --convention "$blk") >" "... and its --convention"

# --- Memory budget lab: memory-at-scale's budget --serve block (the second lesson) ---
# The block opens the serving view with its model and GPU: Llama-3-8B's bf16
# weights, 2 * 8030261248 = 16060522496 bytes, leave floor((0.9 * 80e9 -
# 16060522496) / 2^21) = 26674 blocks of 16 tokens.
blk=$(grep -m 1 '^mixprec budget --serve --preset llama-3-8b --context 8192 --gpu-mem 80GB --csv$' \
	"$srcdir/lessons/memory-at-scale.md")
open_block serve 'j Enter' "$blk"
has serve opened '^ Model +< llama-3-8b > +Weights +< bf16 >' "a budget --serve block opens the serving view"
has serve opened '^ Context +\[8192\] +KV cache +< bf16 >' "... with its --context"
has serve opened '^ Batch +\[1\] +GPU memory +\[80GB\]' "... and its --gpu-mem as typed"
has serve opened '^ blocks 26674 of 16 tokens ' "... and computes its blocks"

# --- Block explorer: low-precision's blocks (the fifth lesson) ---
blk=$(grep -m 1 '^mixprec quantize [-0-9. ]* --to mxfp4 --block [0-9]*$' "$srcdir/lessons/low-precision.md")
vals=${blk#mixprec quantize }
open_block block 'j j j j Enter' "$blk"
has block opened '^ mixprec \| Home > Lesson > Block explorer' "a quantize block opens the Block explorer"
has block opened "^ Values ${vals%% --to*}\$" "... with its values"
has block opened "^ format < $(word --to "$blk") > +f +rule < ocp > .* scale per $(word --block "$blk")\$" \
	"... its --to and --block, the default rule"
blk=$(grep -m 1 '^mixprec quantize .* --to mxfp[0-9a-z-]* --scale-rule ceil$' "$srcdir/lessons/low-precision.md")
open_block blockceil 'j j j j Enter' "$blk"
has blockceil opened "^ format < $(word --to "$blk") > +f +rule < ceil > " "a --scale-rule ceil block: its format and rule"
# frontier's generated tensor (the eighth lesson): the lab shows the format and names --random
blk=$(grep -m 1 '^mixprec quantize --to nvfp4 --random [0-9]* --outliers ' "$srcdir/lessons/frontier.md")
open_block blockrandom 'j j j j j j j Enter' "$blk"
has blockrandom opened '^ format < nvfp4 > +f +rule \(one rule\)' "a --random block: its --to"
has blockrandom opened '^ --random: the lab does not run it; the rest as given$' "... and --random named on the status line"

# --- Bit explorer: residual-drift's round block (the fourth lesson), fp32-state's bits block (the third) ---
blk=$(grep -m 1 '^mixprec round [0-9.]* --to [a-z0-9-]* --mode [a-z]*$' "$srcdir/lessons/residual-drift.md")
open_block round 'j j j Enter' "$blk"
has round opened '^ mixprec \| Home > Lesson > Bit explorer' "a round block opens the Bit explorer"
has round opened "^ Value  $(echo "$blk" | cut -d' ' -f3) +rounding $(word --mode "$blk") " "... with its VALUE and --mode"
has round opened "^>$(word --to "$blk") " "... the cursor on its --to format"
blk=$(grep -m 1 '^mixprec bits [0-9.]* --format [a-z0-9-]*$' "$srcdir/lessons/fp32-state.md")
open_block bits 'j j Enter' "$blk"
has bits opened "^ Value  $(echo "$blk" | cut -d' ' -f3) +rounding rne " "a bits block: its VALUE"
has bits opened "^>$(word --format "$blk") " "... the cursor on its --format"
blk=$(grep -m 1 '^mixprec round [0-9.]* [0-9.]* --to [a-z0-9-]*$' "$srcdir/lessons/fp32-state.md")
open_block round2 'j j Enter' "$blk"
has round2 opened "^ Value  $(echo "$blk" | cut -d' ' -f3) " "a round block with two VALUEs: the first shown"
has round2 opened "^ 2 values: the lab shows the first, $(echo "$blk" | cut -d' ' -f3)\$" "... the status line says so"

finish
