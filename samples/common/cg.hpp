// samples/common/cg.hpp — conjugate gradient on the 2D Poisson matrix in CSR, the whole solve one
// loop tree (samples/kernels/cg.cl): the reductions' results feed the next kernels of the same
// iteration (sinew::value), and the loop stops once |r| <= tolerance * |b|. Shared by the cg
// sample, its tests and bench_iterative.
//
// Lifetime and threads: a ConjugateGradient owns its tree and its vectors' handles, not the host
// data (the caller's, bound for one solve); one solve at a time per object.
#pragma once

#include <sinew/sinew.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace sinew::samples {

// A square sparse matrix in CSR: row i's entries are columns/values[row_start[i], row_start[i+1]).
struct CsrMatrix {
  std::size_t rows = 0;
  std::vector<cl_int> row_start, columns;
  std::vector<cl_float> values;
};

// The 5-point Laplacian of a side x side grid with zero (Dirichlet) edges: 4 on the diagonal, -1
// for each neighbour inside the grid. Symmetric positive definite.
CsrMatrix poisson_2d(std::size_t side);

class ConjugateGradient {
 public:
  // Solves A x = b for a matrix of `a`'s shape (its data is bound at each solve).
  ConjugateGradient(float tolerance, std::size_t max_iterations);

  struct Solution {
    Report report;
    std::size_t iterations = 0;
    float residual_norm = 0;  // |r| after the last iteration, as the devices computed it
  };
  // x = 0, r = p = b, then iterations until |r| <= tolerance * |b| or max_iterations. `x` is
  // resized to the matrix's rows.
  Solution solve(Runtime& rt, const CsrMatrix& a, const std::vector<cl_float>& b, std::vector<cl_float>& x,
                 const RunOptions& options = {});
  // The same on the caller's thread (Runtime::execute), for timing.
  Solution execute(Runtime& rt, const CsrMatrix& a, const std::vector<cl_float>& b, std::vector<cl_float>& x,
                   const RunOptions& options = {});

  const Node& tree() const { return tree_; }
  // The bindings of one solve (what solve() runs): x = 0, r = p = b, the stopping bound set from
  // |b|; they point into `a`, `b`, `x` and this object. For callers that submit the run
  // themselves (the sample registry's training and benchmarks).
  std::vector<Binding> bind(const CsrMatrix& a, const std::vector<cl_float>& b, std::vector<cl_float>& x);

 private:

  float tolerance_;
  std::size_t max_iterations_;
  std::shared_ptr<float> stop_below_;  // the predicate's bound on r.r: tolerance^2 * b.b
  Vector<cl_int> row_start_, columns_;
  Vector<cl_float> values_, x_, r_, p_, ap_, squares_;
  Vector<cl_float2> terms_;
  Result<cl_float2> dots_;
  Result<cl_float> rr_;
  std::vector<cl_float> r_host_, p_host_;
  cl_float rr_host_ = 0;
  Node tree_;
};

// The right-hand side used by the sample and the tests: a smooth bump with a few spikes.
std::vector<cl_float> cg_right_hand_side(std::size_t rows);
// The true relative residual |b - Ax| / |b| accepted from a float solve stopped at `tolerance` on
// poisson_2d(side): in float the recursive residual the loop tests drifts from the true one by up
// to about float's epsilon times the matrix's condition number (which grows as side^2), so the
// larger of the two, with a margin.
double cg_accepted_residual(double tolerance, std::size_t side);
// |b - A x| / |b|, in double.
double relative_residual(const CsrMatrix& a, const std::vector<cl_float>& b, const std::vector<cl_float>& x);
double relative_residual(const CsrMatrix& a, const std::vector<cl_float>& b, const std::vector<double>& x);
// The reference: the same iteration in double, until |r| <= tolerance * |b|; `iterations` the count.
std::vector<double> reference_cg(const CsrMatrix& a, const std::vector<cl_float>& b, double tolerance,
                                 std::size_t max_iterations, std::size_t& iterations);

}  // namespace sinew::samples
