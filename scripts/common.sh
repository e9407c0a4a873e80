# Shared by scripts/demo, scripts/test and scripts/bench: packages, build directories, MPI names.
# Sourced, not run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_MPICH=${MPE_BUILD_DIR:-$ROOT/build}
BUILD_OMPI=${MPE_BUILD_DIR_OMPI:-$ROOT/build-ompi}
# The tool libraries built with ASan and UBSan, for the memory-checked runs (tests/memcheck).
BUILD_ASAN=${MPE_BUILD_DIR_ASAN:-$ROOT/build-asan}
BUILD_ASAN_OMPI=${MPE_BUILD_DIR_ASAN_OMPI:-$ROOT/build-asan-ompi}

# Everything the project builds with, from Debian's packages.
PACKAGES=(build-essential cmake ninja-build pkg-config python3 gfortran binutils
          mpich libmpich-dev openmpi-bin libopenmpi-dev
          libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
          libzstd-dev libunwind-dev libdw-dev nlohmann-json3-dev libotf2-trace-dev otf2-tools python3-otf2
          qt6-base-dev xvfb xauth clang-format clang libclang-rt-14-dev vite
          libzmq3-dev  # the live view's transport (ZeroMQ, CURVE through libsodium)
          hpcc)  # a real MPI program to test the tools on (tests/realprogs)

# Installs the packages that are missing; silent when none is.
ensure_packages() {
  local missing=()
  for p in "${PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# configure_and_build <build dir> <mpich|openmpi> [cmake options...]: fails when the build fails.
# The options apply when the directory is first configured.
configure_and_build() {
  local dir=$1 mpi=$2
  shift 2
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$ROOT" -B "$dir" -G Ninja -DMPE_MPI="$mpi" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  fi
  # Progress lines are dropped; errors and warnings stay. pipefail makes the build's status count.
  cmake --build "$dir" 2>&1 | sed -e '/^\[[0-9]*\/[0-9]*\]/d'
}

# configure_and_build_sanitized <build dir> <mpich|openmpi>: the tool libraries with ASan and UBSan
# (MPE_SANITIZE=ON) and only what the memory-checked runs need (target memcheck_programs: no viewer,
# no unit tests, no benchmarks).
configure_and_build_sanitized() {
  local dir=$1 mpi=$2
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$ROOT" -B "$dir" -G Ninja -DMPE_MPI="$mpi" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DMPE_SANITIZE=ON -DMPE_BUILD_BENCH=OFF >/dev/null
  fi
  cmake --build "$dir" --target memcheck_programs 2>&1 | sed -e '/^\[[0-9]*\/[0-9]*\]/d'
}
