#!/usr/bin/env bash
# upshot's time from opening a logfile to "model, counter tracks, wait states and rebuilt queue
# all ready", its peak memory, and `mpe stat`'s time on the same log, for two builds measured in
# the same run (in turn, each round, so that a busy machine slows both alike). The log is
# synthetic (`mpe synth`: nested states, halo messages through Irecv/Wait, Allreduce, Barrier).
# upshot's headless export with --waits --umq waits for all four before it draws, and prints the
# time that took ("load N ms"); the picture it then draws is not counted.
# A "before" build can be a folder holding copies of upshot and mpe (and their shared libraries
# in lib/, run with LD_LIBRARY_PATH) or a build directory (bin/upshot, bin/mpe).
# Usage: bench/viewer_open.sh BEFORE AFTER [records (default 10000000)] [ranks (default 64)] [runs (default 3)]
set -euo pipefail
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd)
records=${3:-10000000} ranks=${4:-64} runs=${5:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
bin() { if [ -x "$1/bin/$2" ]; then echo "$1/bin/$2"; else echo "$1/$2"; fi; }
# The command that runs a build's program with that build's libraries, into the array cmd: a
# command (env), not a shell function, so that /usr/bin/time can run it.
command_for() {
  cmd=(env "LD_LIBRARY_PATH=$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" QT_QPA_PLATFORM=offscreen "$(bin "$1" "$2")")
}
log=$scratch/synth.mpelog
# The before build writes the log: a newer build reads the older formats, not the other way round.
command_for "$before" mpe
"${cmd[@]}" synth --ranks "$ranks" --events "$records" "$log" >/dev/null
echo "log: $(stat -c %s "$log") bytes, $records records, $ranks ranks"
declare -A open_ms peak stat_s
for ((i = 1; i <= runs; ++i)); do
  for which in before after; do
    dir=${!which}
    command_for "$dir" upshot
    /usr/bin/time -f "%e %M" -o "$scratch/time" "${cmd[@]}" --export "$scratch/$which.png" --range all --waits --umq "$log" >"$scratch/out" 2>&1 ||
      { cat "$scratch/out" >&2; exit 1; }
    read -r secs kb <"$scratch/time"
    ms=$(sed -n 's/.*; load \([0-9]*\) ms.*/\1/p' "$scratch/out")
    [ -n "$ms" ] || { cat "$scratch/out" >&2; exit 1; }
    open_ms[$which]+="$ms "
    ((kb > ${peak[$which]:-0})) && peak[$which]=$kb
    command_for "$dir" mpe
    /usr/bin/time -f "%e" -o "$scratch/time" "${cmd[@]}" stat "$log" >/dev/null
    stat_s[$which]+="$(cat "$scratch/time") "
    echo "run $i: $which: upshot open $ms ms ($secs s with the picture), $((kb / 1024)) MiB peak; mpe stat $(cat "$scratch/time") s"
  done
done
for which in before after; do
  o=$(tr ' ' '\n' <<<"${open_ms[$which]}" | grep . | median)
  s=$(tr ' ' '\n' <<<"${stat_s[$which]}" | grep . | median)
  declare "o_$which=$o" "s_$which=$s"
  echo "$which: upshot open to all ready $o ms (median of $runs), peak $((peak[$which] / 1024)) MiB; mpe stat $s s (median of $runs)"
done
awk -v a="$o_before" -v b="$o_after" 'BEGIN { printf "upshot open: before / after = %.2fx\n", a / b }'
awk -v a="${peak[before]}" -v b="${peak[after]}" 'BEGIN { printf "upshot peak memory: after / before = %.2f\n", b / a }'
awk -v a="$s_before" -v b="$s_after" 'BEGIN { printf "mpe stat: before / after = %.2fx\n", a / b }'
