// exec/leaves_run.hpp — the leaves a queue was given, for the errors its waits report: a kernel's
// failure at run time (an illegal address, an out-of-resources abort) surfaces at the next wait
// of its queue, not at its enqueue, and the wait alone would name no node.
#pragma once

#include <sinew/error.hpp>

#include <exception>
#include <string>
#include <vector>

namespace sinew::detail {

class LeavesRun {
 public:
  // A leaf given to the queue (its path lives as long as the run's analysis).
  void add(const std::string* path) {
    for (const std::string* p : paths_)
      if (p == path) return;
    paths_.push_back(path);
  }
  // For ErrorContext::node: the one leaf, or "one of the leaves the queue ran: a; b".
  std::string text() const;

 private:
  std::vector<const std::string*> paths_;
};

// The exception being handled, where it is an OpenCL failure that names no node, given `leaves`
// as its node (with the status's advice, platform/error.hpp); any other as it is. Call from a
// catch handler.
std::exception_ptr naming_leaves(const LeavesRun& leaves);

}  // namespace sinew::detail
