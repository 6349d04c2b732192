#!/bin/sh
# Runs "test_exhaustive_small rne" and "... sr" (tests/test_exhaustive_small.c):
# the sub-8-bit and FNUZ formats against a binary64 reference, on a subset of the fp32
# patterns (all 2^32 with MIXPREC_EXHAUSTIVE_FP8_FULL=1). Exit 0 pass, 1 fail.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_exhaustive_small ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
"$TESTBIN/test_exhaustive_small" rne || exit $?
"$TESTBIN/test_exhaustive_small" sr
exit $?
