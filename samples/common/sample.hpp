// samples/common/sample.hpp — the registry of Sinew's benchmark samples, driven by name.
//
// One descriptor per sample (filter_pipeline, fft, nbody, saxpy, segmentation) serves the sample
// program, the tests, the benchmarks and `sinew train <sample>`: it builds the tree and its host
// data for a problem size, runs it, and checks the result against a plain C++ reference.
//
// Use:
//   auto s = sinew::samples::find("filter_pipeline");  // nullptr for an unknown name
//   s->prepare(s->sizes().small);                       // tree + input data for that size
//   s->prepare("1024x2048");                            // or a size as a command line gives it
//   s->host_bytes("1024x2048");                         // the memory its data takes, unprepared
//   sinew::Report rep = s->run(rt, sinew::RunOptions{.device = 0});
//   sinew::samples::Check c = s->check();               // c.ok, c.max_error, c.message
//
// Lifetime and threads: a Sample owns its tree and its host buffers; keep it alive while one of
// its runs is in flight. One Sample is used by one thread at a time (run() overwrites its output
// buffers); create one Sample per thread to run the same benchmark concurrently. The Runtime
// passed to run() must outlive the call.
#pragma once

#include <sinew/sinew.hpp>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sinew::samples {

// The outcome of comparing a run's output with the C++ reference.
struct Check {
  bool ok = false;
  double max_error = 0;   // the largest error found, in the measure `tolerance` is given in
  double tolerance = 0;   // the largest error accepted (0: integer kernels, bit-exact)
  std::string measure;    // what max_error measures, e.g. "max |got - expected| per channel"
  std::string message;    // "OK", or the first mismatch: where, got, expected
};

// Problem sizes, in the unit given by Sample::size_unit().
struct Sizes {
  std::size_t small = 0;    // runs in well under a second on PoCL (tests)
  std::size_t standard = 0; // the sample program's default
  std::size_t large = 0;    // the largest of the paper's parameterisation classes we use
};

class Sample {
 public:
  virtual ~Sample() = default;

  // Registry name, e.g. "filter_pipeline" (also the sample program's name).
  virtual std::string name() const = 0;
  // One line: what it computes and with which skeletons.
  virtual std::string description() const = 0;
  // What `size` counts, e.g. "image side (pixels)", "bodies", "transforms of 65536 points".
  virtual std::string size_unit() const = 0;
  virtual Sizes sizes() const = 0;

  // Builds the tree and fresh input data for problem `size` (0: sizes().standard), and computes
  // nothing else. Throws std::invalid_argument for a size the sample cannot take (the message
  // says which sizes it can). May be called again to change size.
  virtual void prepare(std::size_t size) = 0;
  // The same for a size written as text, as command lines give it (a sample's --size, `sinew
  // train --size`): a plain number is prepare(number), "" is prepare(0); a sample whose input has
  // a shape also reads its own form (filter_pipeline: WIDTHxHEIGHT, e.g. "1024x2048").
  // Throws std::invalid_argument naming the forms it reads.
  void prepare(const std::string& size) { prepare_text(size); }
  // The size of the last prepare(); 0 before. For a shaped size, one number of it
  // (filter_pipeline: the width); size_text() gives it whole.
  virtual std::size_t size() const = 0;
  // The size of the last prepare() in the form prepare(string) reads back ("4096", "1024x2048");
  // "" before.
  virtual std::string size_text() const { return size() ? std::to_string(size()) : std::string(); }

  // The prepared tree (empty before prepare()).
  virtual const Node& tree() const = 0;
  // Restores the working buffers from the pristine inputs and returns bindings to them, for
  // callers that submit runs themselves (rt.run(tree(), bindings(), options)). The bindings point
  // into this Sample; check() then judges whatever that run produced.
  virtual std::vector<Binding> bindings() = 0;
  // bindings() then rt.run(tree(), ..., options).get(). Errors come as sinew::Error.
  virtual Report run(Runtime& rt, const RunOptions& options = {}) = 0;

  // Compares the output of the last run with the reference (computed on the first call after
  // prepare() and kept). Before any run, returns ok = false with a message saying so.
  virtual Check check() = 0;
  // Bytes of input and output data (for throughput figures).
  virtual std::size_t bytes() const = 0;
  // The bytes of host memory prepare(size) would take for the sample's data (its inputs and
  // outputs, the pristine copies each run starts from, the reference check() keeps), worked out
  // from the size and the parameters alone: nothing is prepared or allocated, so a command line
  // can refuse a size that would not fit before trying. Throws std::invalid_argument, with
  // prepare()'s message, for a size or parameters prepare() would refuse. Saturates at
  // UINT64_MAX instead of overflowing.
  virtual std::uint64_t host_bytes(std::size_t size) const = 0;
  // The same for a size written as text, read as prepare(string) reads it.
  std::uint64_t host_bytes(const std::string& size) const { return host_bytes_text(size); }
  // From the next prepare() on, keep the data bound to runs in rt.pinned() memory (page-locked,
  // DMA at full speed) instead of std::vector. `rt` must outlive the sample's runs. Returns false
  // when the sample does not offer it.
  virtual bool use_pinned_memory(Runtime& rt) {
    (void)rt;
    return false;
  }

 protected:
  // Reads a size given as text and prepares it (host_bytes_text: works out its bytes). These
  // defaults read a plain number only (read_size); samples with shaped inputs override both.
  virtual void prepare_text(const std::string& size) { prepare(read_size(size)); }
  virtual std::uint64_t host_bytes_text(const std::string& size) const { return host_bytes(read_size(size)); }
  // A size written as a plain number: a whole number of size_unit(), "" being 0 (the standard
  // size). Throws std::invalid_argument naming the sample, the text and the form it reads.
  std::size_t read_size(const std::string& size) const {
    std::size_t n = 0;
    const char* end = size.data() + size.size();
    auto [stop, ec] = std::from_chars(size.data(), end, n);
    if (!size.empty() && (ec != std::errc() || stop != end))
      throw std::invalid_argument(name() + ": the size must be a whole number (" + size_unit() + "), not '" + size +
                                  "'");
    return n;
  }
  // a * b, or UINT64_MAX when that overflows (for host_bytes).
  static std::uint64_t saturating_product(std::initializer_list<std::uint64_t> factors) {
    std::uint64_t p = 1;
    for (std::uint64_t f : factors) {
      if (f != 0 && p > std::numeric_limits<std::uint64_t>::max() / f) return std::numeric_limits<std::uint64_t>::max();
      p *= f;
    }
    return p;
  }
};

// This machine's physical memory in bytes (sysconf: physical pages times the page size); 0 when
// the system does not say.
std::uint64_t physical_memory();

// Checks the size a command line gives with `flag` (the sample programs' and `sinew train`'s
// --size; nullopt when the flag was left out, meaning the standard size) before anything is
// prepared or a runtime made. Refuses an empty size and a size of 0 (leaving the flag out is how
// to ask for the standard size), a size or parameters the sample cannot take, and a size whose
// data (host_bytes) would not fit this machine's physical memory. Throws std::invalid_argument
// with a one-line message naming the flag, the size and what is accepted.
void check_size_argument(const Sample& sample, const std::string& flag, const std::optional<std::string>& size);

// A new instance of the sample called `name` with its default parameters, or nullptr.
std::unique_ptr<Sample> find(const std::string& name);
// Every registered sample name, in a stable order.
std::vector<std::string> names();

}  // namespace sinew::samples
