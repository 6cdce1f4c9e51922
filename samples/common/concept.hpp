// samples/common/concept.hpp — how the numbered concept samples run their one tree, from their
// command line: `[device index]` on this process's Runtime (without one, the runtime plans, or
// the sample's own options hold), or `--mpi` over every rank of the MPI job (sinew::Cluster, when
// Sinew was built with MPI):
//
//   mpirun -np 3 build/samples/06_scan --mpi
//
// Over ranks only the root's host data receive the tree's outputs, so only the root checks
// them: the other ranks print nothing and stop (ConceptRun::checks). The report is the rank's
// own run, with the map_reduce results combined over every rank.
#pragma once

#include <sinew/sinew.hpp>

#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace sinew::samples {

struct ConceptRun {
  Report report;
  bool checks = true;  // this process holds the outputs (false on the ranks other than the root)
};

// `configure(runtime, options)` completes the options for the runtime that runs the tree (this
// process's, or this rank's); the device index, when given, is set before it.
inline ConceptRun run_concept(int argc, char** argv, const Node& tree, std::vector<Binding> bindings,
                              RunOptions options = {},
                              const std::function<void(Runtime&, RunOptions&)>& configure = {}) {
  const bool mpi = argc > 1 && std::strcmp(argv[1], "--mpi") == 0;
  if (!mpi && argc > 1) options.device = std::stoul(argv[1]);
  ConceptRun ran;
  if (!mpi) {
    Runtime rt;
    if (configure) configure(rt, options);
    ran.report = rt.run(tree, std::move(bindings), options).get();
    return ran;
  }
#ifdef SINEW_HAS_MPI
  Cluster cluster;
  if (configure) configure(cluster.runtime(), options);
  const ClusterReport rep = cluster.run(tree, std::move(bindings), options);
  ran.report = rep.local;
  ran.report.results = rep.results;
  ran.checks = cluster.is_root();
  if (ran.checks) std::cout << rep.str() << "\n";
  return ran;
#else
  throw Error(make_error_code(errc::invalid_argument), "--mpi: this Sinew was built without MPI",
              {.fix = "configure Sinew with SINEW_MPI=ON (needs libopenmpi-dev)"});
#endif
}

}  // namespace sinew::samples
