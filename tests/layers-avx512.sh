#!/bin/sh
# Runs test_layers and test_layers_bf16 (tests/test_layers*.c) on the
# AVX-512 instance of the row kernels (LayerNorm, GELU, softmax:
# train/layers_body.h), which they take when the CPU has AVX-512 F; on a
# CPU without it they would only re-test another path (layers-portable.sh),
# so that is a skip (77), not a pass.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/test_layers ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0"); fi
fi
if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
	echo "SKIP: this CPU lacks AVX-512 F: the AVX-512 kernels are not run"
	exit 77
fi
unset MIXPREC_SIMD
for t in test_layers test_layers_bf16; do
	"$TESTBIN/$t" || exit $?
done
exit 0
