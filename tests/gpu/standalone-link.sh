#!/bin/sh
# The GPU machine's standalone build (tests/gpu/device-build.sh:
# ./configure --enable-device-build, make device) compiles and links here, so
# that a source put in libmixprec_core.a or libmixprec_train.a that needs a
# library the GPU machine lacks cannot break the first GPU run. nvcc's part
# is stood in for by the objects this build's nvcc already made
# (src/gpu/*.o): the test checks configure, the C compiles and the links,
# and then that device-check.sh reports "Overall: pass" with the GPU steps
# skipped (or run, on a GPU).
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
. "${srcdir:-.}/tests/harness.sh"

build=$(pwd)
if [ ! -f "$build/src/gpu/gpu.o" ] || [ ! -f "$build/src/gpu/gpu_trainer.o" ]; then
	echo "SKIP: built without CUDA (no src/gpu/gpu.o)"
	exit 77
fi
# the standalone build's files (tens of MB) beside this build's, on the disk
# that just held the whole build, not in a /tmp that may be small
TMPDIR=$build
export TMPDIR
make_tmp standalone-link
cat >"$tmp/nvcc" <<EOS
#!/bin/sh
if [ "\$1" = --version ]; then echo "stand-in for nvcc: the objects of $build/src/gpu"; exit 0; fi
src= out= dep=
while [ \$# -gt 0 ]; do case "\$1" in -o) out=\$2; shift;; -MF) dep=\$2; shift;; *.cu) src=\$1;; esac; shift; done
[ -z "\$dep" ] || echo "\$out:" > "\$dep"
o="$build/src/gpu/\$(basename "\$src" .cu).o"
# configure's probe (conftest.cu) has no object here: an empty one stands in
if [ -f "\$o" ]; then cp "\$o" "\$out"; else : > "\$out"; fi
EOS
chmod +x "$tmp/nvcc"
# the toolkit configure found and linked this build with (its CUDA_HOME and
# the folder of libcudart_static.a), so that both builds use one toolkit
cuda_home=${MIXPREC_CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")")}
NVCC=$tmp/nvcc CUDA_HOME=$cuda_home CUDA_LIBDIR=${MIXPREC_CUDA_LIBDIR:-} MODE=standalone EXHAUSTIVE=0 OUT=$tmp/out STEP_TIMEOUT=120 \
	BUILD_TIMEOUT=600 sh "${srcdir:-.}/tests/gpu/device-check.sh" >"$tmp/log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "Overall: pass" "$tmp/log"; then
	ok "standalone device build: compiles, links, Overall: pass"
else
	bad "standalone device build: compiles, links, Overall: pass" "device-check.sh exit $rc"
	tail -n 8 "$tmp/log"
	if [ -f "$tmp/out/logs.tar.gz" ]; then
		# the compiler's and linker's own lines (ld's "multiple definition",
		# "cannot find", "No space left" name no error), then the log's end
		tar -C "$tmp" -xzf "$tmp/out/logs.tar.gz" &&
			grep -n "error\|undefined\|ld:\|cannot\|multiple\|space" "$tmp/logs/build.log" | head -n 20 &&
			tail -n 15 "$tmp/logs/build.log"
		df -h "$tmp" 2> /dev/null | tail -n 1
		echo "configure's toolkit: CUDA_HOME=${MIXPREC_CUDA_HOME:-?} libdir=${MIXPREC_CUDA_LIBDIR:-?}"
		grep "toolkit libraries" "$tmp/log"
	fi
fi
finish
