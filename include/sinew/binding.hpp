// sinew/binding.hpp — host memory bound to a tree's vectors and results for one run, and pinned
// host memory.
#pragma once

#include <sinew/array.hpp>
#include <sinew/tree.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace sinew {

namespace detail {
/// A block of page-locked host memory (see Runtime::pinned).
struct PinnedBlock {
  virtual ~PinnedBlock() = default;
  void* data = nullptr;
  std::size_t bytes = 0;
};
}  // namespace detail

/// Host memory that the runtime's GPUs read and write at full DMA speed (page-locked, "pinned").
/// Behaves like a fixed-size std::vector; bind it like one. Owns its memory; it may outlive the
/// Runtime that made it. Not thread-safe beyond what a plain array is.
template <class T>
class PinnedVector {
 public:
  /// No memory (size() 0); Runtime::pinned makes the ones that hold some.
  PinnedVector() = default;
  /// \cond INTERNAL
  explicit PinnedVector(std::shared_ptr<detail::PinnedBlock> block)
      : block_(std::move(block)), size_(block_->bytes / sizeof(T)) {}
  /// \endcond
  T* data() { return static_cast<T*>(block_->data); }                    ///< the first element
  const T* data() const { return static_cast<const T*>(block_->data); }  ///< the first element
  std::size_t size() const { return size_; }                              ///< elements
  T& operator[](std::size_t i) { return data()[i]; }                     ///< element `i`, unchecked
  const T& operator[](std::size_t i) const { return data()[i]; }         ///< element `i`, unchecked
  T* begin() { return data(); }                                          ///< iteration, as a vector's
  T* end() { return data() + size_; }                                    ///< iteration, as a vector's
  const T* begin() const { return data(); }                              ///< iteration, as a vector's
  const T* end() const { return data() + size_; }                        ///< iteration, as a vector's
  operator std::span<T>() { return {data(), size_}; }                    ///< every element
  operator std::span<const T>() const { return {data(), size_}; }        ///< every element, read-only

 private:
  std::shared_ptr<detail::PinnedBlock> block_;
  std::size_t size_ = 0;
};

/// Host memory bound to a vector or a result for one request.
/// Built implicitly from `{vector, host}` or `{result, &value}` in a run's binding list.
struct Binding {
  std::shared_ptr<detail::VectorState> vector;  ///< the vector bound (null for a result)
  std::shared_ptr<detail::ResultState> result;  ///< the result bound (null for a vector)
  void* data = nullptr;                         ///< the host memory
  std::size_t elements = 0;                     ///< its length in elements
  ElementType type;                             ///< the element type of the host memory
  bool read_only = false;                       ///< bound from const memory: the run must not write it
  /// A binding of part of a larger vector (what a Cluster gives each rank): its elements are units
  /// [first_unit, first_unit + elements / unit) of a vector of whole_units units, and offset() and
  /// size() arguments count in that whole, so kernels that use them compute what they would on
  /// the whole. whole_units 0: the binding is the whole vector.
  std::size_t first_unit = 0;   ///< the first unit of a part (see above)
  std::size_t whole_units = 0;  ///< the whole vector's units; 0: the binding is the whole vector
  /// A Cluster::run binding that is this rank's own block of a vector distributed over the ranks
  /// (sinew::distributed, sinew/cluster.hpp): never scattered from nor gathered to the root. A
  /// Runtime (one process: one block, the whole vector) binds it as any other.
  bool distributed = false;
  /// A resident array (Runtime::array) bound to `vector`: `data` is its host copy, and the run
  /// uses and keeps the copies the devices hold (sinew/array.hpp). Null for host memory.
  std::shared_ptr<detail::ArrayState> array;

  /// `v` bound to a vector's elements, read and written.
  template <class T>
  Binding(const Vector<T>& v, std::vector<T>& host) : Binding(v, std::span<T>(host)) {}
  /// `v` bound to pinned memory (Runtime::pinned), read and written.
  template <class T>
  Binding(const Vector<T>& v, PinnedVector<T>& host) : Binding(v, std::span<T>(host)) {}
  /// `v` bound to const data: read only; a tree that writes `v` is refused before it runs.
  template <class T>
  Binding(const Vector<T>& v, const std::vector<T>& host) : Binding(v, std::span<const T>(host)) {}
  /// `v` bound to any contiguous memory, read and written.
  template <class T>
  Binding(const Vector<T>& v, std::span<T> host)
      : vector(state_of(v)), data(host.data()), elements(host.size()), type(element_type<T>()) {}
  /// `v` bound to contiguous const memory: read only.
  template <class T>
  Binding(const Vector<T>& v, std::span<const T> host)
      : vector(state_of(v)), data(const_cast<T*>(host.data())), elements(host.size()),
        type(element_type<T>()), read_only(true) {}
  /// `v` bound to a resident array (Runtime::array), read and written; its elements must match
  /// the vector's size as host memory's would.
  template <class T>
  Binding(const Vector<T>& v, Array<T>& a)
      : vector(state_of(v)), data(array_data(a.state())), elements(a.size()), type(element_type<T>()),
        array(a.state()) {}
  /// A result's value written to `*host` when the run ends.
  template <class T>
  Binding(const Result<T>& r, T* host) : result(state_of(r)), data(host), elements(1), type(element_type<T>()) {}

 private:
  static std::shared_ptr<detail::VectorState> state_of(const VectorRef& v);
  static std::shared_ptr<detail::ResultState> state_of(const ResultRef& r);
  static void* array_data(const std::shared_ptr<detail::ArrayState>& a);
};

}  // namespace sinew
