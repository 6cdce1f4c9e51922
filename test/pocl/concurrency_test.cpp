// Several requests in flight on one Runtime; errors travel through the future (run) or are
// thrown (execute).
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <thread>

using namespace sinew;
using namespace sinew::testing;

TEST(Concurrency, TwoRequestsInFlightGiveCorrectResults) {
  Runtime rt;
  Holder h1, h2, h3;
  Case a = make_case("nested_three_deep", 5000, h1);
  Case b = make_case("replicated_sync_loop", 3000, h2);
  Case c = make_case("loop_until_map_reduce", 4000, h3);
  auto fa = rt.run(a.tree, a.bindings);
  auto fb = rt.run(b.tree, b.bindings);
  auto fc = rt.run(c.tree, c.bindings);
  a.report = fa.get();
  b.report = fb.get();
  c.report = fc.get();
  EXPECT_EQ(a.check(), "");
  EXPECT_EQ(b.check(), "");
  EXPECT_EQ(c.check(), "");
}

TEST(Concurrency, SameTreeFromManyThreads) {
  Runtime rt;
  std::vector<Holder> holders(6);
  std::vector<Case> cases;
  std::vector<std::future<Report>> futures;
  for (auto& h : holders) cases.push_back(make_case("pipeline_channel", 2048, h));
  for (auto& c : cases) futures.push_back(rt.run(c.tree, c.bindings));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    cases[i].report = futures[i].get();
    EXPECT_EQ(cases[i].check(), "") << i;
  }
}

TEST(Concurrency, AnErrorDuringTheRunReachesTheFuture) {
  Runtime rt(RuntimeOptions{.disk_cache = false});
  auto V = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> data(16, 0);
  auto fut = rt.run(kernel_source("__kernel void k(__global int* v) { v[0] = ; }", "k").args(inout(V)), {{V, data}});
  EXPECT_THROW(fut.get(), Error);
  Holder h;  // the runtime still works afterwards
  Case ok = make_case("kernel", 100, h);
  ok.report = rt.run(ok.tree, ok.bindings).get();
  EXPECT_EQ(ok.check(), "");
}

TEST(Concurrency, ExecuteRunsOnTheCallingThreadAndThrowsItsErrors) {
  Runtime rt(RuntimeOptions{.disk_cache = false});
  // The same trees as run(...).get(), from several threads at once and one after another.
  std::vector<Holder> holders(4);
  std::vector<Case> cases;
  for (auto& h : holders) cases.push_back(make_case("pipeline_channel", 3000, h));
  std::vector<std::thread> threads;
  for (auto& c : cases) threads.emplace_back([&rt, &c] { c.report = rt.execute(c.tree, c.bindings); });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(cases[i].check(), "") << i;
  for (const char* name : {"replicated_sync_loop", "loop_until_map_reduce", "loop_until_map_reduce"}) {
    Holder h;
    Case c = make_case(name, 2000, h);
    c.report = rt.execute(c.tree, c.bindings);
    EXPECT_EQ(c.check(), "") << name;
  }
  // A build error during the run is thrown by execute itself.
  auto V = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> data(16, 0);
  EXPECT_THROW(rt.execute(kernel_source("__kernel void k(__global int* v) { v[0] = ; }", "k").args(inout(V)), {{V, data}}),
               Error);
}
