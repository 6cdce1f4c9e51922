// schedule/balancer_episode.hpp — an episode of the two-level balancer: the moves from one plan
// (after a load step, a slow-drift trigger or a probe) until the plan stands, and whether the
// plan it ends with stays.
//
// Confirmation: once a moved plan has a window of judged runs, it moves once more to the
// optimum of the estimates (the moved device's now have twice the runs), then only for a
// predicted gain beyond the noise (at most level1_steps moves an episode), or, for
// Moves::young_runs runs after a step, wherever the optimum lies Moves::young_move of the work
// away without idling a device: the new regime's noise, which hedges the optimum, is still coming
// in (docs/decisions/008). Then the plan must pay: its median run against the runs of the plan
// the episode started from; slower by more than Moves::must_pay beyond the comparison's noise, it
// goes back (a move made on noise, or a retraining misled by it, does not stick), as does a plan
// that gave work to a device the old plan left idle and is not faster at all (docs/decisions/010).
// After a plan went back, slow drift waits (a backoff that doubles each time).
#pragma once

#include <sinew/config.hpp>
#include <sinew/options.hpp>

#include <cstddef>
#include <optional>

namespace sinew::detail {

// The plan an episode started from, its median run then, and the device slowest in those runs
// (whose noise the comparison with the new plan must see past).
struct EpisodeOrigin {
  Config plan;
  double ms = 0;
  std::size_t slowest = 0;
};

class Episode {
 public:
  // Whether an episode is in progress (its plan is being confirmed), not watched.
  bool in_progress() const { return in_progress_; }
  // Starts one from `origin`, `moves` moves counted.
  void begin(EpisodeOrigin origin, unsigned moves);
  // A step's episode: young until `young_until` (an execution number).
  void begin_after_step(EpisodeOrigin origin, std::size_t young_until);

  unsigned moves() const { return moves_; }
  void count_move() { ++moves_; }
  // No more moves in this episode (a measured search's answer is checked as it is).
  void end_moves(unsigned level1_steps) { moves_ = level1_steps; }
  bool young(std::size_t execution) const { return execution < young_until_; }
  const std::optional<EpisodeOrigin>& origin() const { return origin_; }

  // The least predicted gain (log time) a confirming move needs: any for the first; while young
  // and `follow`ing the optimum, a fraction of the bound; else also `confirm_errors` of `se`.
  double least_gain(bool follow, double se, double log_bound, const BalancerTuning::Moves& tuning) const;

  // Whether the episode's plan pays: its median run `now_ms` over `runs` runs against the
  // origin's, under the bottleneck devices' noise `sigma`; `grows`: it gives work to a device the
  // origin left idle, which must be faster outright.
  bool pays(double now_ms, double sigma, std::size_t runs, bool grows, const BalancerTuning& tuning) const;
  // The plan stands: the episode ends; `went_back`: to the origin's plan (slow drift then waits).
  void close(bool went_back, const BalancerTuning::Moves& tuning);

  // Slow drift waits while this holds; one watched run passes.
  bool holding() const { return hold_ > 0; }
  void pass_held_run() { --hold_; }

 private:
  bool in_progress_ = false;
  unsigned moves_ = 0;  // level-1 moves of the episode
  std::optional<EpisodeOrigin> origin_;
  std::size_t young_until_ = 0;
  std::size_t hold_ = 0;     // watched runs before slow drift may move again
  std::size_t backoff_ = 0;  // the next hold after a plan goes back (0: the first)
};

}  // namespace sinew::detail
