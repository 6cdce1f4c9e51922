// cg — conjugate gradient on the 2D Poisson matrix (CSR), the whole solve one loop tree: the
// reductions' results feed the same iteration's later kernels (sinew::value) and the loop stops at
// the tolerance. Checked against the same iteration in double (common/cg.cpp).
//
//   cg [--side N] [--tolerance X] [--max-iterations N] [--device I]
#include "common/cg.hpp"
#include "common/cli.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  std::size_t side = 512, max_iterations = 5000;
  float tolerance = 1e-5f;
  sinew::RunOptions options;
  const auto given = sinew::samples::cli::parse_numbers(
      argc, argv, "cg", "conjugate gradient on the 2D Poisson matrix, the whole solve one loop tree",
      {{"side", "grid side: the matrix has side x side rows", "512"},
       {"tolerance", "stop once the residual's norm is below this", "1e-5"},
       {"max-iterations", "at most this many iterations", "5000"},
       {"device", "the device index to run on", "the runtime's default"}});
  if (given.count("side")) side = static_cast<std::size_t>(given.at("side"));
  if (given.count("tolerance")) tolerance = static_cast<float>(given.at("tolerance"));
  if (given.count("max-iterations")) max_iterations = static_cast<std::size_t>(given.at("max-iterations"));
  if (given.count("device")) options.device = static_cast<std::size_t>(given.at("device"));
  try {
    const auto a = sinew::samples::poisson_2d(side);
    const auto b = sinew::samples::cg_right_hand_side(a.rows);
    sinew::Runtime rt;
    sinew::samples::ConjugateGradient cg(tolerance, max_iterations);
    std::vector<cl_float> x;
    const auto s = cg.solve(rt, a, b, x, options);
    std::size_t reference_iterations = 0;
    const auto reference = sinew::samples::reference_cg(a, b, tolerance, max_iterations, reference_iterations);
    const double residual = sinew::samples::relative_residual(a, b, x);
    const double reference_residual = sinew::samples::relative_residual(a, b, reference);
    std::cout << "grid " << side << "x" << side << ": " << s.iterations << " iterations (reference in double: "
              << reference_iterations << "), |b - Ax| / |b| = " << residual << " (reference: " << reference_residual
              << "), "
              << s.report.wall_ms / static_cast<double>(std::max<std::size_t>(1, s.iterations)) << " ms per iteration\n";
    // In float the recursive residual the loop tests drifts from the true one, b - Ax: the true
    // residual is judged against the larger of the tolerance and float's floor for this matrix;
    // a solve stopped by --max-iterations before it converged, against the reference's own
    // residual after as many iterations (5% and that floor apart). The loop stops where the
    // reference does, give or take what float rounding moves.
    const std::size_t apart = s.iterations > reference_iterations ? s.iterations - reference_iterations
                                                                  : reference_iterations - s.iterations;
    const double accepted = sinew::samples::cg_accepted_residual(tolerance, side);
    const bool ok = (residual <= accepted || residual <= 1.05 * reference_residual + accepted) &&
                    apart <= std::max<std::size_t>(2, reference_iterations / 50);
    std::cout << "result: " << (ok ? "OK" : "WRONG") << "\n";
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "cg: " << e.what() << "\n";
    return 2;
  }
}
