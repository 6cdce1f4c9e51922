// tree/nodes/blas.hpp — CLBlast leaves: y = alpha*x + y (axpy) and C = alpha*A*B + beta*C (gemm),
// partitioned like kernels (gemm: rows of A and C; B whole on every device).
#pragma once

#include "tree/node.hpp"

namespace sinew::detail {

class AxpyNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "blas.axpy"; }
  bool is_leaf() const override { return true; }
  bool assumes_aligned_buffers() const override { return true; }
  std::string short_label() const override { return "axpy"; }
  void dump_settings(std::ostream& s) const override { s << " alpha=" << alpha; }
  void check_shapes(const Analysis& an, const std::string& path) const override;

  float alpha = 1;
};

class GemmNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "blas.gemm"; }
  bool is_leaf() const override { return true; }
  bool assumes_aligned_buffers() const override { return true; }
  std::string short_label() const override { return "gemm"; }
  void dump_settings(std::ostream& s) const override {
    s << " alpha=" << alpha << " beta=" << beta << " k=" << k << " n=" << n;
  }
  void check_shapes(const Analysis& an, const std::string& path) const override;

  float alpha = 1, beta = 0;
  std::size_t k = 0, n = 0;  // A is m-by-k, B k-by-n, C m-by-n
};

}  // namespace sinew::detail
