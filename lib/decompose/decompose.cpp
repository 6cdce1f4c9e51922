// decompose/decompose.cpp — granularity and the split of units over devices and their slots.
#include "decompose/decompose.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace sinew::detail {

std::size_t granularity(const NodeImpl& root, const Analysis& an, const std::vector<DeviceInfo>& devices) {
  GranuleRules rules;
  visit(root, [&](const NodeImpl& n) { n.constrain(rules, devices); });
  std::size_t both = std::lcm(rules.hard, rules.soft);
  return an.units % both == 0 ? both : rules.hard;
}

Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                        const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  config.check(devices);
  double sum = 0;
  for (double s : config.shares) sum += s;

  Decomposition dec;
  dec.config = config;
  dec.total_units = total;
  dec.granule = granule = std::max<std::size_t>(1, granule);
  const std::size_t granules = total / granule;

  // Units per device: shares rounded to whole granules; the last active device takes the rest.
  std::vector<std::size_t> units(devices.size(), 0);
  std::size_t last = 0, given = 0;
  for (std::size_t d = 0; d < devices.size(); ++d)
    if (config.shares[d] > 0) last = d;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (config.shares[d] <= 0 || d == last) continue;
    std::size_t g = static_cast<std::size_t>(std::llround(config.shares[d] / sum * static_cast<double>(granules)));
    units[d] = std::min(g * granule, total - given);
    given += units[d];
  }
  units[last] = total - given;

  if (dec.is_dynamic()) {
    // Every device with a share takes part, whatever units its share would round to.
    for (std::size_t d = 0; d < devices.size(); ++d) {
      if (config.shares[d] <= 0) continue;
      const auto& info = devices[d];
      std::vector<std::pair<unsigned, double>> slots;  // (sub-device or queue, weight within the device)
      const FissionConfig* f = nullptr;
      for (const auto& c : info.fission_configs)
        if (c.name == config.fission) f = &c;
      if (info.discrete) {
        for (unsigned q = 0; q < config.overlap; ++q) slots.push_back({q, 1});
      } else if (!f || f->is_none()) {
        slots.push_back({0, 1});
      } else {
        for (unsigned s = 0; s < f->groups.size(); ++s) slots.push_back({s, static_cast<double>(f->groups[s])});
      }
      double within = 0;
      for (const auto& s : slots) within += s.second;
      for (const auto& [at, w] : slots) {
        Partition p;
        p.device = d;
        (info.discrete ? p.queue : p.sub_device) = at;
        p.index = dec.dynamic.slots.size();
        dec.dynamic.slots.push_back(p);
        dec.dynamic.weights.push_back(config.shares[d] / sum * w / within);
      }
    }
    // min_chunk 0: a 64th of a slot's even share, so the guided tail ends in a few dozen chunks
    // rather than in single granules (each chunk costs a GPU driver some tens of microseconds).
    const std::size_t floor_units =
        config.min_chunk ? config.min_chunk
                         : total / (DynamicChunks::kAutoMin * std::max<std::size_t>(1, dec.dynamic.slots.size()));
    dec.dynamic.min_units = std::max<std::size_t>(1, (floor_units + granule - 1) / granule) * granule;
    return dec;
  }

  for (std::size_t d = 0, first = 0; d < devices.size(); ++d) {
    if (units[d] == 0) continue;
    const auto& info = devices[d];
    std::vector<std::pair<unsigned, unsigned>> slots;  // (sub_device, queue)
    std::vector<double> weights;
    if (!info.discrete) {
      auto f = std::find_if(info.fission_configs.begin(), info.fission_configs.end(),
                            [&](const FissionConfig& c) { return c.name == config.fission; });
      if (f == info.fission_configs.end() || f->is_none()) {
        slots.push_back({0, 0});
        weights.push_back(1);
      } else {
        for (unsigned s = 0; s < f->groups.size(); ++s) {
          slots.push_back({s, 0});
          weights.push_back(f->groups[s]);  // sub-devices get work by their compute units
        }
      }
    } else {
      // One slot per queue, or — streaming — chunks dealt to the queues (see Streaming).
      std::size_t chunks = streaming.one_queue ? 1 : config.overlap, tail = 0;
      if (streaming.streamable && streaming.bytes_per_unit) {
        const std::size_t bytes = units[d] * streaming.bytes_per_unit;
        const std::size_t chunk =
            streaming.chunk_bytes
                ? streaming.chunk_bytes
                : std::clamp<std::size_t>(bytes / 8, Streaming::kMinChunk, Streaming::kMaxChunk);
        chunks = std::max(chunks, (bytes + chunk - 1) / std::max<std::size_t>(1, chunk));
        // The shrinking tail, where there are whole chunks before it (its weights add up to less
        // than one chunk, so no chunk grows past the size).
        if (chunks > Streaming::kTail) {
          tail = Streaming::kTail;
          chunks += tail;
        }
        chunks = std::min(chunks, std::max<std::size_t>(config.overlap, units[d] / granule));
        tail = std::min(tail, chunks > 1 ? chunks - 1 : 0);
      }
      for (std::size_t c = 0; c < chunks; ++c) {
        slots.push_back({0, static_cast<unsigned>(c % config.overlap)});
        const std::size_t from_end = chunks - c;  // 1 for the last chunk
        weights.push_back(from_end <= tail ? std::ldexp(1.0, -static_cast<int>(tail - from_end + 1)) : 1.0);
      }
    }
    // Split the device's units over its slots in granules, by weight: slot s ends at the granule
    // nearest its cumulative weight, so rounding never piles up on one slot.
    const double wsum = std::accumulate(weights.begin(), weights.end(), 0.0);
    const std::size_t dev_granules = units[d] / granule;
    std::size_t done = 0;
    double cumulative = 0;
    for (std::size_t s = 0; s < slots.size(); ++s) {
      cumulative += weights[s];
      const std::size_t end =
          s + 1 == slots.size()
              ? units[d]
              : std::min(units[d], static_cast<std::size_t>(std::llround(cumulative / wsum * static_cast<double>(dev_granules))) * granule);
      if (end <= done) continue;
      dec.parts.push_back({dec.parts.size(), d, slots[s].first, slots[s].second, first + done, end - done});
      done = end;
    }
    first += units[d];
  }
  return dec;
}

std::size_t DynamicChunks::next(std::size_t slot, std::size_t remaining, std::size_t granule) const {
  const double mean = 1.0 / static_cast<double>(slots.size());  // the weights add up to 1
  const double guided = static_cast<double>(remaining) / (kDivisor * static_cast<double>(slots.size())) *
                        (weights.at(slot) / mean);
  // Whole granules, rounded down to their two leading binary digits (1, 2, 3, 4, 6, 8, 12, ...):
  // at most a third less than guided, and few distinct chunk sizes from run to run, since PoCL
  // compiles a kernel for each new size. (Not measured to matter yet: 512² Mandelbrot on two
  // PoCL devices of a shared machine ran 12-25 ms a run either way, as the load came and went.)
  std::size_t granules = std::max<std::size_t>(1, static_cast<std::size_t>(guided / static_cast<double>(granule)));
  if (const int low = std::bit_width(granules) - 2; low > 0) granules &= ~((std::size_t{1} << low) - 1);
  const std::size_t at_least = least(slot, granule);
  std::size_t units = std::max(granules * granule, at_least);
  return units >= remaining || remaining - units < at_least ? remaining : units;
}

// A CPU 200x slower than a GPU's queues, given min_units of Mandelbrot's costly rows, finished
// long after the GPU had done everything else (H100 machine: 0.17x the GPU alone at 8192²).
std::size_t DynamicChunks::least(std::size_t slot, std::size_t granule) const {
  const double heaviest = *std::max_element(weights.begin(), weights.end());
  const double scaled = heaviest > 0 ? static_cast<double>(min_units) * weights.at(slot) / heaviest : 0;
  return std::max(granule, static_cast<std::size_t>(scaled) / granule * granule);
}

std::vector<double> DynamicChunks::rates(const std::vector<Progress>& progress) const {
  double measured = 0, measured_weight = 0;
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (progress.at(s).done && progress[s].busy_ms > 0) {
      measured += static_cast<double>(progress[s].done) / progress[s].busy_ms;
      measured_weight += weights.at(s);
    }
  const double scale = measured > 0 && measured_weight > 0 ? measured / measured_weight : 1;
  std::vector<double> r(slots.size());
  for (std::size_t s = 0; s < slots.size(); ++s)
    r[s] = progress[s].done && progress[s].busy_ms > 0 ? static_cast<double>(progress[s].done) / progress[s].busy_ms
                                                       : weights.at(s) * scale;
  return r;
}

std::size_t DynamicChunks::take(std::size_t slot, std::size_t remaining, std::size_t granule,
                                const std::vector<Progress>& progress) const {
  if (remaining == 0) return 0;
  std::size_t units = next(slot, remaining, granule);
  const std::vector<double> r = rates(progress);
  double others = 0, held = 0;  // the other slots still taking chunks: their rate, their backlog
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (s != slot && !progress[s].stopped) {
      others += r[s];
      held += static_cast<double>(progress[s].held);
    }
  // Rates are units per ms, blind to what the units cost. The slot's own measure may come from
  // cheaper units than the others' (Mandelbrot's rows above the set, cut first): it trusts the
  // slower of it and its weight scaled as the others' measured rates are to theirs.
  double mine = r[slot], measured = 0, measured_weight = 0;
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (s != slot && progress[s].done && progress[s].busy_ms > 0) {
      measured += r[s];
      measured_weight += weights[s];
    }
  if (measured_weight > 0) mine = std::min(mine, weights[slot] * measured / measured_weight);
  if (others <= 0) return units;  // no one else would take the rest
  // A slot that could do at most a 17th of the rest gains the run at most 6%, and costs it more:
  // a CPU device's threads take the cores that copy the GPUs' chunks in and out (H100 machine,
  // Mandelbrot 8192², the CPU 130x slower: 123 small CPU chunks, 0.88x the GPU alone).
  if (mine <= 0 || mine < negligible * others) return 0;
  const double rest = static_cast<double>(remaining) + held;
  const double own = static_cast<double>(progress[slot].held);
  const std::size_t at_least = std::min(least(slot, granule), remaining);
  if ((own + static_cast<double>(at_least)) / mine > rest / others) return 0;
  // The chunk that would end when the others end the rest without it: (own + c) / mine =
  // (rest - c) / others.
  double balanced = (mine * rest - others * own) / (others + mine);
  // A slot that could do at most a ninth of the rest gains the run little and, its chunk landing
  // on units dearer than those it was measured on, could lose it much: its chunks are a quarter
  // of that, so that it still ends with the others when its units cost up to 4x what it predicts.
  if (mine * kSlowShare < others) balanced /= kSlowMargin;
  const std::size_t cap =
      std::max(at_least, balanced > 0 ? static_cast<std::size_t>(balanced / static_cast<double>(granule)) * granule : 0);
  if (units > cap) units = remaining - cap < granule ? remaining : cap;  // never leave part of a granule
  return units;
}

std::string Decomposition::explain(const std::vector<DeviceInfo>& devices) const {
  std::ostringstream s;
  if (is_dynamic()) {
    s << "decomposition: " << total_units << " units, granule " << granule << ", dynamic: " << dynamic.slots.size()
      << " slot(s) take guided chunks (what is left / " << DynamicChunks::kDivisor << " / slots, by weight; at least "
      << dynamic.min_units << " units) as they get ready, config " << config.str() << "\n";
    for (std::size_t i = 0; i < dynamic.slots.size(); ++i) {
      const auto& p = dynamic.slots[i];
      const auto& d = devices.at(p.device);
      s << "  slot " << i << " " << d.id() << " (" << d.name << ")";
      if (!d.discrete && config.fission != "none") s << " sub-device " << p.sub_device;
      if (d.discrete) s << " queue " << p.queue;
      s << ": weight " << std::setprecision(3) << dynamic.weights[i] << ", chunks of "
        << dynamic.next(i, total_units, granule) << " units at the start down to " << dynamic.min_units << "\n";
    }
    return s.str();
  }
  s << "decomposition: " << total_units << " units, granule " << granule << ", " << parts.size()
    << " partition(s), config " << config.str() << "\n";
  for (const auto& p : parts) {
    const auto& d = devices.at(p.device);
    s << "  #" << p.index << " " << d.id() << " (" << d.name << ")";
    if (!d.discrete && config.fission != "none") s << " sub-device " << p.sub_device;
    if (d.discrete) s << " queue " << p.queue;
    s << ": units [" << p.first << ", " << p.first + p.units << ") = " << p.units << "\n";
  }
  return s.str();
}

}  // namespace sinew::detail
