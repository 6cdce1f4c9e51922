#!/bin/bash
# GPU run 19: the 10M split with the GPU's waiter blocking in the driver (SINEW_WAIT=block)
# against the default (napping polls while the CPU computes), twice each, alternating.
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d19; mkdir -p $R/auto1 $R/block1 $R/auto2 $R/block2
for i in 1 2; do
  timeout 100 build/bench/bench_saxpy --out $R/auto$i --sizes 10M --overlaps 3 --ab 31 --ab-only > $R/auto$i/saxpy.log 2>&1
  SINEW_WAIT=block timeout 100 build/bench/bench_saxpy --out $R/block$i --sizes 10M --overlaps 3 --ab 31 --ab-only > $R/block$i/saxpy.log 2>&1
  tar czf $OUT/d19.tgz -C /tmp d19
done
