#!/bin/sh
# Bytes per logged event of one run in each format: our .mpelog, OTF2 (written by liblog at
# finalize, all files of the archive), and Chrome/Perfetto JSON (`mpe convert --to chrome`).
# "Event" is one record of our log (a state, a send, a receive, a collective...): a state is one
# record here and an Enter + Leave pair in OTF2, so all three columns divide by the same count.
#
# Usage: bench/format_sizes.sh [build dir] [mpiexec]
#   e.g. bench/format_sizes.sh build mpiexec.mpich
#        bench/format_sizes.sh build-ompi "mpiexec.openmpi --allow-run-as-root --oversubscribe"
set -eu
BUILD=$(cd "${1:-build}" && pwd)
MPIEXEC=${2:-mpiexec.mpich}
case "$MPIEXEC" in
  *openmpi*) setenv() { echo "-x $1=$2"; } ;;
  *) setenv() { echo "-genv $1 $2"; } ;;
esac
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# label name ranks program arguments...
measure() {
  label=$1 name=$2 ranks=$3
  shift 3
  (cd "$WORK" && $MPIEXEC -n "$ranks" $(setenv LD_PRELOAD "$BUILD/lib/liblog.so") \
    $(setenv MPE_LOG_FORMAT both) $(setenv MPE_LOGFILE_PREFIX "$name") "$BUILD/bin/$@" >/dev/null 2>&1)
  "$BUILD/bin/mpe" convert "$WORK/$name.mpelog" --to chrome "$WORK/$name.json" 2>/dev/null
  records=$("$BUILD/bin/mpe" stat --json "$WORK/$name.mpelog" | sed 's/.*"records":\([0-9]*\).*/\1/')
  mpelog=$(stat -c %s "$WORK/$name.mpelog")
  otf2=$(find "$WORK/$name.otf2" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
  chrome=$(stat -c %s "$WORK/$name.json")
  awk -v n="$label" -v r="$records" -v a="$mpelog" -v b="$otf2" -v c="$chrome" 'BEGIN {
    printf "%-28s %9d %12.1f %12.1f %12.1f\n", n, r, a / r, b / r, c / r }'
}

printf "%-28s %9s %12s %12s %12s\n" "run" "events" "mpelog B/ev" "OTF2 B/ev" "Chrome B/ev"
measure "pingpong 2 ranks 8 B x 10k" pingpong 2 pingpong 8 10000
measure "halo2d 4 ranks 200 steps" halo2d 4 halo2d 200
