#!/bin/sh
# The Training lab at 80x24, the smallest size the workbench runs at, as a
# designed layout: golden screens (tests/tui/train-80x24.txt after a run,
# tests/tui/train-help-80x24.txt for its help) and the rules the layout
# keeps, checked on every dumped screen of the lab: 24 lines of at most 80
# columns; no text cut (each policy, key text and table name whole, or
# ending in the ellipsis, "~" in ASCII); the help without a scroll; a plot
# of at least 7 rows of data beside two policies and of 5 in each of three
# panels; the fp8 view's labels off its cells. Dumps are off-screen
# (`mixprec tui --keys FILE --dump OUT`), in the ASCII fallback with
# NO_COLOR; a UTF-8 run keeps the same layout.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

srcdir=${srcdir:-.}
. "$srcdir/tests/harness.sh"
tui_start tuilayout
tui_dumps

# --- the screens ---
# fresh: the help before any run; then fp32 and bf16-mixed (j Space), 5
# steps at the tiny shape; l: their panels
script two --start train <<'EOF2'
keys ?
dump help
keys Esc j Space n C-u
type 5
keys Enter s
wait
dump trained
keys l
dump panels
EOF2
# fp32 with the two per-tensor fp8 recipes, 5 steps: the fp8 view (v) and
# three panels (v l); fp8-delayed and fp8-current are the 10th and 11th
# presets (train --policy list), 10 j from fp32
script three --start train <<'EOF2'
keys j j j j j j j j j j Space j Space n C-u
type 5
keys Enter s
wait
keys v
dump fp8
keys v l
dump panels
EOF2

# --- the golden screens, derived from the layout's rules ---
# train-help-80x24: the Training lab has 17 keys; with the gap and the 5
# global keys that is 23 rows, more than the 20 inside a box of the body's
# 22, so the global keys share one row ("? F1 help  q Esc back ..."): 19
# rows, the box 21 high from the row under the title bar, 78 wide from
# column 1 (at 80 columns), each key text whole in its 59 columns.
expect two help train-help-80x24
# train-80x24: the 15 presets in train --policy list order, four to a
# column of 20 (4 rows); the steps and csv fields, the tiny shape's line
# (train/shape.c: 1 layer, 32 channels, 2 heads, batch 4 x 32, lr 1e-3), the
# start-from field and the status; the table header, one row per policy;
# the plot's title naming its x axis ("loss by step"), centred
# ((80 - 12) / 2 = 34 blanks); 22 - 13 rows above it leave 9 for the plot:
# 7 of data, the axis, the tick labels from step 1 to 5, and the legend in
# the ASCII marks of series 0 and 1 ('*', '+').
# The table's masked numbers keep their column widths (loss %7.4f, ms
# %7.1f, scale %8.6g, skipped %7zu, underflow %9.3g, lost_upd %8.3g,
# resid_lost %10.3g, one blank between), and what is known exactly is not
# masked: neither policy scales its loss (scale 1, nothing skipped); fp32
# gradients are never flushed and bf16's range (down to 2^-133) holds the
# gradients of 5 steps, so underflow is 0; both update an fp32 master by
# Adam steps near lr = 1e-3, far above fp32's spacing of ~1.2e-7 at 1, so no
# update is lost (lost_upd 0).
expect two trained train-80x24

# --- the rules, on every screen ---
for d in two:help two:trained two:panels three:fp8 three:panels; do
	s=${d%%:*}
	l=${d#*:}
	screen "$tmp/$s.out" "$l" >"$tmp/scr"
	n=$(wc -l <"$tmp/scr")
	wide=$(awk 'length($0) > 80' "$tmp/scr" | wc -l)
	if [ "$n" -eq 24 ] && [ "$wide" -eq 0 ]; then
		ok "$s/$l: 24 lines, none over 80 columns"
	else
		bad "$s/$l: 24 lines, none over 80 columns" "$n lines, $wide too wide"
	fi
	if LC_ALL=C grep -q '[^ -~]' "$tmp/scr"; then
		bad "$s/$l: ASCII only (the C locale's fallback)"
	else
		ok "$s/$l: ASCII only (the C locale's fallback)"
	fi
	# every preset whole in the list: "[x] NAME" or "[ ] NAME", then a blank or the end
	missing=
	for p in $("$MIXPREC" train --policy list | awk '/^[^ ]/ { print $1 }'); do
		grep -Eq "\\[[x ]\\] $p( |\$)" "$tmp/scr" || missing="$missing $p"
	done
	[ -z "$missing" ] && [ "$l" != help ] && ok "$s/$l: every preset's name whole in the list"
	[ -n "$missing" ] && [ "$l" != help ] && bad "$s/$l: every preset's name whole in the list" "cut or missing:$missing"
	# the status line: the keys that fit, then where the rest are
	tail -n 1 "$tmp/scr" | grep -q '  ? all keys$' && ok "$s/$l: the key line ends in '? all keys'" ||
		bad "$s/$l: the key line ends in '? all keys'" "$(tail -n 1 "$tmp/scr")"
done

# the help: no scroll, every key of the lab with its whole text
screen "$tmp/two.out" help >"$tmp/help"
if grep -q 'scroll\|more' "$tmp/help"; then
	bad "help: fits without scrolling" "$(grep 'scroll\|more' "$tmp/help")"
else
	ok "help: fits without scrolling"
fi
"$MIXPREC" tui --list-keys | awk '/^Training lab:$/ { on = 1; next } /^[^ ]/ { on = 0 } on' >"$tmp/keys"
nk=0
cut=
while IFS= read -r k; do
	label=$(printf '%s\n' "$k" | cut -c3-18 | sed 's/ *$//')
	text=$(printf '%s\n' "$k" | cut -c20-)
	nk=$((nk + 1))
	grep -Fq "| $(printf '%-14s' "$label") $text " "$tmp/help" || cut="$cut [$label]"
done <"$tmp/keys"
if [ "$nk" -ge 17 ] && [ -z "$cut" ]; then
	ok "help: all $nk keys of the lab, each text whole"
else
	bad "help: all keys of the lab, each text whole" "$nk keys; cut or missing:$cut"
fi
grep -q '| ? F1 help  q Esc back  Q quit  H Home  ^L redraw ' "$tmp/help" &&
	ok "help: the global keys on one row" || bad "help: the global keys on one row"

# the table: the header's columns, the policies' names whole
screen "$tmp/three.out" panels >"$tmp/t3"
want='policy loss ms/step scale skipped underflow lost_upd resid_lost'
got=$(awk '$1 == "policy" { $1 = $1; print; exit }' "$tmp/t3")
same "table: the columns, underflow among them" "$got" "$want"
for p in fp32 fp8-delayed fp8-current; do
	grep -Eq "^\\*$p +[0-9]" "$tmp/t3" && ok "table: $p's name whole" || bad "table: $p's name whole"
done

# plot heights: the rows of data between the title and the axis ("+--")
rows_of_data() {
	awk -v top="$2" '$0 ~ top { t = NR; next } t && /^ +\+[-+]+/ { print NR - t - 1; exit }' "$1"
}
screen "$tmp/two.out" trained >"$tmp/t2"
h=$(rows_of_data "$tmp/t2" '^ +loss by step$')
[ "${h:-0}" -ge 7 ] && ok "plot: $h rows of data beside two policies (at least 7)" ||
	bad "plot: at least 7 rows of data beside two policies" "got '${h:-none}'"
# panels: the y label row "loss" then data down to the axis
h=$(rows_of_data "$tmp/t3" '^loss +loss +loss$')
[ "${h:-0}" -ge 5 ] && ok "panels: $h rows of data in each of three (at least 5)" ||
	bad "panels: at least 5 rows of data in each of three" "got '${h:-none}'"
titles=$(awk '/fp32 +fp8-delayed +fp8-current$/ { print "yes"; exit }' "$tmp/t3")
same "panels: three policies, three panels side by side (README: narrower in one row)" "$titles" yes

# the fp8 view: a blank between every label (at most 14 columns from column
# 1) and the first cell at column 16
screen "$tmp/three.out" fp8 >"$tmp/f8"
touch=$(awk '/^ fp8 scaling/ { on = 1 } on && NR <= 22 && substr($0, 16, 1) != " " && length($0) >= 16' "$tmp/f8")
[ -z "$touch" ] && ok "fp8 view: no label runs into its cells" || bad "fp8 view: no label runs into its cells" "$touch"
grep -Eq '^   max, last 5 +[^ ]' "$tmp/f8" && ok "fp8 view: 'max, last 5' then its sparkline" ||
	bad "fp8 view: 'max, last 5' then its sparkline"

# a click chooses the policy under it in the four columns: column 1 + 20 k,
# row r of the list on screen row 1 + r; bf16-pure is the 5th preset, the
# first of the second column (x 21..39), nvfp4 the 15th, the third of the
# fourth (x 61..79, screen row 3)
script click --start train <<'EOF2'
click 25 1
click 70 3
dump clicked
EOF2
has click clicked '^ \[x\] fp32 +\[x\] bf16-pure ' "a click on bf16-pure chooses it"
has click clicked '\[x\] nvfp4$' "a click on nvfp4 in the fourth column chooses it"

# UTF-8 and colour: the same layout (the help fits, the same header)
if locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$'; then
	LC_ALL=C.UTF-8
	unset NO_COLOR
	script utf --start train <<'EOF2'
keys ?
dump help
keys Esc j Space n C-u
type 2
keys Enter s
wait
dump trained
EOF2
	LC_ALL=C
	NO_COLOR=1
	if screen "$tmp/utf.out" help | grep -q 'scroll'; then
		bad "UTF-8: the help fits without scrolling"
	else
		ok "UTF-8: the help fits without scrolling"
	fi
	got=$(screen "$tmp/utf.out" trained | awk '$1 == "policy" { $1 = $1; print; exit }')
	same "UTF-8: the same table header" "$got" "$want"
else
	echo "note: no C.UTF-8 locale; the UTF-8 layout is not checked"
fi

finish
