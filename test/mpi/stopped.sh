#!/bin/sh
# stopped.sh BOUND PATTERNS mpirun ... --stop-on-rank R ROOT_S OTHERS_S: a rank stops (SIGSTOP) while
# the others wait for it. The job must end non-zero (ends.sh, within 60 s), its output holding
# every one of PATTERNS (grep patterns, separated by '|'), and every rank that says how long its run took ("rank N: ended after S s") must have
# ended within BOUND seconds of the run's start (its timeout plus a few seconds).
bound=$1
pattern=$2
shift 2
out=$("$(dirname "$0")/ends.sh" 60 "" "$@")
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || exit 1
old_ifs=$IFS
IFS='|'
for p in $pattern; do
  printf '%s\n' "$out" | grep -q -- "$p" || { echo "stopped.sh: no '$p' in the output"; exit 1; }
done
IFS=$old_ifs
ended=$(printf '%s\n' "$out" | sed -n 's/.*rank [0-9]*: ended after \([0-9.]*\) s.*/\1/p')
[ -n "$ended" ] || { echo "stopped.sh: no rank said when it ended"; exit 1; }
for s in $ended; do
  if awk -v s="$s" -v b="$bound" 'BEGIN { exit !(s > b) }'; then
    echo "stopped.sh: a rank ended after $s s, more than $bound s"
    exit 1
  fi
done
echo "stopped.sh: every rank that reported ended within $bound s"
