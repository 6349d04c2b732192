#!/bin/sh
# Checkpoint commands: train --save/--save-every/--init, eval, sample, and
# every refusal of a bad file (exit 2, naming the file and the problem).
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
# Expected sizes and counts are derived by hand in the comments; none is
# copied from the program's output.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR
make_tmp cli-ckpt

out_line() {
	if grep -Fqx -e "$2" "$tmp/out"; then ok "$1"; else bad "$1" "no stdout line: $2"; show_io; fi
}

# hlen FILE: the safetensors header length (8 bytes, little-endian; our
# files are far below 2^32, so the low four are enough).
hlen() {
	od -An -tu1 -N8 "$1" | awk '{ print $1 + 256 * ($2 + 256 * ($3 + 256 * $4)) }'
}

# le8 N: N as 8 little-endian bytes, as printf octal escapes.
le8() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < 8; i++) { printf "\\%03o", n % 256; n = int(n / 256) } }'
}

# craft FILE HEADER DATABYTES: a safetensors file by hand.
craft() {
	len=$(printf '%s' "$2" | wc -c)
	# shellcheck disable=SC2059
	printf "$(le8 "$len")" >"$1"
	printf '%s' "$2" >>"$1"
	head -c "$3" /dev/zero >>"$1"
}

# edit SRC DST SED: DST is SRC with its header edited (same length) by SED.
edit() {
	h=$(hlen "$1")
	head -c 8 "$1" >"$3"
	dd if="$1" bs=1 skip=8 count="$h" 2>/dev/null | sed "$2" >"$tmp/hdr"
	head -c "$h" "$tmp/hdr" >>"$3"
	tail -c +$((9 + h)) "$1" >>"$3"
}

m=$tmp/m.safetensors

# --- save ---
run train --preset tiny --steps 4 --eval-every 4 --save "$m" --csv "$tmp/t.csv"
expect_rc "train --save" 0
[ -f "$m" ] && ok "train --save: the file" || bad "train --save: the file" "no $m"
h=$(hlen "$m")
size=$(wc -c <"$m")
# tiny: V 128, T 128, C 32, L 1: wte + wpe 2*128*32 = 8192, a block
# 12 C^2 + 13 C = 12288 + 416 = 12704, ln_f 64: 20960 floats, 83840 bytes;
# the run state beside them (train --resume): Adam's m and v in fp32, 2 x
# 83840, and six 8-byte scalars (train/train_state.h): 83840 + 167680 + 48
same "save: data = 20960 fp32 weights + the run state" "$((size - 8 - h))" 251568
same "save: header padded to 8 bytes" "$(( (8 + h) % 8 ))" 0
head -c $((8 + h)) "$m" | tail -c +9 >"$tmp/hdr"
for want in '"format":"pt"' '"n_layer":"1"' '"n_head":"2"' '"n_embd":"32"' '"n_positions":"128"' \
	'"vocab_size":"128"' '"step":"4"' '"seed":"1"' '"policy":"fp32"' '"mixprec_version":' \
	'"h.0.attn.c_attn.weight":{"dtype":"F32","shape":[32,96]' '"h.0.mlp.c_proj.weight":{"dtype":"F32","shape":[128,32]' \
	'"wte.weight":{"dtype":"F32","shape":[128,32]'; do
	if grep -Fq -e "$want" "$tmp/hdr"; then ok "save: header has $want"; else bad "save: header has $want"; fi
done
if grep -Fq '"activation_function": "gelu_new"' "$tmp/config.json" &&
	grep -Fq '"layer_norm_epsilon": 1e-5' "$tmp/config.json"; then
	ok "save: config.json beside the file"
else
	bad "save: config.json beside the file"
fi
ls "$tmp" | grep -q 'tmp-' && bad "save: no temporary files left" "$(ls "$tmp")" || ok "save: no temporary files left"

run train --preset tiny --steps 5 --save-every 2 --policy fp32,bf16-pure --save "$tmp/r.safetensors"
expect_rc "train --save-every with two policies" 0
if [ -f "$tmp/r-fp32.safetensors" ] && [ -f "$tmp/r-bf16-pure.safetensors" ]; then
	ok "two policies: FILE-POLICY.safetensors"
else
	bad "two policies: FILE-POLICY.safetensors" "$(ls "$tmp")"
fi
rb=$tmp/r-bf16-pure.safetensors
h=$(hlen "$rb")
# bf16-pure keeps weights only in bf16: BF16 tensors, 2 bytes each (41920);
# its run state: m and v in BF16 (2 x 41920), v's fp32 reference (83840),
# six 8-byte scalars: 41920 + 83840 + 83840 + 48
same "bf16-pure: 20960 BF16 weights + the run state" "$(( $(wc -c <"$rb") - 8 - h ))" 209648
head -c $((8 + h)) "$rb" | grep -Fq '"step":"5"' && ok "save-every: the final file is step 5" ||
	bad "save-every: the final file is step 5"

run train --steps 1 --save /nonexistent-dir/m.safetensors
expect_rc "--save into a missing folder" 3
err_has "--save into a missing folder: names it" "--save: /nonexistent-dir/m.safetensors"
run train --steps 1 --save-every 2
expect_rc "--save-every without --save" 2
# --save names a file: a folder (with or without the slash) is a usage error
mkdir "$tmp/dir"
for d in "$tmp/dir/" "$tmp/dir"; do
	run train --steps 1 --save "$d"
	expect_rc "--save $d (a folder)" 2
	err_has "--save $d: says to pass FILE.safetensors" "--save: '$d' is a folder; pass a file, FILE.safetensors"
done
# a checkpoint the reader could not open is refused before training: V = 128,
# T = 64, C = 2048, L = 4 has 128*2048 + 64*2048 + 4*(12*2048^2 + 13*2048)
# + 2*2048 = 201830400 parameters; fp32 weights, m and v: 12 bytes each =
# 2421964800 > 2^31 - 2^20 = 2146435072 (2 GiB less 1 MiB for the header)
run train --steps 1 --layers 4 --channels 2048 --context 64 --save "$tmp/big.safetensors"
expect_rc "--save of a model above the reader's limit" 2
err_has "--save too big: names the size and the limit" \
	"--save: policy fp32: the checkpoint would take at least 2421964800 bytes (the weights and Adam's m and v), above the 2146435072"
[ -e "$tmp/big.safetensors" ] && bad "--save too big: no file" || ok "--save too big: no file"

# --- init ---
run train --preset tiny --steps 1 --init "$m" --policy bf16-pure,bf16-mixed
expect_rc "train --init" 0
run train --steps 1 --init "$m"
expect_rc "--init with other shape options" 2
err_has "--init: names the file and both shapes" "--init: $m: the checkpoint's model has 1 layers"
err_has "--init: says what the options ask" "the options ask for 4, 4, 128"

# --- eval ---
run eval "$m"
expect_rc "eval" 0
grep -Eqx 'loss [0-9]+\.[0-9]{6}' "$tmp/out" && ok "eval: loss N" || { bad "eval: loss N"; show_io; }
run eval "$m" --csv
n=$(wc -c <"${MIXPREC_SRCDIR:-.}/data/corpus.txt")
# the held-out tenth: n/10 bytes; whole windows of T = 128 predicting one further
tokens=$(( (n / 10 - 1) / 128 * 128 ))
out_line "eval --csv: header" "tokens,loss"
grep -Eqx "$tokens,[0-9]+\.[0-9]{6}" "$tmp/out" && ok "eval --csv: $tokens tokens" || { bad "eval --csv: $tokens tokens"; show_io; }
head -c 300 /dev/zero | tr '\0' 'a' >"$tmp/text"
run eval "$m" --data "$tmp/text" --csv
# 300 characters: (300 - 1) / 128 = 2 windows
grep -Eq '^256,' "$tmp/out" && ok "eval --data: 2 windows of 128" || { bad "eval --data: 2 windows of 128"; show_io; }
head -c 128 /dev/zero | tr '\0' 'a' >"$tmp/short"
run eval "$m" --data "$tmp/short"
expect_rc "eval --data shorter than a window" 2
run eval
expect_rc "eval without FILE" 2
run eval "$tmp/none.safetensors"
expect_rc "eval of a missing file" 3

# --- sample ---
run sample "$m" --prompt "The " --tokens 40 --seed 5
expect_rc "sample" 0
first=$(cat "$tmp/out")
# the prompt, 40 characters, a newline
same "sample: prompt + 40 characters" "$(wc -c <"$tmp/out")" 45
case $first in "The "*) ok "sample: starts with the prompt" ;; *) bad "sample: starts with the prompt" ;; esac
run sample "$m" --prompt "The " --tokens 40 --seed 5
same "sample: the same for the same seed" "$(cat "$tmp/out")" "$first"
run sample "$m" --prompt "The " --tokens 40 --seed 6 --temperature 1.5 --top-k 20
expect_rc "sample --temperature --top-k" 0
run sample "$m" --prompt "$(printf 'caf\303\251')" --tokens 4
expect_rc "sample: a prompt outside the vocabulary" 2
err_has "sample: names the byte" "--prompt: byte 4 (0xc3) is outside the model's vocabulary"
run sample "$m" --prompt "x"
expect_rc "sample without --tokens" 2

# --- bad files: each exit 2, naming the file and the problem ---
# refused NAME FILE TEXT: eval FILE exits 2, the message starting with FILE
refused() {
	run eval "$2"
	expect_rc "$1" 2
	err_has "$1: names the file" "mixprec eval: $2: "
	err_has "$1: names the problem" "$3"
}
head -c 100 "$m" >"$tmp/trunc"
refused "truncated file" "$tmp/trunc" "truncated"
printf 'abc' >"$tmp/tiny"
refused "shorter than 8 bytes" "$tmp/tiny" "truncated"
# shellcheck disable=SC2059
printf "$(le8 4294967296)" >"$tmp/huge"
refused "header too large" "$tmp/huge" "too large"
craft "$tmp/notjson" '{"a":nope}' 0
refused "header not JSON" "$tmp/notjson" "not a JSON object"
craft "$tmp/dtype" '{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}' 4
refused "unknown dtype" "$tmp/dtype" "unknown dtype 'F33'"
craft "$tmp/range" '{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}' 4
refused "data offsets out of range" "$tmp/range" "out of range"
craft "$tmp/span" '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}' 4
refused "offsets disagree with the shape" "$tmp/span" "need 8"
craft "$tmp/overlap" '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}' 6
refused "overlapping tensors" "$tmp/overlap" "overlap"
craft "$tmp/nometa" '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}' 4
refused "no shape metadata" "$tmp/nometa" "__metadata__ has no 'n_layer'"
edit "$m" 's/"wte\.weight"/"wtx.weight"/' "$tmp/missing"
refused "missing tensor" "$tmp/missing" "missing tensor 'wte.weight'"
# [128,32] -> [64,64]: the same bytes, the wrong shape (a space keeps the length)
edit "$m" 's/"wpe\.weight":{"dtype":"F32","shape":\[128,32\]/"wpe.weight":{"dtype":"F32","shape":[64,64] /' "$tmp/shape"
refused "wrong shape" "$tmp/shape" "tensor 'wpe.weight' has shape [64, 64]"
edit "$m" 's/"n_head":"2"/"n_head":"3"/' "$tmp/heads"
refused "n_head not dividing n_embd" "$tmp/heads" "does not divide"
run train --preset tiny --steps 1 --init "$tmp/shape"
expect_rc "train --init of a bad file" 2
err_has "train --init: names the option and the file" "--init: $tmp/shape:"

# --- the Training lab: w saves the runs, t samples, i starts from a saved model ---
# tiny shape (train --preset tiny), fp32 and bf16-mixed, 5 steps
cat >"$tmp/lab.keys" <<EOF
keys j Space n C-u
type 5
keys Enter f C-u
type $tmp/lab.csv
keys Enter s
wait
keys e w
dump saved
keys t
dump sampled
keys Space i C-u
type $tmp/lab-fp32.safetensors
keys Enter n C-u
type 1
keys Enter f C-u
type $tmp/lab2.csv
keys Enter s
wait
keys e
dump init
EOF
XDG_STATE_HOME=$tmp/state "$MIXPREC" tui --start train --keys "$tmp/lab.keys" --dump "$tmp/lab.out" </dev/null >/dev/null 2>"$tmp/err"
rc=$?
expect_rc "Training lab key script" 0
lab_has() {
	if awk -v l="--- $1 ---" '$0 == l { on = 1; next } /^--- .* ---$/ { on = 0 } on' "$tmp/lab.out" | grep -Fq -e "$2"; then
		ok "lab $1: $2"
	else
		bad "lab $1: $2"
		awk -v l="--- $1 ---" '$0 == l { on = 1; next } /^--- .* ---$/ { on = 0 } on' "$tmp/lab.out" | sed 's/^/     | /' | head -30
	fi
}
lab_has saved "saved 2 models at step 5:"
for p in fp32 bf16-mixed; do
	run eval "$tmp/lab-$p.safetensors"
	expect_rc "lab: w wrote a model eval reads ($p)" 0
done
[ -f "$tmp/config.json" ] && ok "lab: config.json beside the models" || bad "lab: config.json beside the models"
lab_has sampled "Sample at step 5 (t: again)"
lab_has sampled "fp32            The "
lab_has sampled "bf16-mixed      The "
lab_has init "start from $tmp/lab-fp32.safetensors"
lab_has init "done after 1 of 1 steps"
# one step from the saved fp32 model in the lab = the same step from the command
run train --preset tiny --policy fp32 --steps 1 --init "$tmp/lab-fp32.safetensors" --csv "$tmp/cli2.csv"
a=$(awk -F, 'NR == 2 { print $3 }' "$tmp/lab2.csv")
b=$(awk -F, 'NR == 2 { print $3 }' "$tmp/cli2.csv")
same "lab i: the run starts from the saved weights (loss as train --init)" "$a" "$b"
c=$(awk -F, 'NR == 2 && $2 == "fp32" { print $3 }' "$tmp/lab.csv")
if [ -n "$a" ] && [ "$a" != "$c" ]; then ok "lab i: not the fresh weights' first loss"; else bad "lab i: not the fresh weights' first loss" "$a vs $c"; fi

finish
