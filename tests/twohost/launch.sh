#!/bin/sh
# Hydra's -launcher-exec for tests that need two hosts on one machine. Hydra calls it as it would
# ssh: [ssh options] <host> <proxy command line, shell-quoted>. The proxy runs in its own UTS and
# mount namespaces: hostname <host>, and each directory listed in MPE_TWOHOST_PRIVATE (':'-separated)
# covered by <MPE_TWOHOST_ROOT>/<host>/<i> (i = its position, from 0), so ranks on different hosts
# see different files there. The network namespace stays shared: the proxy connects back to
# mpiexec over TCP, and the ranks talk to each other as they would between nodes.
set -e
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done  # ssh options (-x)
host="$1"
shift
[ -n "$MPE_TWOHOST_ROOT" ] || { echo "launch.sh: MPE_TWOHOST_ROOT is not set" >&2; exit 2; }
exec unshare --uts --mount --propagation private sh -c '
  set -e
  host="$1"; root="$2"; private="$3"; shift 3
  hostname "$host"
  i=0
  IFS=:
  for dir in $private; do
    mkdir -p "$root/$host/$i"
    mount --bind "$root/$host/$i" "$dir"
    i=$((i + 1))
  done
  unset IFS
  exec sh -c "$*"' sh "$host" "$MPE_TWOHOST_ROOT" "${MPE_TWOHOST_PRIVATE:-}" "$@"
