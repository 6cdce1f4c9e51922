// exec/wait.hpp — waiting for device work without spinning a core.
//
// NVIDIA's clFinish and clWaitForEvents spin. A request's GPU workers wait while PoCL runs the
// CPU share on every core, so spinning waiters would take cores from the CPU partitions (a
// measured slowdown of CPU+GPU splits). Here a completion callback wakes the sleeping thread.
#pragma once

#include "platform/cl.hpp"

#include <condition_variable>
#include <mutex>

namespace sinew::detail {

// Blocks until `event` has completed (or failed), sleeping meanwhile.
inline void wait_quietly(cl::Event event) {  // a copy: retains the event
  struct Flag {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
  } flag;
  event.setCallback(
      CL_COMPLETE,
      [](cl_event, cl_int, void* p) {
        auto* f = static_cast<Flag*>(p);
        std::lock_guard lock(f->m);  // notified under the lock: the waiter cannot leave early
        f->done = true;
        f->cv.notify_all();
      },
      &flag);
  std::unique_lock lock(flag.m);
  flag.cv.wait(lock, [&] { return flag.done; });
}

// Blocks until everything queued on `q` has completed, then surfaces any failure (clFinish,
// which returns at once by then).
inline void finish_quietly(cl::CommandQueue& q) {
  cl::Event marker;
  q.enqueueMarkerWithWaitList(nullptr, &marker);
  q.flush();
  wait_quietly(marker);
  q.finish();
}

}  // namespace sinew::detail
