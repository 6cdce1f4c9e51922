// exec/host_copy.cpp — splitting a copy between the calling thread and pool helpers.
#include "exec/host_copy.hpp"

#include "exec/threads.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <vector>

namespace sinew::detail {

void HostCopy::operator()(void* dst, const void* src, std::size_t bytes) const {
  if (bytes == 0) return;  // (memcpy's pointers must not be null even then: an empty vector's are)
  const std::size_t pieces = std::min<std::size_t>(ways(), bytes / kMinPiece);
  if (pieces < 2 || !pool_) {
    std::memcpy(dst, src, bytes);
    return;
  }
  // `pieces` pieces at most, of whole cache lines (the last one shorter); the caller copies the
  // first itself.
  const std::size_t piece = ((bytes + pieces - 1) / pieces + 63) / 64 * 64;
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  std::vector<std::future<void>> helpers;
  helpers.reserve(pieces);  // push_back never reallocates, so never throws after a submit
  std::size_t at = piece;
  try {
    for (; at < bytes; at += piece) {
      const std::size_t n = std::min(piece, bytes - at);
      helpers.push_back(pool_->submit([to, from, at, n] { std::memcpy(to + at, from + at, n); }));
    }
  } catch (...) {  // no thread for a piece: copy what was not handed out here
    std::memcpy(to + at, from + at, bytes - at);
  }
  std::memcpy(to, from, std::min(piece, bytes));
  for (auto& h : helpers) h.get();  // memcpy does not throw: get() only waits
}

unsigned copy_ways(unsigned setting, bool cpu_work, std::size_t staging_queues, unsigned hardware_threads) {
  if (setting) return setting;
  if (staging_queues == 0) return 1;
  const std::size_t share = std::max<std::size_t>(1, hardware_threads) / staging_queues;
  return static_cast<unsigned>(std::clamp<std::size_t>(share, 1, cpu_work ? kMaxWaysBesideCpuWork : kMaxWays));
}

}  // namespace sinew::detail
