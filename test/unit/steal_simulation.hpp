// test/unit/steal_simulation.hpp — a run of the steal schedule (decompose/schedules/steal/) on a
// simulated clock, for the unit tests: its queues' pieces timed by the test, every rule a run
// must keep checked as it goes.
#pragma once

#include "decompose/decompose.hpp"
#include "decompose/schedules/steal/run.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace sinew::testing {

using detail::Chunk;
using detail::Decomposition;
using detail::Handover;
using detail::StealMemory;
using detail::StealRun;

// What a run did: each unit's visits, each queue's pieces in order, the handovers, its end. Queues
// are the plan's (StealPlan::queues): a queue the run leaves out took no piece.
struct Simulated {
  std::vector<int> visits;
  std::vector<std::vector<Chunk>> pieces;
  std::vector<Handover> handovers;
  double end_ms = 0;
  std::vector<double> queue_end_ms;  // each queue's last piece's end (0: it ran none)
  std::string problem;  // the first broken rule, "" when none
};

// The units `c` holds are in none of the pieces taken so far.
inline bool untouched(const std::vector<int>& visits, const Chunk& c) {
  return std::all_of(visits.begin() + static_cast<std::ptrdiff_t>(c.first),
                     visits.begin() + static_cast<std::ptrdiff_t>(c.first + c.units), [](int v) { return v == 0; });
}

// How many pieces a queue keeps taken and not ended: one; or as the executor's workers do
// (exec/drive.cpp): one until its first piece has ended, then two, and two from the start for a
// queue whose device moves data (StealRun::pipelined_from_first_chunk).
enum class InFlight { one, as_executed };

// A run of `dec` on a simulated clock: a piece of queue q (the plan's) begun at `now` ends `ms(q, piece, now)`
// later; a queue runs its pieces one after another and takes the next as soon as it holds fewer
// than `in_flight` says. After each take, a new handover must hold units no piece has taken yet
// (the victim had not started them) and at least the thief's least range.
inline Simulated simulate(const Decomposition& dec, StealMemory* memory,
                          const std::function<double(std::size_t, Chunk, double)>& ms, InFlight in_flight = InFlight::one) {
  StealRun run(dec, memory);
  const detail::StealPlan& plan = detail::steal_plan(dec);
  const std::size_t queues = run.queues().size();
  // The plan's queue that is the run's queue q.
  auto planned = [&](std::size_t q) { return run.queues().at(q).index; };
  Simulated out;
  out.visits.assign(dec.total_units, 0);
  out.pieces.resize(plan.queues.size());
  out.queue_end_ms.assign(plan.queues.size(), 0);
  struct Taken {
    Chunk chunk;
    double end_ms = 0;
  };
  std::vector<std::vector<Taken>> taken(queues);  // per queue, its pieces not ended, in order
  std::vector<double> start(queues, -1);           // -1: not begun
  std::vector<bool> stopped(queues, false), ended_one(queues, false);
  auto most_taken = [&](std::size_t q) -> std::size_t {
    return in_flight == InFlight::as_executed && (ended_one[q] || plan.moves_data.at(planned(q))) ? 2 : 1;
  };
  auto begin = [&](std::size_t q, const Chunk& c, double now) {
    for (std::size_t u = c.first; u < c.first + c.units; ++u) ++out.visits[u];
    out.pieces[planned(q)].push_back(c);
    if (start[q] < 0) start[q] = now;
    const double from = taken[q].empty() ? now : std::max(now, taken[q].back().end_ms);
    taken[q].push_back({c, from + ms(planned(q), c, from)});
  };
  for (const auto& [q, c] : run.chunks_before_run()) begin(q, c, 0);
  auto take = [&](std::size_t q, double now) {
    while (!stopped[q] && taken[q].size() < most_taken(q)) {
      const std::size_t before = run.handovers().size();
      const auto c = run.take(q);
      const auto handovers = run.handovers();
      for (std::size_t h = before; h < handovers.size() && out.problem.empty(); ++h) {
        if (!untouched(out.visits, handovers[h].range)) out.problem = "a handover holds started units";
        if (handovers[h].range.units < plan.least_range(planned(handovers[h].thief), dec.granule))
          out.problem = "a stolen range under the thief's least range";
        if (handovers[h].thief != q) out.problem = "a handover to a queue that did not ask";
      }
      if (!c) {  // nothing for now: a queue holding pieces asks again once one ends (exec/drive.cpp)
        stopped[q] = taken[q].empty();
        break;
      }
      begin(q, *c, now);
    }
  };
  for (std::size_t q = 0; q < queues; ++q) take(q, 0);
  for (;;) {
    std::size_t q = queues;
    for (std::size_t i = 0; i < queues; ++i)
      if (!taken[i].empty() && (q == queues || taken[i].front().end_ms < taken[q].front().end_ms)) q = i;
    if (q == queues) break;
    const Taken ended = taken[q].front();
    taken[q].erase(taken[q].begin());
    const double now = ended.end_ms;
    out.end_ms = std::max(out.end_ms, now);
    out.queue_end_ms[planned(q)] = now;
    ended_one[q] = true;
    run.chunk_done(q, ended.chunk.units, now - start[q], 0);
    take(q, now);
  }
  run.finished(out.end_ms);
  out.handovers = run.handovers();
  return out;
}

}  // namespace sinew::testing
