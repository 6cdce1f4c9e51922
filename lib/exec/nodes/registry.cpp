// exec/nodes/registry.cpp — which runner runs which node kind: one line per kind. A new kind's
// runner is registered here (docs/ARCHITECTURE.md, "Adding a skeleton").
#include "exec/nodes/runner.hpp"
#include "platform/error.hpp"
#include "tree/nodes/blas.hpp"
#include "tree/nodes/copy.hpp"
#include "tree/nodes/divide_and_conquer.hpp"
#include "tree/nodes/fft.hpp"
#include "tree/nodes/kernel.hpp"
#include "tree/nodes/loop.hpp"
#include "tree/nodes/map_reduce.hpp"
#include "tree/nodes/pipeline.hpp"
#include "tree/nodes/scan.hpp"
#include "tree/nodes/variants.hpp"

#include <stdexcept>
#include <typeindex>
#include <unordered_map>

namespace sinew::detail {

// Defined in exec/nodes/<kind>.cpp.
const NodeRunner& kernel_runner();
const NodeRunner& axpy_runner();
const NodeRunner& gemm_runner();
const NodeRunner& fft_runner();
const NodeRunner& copy_runner();
const NodeRunner& sequence_runner();
const NodeRunner& loop_runner();
const NodeRunner& map_reduce_runner();
const NodeRunner& scan_runner();
const NodeRunner& divide_and_conquer_runner();
const NodeRunner& variants_runner();

const NodeRunner& runner_of(const NodeImpl& n) {
  static const std::unordered_map<std::type_index, const NodeRunner*> runners = {
      {typeid(KernelNode), &kernel_runner()},
      {typeid(AxpyNode), &axpy_runner()},
      {typeid(GemmNode), &gemm_runner()},
      {typeid(FftNode), &fft_runner()},
      {typeid(CopyNode), &copy_runner()},
      {typeid(PipelineNode), &sequence_runner()},
      {typeid(MapNode), &sequence_runner()},
      {typeid(LoopNode), &loop_runner()},
      {typeid(MapReduceNode), &map_reduce_runner()},
      {typeid(ScanNode), &scan_runner()},
      {typeid(DivideAndConquerNode), &divide_and_conquer_runner()},
      {typeid(VariantsNode), &variants_runner()},
  };
  auto it = runners.find(typeid(n));
  if (it == runners.end())
    throw std::logic_error("sinew: no runner registered for node kind '" + std::string(n.kind()) + "'");
  return *it->second;
}

}  // namespace sinew::detail
