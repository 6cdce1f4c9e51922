#!/bin/sh
# runs_in_a_row.sh N command...: runs the command N times, each in a fresh process, and fails at
# the first run that does not exit 0 (its output shown). No run is retried.
runs=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
i=1
while [ "$i" -le "$runs" ]; do
  if ! "$@" >"$out" 2>&1; then
    cat "$out"
    echo "runs_in_a_row.sh: run $i of $runs failed"
    exit 1
  fi
  i=$((i + 1))
done
echo "runs_in_a_row.sh: $runs runs in a row exited 0"
