// exec/feeding.hpp — who feeds a run's queues (exec/drive.cpp): a host thread per queue, each
// enqueueing its partitions and then waiting for its queue; or the calling thread, enqueueing every
// queue's partitions and then waiting for all of them under the wait policy (exec/wait.hpp). The
// rule reads only what the run is made of (FeedShape), so that tests state it apart from a run.
#pragma once

#include <cstddef>

namespace sinew::detail {

// What the rule reads of a run.
struct FeedShape {
  bool streamable = false;       // every partition runs the whole tree (Analysis::streamable)
  bool takes_chunks = false;     // the schedule cuts chunks while the run goes
  bool replicas = false;         // vectors read whole, one copy per context shared by its queues
  bool all_direct = false;       // no transfer is staged through the pinned ring (exec/transfer.hpp)
  bool runs_at_enqueue = false;  // some device's driver runs commands as they are enqueued (PoCL's "basic")
  std::size_t queues = 0;        // the run's workers
  bool several_devices = false;  // its queues are on more than one device
  // Every partitioned vector bound to the run is a resident array's piece held by its partition
  // (exec/residency.hpp), and at least one is.
  bool all_slices_resident = false;
  bool any_slice_resident = false;
};

// The calling thread feeds every queue and waits for them all where nothing it enqueues blocks:
// a streamed split over several devices whose transfers are all direct (pinned memory for the
// discrete devices, the host memory itself for CPUs), as hand-written OpenCL does, since threads
// that enqueue only once woken, while a CPU device's work-groups fill the cores, start the GPU
// late (docs/decisions/028); one device's queues, one or several, whose slices are all resident,
// where a thread per queue only adds hand-overs to every run (docs/decisions/144, 161). Never
// where a device's driver runs commands as they are enqueued (PoCL's "basic"): it would hold the
// others.
bool fed_by_one_thread(const FeedShape& run);

}  // namespace sinew::detail
