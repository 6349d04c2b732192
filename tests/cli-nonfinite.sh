#!/bin/sh
# Weights and losses that are inf or NaN: eval and sample of a checkpoint
# with a NaN weight refuse it, naming the tensor and the element (exit 2,
# nothing on stdout); a training loss that turns NaN stops the run after
# that step for every policy, naming the step, and keeps the CSV; weights
# an update made infinite stop the run before anything is saved. Gradients
# that overflow and a loss scaler that skips the step are no error.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR
make_tmp cli-nonfinite

# hlen FILE: the safetensors header length (low 4 of its 8 little-endian bytes)
hlen() {
	od -An -tu1 -N8 "$1" | awk '{ print $1 + 256 * ($2 + 256 * ($3 + 256 * $4)) }'
}

# --- eval and sample of a NaN weight ---
good=$tmp/good.safetensors
run train --preset tiny --steps 2 --save "$good"
expect_rc "a tiny model" 0
run eval "$good"
expect_rc "eval of finite weights" 0
# the tiny GPT has 32 channels: h.0.attn.c_attn.weight is Conv1D (C, 3C) =
# (32, 96), row-major, so element [1, 2] is number 1 * 96 + 2 = 98, bytes
# 392..395 of the tensor's data; 00 00 c0 7f is fp32's quiet NaN, little-endian
h=$(hlen "$good")
start=$(dd if="$good" bs=1 skip=8 count="$h" 2>/dev/null |
	sed 's/.*"h\.0\.attn\.c_attn\.weight": *{[^}]*"data_offsets": *\[\([0-9]*\),.*/\1/')
case $start in
'' | *[!0-9]*) bad "the tensor's offset" "not found in the header" ;;
*) ok "the tensor's offset" ;;
esac
at=$((8 + h + start + 392))
nan=$tmp/nan.safetensors
head -c "$at" "$good" >"$nan"
printf '\000\000\300\177' >>"$nan"
tail -c +$((at + 5)) "$good" >>"$nan"
same "the NaN file keeps its size" "$(wc -c <"$nan" | tr -d ' ')" "$(wc -c <"$good" | tr -d ' ')"
run eval "$nan"
expect_rc "eval of a NaN weight" 2
err_has "eval: names the tensor and the element" "h.0.attn.c_attn.weight[1, 2] is NaN"
out_empty "eval of a NaN weight"
run sample "$nan" --prompt "The " --tokens 5
expect_rc "sample of a NaN weight" 2
err_has "sample: names the tensor" "h.0.attn.c_attn.weight[1, 2] is NaN"

# --- a loss that turns NaN mid-run, three policies ---
# lr 1e30: Adam's first update moves every weight by about 1e30 (m / sqrt(v)
# is about 1 for each), still finite in fp32; step 1's forward pass through
# such weights gives NaN for every policy
run train --preset tiny --steps 5 --lr 1e30 --policy fp32,bf16-mixed,fp16-mixed --csv "$tmp/div.csv"
expect_rc "lr 1e30: the run stops" 2
for p in fp32 bf16-mixed fp16-mixed; do
	err_has "lr 1e30: $p named with the step" "policy $p, step 1: the loss is NaN"
done
if grep -q -- '-nan' "$tmp/err"; then bad "lr 1e30: no '-nan' in the message" "$(cat "$tmp/err")"; else ok "lr 1e30: no '-nan' in the message"; fi
# the CSV kept: the header, step 0 and step 1 of each policy, nothing after
same "lr 1e30: the CSV's steps" "$(tail -n +2 "$tmp/div.csv" | cut -d, -f1 | tr '\n' ' ')" "0 0 0 1 1 1 "
same "lr 1e30: the CSV's policies" "$(tail -n +2 "$tmp/div.csv" | cut -d, -f2 | tr '\n' ' ')" \
	"fp32 bf16-mixed fp16-mixed fp32 bf16-mixed fp16-mixed "

# --- weights an update made infinite: nothing saved ---
# lr 1e39: the first update moves the weights by about 1e39, beyond fp32's
# 3.4e38, before any loss sees them
out=$tmp/inf.safetensors
echo "an earlier file" >"$out"
run train --preset tiny --steps 1 --lr 1e39 --save "$out" --csv "$tmp/inf.csv"
expect_rc "lr 1e39: weights not finite" 2
err_has "lr 1e39: names the policy, the step and a tensor" "policy fp32, step 0: the update made the weights not finite (wte.weight["
same "lr 1e39: the earlier file is left as it was" "$(cat "$out")" "an earlier file"
same "lr 1e39: the CSV keeps step 0" "$(tail -n +2 "$tmp/inf.csv" | cut -d, -f1)" "0"

# --- overflowing gradients are skipped, not an error ---
# fp16 gradients scaled by 2^24 overflow; the dynamic scaler skips those steps
run train --preset tiny --steps 4 --policy fp16-mixed --loss-scale dynamic:16777216 --csv "$tmp/skip.csv"
expect_rc "fp16 with skipped steps" 0
if cut -d, -f7 "$tmp/skip.csv" | grep -qx 1; then ok "fp16: some step skipped"; else bad "fp16: some step skipped"; fi

finish
