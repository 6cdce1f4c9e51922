// decompose/decompose.hpp — the locality-aware decomposition of a tree's data over devices.
//
// One partitioning serves every leaf of the tree: all partitioned vectors are split at the same
// unit boundaries, so a channel between two stages never leaves its device. The granule is the
// least number of units every leaf can run on with a legal NDRange; shares are honoured to within
// one granule and the remainder goes to the last partition, so no unit is lost or duplicated.
#pragma once

#include "tree/analysis.hpp"

#include <sinew/config.hpp>
#include <sinew/device.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sinew::detail {

struct Partition {
  std::size_t index = 0;
  std::size_t device = 0;     // runtime device index
  unsigned sub_device = 0;    // fission sub-device (CPU)
  unsigned queue = 0;         // overlap queue (GPU)
  std::size_t first = 0;      // first unit
  std::size_t units = 0;
};

// The dynamic schedule (Config::schedule): no units are placed before the run. Each slot (a
// GPU's overlap queue, a CPU or one of its sub-devices) takes chunks from one shared cursor as it
// gets ready (exec/chunks.hpp); the chunk it takes is sized here, guided as in EngineCL's HGuided
// scheduler: what is left / (kDivisor * slots), scaled by the slot's weight against the mean, in
// whole granules rounded down to their two leading binary digits, never below min_units; a rest smaller
// than min_units goes with the chunk before it, so the last chunk is never a sliver (nor a part
// of a granule).
struct DynamicChunks {
  std::vector<Partition> slots;  // who takes chunks: device, sub_device, queue (first/units unused)
  std::vector<double> weights;   // per slot: its device's share split over the device's slots
  // Per slot: the host's cores its chunks compute on (a CPU's compute units, a sub-device's), 0
  // for a GPU's queue, whose chunks cost the host only what its thread does (see net()).
  std::vector<unsigned> host_cores;
  // Per slot: the share of a host core its thread held while its chunks ran (Progress::host_ms
  // over busy_ms) as last measured, 0 where never measured (see net()).
  std::vector<double> occupancy;
  // Config::min_chunk rounded up to whole granules (at least one); for min_chunk 0, the units
  // over kAutoMin * slots. The heaviest slot's least chunk; a lighter slot's is in proportion to
  // its weight (at least a granule).
  std::size_t min_units = 1;
  // Config::min_chunk was given: chunks are cut to it even where one slot takes them all (a slot
  // alone otherwise takes everything in one chunk: there is no one to share with, and each chunk
  // more costs a launch and a wait; saxpy 50M on the H100 machine's CPU cut in nine guided
  // chunks took 1.1 ms over its 6 ms alone).
  bool min_chunk_given = false;
  // A slot under this fraction of the other slots' speed takes no chunk (0: every slot may take
  // part; the tests of the stop rule's arithmetic set it). See take().
  double negligible = 1.0 / 16;
  static constexpr double kDivisor = 2;
  static constexpr std::size_t kAutoMin = 64;
  // The units of slot `slot`'s next chunk when `remaining` units are left (at most `remaining`).
  std::size_t next(std::size_t slot, std::size_t remaining, std::size_t granule) const;
  // The least slot `slot` takes while more is left: min_units scaled by its weight against the
  // heaviest slot's, in whole granules, at least one.
  std::size_t least(std::size_t slot, std::size_t granule) const;

  // What the stop rule knows of a slot during a run (exec/chunks.cpp keeps it under the cursor's
  // lock): the units of its chunks still running or queued, those finished and the time they
  // took (from its first chunk's start to its last chunk's end), and whether it has stopped.
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
  // taking chunks would finish everything left and what they hold (a CPU 200x slower than the
  // GPU, given the least chunk of Mandelbrot's costly rows, ended long after the GPU had done all
  // the rest). Otherwise its guided chunk (next) is cut down so that it ends no later than the
  // others would finish the rest (a slot under an eighth of the others' speed: a quarter of
  // that; any other: so that what it holds and the chunk end halfway to then, leaving later
  // chunks for the others to take back should it slow down); a slot under `negligible` of the
  // others' speed takes nothing; the last slot taking chunks never stops, and a CPU slot left
  // alone so takes the rest in one chunk (unless min_chunk was given).
  std::size_t take(std::size_t slot, std::size_t remaining, std::size_t granule,
                   const std::vector<Progress>& progress) const;
  static constexpr double kSlowShare = 8, kSlowMargin = 4;  // see take()
  // The rates take() predicts with, in units per ms (or relative to the weights alone).
  std::vector<double> rates(const std::vector<Progress>& progress) const;
  // What slot `slot` adds to the run (rate `rate`, of rates()): its rate less what its host
  // thread takes from the CPU slots taking chunks. A GPU queue's thread stages pageable data
  // (memcpy into the pinned ring) and polls its events: while it does, a host core works for it
  // and not for the CPU device, whose rate per core is its rate over its cores. Saxpy from host
  // memory on the H100 machine: a queue did about what one of the 16 cores does in its place
  // (0.5 M floats per ms each), so every GPU chunk cost the CPU as much as it gave (the CPU
  // alone 6.1 ms, dynamic with 29 GPU chunks 8.1). A CPU slot's own contention is in its
  // measured rate already: it is charged nothing.
  double net(std::size_t slot, double rate, const std::vector<double>& r, const std::vector<Progress>& progress) const;

  // Execution to execution: each device's rate (its slots' together) and occupancy as last
  // measured, kept by the runtime's cache of the plan's decomposition (shared by its copies,
  // under a mutex). A run starts from them (seeded) rather than from the plan's weights, which
  // were measured on another machine state (bench_dynamic's load step: weights from the unloaded
  // solo speeds gave the GPU its first chunks under a load that had made it worth nothing). Per
  // device, not per slot: a device's slots are alike, and one measured slow by chance (a small
  // chunk, a busy moment) would be kept out of every later run on that alone.
  struct Memory {
    std::mutex mutex;
    std::vector<double> rate, occupancy;  // per runtime device index; rate 0: never measured
    // Per runtime device index, for a device the remembered rates keep out: the runs it sits out
    // before its next probe, and the gap its last probe began (0: not kept out). See probes.
    std::vector<unsigned> skip, gap;
    // skip and gap cover `devices` devices at least (under mutex).
    void cover(std::size_t devices) {
      skip.resize(std::max(skip.size(), devices), 0);
      gap.resize(skip.size(), 0);
    }
  };
  std::shared_ptr<Memory> memory = std::make_shared<Memory>();
  // A copy whose weights are the remembered rates, each device's split over its slots as the
  // plan's weights split it (normalised to add up to 1; a device never measured keeps its
  // weights, scaled as the remembered devices' rates are to their weights), whose occupancy is
  // the remembered one, and whose `probes` are set. As it is when nothing is remembered. Each
  // call is a run's start: it counts the runs a kept-out device sits out (Memory::skip).
  DynamicChunks seeded() const;
  // Seeded: the slots that the remembered rates keep out of the run (take() gives them nothing
  // at its start) but whose device was measured before, in the runs that probe it. Each takes
  // its least chunk first, so its device is measured again and comes back once it pays (the load
  // gone): a device kept out by its remembered rate alone would never be measured again. A device
  // is probed in the first run that keeps it out, then after 1, 2, 4, ... runs without a probe,
  // at most kProbeGap, and in the run after one where the devices taking chunks ran kSlowdown
  // times slower than in the run before, or more (remember()): a load that makes a kept-out
  // device worth its place is seen two runs after it came. Even a probe that ends early costs
  // the run: a GPU queue's probe of saxpy beside a CPU that took the rest, 0.06% of the units,
  // cost 5.7% in every run (H100 machine, 101 rounds; LB efficiency 0.87, 0.95 with no GPU slot),
  // and a CPU 260x slower than the GPU, its least chunk of Mandelbrot's costly rows, ended after
  // the GPU had done all the rest (and every probing run loses the GPU's static split,
  // alone_device). A device that stays out costs the runs but one in kProbeGap + 1, and those a
  // load-like slowdown makes suspect (by noise alone, 5 of 100 runs of saxpy 50M on the H100
  // machine's CPU fell 1.5x below the run before). Still in every run, the others' measured
  // change moves its remembered rate (remember()).
  std::vector<bool> probes;
  static constexpr unsigned kProbeGap = 32;
  static constexpr double kSlowdown = 1.5;
  // The units of slot `slot`'s probe: its least chunk by the plan's weights, not by the seeded
  // ones. A probe sized by the rate the last probe measured shrank run after run, each smaller
  // chunk's time more its latency than its work and its rate lower (H100 machine, saxpy 50M: a
  // GPU queue's probe went 872608, 17824, 3616, 800, 192, 32 units in six runs, and a queue
  // measured at 32 units per 0.1 ms stayed out under a load that made it worth a tenth of the work).
  std::size_t probe(std::size_t slot, std::size_t granule) const;
  std::vector<double> plan_weights;  // seeded: the plan's weights (empty: `weights` are)
  // Per runtime device index: for a discrete device, the partitions the static split gives it
  // when it runs the tree alone (streamed chunks dealt round its queues, the last ones shrinking;
  // empty for any other, and for every device where the plan gives a share to one device only
  // or sets min_chunk). Where every other device's slots take nothing at the start and none
  // probes, the run cuts these as its chunks at once and each queue streams them as a static
  // split does (alone_device): the same units on the same device, with its downloads overlapping
  // its kernels. (H100 machine, Mandelbrot 8192², the CPU under a 16th of the GPU's speed: its four
  // queues each computed a quarter and only then downloaded it, 1.9 ms over the static split's
  // 12.5 ms.)
  std::vector<std::vector<Partition>> alone;
  // The device that runs the whole tree alone as above, if any (nothing measured yet in the run),
  // of the devices taking part (taking_part) or of a run of `total` units.
  std::optional<std::size_t> alone_device(const std::set<std::size_t>& taking) const;
  std::optional<std::size_t> alone_device(std::size_t total, std::size_t granule) const {
    return alone_device(taking_part(total, granule));
  }
  // The devices with a slot that probes or takes a chunk at the start of a run of `total` units
  // (nothing measured yet in it). Another device's slots would stop at their first ask, so the
  // run gives that device no worker: its idle worker was the one the calling thread drove, and
  // the CPU's ran on a pool thread, woken while PoCL's threads held the cores. (H100 machine,
  // saxpy 50M with the GPU's queue kept out: dynamic 1.001x the CPU alone, median of 101 rounds,
  // against 1.012-1.018 with the idle worker: one run against three, whose rounds' quartiles
  // span +-6%; under a 16-thread load no difference stood out of the rounds' noise.)
  std::set<std::size_t> taking_part(std::size_t total, std::size_t granule) const;
  // Keeps a finished run's measured rates and occupancies. A device not measured in this run
  // keeps its remembered rate scaled as the measured devices' rates changed since they were
  // remembered: a CPU slowed 3.6x by a load leaves the GPU it had kept out as far behind as
  // before, rather than suddenly worth its unloaded rate again; a slowdown of kSlowdown or more
  // has it probed in the next run (see probes), which measures what it is worth now.
  void remember(const std::vector<Progress>& progress) const;
};

// The dynamic schedule's plan item min_chunk: the least units of a chunk (0: unset, a 64th of a
// slot's even share).
std::size_t min_chunk_item(const Config& plan);

struct Decomposition {
  Config config;
  std::size_t total_units = 0;
  std::size_t granule = 1;
  std::vector<Partition> parts;  // static schedule; empty for a dynamic one
  DynamicChunks dynamic;         // the dynamic schedule's slots (config.schedule == "dynamic")
  bool is_dynamic() const { return config.schedule == "dynamic"; }
  // Which units run on which device / sub-device / queue.
  std::string explain(const std::vector<DeviceInfo>& devices) const;
  std::string explained;  // explain()'s text, kept by the runtime's cache (empty: not kept)
};

// Units per granule: what every node constrains it to (NodeImpl::constrain: a kernel leaf gets a
// whole number of work-items, a range divisible by its required local size, and — where the total
// allows — a multiple of each device's preferred work-group multiple: warp, wavefront).
std::size_t granularity(const NodeImpl& root, const Analysis& an, const std::vector<DeviceInfo>& devices);
// `granule` with what a plan's own items ask of the partitions (NodeImpl::plan_granule: a
// divide-and-conquer crossover wants whole subproblems below it).
std::size_t plan_granularity(const NodeImpl& root, std::size_t granule, const Config& config);

// How a discrete device's share may be cut beyond one partition per queue. When the tree is
// streamable, the share is cut into chunks dealt round-robin to the `overlap` queues, so each
// queue pipelines upload, kernels and download chunk after chunk. Chunks are `chunk_bytes` when
// it is set, else an eighth of the device's data, between 16 and 64 MB (on the H100 machine 16 MB
// chunks suit 80 MB, 64 MB chunks 800 MB: every chunk costs the driver some tens of us). The
// last chunks shrink by halves, so the pipeline drains quickly: what runs after the last upload
// is the kernels and download of a small chunk, not of a whole one.
// What a run allocates on a device for one tree, from its analysis alone: the buffers of one
// partition (slices, halo buffers, a swapping loop copy's twin), each so many bytes per unit of
// the partition plus its halo units, and those of each context (replicas of vectors read whole).
// On a host-unified (zero-copy) device some are the host memory itself and cost nothing. The
// executor allocates no more than this (exec/prepare.cpp; a halo buffer that holds its slice
// costs less), so a plan whose footprint fits DeviceInfo::memory() fits the device.
struct Footprint {
  struct Buffer {
    std::string vector;       // its name, for messages
    const char* what = "";    // "slice", "halo buffer", ...
    std::uint64_t unit_bytes = 0;
    std::size_t extra_units = 0;      // halo units around the partition's
    bool host_on_zero_copy = false;   // the host memory itself on a host-unified device
    std::uint64_t bytes(std::size_t units) const { return (units + extra_units) * unit_bytes; }
  };
  std::vector<Buffer> partition;  // every partition's
  std::vector<Buffer> context;    // once per context (unit_bytes is the whole vector's bytes)

  bool empty() const { return partition.empty() && context.empty(); }
  // The bytes of one partition of `units` units, and of a context's replicas.
  std::uint64_t bytes(std::size_t units, bool zero_copy) const;
  std::uint64_t context_bytes(bool zero_copy) const;
  // The most units one partition may hold when `sets` partitions' buffers live at once beside
  // the context's, in `memory` bytes with no buffer above `largest` bytes (0 when not even one
  // unit fits).
  std::size_t units_within(std::uint64_t memory, std::uint64_t largest, std::size_t sets, bool zero_copy) const;
  // The partition buffer that grows most with its units (the one a message names).
  const Buffer* largest(bool zero_copy) const;
};
Footprint memory_footprint(const Analysis& an);

struct Streaming {
  bool streamable = false;
  std::size_t bytes_per_unit = 0;
  std::size_t chunk_bytes = 0;  // 0: chosen by the device's data as above
  // The tree exchanges halo units or refreshes replicas of what it writes between its partitions
  // as it runs: a discrete device's share is one partition on one queue whatever the overlap
  // level, since more queues would only add exchanges and barriers (on the H100 a heat loop on
  // 2-4 queues of the GPU ran 3-6x slower).
  bool one_queue = false;
  static constexpr std::size_t kMinChunk = 16u << 20, kMaxChunk = 64u << 20;
  static constexpr std::size_t kTail = 3;  // chunks that shrink (weights 1/2, 1/4, 1/8)
  // What the tree allocates per partition (empty: memory is not checked). A device's share whose
  // buffers exceed its memory (DeviceInfo::memory()) is, for a streamable tree, dragged through
  // it: cut into chunks small enough that the buffers of one chunk per queue (per sub-device on a
  // CPU; each queue reuses its buffers for its chunks, exec/prepare.cpp) fit; for any other tree
  // it is an error naming the vector, its size and the device's memory.
  Footprint footprint;
  // Why the tree cannot stream (Analysis::joined), for that error.
  Analysis::Joined joined;
};

// "48.0 KB (49152 bytes)"; "its memory cap of ... (...; the device has ...)" or "its memory of
// ...", for messages.
std::string size_text(std::uint64_t bytes);
std::string memory_text(const DeviceInfo& info);

// `config` with the shares that exceed what a device can hold (by Streaming::footprint and
// DeviceInfo::memory(), for a tree that cannot stream) moved to the devices with room: first to
// those with a share, in proportion to it, then to the others, in proportion to their room. A
// streamable tree's shares stay (its devices drag their shares through) but for a device that
// cannot hold one granule. Throws the error decompose() would when the devices together cannot
// hold the tree.
Config fit_memory(const Config& config, std::size_t total, std::size_t granule, const std::vector<DeviceInfo>& devices,
                  const Streaming& streaming);

// Splits `total` units by `config` over `devices` (a dynamic plan: lists its slots and their
// weights; the executor cuts the chunks as the devices take them). Throws errc::invalid_argument for a config that
// does not fit the devices (Config::check).
Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                        const std::vector<DeviceInfo>& devices, const Streaming& streaming = {});

}  // namespace sinew::detail
