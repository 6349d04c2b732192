#!/bin/sh
# In-process TUI tests: key scripts rendered off-screen by
# `mixprec tui --keys FILE --dump OUT` (no terminal needed), each dumped
# screen compared with the expected text in tests/tui/NAME.txt: Home, the
# Bit explorer, the Drift lab, the lesson reader, progress and resume, the
# mouse, glyphs by locale, errors and the documented keys. The labs:
# tests/tui-script-labs.sh; the exercises: tests/tui-script-exercises.sh.
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
tui_start tui
tui_dumps

# --- Home, help, a terminal too small, resize ---
# Home lists the lessons with their section counts (the headings of each
# lesson file, counted here with grep) and the labs (at 80x24 the last, the
# Block explorer, scrolls into view when selected); the ? overlay lists
# the Home keys and then the global ones from the same tables as the keymap.
script home <<'EOF'
dump home
keys ?
dump home-help
keys Esc
resize 60x20
dump too-small
resize 80x24
dump home-again
EOF
expect home home
expect home home-help
# below 80x24: only the message, naming both sizes
expect home too-small
# back at 80x24 the same Home screen again
expect home home-again home
for lesson in mixed-precision fp32-state residual-drift low-precision rounding-rules low-precision-training frontier; do
	n=$(grep -c '^#' "$srcdir/lessons/$lesson.md")
	case $lesson in
	mixed-precision) title='Mixed precision training' ;;
	memory-at-scale) title='Memory at scale' ;;
	fp32-state) title='Why fp32 stays' ;;
	low-precision) title='Below 16 bits: formats and scales' ;;
	rounding-rules) title='Rounding rules: to odd' ;;
	low-precision-training) title='Training in fp8 and fp4' ;;
	frontier) title='The 4-bit frontier' ;;
	*) title='Why long bf16 runs stall' ;;
	esac
	has home home "$title.* 0/$n sections read" "$lesson: $n sections (its headings), none read"
done

# --- Bit explorer ---
# 0.1: fp32 0x3dcccccd = 0.100000001490116119384765625 (the classic), rel.err
# 1.49e-8, ulp 2^-27 = 7.45e-9; tf32 keeps the top 19 bits: the 13 dropped,
# 0x0ccd, are below half of 0x2000, so 0x3dcc c000 >> 13 = 0x1ee66 =
# 0.0999755859375, as fp16 0x2e66 (both 10 fraction bits), rel.err 2.44e-4,
# ulp 2^-14 = 6.1e-5; bf16 0x3dcd = 0.10009765625 (the fp32 pattern rounded
# up at bit 16: 0xcccd > 0x8000), rel.err 9.77e-4, ulp 2^-11 = 4.88e-4;
# 0.1 = 1.6 * 2^-4: e4m3 (bias 7) 1.625 * 2^-4 = 0.1015625 = 0 0011 101 = 0x1d,
# rel.err 0.0156, ulp 2^-7; e5m2 (bias 15) 1.5 * 2^-4 = 0.09375 = 0 01011 10 =
# 0x2e, rel.err 0.0625, ulp 2^-6 = 0.0156.
# 600 = 1.171875 * 2^9 = 1.0010110b * 2^9: bf16 0 10001000 0010110 = 0x4416,
# fp32 0x44160000, fp16 (bias 15) 0 11000 0010110000 = 0x60b0; e4m3's largest
# value is 448, so 600 overflows to its NaN 0x7f; e5m2 rounds 1.171875 to 1.25:
# 640 = 0x61, rel.err 40/600 = 0.0667, ulp 2^(9-2) = 128. Toggling bf16's last
# bit gives 0x4417 = 604 (the spacing there is 4), rel.err 4/600 = 0.00667.
script bits --start bits <<'EOF'
dump bits-0.1
keys e C-u
type 600
keys Enter j j j
keys l l l l l l l l l l l l l l l Space
dump bits-600-toggled
keys r +
dump next
keys - -
dump prev
keys e C-u
type 1/0x
keys Enter
dump bad-value
EOF
expect bits bits-0.1
expect bits bits-600-toggled
has bits next '^>bf16 .* 0x4417 ' "+ steps bf16 600 to its neighbour 604 = 0x4417"
has bits next '^ += 604 ' "... whose value is 604"
has bits prev '^>bf16 .* 0x4415 ' "- - steps back past 600 to 596 = 0x4415"
has bits prev '^ += 596 ' "... whose value is 596"
has bits bad-value '1/0x' "a malformed value is reported, the text kept for editing"

# The fp6, fp4, FNUZ and e8m0 formats, below fp8-e5m2, reached by scrolling (six formats fit
# at 80x24). 0.1 in fp4-e2m1 is 0 (below 0.25, half the min subnormal 0.5):
# 0x0. In e8m0 it is 2^-3 = 0x7c (above 0.09375, the midpoint of 2^-4 and
# 2^-3), eight exponent bits and no sign bit. fp8-e4m3fnuz (shown by its
# alias) has bias 8: 0.1 = 1.625 * 2^-4 = 0 0100 101. nan has no fp4 code.
script bitsnew --start bits <<'EOF'
keys j j j j j j j j j j j
dump e8m0
keys e C-u
type nan
keys Enter
dump nan
EOF
has bitsnew e8m0 'class  7-12 of 12$' "scrolled to the last six of the twelve formats"
has bitsnew e8m0 '^>e8m0     01111100  +0x7c  +normal' "e8m0: 0.1 -> 2^-3 = 0x7c, eight exponent bits, no sign"
has bitsnew e8m0 '^ fp4-e2m1 0 00 0  +0x0  +zero' "fp4-e2m1: 0.1 -> 0 = 0x0"
has bitsnew e8m0 '^ e4m3fnuz 0 0100 101  +0x25 ' "fp8-e4m3fnuz: 0.1 -> 0 0100 101 = 0x25"
has bitsnew nan '^ fp4-e2m1 .* no encoding$' "nan: fp4-e2m1 has no encoding for it"
has bitsnew nan '^>e8m0 .* 0xff  +nan$' "nan: e8m0's NaN 0xff"

# --- Drift lab ---
# dist constant, mean 0.5, x0 600, 10,000 steps: fp64 and fp32 add every 0.5
# exactly (600 + 5000 = 5600 < 2^13 needs 13 of fp32's 24 bits): drift 5000,
# retained 1, unchanged 0. bf16's spacing at 600 is 4: 600.5 rounds back to
# 600 every time: drift 0, unchanged 1. fp16's spacing is 0.5 up to 1024 and 1
# above, where 1024.5 is a tie that goes to the even 1024: the value stops
# after (1024 - 600) / 0.5 = 848 steps, drift 424, retained 424/5000 = 0.0848,
# unchanged (10000 - 848)/10000 = 0.9152. Stochastic rounding is unbiased and
# Kahan's compensation recovers the lost parts: both within 1% of 5000.
script drift --start drift <<'EOF'
keys j j j j Enter s
wait
dump drift-constant
EOF
expect drift drift-constant

# A value is checked as it is entered: 'abc' for std is refused at once (the
# field stays open, the reason on the status line, wrapped rather than cut at
# 80 columns: it ends in "inf or nan)"), as is a step count of 1e9999.
# Leaving the lab (Esc) and opening it again from Home keeps what was typed
# (std 0.25), for the rest of the session.
script driftkeep <<'EOF'
keys j j j j j j j j j j j Enter
keys j j j j j j Enter C-u
type abc
keys Enter
dump bad-std
keys C-u
type 0.25
keys Enter k k k k k Enter C-u
type 1e9999
keys Enter
dump bad-steps
keys Esc Esc
dump left
keys Enter
dump back
EOF
has driftkeep bad-std "^ std: 'abc': not a number" "std 'abc' is refused on Enter"
has driftkeep bad-std 'inf or nan\)$' "... the whole message is shown, wrapped"
has driftkeep bad-std '^ dist <[a-z]+> +mean \[0\.5\] +std abc' "... and the field stays open for editing"
has driftkeep bad-steps "^ steps: '1e9999' is not a whole number in 1\.\.100000000" "steps 1e9999 is refused on Enter"
has driftkeep left '^ mixprec \| Home ' "Esc Esc leaves the lab"
has driftkeep back '^ dist <[a-z]+> +mean \[0\.5\] +std \[0\.25\]' "reopened, the lab keeps std 0.25"
has driftkeep back '^ x0 \[600\] +steps \[10000\] ' "... and steps its valid 10000"

# --- Lesson reader: search, a runnable claim opens its lab ---
# The search puts the line with "zero 3" at the top, Tab selects that claim
# (the position line's numbers follow the lesson's length, so only its form
# is checked),
# Enter opens the Memory budget lab with --preset llama-7b --zero 3 --gpus 8.
# llama-7b: 6.7e9 parameters; bf16-mixed keeps 4 + 2 + 2 + 4 + 8 = 20 bytes a
# parameter: 26.8, 13.4, 13.4, 26.8 and 53.6 GB (GiB = GB / 1.073741824);
# ZeRO-3 over 8 GPUs shards all of it: 3.35, 1.675, 1.675, 3.35, 6.7 GB per GPU.
# Activations (Korthikanti et al.: s*b*h*(34 + 5*a*s/h) bytes per layer,
# s 2048, b 1, h 4096, a 32): 8388608 * 114 = 956301312 bytes, x 32 layers =
# 30.602 GB, 4.57 bytes a parameter, never sharded: 16.75 + 30.602 = 47.352 GB
# per GPU = 44.100 GiB; the whole replica 134 + 30.602 = 164.602 GB.
# Below, mixprec train's GPT (V 128, T 128, C 128, 4 layers: embeddings
# 2 * 128 * 128, per layer 4C + (3C*C + 3C) + (C*C + C) + (4C*C + 4C) +
# (4C*C + C) = 198272, final LayerNorm 2C: 826112 parameters) under
# bf16-mixed keeps 4, 2, 2, 4 and 8 bytes of each: 3.30, 1.65, 1.65, 3.30 and
# 6.61 MB, as the formula says for 826112 parameters; the activations as
# allocated are only checked for their form here (their formula, 135.45 MB,
# is checked against the allocation in test_budget.c).
script lesson <<'EOF'
keys Enter /
type zero 3
keys Enter Tab
dump lesson-zero3
keys Enter
wait
dump budget-zero3
keys k Enter C-u
type none
keys Enter
dump budget-noshape
EOF
# (the lesson's prose around the block is not compared: lessons change)
has lesson lesson-zero3 '^ > \$ mixprec budget --preset llama-7b --zero 3 --gpus 8$' "the search puts the block at the top, Tab selects it"
has lesson lesson-zero3 '^ >   Tab selects, Enter opens it in the Memory budget lab$' "... and says what Enter does"
# the reader's last row fits 80 columns: the position, then the key
# reminders in their short form (the full form ran out at "n: next")
has lesson lesson-zero3 '^ mixed-precision  section [0-9]+/[0-9]+  line [0-9]+/[0-9]+  [0-9]+%  Tab: claims  n: next$' "the status line fits, its reminders shortened"
expect lesson budget-zero3
# without a shape there are no activations: 20 bytes x 6.7e9 = 134 GB
# (124.797 GiB), all of it sharded over 8 GPUs: 16.750 GB each
has lesson budget-noshape '^ total +20\.00 +134\.000 +124\.797 +16\.750$' "Shape 'none': 134 GB, 16.75 GB per GPU"

# The fp32 recipe (Recipe, Left twice from bf16-mixed): one weight copy of
# 826112 x 4 bytes = 3.30 MB, the weights the GEMMs read; trainer and formula
# put it in the same column (working), with no master. Activations: the
# formula of budget/tinygpt.h for the trainer's default shape is 135454720
# bytes = 135.45 MB (derived by hand in test_budget.c, which also checks it
# against the trainer's allocation), in both rows.
script memfp32 --start budget <<'EOF'
wait
keys j j h h
dump fp32
EOF
has memfp32 fp32 '^ Recipe +< fp32 >' "Left twice picks the fp32 recipe"
has memfp32 fp32 '^ mixprec train, MB +0\.00 +3\.30 +3\.30 +0\.00 +6\.61 +135\.45$' "the trainer's fp32 copy in the working column"
has memfp32 fp32 '^ formula, MB +0\.00 +3\.30 +3\.30 +0\.00 +6\.61 +135\.45$' "... where the formula has it, and the activation formula beside the allocation"

# --- Progress and resume ---
# Reading the first pages of a lesson marks its sections read; the state
# survives the program and r resumes at the same line.
script progress <<'EOF'
keys j j j Enter Space Space
dump reading
keys q
dump home-after
EOF
top=$(screen "$tmp/progress.out" reading | sed -n 's/.*line \([0-9]*\)\/.*/\1/p')
has progress home-after "^  [> ] \\[~\\] Why long bf16 runs stall.* [1-8]/9 sections read" "a lesson read in part is marked [~]"
has progress home-after "r: resume residual-drift at line $top\$" "Home offers to resume at line $top"
if grep -q '^resume residual-drift$' "$XDG_STATE_HOME/mixprec/tui-state" 2>/dev/null; then
	ok "progress: written to \$XDG_STATE_HOME/mixprec/tui-state"
else
	bad "progress: written to \$XDG_STATE_HOME/mixprec/tui-state" "$(cat "$XDG_STATE_HOME/mixprec/tui-state" 2>&1)"
fi
if grep -q '^lesson:residual-drift#1,0,1,0$' "$XDG_STATE_HOME/mixprec/progress.csv" 2>/dev/null; then
	ok "progress: the sections read are in progress.csv (lesson:residual-drift#1 ...)"
else
	bad "progress: the sections read are in progress.csv" "$(cat "$XDG_STATE_HOME/mixprec/progress.csv" 2>&1)"
fi
script resume <<'EOF'
keys r
dump resumed
EOF
has resume resumed "residual-drift  section [0-9]+/9  line $top/" "a new run's r reopens the lesson at line $top"

# --- the mouse ---
# Home's "Bit explorer" row is screen row 14 (title bar, a blank, "Lessons",
# eight lessons, "Exercises", its item, "Labs": with eight lessons the groups
# lose their blank lines, and the last lab scrolls into view when selected); in the explorer bf16 is the fourth format, its
# bits on screen row 2 + 1 + 3 * 3 = 12: sign at column 10, a blank, 8 exponent
# bits at 12..19, a blank, 7 fraction bits at 21..27. Clicking column 27 and
# pressing Space flips bf16's last bit: 0x3dcd (0.1) becomes 0x3dcc =
# 1.1001100b * 2^-4 = 1.59375 / 16 = 0.099609375. The wheel scrolls a lesson
# by three lines.
script mouse <<'EOF'
click 10 14
dump clicked
click 27 12
keys Space
dump bit-clicked
keys q
keys k k Enter g
wheel down
dump wheel
EOF
has mouse clicked 'Home > Bit explorer' "a click on Home opens the Bit explorer"
has mouse bit-clicked '^>bf16 .* 0x3dcc ' "a click on bf16's last bit and Space give 0x3dcc"
has mouse bit-clicked '= 0\.099609375 ' "... = 0.099609375"
has mouse wheel 'line 4/' "the wheel scrolls the lesson three lines"

# --- glyphs: ASCII in the C locale, braille under UTF-8 ---
if LC_ALL=C grep -q "$(printf '[\200-\377]')" "$tmp"/*.out; then
	bad "C locale: every dump is ASCII" "$(LC_ALL=C grep -l "$(printf '[\200-\377]')" "$tmp"/*.out)"
else
	ok "C locale: every dump is ASCII"
fi
if locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$'; then
	# in colour (NO_COLOR empty): without colour the marks replace braille, below
	NO_COLOR= LC_ALL=C.UTF-8 script utf8 --start drift <<'EOF'
keys j Enter C-u
type 200
keys Enter s
wait
dump utf8
EOF
	# U+2800..U+28FF (braille) are e2 a0..a3 xx in UTF-8
	if LC_ALL=C grep -q "$(printf '\342[\240-\243]')" "$tmp/utf8.out"; then
		ok "UTF-8 locale: the plot is drawn in braille"
	else
		bad "UTF-8 locale: the plot is drawn in braille"
	fi
else
	echo "skip UTF-8 locale check: no C.UTF-8 locale"
fi

# Without colour but in a UTF-8 locale the plot view still tells the six
# variants apart: the legend shows each one's mark (the ASCII marks of the
# plot module: * + o x # @ for series 1 to 6), not six identical line
# swatches, and the data area uses those marks instead of braille dots
# (U+2800..U+28FF: bytes e2 a0..a3).
if locale -a 2>/dev/null | grep -qi '^c\.utf-\{0,1\}8$'; then
	LC_ALL=C.UTF-8
	export LC_ALL
	script driftmono --start drift <<'EOF'
keys j j j j Enter s
wait
dump mono
EOF
	LC_ALL=C
	export LC_ALL
	has driftmono mono '^\*\* fp64   \+\+ fp32   oo bf16-rne   xx bf16-sr   ## bf16-kahan   @@ fp16-rne$' \
		"UTF-8, NO_COLOR: the legend shows each variant's mark"
	if screen "$tmp/driftmono.out" mono | LC_ALL=C grep -q "$(printf '\342[\240-\243]')"; then
		bad "driftmono: no braille dots without colour"
	else
		ok "driftmono: no braille dots without colour"
	fi
	has driftmono mono '[└]' "... while the axes stay box-drawing (UTF-8)"
else
	echo "skip driftmono: no C.UTF-8 locale"
fi


# --- errors ---
printf 'keys j\nkeys Bogus\n' >"$tmp/bad.keys"
"$MIXPREC" tui --keys "$tmp/bad.keys" --dump "$tmp/bad.out" </dev/null >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "bad.keys:2: unknown key 'Bogus'" "$tmp/err"; then
	ok "a bad key script: exit 2 naming file:line"
else
	bad "a bad key script: exit 2 naming file:line" "rc $rc: $(cat "$tmp/err")"
fi
"$MIXPREC" tui --keys "$tmp/none.keys" </dev/null >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 3 ] && grep -q "none.keys" "$tmp/err" && ok "an unreadable key script: exit 3" ||
	bad "an unreadable key script: exit 3" "rc $rc: $(cat "$tmp/err")"
"$MIXPREC" tui --size 80 </dev/null >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--size: '80'" "$tmp/err" && ok "tui --size 80: exit 2 naming the option" ||
	bad "tui --size 80: exit 2 naming the option" "rc $rc: $(cat "$tmp/err")"
"$MIXPREC" tui --start nowhere </dev/null >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--start: unknown screen 'nowhere'" "$tmp/err" && ok "tui --start nowhere: exit 2" ||
	bad "tui --start nowhere: exit 2" "rc $rc: $(cat "$tmp/err")"
# no command and no terminal: the workbench refuses and points at the CLI
"$MIXPREC" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "mixprec --help" "$tmp/err" && [ ! -s "$tmp/out" ] &&
	ok "mixprec without a terminal: exit 2, pointing at 'mixprec --help'" ||
	bad "mixprec without a terminal: exit 2, pointing at 'mixprec --help'" "rc $rc: $(cat "$tmp/err")"
"$MIXPREC" tui --help >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^Usage: mixprec \[tui\]' "$tmp/out" && ok "tui --help" || bad "tui --help" "rc $rc"

# --- the keys as documented: README's list is the program's own ---
"$MIXPREC" tui --list-keys >"$tmp/keys" 2>&1
awk '/^<!-- keys:begin -->$/ { on = 1; next } /^<!-- keys:end -->$/ { on = 0 } on && !/^```$/' \
	"$srcdir/README.md" >"$tmp/readme-keys"
if [ -s "$tmp/keys" ] && cmp -s "$tmp/keys" "$tmp/readme-keys"; then
	ok "README lists every key as the keymaps have them (tui --list-keys)"
else
	bad "README lists every key as the keymaps have them (tui --list-keys)" \
		"$(diff "$tmp/readme-keys" "$tmp/keys" | head -n 8)"
fi

finish
