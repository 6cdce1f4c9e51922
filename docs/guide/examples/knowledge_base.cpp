// The knowledge base and training: the first run of a tree trains and stores its plan; a second
// Runtime (as a second process would) runs the stored plan without training.
#include <sinew/sinew.hpp>

#include <filesystem>
#include <iostream>
#include <vector>

const char* const kSource = R"CL(
__kernel void saxpy(__global const float* x, __global float* y, float a, uint count) {
  const uint i = get_global_id(0);
  if (i < count) y[i] = a * x[i] + y[i];
}
)CL";

int main() {
  const std::filesystem::path kb = std::filesystem::temp_directory_path() / "sinew-guide-kb.sqlite";
  std::filesystem::remove(kb);

  const std::size_t n = 1 << 18;
  auto x = sinew::vector<cl_float>().name("x");
  auto y = sinew::vector<cl_float>().name("y");
  auto tree = sinew::kernel_source(kSource, "saxpy")
                  .args(sinew::in(x), sinew::inout(y), sinew::scalar(2.0f), sinew::count(y))
                  .name("saxpy");
  std::vector<cl_float> hx(n, 1.0f), hy(n, 0.0f);

  sinew::RuntimeOptions options;
  options.kb_path = kb.string();           // default: ~/.local/share/sinew/kb.sqlite ($SINEW_KB)
  options.training.max_executions = 12;    // a small training budget for the example
  sinew::Provenance first, second;
  {
    sinew::Runtime rt(options);
    const sinew::Report report = rt.execute(tree, {{x, hx}, {y, hy}});  // no plan given: the KB plans
    first = report.provenance;
    std::cout << "first run: " << sinew::to_string(report.provenance) << " in " << report.training_executions
              << " executions, plan " << report.config.str() << "\n";
  }
  {
    sinew::Runtime rt(options);  // a later process: the stored plan, no training
    const sinew::Report report = rt.execute(tree, {{x, hx}, {y, hy}});
    second = report.provenance;
    std::cout << "second run: " << sinew::to_string(report.provenance) << ", entry #" << report.kb_entry << "\n";
  }
  // What the knowledge base holds, as `sinew kb list` shows it.
  auto store = sinew::KnowledgeBase::open(kb.string());
  for (const auto& t : store->trees())
    std::cout << "tree " << t.tree << " (" << t.label << "): " << t.entries << " entries, " << t.runs << " runs\n";
  std::filesystem::remove(kb);

  // y = 2x + y, twice (training works on scratch copies: the data see each run once).
  for (cl_float v : hy)
    if (v != 4.0f) {
      std::cout << "MISMATCH: " << v << "\n";
      return 1;
    }
  if (first != sinew::Provenance::trained || second != sinew::Provenance::knowledge_base) {
    std::cout << "UNEXPECTED provenance\n";
    return 1;
  }
  std::cout << "OK\n";
  return 0;
}
