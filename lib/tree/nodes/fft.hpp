// tree/nodes/fft.hpp — the clFFT leaf: batched 1D complex transforms in place, one per unit.
#pragma once

#include "tree/node.hpp"

namespace sinew::detail {

class FftNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "fft"; }
  bool is_leaf() const override { return true; }
  std::string short_label() const override { return "fft"; }
  void sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const override;
  void check_shapes(const Analysis& an, const std::string& path) const override;
  const VectorState* library_scratch() const override { return args[0].vector.get(); }

  FftDirection direction = FftDirection::forward;
};

}  // namespace sinew::detail
