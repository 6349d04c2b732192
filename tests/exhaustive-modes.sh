#!/bin/sh
# Runs tests/test_exhaustive_modes (rto, rnz, sr-equal on every path against
# a binary64 reference) and passes its exit status on: 0 pass, 1 fail
# (Automake's plain test-driver). MIXPREC_EXHAUSTIVE=full: all 2^32 inputs.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_exhaustive_modes ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
"$TESTBIN/test_exhaustive_modes"
exit $?
