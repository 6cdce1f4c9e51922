// exec/staging.cpp — pinned, chunked, pipelined host <-> device copies.
#include "exec/staging.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
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
    std::memcpy(s.ptr, from + done, n);
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
    std::memcpy(to + c * kChunk, s.ptr, std::min(kChunk, bytes - c * kChunk));
    s.busy = cl::Event();
    if (c + kSlots < chunks) issue(c + kSlots);
  }
}

}  // namespace sinew::detail
