#!/bin/sh
# The two builds of tests/gpu/device-check.sh, which runs this script under
# a time limit: device-build.sh standalone|full. It reads the settings
# device-check.sh exports (src, work, CC, NVCC, CUDA_HOME, CUDA_ARCH,
# cuda_lib, blas_where, blas_cflags, blas_libs, JOBS). Exit status 0 when
# the build passed, 2 when it failed.
set -u

# --- standalone: the CUDA toolkit and a C compiler only ---
build_standalone() (
	b=$work/standalone
	mkdir -p "$b" || return 2
	cflags="-O2 -g -std=gnu11 -pthread -Wall -Wextra -ffp-contract=off -I$src/src"
	# cuBLAS is loaded on first use (dlopen): its file and soname
	cublas_file=$(readlink -f "$cuda_lib/libcublas.so" 2> /dev/null || echo "$cuda_lib/libcublas.so")
	cublas_soname=$(objdump -p "$cublas_file" 2> /dev/null | sed -n 's/^ *SONAME *//p')
	# the CUDA sources first, all at once in the background: each nvcc runs on
	# one core for a minute or more, the C files below take seconds. The
	# trainer's object is t_gpu_train.o, outside the gpu_*.o that test_gpu links.
	cus="gpu/gpu gpu/gpu_drift gpu/gpu_gemm"
	[ "$blas_where" = none ] || cus="$cus gpu/gpu_trainer"
	for f in $cus; do
		o=$b/$(echo "$f" | tr / _).o
		[ "$f" = gpu/gpu_trainer ] && o=$b/t_gpu_train.o
		echo "NVCC $f.cu (in the background)"
		# shellcheck disable=SC2086
		("$NVCC" -O3 -std=c++17 --fmad=false -Xcompiler -ffp-contract=off $CUDA_ARCH -I"$src/src" \
			-I"$CUDA_HOME/include" -DMIXPREC_CUBLAS_FILE="\"$cublas_file\"" \
			-DMIXPREC_CUBLAS_SONAME="\"${cublas_soname:-libcublas.so}\"" -c "$src/src/$f.cu" -o "$o" \
			> "$o.log" 2>&1 || touch "$o.failed") &
	done
	for f in util/status fmt/format fmt/round fmt/decode fmt/bulk fmt/bulk_simd fmt/bulk_avx512 drift/drift \
	         gpu/gpu_bench; do
		echo "CC $f.c"
		"$CC" $cflags -c "$src/src/$f.c" -o "$b/$(echo "$f" | tr / _).o" || { wait; return 2; }
	done
	if [ "$blas_where" != none ]; then
		defs="-DMIXPREC_PKGDATADIR=\"$src/data\""
		for f in util/file train/layers train/layers_simd train/model train/policy train/scaler train/data \
		         train/train train/backend train/backend_cpu train/schedule train/optim train/train_bench train/accum train/fp8scale train/blockcast train/gradnoise \
		         quant/quant_table quant/quant_bulk quant/quant_avx512 quant/quant_simd \
		         gpu/gpu_trainer_host gpu/gpu_trainer_cuda gpu/gpu_train_bench; do
			echo "CC $f.c"
			# shellcheck disable=SC2086
			"$CC" $cflags $blas_cflags $defs -c "$src/src/$f.c" -o "$b/t_$(echo "$f" | tr / _).o" || { wait; return 2; }
		done
	fi
	wait
	failed=no
	for f in $cus; do
		o=$b/$(echo "$f" | tr / _).o
		[ "$f" = gpu/gpu_trainer ] && o=$b/t_gpu_train.o
		echo "NVCC $f.cu:"
		cat "$o.log"
		[ -e "$o.failed" ] && { echo "NVCC $f.cu FAILED"; failed=yes; }
	done
	[ $failed = no ] || return 2
	for t in test_gpu bench_gpu; do
		echo "CC tests/gpu/$t.c"
		"$CC" $cflags -c "$src/tests/gpu/$t.c" -o "$b/$t.o" || return 2
		"$CC" -pthread -o "$b/$t" "$b/$t.o" "$b"/util_*.o "$b"/fmt_*.o "$b"/drift_*.o "$b"/gpu_*.o \
			-L"$cuda_lib" -lcudart_static -ldl -lrt -lstdc++ -lm \
			|| return 2
	done
	mkdir -p "$work/tests/gpu"
	cp "$b/test_gpu" "$b/bench_gpu" "$work/tests/gpu/"
	if [ "$blas_where" = none ]; then
		echo "no OpenBLAS (BLAS_DIR, .device-carry/openblas or pkg-config): train_gpu not built"
		return 0
	fi
	echo "OpenBLAS: $blas_where"
	for f in gpu_compare gpu/train_gpu; do
		echo "CC tests/$f.c"
		# shellcheck disable=SC2086
		"$CC" $cflags -I"$src/tests" $blas_cflags -c "$src/tests/$f.c" -o "$b/x_$(echo "$f" | tr / _).o" || return 2
	done
	# shellcheck disable=SC2086
	"$CC" -pthread -o "$work/tests/gpu/train_gpu" "$b"/x_*.o "$b"/t_*.o "$b"/util_*.o "$b"/fmt_*.o "$b"/drift_*.o \
		"$b"/gpu_*.o $blas_libs -L"$cuda_lib" -lcudart_static -ldl -lrt \
		-lstdc++ -lm || return 2
)

# --- full: the whole program with --enable-cuda=yes ---
build_full() (
	b=$work/full
	cp -R "$src" "$b" || exit 2
	cd "$b" || exit 2
	# a fresh tree: drop what an earlier build left (ignored files only)
	git clean -fdXq 2> /dev/null
	autoreconf -fi && ./configure --enable-cuda=yes NVCC="$NVCC" CUDA_ARCH="$CUDA_ARCH" &&
		make -j"$JOBS" && make -j"$JOBS" check TESTS= || exit 2
)

case ${1:-} in
standalone) build_standalone ;;
full) build_full ;;
*) echo "usage: device-build.sh standalone|full" >&2; exit 2 ;;
esac
