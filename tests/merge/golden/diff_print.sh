#!/usr/bin/env bash
# Golden diff test: checks that a checked-in logfile has the format version it stands for, and that
# `mpe print` on it gives exactly the expected text (the unified diff is printed when it does not).
# Usage: diff_print.sh <mpe> <logfile> <expected text> <format version>
set -euo pipefail
mpe=$1 log=$2 expected=$3 version=$4
found=$(od -An -tu2 -j8 -N2 "$log" | tr -d ' ')
[ "$found" = "$version" ] || { echo "$log: format version $found, expected $version" >&2; exit 1; }
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
"$mpe" print "$log" >"$actual"
diff -u --label "$expected" --label "mpe print $log" "$expected" "$actual"
