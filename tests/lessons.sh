#!/bin/sh
# Every lesson's claims hold for five seeds under each OpenBLAS core type
# this CPU runs (mixprec lesson check --seeds 5 --blas-cores ...), and
# lesson check's exit statuses and lesson show's output are what the manual
# says, on small lessons written here.
. "${srcdir:-.}/tests/harness.sh"
need_mixprec
make_tmp lessons
LESSONS=${srcdir:-.}/lessons

start=$(date +%s)
cores=${MIXPREC_BLAS_CORES:-native,Haswell,Sandybridge,Prescott}
MIXPREC_LESSONDIR=$LESSONS "$MIXPREC" lesson check --seeds 5 --blas-cores "$cores" >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s)
cat "$tmp/out"
if [ "$rc" -eq 0 ] && tail -n 1 "$tmp/out" | grep -q ' 0 failed or malformed, 5 seeds, BLAS core types '; then
	ok "lesson check --seeds 5 --blas-cores $cores: every claim holds ($(( end - start )) s)"
else
	bad "lesson check --seeds 5 --blas-cores $cores exits $rc" "$(grep -v '^ok' "$tmp/out" | head -20)" "$(cat "$tmp/err")"
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
