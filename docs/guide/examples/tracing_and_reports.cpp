// Tracing and reports: what a run did, as a Report, a profiled Report and a Chrome trace.
#include <sinew/sinew.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

const char* const kSource = R"CL(
__kernel void scale(__global float* v, float factor, uint count) {
  const uint i = get_global_id(0);
  if (i < count) v[i] *= factor;
}
)CL";

int main() {
  const std::filesystem::path trace = std::filesystem::temp_directory_path() / "sinew-guide-trace.json";
  std::filesystem::remove(trace);

  auto v = sinew::vector<cl_float>().name("v");
  auto tree = sinew::kernel_source(kSource, "scale").args(sinew::inout(v), sinew::scalar(2.0f), sinew::count(v));
  std::cout << tree.dump();  // the tree as text (tree.dot(): Graphviz)

  sinew::RuntimeOptions options;
  options.trace = trace.string();  // $SINEW_TRACE: a Chrome trace (chrome://tracing, Perfetto) of every run
  sinew::Runtime rt(options);
  std::vector<cl_float> data(1 << 16, 1.0f);
  sinew::Config even;
  even.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  // profile: every queue command timed on the device; the report lists partitions' and kernels' times.
  const sinew::Report report = rt.execute(tree, {{v, data}}, {.config = even, .profile = true});
  std::cout << report.str() << "\n";
  for (const auto& p : report.partitions)
    std::cout << "partition " << p.index << " on " << p.device_name << ": units [" << p.first << ", "
              << p.first + p.units << "), busy " << p.ms << " ms, kernels " << p.kernel_ms << " ms\n";

  std::ifstream in(trace);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(trace);
  if (text.str().find("\"traceEvents\"") == std::string::npos || report.kernels.empty()) {
    std::cout << "MISSING trace or kernel times\n";
    return 1;
  }
  std::cout << "OK: trace of " << text.str().size() << " bytes, " << report.kernels.size() << " kernel timings\n";
  return 0;
}
