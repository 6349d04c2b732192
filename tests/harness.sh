# Shared by the shell tests (sourced): the verdict functions, the check that
# the program exists, a private temporary folder and the final tally; the
# checks of a command's output for the CLI tests, and the key-script runner
# for the TUI tests (tui_dumps).
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

pass=0
fail=0

ok() {
	pass=$((pass + 1))
	echo "ok   $1"
}

# bad NAME [DETAIL...]; then bad_more, which a test may define (the tmux
# test shows the screen)
bad() {
	fail=$((fail + 1))
	echo "FAIL $1"
	shift
	for line in "$@"; do
		echo "     $line"
	done
	bad_more
}
bad_more() { :; }

# need_mixprec: skips the test when $MIXPREC (default ./mixprec) is not built.
need_mixprec() {
	MIXPREC=${MIXPREC:-./mixprec}
	if [ ! -x "$MIXPREC" ]; then
		echo "SKIP: $MIXPREC is not an executable (build it first)"
		exit 77
	fi
}

# make_tmp NAME: $tmp, a fresh folder removed on exit (after cleanup_more,
# which a test may define).
cleanup_more() { :; }
make_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/mixprec-$1.XXXXXX") || exit 99
	trap 'cleanup_more; rm -rf "$tmp"' 0
	trap 'exit 1' 1 2 15
}

# finish: the tally, and the exit status that is the verdict.
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ] || exit 1
	exit 0
}

# --- for the CLI tests: run the program, then check what it did ---
# run ARGS...: the program with stdin /dev/null; stdout, stderr in $tmp/out,
# $tmp/err, the exit status in $rc (make_tmp first).
run() {
	"$MIXPREC" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

show_io() {
	echo "     stdout: $(head -c 600 "$tmp/out" | head -n 8)"
	echo "     stderr: $(head -c 600 "$tmp/err" | head -n 4)"
}

# expect_rc NAME N; err_has / out_has NAME TEXT (fixed strings); same NAME A B
expect_rc() {
	if [ "$rc" -eq "$2" ]; then ok "$1: exit $2"; else bad "$1: exit $2" "got exit $rc"; show_io; fi
}

err_has() {
	if grep -Fq -e "$2" "$tmp/err"; then ok "$1"; else bad "$1" "stderr lacks: $2"; show_io; fi
}

out_has() {
	if grep -Fq -e "$2" "$tmp/out"; then ok "$1"; else bad "$1" "stdout lacks: $2"; show_io; fi
}

# check NAME STATUS DETAIL: ok when STATUS (the test command's $?) is 0
check() {
	if [ "$2" -eq 0 ]; then ok "$1"; else bad "$1" "$3"; fi
}

same() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "'$2' != '$3'"; fi
}

# --- more for the CLI tests: stdin from a file, whole lines, empty streams,
# usage errors and round's CSV rows checked against the format definitions ---
# run_in FILE ARGS...: as run, with stdin from FILE.
run_in() {
	in=$1
	shift
	"$MIXPREC" "$@" <"$in" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# out_line NAME LINE: stdout has LINE as a whole line.
out_line() {
	if grep -Fqx -e "$2" "$tmp/out"; then
		ok "$1"
	else
		bad "$1" "no stdout line: $2"
		show_io
	fi
}

# out_lacks NAME TEXT
out_lacks() {
	if grep -Fq -e "$2" "$tmp/out"; then
		bad "$1" "stdout has: $2"
		show_io
	else
		ok "$1"
	fi
}

out_empty() {
	if [ -s "$tmp/out" ]; then
		bad "$1: nothing on stdout"
		show_io
	else
		ok "$1: nothing on stdout"
	fi
}

err_empty() {
	if [ -s "$tmp/err" ]; then
		bad "$1: nothing on stderr"
		show_io
	else
		ok "$1: nothing on stderr"
	fi
}

# out_lines NAME N: stdout has exactly N lines.
out_lines() {
	n=$(wc -l <"$tmp/out" | tr -d ' ')
	if [ "$n" -eq "$2" ]; then
		ok "$1: $2 lines"
	else
		bad "$1: $2 lines" "got $n lines"
		show_io
	fi
}

# usage_error NAME TEXT... ARGS: a usage error: exit 2, stdout empty, stderr
# starts with "mixprec" and names every TEXT. Call after run.
usage_error() {
	name=$1
	shift
	expect_rc "$name" 2
	out_empty "$name"
	for t in "$@"; do
		err_has "$name: stderr names $t" "$t"
	done
}

# csv_bits NAME INPUT FORMAT BITS: the --csv row for INPUT,FORMAT has BITS.
csv_bits() {
	got=$(awk -F, -v i="$2" -v f="$3" '$1 "" == i "" && $2 == f { print $4 }' "$tmp/out")
	if [ "$got" = "$4" ]; then
		ok "$1: $2 as $3 is $4"
	else
		bad "$1: $2 as $3 is $4" "got '$got'"
		show_io
	fi
}

# csv_value NAME INPUT FORMAT VALUE: the value field, compared as text.
csv_value() {
	got=$(awk -F, -v i="$2" -v f="$3" '$1 "" == i "" && $2 == f { print $5 }' "$tmp/out")
	if [ "$got" = "$4" ]; then
		ok "$1: $2 as $3 has value $4"
	else
		bad "$1: $2 as $3 has value $4" "got '$got'"
		show_io
	fi
}

# Decoding a bit pattern in awk, from the format definition (exponent bits E,
# fraction bits M, bias B; e4m3 has no inf and only S.1111.111 is NaN).
# A round --csv row is consistent when its value field equals the decoded bits.
DECODE_AWK='
function hexval(s,   i, c, v) {
	s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		v = v * 16 + c
	}
	return v
}
function spec(name) {
	if (name == "fp32")     { E = 8; M = 23; B = 127; INF = 1; return }
	if (name == "tf32")     { E = 8; M = 10; B = 127; INF = 1; return }
	if (name == "fp16")     { E = 5; M = 10; B = 15;  INF = 1; return }
	if (name == "bf16")     { E = 8; M = 7;  B = 127; INF = 1; return }
	if (name == "fp8-e4m3") { E = 4; M = 3;  B = 7;   INF = 0; return }
	if (name == "fp8-e5m2") { E = 5; M = 2;  B = 15;  INF = 1; return }
	E = -1
}
# value of pattern v in the format set by spec(); "inf", "-inf", "nan" as text
function decode(v,   s, e, f, emax, x) {
	s = int(v / 2^(E + M)); e = int(v / 2^M) % 2^E; f = v % 2^M
	emax = 2^E - 1
	if (INF && e == emax) return f ? "nan" : (s ? "-inf" : "inf")
	if (!INF && e == emax && f == 2^M - 1) return "nan"
	if (e == 0) x = f * 2^(1 - B - M)
	else x = (2^M + f) * 2^(e - B - M)
	return s ? -x : x
}
'

# csv_consistent NAME: every row of round --csv has value == decode(bits) and
# abs_error == |value - input| (inputs plain decimals; to 1e-9 relative plus
# the binary64 reading error of the input).
csv_consistent() {
	res=$(awk -F, "$DECODE_AWK"'
	NR == 1 { next }
	{
		spec($2)
		if (E < 0) { print "unknown format " $2; bad++; next }
		d = decode(hexval($4))
		if (d == "nan" || d == "inf" || d == "-inf") {
			if ($5 != d) { print $0 ": value should be " d; bad++ }
			next
		}
		if ($5 + 0 != d) { printf "%s: bits decode to %.17g\n", $0, d; bad++ }
		if ($1 ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) {
			# the input read as binary64 is off by up to 2^-53 relative
			ae = $1 - d; if (ae < 0) ae = -ae
			tol = 1e-9 * ae + 2^-52 * ($1 < 0 ? -$1 : $1)
			if ($6 - ae > tol || ae - $6 > tol) {
				printf "%s: abs_error should be %.10g\n", $0, ae; bad++
			}
		}
	}
	END { if (NR < 2) print "no rows" }' "$tmp/out")
	if [ -z "$res" ]; then
		ok "$1: values match their bits, errors match |value - input|"
	else
		bad "$1: values match their bits, errors match |value - input|" "$res"
	fi
}

# private_state: progress saved in $tmp/state, never the user's, and no
# course seed or exercise folder from the environment (make_tmp first).
private_state() {
	MIXPREC_STATEDIR=$tmp/state
	export MIXPREC_STATEDIR
	unset MIXPREC_COURSE_SEED MIXPREC_EXERCISEDIR
}

# --- for the TUI key-script tests (tests/tui-script*.sh) ---
# tui_start NAME: the start of a TUI test: the built program, the ASCII
# fallback in the monochrome scheme (what the dumps are written and
# compared in), and a temporary folder $tmp named after NAME.
tui_start() {
	need_mixprec
	LC_ALL=C
	NO_COLOR=1
	export LC_ALL NO_COLOR
	make_tmp "$1"
}

# tui_dumps: defines script, screen, expect and has below (not for every
# test: script would hide script(1) from the CLI tests), with the expected
# screens in tests/tui and the workbench's state in $tmp/state (make_tmp
# first).
tui_dumps() {
	expdir=${srcdir:-.}/tests/tui
	XDG_STATE_HOME=$tmp/state
	export XDG_STATE_HOME

	# script NAME [OPTIONS...] < KEYS: runs a key script; dumps in $tmp/NAME.out
	script() {
		name=$1
		shift
		cat >"$tmp/$name.keys"
		"$MIXPREC" tui --keys "$tmp/$name.keys" --dump "$tmp/$name.out" "$@" </dev/null >"$tmp/$name.stdout" 2>"$tmp/$name.err"
		rc=$?
		if [ $rc -ne 0 ]; then
			bad "$name: the key script exits 0" "got $rc: $(head -c 300 "$tmp/$name.err")"
		fi
	}

	# screen DUMPFILE LABEL > text of that dump
	screen() {
		awk -v l="--- $2 ---" '$0 == l { on = 1; next } /^--- .* ---$/ { on = 0 } on' "$1"
	}

	# expect SCRIPT LABEL [EXPECTED]: compares a dumped screen with tests/tui/EXPECTED.txt
	expect() {
		want=$expdir/${3:-$2}.txt
		screen "$tmp/$1.out" "$2" >"$tmp/got"
		if [ ! -s "$tmp/got" ]; then
			bad "$1: screen '$2' was dumped"
			return
		fi
		if awk -v want="$want" '
			BEGIN { while ((getline l < want) > 0) e[++ne] = l }
			{ a[++na] = $0 }
			END {
				n = ne > na ? ne : na
				for (i = 1; i <= n && bad < 6; i++) {
					x = e[i]; y = a[i]
					if (substr(x, 1, 1) == "~") {
						if (y !~ ("^" substr(x, 2) "$")) {
							printf "line %d: want /%s/\n      got  %s\n", i, substr(x, 2), y; bad++
						}
					} else if (x != y) {
						printf "line %d: want %s\n      got  %s\n", i, x, y; bad++
					}
				}
				exit bad > 0
			}' "$tmp/got" >"$tmp/diff"; then
			ok "$1: screen '$2' as in $(basename "$want")"
		else
			bad "$1: screen '$2' as in $(basename "$want")"
			sed 's/^/     /' "$tmp/diff"
		fi
	}

	# has SCRIPT LABEL REGEX DESCRIPTION: the dumped screen has a line matching REGEX
	has() {
		if screen "$tmp/$1.out" "$2" | grep -Eq -- "$3"; then
			ok "$1: $4"
		else
			bad "$1: $4" "no line of screen '$2' matches /$3/"
			screen "$tmp/$1.out" "$2" | sed 's/^/     | /'
		fi
	}
}
