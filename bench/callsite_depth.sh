#!/usr/bin/env bash
# What MPE_CALLSITE_DEPTH costs: instructions liblog adds per MPI_Iprobe (callgrind, against no
# tool in the same run) with one-frame call sites (the cache) and with deeper ones (an
# unw_backtrace per call). iprobe_loop calls MPI_Iprobe from main, so the stack above it is
# main, __libc_start_call_main and __libc_start_main: depth 3 walks all of them.
# Usage: bench/callsite_depth.sh [build dir]   (needs valgrind)
set -euo pipefail
here=$(dirname "$0")
for depth in 1 2 3; do
  echo "MPE_CALLSITE_DEPTH=$depth: $(MPE_CALLSITE_DEPTH=$depth MPE_BENCH_TOOLS=log "$here/instructions_per_call.sh" "${1:-build}" | tail -1)"
done
