// samples/common/registry.cpp — the sample registry and what every descriptor shares.
#include "common/descriptors.hpp"
#include "common/iterative_samples.hpp"

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <utility>

namespace sinew::samples {

Report SampleBase::run(Runtime& rt, const RunOptions& options) {
  if (tree_.empty()) throw std::logic_error(name() + ": run() before prepare()");
  auto b = bindings();
  return rt.execute(tree_, std::move(b), options);
}

Check SampleBase::check() {
  if (!ran_) {
    Check c;
    c.message = name() + ": nothing to check, the sample has not been run since prepare()";
    return c;
  }
  return compare();
}

void SampleBase::reset_state(std::size_t size) {
  size_ = size;
  ran_ = false;
}

std::uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

namespace {
std::string bytes_text(std::uint64_t bytes) {
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f", static_cast<double>(bytes) / (1ull << 30));
  return std::to_string(bytes) + " bytes (" + gib + " GiB)";
}
}  // namespace

void check_size_argument(const Sample& sample, const std::string& flag, const std::optional<std::string>& size) {
  const std::string given = size ? flag + " = '" + *size + "' is refused: " : std::string();
  const std::string standard = std::to_string(sample.sizes().standard);
  if (size && size->empty())
    throw std::invalid_argument(given + "give a size (" + sample.size_unit() + "), or leave " + flag +
                                " out for the standard size " + standard);
  if (size && size->find_first_not_of('0') == std::string::npos)
    throw std::invalid_argument(given + "a size is at least 1 (" + sample.size_unit() + "); leave " + flag +
                                " out for the standard size " + standard);
  std::uint64_t bytes = 0;
  try {
    bytes = size ? sample.host_bytes(*size) : sample.host_bytes(std::size_t{0});
  } catch (const std::invalid_argument& e) {
    // A refusal the standard size gets too is the parameters' (fft --length 1), not the size's.
    bool parameters = false;
    if (size) try {
        sample.host_bytes(std::size_t{0});
      } catch (const std::invalid_argument& standard_refused) {
        parameters = std::string(standard_refused.what()) == e.what();
      }
    throw std::invalid_argument((parameters ? std::string() : given) + e.what());
  }
  const std::uint64_t memory = physical_memory();
  if (memory && bytes > memory)
    throw std::invalid_argument(given + sample.name() + "'s data at " +
                                (size ? "this size" : "its standard size " + standard) + " takes " + bytes_text(bytes) +
                                ", more than this machine's physical memory, " + bytes_text(memory));
}

namespace {
struct Entry {
  const char* name;
  std::function<std::unique_ptr<Sample>()> make;
};
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"blockmm", [] { return std::make_unique<Blockmm>(); }},
      {"cg", [] { return std::make_unique<Cg>(); }},
      {"filter_pipeline", [] { return std::make_unique<FilterPipeline>(); }},
      {"fft", [] { return std::make_unique<Fft>(); }},
      {"heat", [] { return std::make_unique<Heat>(); }},
      {"histogram", [] { return std::make_unique<Histogram>(); }},
      {"hotspot", [] { return std::make_unique<Hotspot>(); }},
      {"kmeans", [] { return std::make_unique<Kmeans>(); }},
      {"mandelbrot", [] { return std::make_unique<Mandelbrot>(); }},
      {"matmul", [] { return std::make_unique<Matmul>(); }},
      {"max_subarray", [] { return std::make_unique<MaxSubarray>(); }},
      {"mergesort", [] { return std::make_unique<Mergesort>(); }},
      {"mergesort_float", [] { return std::make_unique<Mergesort>(MergesortParams{.key = "float"}); }},
      {"nbody", [] { return std::make_unique<Nbody>(); }},
      {"pagerank", [] { return std::make_unique<Pagerank>(); }},
      {"periodic", [] { return std::make_unique<Periodic>(); }},
      {"prefix_sum", [] { return std::make_unique<PrefixSum>(); }},
      {"saxpy", [] { return std::make_unique<Saxpy>(); }},
      {"saxpy_blas", [] { return std::make_unique<Saxpy>(SaxpyParams{.mode = "blas"}); }},
      {"segmentation", [] { return std::make_unique<Segmentation>(); }},
      {"sobel", [] { return std::make_unique<Sobel>(); }},
      {"stencil2d", [] { return std::make_unique<Stencil2d>(); }},
  };
  return entries;
}
}  // namespace

std::unique_ptr<Sample> find(const std::string& name) {
  for (const auto& e : registry())
    if (name == e.name) return e.make();
  return nullptr;
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& e : registry()) out.emplace_back(e.name);
  return out;
}

}  // namespace sinew::samples
