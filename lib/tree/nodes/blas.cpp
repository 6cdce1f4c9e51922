// tree/nodes/blas.cpp — building and checking the CLBlast leaves.
#include "tree/nodes/blas.hpp"

#include "tree/analysis.hpp"

namespace sinew {
namespace detail {

void AxpyNode::check_shapes(const Analysis& an, const std::string& path) const {
  for (const auto& a : args)
    if (a.vector->type.name != "float")
      fail(errc::invalid_argument, path, "vector '" + a.vector->name + "'",
           "blas::axpy works on float vectors, not " + a.vector->type.name, "use sinew::vector<cl_float>");
  if (an.use(args[0].vector.get()).elements != an.use(args[1].vector.get()).elements)
    fail(errc::invalid_argument, path, "x, y", "x and y have different sizes", "give x and y the same size");
}

void GemmNode::check_shapes(const Analysis& an, const std::string& path) const {
  const auto& a = an.use(args[0].vector.get());
  const auto& b = an.use(args[1].vector.get());
  const auto& c = an.use(args[2].vector.get());
  for (const auto* u : {&a, &b, &c})
    if (u->vector->type.name != "float")
      fail(errc::invalid_argument, path, "vector '" + u->vector->name + "'", "blas::gemm works on float matrices",
           "use sinew::vector<cl_float>");
  if (a.vector->unit != k)
    fail(errc::invalid_argument, path, "A '" + a.vector->name + "'",
         "A's unit must be one row of k=" + std::to_string(k) + " elements, not " + std::to_string(a.vector->unit),
         "declare A with .unit(k)");
  if (c.vector->unit != n)
    fail(errc::invalid_argument, path, "C '" + c.vector->name + "'",
         "C's unit must be one row of n=" + std::to_string(n) + " elements", "declare C with .unit(n)");
  if (b.elements != k * n)
    fail(errc::invalid_argument, path, "B '" + b.vector->name + "'",
         "B has " + std::to_string(b.elements) + " elements, not k*n = " + std::to_string(k * n),
         "bind a k-by-n matrix to B");
}

}  // namespace detail

namespace blas {
Node axpy(float alpha, const VectorRef& x, const VectorRef& y) {
  auto n = std::make_shared<detail::AxpyNode>();
  n->alpha = alpha;
  n->args = {in(x), inout(y)};
  return Node(n);
}
Node gemm(float alpha, const VectorRef& a, const VectorRef& b, float beta, const VectorRef& c, std::size_t k,
          std::size_t n) {
  auto node = std::make_shared<detail::GemmNode>();
  node->alpha = alpha;
  node->beta = beta;
  node->k = k;
  node->n = n;
  node->args = {in(a), whole(b), beta == 0.0f ? out(c) : inout(c)};
  return Node(node);
}
}  // namespace blas

}  // namespace sinew
