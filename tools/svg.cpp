// tools/svg.cpp — the SVG charts (see svg.hpp).
#include "svg.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace sinew::plot {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// Tick marks at 1, 2 or 5 times a power of ten, about `count` of them over [lo, hi].
std::vector<double> ticks(double lo, double hi, int count) {
  std::vector<double> t;
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / count, p = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / p < 1.5 ? p : raw / p < 3.5 ? 2 * p : raw / p < 7.5 ? 5 * p : 10 * p;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return t;
}

std::string label(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

std::string header(int width, int height, const std::string& title) {
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << width / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">" << escape(title)
    << "</text>\n";
  return o.str();
}

// The upper end of a y axis from 0 (or `lo`): the data's largest value and 5 % above it.
double top_of(double lo, double hi, const std::vector<std::vector<double>>& values) {
  if (!std::isnan(hi)) return hi;
  hi = lo;
  for (const auto& row : values)
    for (double v : row)
      if (!std::isnan(v)) hi = std::max(hi, v);
  return hi > lo ? hi * 1.05 : lo + 1;
}

// Where a panel or a bar chart draws: its frame in pixels and its y range.
struct Frame {
  int left, top, width, height;
  double lo, hi;
  double y(double v) const { return top + height - (std::clamp(v, lo, hi) - lo) / (hi - lo) * height; }
};

// The horizontal grid with its labels, the frame and the y axis' label.
void axes(std::ostringstream& o, const Frame& f, const std::string& ylabel) {
  for (double t : ticks(f.lo, f.hi, 5))
    o << "<line x1=\"" << f.left << "\" x2=\"" << f.left + f.width << "\" y1=\"" << num(f.y(t)) << "\" y2=\""
      << num(f.y(t)) << "\" stroke=\"#ddd\"/>\n<text x=\"" << f.left - 6 << "\" y=\"" << num(f.y(t) + 4)
      << "\" text-anchor=\"end\">" << label(t) << "</text>\n";
  o << "<rect x=\"" << f.left << "\" y=\"" << f.top << "\" width=\"" << f.width << "\" height=\"" << f.height
    << "\" fill=\"none\" stroke=\"black\"/>\n<text transform=\"translate(16," << f.top + f.height / 2
    << ") rotate(-90)\" text-anchor=\"middle\">" << escape(ylabel) << "</text>\n";
}

// One legend item at x = `at` above the frame; returns where the next one goes.
int legend_item(std::ostringstream& o, int at, int y, const std::string& colour, const std::string& text) {
  o << "<rect x=\"" << at << "\" y=\"" << y - 15 << "\" width=\"12\" height=\"4\" fill=\"" << colour
    << "\"/>\n<text x=\"" << at + 16 << "\" y=\"" << y - 9 << "\">" << escape(text) << "</text>\n";
  return at + 24 + static_cast<int>(text.size()) * 7;
}

template <class Px>
void markers(std::ostringstream& o, const SvgSeries& s, const Frame& f, Px px) {
  const bool ring = s.style == SvgSeries::Style::rings;
  for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
    if (std::isnan(s.y[i])) continue;
    o << "<circle cx=\"" << num(px(s.x[i])) << "\" cy=\"" << num(f.y(s.y[i])) << "\" r=\"" << (ring ? "7" : "3.5")
      << '"' << (ring ? " fill=\"none\" stroke-width=\"2\" stroke=\"" : " fill=\"") << s.colour << "\"/>\n";
  }
}

template <class Px>
void path(std::ostringstream& o, const SvgSeries& s, const Frame& f, Px px) {
  std::ostringstream d;
  bool pen = false;
  for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
    if (std::isnan(s.y[i])) {
      pen = false;
      continue;
    }
    const double x = px(s.x[i]), y = f.y(s.y[i]);
    if (!pen)
      d << 'M' << num(x) << ',' << num(y);
    else if (s.style == SvgSeries::Style::line)
      d << 'L' << num(x) << ',' << num(y);
    else
      d << 'H' << num(x) << 'V' << num(y);
    pen = true;
    // A step holds its value for one execution.
    if (s.style != SvgSeries::Style::line && (i + 1 == s.x.size() || std::isnan(s.y[i + 1])))
      d << 'H' << num(px(s.x[i] + 1));
  }
  o << "<path d=\"" << d.str() << "\" fill=\"none\" stroke=\"" << s.colour << "\" stroke-width=\""
    << (s.style == SvgSeries::Style::line ? "1.2" : "2") << '"'
    << (s.style == SvgSeries::Style::dashed_steps ? " stroke-dasharray=\"6,4\"" : "") << "/>\n";
}

}  // namespace

std::string colour(std::size_t i) {
  static const char* const cycle[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return cycle[i % 10];
}

std::string svg(const SvgChart& c) {
  const int left = 70, right = 20, top = 40, gap = 30, legend = 22;
  const int plot_w = c.width - left - right;
  const int height = top + static_cast<int>(c.panels.size()) * (c.panel_height + gap) + 40;
  auto px = [&](double x) { return left + (x - c.xmin) / (c.xmax - c.xmin) * plot_w; };
  std::ostringstream o;
  o << header(c.width, height, c.title);
  for (std::size_t p = 0; p < c.panels.size(); ++p) {
    const SvgPanel& panel = c.panels[p];
    std::vector<std::vector<double>> ys;
    for (const auto& s : panel.series) ys.push_back(s.y);
    const int y0 = top + static_cast<int>(p) * (c.panel_height + gap) + legend;
    const Frame f{left, y0, plot_w, c.panel_height - legend, panel.ymin, top_of(panel.ymin, panel.ymax, ys)};
    for (const auto& b : c.bands) {
      const double a = px(std::max(b.from, c.xmin)), z = px(std::min(b.to, c.xmax));
      o << "<rect x=\"" << num(a) << "\" y=\"" << f.top << "\" width=\"" << num(std::max(0.0, z - a))
        << "\" height=\"" << f.height << "\" fill=\"" << b.colour << "\"/>\n";
      if (p == 0 && !b.label.empty())
        o << "<text x=\"" << num((a + z) / 2) << "\" y=\"" << f.top + 14 << "\" text-anchor=\"middle\" fill=\"#a33\">"
          << escape(b.label) << "</text>\n";
    }
    axes(o, f, panel.ylabel);
    for (double t : ticks(c.xmin, c.xmax, 10))
      o << "<line x1=\"" << num(px(t)) << "\" x2=\"" << num(px(t)) << "\" y1=\"" << f.top + f.height << "\" y2=\""
        << f.top + f.height + 4 << "\" stroke=\"black\"/>\n<text x=\"" << num(px(t)) << "\" y=\""
        << f.top + f.height + 16 << "\" text-anchor=\"middle\">" << label(t) << "</text>\n";
    int lx = left;
    for (const auto& s : panel.series) {
      if (s.style == SvgSeries::Style::points || s.style == SvgSeries::Style::rings)
        markers(o, s, f, px);
      else
        path(o, s, f, px);
      if (!s.label.empty()) lx = legend_item(o, lx, f.top, s.colour, s.label);
    }
  }
  o << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 8 << "\" text-anchor=\"middle\">" << escape(c.xlabel)
    << "</text>\n</svg>\n";
  return o.str();
}

std::string svg(const SvgBars& c) {
  const int left = 70, right = 20, top = 56, bottom = 60;
  const Frame f{left, top, c.width - left - right, c.height - top - bottom, 0,
                top_of(0, std::numeric_limits<double>::quiet_NaN(), c.values)};
  std::ostringstream o;
  o << header(c.width, c.height, c.title);
  axes(o, f, c.ylabel);
  const double cluster = c.categories.empty() ? f.width : double(f.width) / double(c.categories.size());
  const double bar = cluster * 0.8 / double(std::max<std::size_t>(1, c.series.size()));
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    const double x0 = f.left + cluster * double(k) + cluster * 0.1;
    for (std::size_t s = 0; s < c.series.size() && s < c.values.size(); ++s) {
      if (k >= c.values[s].size() || std::isnan(c.values[s][k])) continue;
      const double y = f.y(c.values[s][k]);
      o << "<rect x=\"" << num(x0 + bar * double(s)) << "\" y=\"" << num(y) << "\" width=\"" << num(bar * 0.95)
        << "\" height=\"" << num(f.top + f.height - y) << "\" fill=\"" << colour(s) << "\"><title>"
        << escape(c.series[s] + ", " + c.categories[k] + ": " + label(c.values[s][k])) << "</title></rect>\n";
    }
    o << "<text x=\"" << num(x0 + cluster * 0.4) << "\" y=\"" << f.top + f.height + 16
      << "\" text-anchor=\"middle\">" << escape(c.categories[k]) << "</text>\n";
  }
  if (!std::isnan(c.reference))
    o << "<line x1=\"" << f.left << "\" x2=\"" << f.left + f.width << "\" y1=\"" << num(f.y(c.reference)) << "\" y2=\""
      << num(f.y(c.reference)) << "\" stroke=\"black\" stroke-dasharray=\"6,4\"/>\n";
  int lx = left;
  for (std::size_t s = 0; s < c.series.size(); ++s) lx = legend_item(o, lx, top - 8, colour(s), c.series[s]);
  o << "</svg>\n";
  return o.str();
}

std::string write_svg(const std::filesystem::path& path, const std::string& document) {
  const std::string tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!(f << document)) return "could not write " + tmp;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return ec ? "could not write " + path.string() + ": " + ec.message() : "";
}

std::string write_svg(const std::filesystem::path& path, const SvgChart& chart) { return write_svg(path, svg(chart)); }

}  // namespace sinew::plot
