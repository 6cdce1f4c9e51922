// tree/nodes/pipeline.cpp — building pipelines and maps.
#include "tree/nodes/pipeline.hpp"

#include "platform/error.hpp"

namespace sinew {

Node pipeline(std::vector<Node> stages) {
  if (stages.empty())
    detail::throw_error(errc::invalid_tree, "pipeline with no stages",
                        {.node = "pipeline", .fix = "give pipeline() at least one stage"});
  auto n = std::make_shared<detail::PipelineNode>();
  for (auto& s : stages) n->children.push_back(detail::impl_of(s, "pipeline"));
  return Node(n);
}

Node map(Node body) {
  auto n = std::make_shared<detail::MapNode>();
  n->children.push_back(detail::impl_of(body, "map"));
  return Node(n);
}

}  // namespace sinew
