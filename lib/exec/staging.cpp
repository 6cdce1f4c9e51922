// exec/staging.cpp — pinned, chunked, pipelined host <-> device copies.
#include "exec/staging.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace sinew::detail {

Staging::~Staging() {
  try {
    for (auto& s : ring_) {
      if (s.busy()) wait_for(s.busy, wait);
      owner_.enqueueUnmapMemObject(s.pinned, s.ptr);
    }
    if (!ring_.empty()) owner_.finish();
  } catch (...) {
  }
}

void Staging::ensure(cl::CommandQueue& q) {
  if (!ring_.empty()) return;
  cl::Context ctx = q.getInfo<CL_QUEUE_CONTEXT>();
  owner_ = q;
  ring_.resize(kSlots);
  for (auto& s : ring_) {
    s.pinned = cl::Buffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, kChunk);
    s.ptr = q.enqueueMapBuffer(s.pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, kChunk);
  }
}

void Staging::upload(cl::CommandQueue& q, const cl::Buffer& dst, std::size_t offset, const void* src,
                     std::size_t bytes, std::vector<cl::Event>& events) {
  ensure(q);
  const char* from = static_cast<const char*>(src);
  for (std::size_t done = 0, c = 0; done < bytes; done += kChunk, ++c) {
    Slot& s = ring_[c % kSlots];
    if (s.busy()) wait_for(s.busy, wait);  // the DMA of the chunk that used this slot has finished
    const std::size_t n = std::min(kChunk, bytes - done);
    copy(s.ptr, from + done, n);
    q.enqueueWriteBuffer(dst, CL_FALSE, offset + done, n, s.ptr, nullptr, &s.busy);
    events.push_back(s.busy);
  }
}

void Staging::download(cl::CommandQueue& q, const cl::Buffer& src, std::size_t offset, void* dst, std::size_t bytes,
                       std::vector<cl::Event>& events) {
  ensure(q);
  char* to = static_cast<char*>(dst);
  const std::size_t chunks = (bytes + kChunk - 1) / kChunk;
  auto issue = [&](std::size_t c) {
    Slot& s = ring_[c % kSlots];
    if (s.busy()) wait_for(s.busy, wait);
    const std::size_t n = std::min(kChunk, bytes - c * kChunk);
    q.enqueueReadBuffer(src, CL_FALSE, offset + c * kChunk, n, s.ptr, nullptr, &s.busy);
    events.push_back(s.busy);
  };
  // Keep every slot's read in flight; copy each chunk out as soon as it lands.
  for (std::size_t c = 0; c < std::min(chunks, kSlots); ++c) issue(c);
  for (std::size_t c = 0; c < chunks; ++c) {
    Slot& s = ring_[c % kSlots];
    wait_for(s.busy, wait);
    copy(to + c * kChunk, s.ptr, std::min(kChunk, bytes - c * kChunk));
    s.busy = cl::Event();
    if (c + kSlots < chunks) issue(c + kSlots);
  }
}

std::size_t Staging::free_slot(cl::CommandQueue& q) {
  ensure(q);
  for (std::size_t i = 0; i < ring_.size(); ++i)
    if (!ring_[i].held) {
      if (ring_[i].busy()) wait_for(ring_[i].busy, wait);  // an abandoned download's read
      return i;
    }
  if (ring_.size() == kMaxSlots) return kNone;
  Slot& s = ring_.emplace_back();
  s.pinned = cl::Buffer(q.getInfo<CL_QUEUE_CONTEXT>(), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, kChunk);
  s.ptr = owner_.enqueueMapBuffer(s.pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, kChunk);
  return ring_.size() - 1;
}

void Staging::read_piece(cl::CommandQueue& q, Pending& p, std::size_t slot, std::vector<cl::Event>& events) {
  const std::size_t at = p.slots.size() * kChunk, n = std::min(kChunk, p.bytes - at);
  Slot& s = ring_[slot];
  s.held = true;
  q.enqueueReadBuffer(p.src, CL_FALSE, p.offset + at, n, s.ptr, nullptr, &s.busy);
  events.push_back(s.busy);
  p.slots.push_back(slot);
}

Staging::Pending Staging::begin_download(cl::CommandQueue& q, const cl::Buffer& src, std::size_t offset, void* dst,
                                         std::size_t bytes, std::vector<cl::Event>& events) {
  Pending p{src, offset, bytes, static_cast<char*>(dst), {}};
  const std::size_t pieces = (bytes + kChunk - 1) / kChunk;
  while (p.slots.size() < pieces) {
    const std::size_t slot = free_slot(q);
    if (slot == kNone) break;
    read_piece(q, p, slot, events);
  }
  return p;
}

void Staging::finish_download(cl::CommandQueue& q, Pending& p, std::vector<cl::Event>& events) {
  const std::size_t pieces = (p.bytes + kChunk - 1) / kChunk;
  for (std::size_t c = 0; c < pieces; ++c) {
    const std::size_t at = c * kChunk, n = std::min(kChunk, p.bytes - at);
    if (c == p.slots.size()) {  // not read yet
      const std::size_t slot = free_slot(q);
      if (slot == kNone) {  // every slot holds a later download's pieces
        q.enqueueReadBuffer(p.src, CL_TRUE, p.offset + at, n, p.dst + at);
        p.slots.push_back(kNone);
        continue;
      }
      read_piece(q, p, slot, events);
    }
    if (p.slots[c] == kNone) continue;
    Slot& s = ring_[p.slots[c]];
    wait_for(s.busy, wait);
    copy(p.dst + at, s.ptr, n);
    s.busy = cl::Event();
    s.held = false;
    if (p.slots.size() < pieces) read_piece(q, p, p.slots[c], events);  // the next piece into the slot just freed
  }
}

void Staging::abandon(Pending& p) {
  for (std::size_t slot : p.slots)
    if (slot != kNone) ring_[slot].held = false;
  p.slots.clear();
}

}  // namespace sinew::detail
