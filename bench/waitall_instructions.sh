#!/usr/bin/env bash
# Instructions liblog (or another tool) adds per MPI_Waitall of 4 requests, called from C and
# from Fortran (mpif.h / use mpi), counted by callgrind. Runs waitall_loop (C) and
# waitall_loop_f (Fortran), one rank, with N1 and N2 rounds and divides the difference by
# N2 - N1, so start-up and finalize cancel out. Prints per round (two MPI_Irecv, two MPI_Isend,
# one MPI_Waitall) and, from callgrind's inclusive cost of the Waitall entry point, per Waitall.
# Usage: bench/waitall_instructions.sh [build dir]   (MPE_BENCH_TOOLS="log" by default)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
n1=20000 n2=60000
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
run() {  # run <preload> <program> <rounds>: callgrind output file of the program's own process
  rm -f "$scratch"/cg.*
  MPE_TMPDIR=$scratch MPE_QUIET=1 valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$scratch/cg.%p" env LD_PRELOAD="$1" "$2" "$3" >/dev/null 2>&1
  for f in "$scratch"/cg.*; do
    grep -q "^cmd: .*waitall_loop" "$f" && { cp "$f" "$scratch/out.$3"; echo "$scratch/out.$3"; }
  done
}
total() { sed -n 's/^\(totals\|summary\): *\([0-9]*\).*/\2/p' "$1" | head -1; }
# Inclusive instructions of the first function named like the entry point (C: MPI_Waitall, or
# PMPI_Waitall where MPI_Waitall is the MPI's own alias; Fortran: mpi_waitall_).
waitall_incl() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    grep -E " (\*|[^ ]*:)(P?MPI_Waitall|mpi_waitall_) " | head -1 | awk '{gsub(",","",$1); print $1}'
}
measure() {  # measure <preload> <program>: "<per round> <per waitall>"
  local a b
  a=$(run "$1" "$2" $n1); b=$(run "$1" "$2" $n2)
  echo $(( ($(total "$b") - $(total "$a")) / (n2 - n1) )) $(( ($(waitall_incl "$b") - $(waitall_incl "$a")) / (n2 - n1) ))
}
for lang in C:waitall_loop Fortran:waitall_loop_f; do
  name=${lang%%:*}; prog=$build/bin/${lang##*:}
  read -r plain_round plain_wait <<<"$(measure "" "$prog")"
  echo "$name without a tool: $plain_round instructions per round, $plain_wait per MPI_Waitall of 4"
  for tool in ${MPE_BENCH_TOOLS:-log}; do
    read -r round wait <<<"$(measure "$build/lib/lib$tool.so" "$prog")"
    echo "$name, lib$tool.so adds $((round - plain_round)) instructions per round, $((wait - plain_wait)) per MPI_Waitall of 4"
  done
done
