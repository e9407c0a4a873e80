#!/usr/bin/env bash
# `mpe stat` or `mpe waits` on one `mpe synth` log, alone (M = 1, no launcher) and as an MPI job over
# M processes (`mpiexec.mpich -n M mpe CMD LOG`): wall time (median of RUNS) and peak resident memory
# of the largest process, and whether the output is the same as alone's, byte for byte (issue 37).
# Usage: bench/spread.sh stat|waits [build dir] [ranks] [records] ["M list"] [runs] [an older mpe]
# The log is made once and kept ($MPE_BENCH_LOG, default /tmp/spread_<ranks>_<records>.mpelog).
set -euo pipefail
command=${1:?usage: bench/spread.sh stat|waits [build dir] [ranks] [records] ["M list"] [runs] [older mpe]}
build=$(cd "${2:-build}" && pwd)
ranks=${3:-4096} records=${4:-100000000} ms=${5:-"1 2 3 8"} runs=${6:-3} before=${7:-}
mpe=$build/bin/mpe
log=${MPE_BENCH_LOG:-/tmp/spread_${ranks}_${records}.mpelog}
[ -f "$log" ] || "$mpe" synth --ranks "$ranks" --events "$records" "$log" >/dev/null
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$mpe" "$command" "$log" >"$scratch/alone.txt"
echo "mpe $command, log: $log ($(du -h "$log" | cut -f1), $records records, $ranks ranks)"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
measure() {  # measure <label> <command...>: each process writes its peak KiB to $scratch/rss.<pid>
  local label=$1
  shift
  : >"$scratch/times"
  for _ in $(seq "$runs"); do
    rm -f "$scratch"/rss.*
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >"$scratch/out.txt"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}' >>"$scratch/times"
  done
  local peak
  peak=$(cat "$scratch"/rss.* | sort -n | tail -1)
  local same=different
  cmp -s "$scratch/out.txt" "$scratch/alone.txt" && same=same
  printf '%-22s %7.2f s (median of %d)   peak %6d MiB per process   output: %s\n' "$label" \
    "$(median <"$scratch/times")" "$runs" $((peak / 1024)) "$same"
}
timed() { /usr/bin/time -f "%M" -o "$scratch/rss.$$.$RANDOM" "$@"; }
export -f timed
export scratch command
for m in $ms; do
  if [ "$m" = 1 ]; then
    measure "M = 1 (no mpiexec)" bash -c 'timed "$0" "$command" "$1"' "$mpe" "$log"
  else
    measure "M = $m (mpiexec.mpich)" mpiexec.mpich -n "$m" bash -c 'timed "$0" "$command" "$1"' "$mpe" "$log"
  fi
done
if [ -n "$before" ]; then
  "$before" "$command" "$log" >"$scratch/alone.txt"  # its own output is the reference for its line
  measure "older mpe, M = 1" bash -c 'timed "$0" "$command" "$1"' "$before" "$log"
fi
