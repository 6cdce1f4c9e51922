// samples/common/blockmm.cpp — the block matrix product descriptor (issue 43): one leaf with
// per-device kernel variants, CLBlast's gemm on GPU partitions and a blocked OpenCL kernel on CPU
// partitions, over blocks of rows.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <cmath>
#include <stdexcept>

namespace sinew::samples {

std::string Blockmm::description() const {
  return "C = A * B of N x N floats over blocks of rows: CLBlast's gemm on GPUs, a blocked OpenCL kernel on CPUs "
         "(sinew::variants), B whole on every device";
}

std::size_t Blockmm::side_for(std::size_t size) const {
  const std::size_t n = size ? size : params.n;
  if (params.block < 1 || params.block > 32)
    throw std::invalid_argument("blockmm: a block of 1 to 32 rows, not " + std::to_string(params.block));
  if (n < 1 || n > 16384 || n % params.block)
    throw std::invalid_argument("blockmm: a matrix side from 1 to 16384 that the block (" + std::to_string(params.block) +
                                ") divides, not " + std::to_string(n));
  if (params.variants != "both" && params.variants != "gemm" && params.variants != "blocked")
    throw std::invalid_argument("blockmm: variants both, gemm or blocked, not '" + params.variants + "'");
  return n;
}

// A, B, C, and the reference's product and magnitudes (doubles).
std::uint64_t Blockmm::host_bytes(std::size_t size) const {
  const std::size_t n = side_for(size);
  return saturating_product({3 * sizeof(cl_float) + 2 * sizeof(double), n, n});
}

void Blockmm::prepare(std::size_t size) {
  const std::size_t n = side_for(size);
  params.n = n;
  reset_state(n);
  expected_.reset();
  magnitude_.reset();
  a_v_ = sinew::vector<cl_float>().unit(n).name("A");
  b_v_ = sinew::vector<cl_float>().name("B");
  c_v_ = sinew::vector<cl_float>().unit(n).name("C");
  // Each work-group computes one block x block tile of C: a partition is whole blocks of rows.
  const Kernel blocked = kernel("blockmm.cl", "block_gemm")
                             .args(in(a_v_), whole(b_v_), out(c_v_), scalar(cl_uint(n)), scalar(cl_uint(n)))
                             .dims(2)
                             .local_size({params.block, params.block})
                             .build_options("-D BLOCK=" + std::to_string(params.block));
  const Node gemm = blas::gemm(1.0f, a_v_, b_v_, 0.0f, c_v_, n, n);
  if (params.variants == "gemm") tree_ = gemm;
  else if (params.variants == "blocked") tree_ = blocked;
  else tree_ = variants(blocked, {{DeviceKind::gpu, gemm}});
  reference::Random rng(params.seed);
  a_.resize(n * n);
  b_.resize(n * n);
  for (auto& x : a_) x = rng.uniform(-1, 1);
  for (auto& x : b_) x = rng.uniform(-1, 1);
  c_.assign(n * n, 0);
}

std::vector<Binding> Blockmm::bindings() {
  std::fill(c_.begin(), c_.end(), std::nanf(""));
  ran_ = true;
  return {Binding(a_v_, std::span<const cl_float>(a_)), Binding(b_v_, std::span<const cl_float>(b_)), Binding(c_v_, c_)};
}

}  // namespace sinew::samples
