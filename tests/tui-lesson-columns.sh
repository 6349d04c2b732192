#!/bin/sh
# Every column a lesson names for a training run is a column of the
# Training lab, where the lesson's block opens: the lessons are scanned for
# "the `X` column" (across line breaks), and a phrase is the Training lab's
# when the command it reads runs `mixprec train` (the last `mixprec CMD`
# before it in its paragraph, else the last block before the paragraph) or
# when X is a column of mixprec train's own table (the lessons read that
# table's names); each such X must be a word of the lab's table header at 80x24,
# rendered off-screen by `mixprec tui --keys FILE --dump OUT` after a
# one-step run.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

srcdir=${srcdir:-.}
. "$srcdir/tests/harness.sh"
tui_start lessoncols
tui_dumps

# mixprec train's table header: its column names, one per line
"$MIXPREC" train --preset tiny --steps 1 2>/dev/null | awk '$1 == "policy" { for (i = 2; i <= NF; i++) print $i; exit }' \
	>"$tmp/cli-cols"
if grep -qx underflow "$tmp/cli-cols"; then
	ok "mixprec train's table names its columns (underflow among them)"
else
	bad "mixprec train's table names its columns (underflow among them)" "got: $(tr '\n' ' ' <"$tmp/cli-cols")"
fi

# lesson:line, the last block's command and the column, per phrase
for f in "$srcdir"/lessons/*.md; do
	awk -v name="$(basename "$f")" '
		# the command a phrase reads: the last `mixprec CMD` before it in
		# its paragraph, else the last block before the paragraph
		function scan(   s, m, before, c, k) {
			s = para
			c = cmd
			while (match(s, /[Tt]he `[^`]+` column/)) {
				m = substr(s, RSTART, RLENGTH)
				before = substr(s, 1, RSTART - 1)
				while ((k = index(before, "`mixprec ")) > 0) {
					before = substr(before, k + 9)
					c = before
					sub(/[ `].*/, "", c)
				}
				sub(/^[Tt]he `/, "", m)
				sub(/` column$/, "", m)
				print name ":" start, (c == "" ? "-" : c), m
				s = substr(s, RSTART + RLENGTH)
			}
			para = ""
		}
		/^```/ {
			scan()
			if (fence) { fence = 0; next }
			fence = 1
			mix = ($0 == "```mixprec")
			next
		}
		fence { if (mix && $1 == "mixprec") cmd = $2; next }
		/^[ \t]*$/ { scan(); next }
		{ if (para == "") start = NR; para = para " " $0 }
		END { scan() }
	' "$f"
done >"$tmp/phrases"

script lab --start train <<'EOF2'
keys n C-u
type 1
keys Enter s
wait
dump trained
EOF2
screen "$tmp/lab.out" trained | awk '$1 == "policy" { for (i = 1; i <= NF; i++) print $i; exit }' >"$tmp/lab-cols"
if [ -s "$tmp/lab-cols" ]; then
	ok "the Training lab shows its table after a run"
else
	bad "the Training lab shows its table after a run"
	screen "$tmp/lab.out" trained | sed 's/^/     | /'
fi

checked=0
while read -r where cmd col; do
	if [ "$cmd" != train ] && ! grep -qxF -- "$col" "$tmp/cli-cols"; then
		continue   # another lab's column (drift's retained)
	fi
	checked=$((checked + 1))
	if grep -qxF -- "$col" "$tmp/lab-cols"; then
		ok "$where: the '$col' column it names is in the Training lab"
	else
		bad "$where: the '$col' column it names is in the Training lab" \
			"the lab's columns: $(tr '\n' ' ' <"$tmp/lab-cols")"
	fi
done <"$tmp/phrases"
# the lessons name underflow and skipped after a train block: never none
if [ "$checked" -ge 2 ]; then
	ok "the scan found the lessons' training columns ($checked)"
else
	bad "the scan found the lessons' training columns" "$checked found: $(cat "$tmp/phrases")"
fi

finish
