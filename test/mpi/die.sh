#!/bin/sh
# die.sh LIMIT mpirun ...: a job in which one rank dies must end, every rank, with a non-zero
# exit within LIMIT seconds (timeout's 124 means some rank hung in a collective).
limit=$1
shift
timeout "$limit" "$@"
rc=$?
if [ "$rc" -eq 124 ]; then echo "die.sh: the job was still running after ${limit}s"; exit 1; fi
if [ "$rc" -eq 0 ]; then echo "die.sh: the job exited 0 although a rank died"; exit 1; fi
echo "die.sh: the job ended with $rc, as it should"
