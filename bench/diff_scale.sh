#!/usr/bin/env bash
# `mpe diff` of two synthetic logs against one `mpe waits` of one of them: time, CPU time (user +
# system: what a loaded machine does not distort) and peak RSS, medians of the runs. The issue's
# target: diff within 2 x one `mpe waits` (diff reads both logs side by side, one thread each,
# each chunk decoded once for its tables and the wait states, so on two free cores it costs about
# one log's pass plus the matching of its tables).
# Usage: bench/diff_scale.sh [build dir] [ranks (default 64)] [records (default 10000000)] [runs (default 3)]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
ranks=${2:-64} records=${3:-10000000} runs=${4:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mib() { awk '{ printf "%.0f", $1 / 1024 }'; }
"$build/bin/mpe" synth --ranks "$ranks" --events "$records" --seed 1 "$scratch/a.mpelog" >"$scratch/a.txt"
"$build/bin/mpe" synth --ranks "$ranks" --events "$records" --seed 2 --slow-ranks 3 "$scratch/b.mpelog" >"$scratch/b.txt"
echo "A: $(cat "$scratch/a.txt"); $(stat -c %s "$scratch/a.mpelog") bytes"
echo "B: $(cat "$scratch/b.txt"); $(stat -c %s "$scratch/b.mpelog") bytes"
# measure <name> <command...>: runs it `runs` times under /usr/bin/time -v; prints the medians.
measure() {
  local name=$1 secs="" kbs="" cpus=""
  shift
  for ((i = 1; i <= runs; ++i)); do
    /usr/bin/time -v -o "$scratch/time" "$@" >"$scratch/out.txt"
    local s kb cpu
    s=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); t = 0; for (k = 1; k <= n; ++k) t = t * 60 + p[k]; print t }' "$scratch/time")
    kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$scratch/time")
    cpu=$(awk -F': ' '/User time|System time/ { t += $2 } END { printf "%.2f", t }' "$scratch/time")
    secs+="$s " kbs+="$kb " cpus+="$cpu "
  done
  local ms mk mc
  ms=$(tr ' ' '\n' <<<"$secs" | grep . | median)
  mk=$(tr ' ' '\n' <<<"$kbs" | grep . | median)
  mc=$(tr ' ' '\n' <<<"$cpus" | grep . | median)
  echo "$name: $ms s, CPU $mc s, peak RSS $(mib <<<"$mk") MiB (medians of $runs: $secs s)"
  eval "${name//[^a-z]/_}_s=$ms"
}
measure "mpe waits a" "$build/bin/mpe" waits "$scratch/a.mpelog"
measure "mpe diff a b" "$build/bin/mpe" diff "$scratch/a.mpelog" "$scratch/b.mpelog"
echo "diff / waits: $(awk -v d="$mpe_diff_a_b_s" -v w="$mpe_waits_a_s" 'BEGIN { printf "%.2f", d / w }') (target <= 2), $(nproc) cores"
