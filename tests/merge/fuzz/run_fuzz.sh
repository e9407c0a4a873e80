#!/usr/bin/env bash
# Builds the reader's fuzz target with clang (libFuzzer, AddressSanitizer, UBSan) and runs it for a
# fixed time from the seed logfiles. Fails (exit != 0) when the build fails or when a sanitizer,
# a crash, a leak, a timeout or an out-of-memory stops the run; the input that did it is kept in
# <build dir>/crashes/ (replay: <build dir>/fuzz_reader <file>).
# Usage: run_fuzz.sh <this dir> <build dir> <clang++> <seconds> <seed logfile>...
set -euo pipefail
src=$1 build=$2 cxx=$3 seconds=$4
shift 4
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: no clang++ ('$cxx'): install the packages clang and libclang-rt-14-dev" >&2
  exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" 2>&1 | sed -e '/^\[[0-9]*\/[0-9]*\]/d'
# The corpus lives in the build dir, so that each run starts from what the last one reached.
mkdir -p "$build/corpus" "$build/crashes"
cp "$@" "$build/corpus/"
# The reader may allocate a chunk's claimed raw size, up to 1 GiB, before it decompresses: leave room.
"$build/fuzz_reader" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 -print_final_stats=1 \
  -artifact_prefix="$build/crashes/" "$build/corpus"
