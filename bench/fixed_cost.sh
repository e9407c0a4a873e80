#!/usr/bin/env bash
# The tools' fixed cost, at MPI_Init and MPI_Finalize: samples/ring (10 laps: almost nothing but
# start and finish) on N ranks, plain and under `mpe run --time`, `--log`, `--umq` and all three,
# RUNS times interleaved (plain, time, log, umq, all, plain, ...), so that the machine's drift
# falls on every variant alike. Prints each variant's median wall time and the median of its
# ratios to the plain run of the same round. N above the cores (8 on 2 here) is the oversubscribed
# node the tools must not crawl on.
# Usage: bench/fixed_cost.sh [build dir] [ranks] [runs]   (MPICH build; default build 8 7)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
ranks=${2:-8} runs=${3:-7}
ring=$build/bin/ring mpe=$build/bin/mpe
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
variants=(plain time log umq all)
declare -A flags=([plain]="" [time]="--time" [log]="--log" [umq]="--umq" [all]="--time --umq --log")
wall() {  # wall <variant>: seconds for one run
  local start end
  start=$(date +%s%N)
  if [ "$1" = plain ]; then
    mpiexec.mpich -n "$ranks" "$ring" >/dev/null
  else
    # shellcheck disable=SC2086
    "$mpe" run ${flags[$1]} --quiet -- mpiexec.mpich -n "$ranks" "$ring" >/dev/null
  fi
  end=$(date +%s%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.4f", (b - a) / 1e9}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
declare -A times ratios
for ((i = 0; i < runs; i++)); do
  declare -A this
  for v in "${variants[@]}"; do this[$v]=$(wall "$v"); times[$v]+="${this[$v]} "; done
  for v in "${variants[@]}"; do
    ratios[$v]+="$(awk -v a="${this[$v]}" -v b="${this[plain]}" 'BEGIN {printf "%.4f", a / b}') "
  done
done
printf "ring, %d ranks, 10 laps, median of %d interleaved runs (%s)\n" "$ranks" "$runs" "$(nproc) cores"
for v in "${variants[@]}"; do
  printf "%-6s %6.3f s   ratio to plain %5.2fx\n" "$v" "$(tr ' ' '\n' <<<"${times[$v]}" | grep . | median)" \
         "$(tr ' ' '\n' <<<"${ratios[$v]}" | grep . | median)"
done
