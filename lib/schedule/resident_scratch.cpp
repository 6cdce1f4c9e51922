// schedule/resident_scratch.cpp — a training's scratch copy of a written resident array, restored
// on the devices (schedule/resident_scratch.hpp).
#include "schedule/resident_scratch.hpp"

#include <cstring>

namespace sinew::detail {

ResidentScratch::ResidentScratch(Environment& env, ArrayState& original)
    : original_(original.host()),
      scratch_(std::make_shared<ArrayState>(env.allocate_pinned(original.bytes()), original.type(), original.owner(),
                                            original.options())) {
  std::memcpy(scratch_->host(), original_, original.bytes());
}

cl::CommandQueue& ResidentScratch::queue_for(const ArrayPiece& piece) {
  const auto key = std::make_pair(piece.context(), piece.device());
  auto it = queues_.find(key);
  if (it == queues_.end()) it = queues_.emplace(key, cl::CommandQueue(piece.context, piece.device)).first;
  return it->second;
}

void ResidentScratch::restore() {
  ArrayState& a = *scratch_;
  std::memcpy(a.host(), original_, a.bytes());
  for (ArrayPiece& piece : a.pieces)
    queue_for(piece).enqueueWriteBuffer(piece.buffer, CL_TRUE, 0, piece.bytes(), original_ + piece.first);
}

}  // namespace sinew::detail
