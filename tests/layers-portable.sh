#!/bin/sh
# Runs test_layers (tests/test_layers.c) on the portable instance of the row
# kernels (MIXPREC_SIMD=portable), the path of CPUs without x86 SIMD, so
# that it is checked on every CPU; exit status passed on.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_layers ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
MIXPREC_SIMD=portable "$TESTBIN/test_layers"
exit $?
