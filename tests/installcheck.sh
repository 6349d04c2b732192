#!/bin/sh
# make installcheck: the installed mixprec, run outside any source tree and
# with none named in the environment, finds its installed lessons,
# exercises, corpus and man page.
#   installcheck.sh BINARY PKGDATADIR MANDIR SRCDIR
# SRCDIR only lists the files that should have been installed.
bin=$1 data=$2 man=$3 src=$4
# absolute: the checks run in an empty folder
src=$(cd "$src" && pwd) || exit 1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
unset MIXPREC_SRCDIR MIXPREC_LESSONDIR MIXPREC_EXERCISEDIR MIXPREC_DATADIR MIXPREC_COURSE_SEED
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mixprec-installcheck.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
MIXPREC_STATEDIR=$tmp/state
export MIXPREC_STATEDIR
cd "$tmp" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -z "${2:-}" ] || echo "     $2"; }
# try NAME COMMAND...: exit 0 expected
try() {
	name=$1
	shift
	if "$@" >"$tmp/out" 2>"$tmp/err"; then ok "$name"; else bad "$name" "exit $?: $(head -c 300 "$tmp/err")"; fi
}

[ -x "$bin" ] || { echo "installcheck: $bin is not installed" >&2; exit 1; }
try "--version" "$bin" --version
try "lesson list" "$bin" lesson list
for l in mixed-precision memory-at-scale fp32-state residual-drift low-precision rounding-rules low-precision-training frontier; do
	"$bin" lesson list 2>/dev/null | grep -q "$l" && ok "lesson list: $l installed" || bad "lesson list: $l installed"
done
try "lesson show mixed-precision" "$bin" lesson show mixed-precision
# every exercise file of the source tree is installed, without a list
for f in "$src"/exercises/*.ex; do
	b=$(basename "$f")
	cmp -s "$f" "$data/exercises/$b" && ok "exercises/$b installed" || bad "exercises/$b installed"
done
try "exercise list" "$bin" exercise list
grep -q "7.4a" "$tmp/out" && ok "exercise list: 7.4a from the installed files" || bad "exercise list: 7.4a"
try "exercise show 7.4a" "$bin" exercise show 7.4a
# the bundled corpus: a tiny training run
try "train on the installed corpus" "$bin" train --steps 2 --layers 1 --channels 16 --heads 2 --batch 2 \
	--context 16 --eval-every 0
[ -x "$data/prairielearn/grade.sh" ] && cmp -s "$src/data/prairielearn/grade.sh" "$data/prairielearn/grade.sh" &&
	ok "the PrairieLearn grader installed, executable" || bad "prairielearn/grade.sh installed" "$data/prairielearn/grade.sh"
[ -f "$man/man1/mixprec.1" ] && ok "man page installed" || bad "man page installed" "$man/man1/mixprec.1"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
