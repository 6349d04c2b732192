#!/bin/sh
# The presets as --help and the man page describe them come from one table
# (train/policy.c): every line of train --help's "Presets:" section, name
# and description, must be an entry of doc/mixprec.1's preset list, and the
# man page must list no preset that --help lacks.
set -eu
man=${srcdir:-.}/doc/mixprec.1
help=$("$MIXPREC" train --help | sed -n '/^Presets:$/,$p' | sed 1d)
[ -n "$help" ] || { echo "train --help has no Presets section" >&2; exit 1; }
# the man page's entries: ".B name" then the description, '\-' as '-'
entries=$(sed 's/\\-/-/g' "$man" | awk '/^The presets$/ { on = 1 } on && /^\.PP$/ { exit }
	on && /^\.TP/ { getline n; getline d; sub(/^\.B /, "", n); print n "|" d }')
fail=0
echo "$help" | while read -r name about; do
	echo "$entries" | grep -qxF "$name|$about" || { echo "man page lacks: $name  $about" >&2; exit 1; }
done || fail=1
n_help=$(echo "$help" | wc -l)
n_man=$(echo "$entries" | wc -l)
[ "$n_help" = "$n_man" ] || { echo "--help lists $n_help presets, the man page $n_man" >&2; fail=1; }
# train --policy list: every preset, then what it keeps in which format
list=$("$MIXPREC" train --policy list) || { echo "train --policy list failed" >&2; exit 1; }
for name in $(echo "$help" | awk '{ print $1 }'); do
	echo "$list" | grep -q "^$name " || { echo "--policy list lacks $name" >&2; fail=1; }
done
# two rows checked against doc/DESIGN.md: fp8-mixed takes E4M3 operands and E5M2
# gradients with dynamic scaling; bf16-pure keeps weights and Adam in bf16
one=$(echo "$list" | tr '\n' ' ' | sed 's/  */ /g')
for want in "fp8-mixed .* gemm fp8-e4m3, .* grads fp8-e5m2 accumulated in fp32, Adam state fp32, dynamic loss scaling" \
	"bf16-pure .* bf16 weights (rne updates), grads bf16 accumulated in bf16, Adam state bf16,"; do
	echo "$one" | grep -q -- "$want" || { echo "--policy list: no '$want'" >&2; fail=1; }
done
[ $fail = 0 ] && echo "presets-doc: $n_help presets, --help and the man page agree"
exit $fail
