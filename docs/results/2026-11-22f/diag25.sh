#!/bin/bash
# GPU run 25: the 50M split with the GPU's streaming chunk by size (default, 30 MB of the three
# streams: 11 partitions) against 24 MB (2M floats, the hand-written 8 MB per vector) and 12 MB;
# then a profiled trace of the sample's split at 50M.
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d25; mkdir -p $R
run() { # name env...
  local v=$1; shift
  mkdir -p $R/$v
  env "$@" timeout 150 build/bench/bench_saxpy --out $R/$v --sizes 50M --overlaps 3 --ab 21 --ab-only > $R/$v/saxpy.log 2>&1
  tar czf $OUT/d25.tgz -C /tmp d25
}
run chunk-auto X=1
run chunk-24 SINEW_CHUNK_MB=24
run chunk-12 SINEW_CHUNK_MB=12
SINEW_TRACE=$R/trace-50M.json timeout 60 build/samples/saxpy --size 50000000 --shares 0.6,0.4 --overlap 3 --pinned --repeat 5 --profile > $R/sample-50M-profiled.txt 2>&1
tar czf $OUT/d25.tgz -C /tmp d25
