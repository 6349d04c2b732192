#!/bin/sh
# Set-up without noise: the archiver the build uses takes its flags without
# a warning, configure names no placeholder bug-report address, and ./run in
# a built tree prints nothing of its own on stderr when nothing needs
# building (only the program's output is left).
#
# ./run installs missing packages and configures when it has to: that part
# runs only in a tree built in place where every package ./run lists is
# installed and nothing would make ./run configure again; elsewhere (a
# distcheck build out of tree) it is skipped with 77 after the other checks.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec
make_tmp runquiet
top=${srcdir:-.}

# --- the archiver: the Makefile's AR and ARFLAGS on a scratch archive ---
ar=$(sed -n 's/^AR = //p' Makefile)
arflags=$(sed -n 's/^ARFLAGS = //p' Makefile)
if [ -z "$ar" ]; then
	bad "the Makefile names an archiver (AR = ...)"
else
	echo member >"$tmp/member.txt"
	# shellcheck disable=SC2086
	(cd "$tmp" && $ar $arflags t.a member.txt) >"$tmp/ar.out" 2>&1
	st=$?
	if [ "$st" -eq 0 ] && ! grep -q 'modifier ignored' "$tmp/ar.out" && [ ! -s "$tmp/ar.out" ]; then
		ok "'$ar $arflags' archives without a word"
	else
		bad "'$ar $arflags' archives without a word" "exit $st: $(head -c 300 "$tmp/ar.out")"
	fi
fi

# --- configure's help and the configured package: no placeholder address ---
"$top/configure" --help >"$tmp/help" 2>&1
if grep -q 'example\.invalid' "$tmp/help"; then
	bad "configure --help names no placeholder address" "$(grep 'example\.invalid' "$tmp/help")"
else
	ok "configure --help names no placeholder address"
fi
if grep -q 'example\.invalid' config.h; then
	bad "config.h names no placeholder address" "$(grep 'example\.invalid' config.h)"
else
	ok "config.h names no placeholder address"
fi

# --- ./run itself: only where it would neither install nor configure ---
skip=
if [ "$(cd "$top" && pwd -P)" != "$(pwd -P)" ]; then
	skip="the tree is built out of its source folder"
elif ! command -v dpkg-query >/dev/null 2>&1; then
	skip="no dpkg-query to see whether ./run would install packages"
else
	for p in $(sed -n '/^packages=(/,/^)/p' "$top/run" | grep -v '[()]'); do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			skip="package $p is missing: ./run would install it"
			break
		fi
	done
fi
if [ -z "$skip" ]; then
	if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] || [ ! -f Makefile ] ||
		[ "$top/configure" -nt config.status ]; then
		skip="./run would bootstrap or configure this tree again"
	fi
fi
if [ -n "$skip" ]; then
	echo "SKIP: ./run not checked: $skip"
	[ "$fail" -eq 0 ] || exit 1
	exit 77
fi

# the flags this tree was configured with through ./run, so that it does
# not configure again; a make of its own, not a job of the make running us
MIXPREC_CONFIGURE_FLAGS=$(cat .run-flags 2>/dev/null || true)
export MIXPREC_CONFIGURE_FLAGS
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES || true

"$top/run" --version </dev/null >"$tmp/out1" 2>"$tmp/err1"
rc1=$?
"$top/run" --version </dev/null >"$tmp/out2" 2>"$tmp/err2"
rc2=$?
if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ]; then
	ok "./run --version twice: exit 0"
else
	bad "./run --version twice: exit 0" "exits $rc1, $rc2" "$(head -c 400 "$tmp/err1")"
fi
# the program's own line, as mixprec --version prints it
"$MIXPREC" --version >"$tmp/direct" 2>&1
if cmp -s "$tmp/direct" "$tmp/out2"; then
	ok "./run --version prints what mixprec --version prints"
else
	bad "./run --version prints what mixprec --version prints" "got: $(head -c 200 "$tmp/out2")"
fi
if [ -s "$tmp/err2" ]; then
	bad "./run with nothing to build: stderr empty" "$(head -n 5 "$tmp/err2")"
else
	ok "./run with nothing to build: stderr empty"
fi
finish
