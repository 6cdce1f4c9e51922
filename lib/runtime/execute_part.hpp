// runtime/execute_part.hpp — a Runtime's request as one process's part of a larger run (a
// Cluster's rank): the tree runs on the exchanger's units only, exchanging with the other
// processes through it (exec/exchanger.hpp). No training and no balancing: the other processes
// would have to run every training execution with it.
#pragma once

#include "exec/exchanger.hpp"

#include <sinew/runtime.hpp>

namespace sinew::detail {

// `options` must give the plan (config, plan or device): a planned run might train.
Report execute_part(Runtime& runtime, const Node& tree, std::vector<Binding> bindings, RunOptions options,
                    Exchanger& exchanger);

}  // namespace sinew::detail
