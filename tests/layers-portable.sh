#!/bin/sh
# Runs test_layers (tests/test_layers.c) with the kernels' portable loops
# (MIXPREC_SIMD=portable), so that the twins of the AVX-512 LayerNorm, GELU
# and softmax are checked on every CPU; exit status passed on.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_layers ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
MIXPREC_SIMD=portable "$TESTBIN/test_layers"
exit $?
