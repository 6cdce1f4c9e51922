# MPI tests (sinew::Cluster, the samples' --mpi): mpirun over 2 and 3 ranks on one host, a PoCL
# device per rank, sizes kept tiny (CI has 2 cores). Label `mpi`. Included from test/CMakeLists.txt
# when SINEW_MPI is ON, so sinew_test()'s environment (SINEW_TEST_ENV) is the one defined there.
set(SINEW_MPIRUN ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe)
set(SINEW_MPI_ENV ${SINEW_TEST_ENV} "POCL_DEVICES=pthread")

# A Cluster suite (every rank runs every test, SPMD; the root checks outputs): mpi.NAME.np2 and
# .np3, a PoCL device per rank, and .np2_two_devices, two devices per rank, one driven like a GPU
# (a joined run split over the ranks, then over each rank's devices), with ARGS after the binary.
function(sinew_mpi_suite name source)
  cmake_parse_arguments(S "" "" "TWO_DEVICES_ARGS" ${ARGN})
  add_executable(sinew_${name}_tests mpi/${source})
  target_link_libraries(sinew_${name}_tests PRIVATE sinew::sinew GTest::gtest)
  sinew_test_optimization(sinew_${name}_tests)
  foreach(np 2 3)
    add_test(NAME mpi.${name}.np${np} COMMAND ${SINEW_MPIRUN} -np ${np} $<TARGET_FILE:sinew_${name}_tests>)
  endforeach()
  add_test(NAME mpi.${name}.np2_two_devices
           COMMAND ${SINEW_MPIRUN} -np 2 -x "POCL_DEVICES=pthread pthread" -x SINEW_DISCRETE=cpu:1
                   $<TARGET_FILE:sinew_${name}_tests> ${S_TWO_DEVICES_ARGS})
endfunction()

# The Cluster's own suite; with two devices per rank, the loops, the halos and distributed blocks
# bound on a discrete device (explicit transfers).
sinew_mpi_suite(cluster cluster_test.cpp TWO_DEVICES_ARGS --gtest_filter=*Loops*:*Halos*:Distributed.*)
add_test(NAME mpi.cluster.one_after_another
         COMMAND ${SINEW_MPIRUN} -np 2 $<TARGET_FILE:sinew_cluster_tests> --one-after-another)
# A rank that dies mid-job: mpirun ends every rank and exits non-zero, well before the timeout.
add_test(NAME mpi.cluster.rank_dies
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/die.sh 60 ${SINEW_MPIRUN} -np 3 $<TARGET_FILE:sinew_cluster_tests>
                 --die-on-rank 1)
# A rank killed inside a loop while the others wait for it in an exchange: the job ends, and the
# root's knowledge base holds nothing of the killed run. A rank that hangs: the others give up
# after their timeout (2 s here) with an error saying so, and the job ends.
add_test(NAME mpi.cluster.rank_dies_mid_loop
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/die_mid_loop.sh 60 ${SINEW_MPIRUN} -np 3
                 $<TARGET_FILE:sinew_cluster_tests>)
add_test(NAME mpi.cluster.rank_hangs
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/ends.sh 60 "no answer from the other ranks within" ${SINEW_MPIRUN}
                 -np 2 $<TARGET_FILE:sinew_cluster_tests> --hang-on-rank 1)
# A rank that stops (SIGSTOP) while the others wait for it in an exchange: every other rank ends
# within its timeout and a few seconds (after a wait given up on, no rank waits a second timeout
# in the agreement), saying what it waited for. When a rank other than the root gives up first
# (a shorter timeout), its log line says so, and the root's error, long before the root's own
# timeout, names it and what it saw.
add_test(NAME mpi.cluster.rank_stops
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/stopped.sh 6.5 "error: .*no answer from the other ranks within 4 s at"
                 ${SINEW_MPIRUN} -np 3 $<TARGET_FILE:sinew_cluster_tests> --stop-on-rank 1 4 4)
add_test(NAME mpi.cluster.rank_stops_another_gives_up
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/stopped.sh 5
                 "sinew: warning: rank 2 of 3: no answer from the other ranks within 2 s at|error: rank 2 of 3 gave up waiting, and rank 0 stops at .*: no answer from the other ranks within 2 s at"
                 ${SINEW_MPIRUN} -np 3 $<TARGET_FILE:sinew_cluster_tests> --stop-on-rank 1 30 2)

# Scans and divide and conquer over ranks.
sinew_mpi_suite(cluster_scan cluster_scan_test.cpp)
# Results as arguments (sinew::value) over ranks.
sinew_mpi_suite(cluster_values cluster_values_test.cpp)
# A leaf marked whole_range() over ranks: refused on every rank before device work.
sinew_mpi_suite(cluster_whole_range cluster_whole_range_test.cpp)

# Samples over ranks (each checks its reference on the root: "result: OK", exit 0).
if(TARGET saxpy)
  set(_sample_runs
    "saxpy.np2|2|$<TARGET_FILE:saxpy> --size 20000"
    "saxpy.np3|3|$<TARGET_FILE:saxpy> --size 20001"
    "saxpy.np3_uneven|3|$<TARGET_FILE:saxpy> --size 20001 --rank-shares 0.6,0.1,0.3"
    "saxpy.np2_root_idle|2|$<TARGET_FILE:saxpy> --size 5000 --rank-shares 0,1"
    "filter_pipeline.np2|2|$<TARGET_FILE:filter_pipeline> --size 64x40"
    "filter_pipeline.np3|3|$<TARGET_FILE:filter_pipeline> --size 64x41"
    "histogram.np2|2|$<TARGET_FILE:histogram> --size 64"
    "histogram.np3_uneven|3|$<TARGET_FILE:histogram> --size 64 --rank-shares 0.2,0.5,0.3"
    "saxpy_blas.np2|2|$<TARGET_FILE:saxpy> --mode blas --size 30000"
    "fft.np2|2|$<TARGET_FILE:fft> --size 4"
    "fft.np3|3|$<TARGET_FILE:fft> --size 4"
    "segmentation.np2|2|$<TARGET_FILE:segmentation> --size 65536"
    "segmentation.np3|3|$<TARGET_FILE:segmentation> --size 65536"
    "heat.np2|2|$<TARGET_FILE:heat> --size 64 --tolerance 0.15 --iterations 1000"
    "heat.np3_uneven|3|$<TARGET_FILE:heat> --size 61 --rank-shares 0.5,0.2,0.3"
    "nbody.np2|2|$<TARGET_FILE:nbody> --size 301"
    "nbody.np3_uneven|3|$<TARGET_FILE:nbody> --size 300 --rank-shares 0.2,0.5,0.3"
    "prefix_sum.np2|2|$<TARGET_FILE:prefix_sum> --size 20000"
    "prefix_sum.np3_uneven_exclusive|3|$<TARGET_FILE:prefix_sum> --size 20001 --exclusive --rank-shares 0.2,0.5,0.3"
    "mergesort.np2|2|$<TARGET_FILE:mergesort> --size 20000 --leaf 64"
    "mergesort.np3_uneven|3|$<TARGET_FILE:mergesort> --size 30001 --leaf 64 --fanout 3 --rank-shares 0.2,0.5,0.3"
    "max_subarray.np2|2|$<TARGET_FILE:max_subarray> --size 20000 --leaf 64"
    "max_subarray.np3_uneven|3|$<TARGET_FILE:max_subarray> --size 30001 --leaf 32 --rank-shares 0.5,0.2,0.3"
    "sobel.np2|2|$<TARGET_FILE:sobel> --size 64"
    "sobel.np3_uneven|3|$<TARGET_FILE:sobel> --size 61 --rank-shares 0.5,0.2,0.3"
    "mandelbrot.np2|2|$<TARGET_FILE:mandelbrot> --size 48"
    "mandelbrot.np3|3|$<TARGET_FILE:mandelbrot> --size 48"
    "matmul.np2|2|$<TARGET_FILE:matmul> --size 64"
    "matmul.np3_uneven|3|$<TARGET_FILE:matmul> --size 64 --rank-shares 0.2,0.5,0.3")
  foreach(run IN LISTS _sample_runs)
    string(REPLACE "|" ";" parts "${run}")
    list(GET parts 0 name)
    list(GET parts 1 np)
    list(GET parts 2 command)
    separate_arguments(command UNIX_COMMAND "${command}")
    add_test(NAME mpi.samples.${name}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/sample.sh ${SINEW_MPIRUN} -np ${np} ${command} --mpi)
  endforeach()
  # The numbered concept samples take --mpi too (common/concept.hpp), over 2 and 3 ranks.
  foreach(sample 01_first_kernel 02_pipeline 03_loop_until 04_map_reduce_custom 05_halo 06_scan)
    foreach(np 2 3)
      add_test(NAME mpi.samples.${sample}.np${np}
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/sample.sh ${SINEW_MPIRUN} -np ${np} $<TARGET_FILE:${sample}> --mpi)
    endforeach()
  endforeach()
  # A discrete (GPU-like) device on every rank: explicit transfers, no zero-copy.
  add_test(NAME mpi.samples.filter_pipeline.np2_discrete
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/sample.sh ${SINEW_MPIRUN} -np 2 -x SINEW_DISCRETE=cpu:0
                   $<TARGET_FILE:filter_pipeline> --size 64x40 --mpi --rank-shares 0.3,0.7)
  foreach(sample heat nbody)
    add_test(NAME mpi.samples.${sample}.np2_discrete
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/sample.sh ${SINEW_MPIRUN} -np 2 -x SINEW_DISCRETE=cpu:0
                     $<TARGET_FILE:${sample}> --size 64 --mpi --rank-shares 0.3,0.7)
  endforeach()
  foreach(sample prefix_sum mergesort max_subarray)
    set(_leaf --leaf 32)
    if(sample STREQUAL "prefix_sum")
      set(_leaf)
    endif()
    add_test(NAME mpi.samples.${sample}.np2_discrete
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/sample.sh ${SINEW_MPIRUN} -np 2 -x SINEW_DISCRETE=cpu:0
                     $<TARGET_FILE:${sample}> --size 10000 ${_leaf} --mpi --rank-shares 0.3,0.7)
  endforeach()
endif()

# Every sample with each rank's data its own (sinew::distributed: no scatter, no gather), through
# bench_mpi --distributed 1 at small sizes: each row's output equals the sample's reference.
if(SINEW_BUILD_BENCH)
  add_test(NAME mpi.bench.distributed.np2
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/bench_rows.sh ${SINEW_MPIRUN} -np 2 $<TARGET_FILE:bench_mpi>
                   --exchanges 0 --distributed 1 --repeat 1 --warmup 1
                   --samples saxpy,filter_pipeline,histogram,heat,nbody --sizes saxpy=20001,filter_pipeline=64x41,nbody=301)
  add_test(NAME mpi.bench.distributed.np3_discrete
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/bench_rows.sh ${SINEW_MPIRUN} -np 3 -x SINEW_DISCRETE=cpu:0
                   $<TARGET_FILE:bench_mpi> --exchanges 0 --distributed 1 --repeat 1 --warmup 1
                   --samples saxpy,filter_pipeline,heat,nbody --sizes saxpy=20001,filter_pipeline=64x41,heat=61,nbody=300)
endif()

get_property(_mpi_tests DIRECTORY PROPERTY TESTS)
list(FILTER _mpi_tests INCLUDE REGEX "^mpi\\.")
set_tests_properties(${_mpi_tests} PROPERTIES LABELS mpi TIMEOUT 120 ENVIRONMENT "${SINEW_MPI_ENV}")
# The stopped-rank tests bound each rank's end within seconds of a timeout: run beside another
# test on a two-core machine (three ranks, PoCL's threads, the other test's), a rank that gave up
# could report its end past the bound without any second wait. They run alone.
set_tests_properties(mpi.cluster.rank_stops mpi.cluster.rank_stops_another_gives_up PROPERTIES RUN_SERIAL TRUE)
