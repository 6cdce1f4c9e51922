#!/bin/sh
# refused.sh mpirun ... sample --mpi: a sample whose tree cannot be split over ranks must end the
# job with a non-zero exit (no hang) and the root's error naming why ("cannot split this tree").
out=$(timeout 100 "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -ne 124 ] || { echo "refused.sh: the job was still running after 100 s"; exit 1; }
[ "$rc" -ne 0 ] || { echo "refused.sh: the job exited 0"; exit 1; }
printf '%s\n' "$out" | grep -q 'cannot split this tree over ranks' || { echo "refused.sh: no error naming why"; exit 1; }
