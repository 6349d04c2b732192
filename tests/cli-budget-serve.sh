#!/bin/sh
# budget --serve on the command line: its CSV, its table, its help and its
# refusals. Every expected value is derived by hand in the comment beside it
# (the models' configs, vLLM's arithmetic) or computed here with awk; none is
# copied from the program's output.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp cli-budget-serve

# field ITEM COLUMN: the COLUMN-th field of the CSV row ITEM in $tmp/out
field() {
	awk -F, -v i="$1" -v c="$2" '$1 == i { print $c }' "$tmp/out"
}

# is NAME GOT WANT: text equality
is() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; show_io; fi
}

echo "# help"
run budget --help
expect_rc "budget --help" 0
for o in --serve --weights-dtype --kv-dtype --kv-heads --head-dim --gpu-mem --gpu-util --reserve \
	--block-size nvfp4 mxfp4 int4 fp8_e5m2 gpu_memory_utilization; do
	out_has "budget --help mentions $o" "$o"
done

echo "# the KV cache"
# Llama-3-8B (Meta's config.json: 32 layers, 8 KV heads of 128): 2 * 32 * 8
# * 128 * 2 bytes = 131072 per token; 8192 tokens = 2^30 bytes = 1 GiB.
run budget --serve --preset llama-3-8b --context 8192 --batch 1 --csv
expect_rc "serve llama-3-8b" 0
out_line "csv header" "item,bytes,gb,gib,count"
out_line "kv per token 128 KiB" "kv_cache_per_token,131072,0.000131072,0.0001220703125,"
out_line "kv cache of 8192 tokens: 1 GiB" "kv_cache,1073741824,1.073741824,1,"
# bf16 weights: 2 * 8030261248 = 16060522496 bytes
is "bf16 weights" "$(field weights 2)" 16060522496
is "bf16: no scales" "$(field weight_scales 2)" 0
is "kv heads per GPU" "$(field kv_heads_per_gpu 5)" 8
is "tokens" "$(field tokens 5)" 8192
run budget --serve --preset llama-3-8b --context 8192 --batch 1 --kv-dtype fp8 --csv
is "fp8 KV halves it: 65536 per token" "$(field kv_cache_per_token 2)" 65536
is "fp8 KV: 2^29 bytes" "$(field kv_cache 2)" 536870912
# LLaMA 7B without GQA: 2 * 32 * 32 * 128 * 2 = 524288 = 512 KiB
run budget --serve --preset llama-7b --csv
is "llama-7b (MHA) 512 KiB per token" "$(field kv_cache_per_token 2)" 524288
is "llama-7b default context 2048, batch 1" "$(field tokens 5)" 2048
# --kv-heads overrides: 2 * 32 * 4 * 128 * 2 = 65536
run budget --serve --preset llama-3-8b --kv-heads 4 --csv
is "--kv-heads 4" "$(field kv_cache_per_token 2)" 65536
# batch x context: 3 x 1000 tokens of 131072 bytes
run budget --serve --preset llama-3-8b --context 1000 --batch 3 --csv
is "batch 3 x context 1000" "$(field kv_cache 2)" "$(awk 'BEGIN { printf "%.0f", 3 * 1000 * 131072 }')"

echo "# weights in serving formats"
# nvfp4: linear 6979321856 elements at half a byte plus one e4m3 byte per
# 16 and an fp32 per matrix (32 layers x 7); the other 1050939392 at 2 bytes
run budget --serve --preset llama-3-8b --weights-dtype nvfp4 --csv
is "nvfp4 codes and 16-bit rest" "$(field weights 2)" "$(awk 'BEGIN { printf "%.0f", 6979321856 / 2 + 2 * 1050939392 }')"
is "nvfp4 scales" "$(field weight_scales 2)" "$(awk 'BEGIN { printf "%.0f", 6979321856 / 16 + 32 * 7 * 4 }')"
# int4: groups of 128, 2.5 bytes each (fp16 scale, 4-bit zero)
run budget --serve --preset llama-3-8b --weights-dtype int4 --csv
is "int4 scales" "$(field weight_scales 2)" "$(awk 'BEGIN { printf "%.0f", 6979321856 / 128 * 2.5 }')"
run budget --serve --preset llama-3-8b --weights-dtype mxfp4 --csv
is "mxfp4 scales" "$(field weight_scales 2)" "$(awk 'BEGIN { printf "%.0f", 6979321856 / 32 }')"

echo "# one GPU: the blocks of vLLM"
# vLLM's log of a Llama-3-8B server on an A100 40GB, in
# vllm-project/vllm issue #12330: "total_gpu_memory (39.50GiB) x gpu_memory_utilization
# (0.90) = 35.55GiB", "model weights take 14.96GiB; non_torch_memory takes
# 0.10GiB; PyTorch activation peak memory takes 9.37GiB", "# GPU blocks:
# 5691". With the reserve 9.37 + 0.10 GiB: floor((35.55 GiB - 16060522496 -
# 9.47 GiB) / 2 MiB) = 5694, within the log's rounding of 5691.
run budget --serve --preset llama-3-8b --context 8192 --gpu-mem 39.5GiB --gpu-util 0.9 --reserve 9.47GiB --csv
expect_rc "the A100 40GB of the log" 0
want=$(awk 'BEGIN { g = 2^30; printf "%d", int((0.9 * 39.5 * g - 16060522496 - 9.47 * g) / 2^21) }')
is "blocks from the log's inputs" "$(field blocks 5)" "$want"
is "max tokens = blocks * 16" "$(field max_tokens 5)" "$((want * 16))"
is "max batch at 8192 = blocks / 512" "$(field max_batch 5)" "$((want / 512))"
got=$(field blocks 5)
if [ -n "$got" ] && [ $((got - 5691)) -le 11 ] && [ $((5691 - got)) -le 11 ]; then
	ok "within 11 blocks of the log's 5691 (its 0.01 GiB rounding)"
else
	bad "within 11 blocks of the log's 5691" "got '$got'"
fi
# the default utilisation is 0.9 and the block 16 tokens
run budget --serve --preset llama-3-8b --context 8192 --gpu-mem 39.5GiB --reserve 9.47GiB --csv
is "defaults: 0.9 and 16" "$(field blocks 5)" "$want"
# --block-size 32: blocks of 4 MiB, half as many (floor of half, by hand)
run budget --serve --preset llama-3-8b --context 8192 --gpu-mem 39.5GiB --reserve 9.47GiB --block-size 32 --csv
is "--block-size 32" "$(field blocks 5)" "$(awk 'BEGIN { g = 2^30; printf "%d", int((0.9 * 39.5 * g - 16060522496 - 9.47 * g) / 2^22) }')"
# the table names the rows too
run budget --serve --preset llama-3-8b --gpu-mem 80GB
expect_rc "table" 0
out_has "table: kv_cache row" "kv_cache"
out_has "table: blocks row" "blocks"
out_has "table: the reserve note" "profile run"

echo "# what does not fit"
# bf16 on 16 GB: 0.9 * 16e9 = 14.4e9 < 16060522496, short by 1660522496
# bytes = 1.55 GiB (1.66 GB)
run budget --serve --preset llama-3-8b --gpu-mem 16GB
expect_rc "weights beyond the GPU" 2
err_has "says by how much" "by 1.55 GiB (1.66 GB)"
# 80 GB: 26674 blocks, 52 sequences of 8192; 64 are short by 32768 * 2^21 -
# (72e9 - 16060522496) bytes = 11.90 GiB (12.78 GB)
run budget --serve --preset llama-3-8b --gpu-mem 80GB --batch 64
expect_rc "batch beyond the KV cache" 2
err_has "batch 64: says by how much" "by 11.90 GiB (12.78 GB)"
err_has "batch 64: how many fit" "at most 52 sequences"
run budget --serve --preset llama-3-8b --gpu-mem 80GB --batch 52
expect_rc "52 fit" 0

echo "# refusals"
run budget --serve --preset llama-3-8b --kv-heads 5
usage_error "--kv-heads 5" "--kv-heads 5" "32 query heads"
run budget --serve --preset llama-3-8b --weights-dtype int3
usage_error "--weights-dtype int3" "--weights-dtype" "'int3'" "nvfp4"
run budget --serve --preset llama-3-8b --kv-dtype int8
usage_error "--kv-dtype int8" "--kv-dtype" "'int8'"
run budget --serve --preset llama-3-8b --gpu-mem 80GX
usage_error "--gpu-mem 80GX" "--gpu-mem" "'80GX'"
run budget --serve --preset llama-3-8b --gpu-mem 80GB --gpu-util 2
usage_error "--gpu-util 2" "--gpu-util" "'2'"
run budget --serve --preset llama-3-8b --reserve 2GiB
usage_error "--reserve without --gpu-mem" "--reserve: needs --gpu-mem"
run budget --preset llama-3-8b --kv-dtype fp8
usage_error "--kv-dtype without --serve" "--kv-dtype: only budget --serve reads it"
run budget --serve --preset llama-3-8b --zero 3
usage_error "--serve --zero" "--zero: a training option"

echo "# the training CSV is unchanged by the preset added"
# llama-3-8b's count, 8030261248: Adam's 8 bytes each = 64242089984, the
# fp32 master 4 bytes each = 32121044992
run budget --preset llama-3-8b --csv
out_line "training header" "component,bytes_per_param,bytes,gb,gib"
is "training: Adam state of llama-3-8b" "$(awk -F, '$1 == "optimizer_state" { print $3 }' "$tmp/out")" 64242089984
is "training: master weights of llama-3-8b" "$(awk -F, '$1 == "master_weights" { print $3 }' "$tmp/out")" 32121044992

finish
