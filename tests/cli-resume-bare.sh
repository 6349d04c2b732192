#!/bin/sh
# train --resume FILE --steps N with no other option: the saved run's
# shape, policies, optimiser, schedule, data, seed and device come from
# FILE. Oracle: a straight run of N steps with the original options; the
# first run's CSV rows followed by the resumed run's must be its rows,
# byte for byte in every column but ms. Then options given to a resume:
# one that agrees with the file is accepted, one that contradicts it is an
# error naming the option, its value and the saved one (exit 2).
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR
make_tmp cli-resume-bare

# rows CSV...: the data rows without column 11 (ms, a timing)
rows() {
	for f in "$@"; do
		tail -n +2 "$f" | cut -d, -f1-10,12-
	done
}

# round_trip NAME OPTS...: OPTS for 10 steps saved, resumed with --steps 20
# alone, against 20 steps in one go with OPTS.
round_trip() {
	name=$1
	shift
	d=$tmp/$(echo "$name" | tr -c 'a-z0-9\n' _)
	mkdir "$d"
	run train "$@" --steps 20 --csv "$d/full.csv"
	expect_rc "$name: 20 steps in one go" 0
	run train "$@" --steps 10 --save "$d/a.safetensors" --csv "$d/first.csv"
	expect_rc "$name: 10 steps saved" 0
	run train --resume "$d/a.safetensors" --steps 20 --csv "$d/rest.csv"
	expect_rc "$name: --resume with --steps alone" 0
	rows "$d/full.csv" >"$d/full.rows"
	rows "$d/first.csv" "$d/rest.csv" >"$d/split.rows"
	n=$(wc -l <"$d/full.rows" | tr -d ' ')
	if [ "$n" -gt 0 ] && cmp -s "$d/full.rows" "$d/split.rows"; then
		ok "$name: 10 + 10 steps = 20 in one go ($n rows)"
	else
		bad "$name: 10 + 10 steps = 20 in one go" "first difference:"
		diff "$d/full.rows" "$d/split.rows" | head -n 6
	fi
}

# the tiny shape (its 128 positions and windows of 32), bf16 weights with
# SR, a seed and a constant lr after a warmup
round_trip "tiny, bf16-pure-sr" --preset tiny --policy bf16-pure-sr --seed 5 --warmup 4 --lr 0.002
# three policies side by side (one file each), one with a policy change, a
# shape of no preset, Adam's betas, a held-out loss every 3 steps and a
# dynamic scaler that starts at 2^20
round_trip "three policies, own shape" --layers 2 --heads 2 --channels 32 --context 16 --batch 4 \
	--policy fp32,fp16-mixed,bf16-mixed+gemm=fp16 --loss-scale dynamic:1048576 --seed 11 --warmup 2 \
	--beta2 0.99 --eval-every 3
# the text the run trained on, given with --data, is the resumed run's too
head -c 20000 "${srcdir:-.}/data/corpus.txt" >"$tmp/text.txt"
round_trip "--data" --preset tiny --data "$tmp/text.txt" --seed 3

# a cosine schedule keeps its length: saved midway with --stop-at, resumed
# with no option at all (not even --steps: the schedule's length is the total)
c=$tmp/cos.safetensors
copts="--preset tiny --policy fp8-delayed --lr-schedule cosine --lr-min 1e-4 --warmup 3 --seed 2"
# shellcheck disable=SC2086
run train $copts --steps 12 --csv "$tmp/cfull.csv"
expect_rc "cosine: 12 steps" 0
# shellcheck disable=SC2086
run train $copts --steps 12 --stop-at 5 --save "$c" --csv "$tmp/c1.csv"
expect_rc "cosine: stopped at 5 and saved" 0
run train --resume "$c" --csv "$tmp/c2.csv"
expect_rc "cosine: --resume alone" 0
rows "$tmp/cfull.csv" >"$tmp/cfull.rows"
rows "$tmp/c1.csv" "$tmp/c2.csv" >"$tmp/csplit.rows"
if cmp -s "$tmp/cfull.rows" "$tmp/csplit.rows"; then
	ok "cosine, fp8-delayed: 5 + 7 steps = 12 in one go"
else
	bad "cosine, fp8-delayed: 5 + 7 steps = 12 in one go"
	diff "$tmp/cfull.rows" "$tmp/csplit.rows" | head -n 6
fi
run train --resume "$c" --steps 20
expect_rc "cosine: another --steps" 2
err_has "cosine: names --steps and the saved length" "--steps 20: the saved run in $c has a cosine schedule over --steps 12"

# --- options given to a resume of the tiny run ---
t=$tmp/tiny.safetensors
run train --preset tiny --steps 2 --save "$t"
expect_rc "a tiny run to resume" 0
# no message of the shape loop: nothing about --context, --layers or --preset
run train --resume "$t" --steps 3
expect_rc "tiny: --resume alone" 0
if grep -q -e '--context' -e '--preset' -e '--layers' "$tmp/err"; then
	bad "tiny: no shape hint" "stderr: $(cat "$tmp/err")"
else
	ok "tiny: no shape hint"
fi
# the options that agree: accepted
run train --resume "$t" --steps 3 --preset tiny --policy fp32 --seed 1 --layers 1 --lr 0.001
expect_rc "tiny: options that agree" 0
# the old loop: --context 128 (the model's positions) is not the saved run's
# windows of 32, and --context 32 not its 128 positions
run train --resume "$t" --steps 3 --context 128
expect_rc "tiny: --context 128" 2
err_has "tiny: --context 128: both values" "--context 128: the saved run in $t has --context 32"
run train --resume "$t" --steps 3 --context 32
expect_rc "tiny: --context 32" 2
err_has "tiny: --context 32: the positions" "--context 32: the saved run in $t has a model of 128 positions"
run train --resume "$t" --steps 3 --layers 3
expect_rc "tiny: --layers 3" 2
err_has "tiny: --layers 3: both values" "--layers 3: the saved run in $t has --layers 1"
run train --resume "$t" --steps 3 --gemm bf16
expect_rc "tiny: a policy change" 2
err_has "tiny: a policy change: both policies" "the options give policy fp32+gemm=bf16; the saved run in $t has fp32"
run train --resume "$t" --steps 3 --data "$tmp/text.txt"
expect_rc "tiny: another --data" 2
err_has "tiny: another --data: names it" "--data $tmp/text.txt: the saved run in $t trained on the bundled corpus"

# a file that does not record its text (as files before it): its key renamed
# (same length); the resume goes on with --data as given, and says so
hlen() {
	od -An -tu1 -N8 "$1" | awk '{ print $1 + 256 * ($2 + 256 * ($3 + 256 * $4)) }'
}
h=$(hlen "$t")
head -c 8 "$t" >"$tmp/old.safetensors"
dd if="$t" bs=1 skip=8 count="$h" 2>/dev/null | sed 's/"state\.run\.policies"/"state.run.policieX"/' \
	>>"$tmp/old.safetensors"
tail -c +$((9 + h)) "$t" >>"$tmp/old.safetensors"
run train --resume "$tmp/old.safetensors" --steps 3
expect_rc "a file without its text recorded" 0
err_has "a file without its text recorded: says which option" "does not record the text it trained on: --data as given"

finish
