#!/bin/sh
# Every lesson's claims hold for five seeds under each OpenBLAS core type
# this CPU runs and none is vacuous (mixprec lesson check --seeds 5
# --blas-cores ... --mutate), and
# lesson check's exit statuses and lesson show's output are what the manual
# says, on small lessons written here.
. "${srcdir:-.}/tests/harness.sh"
need_mixprec
make_tmp lessons
LESSONS=${srcdir:-.}/lessons

start=$(date +%s)
cores=${MIXPREC_BLAS_CORES:-native,Haswell,Sandybridge,Prescott}
MIXPREC_LESSONDIR=$LESSONS "$MIXPREC" lesson check --seeds 5 --blas-cores "$cores" --mutate >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s)
cat "$tmp/out"
if [ "$rc" -eq 0 ] && tail -n 1 "$tmp/out" | grep -q ' 0 failed or malformed, 5 seeds, BLAS core types '; then
	ok "lesson check --seeds 5 --blas-cores $cores --mutate: every claim holds, none vacuous ($(( end - start )) s)"
else
	bad "lesson check --seeds 5 --blas-cores $cores --mutate exits $rc" "$(grep -v '^ok' "$tmp/out" | head -20)" "$(cat "$tmp/err")"
fi
n=$(grep -c '^ok ' "$tmp/out")
[ "$n" -ge 80 ] && ok "lesson check: $n claims checked" || bad "lesson check: only $n claims" ""

# --blas-cores: an unknown core type is refused before anything runs, naming the known ones
MIXPREC_LESSONDIR=$LESSONS "$MIXPREC" lesson check --blas-cores native,Haswel >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown OpenBLAS core type 'Haswel' (known: native, Prescott" "$tmp/out" \
	&& ok "lesson check --blas-cores: an unknown core type exits 2 naming the known ones" \
	|| bad "lesson check --blas-cores Haswel (exit $rc)" "$(cat "$tmp/out")"

# a wrong figure exits 1, a malformed claim 2, each naming file:line
mkdir "$tmp/l"
cat >"$tmp/l/a.md" <<'MD'
# A

It prints 20 bytes.

```mixprec
mixprec budget --params 7e9
```

```claims
GB[total] = 150 ± 1 "20 bytes"
```
MD
MIXPREC_LESSONDIR=$tmp/l "$MIXPREC" lesson check a >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "^FAIL .*/a.md:10: 140 " "$tmp/out" && ok "lesson check: a wrong figure exits 1 with file:line and the value" \
	|| bad "lesson check: wrong figure (exit $rc)" "$(cat "$tmp/out")"
sed -i 's/^GB\[total\] = 150 ± 1/GB[total] = 150/' "$tmp/l/a.md"
MIXPREC_LESSONDIR=$tmp/l "$MIXPREC" lesson check a >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "^BAD .*/a.md:10: column .*tolerance" "$tmp/out" && ok "lesson check: a malformed claim exits 2 with file:line" \
	|| bad "lesson check: malformed claim (exit $rc)" "$(cat "$tmp/out")"

# --mutate: a claim that holds whatever it reads is VACUOUS (exit 1); a
# whole number in the prose must be bound too, and a range on both sides
cat >"$tmp/l/v.md" <<'MD'
# V

It prints 140 GB, 3 times the weights, between 100 and 200 GB.

```mixprec
mixprec budget --params 7e9
```

```claims
GB[total] = 140 ± 0.5 "140 GB"
abs(GB[total] - GB[total]) < 1
GB[total] < 200 "between 100 and 200 GB"
plain "3 times the weights" a count of the text
```
MD
MIXPREC_LESSONDIR=$tmp/l "$MIXPREC" lesson check v --mutate >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "^VACUOUS .*/v.md:11: holds whatever it reads" "$tmp/out" \
	&& grep -q "^ok .*/v.md:10: .*fails when GB\[total\] reads 140.5" "$tmp/out" \
	&& ok "lesson check --mutate: a vacuous claim exits 1, a real one says where it flips" \
	|| bad "lesson check --mutate (exit $rc)" "$(cat "$tmp/out")"
grep -q "^FAIL .*/v.md:3: range .*one-sided.* | 100 and 200" "$tmp/out" && ! grep -q "unbound" "$tmp/out" \
	&& ok "lesson check: a range claimed on one side fails; 3 is plain" || bad "lesson check: range" "$(cat "$tmp/out")"
sed -i 's/^plain "3 times the weights" a count of the text$/plain "3 times the weights"/' "$tmp/l/v.md"
MIXPREC_LESSONDIR=$tmp/l "$MIXPREC" lesson check v >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "^BAD .*/v.md:13: .*reason" "$tmp/out" && grep -q "^FAIL .*/v.md:3: unbound .* | 3$" "$tmp/out" \
	&& ok "lesson check: a plain line without its reason is malformed, and its number unbound" \
	|| bad "lesson check: plain without reason (exit $rc)" "$(cat "$tmp/out")"
rm "$tmp/l/v.md"

# lesson show and commands never pass a lesson's control bytes to the terminal
printf '# T\033[2J\n\nred \033[31mtext\007\n\n```mixprec\nmixprec bits 1\033]0;title\007\n```\n\n```claims\nx[y] = 1 ± 0\n```\n' >"$tmp/l/b.md"
MIXPREC_LESSONDIR=$tmp/l "$MIXPREC" lesson show b >"$tmp/show" 2>&1
MIXPREC_LESSONDIR=$tmp/l "$MIXPREC" lesson commands b >"$tmp/cmds" 2>&1
if LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$tmp/show" "$tmp/cmds"; then
	bad "lesson show/commands: control bytes reach the terminal" "$(od -c "$tmp/show" | head)"
else
	ok "lesson show/commands: control bytes shown as ?"
fi
grep -q 'red ?\[31mtext?' "$tmp/show" && ok "lesson show: the text around them kept" || bad "lesson show: text lost" "$(cat "$tmp/show")"
grep -q 'x\[y\]' "$tmp/show" && bad "lesson show: claims shown to the learner" "$(cat "$tmp/show")" || ok "lesson show: claims blocks hidden"
[ "$(cat "$tmp/cmds")" = "mixprec bits 1?]0;title?" ] && ok "lesson commands: one line, sanitised" || bad "lesson commands" "$(cat "$tmp/cmds")"

finish
