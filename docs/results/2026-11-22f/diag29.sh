#!/bin/bash
# GPU run 29 (eighth session): the committed state after the program cache's lock (51b5b05;
# binaries built here and carried as build-gpu/, a copy of build/ without the test cache). The
# device's copy of the checkout printed an older `git log` line; the binaries are 51b5b05's.
set -u
mkdir -p /tmp/icd && echo libpocl.so.2 >/tmp/icd/pocl.icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$PWD/build-gpu/carry:$PWD/build-gpu/lib XDG_CACHE_HOME=/tmp/sc SINEW_SOURCE_DIR=$PWD SINEW_KB=:memory: SINEW_QUIET=1
R=/tmp/d29; mkdir -p $R/ab $R/ab100
timeout 300 build-gpu/bench/bench_saxpy --out $R/ab --sizes 10M,50M --overlaps 3 --ab 31 --ab-only > $R/ab/saxpy.log 2>&1
timeout 250 build-gpu/bench/bench_saxpy --out $R/ab100 --sizes 100M --overlaps 3 --ab 15 --ab-only > $R/ab100/saxpy.log 2>&1
tar czf $OUT/d29.tgz -C /tmp d29
