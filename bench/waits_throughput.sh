#!/usr/bin/env bash
# `mpe waits` throughput and peak memory on a synthetic log with messages and collectives.
# Usage: bench/waits_throughput.sh [build dir] [records (default 100000000)] [ranks (default 64)] [runs (default 3)]
exec "$(dirname "$0")/analysis_throughput.sh" waits "$@"
