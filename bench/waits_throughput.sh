#!/usr/bin/env bash
# `mpe waits` throughput and peak memory on a synthetic log with messages and collectives
# (`mpe synth`: halo messages through Irecv/Wait, Allreduce and Barrier, nested user states).
# Prints records per second (median of the runs) and the largest peak RSS.
# Usage: bench/waits_throughput.sh [build dir] [records (default 100000000)] [ranks (default 64)] [runs (default 3)]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
records=${2:-100000000} ranks=${3:-64} runs=${4:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$build/bin/mpe" synth --ranks "$ranks" --events "$records" "$scratch/synth.mpelog" >/dev/null
n=$("$build/bin/mpe" waits --json "$scratch/synth.mpelog" >/dev/null && echo "$records")
echo "log: $(stat -c %s "$scratch/synth.mpelog") bytes, $records records, $ranks ranks"
rates=() peak=0
for ((i = 1; i <= runs; ++i)); do
  /usr/bin/time -f "%e %M" -o "$scratch/time" "$build/bin/mpe" waits --json "$scratch/synth.mpelog" >/dev/null
  read -r secs kb <"$scratch/time"
  rates+=("$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.1f", n / s / 1e6 }')")
  ((kb > peak)) && peak=$kb
  echo "run $i: $secs s, $(awk -v k="$kb" 'BEGIN { printf "%.0f", k / 1024 }') MiB peak"
done
median=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "mpe waits: $median M records/s (median of $runs), peak memory $(awk -v k="$peak" 'BEGIN { printf "%.0f", k / 1024 }') MiB"
