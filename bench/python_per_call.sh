#!/usr/bin/env bash
# Instructions per MPI call made from Python (mpi4py's comm.Iprobe()), and what each tool adds to
# it, counted by callgrind through bench/instructions_per_call.sh (N1 and N2 calls, the difference
# divided by N2 - N1, so start-up, import and finalize cancel out). The tools' part includes reading
# the Python frame that names the call's line (docs/python.md).
# Usage: bench/python_per_call.sh [Open MPI build dir]   (Debian's mpi4py is built for Open MPI;
# needs valgrind and python3-mpi4py). MPE_BENCH_TOOLS as for instructions_per_call.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build-ompi}" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cat > "$scratch/loop.py" <<'PY'
import sys
from mpi4py import MPI
comm = MPI.COMM_WORLD
for _ in range(int(sys.argv[1])):
    comm.Iprobe()
PY
# PYTHONHASHSEED: the interpreter's own work per call varies with its hash seed (about 50 instructions).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MPE_QUIET=1 PYTHONHASHSEED=0
MPE_BENCH_LOOP="/usr/bin/python3 $scratch/loop.py" MPE_BENCH_CALLS="20000 60000" \
  MPE_BENCH_NAME="comm.Iprobe() from Python" "$here/instructions_per_call.sh" "$build"
