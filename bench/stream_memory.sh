#!/usr/bin/env bash
# `mpe print` or `mpe umq` on 64-rank `mpe synth` logs of growing size: wall time and peak resident
# memory, and, given an older `mpe` (the in-memory command), its figures and whether the output is
# the same (issue 37: both stream, so their memory follows the sort's budget, not the records).
# Usage: bench/stream_memory.sh print|umq [build dir] ["records list"] [an older mpe]
# The logs are made once and kept (/tmp/print_64_<records>.mpelog).
set -euo pipefail
command=${1:?usage: bench/stream_memory.sh print|umq [build dir] ["records list"] [older mpe]}
build=$(cd "${2:-build}" && pwd)
sizes=${3:-"5000000 20000000 60000000"} before=${4:-}
mpe=$build/bin/mpe
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
measure() {  # measure <label> <mpe> <log>: prints wall, peak and the output's checksum
  /usr/bin/time -f "%e %M" -o "$scratch/time" "$2" "$command" "$3" | md5sum | cut -c1-12 >"$scratch/sum"
  read -r wall kib <"$scratch/time"
  printf '  %-12s %7.2f s   peak %6d MiB   output md5 %s\n' "$1" "$wall" $((kib / 1024)) "$(cat "$scratch/sum")"
}
for records in $sizes; do
  log=/tmp/print_64_$records.mpelog
  [ -f "$log" ] || "$mpe" synth --ranks 64 --events "$records" "$log" >/dev/null
  echo "mpe $command, $records records, 64 ranks ($(du -h "$log" | cut -f1)):"
  measure "this build" "$mpe" "$log"
  [ -z "$before" ] || measure "older mpe" "$before" "$log"
done
