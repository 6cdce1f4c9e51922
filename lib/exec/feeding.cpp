// exec/feeding.cpp — who feeds a run's queues (see feeding.hpp).
#include "exec/feeding.hpp"

namespace sinew::detail {

bool fed_by_one_thread(const FeedShape& run) {
  if (!run.streamable || run.takes_chunks || run.replicas || !run.all_direct || run.runs_at_enqueue ||
      run.queues == 0)
    return false;
  if (run.several_devices) return true;
  // One device. Several queues with nothing bound from the host take turns on one thread
  // (docs/decisions/144); one queue is fed by the calling thread either way, and waited for as
  // several are (a marker, not clFinish) where it holds resident data (docs/decisions/161).
  if (run.queues > 1) return run.all_slices_resident;
  return run.all_slices_resident && run.any_slice_resident;
}

}  // namespace sinew::detail
