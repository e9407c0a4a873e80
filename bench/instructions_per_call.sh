#!/usr/bin/env bash
# Instructions each tool adds per MPI_Iprobe, counted by callgrind: unlike times, the same on a
# busy machine as on an idle one. Runs iprobe_loop (one rank, no launcher) with N1 and N2 calls
# and divides the difference in instructions by N2 - N1, so start-up and finalize cancel out.
# Usage: bench/instructions_per_call.sh [build dir]   (needs valgrind)
# MPE_BENCH_TOOLS="log mpetime" limits the tools measured; other MPE_ settings (MPE_CALLSITE_DEPTH)
# pass through to the runs.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
loop=$build/bin/iprobe_loop
n1=100000 n2=300000
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"  # the tools write their reports and logs into the working directory
count() {  # count <preload> <calls>: total instructions of one run
  MPE_TMPDIR=$scratch valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$scratch/cg.%p" \
    env LD_PRELOAD="$1" "$loop" "$2" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1
}
per_call() { echo $(( ($(count "$1" $n2) - $(count "$1" $n1)) / (n2 - n1) )); }
plain=$(per_call "")
echo "MPI_Iprobe without a tool: $plain instructions per call"
for tool in ${MPE_BENCH_TOOLS:-mpenull mpetime umq log}; do
  lib=$build/lib/lib$tool.so
  [ -e "$lib" ] || continue
  echo "lib$tool.so adds $(( $(per_call "$lib") - plain )) instructions per call"
done
