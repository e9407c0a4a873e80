#!/usr/bin/env bash
# The live view's figures (issue 24), each against a baseline measured in the same run, and a
# summary table (figure, value, target, command) for the README:
#   1  instructions (callgrind, via instructions_per_call.sh) and ns (bench_live cost, thread CPU
#      time) added per MPI call by liblive, with and without a viewer, beside liblog;
#   2  run time of halo2d under `mpe run --live` with no viewer (a), `mpe top --json` attached (b),
#      that viewer SIGSTOPped from its first frame to the job's end (c), and with no tool (d):
#      medians of alternating rounds (the order rotates each round), ratios b/a and c/a;
#   3  latency from a send's call to its arrow reaching a viewer (bench_live_latency attached to
#      halo2d on 64 ranks, oversubscribed on this machine's cores);
#   4  peak memory per rank (VmHWM) with the viewer stopped, minus that with no tool (bench_live
#      memory), beside the core alone, liblive with no relay, no viewer and a running viewer; the
#      relay's own peak;
#   5  relay throughput (bench_live_relay: 1, 4 and 16 publishers of ~1 KiB frames, one viewer).
# Usage: bench/live.sh [build dir (default build)] [figure numbers (default 1 2 3 4 5)]
# Needs the build's targets live log mpe halo2d iprobe_loop bench_live bench_live_latency
# bench_live_relay (and mpenull for figure 4's core-only row), valgrind (figure 1) and
# /usr/bin/time (figure 2). Settings: RUNS (figure 2 rounds, default 21), RUN_TIMEOUT (a figure 2
# run's bound in s, default 30; one over it counts at the bound), HALO_RANKS/HALO_ITERS
# (2, 60000), LAT_RANKS/LAT_ITERS/LAT_RUNS (64, 100, 3), MEM_RANKS/MEM_SECONDS/MEM_ROUNDS (2, 6, 2),
# RELAY_SECONDS/RELAY_RUNS (3, 3). MPICH builds only (mpiexec.mpich). About 5 minutes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
shift || true
FIGURES=("$@")
[ ${#FIGURES[@]} -gt 0 ] || FIGURES=(1 2 3 4 5)
RUNS=${RUNS:-21} RUN_TIMEOUT=${RUN_TIMEOUT:-30}
HALO_RANKS=${HALO_RANKS:-2} HALO_ITERS=${HALO_ITERS:-60000}
LAT_RANKS=${LAT_RANKS:-64} LAT_ITERS=${LAT_ITERS:-100} LAT_RUNS=${LAT_RUNS:-3}
MEM_RANKS=${MEM_RANKS:-2} MEM_SECONDS=${MEM_SECONDS:-6} MEM_ROUNDS=${MEM_ROUNDS:-2}
RELAY_SECONDS=${RELAY_SECONDS:-3} RELAY_RUNS=${RELAY_RUNS:-3}
MPE=$BUILD/bin/mpe
HALO=$BUILD/bin/halo2d
PROBE=$BUILD/bin/bench_live
for f in "$MPE" "$HALO" "$PROBE" "$BUILD/bin/bench_live_latency" "$BUILD/bin/bench_live_relay" "$BUILD/lib/liblive.so"; do
  [ -x "$f" ] || [ -f "$f" ] || {
    echo "live.sh: $f is missing; build it: cmake --build $BUILD --target live log mpenull mpe halo2d" \
      "iprobe_loop bench_live bench_live_latency bench_live_relay" >&2
    exit 1
  }
done
WORK=$(mktemp -d /tmp/mpe-live-bench.XXXXXX)
VIEWERS=()  # pids of the viewers this script started
cleanup() {
  for pid in "${VIEWERS[@]}"; do
    kill -CONT "$pid" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
export MPE_LOGFILE_PREFIX=halo2d  # the .live file's name, whatever wraps the program
SUMMARY=$WORK/summary
: >"$SUMMARY"
row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$SUMMARY"; }

median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
calc() { awk "BEGIN {printf \"$1\", $2}"; }
field() { sed -n "s/.*[ :]$1=\([-0-9.]*\).*/\1/p" | tail -1; }  # field NAME < text: NAME=value

# start_viewer <dir> <refresh s>: `mpe top --json` on <dir>/halo2d.live (it waits for the file);
# sets VIEWER to its pid.
start_viewer() {
  "$MPE" top "$1/halo2d.live" --json --refresh "$2" --wait 60 >"$1/top.out" 2>"$1/top.err" &
  VIEWER=$!
  VIEWERS+=("$VIEWER")
}
# until_first_frame <dir>: waits (up to 60 s) until the viewer has shown a frame from a rank.
until_first_frame() {
  for _ in $(seq 3000); do
    grep -q '"ranks_seen":[1-9]' "$1/top.out" 2>/dev/null && return 0
    sleep 0.02
  done
  echo "live.sh: the viewer in $1 saw no frame within 60 s" >&2
  return 1
}
# end_viewer <pid>: lets a viewer that saw the job end exit (up to 10 s), else stops it.
end_viewer() {
  kill -CONT "$1" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

echo "mpe-tools live view figures: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"

figure1() {
  echo
  echo "== 1. Added per MPI call =="
  local out
  out=$(MPE_BENCH_TOOLS="live log" "$ROOT/bench/instructions_per_call.sh" "$BUILD")
  echo "$out"
  local live_i log_i
  live_i=$(echo "$out" | sed -n 's/^liblive.so adds \([-0-9]*\).*/\1/p')
  log_i=$(echo "$out" | sed -n 's/^liblog.so adds \([-0-9]*\).*/\1/p')
  row "instructions added per MPI_Iprobe, liblive (no viewer)" "$live_i" "<= liblog's ($log_i here)" \
    "MPE_BENCH_TOOLS=\"live log\" bench/instructions_per_call.sh"
  row "instructions added per MPI_Iprobe, liblog" "$log_i" "(comparison)" "same"
  # ns of thread CPU time: liblive with no viewer, with `mpe top` attached, and liblog.
  local dir ns
  for what in live-no-viewer live-viewer log; do
    dir=$(mktemp -d "$WORK/cost.XXXXXX")
    if [ "$what" = live-viewer ]; then
      "$MPE" top "$dir/bench_live.live" --json --wait 60 >"$dir/top.out" 2>&1 &
      VIEWER=$!
      VIEWERS+=("$VIEWER")
    fi
    local tool=--live
    [ "$what" = log ] && tool=--log
    out=$(cd "$dir" && MPE_LOGFILE_PREFIX=bench_live "$MPE" run "$tool" -- mpiexec.mpich -n 1 "$PROBE" cost 31 2>/dev/null)
    local saw=""
    if [ "$what" = live-viewer ]; then
      end_viewer "$VIEWER"
      grep -q '"ranks_seen":1' "$dir/top.out" || saw=" (the viewer saw no frame: this row is not with a viewer)"
    fi
    echo "$what: $(echo "$out" | head -1)$saw"
    ns=$(echo "$out" | field iprobe_added_ns)
    row "ns added per MPI_Iprobe, $what" "$ns" "(clock reads $(echo "$out" | field clock_ns) ns)" \
      "mpe run ${tool} -- mpiexec.mpich -n 1 bench_live cost 31"
    row "ns added per message to self (Isend+Irecv+Waitall), $what" "$(echo "$out" | field message_added_ns)" "-" "same"
    rm -rf "$dir"
  done
}

# run_halo <a|b|c|d> <dir>: one halo2d run; writes "<whole command s> <job s>" to <dir>/result
# (job: the slowest rank's elapsed time, from GNU time around each rank).
run_halo() {
  local config=$1 dir=$2 start end job_pid
  local job=(mpiexec.mpich -n "$HALO_RANKS" /usr/bin/time -f %e -a -o "$dir/ranks" "$HALO" "$HALO_ITERS")
  [ "$config" = d ] || job=("$MPE" run --live -- "${job[@]}")
  if [ "$config" = b ]; then start_viewer "$dir" 1; fi
  if [ "$config" = c ]; then start_viewer "$dir" 0.1; fi
  start=$(date +%s.%N)
  (cd "$dir" && exec timeout -k 10 "$RUN_TIMEOUT" "${job[@]}" >"$dir/out" 2>"$dir/err") &
  job_pid=$!
  if [ "$config" = c ]; then
    until_first_frame "$dir" && kill -STOP "$VIEWER"
  fi
  local rc=0
  wait "$job_pid" || rc=$?
  end=$(date +%s.%N)
  if [ "$config" = b ] || [ "$config" = c ]; then end_viewer "$VIEWER"; fi
  local wall
  wall=$(calc %.3f "$end - $start")
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    # Over the bound (the machine is shared): counted at the bound, which keeps the median honest.
    echo "live.sh: halo2d ($config) ran over $RUN_TIMEOUT s and was stopped; counted as $wall s" >&2
    echo "$wall $wall" >"$dir/result"
    echo "$config" >>"$WORK/timeouts"
    return 0
  fi
  [ "$rc" = 0 ] || { echo "live.sh: halo2d ($config) failed; see $dir/err" >&2; tail -5 "$dir/err" >&2; exit 1; }
  grep -q "ranks=$HALO_RANKS " "$dir/out" || { echo "live.sh: halo2d ($config) did not finish ($dir)" >&2; exit 1; }
  echo "$wall $(sort -g "$dir/ranks" | tail -1)" >"$dir/result"
}

figure2() {
  echo
  echo "== 2. halo2d run time: -n $HALO_RANKS halo2d $HALO_ITERS, $RUNS rounds, order rotated each round =="
  local configs=(a b c d) r i c dir
  for c in a b c d; do : >"$WORK/halo.$c"; done
  : >"$WORK/ratio.b" && : >"$WORK/ratio.c" && : >"$WORK/timeouts"
  for r in $(seq 0 $((RUNS - 1))); do
    local -A jobt=()
    for i in 0 1 2 3; do
      c=${configs[$(((r + i) % 4))]}
      dir=$(mktemp -d "$WORK/halo.XXXXXX")
      run_halo "$c" "$dir"
      cat "$dir/result" >>"$WORK/halo.$c"
      jobt[$c]=$(cut -d' ' -f2 "$dir/result")
      rm -rf "$dir"
    done
    calc %.4f "${jobt[b]} / ${jobt[a]}" >>"$WORK/ratio.b" && echo >>"$WORK/ratio.b"
    calc %.4f "${jobt[c]} / ${jobt[a]}" >>"$WORK/ratio.c" && echo >>"$WORK/ratio.c"
    echo "round $((r + 1)): job s a=${jobt[a]} b=${jobt[b]} c=${jobt[c]} d=${jobt[d]}"
  done
  local -A names=([a]="--live, no viewer" [b]="--live, viewer attached" [c]="--live, viewer SIGSTOPped" [d]="no tool")
  printf '%-28s %12s %12s %10s %10s\n' configuration job_median_s job_min_s wall_med_s ratio_to_a
  local ja wa
  ja=$(cut -d' ' -f2 "$WORK/halo.a" | median)
  wa=$(cut -d' ' -f1 "$WORK/halo.a" | median)
  for c in a b c d; do
    local jm jmin wm
    jm=$(cut -d' ' -f2 "$WORK/halo.$c" | median)
    jmin=$(cut -d' ' -f2 "$WORK/halo.$c" | sort -g | head -1)
    wm=$(cut -d' ' -f1 "$WORK/halo.$c" | median)
    printf '%-28s %12s %12s %10s %10s\n' "$c: ${names[$c]}" "$jm" "$jmin" "$wm" "$(calc %.3f "$jm / $ja")"
  done
  local rb rc mina minb minc
  rb=$(median <"$WORK/ratio.b")
  rc=$(median <"$WORK/ratio.c")
  mina=$(cut -d' ' -f2 "$WORK/halo.a" | sort -g | head -1)
  minb=$(cut -d' ' -f2 "$WORK/halo.b" | sort -g | head -1)
  minc=$(cut -d' ' -f2 "$WORK/halo.c" | sort -g | head -1)
  echo "median of the per-round ratios (job time): b/a $rb, c/a $rc; ratios of the fastest runs: b/a" \
    "$(calc %.3f "$minb / $mina"), c/a $(calc %.3f "$minc / $mina"); whole command (mpe run and its relay): b/a" \
    "$(calc %.3f "$(cut -d' ' -f1 "$WORK/halo.b" | median) / $wa"), c/a $(calc %.3f "$(cut -d' ' -f1 "$WORK/halo.c" | median) / $wa")"
  local over=""
  [ -s "$WORK/timeouts" ] && over=" ($(wc -l <"$WORK/timeouts") runs over ${RUN_TIMEOUT} s: $(sort "$WORK/timeouts" | uniq -c | tr -s ' \n' ' '))"
  [ -n "$over" ] && echo "runs stopped at the bound:$over"
  local cmd="mpe run --live -- mpiexec.mpich -n $HALO_RANKS halo2d $HALO_ITERS"
  row "halo2d job time, viewer attached / no viewer (b/a)" "$rb" "within 2% (<= 1.02)" "$cmd; mpe top --json"
  row "  the same, ratio of the fastest runs" "$(calc %.3f "$minb / $mina")" "within 2% (<= 1.02)" "same"
  row "halo2d job time, viewer stopped / no viewer (c/a)" "$rc" "within 2% (<= 1.02)" "$cmd; mpe top, SIGSTOP"
  row "  the same, ratio of the fastest runs" "$(calc %.3f "$minc / $mina")" "within 2% (<= 1.02)" "same"
  row "halo2d job time, --live no viewer / no tool (a/d)" "$(calc %.3f "$ja / $(cut -d' ' -f2 "$WORK/halo.d" | median)")" "-" \
    "$cmd vs mpiexec.mpich -n $HALO_RANKS halo2d $HALO_ITERS$over"
}

figure3() {
  echo
  echo "== 3. Latency from a send's call to its arrow at a viewer: $LAT_RANKS ranks, halo2d $LAT_ITERS, $LAT_RUNS runs =="
  local i dir out
  : >"$WORK/lat.median" && : >"$WORK/lat.p90"
  for i in $(seq "$LAT_RUNS"); do
    dir=$(mktemp -d "$WORK/lat.XXXXXX")
    "$BUILD/bin/bench_live_latency" "$dir/halo2d.live" 300 >"$dir/lat.out" 2>&1 &
    local viewer=$!
    VIEWERS+=("$viewer")
    (cd "$dir" && "$MPE" run --live -- mpiexec.mpich -n "$LAT_RANKS" "$HALO" "$LAT_ITERS" >"$dir/out" 2>"$dir/err") ||
      { echo "live.sh: halo2d on $LAT_RANKS ranks failed; see $dir/err" >&2; exit 1; }
    wait "$viewer" || true
    out=$(cat "$dir/lat.out")
    echo "run $i: $(echo "$out" | head -1)"
    echo "$out" | field median_ms >>"$WORK/lat.median"
    echo "$out" | field p90_ms >>"$WORK/lat.p90"
    rm -rf "$dir"
  done
  local m p
  m=$(median <"$WORK/lat.median")
  p=$(median <"$WORK/lat.p90")
  echo "median over runs: median $m ms, p90 $p ms"
  row "send to arrow latency at $LAT_RANKS ranks, median ms (p90 $p)" "$m" "<= 250 ms" \
    "mpe run --live -- mpiexec.mpich -n $LAT_RANKS halo2d $LAT_ITERS; bench_live_latency halo2d.live"
}

# relay_peak <dir> <out file>: while <dir>/halo2d.live exists (or has yet to), records the relay's
# VmHWM (kB) from /proc, the last value read being its peak.
relay_peak() {
  local pid=""
  for _ in $(seq 3000); do
    [ -f "$1/halo2d.live" ] && pid=$(sed -n 's/.*"relay_pid": *\([0-9]*\).*/\1/p' "$1/halo2d.live") && [ -n "$pid" ] && break
    sleep 0.02
  done
  [ -n "$pid" ] || return 0
  while [ -f "$1/halo2d.live" ]; do
    sed -n 's/^VmHWM:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null >"$2.tmp" && [ -s "$2.tmp" ] && mv "$2.tmp" "$2"
    sleep 0.2
  done
}

figure4() {
  echo
  echo "== 4. Peak memory per rank: bench_live memory $MEM_SECONDS s on $MEM_RANKS ranks, $MEM_ROUNDS rounds =="
  # none: no tool; core: the interposition core with a do-nothing tool (libmpenull), what every
  # tool of the suite carries; loaded: liblive preloaded with no relay (it records, publishes nothing);
  # live: --live, no viewer; viewer: --live, `mpe top` attached; stopped: that viewer SIGSTOPped
  # from its first frame on.
  local configs=(none core loaded live viewer stopped) r c dir out
  [ -f "$BUILD/lib/libmpenull.so" ] || configs=(none loaded live viewer stopped)
  for c in "${configs[@]}"; do : >"$WORK/mem.$c" && : >"$WORK/anon.$c"; done
  : >"$WORK/mem.relay"
  for r in $(seq "$MEM_ROUNDS"); do
    for c in "${configs[@]}"; do
      dir=$(mktemp -d "$WORK/mem.XXXXXX")
      local job=(mpiexec.mpich -n "$MEM_RANKS" "$PROBE" memory "$MEM_SECONDS")
      case $c in
        core) job=(mpiexec.mpich -n "$MEM_RANKS" -genv LD_PRELOAD "$BUILD/lib/libmpenull.so" "$PROBE" memory "$MEM_SECONDS") ;;
        loaded) job=(mpiexec.mpich -n "$MEM_RANKS" -genv LD_PRELOAD "$BUILD/lib/liblive.so" "$PROBE" memory "$MEM_SECONDS") ;;
        live | viewer | stopped) job=("$MPE" run --live -- "${job[@]}") ;;
      esac
      if [ "$c" = viewer ] || [ "$c" = stopped ]; then start_viewer "$dir" 0.1; fi
      (cd "$dir" && exec "${job[@]}" >"$dir/out" 2>"$dir/err") &
      local job_pid=$! watcher=""
      if [ "$c" = stopped ]; then
        relay_peak "$dir" "$dir/relay" &
        watcher=$!
        until_first_frame "$dir" && kill -STOP "$VIEWER"
      fi
      wait "$job_pid" || { echo "live.sh: bench_live memory ($c) failed; see $dir/err" >&2; exit 1; }
      if [ "$c" = viewer ] || [ "$c" = stopped ]; then end_viewer "$VIEWER"; fi
      if [ "$c" = stopped ]; then
        wait "$watcher" || true
        if [ -s "$dir/relay" ]; then cat "$dir/relay" >>"$WORK/mem.relay"; fi
      fi
      out=$(grep "bench_live memory" "$dir/out")
      echo "$c: $out"
      echo "$out" | sed 's/.*vmhwm_kib=\([0-9,]*\).*/\1/' | tr ',' '\n' >>"$WORK/mem.$c"
      echo "$out" | sed 's/.*rssanon_kib=\([0-9,]*\).*/\1/' | tr ',' '\n' >>"$WORK/anon.$c"
      rm -rf "$dir"
    done
  done
  local -A med=() anon=()
  for c in "${configs[@]}"; do
    med[$c]=$(median <"$WORK/mem.$c")
    anon[$c]=$(median <"$WORK/anon.$c")
  done
  local none=${med[none]}
  [ -n "${med[core]:-}" ] && echo "median VmHWM per rank (KiB): the core with a do-nothing tool ${med[core]} (+$((med[core] - none)))"
  echo "median VmHWM per rank (KiB): no tool $none; liblive loaded, no relay ${med[loaded]} (+$((med[loaded] - none)));" \
    "--live, no viewer ${med[live]} (+$((med[live] - none))); viewer attached ${med[viewer]} (+$((med[viewer] - none)));" \
    "viewer stopped ${med[stopped]} (+$((med[stopped] - none))); the relay's own peak with the viewer stopped:" \
    "$(median <"$WORK/mem.relay") KiB"
  echo "of which the ranks' own anonymous memory (RssAnon at the end, KiB): no tool ${anon[none]}; loaded" \
    "+$((anon[loaded] - anon[none])); no viewer +$((anon[live] - anon[none])); viewer attached" \
    "+$((anon[viewer] - anon[none])); viewer stopped +$((anon[stopped] - anon[none])) (the rest of VmHWM is the" \
    "libraries' pages, shared by the ranks of a node)"
  local cmd="mpe run --live -- mpiexec.mpich -n $MEM_RANKS bench_live memory $MEM_SECONDS"
  row "peak memory added per rank, viewer stopped (MiB)" "$(calc %.2f "(${med[stopped]} - $none) / 1024")" "<= 8 MiB" \
    "$cmd; mpe top, SIGSTOP"
  row "  of it anonymous (RssAnon, not shared libraries) (MiB)" "$(calc %.2f "(${anon[stopped]} - ${anon[none]}) / 1024")" "-" \
    "same"
  if [ -n "${med[core]:-}" ]; then
    row "  of it over the core with a do-nothing tool (MiB)" "$(calc %.2f "(${med[stopped]} - ${med[core]}) / 1024")" "-" \
      "same, vs mpiexec.mpich -genv LD_PRELOAD libmpenull.so ..."
  fi
  row "peak memory added per rank, viewer attached (MiB)" "$(calc %.2f "(${med[viewer]} - $none) / 1024")" "<= 8 MiB" \
    "$cmd; mpe top"
  row "peak memory added per rank, no viewer (MiB)" "$(calc %.2f "(${med[live]} - $none) / 1024")" "<= 8 MiB" "$cmd"
  row "peak memory added per rank, liblive loaded, no relay (MiB)" "$(calc %.2f "(${med[loaded]} - $none) / 1024")" "-" \
    "mpiexec.mpich -genv LD_PRELOAD liblive.so ..."
  row "relay's peak memory, viewer stopped (MiB)" "$(calc %.1f "$(median <"$WORK/mem.relay") / 1024")" "bounded" \
    "$cmd; mpe top, SIGSTOP"
}

figure5() {
  echo
  echo "== 5. Relay throughput: ~1 KiB frames, one viewer, $RELAY_SECONDS s each, $RELAY_RUNS rounds =="
  local p r out
  for p in 1 4 16; do : >"$WORK/relay.$p" && : >"$WORK/relay_viewer.$p"; done
  for r in $(seq "$RELAY_RUNS"); do
    for p in 1 4 16; do
      out=$("$BUILD/bin/bench_live_relay" "$p" "$RELAY_SECONDS" 1024)
      echo "round $r: $(echo "$out" | head -1)"
      echo "$out" | field forwarded_per_s >>"$WORK/relay.$p"
      echo "$out" | field viewer_per_s >>"$WORK/relay_viewer.$p"
    done
  done
  for p in 1 4 16; do
    row "relay messages/s forwarded, $p publisher(s) (one viewer got $(median <"$WORK/relay_viewer.$p")/s)" \
      "$(median <"$WORK/relay.$p")" "(measured)" "bench_live_relay $p $RELAY_SECONDS 1024"
  done
}

for f in "${FIGURES[@]}"; do "figure$f"; done

echo
echo "== Summary (medians; same-run baselines; machine: $(nproc) cores, shared) =="
awk -F'\t' '{printf "%-66s %10s  %-26s %s\n", $1, $2, $3, $4}' "$SUMMARY"
