#!/bin/sh
# liblog's finalize merge when the nodes do not share the output directory (blind ranks relay
# their chunks to ranks that see the file) against the merge into a shared directory, same
# machine, same two simulated hosts (tests/twohost/launch.sh: needs root and MPICH's Hydra).
# Prints the median MPI_Finalize time on rank 0 over REPS runs of each, their ratio, and the
# largest peak RSS of any rank (GNU time's %M) in each mode.
# Usage: bench/merge_fallback.sh [build dir] [ranks] [events per rank] [reps]
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
np=${2:-8}
events=${3:-1000000}
reps=${4:-5}
bench=$build/bin/bench_log
launch="-launcher ssh -launcher-exec $here/tests/twohost/launch.sh -hosts nodeA,nodeB -ppn $((np / 2))"
[ -x "$bench" ] || { echo "no $bench: build bench_log first" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# run <mode> <rep>: one run; prints "<finalize seconds> <max RSS KiB>".
run() {
  work=$scratch/$1.$2
  root=$scratch/hosts.$1.$2
  mkdir -p "$work" "$root"
  private=
  [ "$1" = fallback ] && private=$work
  (cd "$work" && MPE_TWOHOST_ROOT=$root MPE_TWOHOST_PRIVATE=$private \
     mpiexec.mpich $launch -n "$np" /usr/bin/time -f "maxrss_kib %M" "$bench" merge "$events" \
     >"$work/out" 2>"$work/err")
  grep -q "do not see" "$work/err" && relayed=yes || relayed=no
  [ "$1" = fallback ] && [ $relayed = no ] && { echo "fallback run did not relay" >&2; cat "$work/err" >&2; exit 1; }
  [ "$1" = shared ] && [ $relayed = yes ] && { echo "shared run relayed" >&2; exit 1; }
  secs=$(sed -n 's/.*took \([0-9.]*\) s on rank 0.*/\1/p' "$work/out")
  rss=$(sed -n 's/^maxrss_kib //p' "$work/err" | sort -n | tail -1)
  before=$(sed -n 's/.*peak RSS per rank before finalize \([0-9]*\) KiB.*/\1/p' "$work/out")
  bytes=$(sed -n 's/.*records, \([0-9]*\) bytes.*/\1/p' "$work/err")
  echo "$secs $rss $before $bytes"
  rm -rf "$work" "$root"
}

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

: >"$scratch/shared" && : >"$scratch/fallback"
i=0
while [ $i -lt "$reps" ]; do  # alternate the modes so that load on the machine hits both alike
  run shared $i >>"$scratch/shared"
  run fallback $i >>"$scratch/fallback"
  i=$((i + 1))
done
s=$(cut -d' ' -f1 "$scratch/shared" | median)
f=$(cut -d' ' -f1 "$scratch/fallback" | median)
rs=$(cut -d' ' -f2 "$scratch/shared" | sort -n | tail -1)
rf=$(cut -d' ' -f2 "$scratch/fallback" | sort -n | tail -1)
bs=$(cut -d' ' -f3 "$scratch/shared" | sort -n | tail -1)
bf=$(cut -d' ' -f3 "$scratch/fallback" | sort -n | tail -1)
size=$(cut -d' ' -f4 "$scratch/fallback" | tail -1)
echo "merge at MPI_Finalize, $np ranks x $events events ($size bytes of logfile), 2 simulated hosts, median of $reps runs:"
echo "  shared directory:           $s s   (peak RSS of any rank: whole run $rs KiB, before MPI_Finalize $bs KiB)"
echo "  node-local dirs (relay):    $f s   (peak RSS of any rank: whole run $rf KiB, before MPI_Finalize $bf KiB; $((np / 2)) ranks relay)"
awk -v s="$s" -v f="$f" 'BEGIN {printf "  relay / shared: %.2fx\n", f / s}'
