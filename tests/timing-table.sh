#!/bin/sh
# Prints each test's wall time from the logs of the last make check (the
# lines tests/timed.sh wrote), slowest first, then their sum. Usage:
# tests/timing-table.sh [BUILDDIR [STAMP]] (default .): with STAMP, only
# the logs written after that file.
dir=${1:-.}
if [ -n "${2:-}" ]; then
	lines=$(find "$dir/tests" -name '*.log' -newer "$2" -exec grep -h '^# wall time: ' {} + 2>/dev/null)
else
	lines=$(find "$dir/tests" -name '*.log' -exec grep -h '^# wall time: ' {} + 2>/dev/null)
fi
[ -n "$lines" ] || exit 0
echo "Wall time per test (tests/timed.sh):"
echo "$lines" | awk '{ name = $6; sub(".*/tests/", "tests/", name); printf "%8.1f s  %s\n", $4, name }' | sort -rn
echo "$lines" | awk '{ sum += $4; n++ } END { printf "%8.1f s  the sum over %d tests (make -j2 runs two at a time)\n", sum, n }'
