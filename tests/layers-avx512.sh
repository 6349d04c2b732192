#!/bin/sh
# Runs test_layers (tests/test_layers.c) on the AVX-512 instance of the row
# kernels (LayerNorm, GELU, softmax: train/layers_body.h), which it takes
# when the CPU has AVX-512 F; on a CPU without it it would only re-test
# another path (layers-portable.sh), so that is a skip (77), not a pass.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_layers ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
	echo "SKIP: this CPU lacks AVX-512 F: the AVX-512 kernels are not run"
	exit 77
fi
unset MIXPREC_SIMD
"$TESTBIN/test_layers"
exit $?
