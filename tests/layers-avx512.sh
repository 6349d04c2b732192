#!/bin/sh
# Runs test_layers (tests/test_layers.c) on the kernels' AVX-512 twins of
# LayerNorm, GELU and softmax, which it takes when the CPU has AVX-512 F and
# DQ (train/layers.c); on a CPU without them it would only re-test the
# portable loops (layers-portable.sh), so that is a skip (77), not a pass.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_layers ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null || ! grep -qw avx512dq /proc/cpuinfo 2>/dev/null; then
	echo "SKIP: this CPU lacks AVX-512 F/DQ: the AVX-512 kernels are not run"
	exit 77
fi
unset MIXPREC_SIMD
"$TESTBIN/test_layers"
exit $?
