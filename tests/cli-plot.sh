#!/bin/sh
# CLI tests of mixprec plot: bars and lines from the budget and drift CSVs
# at a given size, ASCII and colour by locale and terminal, CSV errors with
# file:line, and the --svg and --png images (or exit 3 without cairo).
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
# $MIXPREC is the binary under test (exported by the harness; default ./mixprec).
#
# Every expected value below is derived by hand (the derivation is in the
# comment next to it) or computed here with awk from the format definitions;
# none is copied from the program's output.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp plot
private_state

# ---------------------------------------------------------------------------
echo "# plot"

run plot --help
expect_rc "plot --help" 0
for o in --x --y --by --logx --logy --linear --title --width --height --ascii --png --svg NO_COLOR; do
	out_has "plot --help mentions $o" "$o"
done
res=$(awk 'length($0) > 80 { print NR ": " length($0) }' "$tmp/out" | head -3)
[ -z "$res" ] && ok "plot --help fits 80 columns" || bad "plot --help fits 80 columns" "$res"
"$MIXPREC" budget --params 7e9 --csv >"$tmp/budget.csv" 2>/dev/null
run plot "$tmp/budget.csv" --width 60 --height 12
expect_rc "plot budget csv" 0
# total 20 * 7e9 = 1.4e11 bytes, in the title; 60 columns: labels as wide as
# grad_accumulator (16), the axis at 17, bars from 18, 6 columns for the
# widest value (2.8e10) and one spare: 35 cells for 0..5.6e10. Adam's 5.6e10
# fills all 35, the weights' 1.4e10 35/4 = 8.75 -> 9, the master's 2.8e10
# 17.5 -> 18 (C locale: ASCII bars)
out_has "plot budget: total in the title" "(total 1.4e11 bytes)"
out_line "plot budget: optimizer_state bar" \
	"$(printf '%-16s |%s %s' optimizer_state "$(printf '%035d' 0 | tr 0 '#')" 5.6e10)"
out_line "plot budget: weights bar" "$(printf '%-16s |%s %s' weights '#########' 1.4e10)"
out_line "plot budget: master_weights bar" \
	"$(printf '%-16s |%s %s' master_weights "$(printf '%018d' 0 | tr 0 '#')" 2.8e10)"
grep -q '^total' "$tmp/out" && bad "plot budget: the total row is no bar" || ok "plot budget: the total row is no bar"
run_in "$tmp/budget.csv" plot - --width 60 --height 12
expect_rc "plot - (stdin)" 0
out_has "plot -: named <stdin>" "<stdin> (total 1.4e11 bytes)"

# a drift CSV by hand: not a terminal -> 80x24, ASCII in the C locale
cat >"$tmp/drift.csv" <<'EOF_CSV'
variant,step,mean,drift,retained,unchanged_frac
fp64,0,600,0,,0
fp64,100,650,50,1,0
fp64,200,700,100,1,0
bf16-rne,0,600,0,,0
bf16-rne,100,600,0,0,1
bf16-rne,200,600,0,0,1
EOF_CSV
run plot "$tmp/drift.csv"
expect_rc "plot drift csv" 0
res=$(awk 'length($0) > 80 { print NR ": " length($0) }' "$tmp/out" | head -3)
[ -z "$res" ] && ok "plot: lines fit 80 columns" || bad "plot: lines fit 80 columns" "$res"
[ "$(wc -l <"$tmp/out")" -le 24 ] && ok "plot: at most 24 lines" || bad "plot: at most 24 lines" "$(wc -l <"$tmp/out")"
out_line "plot drift: legend (fp64 '*', bf16-rne '+')" "** fp64   ++ bf16-rne"
out_line "plot drift: x label" "$(printf '%80s' step)"
out_has "plot drift: y label" "retained"
if LC_ALL=C grep -q "$(printf '[\200-\377\033]')" "$tmp/out"; then
	bad "plot C locale, not a tty: plain ASCII, no colour"; show_io
else
	ok "plot C locale, not a tty: plain ASCII, no colour"
fi
if locale -a 2>/dev/null | grep -qix 'c.utf-\{0,1\}8'; then
	LC_ALL=C.UTF-8 "$MIXPREC" plot "$tmp/drift.csv" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	expect_rc "plot in a UTF-8 locale" 0
	# piped, so no colour: two series are told apart by their marks, not
	# braille dots (U+2800..U+28FF, e2 a0..a3 xx in UTF-8); the axes stay
	# box-drawing (braille in colour: tests/test_plot.c and tui-script.sh)
	if ! LC_ALL=C grep -q "$(printf '\342[\240-\243]')" "$tmp/out" && grep -q '└' "$tmp/out"; then
		ok "plot UTF-8, piped: marks instead of braille, box-drawing axes"
	else
		bad "plot UTF-8, piped: marks instead of braille, box-drawing axes"; show_io
	fi
	LC_ALL=C.UTF-8 "$MIXPREC" plot "$tmp/drift.csv" --ascii >"$tmp/out" 2>"$tmp/err"
	out_line "plot --ascii in a UTF-8 locale" "** fp64   ++ bf16-rne"
fi
# colour only on a terminal (script(1) gives it one), and not with NO_COLOR
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
	esc=$(printf '\033')
	NO_COLOR= TERM=xterm script -qec "'$MIXPREC' plot '$tmp/drift.csv' --width 40 --height 10" /dev/null \
		>"$tmp/out" 2>&1 </dev/null
	grep -q "$esc\[34m" "$tmp/out" && ok "plot on a terminal: series 0 in blue" \
		|| { bad "plot on a terminal: series 0 in blue"; show_io; }
	NO_COLOR=1 TERM=xterm script -qec "'$MIXPREC' plot '$tmp/drift.csv' --width 40 --height 10" /dev/null \
		>"$tmp/out" 2>&1 </dev/null
	grep -q "$esc" "$tmp/out" && { bad "plot on a terminal with NO_COLOR: no escapes"; show_io; } \
		|| ok "plot on a terminal with NO_COLOR: no escapes"
	NO_COLOR= TERM=dumb script -qec "'$MIXPREC' plot '$tmp/drift.csv' --width 40 --height 10" /dev/null \
		>"$tmp/out" 2>&1 </dev/null
	grep -q "$esc" "$tmp/out" && { bad "plot on a dumb terminal: no escapes"; show_io; } \
		|| ok "plot on a dumb terminal: no escapes"
	grep -q "fp64" "$tmp/out" && ok "plot on a dumb terminal: drawn" || { bad "plot on a dumb terminal: drawn"; show_io; }
else
	echo "skip plot colour checks (no script(1))"
fi
run plot "$tmp/drift.csv" --by= --y mean,drift --title "My T"
expect_rc "plot --by= --y mean,drift" 0
out_has "plot --title" "My T"
out_line "plot two y columns: legend" "** mean   ++ drift"

printf 'step,policy,loss\n1,a,0.5\n2,a,abc\n' >"$tmp/bad.csv"
run plot "$tmp/bad.csv"
usage_error "plot bad cell" "bad.csv:3: column 'loss': 'abc' is not a number"
printf 'x,y\n1,2\n3,4,5\n' >"$tmp/bad.csv"
run plot "$tmp/bad.csv" --y y
usage_error "plot wrong field count" "bad.csv:3: 3 fields, the header has 2"
printf 'x,y\n1,"2\n' >"$tmp/bad.csv"
run plot "$tmp/bad.csv" --y y
usage_error "plot unclosed quote" "bad.csv:2:" "quote"
run plot "$tmp/drift.csv" --y nope
usage_error "plot --y nope" "--y: no column 'nope'" "variant, step"
printf 'a,b\n1,2\n' >"$tmp/other.csv"
run plot "$tmp/other.csv"
usage_error "plot unknown CSV without --y" "--y" "a, b"
run plot "$tmp/other.csv" --y b
expect_rc "plot unknown CSV with --y" 0
run plot "$tmp/drift.csv" --width 10
usage_error "plot --width 10" "20x6"
run plot "$tmp/drift.csv" --width x
usage_error "plot --width x" "--width"
run plot
usage_error "plot without a file" "no CSV file"
run plot "$tmp/drift.csv" "$tmp/budget.csv"
usage_error "plot two files" "one CSV file"
run plot "$tmp/drift.csv" --frob
usage_error "plot --frob" "--frob"
run plot "$tmp/no-such.csv"
expect_rc "plot missing file" 3
err_has "plot missing file: named" "no-such.csv"

run plot "$tmp/drift.csv" --svg "$tmp/p.svg" --title "Drift <1>" --width 300 --height 200
if [ "$rc" -eq 0 ]; then
	out_empty "plot --svg"
	# through cairo: an SVG document of 300x200 pixels, its text drawn as glyphs
	if head -n 2 "$tmp/p.svg" | grep -Fq 'width="300px" height="200px"' && grep -Fq '<symbol' "$tmp/p.svg" \
		&& tail -n 1 "$tmp/p.svg" | grep -Fqx '</svg>'; then
		ok "plot --svg: a 300x200 SVG through cairo"
	else
		bad "plot --svg: a 300x200 SVG through cairo" "$(head -c 300 "$tmp/p.svg")"
	fi
else
	expect_rc "plot --svg without cairo" 3
	err_has "plot --svg without cairo: says so" "without cairo"
fi
run plot "$tmp/drift.csv" --png "$tmp/p.png" --width 300 --height 200
if [ "$rc" -eq 0 ]; then
	# PNG signature, then IHDR width 300 = 0x12c, height 200 = 0xc8
	sig=$(od -An -tx1 -N24 "$tmp/p.png" | tr -d ' \n')
	[ "$sig" = "89504e470d0a1a0a0000000d494844520000012c000000c8" ] && ok "plot --png: a 300x200 PNG" \
		|| bad "plot --png: a 300x200 PNG" "$sig"
	run plot "$tmp/drift.csv" --png "$tmp/no-such-dir/p.png"
	expect_rc "plot --png into a missing directory" 3
	err_has "plot --png error names the file" "no-such-dir/p.png"
else
	expect_rc "plot --png without cairo" 3
	err_has "plot --png without cairo: says so" "built without cairo"
fi
run plot "$tmp/drift.csv" --png "$tmp/p.png" --svg "$tmp/p.svg"
usage_error "plot --png and --svg" "one image"
if [ -c /dev/full ]; then
	"$MIXPREC" plot "$tmp/drift.csv" >/dev/full 2>"$tmp/err"
	rc=$?
	expect_rc "plot > /dev/full" 3
fi

# ---------------------------------------------------------------------------
finish
