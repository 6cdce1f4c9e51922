#!/bin/bash
# GPU run 16: analysis cache + lazy error contexts; phases and head to head.
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d16; mkdir -p $R/ab
nproc > $R/nproc.txt; cat /proc/loadavg >> $R/nproc.txt
SINEW_PHASES=1 timeout 60 build/prof/prof 10000000 400 "cpu=0.6,gpu=0.4,overlap=3" > $R/prof-10M-split.log 2>&1
SINEW_PHASES=1 timeout 60 build/prof/prof 10000000 400 "gpu=1,overlap=3" > $R/prof-10M-gpu.log 2>&1
SINEW_PHASES=1 timeout 60 build/prof/prof 10000000 400 "cpu=0.6,gpu=0.4,overlap=3" > $R/prof-10M-split-b.log 2>&1
tar czf $OUT/d16.tgz -C /tmp d16
timeout 250 build/bench/bench_saxpy --out $R/ab --sizes 10M,50M --overlaps 3 --ab 31 --ab-only > $R/ab/saxpy.log 2>&1
tar czf $OUT/d16.tgz -C /tmp d16
