// sinew/sinew.hpp — the one header users include.
#pragma once

/// \namespace sinew
/// Sinew: nested OpenCL skeleton trees on every CPU and GPU at once. A tree (sinew/tree.hpp)
/// describes a computation; a Runtime (sinew/runtime.hpp) plans it through the knowledge base
/// (sinew/kb.hpp) and runs it on every device; a Report (sinew/report.hpp) says how it ran.
/// The user guide is docs/guide/; this reference documents every public declaration.

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
