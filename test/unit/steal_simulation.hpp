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

// What a run did: each unit's visits, each queue's pieces in order, the handovers, its end.
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

// A run of `dec` on a simulated clock: a piece of queue q begun at `now` ends `ms(q, piece, now)`
// later; a queue takes its next piece when the one before ends. After each take, a new handover must hold units no piece
// has taken yet (the victim had not started them) and at least the thief's least range.
inline Simulated simulate(const Decomposition& dec, StealMemory* memory, const std::function<double(std::size_t, Chunk, double)>& ms) {
  StealRun run(dec, memory);
  const detail::StealPlan& plan = detail::steal_plan(dec);
  const std::size_t queues = run.queues().size();
  Simulated out;
  out.visits.assign(dec.total_units, 0);
  out.pieces.resize(queues);
  out.queue_end_ms.assign(queues, 0);
  std::vector<double> end(queues, -1), start(queues, -1);  // -1: idle / not begun
  std::vector<std::size_t> piece_units(queues, 0);
  std::vector<bool> stopped(queues, false);
  auto begin = [&](std::size_t q, const Chunk& c, double now) {
    for (std::size_t u = c.first; u < c.first + c.units; ++u) ++out.visits[u];
    out.pieces[q].push_back(c);
    if (start[q] < 0) start[q] = now;
    end[q] = now + ms(q, c, now);
    piece_units[q] = c.units;
  };
  for (const auto& [q, c] : run.chunks_before_run()) begin(q, c, 0);
  auto take = [&](std::size_t q, double now) {
    const std::size_t before = run.handovers().size();
    const auto c = run.take(q);
    const auto handovers = run.handovers();
    for (std::size_t h = before; h < handovers.size() && out.problem.empty(); ++h) {
      if (!untouched(out.visits, handovers[h].range)) out.problem = "a handover holds started units";
      if (handovers[h].range.units < plan.least_range(handovers[h].thief, dec.granule))
        out.problem = "a stolen range under the thief's least range";
      if (handovers[h].thief != q) out.problem = "a handover to a queue that did not ask";
    }
    if (c) begin(q, *c, now);
    else stopped[q] = true;
  };
  for (std::size_t q = 0; q < queues; ++q)
    if (end[q] < 0) take(q, 0);
  for (;;) {
    std::size_t q = queues;
    for (std::size_t i = 0; i < queues; ++i)
      if (end[i] >= 0 && (q == queues || end[i] < end[q])) q = i;
    if (q == queues) break;
    const double now = end[q];
    out.end_ms = std::max(out.end_ms, now);
    out.queue_end_ms[q] = now;
    end[q] = -1;
    run.chunk_done(q, piece_units[q], now - start[q], 0);
    take(q, now);
  }
  run.finished();
  out.handovers = run.handovers();
  return out;
}

}  // namespace sinew::testing
