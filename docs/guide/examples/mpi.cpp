// MPI: the same tree over every rank of an MPI job (mpirun -np 2 ./mpi); each rank runs its
// share of the units on its own devices, rank 0's data are scattered and the results gathered.
#include <sinew/sinew.hpp>

#include <iostream>
#include <vector>

const char* const kSource = R"CL(
__kernel void scale(__global float* v, float factor, uint count) {
  const uint i = get_global_id(0);
  if (i < count) v[i] *= factor;
}
)CL";

int main() {
  sinew::Cluster cluster;  // collective: every rank makes one, in the same order
  const std::size_t n = 1 << 16;
  auto v = sinew::vector<cl_float>().name("v");
  auto tree = sinew::kernel_source(kSource, "scale").args(sinew::inout(v), sinew::scalar(3.0f), sinew::count(v));

  // Only the root's data are read and written; the other ranks bind an empty vector of the type.
  std::vector<cl_float> data(cluster.is_root() ? n : 0);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<cl_float>(i);
  // Each rank plans its own part (here: its default device); every rank calls run().
  const sinew::ClusterReport report = cluster.run(tree, {{v, data}}, {.device = cluster.runtime().default_device()});
  if (!cluster.is_root()) return 0;

  std::cout << report.str();
  for (std::size_t i = 0; i < n; ++i)
    if (data[i] != 3.0f * static_cast<cl_float>(i)) {
      std::cout << "MISMATCH at " << i << "\n";
      return 1;
    }
  std::cout << "OK: " << report.ranks << " ranks, shares from " << report.shares_from << "\n";
  return 0;
}
