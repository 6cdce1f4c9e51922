// exec/buffer_ledger.cpp — the run's device buffers (see buffer_ledger.hpp).
#include "exec/buffer_ledger.hpp"

#include <algorithm>
#include <bit>

namespace sinew::detail {

BufferLedger::~BufferLedger() {
  for (auto& b : entries_)
    if (b.buffer()) pool_.release(b.context, b.bytes, std::move(b.buffer), *b.device);
}

cl::Buffer BufferLedger::device_buffer(const cl::Context& context, std::size_t bytes, const DeviceInfo& info,
                                       PartState* owner) {
  cl::Buffer b = pool_.acquire(context, bytes, info);
  std::lock_guard lock(mutex_);
  if (owner) owner->pooled.push_back(entries_.size());
  entries_.push_back({context, bytes, b, &info});
  auto& [now, peak] = held_[&info];
  peak = std::max(peak, now += bytes);
  return b;
}

void BufferLedger::recycle(PartState& ps) {
  std::lock_guard lock(mutex_);
  for (std::size_t i : ps.pooled) {
    Entry& b = entries_[i];
    if (!b.buffer()) continue;
    held_[b.device].first -= b.bytes;
    pool_.release(b.context, b.bytes, std::move(b.buffer), *b.device);
    b.buffer = cl::Buffer();
  }
  ps.pooled.clear();
}

std::map<const DeviceInfo*, std::uint64_t> BufferLedger::allocated() const {
  std::lock_guard lock(mutex_);
  std::map<const DeviceInfo*, std::uint64_t> out;
  for (const auto& [device, held] : held_) out[device] = held.second;
  return out;
}

cl::Buffer BufferLedger::chunk_buffer(PartState& ps, const VectorState* v, int role, std::size_t extra_units) {
  Worker& w = *ps.worker;
  const std::size_t ub = v->unit * v->type.size;
  if (!w.reuse_units) return partition_buffer(ps, (ps.part->units + extra_units) * ub, ub);
  auto [it, made] = w.reused.try_emplace({v, role});
  if (made) it->second = partition_buffer(ps, (w.reuse_units + extra_units) * ub, ub);
  return it->second;
}

cl::Buffer BufferLedger::scratch_buffer(PartState& ps, std::size_t bytes) {
  Worker& w = *ps.worker;
  cl::Buffer& shared = w.reuse_units ? w.reused[{nullptr, kScratchRole}] : ps.scratch;
  if (!shared() || shared.getInfo<CL_MEM_SIZE>() < bytes) shared = device_buffer(w.context, bytes, w.info(), &ps);
  return shared;
}

cl::Buffer BufferLedger::partition_buffer(PartState& ps, std::size_t bytes, std::size_t unit_bytes) {
  Worker& w = *ps.worker;
  if (w.zero_copy) return device_buffer(w.context, bytes, w.info(), &ps);
  if (!poison_) {
    // Nothing reads a buffer's own size: a rounded one serves as well.
    if (round_sizes_)
      if (const int low = std::bit_width(bytes) - 2; low > 0) {
        const std::size_t step = std::size_t{1} << low;
        bytes = std::max(bytes, std::min<std::size_t>((bytes + step - 1) / step * step, w.info().max_alloc));
      }
    return device_buffer(w.context, bytes, w.info(), &ps);
  }
  // Guards of a few units (a stencil reads a unit or two beyond), at least 64 KB, aligned so the
  // sub-buffer's origin is legal.
  const std::size_t align = w.base_alignment();
  const std::size_t guard = (std::max<std::size_t>(65536, 4 * unit_bytes) + align - 1) / align * align;
  cl::Buffer parent = device_buffer(w.context, bytes + 2 * guard, w.info());
  w.queue().enqueueFillBuffer(parent, poison_, 0, bytes + 2 * guard);
  ps.guarded.push_back(parent);
  cl_buffer_region region{guard, std::max<std::size_t>(bytes, 1)};
  return parent.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
}

}  // namespace sinew::detail
