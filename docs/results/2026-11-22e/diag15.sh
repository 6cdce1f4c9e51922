#!/bin/bash
# GPU run 15: per-phase host times of a request (temporary SINEW_PHASES instrumentation).
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d15; mkdir -p $R/ab
build/tools/sinew devices > $R/devices.txt 2>&1
for n in 10000000 50000000; do
  for plan in "cpu=0.6,gpu=0.4,overlap=3" "gpu=1,overlap=3"; do
    tag=$n-$(echo $plan | cut -c1-7)
    SINEW_PHASES=1 timeout 60 build/prof/prof $n 400 "$plan" > $R/prof-$tag.log 2>&1
  done
done
for w in block poll; do SINEW_WAIT=$w SINEW_PHASES=1 timeout 60 build/prof/prof 10000000 400 "cpu=0.6,gpu=0.4,overlap=3" > $R/prof-10M-split-$w.log 2>&1; done
tar czf $OUT/d15.tgz -C /tmp d15
timeout 150 build/bench/bench_saxpy --out $R/ab --sizes 10M --overlaps 3 --ab 21 --ab-only > $R/ab/saxpy.log 2>&1
tar czf $OUT/d15.tgz -C /tmp d15
