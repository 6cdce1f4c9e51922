// matmul — C = A * B of N x N floats with CLBlast's gemm on blocks of rows, B on every device.
// Under the dynamic schedule each chunk is a block of rows taken by the device that is ready
// (Tascell's matrix workload). See common/matmul.cpp.
//
//   matmul --size 2048 --device all
//   SINEW_CONFIG=schedule=dynamic,min_chunk=64 matmul --size 2048 --device all
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::Matmul sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample);
  return sinew::samples::cli::run(sample, opts);
}
