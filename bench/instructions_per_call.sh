#!/usr/bin/env bash
# Instructions each tool adds per MPI_Iprobe, counted by callgrind: unlike times, the same on a
# busy machine as on an idle one. Runs iprobe_loop (one rank, no launcher) with N1 and N2 calls
# and divides the difference in instructions by N2 - N1, so start-up and finalize cancel out.
# Usage: bench/instructions_per_call.sh [build dir]   (needs valgrind; an Open MPI build counts
# Open MPI's singleton)
# MPE_BENCH_TOOLS="log mpetime" limits the tools measured; "mpenull+umq" loads both, so that the
# wrappers take the registry's path (one tool alone takes its own solo path: mpe/core.h); other
# MPE_ settings (MPE_CALLSITE_DEPTH) pass through to the runs. MPE_BENCH_LOOP="program args"
# measures another loop that takes its number of calls last (bench/python_per_call.sh), with
# MPE_BENCH_CALLS="N1 N2".
# liblog's share: how many of its instructions its chunk codec spent (encode_events, inclusive).
# The codec compresses the times the run logged, and under callgrind's 50-fold slowdown those
# vary more than a native run's, so it also counts the codec on a native run's records
# (bench/encode_cost.sh; one record per call of the loop) and gives the sum.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
loop=${MPE_BENCH_LOOP:-$build/bin/iprobe_loop}
read -r n1 n2 <<< "${MPE_BENCH_CALLS:-100000 300000}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"  # the tools write their reports and logs into the working directory
count() {  # count <preload> <calls>: instructions of the loop's process in one run: all, then liblog's chunk codec
  rm -f "$scratch"/cg.*
  MPE_TMPDIR=$scratch valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$scratch/cg.%p" \
    env LD_PRELOAD="$1" $loop "$2" >/dev/null 2>&1
  # Only the loop's own process: Open MPI's singleton also forks an orted, which callgrind follows.
  for f in "$scratch"/cg.*; do
    grep -q "^cmd: *$loop " "$f" || continue
    local codec
    codec=$(callgrind_annotate --inclusive=yes --auto=no "$f" 2>/dev/null |
      awk '/mpe::format::encode_events\(/ {gsub(",", "", $1); s += $1} END {print s + 0}')
    echo "$(sed -n 's/^\(totals\|summary\): *\([0-9]*\).*/\2/p' "$f" | head -1) $codec"
  done
}
# per_call <preload>: instructions per call, all and the codec's
per_call() {
  local a b
  read -r -a a <<< "$(count "$1" $n1)"
  read -r -a b <<< "$(count "$1" $n2)"
  echo $(( (b[0] - a[0]) / (n2 - n1) )) $(( (b[1] - a[1]) / (n2 - n1) ))
}
read -r plain _ <<< "$(per_call "")"
echo "${MPE_BENCH_NAME:-MPI_Iprobe} without a tool: $plain instructions per call"
for tool in ${MPE_BENCH_TOOLS:-mpenull mpetime umq log}; do
  libs=""
  for one in ${tool//+/ }; do
    [ -e "$build/lib/lib$one.so" ] && libs=${libs:+$libs:}$build/lib/lib$one.so
  done
  [ -n "$libs" ] || continue
  read -r all codec <<< "$(per_call "$libs")"
  # liblog's codec compresses the times this run logged, which callgrind's slowdown makes noisier
  # than a native run's: bench/encode_cost.sh counts it on a native run's records.
  share=""
  [ "$codec" -gt 0 ] && share=" ($codec in its chunk codec, on the times logged under callgrind)"
  echo "lib${tool//+/.so + lib}.so adds $(( all - plain )) instructions per call$share"
  if [ "$codec" -gt 0 ] && [ -z "${MPE_BENCH_LOOP:-}" ]; then
    native=$(MPE_ENCODE_LOG="" "$here/encode_cost.sh" "$build" "$n2" | sed -n 's/.*: \([0-9]*\) instructions per record.*/\1/p')
    echo "  with a native run's times, its codec spends $native a record: $(( all - plain - codec + native )) per call"
  fi
done
