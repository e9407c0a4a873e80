#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds a consumer with find_package(MpeTools)
# and checks the pkg-config files and the installed mpe command.
set -euo pipefail
build=$1 src=$2 mpicc=$3
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/mpe"
"$prefix/bin/mpe" --version
test -f "$prefix/include/mpe/core.h" && test -f "$prefix/include/mpe/calls.h"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs mpe-mpenull | grep -q -- "-lmpenull"
cmake -S "$src/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" -DMPE_MPICC="$mpicc" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
readelf -d "$prefix/consumer-build/consumer" | grep -q 'libmpenull'
echo "install: mpe, headers, CMake package and pkg-config files work from $prefix"
