#!/bin/sh
# Runs test_bulk (tests/test_bulk.c) on the avx512-bf16 path only: 0 pass, 1 fail,
# 77 skip when this CPU lacks the path (Automake's plain test-driver), so a
# path that was not checked is not counted as passed.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_bulk ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
"$TESTBIN/test_bulk" avx512-bf16
exit $?
