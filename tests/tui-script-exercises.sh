#!/bin/sh
# In-process TUI tests of the Exercises screen and the hand-rounding lab:
# labels and text at 80x24, hints and the worked solution in reach, answers
# checked wrong then right, optional fields, one checked step at a time, from
# key scripts rendered off-screen by `mixprec tui --keys FILE --dump OUT` (no
# terminal needed), each dumped screen compared with tests/tui/NAME.txt.
#
# An expected line that starts with "~" is an extended regular expression for
# the whole line; it is used only where a value is random by design
# (stochastic rounding), drawn by the plot module, which has its own tests,
# or taken from a lesson (its prose, titles and section counts), which the
# lessons' authors edit: the screens check the reader, not the lesson text.
# Every other value on the expected screens was derived by hand; the
# derivations are in the comments below, next to each screen.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

srcdir=${srcdir:-.}
. "$srcdir/tests/harness.sh"
tui_start tuiex
tui_dumps

# --- Exercises at 80x24: a field label too long for its row ---
# 7.4b's longest field name is unscaled_flushes (16): answers from column
# 3 + 16 + 1 = 20, 22 wide, labels from 20 + 22 + 1 = 43 with 80 - 43 - 1 = 36
# columns: "step 2: what every gradient is multiplied by" (44) keeps 35 and an
# ellipsis ("~" in ASCII); the current field's label follows in full.
script cut --start exercises <<'EOF'
wait
keys Down Down Down Enter
wait
keys j
dump factor
EOF
has cut factor '^ > factor +\.{22} step 2: what every gradient is mult~$' "a label cut short at 80 columns ends in an ellipsis"
has cut factor '^   step 2: what every gradient is multiplied by$' "the current field's label is shown in full"

# greedy SCRIPT LABEL START WIDTH DESCRIPTION: from the first line matching
# START to the next blank line, a paragraph is filled greedily at WIDTH
# columns (from column 3): no line could have taken the next line's first
# word, so no break comes from the source file's own line length.
greedy() {
	if screen "$tmp/$1.out" "$2" | awk -v start="$3" -v w="$4" '
		!on && $0 ~ start { on = 1; match($0, /^ */); ind = RLENGTH }
		on && (/^ *$/ || (match($0, /^ */) && RLENGTH != ind && n > 0 && RLENGTH < ind)) { exit }
		on {
			sub(/^ +/, ""); n++
			if (n > 1) { split($0, f, " "); if (length(prev) + 1 + length(f[1]) <= w) { bad = 1; print prev " | " f[1] } }
			prev = $0
		}
		END { exit bad || n < 2 }' >"$tmp/greedy"; then
		ok "$1: $5"
	else
		bad "$1: $5" "$(cat "$tmp/greedy")"
	fi
}

# --- Exercises at 80x24: every hint in reach, text filled to the width ---
# 7.4d has three hints; with all three shown they no longer fit below its
# eight fields: the page scrolls so that the newest is in view (h), K scrolls
# back up to the prompt, and J past the end stops at the last page instead
# of a blank one. Hints and the worked solution are filled to the screen's
# width (76 columns from column 3; the solution's prose 77 from column 2),
# not broken where the exercise file breaks them.
script exscroll --start exercises <<'EOF'
wait
keys j j j j j Enter h h h
dump hints
keys K K K K K K
dump top
keys J J J J J J J J J J J J J J J J J J J J
dump bottom
keys w J J J J J J J J J J J J J J J J J J J J J J J J J J J J J J
dump worked-end
keys w K K K K K K K K k k k k k k k k
keys Up Up Up Up Up Up Up Up
EOF
has exscroll hints '^   Hint 3 of 3: ' "h h h: the third hint is in view"
has exscroll hints 'J/K scroll 100%$' "... the page says it scrolls, and is at its end"
has exscroll top '^ 7\.4d  ' "K scrolls back to the top"
has exscroll top '^   Hint 1 of 3: ' "... where the first hint is"
has exscroll bottom '^   Hint 3 of 3: ' "J past the end stops at the last page"
greedy exscroll hints '^   Hint 3 of 3: ' 76 "hint 3 is filled to the width, not the file's line breaks"
greedy exscroll top '^   Hint 1 of 3: ' 76 "hint 1 likewise"
n=$(screen "$tmp/exscroll.out" worked-end | sed '1d;$d' | sed '$d' | grep -c '[^ ]')
if [ "$n" -ge 12 ]; then
	ok "exscroll: J past the worked solution's end keeps its last page ($n lines)"
else
	bad "exscroll: J past the worked solution's end keeps its last page" "$n non-blank lines"
fi
has exscroll worked-end 'J/K scroll 100%$' "... at 100%"
# 7.4a's solution opens with a paragraph of prose the engine wraps at its
# own width: on screen it is refilled at 77 columns from column 2.
script exflow --start exercises <<'EOF'
wait
keys j j Enter w
dump worked
keys w
type zz
keys Enter
dump malformed
EOF
greedy exflow worked '^  [A-Z]' 77 "the worked solution's prose is filled to the width"
# an answer that is not a number at all: the verdict fits its 11 columns
has exflow malformed '^ > fp16_min_normal zz\.* x malformed ' "a malformed answer says so in full"

# --- Exercises: wrong, then right ---
# 7.4d for the default variant V = 0.1: fp16 0.1 is 0x2e66 (see the Bit
# explorer above); 0x2e67 is its upper neighbour, which the engine recognises
# as rounding the wrong way. The answer is checked on Enter.
script exercise --start exercises <<'EOF'
dump loading
wait
keys j j j j j Enter
dump ex-7.4d
type 0x2e67
keys Enter
dump ex-wrong
keys e C-u
type 0x2e66
keys Enter
dump ex-right
keys h
dump ex-hint
EOF
has exercise loading 'Loading the exercises' "the list loads in the background, saying so"
has exercise ex-7.4d '^ 7\.4d  Round a value by hand to fp16, bf16 and fp32' "the list opens exercise 7.4d"
has exercise ex-7.4d 'Round V = 0\.1 by hand' "the prompt has the default variant, V = 0.1"
has exercise ex-wrong '^ > fp16_bits +0x2e67\.* x wrong ' "0x2e67: wrong"
has exercise ex-wrong 'other neighbour' "... and the feedback names the mistake (the other neighbour)"
has exercise ex-right '^   fp16_bits +0x2e66\.* \* right ' "0x2e66: right"
has exercise ex-right '^ > bf16_bits ' "the cursor moves on to the next field"
has exercise ex-right '^ fp16_bits right; the cursor moved on to bf16_bits$' "... and the status line says so"
has exercise ex-hint 'Hint 1 of 3: Start with the exponent of 0\.1: between' "h shows the first hint, with V filled in"

# 7.4f's steps field is optional: the right stall value alone solves it
# (bf16, beta2 = 0.995 by default: v stops at 0.609375, derived in
# tests/test_exercise_premise.c).
script optional --start exercises <<'EOF'
wait
keys j j j j j j j Enter
dump ex-7.4f
type 0.609375
keys Enter
dump ex-solved
EOF
has optional ex-7.4f '^ 7\.4f  ' "the list opens exercise 7.4f"
has optional ex-solved 'Solved: every required field right' "the stall value alone solves it: steps is optional"

# --- the hand-rounding lab: one checked step at a time ---
# 0.1 to fp16 (derived in tests/cli-exercise.sh too): 0.1 = 1.6 * 2^-4, e = -4, field
# -4 + 15 = 11; 1.6 = 1.1001100110|011...b: the kept fraction 1001100110,
# guard 0, round 1, sticky 1, so no rounding up; 0 01011 1001100110 = 0x2e66.
# Only the first step is shown at first; a wrong step keeps the next one
# hidden. Field names are up to 14 wide (fp16_exp_field): answers from
# 3 + 14 + 1 = 18, 22 wide, a verdict from 41 (12 columns), labels from 53
# with 80 - 53 - 1 = 26 columns: a longer label keeps 25 and ends in "~" (the
# ASCII ellipsis), and the current field's label follows in full under the
# fields ("the exponent field, e + 15, as a number", "the fp16 bit pattern of
# 0.1").
script handround --start handround <<'EOF'
dump hr-start
type -4
keys Enter
type 10
keys Enter
dump hr-wrong
keys e C-u
type 11
keys Enter
type 1001100110
keys Enter
type 1
keys Enter
keys e C-u
type 0
keys Enter
type 1
keys Enter
type 1
keys Enter
type no
keys Enter
type 0x2e66
keys Enter
dump hr-solved
keys q j j j j j j j j Enter
wait
dump list-after
keys q Tab j Enter
dump hr-again
EOF
expect handround hr-start
expect handround hr-wrong
expect handround hr-solved
# Left for the Exercises list and opened again from Home (q to Home, where
# the selection stayed on All exercises; Tab to the Labs, j to the
# Hand-rounding lab): the session kept the lab as it was left, every step
# answered and right, the same screen as when it was solved.
expect handround hr-again hr-solved
has handround list-after '^ > \[\*\] round\.1 ' "the Exercises list marks round.1 solved"
if grep -q '^exercise:round\.1,' "$XDG_STATE_HOME/mixprec/progress.csv" 2>/dev/null; then
	ok "handround: progress recorded in progress.csv, as mixprec check records it"
else
	bad "handround: progress recorded in progress.csv" "$(cat "$XDG_STATE_HOME/mixprec/progress.csv" 2>&1)"
fi
# A later session (same state folder) opens the lab with no answers typed,
# yet says that round.1 is solved, from progress.csv: not "0 of 8 right" as
# if it never was.
script handround2 --start handround <<'EOF'
dump hr-later
EOF
has handround2 hr-later '^   Solved before: your progress records it\.' "a later session shows round.1 as solved before"
has handround2 hr-later '^ 0 of 8 right \(solved before\)   h: hint' "... and the status line says so beside 0 of 8"

# --- glyphs: every dump ASCII in the C locale (tests/tui-script.sh counts
# this check once, for its own dumps; here it speaks only when it fails) ---
if LC_ALL=C grep -q "$(printf '[\200-\377]')" "$tmp"/*.out; then
	bad "C locale: every dump is ASCII" "$(LC_ALL=C grep -l "$(printf '[\200-\377]')" "$tmp"/*.out)"
fi

finish
