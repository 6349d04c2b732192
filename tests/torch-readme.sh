#!/bin/sh
# README.md's PyTorch block (between the torch-eval-snippet markers), run as
# it stands there against files `train --save` wrote: the held-out loss it
# prints must be `mixprec eval`'s, an independent forward pass of the same
# weights (PyTorch's kernels, not mixprec's). Skipped, with the reason,
# where no python3 imports torch (PyTorch is no build dependency).
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

# the first of these that has torch (Debian's python3-torch is for /usr/bin/python3)
py=
for p in ${TORCH_PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import torch' >/dev/null 2>&1; then
		py=$p
		break
	fi
done
if [ -z "$py" ]; then
	echo "SKIP: no python3 here imports torch (Debian: apt-get install python3-torch)"
	exit 77
fi
make_tmp torch-readme
echo "# $py, torch $("$py" -c 'import torch; print(torch.__version__)')"

# the block: the lines of the python fence between the markers
awk '/<!-- torch-eval-snippet: end -->/ { on = 0 }
	on && !/^```/ { print }
	/<!-- torch-eval-snippet: begin -->/ { on = 1 }' "${srcdir:-.}/README.md" >"$tmp/snippet.py"
n=$(wc -l <"$tmp/snippet.py" | tr -d ' ')
[ "$n" -gt 10 ] && ok "README.md has the block ($n lines)" || bad "README.md has the block" "$n lines"

# two policies saved side by side: fp32 weights (F32) and bf16 weights
# (BF16 in the file), 2 layers of 32 channels, context 32, trained long
# enough (300 steps) that attention over the context matters
run train --layers 2 --heads 2 --channels 32 --context 32 --batch 8 --steps 300 --lr 0.01 \
	--policy fp32,bf16-pure --save "$tmp/m.safetensors"
expect_rc "train --save, two policies" 0

# diff_ok A B: |A - B| <= 1e-5 nats. Both are means of fp32 per-token
# cross-entropies over the same windows of the same weights, printed to 6
# decimals; they differ only in float rounding (PyTorch's sums in another
# order, its LayerNorm and softmax kernels), about 1e-7 relative per
# operation, which averages out over the ~120,000 tokens: a few 1e-6 at
# most. On such a model a wrong forward pass is 1e-3 or more away (tried
# by hand: no causal mask +0.09, GELU without its cubic term +2e-3,
# LayerNorm's eps 1e-3 for 1e-5 -1.3e-3).
diff_ok() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5) }'
}

for p in fp32 bf16-pure; do
	d=$tmp/$p
	mkdir -p "$d/data"
	cp "$tmp/m-$p.safetensors" "$d/model.safetensors"
	cp "$tmp/config.json" "$d/config.json"
	cp "${srcdir:-.}/data/corpus.txt" "$d/data/corpus.txt"
	run eval "$d/model.safetensors"
	expect_rc "$p: mixprec eval" 0
	want=$(sed -n 's/^loss //p' "$tmp/out")
	got=$(cd "$d" && "$py" "$tmp/snippet.py" 2>"$tmp/py.err" | sed -n 's/^loss //p')
	if [ -z "$got" ]; then
		bad "$p: the block prints a loss" "$(tail -n 5 "$tmp/py.err")"
		continue
	fi
	ok "$p: the block prints a loss"
	if diff_ok "$got" "$want"; then
		ok "$p: PyTorch's loss $got is eval's $want to 1e-5"
	else
		bad "$p: PyTorch's loss $got is eval's $want to 1e-5"
	fi
	# the weights matter: a trained model is far from the uniform guess ln 128 = 4.852030
	if diff_ok "$want" 4.852030; then
		bad "$p: eval's loss is not the uniform one" "$want"
	else
		ok "$p: eval's loss is not the uniform one"
	fi
done

finish
