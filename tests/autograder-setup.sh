#!/bin/sh
# The build part of the setup.sh that lab autograder writes, run on a real
# source tarball in a temporary folder (apt-get skipped, installed under the
# folder), then the installed program grading the example submission through
# run_autograder with nothing but it on PATH.
#
# It needs the tarball of 'make dist' and about a minute and a half on two
# cores, so it runs only when asked:
#   make dist && make check TESTS=tests/autograder-setup.sh MIXPREC_TARBALL=$PWD/mixprec-VERSION.tar.gz
# and skips (77) otherwise. Run by Automake's plain test-driver: exit 0 pass,
# 1 fail, 77 skip.
#
# The expected score is s001's number of rows in data/submission-example.csv
# (every answer right, one point each; see tests/cli-autograder.sh).

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

if [ -z "${MIXPREC_TARBALL:-}" ] || [ ! -f "$MIXPREC_TARBALL" ]; then
	echo "SKIP: set MIXPREC_TARBALL to the tarball of 'make dist'"
	exit 77
fi
LC_ALL=C
export LC_ALL
make_tmp autograder-setup
private_state
S=${srcdir:-.}

run lab autograder --out "$tmp/bundle" --source "$MIXPREC_TARBALL" --course-seed fall26
expect_rc "lab autograder with the real tarball" 0
if MIXPREC_SETUP_NO_APT=1 MIXPREC_PREFIX=$tmp/inst sh "$tmp/bundle/setup.sh" >"$tmp/setup.log" 2>&1; then
	ok "setup.sh built and installed mixprec"
else
	bad "setup.sh built and installed mixprec" "$(tail -5 "$tmp/setup.log")"
fi
[ -x "$tmp/inst/bin/mixprec" ] && ok "installed: bin/mixprec" || bad "installed: bin/mixprec"

r=$tmp/root
mkdir -p "$r/submission"
cp "$tmp/bundle/lab.json" "$tmp/bundle/run_autograder" "$r/" && mkdir "$r/source" && mv "$r/lab.json" "$r/source/"
grep -e '^student_id,' -e '^s001,' "$S/data/submission-example.csv" >"$r/submission/answers.csv"
printf '{"users": [{"sid": "s001"}]}\n' >"$r/submission_metadata.json"
n=$(awk -F, '$1 == "s001"' "$S/data/submission-example.csv" | wc -l | tr -d ' ')
# the installed program, its installed exercises: no source tree in sight
env -u MIXPREC_SRCDIR -u MIXPREC_EXERCISEDIR PATH="$tmp/inst/bin:/usr/bin:/bin" AUTOGRADER_ROOT="$r" \
	sh "$r/run_autograder" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "run_autograder with the installed mixprec" 0
score=$(sed -n 's/^ *"score": \([0-9.]*\),$/\1/p' "$r/results/results.json" | head -1)
[ "$score" = "$n.0" ] && ok "the example scores $n of $n" || bad "the example scores $n of $n" "score: $score"

finish
