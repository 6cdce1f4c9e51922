// decompose/schedules/dynamic/chunks.hpp — the dynamic schedule's chunk arithmetic: no units are
// placed before the run; each slot (a GPU's overlap queue, a CPU or one of its sub-devices) takes
// chunks from one shared cursor as it gets ready (schedules/dynamic/run.cpp), each sized here,
// guided as in EngineCL's HGuided scheduler: what is left / (divisor * slots), scaled by the
// slot's weight against the mean, in whole granules rounded down to their two leading binary
// digits, never below the slot's least chunk; a rest smaller than that goes with the chunk before
// it, so the last chunk is never a sliver (nor a part of a granule). The stop rule (take) keeps a
// slot from taking a chunk that would end after the others finish; what a run measured seeds the
// next run of the plan (DynamicMemory). Pure arithmetic: tested against synthetic slot rates.
#pragma once

#include "decompose/decompose.hpp"
#include "decompose/schedule_policy.hpp"

#include <sinew/options.hpp>

#include <cstddef>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

namespace sinew::detail {

// What runs of one dynamic plan learn from each other: each device's rate (its slots' together)
// and host occupancy as last measured, and when a device the remembered rates keep out is probed
// next. Per device, not per slot: a device's slots are alike, and one measured slow by chance (a
// small chunk, a busy moment) would be kept out of every later run on that alone. A plan's runs
// start from it rather than from the plan's weights, which were measured in another machine state
// (docs/decisions/025). Locked: the runs of one plan may overlap.
struct DynamicMemory final : ScheduleMemory {
  std::mutex mutex;
  std::vector<double> rate, occupancy;  // per runtime device index; rate 0: never measured
  // Per runtime device index, for a device the remembered rates keep out: the runs it sits out
  // before its next probe, and the interval its last probe began (0: not kept out). See
  // DynamicChunks::probes.
  std::vector<unsigned> runs_until_probe, probe_interval;
  // The probe counters cover `devices` devices at least (under mutex).
  void track_devices(std::size_t devices) {
    runs_until_probe.resize(std::max(runs_until_probe.size(), devices), 0);
    probe_interval.resize(runs_until_probe.size(), 0);
  }
};

struct DynamicChunks final : PolicyPlan {
  std::vector<Partition> slots;  // who takes chunks: device, sub_device, queue (first/units unused)
  std::vector<double> weights;   // per slot: its device's share split over the device's slots
  // Per slot: the host's cores its chunks compute on (a CPU's compute units, a sub-device's), 0
  // for a GPU's queue, whose chunks cost the host only what its thread does (see
  // rate_after_host_cost()).
  std::vector<unsigned> host_cores;
  // Per slot: the share of a host core its thread held while its chunks ran (Progress::host_ms
  // over busy_ms) as last measured, 0 where never measured (see rate_after_host_cost()).
  std::vector<double> occupancy;
  // Config::min_chunk rounded up to whole granules (at least one); for min_chunk 0, the units
  // over least_chunk_parts * slots. The heaviest slot's least chunk; a lighter slot's is in
  // proportion to its weight (at least a granule).
  std::size_t min_units = 1;
  // Config::min_chunk was given: chunks are cut to it even where one slot takes them all (a slot
  // alone otherwise takes everything in one chunk: there is no one to share with, and each chunk
  // more costs a launch and a wait; docs/decisions/021).
  bool min_chunk_given = false;
  // The tuned values (RuntimeOptions::schedule_tuning). `negligible` 0: every slot may take part
  // (the tests of the stop rule's arithmetic set it).
  ScheduleTuning::Dynamic tuning;
  // The units of slot `slot`'s next chunk when `remaining` units are left (at most `remaining`).
  std::size_t next(std::size_t slot, std::size_t remaining, std::size_t granule) const;
  // The least slot `slot` takes while more is left: min_units scaled by its weight against the
  // heaviest slot's, in whole granules, at least one.
  std::size_t least_chunk(std::size_t slot, std::size_t granule) const;

  // What the stop rule knows of a slot during a run (the run's cursor keeps it under its lock):
  // the units of its chunks still running or queued, those finished and the time they took (from
  // its first chunk's start to its last chunk's end), and whether it has stopped.
  struct Progress {
    std::size_t held = 0, done = 0;
    double busy_ms = 0;
    double host_ms = 0;  // the CPU time its host thread spent over busy_ms
    bool stopped = false;
  };
  // The units slot `slot` takes next when `remaining` are left; 0: it stops taking chunks. Each
  // slot's rate is its measured units per ms once a chunk of it has finished, else its weight
  // scaled as the measured slots' rates are to their weights (before any chunk finished the
  // weights alone: the comparison below does not depend on their scale). The slot stops when
  // its least chunk, queued behind what it holds, would end later than the other slots still
  // taking chunks would finish everything left and what they hold (docs/decisions/022).
  // Otherwise its guided chunk (next) is cut down so that it ends no later than the others would
  // finish the rest (a slot under 1/slow_share of the others' speed: 1/slow_margin of that; any
  // other: so that what it holds and the chunk end halfway to then, leaving later chunks for the
  // others to take back should it slow down); a slot under `negligible` of the others' speed
  // takes nothing; the last slot taking chunks never stops, and a CPU slot left alone so takes
  // the rest in one chunk (unless min_chunk was given).
  std::size_t take(std::size_t slot, std::size_t remaining, std::size_t granule,
                   const std::vector<Progress>& progress) const;
  // take()'s share for a slot whose device alone still takes part: the rest dealt evenly over the
  // device's queues without a chunk in hand; nothing where other devices take part.
  std::optional<std::size_t> even_share_of_one_device(std::size_t slot, std::size_t remaining, std::size_t granule,
                                                      std::size_t at_least, const std::vector<double>& r,
                                                      const std::vector<Progress>& progress) const;
  // The rates take() predicts with, in units per ms (or relative to the weights alone).
  std::vector<double> rates(const std::vector<Progress>& progress) const;
  // What slot `slot` adds to the run (rate `rate`, of rates()): its rate less what its host
  // thread takes from the CPU slots taking chunks. A GPU queue's thread stages pageable data
  // (memcpy into the pinned ring) and polls its events: while it does, a host core works for it
  // and not for the CPU device, whose rate per core is its rate over its cores
  // (docs/decisions/023). A CPU slot's own contention is in its measured rate already: it is
  // charged nothing.
  double rate_after_host_cost(std::size_t slot, double rate, const std::vector<double>& r,
                              const std::vector<Progress>& progress) const;

  // A copy for one run of the plan whose memory is `memory`: its weights are the remembered
  // rates, each device's split over its slots as the plan's weights split it (normalised to add
  // up to 1; a device never measured keeps its weights, scaled as the remembered devices' rates
  // are to their weights), its occupancy the remembered one, and its `probes` set. As it is when
  // nothing is remembered. Each call is a run's start: it counts the runs a kept-out device sits
  // out (DynamicMemory::runs_until_probe).
  DynamicChunks for_run(DynamicMemory& memory) const;
  // For a run: the slots that the remembered rates keep out of the run (take() gives them nothing
  // at its start) but whose device was measured before, in the runs that probe it. Each takes its
  // probe chunk first, so its device is measured again and comes back once it pays (the load
  // gone): a device kept out by its remembered rate alone would never be measured again. A device
  // is probed in the first run that keeps it out, then after 1, 2, 4, ... runs without a probe,
  // at most tuning.probe_interval, and in the run after one where the devices taking chunks ran
  // tuning.slowdown times slower than in the run before, or more (remember()). Even a probe that
  // ends early costs the run, and a device that stays out costs the runs but one in
  // probe_interval + 1 and those a load-like slowdown makes suspect (docs/decisions/025). Still
  // in every run, the others' measured change moves its remembered rate (remember()).
  std::vector<bool> probes;
  // The units of slot `slot`'s probe: its least chunk by the plan's weights, not by the
  // remembered ones: a probe sized by the rate the last probe measured shrinks run after run,
  // each smaller chunk's time more its latency than its work and its rate lower
  // (docs/decisions/025).
  std::size_t probe(std::size_t slot, std::size_t granule) const;
  std::vector<double> plan_weights;  // for a run: the plan's weights (empty: `weights` are)
  // Per runtime device index: for a discrete device, the partitions the static split gives it
  // when it runs the tree alone (streamed chunks dealt round its queues, the last ones shrinking;
  // empty for any other, and for every device where the plan gives a share to one device only
  // or sets min_chunk). Where every other device's slots take nothing at the start and none
  // probes, the run cuts these as its chunks at once and each queue streams them as a static
  // split does (alone_device): the same units on the same device, with its downloads overlapping
  // its kernels (docs/decisions/024).
  std::vector<std::vector<Partition>> alone;
  // The device that runs the whole tree alone as above, if any (nothing measured yet in the run),
  // of the devices taking part (taking_part) or of a run of `total` units.
  std::optional<std::size_t> alone_device(const std::set<std::size_t>& taking) const;
  std::optional<std::size_t> alone_device(std::size_t total, std::size_t granule) const {
    return alone_device(taking_part(total, granule));
  }
  // The devices with a slot that probes or takes a chunk at the start of a run of `total` units
  // (nothing measured yet in it). Another device's slots would stop at their first ask, so the
  // run gives that device no worker: an idle worker holds a host thread that the devices at work
  // need (docs/decisions/024).
  std::set<std::size_t> taking_part(std::size_t total, std::size_t granule) const;
  // Keeps a finished run's measured rates and occupancies in `memory`. A device not measured in
  // this run keeps its remembered rate scaled as the measured devices' rates changed since they
  // were remembered: a CPU slowed by a load leaves the GPU it had kept out as far behind as
  // before, rather than suddenly worth its unloaded rate again; a slowdown of tuning.slowdown or
  // more has it probed in the next run (see probes), which measures what it is worth now.
  void remember(DynamicMemory& memory, const std::vector<Progress>& progress) const;
};

// The dynamic schedule's plan item min_chunk: the least units of a chunk (0: unset, the even
// share of a slot over ScheduleTuning::Dynamic::least_chunk_parts).
std::size_t min_chunk_item(const Config& plan);

// The dynamic plan of `dec` (decomposed by the dynamic schedule); throws std::logic_error for
// another's.
const DynamicChunks& dynamic_chunks(const Decomposition& dec);

}  // namespace sinew::detail
