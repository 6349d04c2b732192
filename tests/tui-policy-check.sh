#!/bin/sh
# The Training lab refuses what the train command refuses, with the same
# message (policy_check): a lesson's block whose offset does not fit its
# policy's residual format is opened in the lab and started. fp16's largest
# finite value is 65504 (2^15 x (2 - 2^-10)), so an offset of 1e5 cannot be
# stored there; the lab must say so, by option and numbers, not train, and
# not print a bare status.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

srcdir=${srcdir:-.}
. "$srcdir/tests/harness.sh"
tui_start tuicheck
XDG_STATE_HOME=$tmp/state
MIXPREC_LESSONDIR=$tmp/lessons
export XDG_STATE_HOME MIXPREC_LESSONDIR
mkdir -p "$tmp/lessons"
args="--policy bf16-mixed --residual fp16 --resid-offset 1e5 --steps 2 --layers 1 --channels 16 --heads 2 --context 16 --batch 2"
printf 'tiny\n' >"$tmp/lessons/ORDER"
cat >"$tmp/lessons/tiny.md" <<EOT
# A run that cannot start

\`\`\`mixprec
mixprec train $args
\`\`\`
EOT
cat >"$tmp/k.keys" <<'EOT'
keys Enter /
type --residual fp16
keys Enter Tab Enter s
wait
dump started
EOT
"$MIXPREC" tui --start lesson --keys "$tmp/k.keys" --dump "$tmp/k.out" </dev/null >/dev/null 2>"$tmp/k.err"
rc=$?
[ $rc -eq 0 ] && ok "the key script exits 0" || bad "the key script exits 0" "got $rc: $(head -c 300 "$tmp/k.err")"
want="--resid-offset: 100000 does not fit in policy bf16-mixed+residual=fp16's residual stream (fp16, largest 65504)"
screen=$(sed 's/^ //' "$tmp/k.out" | tr '\n' ' ')
case $screen in
*"$want"*) ok "the lab names the option, the policy and fp16's largest value" ;;
*) bad "the lab names the option, the policy and fp16's largest value" "screen: $(tail -n 4 "$tmp/k.out")" ;;
esac
case $screen in
*"Training lab"*) ok "the lab stays open" ;;
*) bad "the lab stays open" "$(head -n 2 "$tmp/k.out")" ;;
esac
# shellcheck disable=SC2086
"$MIXPREC" train $args >/dev/null 2>"$tmp/cli.err"
rc=$?
[ $rc -eq 2 ] && ok "train refuses it too (exit 2)" || bad "train refuses it too (exit 2)" "got $rc"
[ "$(cat "$tmp/cli.err")" = "mixprec train: $want" ] && ok "... with the same words" ||
	bad "... with the same words" "$(cat "$tmp/cli.err")"
finish
