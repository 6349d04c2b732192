#!/bin/sh
# Runs "test_exhaustive sr-reference" (tests/test_exhaustive.c) and passes its exit
# status on: 0 pass, 1 fail, 77 skip (Automake's plain test-driver).
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_exhaustive ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
"$TESTBIN/test_exhaustive" sr-reference
exit $?
