// exec/run.cpp — a run's parts made and given back (see run.hpp).
#include "exec/run.hpp"

#include "exec/spanning.hpp"
#include "exec/transfer.hpp"

namespace sinew::detail {

RunState::RunState(Environment& e, const NodeImpl& r, const Analysis& a, const std::vector<Binding>& b,
                   const Decomposition& d, bool p, std::uint8_t poison, Exchanger* exchanger)
    : env(e), root(r), an(a), bindings(b), dec(d), profile(p), buffers(*e.buffers, poison) {
  if (exchanger) {
    replicas = spanning_replicas(*this, *exchanger);
    halos = spanning_halos(*this, *exchanger);
    reductions = spanning_reductions(an, *exchanger);
  } else {
    replicas = std::make_unique<Replicas>(*this);
    halos = std::make_unique<Halos>(*this);
    reductions = std::make_unique<Reductions>();
  }
}

RunState::~RunState() {
  for (auto& w : workers.list) {
    if (!w.slot) continue;
    if (!w.drained) {
      try {
        w.queue().finish();  // nothing may still touch host memory once the request is over
      } catch (...) {
      }
      try {
        unmap_deferred(w);
      } catch (...) {
      }
    }
    env.queues->release(w.cl_device, std::move(w.slot));
  }
  // (The buffer ledger gives the buffers back as it goes, after this.)
}

void RunState::keep_error() { keep_error(std::current_exception()); }

void RunState::keep_error(std::exception_ptr error) {
  std::lock_guard lock(error_mutex_);
  if (!error_) error_ = std::move(error);
}

}  // namespace sinew::detail
