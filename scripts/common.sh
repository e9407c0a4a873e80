# Shared by scripts/demo, scripts/test and scripts/bench: packages, build directories, MPI names.
# Sourced, not run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_MPICH=${MPE_BUILD_DIR:-$ROOT/build}
BUILD_OMPI=${MPE_BUILD_DIR_OMPI:-$ROOT/build-ompi}
# The tool libraries built with ASan and UBSan, for the memory-checked runs (tests/memcheck).
BUILD_ASAN=${MPE_BUILD_DIR_ASAN:-$ROOT/build-asan}
BUILD_ASAN_OMPI=${MPE_BUILD_DIR_ASAN_OMPI:-$ROOT/build-asan-ompi}

# What the suite is built with, from Debian's packages: all scripts/demo installs.
BUILD_PACKAGES=(build-essential cmake ninja-build pkg-config python3 gfortran binutils
                mpich libmpich-dev libcli11-dev
                libzstd-dev libunwind-dev libdw-dev nlohmann-json3-dev libotf2-trace-dev
                qt6-base-dev
                libzmq3-dev)  # the live view's transport (ZeroMQ, CURVE through libsodium)
# What the tests and the benchmarks need besides (scripts/test): the second MPI, GoogleTest and
# Google Benchmark, OTF2's tools and Python reader, a virtual display, clang's formatter and
# fuzzer, another viewer of OTF2, a real MPI program to test the tools on (tests/realprogs), and
# Python programs: mpi4py (Debian's, for Open MPI) with numpy, and the 3.11 headers whose layout the
# frame reader assumes (tests/python).
TEST_PACKAGES=(openmpi-bin libopenmpi-dev libgtest-dev libgmock-dev libbenchmark-dev otf2-tools python3-otf2
               xvfb xauth clang-format clang libclang-rt-14-dev vite hpcc
               python3-mpi4py python3-numpy python3.11-dev
               ccache  # the MPI-independent objects compiled once for both MPIs (configure_dir)
               git  # scripts/check-format lists the sources with git ls-files
               time  # /usr/bin/time: the peak memory of mpe and upshot (tests/waits, tests/viewer)
               python3-six)  # imported by python3-otf2, which does not depend on it (Debian 12)

# Installs the packages that are missing (all of them, and any named); silent when none is.
ensure_packages() { install_missing "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "$@"; }
# What scripts/demo needs: what the suite is built with, and GoogleTest and Google Benchmark (small),
# which configuring the build tree asks for even when only the demo's targets are built.
ensure_build_packages() { install_missing "${BUILD_PACKAGES[@]}" libgtest-dev libgmock-dev libbenchmark-dev "$@"; }

install_missing() {
  local missing=()
  for p in "$@"; do
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
  configure_dir "$dir" "$mpi" "$@"
  build_dir "$dir"
}

# build_targets <build dir> <mpich|openmpi> <target>...: the same directory, configured the same
# way, but only these targets built (scripts/demo; scripts/test builds the rest later).
build_targets() {
  local dir=$1 mpi=$2
  shift 2
  configure_dir "$dir" "$mpi"
  build_dir "$dir" --target "$@"
}

configure_dir() {
  local dir=$1 mpi=$2
  shift 2
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$ROOT" -B "$dir" -G Ninja -DMPE_MPI="$mpi" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          $(compiler_cache_options) "$@" >/dev/null
  fi
}

# The compiler cache, when ccache is installed (scripts/test installs it) and MPE_CCACHE is not 0:
# the MPI-independent parts (the format, the analyses, the command line, OTF2, the live stream)
# compile to the same objects in the MPICH and the Open MPI build, so the second build takes them
# from the cache. The cache lives beside the build directories ($ROOT/.ccache, or MPE_CCACHE_DIR),
# so a clean checkout starts empty and every file is still compiled once per checkout.
# base_dir makes paths under $ROOT relative, so build/ and build-ompi/ hash alike (and so the
# objects' debug info names sources relatively: a sanitizer report says core/generated/...cpp, which
# tests/memcheck allows for); hash_dir off because -g would otherwise put the build directory into
# every hash (a cached object's debug info then names the first build's directory as its
# compilation directory: only debuggers read it).
compiler_cache_options() {
  [ "${MPE_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1 || return 0
  local launcher="env;CCACHE_DIR=${MPE_CCACHE_DIR:-$ROOT/.ccache};CCACHE_BASEDIR=$ROOT;CCACHE_NOHASHDIR=1;ccache"
  echo "-DCMAKE_C_COMPILER_LAUNCHER=$launcher -DCMAKE_CXX_COMPILER_LAUNCHER=$launcher"
}

# Ninja's progress lines are dropped (errors and warnings stay); with MPE_SHOW_PROGRESS=1 one line
# says how far it is at each tenth. pipefail makes the build's status count.
build_dir() {
  local dir=$1
  shift
  cmake --build "$dir" "$@" 2>&1 | awk -v show="${MPE_SHOW_PROGRESS:-0}" -F'[][/]' '
    /^\[[0-9]+\/[0-9]+\]/ {
      tenth = int($2 * 10 / $3)
      if (show == 1 && tenth > shown) { shown = tenth; printf "   built %d of %d files\n", $2, $3; fflush() }
      next
    }
    { print; fflush() }'
}

# configure_and_build_sanitized <build dir> <mpich|openmpi>: the tool libraries with ASan and UBSan
# (MPE_SANITIZE=ON) and only what the memory-checked runs need (target memcheck_programs: no viewer,
# no unit tests, no benchmarks).
configure_and_build_sanitized() {
  local dir=$1 mpi=$2
  if [ ! -f "$dir/build.ninja" ]; then
    # The compiler cache too: the programs run under the sanitized tools are not instrumented, so
    # they are the main build's objects.
    cmake -S "$ROOT" -B "$dir" -G Ninja -DMPE_MPI="$mpi" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DMPE_SANITIZE=ON -DMPE_BUILD_BENCH=OFF $(compiler_cache_options) >/dev/null
  fi
  cmake --build "$dir" --target memcheck_programs 2>&1 | sed -e '/^\[[0-9]*\/[0-9]*\]/d'
}
