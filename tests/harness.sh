# Shared by the shell tests (sourced): the verdict functions, the check that
# the program exists, a private temporary folder and the final tally.
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
