#!/bin/sh
# Runs test_layers, test_layers_bf16 (tests/test_layers*.c) and
# test_blockorder on the portable instance of the row kernels
# (MIXPREC_SIMD=portable), the path of CPUs without x86 SIMD, so that it is
# checked on every CPU; the first failing exit status is passed on.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_layers ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
for t in test_layers test_layers_bf16 test_blockorder; do
	MIXPREC_SIMD=portable "$TESTBIN/$t" || exit $?
done
exit 0
