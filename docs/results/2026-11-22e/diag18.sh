#!/bin/bash
# GPU run 18: GPU alone fed by one thread (SINEW_FEED_ONE=1) against a thread per queue; the
# discrete waits' marker without clFinish.
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d18; mkdir -p $R/ab0 $R/ab1 $R/ab0b $R/ab1b
timeout 200 build/bench/bench_saxpy --out $R/ab0 --sizes 10M,50M --overlaps 3 --ab 31 --ab-only > $R/ab0/saxpy.log 2>&1
tar czf $OUT/d18.tgz -C /tmp d18
SINEW_FEED_ONE=1 timeout 200 build/bench/bench_saxpy --out $R/ab1 --sizes 10M,50M --overlaps 3 --ab 31 --ab-only > $R/ab1/saxpy.log 2>&1
tar czf $OUT/d18.tgz -C /tmp d18
timeout 100 build/bench/bench_saxpy --out $R/ab0b --sizes 10M --overlaps 3 --ab 31 --ab-only > $R/ab0b/saxpy.log 2>&1
SINEW_FEED_ONE=1 timeout 100 build/bench/bench_saxpy --out $R/ab1b --sizes 10M --overlaps 3 --ab 31 --ab-only > $R/ab1b/saxpy.log 2>&1
tar czf $OUT/d18.tgz -C /tmp d18
