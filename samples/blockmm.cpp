// blockmm — C = A * B of N x N floats over blocks of rows, in the style of Tascell's recursive
// block matrix product: one leaf with per-device kernel variants (sinew::variants), CLBlast's gemm
// on GPU partitions and a blocked OpenCL kernel (kernels/blockmm.cl) on CPU partitions; under
// schedule=steal each queue runs its block rows in pieces and idle queues steal the upper half of
// what another has left. --variants gemm or blocked runs one implementation everywhere instead.
// See common/blockmm.cpp.
//
//   SINEW_CONFIG=schedule=steal blockmm --size 4096 --device all     (every device, stealing)
//   blockmm --size 4096 --device gpu:0                                (the GPU alone: gemm)
//   blockmm --size 4096 --device cpu:0                                (the CPU alone: the blocked kernel)
//   SINEW_VARIANT_GPU=cpu:1 blockmm --size 512 --device all          (a CPU-only machine: cpu:1 runs gemm)
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::Blockmm sample;
  auto opts = sinew::samples::cli::parse(
      argc, argv, sample,
      {{"block", "rows per block and the CPU kernel's tile side, 1 to 32, dividing the size", "16"},
       {"variants", "both (gemm on GPUs, the blocked kernel on CPUs), gemm or blocked (one everywhere)", "both"}});
  sample.params.block = static_cast<std::size_t>(opts.get_count("block", 16, 1, 32));
  sample.params.variants = opts.get("variants", "both");
  return sinew::samples::cli::run(sample, opts);
}
