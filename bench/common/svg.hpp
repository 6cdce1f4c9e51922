// bench/common/svg.hpp — a small SVG line chart, written by the benchmark itself (no plotting
// program needed where it runs): stacked panels over one x axis, each with its own y axis and
// series (lines, steps, dashed lines, points), shaded x intervals across all panels, a legend.
#pragma once

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace bench {

struct SvgSeries {
  enum class Style { line, steps, dashed_steps, points };
  std::string label;   // in the legend ("" for none)
  std::string colour;  // "#1f77b4"
  Style style = Style::line;
  std::vector<double> x, y;  // NaN y: a gap (points: no marker)
};

struct SvgPanel {
  std::string ylabel;
  double ymin = 0, ymax = std::numeric_limits<double>::quiet_NaN();  // NaN: from the data
  std::vector<SvgSeries> series;
};

struct SvgBand {
  double from = 0, to = 0;  // x interval
  std::string label, colour = "#f4cccc";
};

struct SvgChart {
  std::string title, xlabel;
  double xmin = 0, xmax = 1;
  std::vector<SvgBand> bands;
  std::vector<SvgPanel> panels;
  int width = 1100, panel_height = 250;
};

// The chart as an SVG document.
std::string svg(const SvgChart& chart);
// Writes it to `path`; returns "" or a line saying why it could not.
std::string write_svg(const std::filesystem::path& path, const SvgChart& chart);

}  // namespace bench
