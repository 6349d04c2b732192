#!/bin/sh
# Runs tests/gpu/test_gpu (the GPU against the CPU) and passes its exit status
# on: 0 pass, 1 fail, 77 skip when no GPU is usable (Automake's plain
# test-driver). MIXPREC_GPU_EXHAUSTIVE=1 adds every fp32 input.
if [ -z "$TESTBIN" ]; then
	if [ -x ./tests/gpu/test_gpu ]; then TESTBIN=./tests; else TESTBIN=$(dirname "$0")/..; fi
fi
"$TESTBIN/gpu/test_gpu"
exit $?
