// sinew/sinew.hpp — the one header users include.
#pragma once

#include <sinew/device.hpp>
#include <sinew/error.hpp>
#include <sinew/kb.hpp>
#include <sinew/runtime.hpp>
#include <sinew/tree.hpp>
#include <sinew/types.hpp>
#include <sinew/version.hpp>
#ifdef SINEW_HAS_MPI
#include <sinew/cluster.hpp>  // built with SINEW_MPI
#endif
