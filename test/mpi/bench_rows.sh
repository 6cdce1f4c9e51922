#!/bin/sh
# Runs bench_mpi's samples under mpirun (the arguments: mpirun ... bench_mpi ...) and passes when
# the job exits 0, the root printed `distributed` rows, and every sample and distributed row ends
# in ",OK" (the Cluster's output equal to the sample's reference).
out=$(timeout 100 "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { echo "bench_rows.sh: the job exited with $rc"; exit 1; }
printf '%s\n' "$out" | grep -q '^distributed,' || { echo "bench_rows.sh: no distributed rows"; exit 1; }
if printf '%s\n' "$out" | grep -E '^(sample|distributed),' | grep -qv ',OK$'; then
  echo "bench_rows.sh: a row whose check failed"
  exit 1
fi
