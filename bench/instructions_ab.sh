#!/usr/bin/env bash
# Instructions a tool adds per MPI_Iprobe in two builds, measured alternately in the same run
# (callgrind), so that both see the same conditions: liblog's count includes zstd's work on the
# run's timestamps, which moves with the machine's load by more than a change to a hook does.
# Usage: bench/instructions_ab.sh <build A> <build B> [tool (default log)] [rounds (default 4)]
# e.g. a build of the previous commit: git worktree add /tmp/prev HEAD~1 && cmake -S /tmp/prev
# -B /tmp/prev/build -G Ninja && cmake --build /tmp/prev/build --target log iprobe_loop
set -euo pipefail
a=$(cd "$1" && pwd) b=$(cd "$2" && pwd) tool=${3:-log} rounds=${4:-4}
loop=$b/bin/iprobe_loop
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
count() {  # count <preload> <calls>: total instructions of one run
  MPE_TMPDIR=$scratch valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$scratch/cg.%p" \
    env LD_PRELOAD="$1" "$loop" "$2" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1
}
per_call() { echo $(( ($(count "$1" 300000) - $(count "$1" 100000)) / 200000 )); }
plain=$(per_call "")
for ((i = 1; i <= rounds; ++i)); do
  echo "round $i: lib$tool.so adds $(( $(per_call "$a/lib/lib$tool.so") - plain )) (A: $a), $(( $(per_call "$b/lib/lib$tool.so") - plain )) (B: $b) instructions per call"
done
