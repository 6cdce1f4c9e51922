#!/bin/bash
# GPU run 27: the 50M split, committed state, with the GPU's streaming chunk by size (30 MB) and
# at 12 MB (SINEW_CHUNK_MB=12), alternating twice on one machine (21 rounds each).
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d27; mkdir -p $R
run() { # name env...
  local v=$1; shift
  mkdir -p $R/$v
  env "$@" timeout 110 build/bench/bench_saxpy --out $R/$v --sizes 50M --overlaps 3 --ab 21 --ab-only > $R/$v/saxpy.log 2>&1
  tar czf $OUT/d27.tgz -C /tmp d27
}
run auto-1 X=1
run chunk12-1 SINEW_CHUNK_MB=12
run auto-2 X=1
run chunk12-2 SINEW_CHUNK_MB=12
