#!/bin/bash
# GPU run 22: phase timestamps (temporary SINEW_XPHASES) with prepare broken down and the time
# before go(); variants: committed, no map/unmap of zero-copy CPU slices, single waiting thread.
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1 SINEW_XPHASES=1
R=/tmp/d22; mkdir -p $R
run() { # size variant rounds timeout env...
  local size=$1 v=$2 ab=$3 t=$4; shift 4
  mkdir -p $R/$size-$v
  env "$@" timeout $t build/bench/bench_saxpy --out $R/$size-$v --sizes $size --overlaps 3 --ab $ab --ab-only > $R/$size-$v/saxpy.log 2>&1
  tar czf $OUT/d22.tgz -C /tmp d22
}
run 10M base 31 100 X=1
run 10M nomap 31 100 SINEW_X_NOMAP=1
run 10M single-nomap 31 100 SINEW_X_NOMAP=1 SINEW_X_WAIT=single
run 50M nomap 21 200 SINEW_X_NOMAP=1
run 50M base 21 200 X=1
