#!/bin/bash
# GPU run 21: host-side phase timestamps of both sides in a 60% split (temporary SINEW_XPHASES
# instrumentation), for the committed waiting (threads), a single waiting thread, and GPU-first feeding.
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1 SINEW_XPHASES=1
R=/tmp/d21; mkdir -p $R
uname -r > $R/uname.txt; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt 2>&1
for size in 10M 50M; do
  for v in base single gpufirst; do
    case $v in base) E="";; single) E="SINEW_X_WAIT=single";; gpufirst) E="SINEW_X_ORDER=gpu";; esac
    mkdir -p $R/$size-$v
    env $E timeout 120 build/bench/bench_saxpy --out $R/$size-$v --sizes $size --overlaps 3 --ab 31 --ab-only > $R/$size-$v/saxpy.log 2>&1
    tar czf $OUT/d21.tgz -C /tmp d21
  done
done
