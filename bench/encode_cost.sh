#!/usr/bin/env bash
# Instructions liblog's chunk codec spends per record, counted by callgrind on the records of a
# real run: iprobe_loop (N calls of MPI_Iprobe, one rank) logged natively by liblog, then its
# chunks encoded again by bench/encode_log under callgrind, encode_events alone counted. How well
# the times compress, and so zstd's share, follows the run's timing jitter: an A/B of the codec
# gives both builds the same log (MPE_ENCODE_LOG=path), one the older build can read (a log
# written by it: a reader takes every older version, never a newer one).
# Usage: bench/encode_cost.sh [build dir] [calls, default 300000]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
calls=${2:-300000}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
log=${MPE_ENCODE_LOG:-}
if [ -z "$log" ]; then
  (cd "$scratch" && MPE_TMPDIR=$scratch LD_PRELOAD=$build/lib/liblog.so "$build/bin/iprobe_loop" "$calls" >/dev/null 2>&1)
  log=$scratch/iprobe_loop.mpelog
fi
out=$(valgrind --tool=callgrind --callgrind-out-file="$scratch/cg" --collect-atstart=no \
  "--toggle-collect=mpe::format::encode_events*" "$build/bin/encode_log" "$log" 2>/dev/null)
records=${out%% records*}
bytes=$(sed -n 's/.*, \([0-9]*\) bytes.*/\1/p' <<< "$out")
instructions=$(sed -n 's/^summary: *//p' "$scratch/cg")
echo "chunk encoding: $(( instructions / records )) instructions per record," \
  "$(awk -v b="$bytes" -v r="$records" 'BEGIN { printf "%.2f", b / r }') bytes per record ($records records)"
