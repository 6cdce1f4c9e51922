// tools/kb_plot.cpp — `sinew kb plot`: a tree's measured points as an SVG chart (see kb_plot.hpp).
#include "kb_plot.hpp"

#include "svg.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

namespace sinew::tools {
namespace {

using plot::SvgSeries;

// The most panels one chart draws (device sets x inputs); the rest are named in the title.
constexpr std::size_t kMostPanels = 8;

std::string features_text(const KbFeatures& features) {
  std::ostringstream s;
  for (std::size_t i = 0; i < features.size(); ++i) s << (i ? ", " : "") << features[i].first << '=' << features[i].second;
  return features.empty() ? "(no features)" : s.str();
}

// The devices' ids ("cpu:0") of a device set signature, in order.
std::vector<std::string> device_ids(const std::string& device_set) {
  std::vector<std::string> ids;
  std::size_t from = 0;
  while (from < device_set.size()) {
    std::size_t end = device_set.find("; ", from);
    if (end == std::string::npos) end = device_set.size();
    const std::string item = device_set.substr(from, end - from);
    ids.push_back(item.substr(0, item.find(' ')));
    from = end + 2;
  }
  return ids;
}

// How a plan runs besides its shares: one series per device and plan shape.
std::string plan_shape(const Config& c) {
  return "fission=" + c.fission + ", overlap=" + std::to_string(c.overlap) +
         (c.schedule == "static" ? "" : ", " + c.schedule);
}

// The measured runs and the stored plan of one device set and input.
struct Group {
  std::string devices, features;
  std::vector<const KbRun*> runs;
  const KbEntry* stored = nullptr;
};

std::vector<Group> groups_of(const std::vector<KbRun>& runs, const std::vector<KbEntry>& entries) {
  std::vector<Group> groups;
  auto group = [&](const std::string& devices, const std::string& features) -> Group& {
    for (auto& g : groups)
      if (g.devices == devices && g.features == features) return g;
    groups.push_back({devices, features, {}, nullptr});
    return groups.back();
  };
  for (const auto& r : runs) group(r.key.devices, features_text(r.features)).runs.push_back(&r);
  for (const auto& e : entries) group(e.key.devices, features_text(e.features)).stored = &e;
  return groups;
}

plot::SvgPanel panel_of(const Group& g) {
  const std::vector<std::string> ids = device_ids(g.devices);
  std::map<std::string, SvgSeries> series;  // by legend label, in order of the label
  std::size_t colours = 0;
  for (const KbRun* r : g.runs)
    for (std::size_t d = 0; d < r->config.shares.size(); ++d) {
      const std::string label = (d < ids.size() ? ids[d] : "device " + std::to_string(d)) + " (" +
                                plan_shape(r->config) + ")";
      auto [it, added] = series.try_emplace(label);
      if (added) it->second = {label, plot::colour(colours++), SvgSeries::Style::points, {}, {}};
      it->second.x.push_back(r->config.shares[d]);
      it->second.y.push_back(r->time_ms);
    }
  plot::SvgPanel panel;
  panel.ylabel = "time (ms), " + g.features;
  for (auto& [label, s] : series) panel.series.push_back(std::move(s));
  if (g.stored) {
    SvgSeries ring{"stored plan: " + g.stored->config.str(), "#000000", SvgSeries::Style::rings, {}, {}};
    for (double share : g.stored->config.shares) {
      ring.x.push_back(share);
      ring.y.push_back(g.stored->time_ms);
    }
    panel.series.push_back(std::move(ring));
  }
  return panel;
}

}  // namespace

std::string kb_plot_svg(const KnowledgeBase& kb, const std::string& tree) {
  std::string label;
  for (const auto& t : kb.trees())
    if (t.tree == tree) label = t.label;
  const auto runs = kb.runs_for_tree(tree);
  const auto entries = kb.entries_for_tree(tree);
  const std::vector<Group> groups = groups_of(runs, entries);

  plot::SvgChart chart;
  chart.title = "tree " + tree + (label.empty() ? "" : " (" + label + ")") + ": " + std::to_string(runs.size()) +
                " measured runs";
  if (groups.size() > kMostPanels)
    chart.title += ", the first " + std::to_string(kMostPanels) + " of " + std::to_string(groups.size()) + " inputs";
  chart.xlabel = "the device's share of the work (one point per device and run)";
  chart.xmin = 0, chart.xmax = 1;
  chart.panel_height = 320;
  for (std::size_t i = 0; i < groups.size() && i < kMostPanels; ++i) chart.panels.push_back(panel_of(groups[i]));
  if (chart.panels.empty()) chart.panels.push_back({"time (ms): nothing measured", 0, 1, {}});
  return plot::svg(chart);
}

}  // namespace sinew::tools
