// tools/kb_plot.hpp — `sinew kb plot`: a tree's measured points as an SVG chart.
#pragma once

#include <sinew/kb.hpp>

#include <string>

namespace sinew::tools {

/// An SVG document of what the knowledge base measured of `tree` (a full signature): one panel
/// per device set and input (features), the time of each measured run against each device's
/// share, a series per device and plan shape (fission, overlap, schedule), the stored plan
/// ringed. A tree with nothing measured gives a chart that says so.
std::string kb_plot_svg(const KnowledgeBase& kb, const std::string& tree);

}  // namespace sinew::tools
