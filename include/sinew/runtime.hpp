// sinew/runtime.hpp — running trees: the Runtime.
//
// A Runtime owns every OpenCL object Sinew creates (contexts, queues, program cache) and the
// knowledge base connection; create one per process and keep it alive while requests run.
// `run` and `execute` are thread-safe: several requests may be in flight at once; `run` returns
// a std::future, and an error raised while a request runs reaches the caller through that future
// (`execute` throws it). Host memory bound to a request must stay valid, and must not be touched
// by the caller, until the request is done.
//
// Where a run goes: RunOptions::config, RunOptions::plan or RunOptions::device when given; else
// RuntimeOptions::config ($SINEW_CONFIG) when set; else the knowledge base plans it: the first
// run of a tree and input trains (up to TrainingSettings::max_executions runs on scratch copies
// of the data it writes, stored in RuntimeOptions::kb_path, by default
// ~/.local/share/sinew/kb.sqlite), later runs and later processes reuse the stored plan, and
// inputs it has not seen get a plan derived from the nearest known one.
#pragma once

#include <sinew/array.hpp>
#include <sinew/binding.hpp>
#include <sinew/config.hpp>
#include <sinew/device.hpp>
#include <sinew/options.hpp>
#include <sinew/report.hpp>
#include <sinew/tree.hpp>

#include <algorithm>
#include <cstddef>
#include <future>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

namespace sinew {

namespace detail {
class RuntimeImpl;
}

/// Plans and runs trees on the devices it owns; see the header's description for lifetime,
/// thread safety and where a run goes.
class Runtime {
 public:
  /// The options' unset settings come from the environment, then from their defaults
  /// (RuntimeOptions::effective()); a bad setting or variable throws sinew::Error here.
  Runtime();
  /// A runtime with these options (the unset ones from the environment, then their defaults).
  explicit Runtime(RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// The devices it runs on, in the order Config::shares and RunOptions::device count them.
  const std::vector<DeviceInfo>& devices() const;
  /// The device a run pinned to "the default device" uses: the first GPU, else the first device.
  std::size_t default_device() const;
  /// The settings in force (RuntimeOptions::effective() of the options it was made with).
  const RuntimeOptions& options() const;

  /// Validates the tree and bindings (throwing sinew::Error before any device work), then runs it
  /// asynchronously, on a thread of the runtime's.
  std::future<Report> run(const Node& tree, std::vector<Binding> bindings, RunOptions options = {});
  /// The same request on the calling thread: returns (or throws) when it is done. What
  /// run(...).get() does without handing the request to another thread and back (two thread
  /// hand-overs per request, docs/decisions/082): for loops that run small trees one after another.
  Report execute(const Node& tree, std::vector<Binding> bindings, RunOptions options = {});

  /// `count` elements of page-locked host memory, zero-initialised. Data bound from it moves to
  /// and from GPUs by DMA, without a staging copy (docs/decisions/062).
  /// Without a discrete device it is ordinary page-aligned memory.
  template <class T>
  PinnedVector<T> pinned(std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T>, "pinned memory holds trivially copyable elements");
    return PinnedVector<T>(allocate_pinned(count * sizeof(T)));
  }

  /// A resident array of `count` elements, zero-initialised, whose device copies this runtime
  /// keeps between runs (sinew/array.hpp; docs/guide/resident-data.md). Its host copy is pinned
  /// where the runtime has a discrete device. Not in a Cluster's runs.
  template <class T>
  Array<T> array(std::size_t count, ArrayOptions options = {}) {
    static_assert(std::is_trivially_copyable_v<T>, "a resident array holds trivially copyable elements");
    return Array<T>(make_array(count * sizeof(T), element_type<T>(), options));
  }
  /// A resident array holding a copy of `values` (see array(count)).
  template <class T>
  Array<T> array(std::span<const T> values, ArrayOptions options = {}) {
    Array<T> a = array<T>(values.size(), options);
    std::copy(values.begin(), values.end(), a.write().begin());
    return a;
  }

  /// \cond INTERNAL
  detail::RuntimeImpl& impl() { return *impl_; }
  /// \endcond

 private:
  std::shared_ptr<detail::PinnedBlock> allocate_pinned(std::size_t bytes);
  std::shared_ptr<detail::ArrayState> make_array(std::size_t bytes, ElementType type, ArrayOptions options);
  std::unique_ptr<detail::RuntimeImpl> impl_;
};

}  // namespace sinew
