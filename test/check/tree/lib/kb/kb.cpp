// fake kb/kb.cpp: allowed includes, then THE TRANSITIVE OPENCL INCLUDE (platform/error.hpp
// includes platform/cl.hpp)
#include <sinew/kb.hpp>
#include "platform/hash.hpp"
#include "platform/error.hpp"
#include <sqlite3.h>
