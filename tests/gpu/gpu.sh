#!/bin/sh
# Runs tests/gpu/test_gpu (rounding and drift: the GPU against the CPU) and
# tests/gpu/train_gpu (the GPU trainer against the CPU trainer) and passes
# their status on: 0 pass, 1 fail, 77 skip when no GPU is usable (Automake's
# plain test-driver). MIXPREC_GPU_EXHAUSTIVE=1 adds every fp32 input.
# train_gpu is optional where it was not built (the device check's
# standalone build without OpenBLAS).
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/gpu/test_gpu ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0")/..; fi
fi
"$TESTBIN/gpu/test_gpu"
rc=$?
[ $rc -ne 0 ] && exit $rc
if [ -x "$TESTBIN/gpu/train_gpu" ]; then
	"$TESTBIN/gpu/train_gpu"
	exit $?
fi
echo "# train_gpu not built: the GPU trainer was not checked"
exit 0
