// decompose/schedules/steal/leave_out.hpp — which device the runs of one steal plan leave out.
//
// Stealing balances the units between devices, each at its own rate; it cannot see that one
// device's work slows the others (a CPU device's kernels contend with a GPU's staged copies for
// host memory; a GPU's host thread and copies take cores from a loaded CPU device), where every
// split of the units is slower than the others alone. The runs of a plan measure it instead
// (docs/decisions/182): once `runs` runs with every device have ended, the next `runs` leave out
// the device that ran the least part of the units, where that part is under `part` (by default
// a half: the least of two or more devices, whatever its part); whichever way
// ran faster (the least time of its `runs` runs: a stalled run does not decide) is kept, and the
// other is tried again after an interval that starts at `runs` runs and doubles, up to
// `interval`, each time the kept way stays faster, so that a change of the machine's state (a
// load that ends) is found again; the run that takes a left-out device back starts it at its
// least range (StealRun), so that a trial costs little where its work still slows the others. A
// trial run slower than every one of the kept way's last `runs` runs ends its trial at once: it
// could still win on its least time, but the trials that would are rare, and each trial run
// that loses costs a run. One device is left out at a time; a plan whose runs overlap feeds
// each run's time to the way it ran. Pure arithmetic (test/unit/steal_leave_out_test.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace sinew::detail {

class LeaveOut {
 public:
  struct Settings {
    double part = 0.5;            // a device that ran under this part of the units is tried left out (0: never)
    std::size_t runs = 3;         // runs each way compared, at least 1
    std::size_t interval = 64;    // the most runs the kept way runs between two trials, at least `runs`
  };

  // The runtime device a run starting now leaves out; nothing: every device of the plan works.
  std::optional<std::size_t> for_next_run() const { return trying_ ? trial_ : kept_; }
  // The device the kept way leaves out (nothing: none), and the least times of the kept way and
  // of the last trial that decided (0: none yet), for the Report.
  std::optional<std::size_t> kept() const { return kept_; }
  double kept_best_ms() const;
  double other_best_ms() const { return other_best_ms_; }
  // A run ended: the device it left out, each runtime device's part of the units it ran, its time.
  void ran(const Settings& s, std::optional<std::size_t> left_out, const std::vector<double>& parts, double ms);

 private:
  void begin_trial(const Settings& s, const std::vector<double>& parts);
  void end_trial(const Settings& s, bool trial_wins);

  std::optional<std::size_t> kept_;   // left out by the kept way
  std::optional<std::size_t> trial_;  // left out by the way on trial (nothing: every device)
  bool trying_ = false;
  std::vector<double> kept_ms_, trial_ms_;  // the last runs' times, each way's
  std::size_t since_trial_ = 0, wait_ = 0;  // kept runs since the last trial; runs before the next (0: `runs`)
  double other_best_ms_ = 0;
};

}  // namespace sinew::detail
