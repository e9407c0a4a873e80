#!/usr/bin/env bash
# What all three recording tools together (libmpetime, libumq, liblog, preloaded by `mpe run`)
# add to the latency of an application's messages, the way IMB measures it: samples/pingpong's
# 8-byte half round trip on 2 ranks, and bench/allreduce_loop's 8-byte MPI_Allreduce on RANKS
# ranks. ROUNDS rounds, each running the plain program and then the tooled one, so that each
# difference is taken between neighbours in time; prints the medians and the median difference.
# Usage: bench/app_latency.sh [build dir] [rounds] [allreduce ranks]   (MPICH build; default build 9 2)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-9} ranks=${3:-2}
mpe=$build/bin/mpe
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
figure() {  # figure <key> <command...>: the number after "key=" in the command's output
  local key=$1
  shift
  "$@" 2>/dev/null | sed -n "s/.*$key=\([0-9.]*\).*/\1/p" | head -1
}
measure() {  # measure <name> <key> <np> <program args...>
  local name=$1 key=$2 np=$3
  shift 3
  local plain="" tools="" diff=""
  for ((i = 0; i < rounds; i++)); do
    local a b
    a=$(figure "$key" mpiexec.mpich -n "$np" "$@")
    b=$(figure "$key" "$mpe" run --time --umq --log --quiet -- mpiexec.mpich -n "$np" "$@")
    plain+="$a " tools+="$b " diff+="$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.4f", b - a}') "
  done
  printf "%-28s plain %7.3f us   with the three tools %7.3f us   added %+.3f us (median of %d paired rounds)\n" \
    "$name" "$(tr ' ' '\n' <<<"$plain" | grep . | median)" "$(tr ' ' '\n' <<<"$tools" | grep . | median)" \
    "$(tr ' ' '\n' <<<"$diff" | grep . | median)" "$rounds"
}
measure "PingPong 8 B, half round trip" half_round_trip_us 2 "$build/bin/pingpong" 8 100000
measure "Allreduce 8 B, $ranks ranks" allreduce_us "$ranks" "$build/bin/allreduce_loop" 100000
