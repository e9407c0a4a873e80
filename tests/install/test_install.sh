#!/usr/bin/env bash
# Installs the build into a scratch prefix, checks that the CMake package exports exactly the
# promised targets (mpe::time, mpe::umq, mpe::log, mpe::live, mpe::null, and mpe::stack, the
# layering library of `mpe run --stack`), builds a consumer linked
# against all five with find_package(MpeTools), runs it on 2 ranks and checks what each tool wrote; checks
# the pkg-config files and the installed mpe command.
# Usage: test_install.sh <build dir> <this dir> <mpicc> <mpiexec> [mpiexec flags...]
set -euo pipefail
build=$1 src=$2 mpicc=$3 mpiexec=$4
shift 4
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/mpe"
"$prefix/bin/mpe" --version
test -f "$prefix/include/mpe/core.h" && test -f "$prefix/include/mpe/calls.h"
# MPE's logging API for Python, where the installed `mpe run --log` puts it on PYTHONPATH.
test -f "$prefix/lib/python/mpelog.py" || fail "no lib/python/mpelog.py"

# The package's imported targets, exactly.
exported=$(sed -n 's/^add_library(\(mpe::[A-Za-z0-9_]*\) .*/\1/p' "$prefix/lib/cmake/MpeTools/MpeToolsTargets.cmake" |
           sort | xargs)
[ "$exported" = "mpe::live mpe::log mpe::null mpe::stack mpe::time mpe::umq" ] || fail "exported targets are '$exported'"

# One pkg-config file per library.
for lib in mpetime umq log live mpenull mpestack; do
  PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs "mpe-$lib" | grep -q -- "-l$lib\b" ||
    fail "pkg-config mpe-$lib does not link -l$lib"
done

cmake -S "$src/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" -DMPE_MPICC="$mpicc" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
needed=$(readelf -d "$prefix/consumer-build/consumer")
for lib in mpetime umq log live mpenull; do
  grep -q "lib$lib\.so" <<<"$needed" || fail "the consumer does not need lib$lib.so"
done

# Run it: every tool must be loaded (the consumer checks) and show that it ran.
run=$prefix/run
mkdir "$run"
(cd "$run" && MPE_TMPDIR=$run MPE_LOGFILE_PREFIX=consumer "$mpiexec" "$@" -n 2 "$prefix/consumer-build/consumer") \
  >"$run/out.txt" 2>&1 || { cat "$run/out.txt"; fail "the consumer failed"; }
grep -q "consumer ok: 5 tools loaded" "$run/out.txt" || { cat "$run/out.txt"; fail "the consumer did not report"; }
"$prefix/bin/mpe" stat "$run/consumer.mpelog" | grep -q "MPI_Sendrecv" || fail "liblog's log lacks MPI_Sendrecv"
grep -q "MPI_Sendrecv" "$run/consumer.mpetime.txt" || fail "libmpetime's report lacks MPI_Sendrecv"
# libumq writes a report where the MPI has a queue variable, else says in one line that it cannot.
[ -f "$run/consumer.umq.txt" ] || grep -q "^mpe-tools: umq" "$run/out.txt" || fail "libumq neither reported nor said why"
# liblive, linked but not started by `mpe run --live`, says so in one line and stays out of the way.
grep -q "^mpe-tools: liblive: MPE_LIVE_ENDPOINT" "$run/out.txt" || fail "liblive did not say why the live view is off"
echo "install: the package's five tool targets link, load and record; mpe, headers and pkg-config work from $prefix"
