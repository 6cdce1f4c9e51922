// bench/common/svg.cpp — the SVG line chart (see svg.hpp).
#include "svg.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace bench {

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

}  // namespace

std::string svg(const SvgChart& c) {
  const int left = 70, right = 20, top = 40, gap = 30, legend = 22;
  const int plot_w = c.width - left - right;
  const int height = top + static_cast<int>(c.panels.size()) * (c.panel_height + gap) + 40;
  auto px = [&](double x) { return left + (x - c.xmin) / (c.xmax - c.xmin) * plot_w; };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << c.width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << c.width / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">" << escape(c.title)
    << "</text>\n";
  for (std::size_t p = 0; p < c.panels.size(); ++p) {
    const SvgPanel& panel = c.panels[p];
    const int y0 = top + static_cast<int>(p) * (c.panel_height + gap) + legend, h = c.panel_height - legend;
    double lo = panel.ymin, hi = panel.ymax;
    if (std::isnan(hi)) {
      hi = lo;
      for (const auto& s : panel.series)
        for (double v : s.y)
          if (!std::isnan(v)) hi = std::max(hi, v);
      hi = hi > lo ? hi * 1.05 : lo + 1;
    }
    auto py = [&](double y) { return y0 + h - (std::clamp(y, lo, hi) - lo) / (hi - lo) * h; };
    for (const auto& b : c.bands) {
      const double a = px(std::max(b.from, c.xmin)), z = px(std::min(b.to, c.xmax));
      o << "<rect x=\"" << num(a) << "\" y=\"" << y0 << "\" width=\"" << num(std::max(0.0, z - a)) << "\" height=\""
        << h << "\" fill=\"" << b.colour << "\"/>\n";
      if (p == 0 && !b.label.empty())
        o << "<text x=\"" << num((a + z) / 2) << "\" y=\"" << y0 + 14 << "\" text-anchor=\"middle\" fill=\"#a33\">"
          << escape(b.label) << "</text>\n";
    }
    for (double t : ticks(lo, hi, 5))
      o << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << num(py(t)) << "\" y2=\"" << num(py(t))
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6 << "\" y=\"" << num(py(t) + 4) << "\" text-anchor=\"end\">"
        << label(t) << "</text>\n";
    for (double t : ticks(c.xmin, c.xmax, 10))
      o << "<line x1=\"" << num(px(t)) << "\" x2=\"" << num(px(t)) << "\" y1=\"" << y0 + h << "\" y2=\"" << y0 + h + 4
        << "\" stroke=\"black\"/>\n<text x=\"" << num(px(t)) << "\" y=\"" << y0 + h + 16 << "\" text-anchor=\"middle\">"
        << label(t) << "</text>\n";
    o << "<rect x=\"" << left << "\" y=\"" << y0 << "\" width=\"" << plot_w << "\" height=\"" << h
      << "\" fill=\"none\" stroke=\"black\"/>\n<text transform=\"translate(16," << y0 + h / 2
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape(panel.ylabel) << "</text>\n";
    int lx = left;
    for (const auto& s : panel.series) {
      const bool dashed = s.style == SvgSeries::Style::dashed_steps;
      if (s.style == SvgSeries::Style::points) {
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
          if (!std::isnan(s.y[i]))
            o << "<circle cx=\"" << num(px(s.x[i])) << "\" cy=\"" << num(py(s.y[i])) << "\" r=\"3.5\" fill=\""
              << s.colour << "\"/>\n";
      } else {
        std::ostringstream d;
        bool pen = false;
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
          if (std::isnan(s.y[i])) {
            pen = false;
            continue;
          }
          const double x = px(s.x[i]), y = py(s.y[i]);
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
          << (s.style == SvgSeries::Style::line ? "1.2" : "2") << '"' << (dashed ? " stroke-dasharray=\"6,4\"" : "")
          << "/>\n";
      }
      if (s.label.empty()) continue;
      o << "<rect x=\"" << lx << "\" y=\"" << y0 - 15 << "\" width=\"12\" height=\"4\" fill=\"" << s.colour
        << "\"/>\n<text x=\"" << lx + 16 << "\" y=\"" << y0 - 9 << "\">" << escape(s.label) << "</text>\n";
      lx += 24 + static_cast<int>(s.label.size()) * 7;
    }
  }
  o << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 8 << "\" text-anchor=\"middle\">" << escape(c.xlabel)
    << "</text>\n</svg>\n";
  return o.str();
}

std::string write_svg(const std::filesystem::path& path, const SvgChart& chart) {
  const std::string tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!(f << svg(chart))) return "could not write " + tmp;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return ec ? "could not write " + path.string() + ": " + ec.message() : "";
}

}  // namespace bench
