#!/bin/bash
# GPU run 28: after the review mend (6331a55: the discrete queues all polled while the CPU
# computes): head to head at 10M and 50M (21 rounds).
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d28; mkdir -p $R/ab
timeout 220 build/bench/bench_saxpy --out $R/ab --sizes 10M,50M --overlaps 3 --ab 21 --ab-only > $R/ab/saxpy.log 2>&1
tar czf $OUT/d28.tgz -C /tmp d28
