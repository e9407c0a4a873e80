#!/usr/bin/env bash
# The log format and the command line at many ranks (issue 25): for each rank count, `mpe synth`
# (time, peak memory, file size), the definitions' bytes per rank, and the time and peak memory of
# `mpe stat` and `mpe waits` on the log. Medians of RUNS runs (default 3).
#   bench/format_scale.sh <build dir> [ranks:events ...]   (default 16384:400000 100000:600000 1048576:6291456)
# Example with the issue's 100 M-record logs: bench/format_scale.sh build 16384:100000000 100000:100000000
set -euo pipefail
build=${1:?usage: bench/format_scale.sh <build dir> [ranks:events ...]}
shift
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(16384:400000 100000:600000 1048576:6291456)
runs=${RUNS:-3}
mpe=$build/bin/mpe
work=$(mktemp -d /tmp/mpe-format-scale.XXXXXX)
trap 'rm -rf "$work"' EXIT

# median of the numbers on stdin
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# measure <label> <command...>: median wall seconds and peak MiB over $runs runs
measure() {
  local label=$1; shift
  local t=() m=()
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null
    read -r s k < "$work/time"
    t+=("$s"); m+=("$((k / 1024))")
  done
  printf "  %-12s %8.2f s  %7d MiB peak\n" "$label" "$(printf '%s\n' "${t[@]}" | median)" \
         "$(printf '%s\n' "${m[@]}" | median)"
}

for size in "${sizes[@]}"; do
  ranks=${size%%:*}; events=${size##*:}
  log=$work/r$ranks.mpelog
  echo "== $ranks ranks, $events records requested"
  measure "mpe synth" "$mpe" synth --ranks "$ranks" --events "$events" "$log"
  echo "  file: $(stat -c %s "$log") bytes, $("$mpe" stat --json "$log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])') records"
  "$mpe" print --definitions "$log" | sed -e 's/^/  /'
  measure "mpe stat" "$mpe" stat "$log"
  measure "mpe waits" "$mpe" waits "$log"
  rm -f "$log"
done
