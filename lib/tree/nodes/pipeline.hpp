// tree/nodes/pipeline.hpp — the sequence skeletons: pipeline (stages in order on the same
// partitions, channels staying on the device) and map (a body over independent partitions).
#pragma once

#include "tree/node.hpp"

namespace sinew::detail {

class PipelineNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "pipeline"; }
};

class MapNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "map"; }
};

}  // namespace sinew::detail
