#!/bin/sh
# An uninstalled mixprec run from its build folder finds the lessons,
# exercises and corpus of the tree it was built from, with no ./run and no
# MIXPREC_SRCDIR; a copy of the program outside any build folder (as an
# install without its data) exits 3 naming where it looked and the fix.
. "${srcdir:-.}/tests/harness.sh"
need_mixprec
make_tmp datadir
SRC=$(cd "${srcdir:-.}" && pwd)
unset MIXPREC_SRCDIR MIXPREC_LESSONDIR MIXPREC_EXERCISEDIR MIXPREC_DATADIR
cd "$tmp" || exit 99

run lesson list
expect_rc "lesson list from the build folder" 0
out_has "lesson list: the tree's lessons" "mixed-precision"
run exercise list
expect_rc "exercise list from the build folder" 0
out_has "exercise list: the tree's exercises" "7.4a"
run train --steps 2 --layers 1 --channels 16 --heads 2 --context 16 --batch 2
expect_rc "train --steps 2 from the build folder" 0
out_has "train: the tree's corpus is read" "fp32"

# a copy of the binary: no tree beside it, not the build folder
cp "$MIXPREC" "$tmp/mixprec-copy" || exit 99
MIXPREC=$tmp/mixprec-copy
# (where mixprec is installed, the copy finds the installed data instead)
installed=$("$MIXPREC" lesson --help 2>/dev/null | tail -n 1 | sed 's/^ *//')
[ -d "$installed" ] && { echo "note: $installed exists: the copy would use it; not checked"; finish; }
for c in "lesson list" "exercise list" "train --steps 2"; do
	# shellcheck disable=SC2086
	run $c
	expect_rc "$c outside a build folder" 3
	err_has "$c: names the folders tried" "MIXPREC_SRCDIR unset, the program is not in a build folder of mixprec"
	err_has "$c: says how to fix it" "run 'make install', start mixprec with ./run in its source tree, or set MIXPREC_SRCDIR"
done
MIXPREC_SRCDIR=$SRC
export MIXPREC_SRCDIR
run lesson list
expect_rc "MIXPREC_SRCDIR makes the copy find the tree" 0
finish
