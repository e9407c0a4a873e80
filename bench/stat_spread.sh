#!/usr/bin/env bash
# `mpe stat` on one `mpe synth` log, alone (M = 1, no launcher) and as an MPI job over M processes
# (`mpiexec.mpich -n M mpe stat LOG`): wall time (median of RUNS) and peak resident memory of the
# largest process, and whether the output is the same as alone's, byte for byte (issue 37).
# Usage: bench/stat_spread.sh [build dir] [ranks] [records] ["M list"] [runs] [an older mpe to compare]
# The log is made once and kept ($MPE_BENCH_LOG, default /tmp/stat_spread_<ranks>_<records>.mpelog).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
ranks=${2:-4096} records=${3:-100000000} ms=${4:-"1 2 3 8"} runs=${5:-3} before=${6:-}
mpe=$build/bin/mpe
log=${MPE_BENCH_LOG:-/tmp/stat_spread_${ranks}_${records}.mpelog}
[ -f "$log" ] || "$mpe" synth --ranks "$ranks" --events "$records" "$log" >/dev/null
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$mpe" stat "$log" >"$scratch/alone.txt"
echo "log: $log ($(du -h "$log" | cut -f1), $(sed -n 's/.*records: //p' "$scratch/alone.txt") records, $ranks ranks)"
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
export scratch
for m in $ms; do
  if [ "$m" = 1 ]; then
    measure "M = 1 (no mpiexec)" bash -c 'timed "$0" stat "$1"' "$mpe" "$log"
  else
    measure "M = $m (mpiexec.mpich)" mpiexec.mpich -n "$m" bash -c 'timed "$0" stat "$1"' "$mpe" "$log"
  fi
done
if [ -n "$before" ]; then
  "$before" stat "$log" >"$scratch/alone.txt"  # its own output is the reference for its line
  measure "older mpe, M = 1" bash -c 'timed "$0" stat "$1"' "$before" "$log"
fi
