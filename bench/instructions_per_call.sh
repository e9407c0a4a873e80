#!/usr/bin/env bash
# Instructions each tool adds per MPI_Iprobe, counted by callgrind: unlike times, the same on a
# busy machine as on an idle one. Runs iprobe_loop (one rank, no launcher) with N1 and N2 calls
# and divides the difference in instructions by N2 - N1, so start-up and finalize cancel out.
# Usage: bench/instructions_per_call.sh [build dir]   (needs valgrind; an Open MPI build counts
# Open MPI's singleton)
# MPE_BENCH_TOOLS="log mpetime" limits the tools measured; "mpenull+umq" loads both, so that the
# wrappers take the registry's path (one tool alone takes its own solo path: mpe/core.h); other
# MPE_ settings (MPE_CALLSITE_DEPTH)
# pass through to the runs. MPE_BENCH_LOOP="program args" measures another loop that takes its
# number of calls last (bench/python_per_call.sh), with MPE_BENCH_CALLS="N1 N2".
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
loop=${MPE_BENCH_LOOP:-$build/bin/iprobe_loop}
read -r n1 n2 <<< "${MPE_BENCH_CALLS:-100000 300000}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"  # the tools write their reports and logs into the working directory
count() {  # count <preload> <calls>: total instructions of the loop's process in one run
  rm -f "$scratch"/cg.*
  MPE_TMPDIR=$scratch valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$scratch/cg.%p" \
    env LD_PRELOAD="$1" $loop "$2" >/dev/null 2>&1
  # Only the loop's own process: Open MPI's singleton also forks an orted, which callgrind follows.
  for f in "$scratch"/cg.*; do
    grep -q "^cmd: *$loop " "$f" && sed -n 's/^\(totals\|summary\): *\([0-9]*\).*/\2/p' "$f" | head -1
  done
}
per_call() { echo $(( ($(count "$1" $n2) - $(count "$1" $n1)) / (n2 - n1) )); }
plain=$(per_call "")
echo "${MPE_BENCH_NAME:-MPI_Iprobe} without a tool: $plain instructions per call"
for tool in ${MPE_BENCH_TOOLS:-mpenull mpetime umq log}; do
  libs=""
  for one in ${tool//+/ }; do
    [ -e "$build/lib/lib$one.so" ] && libs=${libs:+$libs:}$build/lib/lib$one.so
  done
  [ -n "$libs" ] || continue
  echo "lib${tool//+/.so + lib}.so adds $(( $(per_call "$libs") - plain )) instructions per call"
done
