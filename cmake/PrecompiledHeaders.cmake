# sinew_precompile_std_headers(TARGET [GTEST]): the standard headers most of TARGET's sources
# include, parsed once per target instead of once per source (GTEST: GoogleTest's too).
# sinew_reuse_precompiled_headers(TARGET DONOR): TARGET's sources take DONOR's precompiled header
# (built with the same flags), so a program of one source gains without building one of its own.
#
# A precompiled header costs about one source's compile, and parsing these headers is a fifth to
# a third of a source's (docs/decisions/131): the library builds its own, the test programs reuse
# one built for all of them. Only
# standard and GoogleTest headers: a source that forgets to include one of its own module's
# headers still fails to compile, and the include check (scripts/check-includes) reads the
# sources as written. SINEW_PRECOMPILE_HEADERS=OFF builds without.
option(SINEW_PRECOMPILE_HEADERS "Precompile the standard headers of the library and the larger test programs" ON)

function(sinew_precompile_std_headers target)
  cmake_parse_arguments(P "GTEST" "" "" ${ARGN})
  if(NOT SINEW_PRECOMPILE_HEADERS)
    return()
  endif()
  set(headers <algorithm> <atomic> <chrono> <cmath> <condition_variable> <cstddef> <cstdint> <deque>
              <functional> <iomanip> <limits> <map> <memory> <mutex> <numeric> <optional> <set> <sstream>
              <stdexcept> <string> <string_view> <thread> <tuple> <utility> <vector>)
  if(P_GTEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

function(sinew_reuse_precompiled_headers target donor)
  if(SINEW_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} REUSE_FROM ${donor})
  endif()
endfunction()
