#!/usr/bin/env bash
# Throughput and peak memory of `mpe` analysis commands on one synthetic log (`mpe synth`: halo
# messages through Irecv/Wait, Allreduce and Barrier, nested user states). The commands run in
# turn in each round, so that a busy machine slows them alike; prints each one's records per
# second (median of the rounds) and largest peak RSS, and with two or more commands the first
# one's time against each other's (median of the per-round ratios). waits_throughput.sh and
# umq_throughput.sh are this with their commands.
# Usage: bench/analysis_throughput.sh "<command> [baseline command...]" [build dir] [records (default 100000000)] [ranks (default 64)] [runs (default 3)]
set -euo pipefail
read -r -a commands <<<"$1"
build=$(cd "${2:-build}" && pwd)
records=${3:-100000000} ranks=${4:-64} runs=${5:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
"$build/bin/mpe" synth --ranks "$ranks" --events "$records" "$scratch/synth.mpelog" >/dev/null
for c in "${commands[@]}"; do "$build/bin/mpe" "$c" --json "$scratch/synth.mpelog" >/dev/null 2>&1; done
echo "log: $(stat -c %s "$scratch/synth.mpelog") bytes, $records records, $ranks ranks"
declare -A rates peak ratios
for ((i = 1; i <= runs; ++i)); do
  first=""
  for c in "${commands[@]}"; do
    /usr/bin/time -f "%e %M" -o "$scratch/time" "$build/bin/mpe" "$c" --json "$scratch/synth.mpelog" >/dev/null 2>&1
    read -r secs kb <"$scratch/time"
    rates[$c]+="$(awk -v n="$records" -v s="$secs" 'BEGIN { printf "%.1f", n / s / 1e6 }') "
    ((kb > ${peak[$c]:-0})) && peak[$c]=$kb
    echo "run $i: mpe $c: $secs s, $(awk -v k="$kb" 'BEGIN { printf "%.0f", k / 1024 }') MiB peak"
    if [ -z "$first" ]; then first=$secs; else ratios[$c]+="$(awk -v a="$first" -v b="$secs" 'BEGIN { printf "%.3f", a / b }') "; fi
  done
done
for c in "${commands[@]}"; do
  echo "mpe $c: $(tr ' ' '\n' <<<"${rates[$c]}" | grep . | median) M records/s (median of $runs), peak memory $(awk -v k="${peak[$c]}" 'BEGIN { printf "%.0f", k / 1024 }') MiB"
done
for c in "${commands[@]:1}"; do
  echo "mpe ${commands[0]} time / mpe $c time: $(tr ' ' '\n' <<<"${ratios[$c]}" | grep . | median) (median of $runs rounds)"
done
