#!/bin/sh
# Nothing in the tree points outside it: no path into a sibling folder of
# the checkout (dot-dot, then "shared") and no number of an issue tracker
# the repository does not have ("issue" followed by a number), in src/,
# tests/, doc/, lessons/, exercises/ and the build files. A citation of an
# upstream tracker, OWNER/REPO issue N (lessons quote them), is allowed.
# The patterns are built from pieces so that this file does not match itself.
set -eu
top=${srcdir:-.}
dots='\.\.'
iss='[Ii]ssues?'
fail=0
files=$(cd "$top" && find src tests doc lessons exercises -type f \
	\( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.sh' -o -name '*.md' -o -name '*.ex' \
	-o -name '*.1' -o -name '*.txt' -o -name '*.csv' -o -name '*.in' -o -name ORDER \) 2>/dev/null | sort)
for f in $files README.md Makefile.am configure.ac run .ci/run; do
	[ -f "$top/$f" ] || continue
	# an upstream citation (owner/repo issue N, or issues #N and #M) is cut first
	hits=$(sed -E "s@[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+ $iss #?[0-9]+( and #?[0-9]+)*@@g" "$top/$f" |
		grep -nE "$dots/shared|(^|[^A-Za-z])$iss #?[0-9]" || true)
	if [ -n "$hits" ]; then
		echo "$hits" | sed "s|^|$f:|" >&2
		fail=1
	fi
done
if [ "$fail" -ne 0 ]; then
	echo "no-outside-refs: the lines above point outside the repository" >&2
	exit 1
fi
echo "no-outside-refs: $(echo $files | wc -w) files and the build files, nothing points outside"
