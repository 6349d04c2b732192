#!/bin/sh
# Copies this (Debian) machine's OpenBLAS into .device-carry/openblas, an
# ignored folder the device tool can carry to a GPU machine that has the
# CUDA toolkit but no package registry; tests/gpu/device-check.sh finds it
# there and builds the GPU trainer's checks (the CPU trainer, their oracle,
# needs a BLAS). About 40 MB: libopenblas.so.0, the Fortran runtime it links
# and the cblas headers.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dest=$(cd "$here/../.." && pwd)/.device-carry/openblas
lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libopenblas.so.0 2> /dev/null || true)
inc=/usr/include/x86_64-linux-gnu/openblas-pthread
if [ -z "$lib" ] || [ ! -f "$lib" ] || [ ! -f "$inc/cblas.h" ]; then
	echo "carry-openblas: no OpenBLAS here (libopenblas-dev: ./run installs it)" >&2
	exit 1
fi
rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/include"
cp "$lib" "$dest/lib/libopenblas.so.0"
for l in libgfortran.so.5 libquadmath.so.0; do
	p=$(ldd "$lib" | awk -v l="$l" '$1 == l { print $3 }')
	[ -n "$p" ] && cp "$(readlink -f "$p")" "$dest/lib/$l"
done
cp "$inc"/cblas.h "$inc"/openblas_config.h "$dest/include/"
[ -f "$inc/f77blas.h" ] && cp "$inc/f77blas.h" "$dest/include/"
du -sh "$dest"
echo "carry .device-carry with the device tool; device-check.sh uses it"
