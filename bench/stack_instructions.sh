#!/usr/bin/env bash
# What libmpestack costs per call: instructions per MPI_Iprobe counted by callgrind (as
# bench/instructions_per_call.sh does: iprobe_loop with N1 and N2 calls, the difference divided by
# N2 - N1), for the do-nothing tool alone (no stack), and with libmpestack and 0, 1, 2 and 4
# foreign do-nothing layers (libnull_layer<i>.so, each MPI_Iprobe -> PMPI_Iprobe) below it; then
# ns per call against the MPI library's own PMPI_Iprobe in the same process (bench_stack_iprobe).
# Usage: bench/stack_instructions.sh [build dir]   (needs valgrind; one rank, no launcher)
# MPE_BENCH_LIB_DIR: where libmpenull.so and libmpestack.so are (default <build>/lib).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
lib=${MPE_BENCH_LIB_DIR:-$build/lib}
loop=$build/bin/iprobe_loop
timer=$build/bin/bench_stack_iprobe
null=$lib/libmpenull.so
stack=$lib/libmpestack.so
for f in "$loop" "$null" "$stack" "$build"/bench/libnull_layer{1,2,3,4}.so; do
  [ -e "$f" ] || { echo "stack_instructions.sh: $f is missing" >&2; exit 1; }
done
layers() {  # layers <n>: MPE_STACK's value for n foreign layers (ours on top, by default)
  local out="" i
  for ((i = 1; i <= $1; i++)); do out+="${out:+,}$build/bench/libnull_layer$i.so"; done
  echo "$out"
}
n1=100000 n2=300000
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"  # the tools write their files into the working directory
count() {  # count <preload> <MPE_STACK> <calls>: total instructions of the loop's process in one run
  rm -f "$scratch"/cg.*
  MPE_TMPDIR=$scratch valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$scratch/cg.%p" \
    env LD_PRELOAD="$1" MPE_STACK="$2" "$loop" "$3" >/dev/null 2>&1
  # Only the loop's own process: Open MPI's singleton also forks an orted, which callgrind follows.
  for f in "$scratch"/cg.*; do
    grep -q "^cmd: .*iprobe_loop" "$f" && sed -n 's/^\(totals\|summary\): *\([0-9]*\).*/\2/p' "$f" | head -1
  done
}
per_call() { echo $(( ($(count "$1" "$2" $n2) - $(count "$1" "$2" $n1)) / (n2 - n1) )); }

plain=$(per_call "" "")
echo "MPI_Iprobe without a tool: $plain instructions per call"
alone=$(( $(per_call "$null" "") - plain ))
echo "libmpenull.so alone (no stack) adds $alone instructions per call"
declare -A added
for n in 0 1 2 4; do
  added[$n]=$(( $(per_call "$stack:$null" "$(layers $n)") - plain ))
  if [ "$n" = 0 ]; then
    echo "libmpestack.so + libmpenull.so, no foreign layer, adds ${added[0]} instructions per call" \
         "($(( added[0] - alone )) more than the tool alone)"
  else
    echo "  with $n foreign do-nothing layer(s): adds ${added[$n]} ($(( added[$n] - added[0] )) over no layer)"
  fi
done
echo "added per foreign layer: $(( (added[4] - added[0]) / 4 )) instructions per call (4 layers against none)"

# ns per call, each configuration against no tool in the same process (medians of paired rounds).
[ -x "$timer" ] || exit 0
ns() {  # ns <preload> <MPE_STACK>: the ns added per call
  MPE_TMPDIR=$scratch LD_PRELOAD="$1" MPE_STACK="$2" "$timer" "${MPE_BENCH_ROUNDS:-15}" 2>/dev/null |
    sed -n 's/.*added \([-0-9.]*\) ns per call.*/\1/p'
}
echo "ns added per MPI_Iprobe against the MPI library's own PMPI_Iprobe (same process; medians):"
echo "  libmpenull.so alone: $(ns "$null" "") ns"
for n in 0 1 2 4; do
  echo "  libmpestack.so + libmpenull.so, $n foreign layer(s): $(ns "$stack:$null" "$(layers $n)") ns"
done
