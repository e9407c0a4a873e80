#!/usr/bin/env bash
# Scale figures (docs/scale.md): halo2d (3 sweeps) on N ranks, oversubscribed on this machine's
# cores, without tools (the baseline) and under liblog + libmpetime + libumq together, measured in
# the same run: median wall time of the whole mpiexec and its ratio to the baseline, the largest
# and the total resident memory of the ranks (GNU time around each rank), and the sizes of what
# the tools wrote (merged log, libmpetime's files, libumq's report).
# Usage: bench/scale.sh [build dir (default build)] [ranks... (default 64 256)]
# The build's MPI is the one run (MPE_MPI in its CMakeCache.txt). RUNS (default 3) runs per row.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
shift || true
RANKS=("$@")
[ ${#RANKS[@]} -gt 0 ] || RANKS=(64 256)
RUNS=${RUNS:-3}
SWEEPS=3
MPI=$(sed -n 's/^MPE_MPI:STRING=//p' "$BUILD/CMakeCache.txt")
if [ "$MPI" = openmpi ]; then
  MPIEXEC=(mpiexec.openmpi --allow-run-as-root --oversubscribe)
else
  MPIEXEC=(mpiexec.mpich)
fi
TOOLS="$BUILD/lib/liblog.so:$BUILD/lib/libmpetime.so:$BUILD/lib/libumq.so"
PROG="$BUILD/bin/halo2d"
WORK=$(mktemp -d /tmp/mpe-scale.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# run <ranks> <preload or empty>: one run in a fresh directory; prints "wall_s max_rss_kb sum_rss_kb".
run() {
  local n=$1 preload=$2 dir
  dir=$(mktemp -d "$WORK/run.XXXXXX")
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && "${MPIEXEC[@]}" -n "$n" /usr/bin/time -f %M -a -o "$dir/rss" \
     env ${preload:+LD_PRELOAD=$preload} MPE_LOGFILE_PREFIX=halo2d "$PROG" "$SWEEPS" >"$dir/out" 2>"$dir/err") || {
    echo "scale: $n ranks failed; see $dir/err:" >&2
    tail -5 "$dir/err" >&2
    trap - EXIT
    exit 1
  }
  end=$(date +%s.%N)
  grep -q "ranks=$n " "$dir/out" || { echo "scale: halo2d did not finish on $n ranks ($dir)" >&2; exit 1; }
  echo "$(awk "BEGIN {print $end - $start}") $(sort -n "$dir/rss" | tail -1) $(awk '{s += $1} END {print s}' "$dir/rss")"
  echo "$dir" >"$WORK/last"
}

div() { awk "BEGIN {print $1 / $2}"; }
size_of() { find "$1" -maxdepth 1 -name "$2" -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }

echo "halo2d, $SWEEPS sweeps, $MPI, $(nproc) cores, $RUNS runs per row (medians); tools = liblog + libmpetime + libumq"
printf '%6s %-6s %9s %7s %13s %13s %12s %14s %11s\n' ranks tools wall_s ratio max_rss_MiB sum_rss_MiB log_bytes mpetime_bytes umq_bytes
for n in "${RANKS[@]}"; do
  base_wall=""
  for preload in "" "$TOOLS"; do
    : >"$WORK/rows"
    for _ in $(seq "$RUNS"); do run "$n" "$preload" >>"$WORK/rows"; done
    wall=$(cut -d' ' -f1 "$WORK/rows" | median)
    max_rss=$(cut -d' ' -f2 "$WORK/rows" | median)
    sum_rss=$(cut -d' ' -f3 "$WORK/rows" | median)
    dir=$(cat "$WORK/last")
    if [ -z "$preload" ]; then
      base_wall=$wall
      printf '%6d %-6s %9.2f %7s %13.1f %13.1f %12s %14s %11s\n' "$n" none "$wall" 1.00 \
        "$(div "$max_rss" 1024)" "$(div "$sum_rss" 1024)" - - -
    else
      printf '%6d %-6s %9.2f %7.2f %13.1f %13.1f %12d %14d %11d\n' "$n" all3 "$wall" \
        "$(div "$wall" "$base_wall")" "$(div "$max_rss" 1024)" "$(div "$sum_rss" 1024)" "$(size_of "$dir" '*.mpelog')" \
        "$(size_of "$dir" '*.mpetime.*')" "$(size_of "$dir" '*.umq.*')"
    fi
    rm -rf "$WORK"/run.*
  done
done
