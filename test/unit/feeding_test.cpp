// Who feeds a run's queues (exec/feeding.hpp): the rule over what a run is made of, no OpenCL.
#include "exec/feeding.hpp"

#include <gtest/gtest.h>

using namespace sinew::detail;

namespace {

// A streamed run with direct transfers on one device, `queues` queues, whose bound slices are all
// resident arrays' pieces.
FeedShape resident_on_one_device(std::size_t queues) {
  return {.streamable = true, .all_direct = true, .queues = queues, .all_slices_resident = true,
          .any_slice_resident = true};
}

}  // namespace

// A split over several devices whose transfers are all direct is fed by one thread
// (docs/decisions/028), resident data or not.
TEST(Feeding, ADirectSplitOverSeveralDevicesIsFedByOneThread) {
  FeedShape split{.streamable = true, .all_direct = true, .queues = 3, .several_devices = true};
  EXPECT_TRUE(fed_by_one_thread(split));
  split.all_direct = false;  // a staged transfer blocks its thread
  EXPECT_FALSE(fed_by_one_thread(split));
}

// One device's queues whose slices are all resident: one thread, one queue or several
// (docs/decisions/144, 161); one queue of a run with nothing resident keeps its own thread's
// feed and clFinish.
TEST(Feeding, OneDevicesResidentRunIsFedByOneThreadOnOneQueueOrSeveral) {
  EXPECT_TRUE(fed_by_one_thread(resident_on_one_device(1)));
  EXPECT_TRUE(fed_by_one_thread(resident_on_one_device(4)));
  FeedShape host_data = resident_on_one_device(1);
  host_data.all_slices_resident = host_data.any_slice_resident = false;
  EXPECT_FALSE(fed_by_one_thread(host_data));
  FeedShape part_resident = resident_on_one_device(2);
  part_resident.all_slices_resident = false;  // one vector bound from the host
  EXPECT_FALSE(fed_by_one_thread(part_resident));
  // Several queues with no bound slice at all have nothing to stage either.
  FeedShape unbound = resident_on_one_device(2);
  unbound.any_slice_resident = false;
  EXPECT_TRUE(fed_by_one_thread(unbound));
  unbound.queues = 1;
  EXPECT_FALSE(fed_by_one_thread(unbound));
}

// What keeps a thread per queue whatever the data: a tree that does not stream, a schedule that
// cuts chunks while the run goes, replicas shared by a context's queues, a driver that runs
// commands as they are enqueued.
TEST(Feeding, WhatKeepsAThreadPerQueue) {
  for (int what = 0; what < 4; ++what) {
    FeedShape s = resident_on_one_device(2);
    if (what == 0) s.streamable = false;
    if (what == 1) s.takes_chunks = true;
    if (what == 2) s.replicas = true;
    if (what == 3) s.runs_at_enqueue = true;
    EXPECT_FALSE(fed_by_one_thread(s)) << what;
    s.queues = 1;
    EXPECT_FALSE(fed_by_one_thread(s)) << what << ", one queue";
  }
}
