#!/usr/bin/env bash
# `mpe waits` against the number of ranks: time and peak RSS (medians of the runs) on an `mpe synth`
# log of the given ranks and records, beside what a dense ranks × ranks blame matrix alone would
# take (8 bytes a cell: 128 MiB at 4,096 ranks, 75 GiB at 100,000). The analysis keeps blame per
# pair that waited, so its memory follows the messages, not ranks².
# Usage: bench/waits_scale.sh [build dir] [ranks (default 100000)] [records (default 10000000)] [runs (default 3)]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
ranks=${2:-100000} records=${3:-10000000} runs=${4:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
"$build/bin/mpe" synth --ranks "$ranks" --events "$records" "$scratch/synth.mpelog" >"$scratch/synth.txt"
echo "log: $(cat "$scratch/synth.txt"); $(stat -c %s "$scratch/synth.mpelog") bytes"
secs="" kbs=""
for ((i = 1; i <= runs; ++i)); do
  /usr/bin/time -f "%e %M" -o "$scratch/time" "$build/bin/mpe" waits "$scratch/synth.mpelog" >"$scratch/waits.txt"
  read -r s kb <"$scratch/time"
  secs+="$s " kbs+="$kb "
  echo "run $i: $s s, $(awk -v k="$kb" 'BEGIN { printf "%.0f", k / 1024 }') MiB peak"
done
pairs=$(sed -n 's/.*pairs that cost most, of \([0-9]*\) that waited.*/\1/p' "$scratch/waits.txt")
echo "mpe waits, $ranks ranks, $records records: $(tr ' ' '\n' <<<"$secs" | grep . | median) s," \
  "peak RSS $(tr ' ' '\n' <<<"$kbs" | grep . | median | awk '{ printf "%.0f", $1 / 1024 }') MiB (medians of $runs);" \
  "${pairs:+$pairs rank pairs waited; }a dense blame matrix alone: $(awk -v n="$ranks" 'BEGIN { printf "%.0f", n * n * 8 / 1048576 }') MiB"
