#!/bin/sh
# What MPE_LOG_PVARS=umq adds to liblog per receive-family call, against one raw MPI_T read.
# Runs bench_log's "pvar" mode RUNS times alternately with and without MPE_LOG_PVARS=umq (liblog
# cannot switch it within a process); each run measures, in one process, MPI_Iprobe through liblog
# against PMPI_Iprobe (paired medians) and one PMPI_T_pvar_read of the same variable alone. Prints
# the medians over runs: liblog alone, liblog with the variable, the difference, and the read.
# Target (the issue): difference <= read + 10 ns.
# Usage: bench/log_pvars.sh BUILD_DIR [mpich-pvars|openmpi] [RUNS]
set -eu
build=$(cd "$1" && pwd)
mpi=${2:-mpich-pvars}
runs=${3:-7}
case $mpi in
  mpich-pvars)
    prefix=${MPE_MPICH_PVARS_PREFIX:-/var/cache/mpe-tools/mpich-pvars}
    run() { env "$@" LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/mpiexec" -n 1 "$build/bin/bench_log" pvar 21; }
    ;;
  openmpi)
    flags="--oversubscribe"; [ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
    # Ranks on this host inherit mpiexec's environment; an empty -x variable fails to launch.
    run() { env "$@" mpiexec.openmpi $flags -n 1 "$build/bin/bench_log" pvar 21; }
    ;;
  *) echo "usage: $0 BUILD_DIR [mpich-pvars|openmpi] [RUNS]" >&2; exit 2 ;;
esac
out=$(mktemp)
i=0
while [ $i -lt "$runs" ]; do
  (cd /tmp && run -u MPE_LOG_PVARS MPE_QUIET=1) | grep '^bench_log pvar:' | sed 's/^/off /' >>"$out"
  (cd /tmp && run MPE_LOG_PVARS=umq MPE_QUIET=1) | grep '^bench_log pvar:' | sed 's/^/on /' >>"$out"
  i=$((i + 1))
done
python3 - "$out" "$mpi" <<'PY'
import re, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def col(which, key):
    return [float(re.search(key + r"=(\S+)", " ".join(r)).group(1)) for r in rows if r[0] == which]
off, on = col("off", "added"), col("on", "added")
read = col("off", "read") + col("on", "read")
if not off or not on:
    sys.exit("no measurement (does this MPI export the queue variable?)")
diff = statistics.median(on) - statistics.median(off)
r = statistics.median(read)
name = re.search(r"variable=(\S+)", " ".join(rows[0])).group(1)
print("%s (%s): liblog alone adds %.1f ns per MPI_Iprobe, liblog+MPE_LOG_PVARS=umq %.1f ns: the variable adds "
      "%.1f ns; one PMPI_T_pvar_read alone %.1f ns; target <= read + 10 ns: %s (medians of %d runs each)"
      % (sys.argv[2], name, statistics.median(off), statistics.median(on), diff, r,
         "met" if diff <= r + 10 else "NOT met", len(on)))
PY
rm -f "$out"
