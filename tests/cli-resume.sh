#!/bin/sh
# train --resume with the real binary: a run of 2k steps in one go against
# k steps with --save, then --resume for the rest (and a resume of a
# resume): the CSV rows must be the same bytes in every column but ms.
# Then the refusals: each names the file or the option, exit 2 (3 for a
# file that cannot be read).
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR
make_tmp cli-resume

# rows CSV...: the data rows of each file without column 11 (ms; overflow_frac
# follows it)
rows() {
	for f in "$@"; do
		tail -n +2 "$f" | cut -d, -f1-10,12-
	done
}

# same_rows NAME A B: the two row sets are the same bytes
same_rows() {
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		bad "$1" "first difference:"
		diff "$2" "$3" | head -n 6
	fi
}

# hlen FILE: the safetensors header length (low 4 of its 8 little-endian bytes)
hlen() {
	od -An -tu1 -N8 "$1" | awk '{ print $1 + 256 * ($2 + 256 * ($3 + 256 * $4)) }'
}

header() {
	dd if="$1" bs=1 skip=8 count="$(hlen "$1")" 2>/dev/null
}

# Four policies side by side: fp32; bf16 weights with Kahan compensation;
# bf16 with stochastic rounding (the SR streams' positions); fp16 with a
# dynamic scale from 2^24, whose fp16 gradients overflow (skipped steps,
# the scale halving) and, with a growth interval of 2000, a clean-step
# count running across the split. A warmup and a cosine over the 8 steps;
# a held-out loss every 2 steps, on both sides of the split.
opts="--preset tiny --policy fp32,bf16-pure-kahan,bf16-pure-sr,fp16-mixed --lr-schedule cosine --warmup 2"
opts="$opts --lr-min 1e-4 --eval-every 2"
m=$tmp/run.safetensors

# shellcheck disable=SC2086
run train $opts --loss-scale dynamic:16777216 --steps 8 --csv "$tmp/full.csv"
expect_rc "train 8 steps" 0
# 8 steps x 4 policies
same "the straight run's rows" "$(rows "$tmp/full.csv" | wc -l | tr -d ' ')" 32
# some fp16 step skipped (its row's skipped column, the 7th, is 1)
if grep -q '^[0-9]*,fp16-mixed[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,1,' "$tmp/full.csv"; then
	ok "fp16 skips steps"
else
	bad "fp16 skips steps" "no skipped row"
fi

ls=--loss-scale=dynamic:16777216
# shellcheck disable=SC2086
run train $opts $ls --steps 8 --stop-at 3 --save "$m" --csv "$tmp/a.csv"
expect_rc "train --stop-at 3 --save" 0
f32=$tmp/run-fp32+loss-scale=dynamic.safetensors
[ -f "$f32" ] && ok "one file per policy" || bad "one file per policy" "no $f32"
# the file says where the run is: step 3 (ckpt16's "step" and the run state's)
if header "$f32" | grep -Eq '"step": ?"3"'; then ok "the file's step"; else bad "the file's step" "no step 3"; fi
# resumed at step 3, on to 6, saving again; then 6 to 8
# shellcheck disable=SC2086
run train $opts $ls --steps 8 --stop-at 6 --resume "$m" --save "$m" --csv "$tmp/b.csv"
expect_rc "train --resume to 6" 0
same "the resumed CSV starts at step 3" "$(sed -n 2p "$tmp/b.csv" | cut -d, -f1)" 3
# shellcheck disable=SC2086
run train $opts $ls --steps 8 --resume "$m" --csv "$tmp/c.csv"
expect_rc "train --resume to 8" 0
rows "$tmp/full.csv" >"$tmp/full.rows"
rows "$tmp/a.csv" "$tmp/b.csv" "$tmp/c.csv" >"$tmp/split.rows"
same_rows "3 + 3 + 2 steps = 8 steps in one go: every CSV column but ms" "$tmp/full.rows" "$tmp/split.rows"
# a GPT-2 reader ignores the run state: eval reads the resumed file
run eval "$f32"
expect_rc "eval of a file with a run state" 0

# --- refusals ---
one=$tmp/one.safetensors
run train --preset tiny --steps 4 --stop-at 2 --save "$one"
expect_rc "a one-policy run to resume" 0
# a constant lr's run may go on longer than it was started for
run train --preset tiny --steps 5 --resume "$one" --csv "$tmp/longer.csv"
expect_rc "a constant-lr run resumed past its --steps" 0
same "it runs steps 2, 3 and 4" "$(rows "$tmp/longer.csv" | cut -d, -f1 | tr '\n' ' ')" "2 3 4 "
run train --preset tiny --steps 4 --resume "$one" --seed 2
expect_rc "another seed" 2
err_has "another seed: names the option, the file and both values" "--seed 2: the saved run in $one has --seed 1"
run train --preset tiny --steps 4 --resume "$one" --policy bf16-mixed
expect_rc "another policy" 2
err_has "another policy: names both" "--policy: the options give policy bf16-mixed; the saved run in $one has fp32"
run train --preset tiny --steps 4 --resume "$one" --lr-schedule cosine
expect_rc "another schedule" 2
err_has "another schedule: names the option" "--lr-schedule cosine: the saved run in $one has --lr-schedule constant"
run train --preset tiny --steps 4 --resume "$one" --channels 64
expect_rc "another shape" 2
err_has "another shape: names the option, the file and both values" "--channels 64: the saved run in $one has --channels 32"
run train --preset tiny --steps 2 --resume "$one"
expect_rc "--steps already done" 2
err_has "--steps already done: says so" "--steps 2: the run in $one has done 2 steps already"
run train --preset tiny --steps 4 --resume "$one" --stop-at 2
expect_rc "--stop-at before the saved step" 2
err_has "--stop-at: names the option" "--stop-at 2: must be after step 2"
run train --preset tiny --steps 4 --resume "$one" --init "$one"
expect_rc "--resume with --init" 2
err_has "--resume with --init: names both" "--resume and --init"
run train --preset tiny --steps 4 --resume "$one" --policy fp32,bf16-mixed
expect_rc "two policies, one file" 2
err_has "two policies: names both counts" "--policy: the options give 2 policies; the saved run in $one has 1 (fp32;"
run train --preset tiny --steps 4 --resume "$tmp/none.safetensors"
expect_rc "a missing file" 3
head -c 64 "$one" >"$tmp/short.safetensors"
run train --preset tiny --steps 4 --resume "$tmp/short.safetensors"
expect_rc "a truncated file" 2
err_has "a truncated file: names it" "$tmp/short.safetensors"
# a file without the run state: its metadata key renamed (same length)
h=$(hlen "$one")
head -c 8 "$one" >"$tmp/noset.safetensors"
header "$one" | sed 's/"state\.format"/"state.formaX"/' >>"$tmp/noset.safetensors"
tail -c +$((9 + h)) "$one" >>"$tmp/noset.safetensors"
run train --preset tiny --steps 4 --resume "$tmp/noset.safetensors"
expect_rc "weights only" 2
err_has "weights only: points at --init" "has no run state (only weights: --init FILE"
# a missing optimiser tensor: its name changed to one the state does not know
head -c 8 "$one" >"$tmp/nov.safetensors"
header "$one" | sed 's/"optimizer\.v\.wte\.weight"/"optimizer.X.wte.weight"/' >>"$tmp/nov.safetensors"
tail -c +$((9 + h)) "$one" >>"$tmp/nov.safetensors"
run train --preset tiny --steps 4 --resume "$tmp/nov.safetensors"
expect_rc "a missing tensor" 2
err_has "a missing tensor: names it" "tensor 'optimizer.v.wte.weight' is missing"

# more tensors than any run has (train/ckpt_state.h: 16384): 16385 empty U8
# tensors added after the real ones; refused before they are read one by one
h=$(hlen "$one")
data=$(( $(wc -c <"$one") - 8 - h ))
header "$one" | sed 's/ *$//' | awk -v e="$data" '{
	sub(/^\{/, "")
	printf "{"
	for (i = 0; i < 16385; i++)
		printf "\"z.%d\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[%d,%d]},", i, e, e
	printf "%s", $0
}' >"$tmp/many.hdr"
n=$(wc -c <"$tmp/many.hdr")
pad=$(( (8 - n % 8) % 8 ))
while [ "$pad" -gt 0 ]; do printf ' ' >>"$tmp/many.hdr"; pad=$((pad - 1)); done
n=$(wc -c <"$tmp/many.hdr")
# shellcheck disable=SC2059
printf "$(awk -v n="$n" 'BEGIN { for (i = 0; i < 8; i++) { printf "\\%03o", n % 256; n = int(n / 256) } }')" \
	>"$tmp/many.safetensors"
cat "$tmp/many.hdr" >>"$tmp/many.safetensors"
tail -c +$((9 + h)) "$one" >>"$tmp/many.safetensors"
run eval "$tmp/many.safetensors"
expect_rc "16385 extra tensors: still a model for eval" 0
run train --preset tiny --steps 4 --resume "$tmp/many.safetensors"
expect_rc "16385 extra tensors" 2
# the run's own 54: tiny has one layer, 2 + 12 + 2 = 16 weight tensors, as
# many m and v, and six scalars (train/train_state.h)
err_has "16385 extra tensors: says how many" "holds $((16385 + 3 * 16 + 6)) tensors, more than the 16384 a run can have"

# the block recipes keep no history; nvfp4's SR bits come from the seed and
# the step, so 2 + 2 steps are the same bytes as 4 in one go; a switch to
# bf16 at step 3 (--bf16-from) comes from the step too
bopts="--layers 2 --channels 16 --heads 2 --context 16 --batch 2 --eval-every 0"
bopts="$bopts --policy fp8-block,mxfp8,nvfp4,nvfp4+bf16-from=3,fp8-delayed+bf16-from=1"
bopts="$bopts --data ${srcdir:-.}/data/corpus.txt"
b=$tmp/block.safetensors
# shellcheck disable=SC2086
run train $bopts --steps 4 --csv "$tmp/b4.csv"
expect_rc "block recipes, 4 steps" 0
# shellcheck disable=SC2086
run train $bopts --steps 4 --stop-at 2 --save "$b" --csv "$tmp/b2.csv"
expect_rc "block recipes, 2 steps saved" 0
# shellcheck disable=SC2086
run train $bopts --steps 4 --resume "$b" --csv "$tmp/b22.csv"
expect_rc "block recipes, resumed for 2 more" 0
rows "$tmp/b4.csv" >"$tmp/b4.rows"
rows "$tmp/b2.csv" "$tmp/b22.csv" >"$tmp/b22.rows"
same_rows "fp8-block, mxfp8, nvfp4, switched to bf16 at 3 and 1: 2 + 2 steps = 4 in one go" "$tmp/b4.rows" \
	"$tmp/b22.rows"

finish
