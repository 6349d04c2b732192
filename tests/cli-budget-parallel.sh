#!/bin/sh
# CLI tests of budget's parallel layout (--tp, --sp, --pp, --vpp, --cp, --dp):
# the help and the man page name every option, a bad layout is refused with
# its reason (exit 2), one GPU's CSV rows under GPT-3's layout of Korthikanti
# et al. 2022 (arXiv:2205.05198v1, Table 3: t = 8, p = 8), and a command
# without the options keeps its CSV.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
# Expected values are derived by hand in the comments next to them; none is
# copied from the program's output.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp budget-parallel
private_state

# field ROW COLUMN: the CSV field of that row (by component) and column number.
field() {
	awk -F, -v r="$1" -v c="$2" '$1 == r { print $c }' "$tmp/out"
}

echo "# --help and the man page name every option of the layout"
run budget --help
expect_rc "budget --help" 0
man="${srcdir:-.}/doc/mixprec.1"
for opt in --tp --sp --pp --vpp --cp --dp; do
	out_has "budget --help: $opt" "  $opt "
	roff=$(printf '%s\n' "$opt" | sed 's/-/\\-/g')
	if grep -Fq -e ".B $roff" "$man"; then ok "mixprec.1: $opt"; else bad "mixprec.1: $opt" "no '.B $roff'"; fi
done

echo "# GPT-3 175B at the paper's t = 8, p = 8, sequence parallel, selective recompute"
run budget --preset gpt3-175b --tp 8 --sp --pp 8 --recompute selective --csv
expect_rc "gpt3 t8 p8 sp selective" 0
same "CSV header with the layout columns" "$(head -n 1 "$tmp/out")" \
	"component,bytes_per_param,bytes,gb,gib,tp,sp,pp,vpp,cp,dp,gpus"
# 20 bytes per parameter split by t*p = 64: 175e9*20/64 = 54687500000 of
# states; weights 2*175e9/64 = 5468750000
same "weights per GPU: 2P/(t*p)" "$(field weights 3)" 5468750000
# activations: 34 sbh / t per layer, sbh = 2048*12288 = 25165824: 106954752;
# times L = 96 (p micro-batches of L/p layers): 10267656192; plus the
# embedding's dropout mask sbhp/t = 25165824: 10292822016
same "activations per GPU" "$(field activations 3)" 10292822016
# total 54687500000 + 10292822016 = 64980322016: under 80 GB
same "total per GPU" "$(field total 3)" 64980322016
same "layout columns of the total row" "$(field total 6),$(field total 7),$(field total 8),$(field total 11),$(field total 12)" \
	"8,1,8,1,64"

echo "# --gpus is the world size: d = G/(t*p*c)"
run budget --preset gpt3-175b --tp 8 --pp 8 --gpus 256 --zero 1 --csv
expect_rc "--gpus 256 with t8 p8" 0
same "d = 256/64 = 4" "$(field total 11)" 4
# ZeRO 1 over d = 4: master 4P/256 = 2734375000
same "master weights: 4P/(t*p*d)" "$(field master_weights 3)" 2734375000

echo "# a command without the layout keeps its CSV header"
run budget --preset gpt3-175b --gpus 8 --zero 3 --csv
same "no layout: five columns" "$(head -n 1 "$tmp/out")" "component,bytes_per_param,bytes,gb,gib"

echo "# bad layouts: exit 2, the option and the reason"
run budget --preset gpt3-175b --tp 7
usage_error "--tp 7" "--tp 7" "does not divide the 96 attention heads"
run budget --preset gpt3-175b --pp 5
usage_error "--pp 5" "--pp 5" "does not divide the 96 layers"
run budget --preset gpt3-175b --cp 3
usage_error "--cp 3" "--cp 3" "sequence length 2048"
run budget --preset gpt3-175b --vpp 2
usage_error "--vpp without --pp" "--vpp 2" "needs --pp 2 or more"
run budget --preset gpt3-175b --pp 8 --vpp 5
usage_error "--vpp 5 of 12 layers a stage" "--vpp 5" "12 layers of a pipeline stage"
run budget --preset gpt3-175b --sp
usage_error "--sp without --tp" "--sp" "--tp 2 or more"
run budget --preset gpt3-175b --pp 4 --zero 3
usage_error "--zero 3 with --pp 4" "--zero 3 with --pp 4" "DeepSpeed's pipeline engine refuses"
run budget --preset gpt3-175b --tp 8 --dp 2 --gpus 8
usage_error "--gpus against --dp" "--gpus 8 and --dp 2 disagree" "= 16"
run budget --preset gpt3-175b --tp 8 --gpus 12
usage_error "--gpus not a multiple" "--gpus 12" "multiple of t*p*c"
run budget --preset gpt3-175b --tp 0
usage_error "--tp 0" "--tp" "'0'"
run budget --preset gpt3-175b --pp 1.5
usage_error "--pp 1.5" "--pp" "'1.5' is not a whole number"
run budget --params 7e9 --tp 2 --convention deepspeed
usage_error "deepspeed with a layout" "--convention deepspeed"

echo "# the Memory budget lab: the layout fields, the CLI twin, the parser's reasons"
# Model: two choices right of gpt2-small is gpt3-175b; Recompute (the 8th
# field) one right is selective; TP (the 9th) 1 -> 2 -> 4 -> 8, SP on, PP
# (the 11th) 1 -> 8; then TP 8 -> 64, which does not divide 96 heads.
cat >"$tmp/keys" <<'EOF2'
keys l l
keys j j j j j j j l
keys j l l l
keys j l
keys j l l l
dump layout
keys k k l l l
dump refused
EOF2
"$MIXPREC" tui --keys "$tmp/keys" --start budget >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "tui --keys budget layout" 0
out_has "lab: the CLI twin of the layout" "$ mixprec budget --preset gpt3-175b --recompute selective --tp 8 --sp --pp 8"
out_has "lab: the layout's fields" "TP <8> SP <on> PP <8> VPP <1> CP <1>"
# one GPU's total, 64980322016 bytes by hand above: 64.980 GB
out_has "lab: one GPU's total" "one GPU: 64.980 GB"
out_has "lab: d of the GPUs" "over d = 1 of 64 GPUs"
out_has "lab: the parser's reason" "--tp 64 does not divide the 96 attention heads"

echo "# exercise par.1: each student's variant answered by hand"
# bytes per parameter with Adam, from what each recipe keeps (fp32 4, 16-bit
# 2, fp8 1 byte): fp32 4 + 4 + 8 = 16; fp16-mixed and bf16-mixed master 4 +
# copy 2 + gradient 2 + accumulator 4 + Adam 8 = 20; bf16-pure 2 + 2 + 4 = 8;
# fp8-mixed 4 + 1 + 2 + 4 + 8 = 19. GPUs t*p; per GPU bpp * P / (t*p) / 1e9.
MIXPREC_STATEDIR=$tmp/state
export MIXPREC_STATEDIR
for student in $(awk 'BEGIN { for (i = 1; i <= 30; i++) printf "s%d ", i }'); do
	"$MIXPREC" exercise show par.1 --student "$student" --params >"$tmp/params" 2>"$tmp/err"
	ans=$(awk -F= '{ v[$1] = $2 } END {
		b["fp32"] = 16; b["fp16-mixed"] = 20; b["bf16-mixed"] = 20; b["bf16-pure"] = 8; b["fp8-mixed"] = 19
		bpp = b[v["recipe"]]; g = v["t"] * v["p"]
		printf "bytes_per_param=%d gpus=%d gpu_gb=%.9g", bpp, g, bpp * v["P"] / g / 1e9 }' "$tmp/params")
	# shellcheck disable=SC2086
	run check par.1 --student "$student" $ans
	expect_rc "par.1 for $student ($(tr '\n' ' ' <"$tmp/params"))" 0
done

finish
