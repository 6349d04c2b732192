#!/bin/sh
# Runs "test_exhaustive_ext rne" and "... sr" (tests/test_exhaustive_ext.c):
# the integer, ml_dtypes and P3109 formats' bulk loop against a binary64
# reference, on a subset of the fp32 patterns (all 2^32 with
# MIXPREC_EXHAUSTIVE_FP8_FULL=1 and MIXPREC_EXHAUSTIVE=full). Exit 0 pass, 1 fail.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_exhaustive_ext ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
"$TESTBIN/test_exhaustive_ext" rne || exit $?
"$TESTBIN/test_exhaustive_ext" sr
exit $?
