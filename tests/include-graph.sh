#!/bin/sh
# No include cycle between the folders of src/ (doc/DESIGN.md: data flows down).
# Every '#include "A/x.h"' in a file of folder B is an edge B -> A; tsort
# fails on a cycle and names the folders on it. Prints the edges with -v.
set -eu
src=${srcdir:-.}/src
edges=$(for f in "$src"/*/*.c "$src"/*/*.h "$src"/*/*.cu; do
	[ -f "$f" ] || continue
	from=$(basename "$(dirname "$f")")
	sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)/[^"]*".*|\1|p' "$f" |
		while read -r to; do
			[ "$to" = "$from" ] || echo "$from $to"
		done
done | sort -u)
if [ -z "$edges" ]; then
	echo "include-graph: no includes found under $src" >&2
	exit 1
fi
[ "${1:-}" = -v ] && echo "$edges"
if ! out=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
	echo "include-graph: a cycle between folders of src/:" >&2
	echo "$out" >&2
	exit 1
fi
echo "include-graph: $(echo "$edges" | wc -l) folder dependencies, no cycle"
