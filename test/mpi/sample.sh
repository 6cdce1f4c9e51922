#!/bin/sh
# Runs a sample over MPI ranks (the arguments: mpirun ... sample --mpi) and passes when the job
# exits 0 and the root printed "result: OK" (its check against the C++ reference).
out=$(timeout 100 "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { echo "sample.sh: the job exited with $rc"; exit 1; }
printf '%s\n' "$out" | grep -q '^result: OK' || { echo "sample.sh: no 'result: OK' from the root"; exit 1; }
