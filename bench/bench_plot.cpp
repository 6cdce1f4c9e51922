// bench/bench_plot.cpp — a plot from the CSV a benchmark program wrote (DIR/<program>.csv in
// bench-results/): a clustered bar chart of one column by a category column and a series
// column, or, with --x, a line chart of the column against a numeric one, a line per series.
// Rows can be selected (--where COL=VALUE, repeatable); where several rows fall on one bar or
// point the last one counts. Writes an SVG (tools/svg.hpp) and says where.
//
//   bench_plot --csv DIR/bench_saxpy.csv --where impl=sinew --category size --series variant
//              --value median_ms --title "saxpy, Sinew" --ylabel "ms" --out docs/figures/x.svg
#include "harness.hpp"
#include "svg.hpp"

#include <algorithm>
#include <iostream>
#include <map>

namespace {

namespace po = boost::program_options;
using bench::Csv;

// The distinct values of `column` in the order they first appear.
std::vector<std::string> distinct(const std::vector<Csv::Row>& rows, const std::string& column) {
  std::vector<std::string> values;
  for (const auto& r : rows) {
    const std::string v = bench::get(r, column);
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  return values;
}

double number(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    return used == text.size() ? v : std::nan("");
  } catch (const std::exception&) {
    return std::nan("");
  }
}

std::vector<Csv::Row> selected(const std::vector<Csv::Row>& rows, const std::vector<std::string>& where) {
  std::vector<Csv::Row> out;
  for (const auto& r : rows) {
    bool keep = true;
    for (const auto& w : where) {
      const auto eq = w.find('=');
      keep = keep && eq != std::string::npos && bench::get(r, w.substr(0, eq)) == w.substr(eq + 1);
    }
    if (keep) out.push_back(r);
  }
  return out;
}

std::string bars(const std::vector<Csv::Row>& rows, const po::variables_map& vm) {
  sinew::plot::SvgBars chart;
  const std::string category = vm["category"].as<std::string>(), value = vm["value"].as<std::string>();
  const std::string series = vm.count("series") ? vm["series"].as<std::string>() : "";
  chart.title = vm["title"].as<std::string>(), chart.ylabel = vm["ylabel"].as<std::string>();
  chart.categories = distinct(rows, category);
  chart.series = series.empty() ? std::vector<std::string>{value} : distinct(rows, series);
  chart.values.assign(chart.series.size(), std::vector<double>(chart.categories.size(), std::nan("")));
  auto index = [](const std::vector<std::string>& in, const std::string& v) {
    return static_cast<std::size_t>(std::find(in.begin(), in.end(), v) - in.begin());
  };
  for (const auto& r : rows)
    chart.values[series.empty() ? 0 : index(chart.series, bench::get(r, series))]
                [index(chart.categories, bench::get(r, category))] = number(bench::get(r, value));
  if (vm.count("reference")) chart.reference = vm["reference"].as<double>();
  return sinew::plot::svg(chart);
}

std::string lines(const std::vector<Csv::Row>& rows, const po::variables_map& vm) {
  using sinew::plot::SvgSeries;
  const std::string x = vm["x"].as<std::string>(), value = vm["value"].as<std::string>();
  const std::string series = vm.count("series") ? vm["series"].as<std::string>() : "";
  sinew::plot::SvgChart chart;
  chart.title = vm["title"].as<std::string>(), chart.xlabel = x;
  chart.xmin = std::numeric_limits<double>::infinity(), chart.xmax = -chart.xmin;
  sinew::plot::SvgPanel panel;
  panel.ylabel = vm["ylabel"].as<std::string>();
  const std::vector<std::string> names = series.empty() ? std::vector<std::string>{value} : distinct(rows, series);
  for (std::size_t i = 0; i < names.size(); ++i) {
    SvgSeries s{names[i], sinew::plot::colour(i), SvgSeries::Style::line, {}, {}};
    for (const auto& r : rows) {
      if (!series.empty() && bench::get(r, series) != names[i]) continue;
      s.x.push_back(number(bench::get(r, x)));
      s.y.push_back(number(bench::get(r, value)));
      chart.xmin = std::min(chart.xmin, s.x.back()), chart.xmax = std::max(chart.xmax, s.x.back());
    }
    panel.series.push_back(s);
    s.style = SvgSeries::Style::points, s.label.clear();
    panel.series.push_back(std::move(s));
  }
  if (!(chart.xmax > chart.xmin)) chart.xmin = 0, chart.xmax = 1;
  chart.panels.push_back(std::move(panel));
  return sinew::plot::svg(chart);
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description options("bench_plot [options]: an SVG plot from a benchmark's CSV");
  options.add_options()("help,h", "this text")("csv", po::value<std::string>()->required(), "the CSV to read")(
      "out", po::value<std::string>()->required(), "the SVG to write")(
      "value", po::value<std::string>()->required(), "the column plotted (a number per row)")(
      "category", po::value<std::string>(), "bar chart: one cluster of bars per value of this column")(
      "x", po::value<std::string>(), "line chart: this numeric column across")(
      "series", po::value<std::string>(), "one bar (or line) per value of this column")(
      "where", po::value<std::vector<std::string>>()->default_value({}, ""), "COL=VALUE: only these rows (repeatable)")(
      "title", po::value<std::string>()->default_value(""), "the chart's title")(
      "ylabel", po::value<std::string>()->default_value(""), "the y axis' label")(
      "reference", po::value<double>(), "bar chart: a dashed line at this value (e.g. 1 for ratios)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    if (vm.count("help")) {
      std::cout << options;
      return 0;
    }
    po::notify(vm);
    if (vm.count("category") == vm.count("x")) throw po::error("give --category (bars) or --x (lines), one of them");
  } catch (const po::error& e) {
    std::cerr << "bench_plot: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    const auto rows = selected(bench::read_csv(vm["csv"].as<std::string>()), vm["where"].as<std::vector<std::string>>());
    if (rows.empty()) throw std::runtime_error("no row of " + vm["csv"].as<std::string>() + " is selected");
    const std::string svg = vm.count("category") ? bars(rows, vm) : lines(rows, vm);
    if (const auto why = sinew::plot::write_svg(vm["out"].as<std::string>(), svg); !why.empty())
      throw std::runtime_error(why);
    std::cout << "wrote " << vm["out"].as<std::string>() << " (" << rows.size() << " rows)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_plot: " << e.what() << "\n";
    return 1;
  }
}
