#!/bin/sh
# die_mid_loop.sh LIMIT mpirun ... sinew_cluster_tests: rank 1 is killed inside a loop while the
# others wait for it in an exchange (--die-mid-loop 1 KB): the job must end non-zero within LIMIT
# seconds, and the root's knowledge base must hold the complete run before it and nothing of the
# killed one (one cluster entry, one cluster run).
limit=$1
shift
kb=$(mktemp -u /tmp/sinew-die-mid-loop-XXXXXX.sqlite)
"$(dirname "$0")/ends.sh" "$limit" "" "$@" --die-mid-loop 1 "$kb" || exit 1
entries=$(sqlite3 "$kb" "select count(*) from entries where tree like 'cluster:%'")
runs=$(sqlite3 "$kb" "select count(*) from runs where tree like 'cluster:%'")
rm -f "$kb" "$kb-wal" "$kb-shm"
echo "die_mid_loop.sh: cluster entries $entries, cluster runs $runs"
[ "$entries" = 1 ] && [ "$runs" = 1 ] || { echo "die_mid_loop.sh: wanted 1 entry and 1 run (the complete loop)"; exit 1; }
