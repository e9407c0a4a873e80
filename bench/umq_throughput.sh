#!/usr/bin/env bash
# `mpe umq` (the unexpected queue rebuilt from a log) throughput and peak memory on a synthetic
# log, with `mpe waits` (the same pass 1 and matching) on the same log in each round as the baseline.
# Usage: bench/umq_throughput.sh [build dir] [records (default 100000000)] [ranks (default 64)] [runs (default 3)]
exec "$(dirname "$0")/analysis_throughput.sh" "umq waits" "$@"
