#!/bin/sh
# The two builds of tests/gpu/device-check.sh, which runs this script under
# a time limit: device-build.sh standalone|full, each in its own copy of the
# tree under $work. It reads the settings device-check.sh exports (src,
# work, CC, NVCC, CUDA_HOME, CUDA_ARCH, blas_where, blas_cflags, blas_libs,
# JOBS). Exit status 0 when the build passed, 2 when it failed.
set -u
# the temporary files of configure and make (make -f - leaves one behind)
# inside the work folder that device-check.sh removes
TMPDIR=$work/tmp
export TMPDIR
mkdir -p "$TMPDIR" || exit 2

# --- standalone: the CUDA toolkit and a C compiler only ---
# ./configure --enable-device-build and `make device` (Makefile.am's
# libmixprec_core.a and libmixprec_train.a, and the GPU test programs) in a
# fresh copy of the tree. The generated configure and Makefile.in are the
# tree's own when it has them, else those `make device-carry` left in
# .device-carry/autotools for a machine without autotools (README.md), else
# autoreconf makes them.
build_standalone() (
	b=$work/standalone
	mkdir -p "$b" || exit 2
	# the tree's files, tracked and new, without what a build left there
	# a git checkout's own top (a tarball unpacked inside some other
	# checkout, as make distcheck does, is copied whole)
	if [ "$(git -C "$src" rev-parse --show-toplevel 2> /dev/null)" = "$(cd "$src" && pwd -P)" ]; then
		(cd "$src" && git ls-files -co --exclude-standard -z |
			xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
			tar --null -T - -cf -) | tar -C "$b" -xf - || exit 2
	else
		# a tree without git (a tarball), less the top folder that holds
		# the work folder when that lies inside it (make distcheck builds
		# in _build inside the unpacked tarball)
		top=$(cd "$src" && pwd -P)
		in=$(cd "$work" && pwd -P)
		skip=
		case $in in "$top"/*) in=${in#"$top"/}; skip=--exclude=./${in%%/*} ;; esac
		(cd "$top" && tar $skip -cf - .) | tar -C "$b" -xf - || exit 2
	fi
	generated="configure Makefile.in config.h.in aclocal.m4 build-aux"
	gen=
	for d in "$src" "$src/.device-carry/autotools"; do
		if [ -f "$d/configure" ] && [ -f "$d/Makefile.in" ]; then gen=$d; break; fi
	done
	if [ -n "$gen" ]; then
		for f in $generated; do
			[ -e "$gen/$f" ] && cp -R "$gen/$f" "$b/" || { echo "generated file $gen/$f missing"; exit 2; }
		done
		# newer than the sources they come from, whatever the copy did to the
		# times, so that make never asks for the autotools
		(cd "$b" && touch aclocal.m4 && touch configure config.h.in Makefile.in) || exit 2
		echo "configure and Makefile.in: from $gen"
	elif command -v autoreconf > /dev/null 2>&1; then
		(cd "$b" && autoreconf -fi) || exit 2
	else
		echo "no configure here and no autoreconf to make it: run 'make device-carry' in a configured"
		echo "checkout on a machine with autotools and carry .device-carry (tests/gpu/README.md)"
		exit 2
	fi
	cd "$b" || exit 2
	set -- --enable-device-build NVCC="$NVCC" CUDA_HOME="$CUDA_HOME" CUDA_ARCH="$CUDA_ARCH" CC="$CC"
	[ "$blas_where" = none ] || set -- "$@" OPENBLAS_CFLAGS="$blas_cflags" OPENBLAS_LIBS="$blas_libs"
	./configure "$@" && make -j"$JOBS" device || exit 2
	if [ ! -x tests/gpu/train_gpu ]; then
		echo "no OpenBLAS (BLAS_DIR, .device-carry/openblas or pkg-config): train_gpu not built"
	else
		echo "OpenBLAS: $blas_where"
	fi
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
