// tree/nodes/copy.hpp — the copy leaf: src into dst, slice by slice, on the device.
#pragma once

#include "tree/node.hpp"

namespace sinew::detail {

class CopyNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "copy"; }
  bool is_leaf() const override { return true; }
  // The same element type (checked before sizes are known) and the same unit.
  void check_structure(const std::string& path, StructureFacts& facts) const override;
  void check_shapes(const Analysis& an, const std::string& path) const override;

 private:
  std::string argument() const;  // "'src' -> 'dst'", for messages
};

}  // namespace sinew::detail
