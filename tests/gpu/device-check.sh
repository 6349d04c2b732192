#!/bin/sh
# Builds mixprec's CUDA code on a GPU machine, runs the GPU tests and the
# GPU benchmarks, and writes two files to $OUT (default: ./device-check-out):
# summary.md, the table of every step, and logs.tar.gz, every step's log and
# CSV (repacked after each step, so a run cut short still returns them: the
# device tool brings back at most 8 files). Run from anywhere inside a
# checkout:
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
#   standalone  only the CUDA toolkit, a C compiler and make:
#               ./configure --enable-device-build and make device build
#               the GPU test (tests/gpu/test_gpu.c) and benchmark
#               (tests/gpu/bench_gpu.c) on the part of the library that
#               needs no library beyond libc, pthreads and the CUDA runtime
#               (Makefile.am's libmixprec_core.a), and, when an OpenBLAS is
#               found (BLAS_DIR, else the folder .device-carry/openblas
#               that tests/gpu/carry-openblas.sh fills on a Debian machine,
#               else the system's), the GPU trainer's checks and benchmark
#               (tests/gpu/train_gpu.c, on libmixprec_train.a: the CPU
#               trainer it is compared with). Without autotools here,
#               configure comes from .device-carry/autotools
#               (make device-carry).
#
# Settings: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc),
# CUDA_ARCH (default: Hopper, sm_90 + compute_90 PTX), BENCH_MIB (2048),
# BENCH_REPS (5), EXHAUSTIVE (1: every fp32 input for bf16/fp16/e4m3; 0 to
# skip), JOBS, STEP_TIMEOUT (seconds one test or benchmark step may run,
# default 240; a build step gets BUILD_TIMEOUT, default 420): a step past its
# limit is killed and reported as TIMEOUT, so one hung kernel cannot use up
# the machine's lease. Exit status: 0 when every step that ran passed (a skip
# because no GPU is usable counts as passed; the summary says so), 1 when a
# test failed, 2 when the build failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out=${OUT:-$PWD/device-check-out}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mixprec-device-check.XXXXXX") || exit 2
logs=$work/logs
mkdir -p "$logs" || exit 2
# every log in one archive beside summary.md (the device tool returns 8 files)
pack() { tar -C "$work" -czf "$out/logs.tar.gz.tmp" logs 2> /dev/null && mv -f "$out/logs.tar.gz.tmp" "$out/logs.tar.gz"; }
trap 'pack; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# the toolkit folder: above nvcc's real bin/ (nvcc may be a link in /usr/bin)
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$NVCC" 2>/dev/null || echo "$NVCC")")")}
# the folder of the static CUDA runtime: CUDA_LIBDIR when given (configure's
# choice, from the tests), else the toolkit's usual folders, else where the
# C compiler finds it (LIBRARY_PATH included)
cuda_lib=
for d in ${CUDA_LIBDIR:+"$CUDA_LIBDIR"} "$CUDA_HOME/lib64" "$CUDA_HOME/lib" "$CUDA_HOME/targets/x86_64-linux/lib" \
         /usr/lib/x86_64-linux-gnu; do
	if [ -f "$d/libcudart_static.a" ]; then cuda_lib=$d; break; fi
done
if [ -z "$cuda_lib" ]; then
	f=$("${CC:-cc}" -print-file-name=libcudart_static.a 2> /dev/null)
	case $f in /*) [ -f "$f" ] && cuda_lib=$(dirname "$f") ;; esac
fi
: "${cuda_lib:=$CUDA_HOME/lib64}"
CUDA_ARCH=${CUDA_ARCH:--gencode arch=compute_90,code=[sm_90,compute_90]}
CC=${CC:-cc}
BENCH_MIB=${BENCH_MIB:-2048}
BENCH_REPS=${BENCH_REPS:-5}
EXHAUSTIVE=${EXHAUSTIVE:-1}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
BUILD_TIMEOUT=${BUILD_TIMEOUT:-420}
if command -v timeout > /dev/null 2>&1; then have_timeout=yes; else have_timeout=no; fi

summary=$out/summary.md
status=0
: > "$summary"
note() { printf '%s\n' "$*" >> "$summary"; printf '%s\n' "$*"; }
now() { date +%s; }

# step NAME LOG CMD...: runs CMD with output to $logs/LOG under a time limit
# (LIMIT, default STEP_TIMEOUT), adds a table row, repacks the logs
step() {
	name=$1 log=$2
	shift 2
	t0=$(now)
	if [ "$have_timeout" = yes ]; then
		timeout -k 10 "${LIMIT:-$STEP_TIMEOUT}" "$@" > "$logs/$log" 2>&1
	else
		"$@" > "$logs/$log" 2>&1
	fi
	rc=$?
	t=$(( $(now) - t0 ))
	case $rc in
	0) res=pass ;;
	77) res="skip ($(grep -m1 -o 'SKIP.*\|skipped.*' "$logs/$log" | head -1))" ;;
	124|137) res="TIMEOUT (killed after ${LIMIT:-$STEP_TIMEOUT}s)" ;;
	*) res="FAIL (exit $rc)" ;;
	esac
	printf '| %s | %s | %ss | %s |\n' "$name" "$res" "$t" "$log" >> "$summary"
	printf '%-40s %s (%ss, %s)\n' "$name" "$res" "$t" "$log"
	pack
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
if commit=$(git -C "$src" rev-parse --short HEAD 2> /dev/null); then
	git -C "$src" diff --quiet HEAD 2> /dev/null || commit="$commit (with local changes)"
else
	commit="unknown (no git checkout here)"
fi
note "- commit: $commit"
note "- host: $(uname -srm), $(nproc 2>/dev/null) CPUs"
if command -v nvidia-smi > /dev/null 2>&1; then
	nvidia-smi > "$logs/nvidia-smi.log" 2>&1
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

# the builds run in a script of their own, so that timeout can stop them
# with everything they started (make, nvcc)
export src work CC NVCC CUDA_HOME CUDA_ARCH cuda_lib blas_where blas_cflags blas_libs JOBS LD_LIBRARY_PATH

if [ "$mode" = full ]; then
	LIMIT=$BUILD_TIMEOUT step "build (full, --enable-cuda=yes)" build.log sh "$here/device-build.sh" full || { note ""; note "build failed"; exit 2; }
	bin=$work/full
	testbin=$bin/tests
else
	LIMIT=$BUILD_TIMEOUT step "build (standalone nvcc + $CC)" build.log sh "$here/device-build.sh" standalone || { note ""; note "build failed"; exit 2; }
	bin=$work/standalone
	testbin=$bin/tests
fi

# --- tests ---
step "GPU vs CPU: rounding + drift" test_gpu.log env MIXPREC_GPU_EXHAUSTIVE=0 "$testbin/gpu/test_gpu"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 77 ] && status=1
gpu_usable=yes
[ $rc -eq 77 ] && gpu_usable=no
if [ "$gpu_usable" = yes ]; then
	grep -c '^ok' "$logs/test_gpu.log" | sed 's/^/  checks passed: /'
	grep '^not ok' "$logs/test_gpu.log" | head -20
fi
have_train=no
[ -x "$testbin/gpu/train_gpu" ] && have_train=yes
if [ "$have_train" = no ]; then
	# said loudly, at the top of the output and in the summary: a run without
	# the trainer's checks must not pass for a complete one
	loud="NOT TESTED: the GPU trainer (train_gpu, train --device cuda): no OpenBLAS was found"
	loud="$loud (BLAS_DIR, $src/.device-carry/openblas, pkg-config openblas)."
	loud="$loud Run tests/gpu/carry-openblas.sh on a Debian machine and carry .device-carry (tests/gpu/README.md)."
	echo "*** $loud" >&2
	note ""
	note "**$loud**"
	note ""
fi
if [ "$have_train" = yes ]; then
	step "GPU trainer vs CPU trainer" train_gpu.log "$testbin/gpu/train_gpu"
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 77 ] && status=1
	grep '^not ok' "$logs/train_gpu.log" | head -20
else
	note "| GPU trainer vs CPU trainer | not built (no OpenBLAS; see tests/gpu/README.md) | - | build.log |"
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
			--csv "$logs/drift-cpu.csv" || status=1
		step "CLI: drift --device cuda" drift-cuda.log "$m" drift --elements 200000 --steps 500 --seed 3 \
			--csv "$logs/drift-cuda.csv" --device cuda || status=1
		step "CLI: drift CSVs identical" drift-cmp.log cmp "$logs/drift-cpu.csv" "$logs/drift-cuda.csv" || status=1
		step "CLI: drift 10^9 updates on cuda" drift-large.log "$m" drift --elements 1000000 --steps 1000 \
			--device cuda || status=1
		vals="1 0x1.921fb6p+1 65504 65520 448 464 -0x1p-149 inf -inf nan"
		# shellcheck disable=SC2086
		step "CLI: round cpu" round-cpu.csv "$m" round $vals --to fp16,bf16,fp8-e4m3,fp8-e5m2 --mode sr \
			--seed 4 --csv || status=1
		# shellcheck disable=SC2086
		step "CLI: round --device cuda" round-cuda.csv "$m" round $vals --to fp16,bf16,fp8-e4m3,fp8-e5m2 \
			--mode sr --seed 4 --csv --device cuda || status=1
		step "CLI: round CSVs identical" round-cmp.log cmp "$logs/round-cpu.csv" "$logs/round-cuda.csv" || status=1
	fi
	if [ "$have_train" = yes ]; then
		step "train_gpu bench: GPU step vs CPU step" bench-train.log "$testbin/gpu/train_gpu" bench 3 || status=1
		# GPT-2 small's shape (124M parameters, context 1024): a step of its own
		step "train_gpu gpt2: GPT-2-small-shaped step" bench-gpt2.log "$testbin/gpu/train_gpu" gpt2 3 || status=1
	fi
	if [ "$mode" = full ]; then
		step "CLI: train --device cuda (3 policies)" train-cuda.log "$m" train --device cuda --steps 100 \
			--policy fp32,bf16-mixed,bf16-pure --csv "$logs/train-cuda.csv" || status=1
		# every launch synchronised and checked, then each kernel's time in one step
		step "CLI: train --device cuda, MIXPREC_GPU_SYNC=1" train-sync.log env MIXPREC_GPU_SYNC=1 "$m" train \
			--device cuda --steps 5 --policy fp32,bf16-mixed,bf16-pure-sr || status=1
		step "CLI: train --device cuda, MIXPREC_GPU_PROFILE=1" train-profile.log env MIXPREC_GPU_PROFILE=1 "$m" \
			train --device cuda --steps 3 --policy fp32,bf16-mixed || status=1
	fi
	# the 2^32 sweep last of the steps: a run cut short by the machine's lease
	# then still has every benchmark
	if [ "$EXHAUSTIVE" = 1 ]; then
		LIMIT=${EXHAUSTIVE_TIMEOUT:-400} step "GPU vs CPU: + all 2^32 fp32 inputs" test_gpu_exhaustive.log \
			env MIXPREC_GPU_EXHAUSTIVE=1 "$testbin/gpu/test_gpu" || status=1
	fi
	note ""
	note "## benchmarks"
	note ""
	grep '^|' "$logs/bench.log" >> "$summary" 2> /dev/null || cat "$logs/bench.log" >> "$summary"
	note ""
	note "Speed target: rounding and drift kernels at >= 0.70x of the device-to-device copy."
	awk -F'|' '/x \|$/ && $2 !~ /copy|simulation/ {
		gsub(/[ x]/, "", $(NF-1)); if ($(NF-1) + 0 < 0.70) { print "  below 0.70x:" $2 $(NF-1); low++ } }
		END { if (!low) print "  every kernel at or above 0.70x" }' "$logs/bench.log" | tee -a "$summary"
	if [ -s "$logs/train-profile.log" ]; then
		note ""
		note "## per-kernel profile (fp32 and bf16-mixed, one step, default shape)"
		note ""
		sed -n '/^GPU profile/,/^total/p' "$logs/train-profile.log" | sed 's/^/    /' >> "$summary"
	fi
	if [ "$have_train" = yes ]; then
		note ""
		note "## training"
		note ""
		grep '^|' "$logs/bench-train.log" >> "$summary" 2> /dev/null
		note ""
		note "Speed targets: bf16-mixed at the default shape >= 10x the CPU step; at the large shape"
		note "faster than the GPU's fp32 step."
		awk -F'|' '$2 ~ /cuda/ && $4 ~ /bf16-mixed/ {
			r = $6; gsub(/[ x]/, "", r); big = $3 ~ /C1024/
			ok = big ? r + 0 > 1 : r + 0 >= 10
			printf "  %s at%s: %sx %s\n", "bf16-mixed", $3, r, ok ? "(met)" : "(NOT met)" }' \
			"$logs/bench-train.log" | tee -a "$summary"
		note ""
		note "## GPT-2 small shape (tokens/s; goal: llm.c's class for bf16 on an H200)"
		note ""
		grep -v '^|' "$logs/bench-gpt2.log" 2> /dev/null | grep . >> "$summary"
		grep '^|' "$logs/bench-gpt2.log" >> "$summary" 2> /dev/null
	fi
fi

note ""
if [ "$gpu_usable" = no ]; then
	note "No usable GPU here: the build was checked and the GPU tests skipped (see test_gpu.log)."
fi
if [ $status -ne 0 ]; then
	note "Overall: FAIL"
elif [ "$gpu_usable" = yes ] && [ "$have_train" = no ]; then
	note "Overall: pass, but INCOMPLETE: the GPU trainer was not tested (see above)"
else
	note "Overall: pass"
fi
exit $status
