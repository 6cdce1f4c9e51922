// tools/svg.hpp — small SVG charts written by the program that measured (no plotting program
// needed where it runs): line charts of stacked panels over one x axis (lines, steps, dashed
// steps, points, rings; shaded x intervals; a legend), and clustered bar charts. `sinew kb plot`
// and the benchmarks (bench/) draw with them.
#pragma once

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace sinew::plot {

struct SvgSeries {
  /// points: a dot per value; rings: a larger hollow circle per value (to mark chosen points)
  enum class Style { line, steps, dashed_steps, points, rings };
  std::string label;   ///< in the legend ("" for none)
  std::string colour;  ///< "#1f77b4"
  Style style = Style::line;
  std::vector<double> x, y;  ///< NaN y: a gap (points, rings: no marker)
};

struct SvgPanel {
  std::string ylabel;
  double ymin = 0, ymax = std::numeric_limits<double>::quiet_NaN();  ///< NaN: from the data
  std::vector<SvgSeries> series;
};

struct SvgBand {
  double from = 0, to = 0;  ///< x interval
  std::string label, colour = "#f4cccc";
};

struct SvgChart {
  std::string title, xlabel;
  double xmin = 0, xmax = 1;
  std::vector<SvgBand> bands;
  std::vector<SvgPanel> panels;
  int width = 1100, panel_height = 250;
};

/// A clustered bar chart: one cluster per category, one bar per series (NaN: no bar), and an
/// optional dashed horizontal reference line (e.g. 1 for a ratio).
struct SvgBars {
  std::string title, ylabel;
  std::vector<std::string> categories, series;
  std::vector<std::vector<double>> values;  ///< values[series][category]
  double reference = std::numeric_limits<double>::quiet_NaN();
  int width = 900, height = 380;
};

/// The chart as an SVG document.
std::string svg(const SvgChart& chart);
std::string svg(const SvgBars& chart);
/// Writes an SVG document to `path` (through a temporary file); returns "" or a line saying why
/// it could not.
std::string write_svg(const std::filesystem::path& path, const std::string& document);
std::string write_svg(const std::filesystem::path& path, const SvgChart& chart);

/// The colour of series `i` in every chart here (a ten-colour cycle).
std::string colour(std::size_t i);

}  // namespace sinew::plot
