#!/bin/sh
# ends.sh LIMIT PATTERN mpirun ...: a job in which one rank fails, dies or hangs must end, every
# rank, with a non-zero exit within LIMIT seconds (timeout's 124: some rank waited forever), its
# output holding PATTERN (a grep pattern; empty: anything).
limit=$1
pattern=$2
shift 2
out=$(timeout "$limit" "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 124 ]; then echo "ends.sh: the job was still running after ${limit}s"; exit 1; fi
if [ "$rc" -eq 0 ]; then echo "ends.sh: the job exited 0"; exit 1; fi
if [ -n "$pattern" ] && ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
  echo "ends.sh: no '$pattern' in the output"; exit 1
fi
echo "ends.sh: the job ended with $rc, as it should"
