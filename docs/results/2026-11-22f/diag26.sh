#!/bin/bash
# GPU run 26: the committed state again (ecc2dd7), a second pass: head to head at 10M, 50M (31 rounds)
# and 100M (15 rounds).
set -u
cd "$(dirname "$0")/.."
scripts/gpu-machine setup >/dev/null
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build/carry:$PWD/build/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d26; mkdir -p $R/ab $R/ab100
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt 2>&1
build/tools/sinew devices > $R/devices.txt 2>&1
timeout 250 build/bench/bench_saxpy --out $R/ab --sizes 10M,50M --overlaps 3 --ab 31 --ab-only > $R/ab/saxpy.log 2>&1
tar czf $OUT/d26.tgz -C /tmp d26
timeout 150 build/bench/bench_saxpy --out $R/ab100 --sizes 100M --overlaps 3 --ab 15 --ab-only > $R/ab100/saxpy.log 2>&1
tar czf $OUT/d26.tgz -C /tmp d26
