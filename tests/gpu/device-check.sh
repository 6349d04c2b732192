#!/bin/sh
# Builds mixprec's CUDA code on a GPU machine, runs the GPU tests and the
# GPU benchmarks, and writes a summary table and every log to $OUT (default:
# ./device-check-out). Run from anywhere inside a checkout:
#
#   tests/gpu/device-check.sh            # standalone or full, whichever works
#   MODE=standalone tests/gpu/device-check.sh
#
# Two ways to build, chosen automatically (MODE=full|standalone forces one):
#   full        autoreconf + ./configure --enable-cuda=yes + make, then
#               tests/gpu/gpu.sh, mixprec bench --device cuda and drift on
#               both devices through the CLI. Needs autotools and every -dev
#               library of the project (ncursesw, libcsv, Check, OpenBLAS,
#               GMP/MPFR, md4c).
#   standalone  only the CUDA toolkit and a C compiler: nvcc and gcc build
#               the GPU test (tests/gpu/test_gpu.c) and benchmark
#               (tests/gpu/bench_gpu.c) straight from the sources they need
#               (fmt/, drift/, gpu/, util/status.c; none of them needs a
#               library beyond libc, pthreads and the CUDA runtime), and,
#               when an OpenBLAS is found (BLAS_DIR, else the folder
#               .device-carry/openblas that tests/gpu/carry-openblas.sh
#               fills on a Debian machine, else the system's), the GPU
#               trainer's checks and benchmark (tests/gpu/train_gpu.c, with
#               train/ and the CPU trainer it is compared with).
#
# Settings: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc),
# CUDA_ARCH (default: Hopper, sm_90 + compute_90 PTX), BENCH_MIB (2048),
# BENCH_REPS (5), EXHAUSTIVE (1: every fp32 input for bf16/fp16/e4m3; 0 to
# skip), JOBS. Exit status: 0 when every step that ran passed (a skip
# because no GPU is usable counts as passed; the summary says so), 1 when a
# test failed, 2 when the build failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out=${OUT:-$PWD/device-check-out}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mixprec-device-check.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# the toolkit folder: above nvcc's real bin/ (nvcc may be a link in /usr/bin)
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$NVCC" 2>/dev/null || echo "$NVCC")")")}
cuda_lib=$CUDA_HOME/lib64
for d in "$CUDA_HOME/lib64" "$CUDA_HOME/lib" "$CUDA_HOME/targets/x86_64-linux/lib" /usr/lib/x86_64-linux-gnu; do
	if [ -f "$d/libcudart_static.a" ]; then cuda_lib=$d; break; fi
done
CUDA_ARCH=${CUDA_ARCH:--gencode arch=compute_90,code=[sm_90,compute_90]}
CC=${CC:-cc}
BENCH_MIB=${BENCH_MIB:-2048}
BENCH_REPS=${BENCH_REPS:-5}
EXHAUSTIVE=${EXHAUSTIVE:-1}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}

summary=$out/summary.md
status=0
: > "$summary"
note() { printf '%s\n' "$*" >> "$summary"; printf '%s\n' "$*"; }
now() { date +%s; }

# step NAME LOG CMD...: runs CMD with output to $out/LOG, adds a table row
step() {
	name=$1 log=$2
	shift 2
	t0=$(now)
	"$@" > "$out/$log" 2>&1
	rc=$?
	t=$(( $(now) - t0 ))
	case $rc in
	0) res=pass ;;
	77) res="skip ($(grep -m1 -o 'SKIP.*\|skipped.*' "$out/$log" | head -1))" ;;
	*) res="FAIL (exit $rc)" ;;
	esac
	printf '| %s | %s | %ss | %s |\n' "$name" "$res" "$t" "$log" >> "$summary"
	printf '%-40s %s (%ss, %s)\n' "$name" "$res" "$t" "$log"
	return $rc
}

# --- an OpenBLAS for the CPU trainer (the GPU trainer's oracle) ---
blas_cflags="" blas_libs=""
find_blas() {
	for d in ${BLAS_DIR:-} "$src/.device-carry/openblas"; do
		if [ -f "$d/include/cblas.h" ] && [ -f "$d/lib/libopenblas.so.0" ]; then
			blas_cflags="-I$d/include"
			blas_libs="-L$d/lib -Wl,--disable-new-dtags,-rpath,$d/lib -l:libopenblas.so.0"
			export LD_LIBRARY_PATH="$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
			blas_where=$d
			return 0
		fi
	done
	if command -v pkg-config > /dev/null 2>&1 && pkg-config --exists openblas 2> /dev/null; then
		blas_cflags=$(pkg-config --cflags openblas)
		blas_libs=$(pkg-config --libs openblas)
		blas_where="pkg-config openblas"
		return 0
	fi
	return 1
}
blas_where=none
find_blas
# Debian's OpenBLAS 0.3.21 does not know recent CPUs and falls back to SSE3
# kernels: name a core it knows, so the CPU side of the speed comparison is fair
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	if grep -qw avx512f /proc/cpuinfo 2> /dev/null; then export OPENBLAS_CORETYPE=SkylakeX
	elif grep -qw avx2 /proc/cpuinfo 2> /dev/null; then export OPENBLAS_CORETYPE=Haswell; fi
fi
export MIXPREC_DATADIR="$src/data"

note "# mixprec device check"
note ""
note "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
note "- commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$src" diff --quiet 2>/dev/null || echo ' (with local changes)')"
note "- host: $(uname -srm), $(nproc 2>/dev/null) CPUs"
if command -v nvidia-smi > /dev/null 2>&1; then
	nvidia-smi > "$out/nvidia-smi.log" 2>&1
	note "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
else
	note "- GPU: nvidia-smi not found"
fi
note "- nvcc: $("$NVCC" --version 2>/dev/null | tail -1 || echo "not found at $NVCC")"
note "- CUDA_ARCH: $CUDA_ARCH; toolkit libraries: $cuda_lib"
note "- OpenBLAS for the CPU trainer: $blas_where (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"

have_full_deps() {
	command -v autoreconf > /dev/null 2>&1 && command -v pkg-config > /dev/null 2>&1 &&
		pkg-config --exists ncursesw check openblas md4c 2> /dev/null &&
		printf '#include <csv.h>\n#include <mpfr.h>\nint main(void){return 0;}\n' |
		"$CC" -x c - -o "$work/deps-probe" -lcsv -lmpfr -lgmp > /dev/null 2>&1
}
mode=${MODE:-}
if [ -z "$mode" ]; then
	if have_full_deps; then mode=full; else mode=standalone; fi
fi
note "- build: $mode"
note ""
note "| step | result | time | log |"
note "|---|---|---|---|"

# --- standalone: the CUDA toolkit and a C compiler only ---
build_standalone() (
	b=$work/standalone
	mkdir -p "$b" || return 2
	cflags="-O2 -g -std=gnu11 -pthread -Wall -Wextra -ffp-contract=off -I$src/src"
	for f in util/status fmt/format fmt/round fmt/decode fmt/bulk fmt/bulk_avx2 fmt/bulk_avx512 drift/drift \
	         gpu/gpu_bench; do
		echo "CC $f.c"
		"$CC" $cflags -c "$src/src/$f.c" -o "$b/$(echo "$f" | tr / _).o" || return 2
	done
	# cuBLAS is loaded on first use (dlopen): its file and soname
	cublas_file=$(readlink -f "$cuda_lib/libcublas.so" 2> /dev/null || echo "$cuda_lib/libcublas.so")
	cublas_soname=$(objdump -p "$cublas_file" 2> /dev/null | sed -n 's/^ *SONAME *//p')
	for f in gpu/gpu gpu/gpu_drift gpu/gpu_gemm; do
		echo "NVCC $f.cu"
		# shellcheck disable=SC2086
		"$NVCC" -O3 -std=c++17 --fmad=false -Xcompiler -ffp-contract=off $CUDA_ARCH -I"$src/src" -I"$CUDA_HOME/include" \
			-DMIXPREC_CUBLAS_FILE="\"$cublas_file\"" -DMIXPREC_CUBLAS_SONAME="\"${cublas_soname:-libcublas.so}\"" \
			-c "$src/src/$f.cu" -o "$b/$(echo "$f" | tr / _).o" || return 2
	done
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
	defs="-DMIXPREC_PKGDATADIR=\"$src/data\""
	for f in util/file train/layers train/model train/policy train/scaler train/data train/train train/backend train/backend_cpu \
	         train/train_bench gpu/gpu_trainer_host gpu/gpu_trainer_cuda; do
		echo "CC $f.c"
		# shellcheck disable=SC2086
		"$CC" $cflags $blas_cflags $defs -c "$src/src/$f.c" -o "$b/t_$(echo "$f" | tr / _).o" || return 2
	done
	echo "NVCC gpu/gpu_trainer.cu"
	# shellcheck disable=SC2086
	"$NVCC" -O3 -std=c++17 --fmad=false -Xcompiler -ffp-contract=off $CUDA_ARCH -I"$src/src" -c "$src/src/gpu/gpu_trainer.cu" \
		-o "$b/t_gpu_train.o" || return 2
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

if [ "$mode" = full ]; then
	step "build (full, --enable-cuda=yes)" build.log build_full || { note ""; note "build failed"; exit 2; }
	bin=$work/full
	testbin=$bin/tests
else
	step "build (standalone nvcc + $CC)" build.log build_standalone || { note ""; note "build failed"; exit 2; }
	bin=$work/standalone
	testbin=$work/tests
fi

# --- tests ---
step "GPU vs CPU: rounding + drift" test_gpu.log env MIXPREC_GPU_EXHAUSTIVE=0 "$testbin/gpu/test_gpu"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 77 ] && status=1
gpu_usable=yes
[ $rc -eq 77 ] && gpu_usable=no
if [ "$gpu_usable" = yes ]; then
	grep -c '^ok' "$out/test_gpu.log" | sed 's/^/  checks passed: /'
	grep '^not ok' "$out/test_gpu.log" | head -20
fi
have_train=no
[ -x "$testbin/gpu/train_gpu" ] && have_train=yes
if [ "$have_train" = yes ]; then
	step "GPU trainer vs CPU trainer" train_gpu.log "$testbin/gpu/train_gpu"
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 77 ] && status=1
	grep '^not ok' "$out/train_gpu.log" | head -20
else
	note "| GPU trainer vs CPU trainer | not built (no OpenBLAS; see tests/gpu/README.md) | - | build.log |"
fi

if [ "$gpu_usable" = yes ] && [ "$EXHAUSTIVE" = 1 ]; then
	step "GPU vs CPU: + all 2^32 fp32 inputs" test_gpu_exhaustive.log \
		env MIXPREC_GPU_EXHAUSTIVE=1 "$testbin/gpu/test_gpu" || status=1
fi

# --- benchmarks ---
if [ "$gpu_usable" = yes ]; then
	step "bench_gpu: rounding + drift vs copy" bench.log "$testbin/gpu/bench_gpu" "$BENCH_MIB" "$BENCH_REPS" || status=1
	if [ "$mode" = full ]; then
		m=$bin/mixprec
		step "CLI: bench all --device cuda" bench-cli.log "$m" bench all --device cuda --mib "$BENCH_MIB" \
			--reps "$BENCH_REPS" || status=1
		# the CLI on both devices gives the same CSV
		step "CLI: drift cpu" drift-cpu.log "$m" drift --elements 200000 --steps 500 --seed 3 \
			--csv "$out/drift-cpu.csv" || status=1
		step "CLI: drift --device cuda" drift-cuda.log "$m" drift --elements 200000 --steps 500 --seed 3 \
			--csv "$out/drift-cuda.csv" --device cuda || status=1
		step "CLI: drift CSVs identical" drift-cmp.log cmp "$out/drift-cpu.csv" "$out/drift-cuda.csv" || status=1
		step "CLI: drift 10^9 updates on cuda" drift-large.log "$m" drift --elements 1000000 --steps 1000 \
			--device cuda || status=1
		vals="1 0x1.921fb6p+1 65504 65520 448 464 -0x1p-149 inf -inf nan"
		# shellcheck disable=SC2086
		step "CLI: round cpu" round-cpu.csv "$m" round $vals --to fp16,bf16,fp8-e4m3,fp8-e5m2 --mode sr \
			--seed 4 --csv || status=1
		# shellcheck disable=SC2086
		step "CLI: round --device cuda" round-cuda.csv "$m" round $vals --to fp16,bf16,fp8-e4m3,fp8-e5m2 \
			--mode sr --seed 4 --csv --device cuda || status=1
		step "CLI: round CSVs identical" round-cmp.log cmp "$out/round-cpu.csv" "$out/round-cuda.csv" || status=1
	fi
	if [ "$have_train" = yes ]; then
		step "train_gpu bench: GPU step vs CPU step" bench-train.log "$testbin/gpu/train_gpu" bench 3 || status=1
	fi
	if [ "$mode" = full ]; then
		step "CLI: train --device cuda (3 policies)" train-cuda.log "$m" train --device cuda --steps 100 \
			--policy fp32,bf16-mixed,bf16-pure --csv "$out/train-cuda.csv" || status=1
	fi
	note ""
	note "## benchmarks"
	note ""
	grep '^|' "$out/bench.log" >> "$summary" 2> /dev/null || cat "$out/bench.log" >> "$summary"
	note ""
	note "Speed target: rounding and drift kernels at >= 0.70x of the device-to-device copy."
	awk -F'|' '/x \|$/ && $2 !~ /copy|simulation/ {
		gsub(/[ x]/, "", $(NF-1)); if ($(NF-1) + 0 < 0.70) { print "  below 0.70x:" $2 $(NF-1); low++ } }
		END { if (!low) print "  every kernel at or above 0.70x" }' "$out/bench.log" | tee -a "$summary"
	if [ "$have_train" = yes ]; then
		note ""
		note "## training"
		note ""
		grep '^|' "$out/bench-train.log" >> "$summary" 2> /dev/null
		note ""
		note "Speed targets: bf16-mixed at the default shape >= 10x the CPU step; at the large shape"
		note "faster than the GPU's fp32 step."
		awk -F'|' '$2 ~ /cuda/ && $4 ~ /bf16-mixed/ {
			r = $6; gsub(/[ x]/, "", r); big = $3 ~ /C1024/
			ok = big ? r + 0 > 1 : r + 0 >= 10
			printf "  %s at%s: %sx %s\n", "bf16-mixed", $3, r, ok ? "(met)" : "(NOT met)" }' \
			"$out/bench-train.log" | tee -a "$summary"
	fi
fi

note ""
if [ "$gpu_usable" = no ]; then
	note "No usable GPU here: the build was checked and the GPU tests skipped (see test_gpu.log)."
fi
note "Overall: $([ $status -eq 0 ] && echo pass || echo FAIL)"
exit $status
