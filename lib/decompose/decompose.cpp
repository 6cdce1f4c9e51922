// decompose/decompose.cpp — granularity and the split of units over devices and their slots.
#include "decompose/decompose.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <cmath>
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

std::string Decomposition::explain(const std::vector<DeviceInfo>& devices) const {
  std::ostringstream s;
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
