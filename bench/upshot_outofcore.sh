#!/usr/bin/env bash
# upshot on a log larger than memory (issue 38): writes an `mpe synth` log of RANKS ranks and
# RECORDS records (kept, and reused when it exists), builds its view index by opening it, then
# prints `upshot --bench --out-of-core`'s figures: the index build (time, peak memory), the
# summary's first frame, and for views zoomed from the whole run down to 4^-9 of it, whether the
# view is drawn from the index or from its chunks, the read and the frame (median of 15). Then it
# checks that `upshot --connect` against `mpiexec -n 2 mpe serve` writes the same PNG as the local
# open, and times both.
#   bench/upshot_outofcore.sh BUILD [RANKS] [RECORDS] [LOG]
# e.g. bench/upshot_outofcore.sh build 4096 1000000000 /tmp/u4096_1g.mpelog   (2 GB log, ~95 s to write)
set -euo pipefail
build=${1:?usage: $0 BUILD [RANKS] [RECORDS] [LOG]}
ranks=${2:-4096}
records=${3:-100000000}
log=${4:-${TMPDIR:-/tmp}/upshot_outofcore_${ranks}_${records}.mpelog}
mpe=$build/bin/mpe
upshot=$build/bin/upshot
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
[ -f "$log" ] || "$mpe" synth --ranks "$ranks" --events "$records" "$log"
rm -f "$log.view"
echo "== the first open: the view index built, then the export (peak memory of the whole process)"
/usr/bin/time -f "first_export_s %e first_export_peak_kib %M" "$upshot" --export "${log%.mpelog}-local.png" "$log" 2>&1 \
  | grep -v QStandardPaths
echo "== upshot --bench --out-of-core (the index exists now)"
"$upshot" --bench --out-of-core "$log" 2>&1 | grep -v QStandardPaths
echo "== upshot --connect against mpiexec -n 2 mpe serve"
listen=${log%.mpelog}.listen
rm -f "$listen"
mpiexec=${MPIEXEC:-mpiexec.mpich}
"$mpiexec" -n 2 "$mpe" serve "$log" --listen-file "$listen" --for 600 2>/dev/null &
server=$!
for _ in $(seq 600); do [ -f "$listen" ] && break; sleep 0.1; done
/usr/bin/time -f "connect_export_s %e connect_export_peak_kib %M" "$upshot" --connect "$listen" \
  --export "${log%.mpelog}-remote.png" 2>&1 | grep -v QStandardPaths
/usr/bin/time -f "local_export_s %e local_export_peak_kib %M" "$upshot" --export "${log%.mpelog}-local.png" "$log" 2>&1 \
  | grep -v QStandardPaths
if cmp -s "${log%.mpelog}-local.png" "${log%.mpelog}-remote.png"; then echo "same_png yes"; else echo "same_png NO"; fi
kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
