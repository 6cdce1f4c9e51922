# bench/starpu/bench_starpu.cmake — bench_starpu (Sinew against StarPU), included by
# bench/CMakeLists.txt. StarPU is a benchmark-only, optional dependency: found through pkg-config
# (Debian: libstarpu-dev), and without it this program is simply not built. Nothing else in the
# project may link it.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(SINEW_STARPU QUIET IMPORTED_TARGET starpu-1.3)
endif()

if(NOT SINEW_STARPU_FOUND)
  message(STATUS "bench_starpu: not built (StarPU 1.3 not found by pkg-config as starpu-1.3; apt-get install libstarpu-dev)")
  return()
endif()
message(STATUS "bench_starpu: StarPU ${SINEW_STARPU_VERSION} found")

# The StarPU side in its own library: StarPU's headers choose an OpenCL target version of their
# own, so they never meet Sinew's headers in one translation unit.
add_library(sinew_bench_starpu STATIC ${CMAKE_CURRENT_LIST_DIR}/starpu_side.cpp)
target_link_libraries(sinew_bench_starpu PUBLIC PkgConfig::SINEW_STARPU PRIVATE OpenCL::OpenCL)
target_compile_options(sinew_bench_starpu PRIVATE -Wall -Wextra -Wno-ignored-attributes)

add_executable(bench_starpu ${CMAKE_CURRENT_LIST_DIR}/bench_starpu.cpp)
target_link_libraries(bench_starpu PRIVATE sinew_bench_common sinew_bench_starpu)
target_compile_definitions(bench_starpu PRIVATE SINEW_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_compile_options(bench_starpu PRIVATE -Wall -Wextra -Wno-ignored-attributes)
