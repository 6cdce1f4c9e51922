// exec/leaves_run.cpp — naming the leaves a queue ran in the errors its waits report.
#include "exec/leaves_run.hpp"

#include "platform/error.hpp"

namespace sinew::detail {

std::string LeavesRun::text() const {
  if (paths_.size() == 1) return *paths_.front();
  std::string s;
  for (const std::string* p : paths_) s += (s.empty() ? "" : "; ") + *p;
  return s.empty() ? s : "one of the leaves the queue ran: " + s;
}

std::exception_ptr naming_leaves(const LeavesRun& leaves) {
  try {
    throw;
  } catch (const Error& e) {
    if (e.code().category() != opencl_category() || !e.node().empty()) return std::current_exception();
    ErrorContext context = e.context();
    context.node = leaves.text();
    return std::make_exception_ptr(Error(e.code(), e.message(), std::move(context)));
  } catch (const cl::Error& e) {
    try {
      throw_cl(e, {.node = leaves.text()});
    } catch (...) {
      return std::current_exception();
    }
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace sinew::detail
