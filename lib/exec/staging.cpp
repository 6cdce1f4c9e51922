// exec/staging.cpp — pinned, chunked, pipelined host <-> device copies.
#include "exec/staging.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace sinew::detail {

void wait_for(const cl::Event& event, WaitMode mode, bool nap) {
  if (mode != WaitMode::block) {
    // A napping wait yields for its first 200 us (a short run's end is not delayed by a sleep,
    // which Linux stretches to 50 us or more), then sleeps ever longer, up to 100 us.
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    auto pause = std::chrono::microseconds(20);
    for (;;) {
      if (ended(event)) break;  // errors surface through wait() below
      if (nap && std::chrono::steady_clock::now() >= spin_until) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(100));
      } else {
        std::this_thread::yield();
      }
    }
  }
  event.wait();
}

void drain(cl::CommandQueue& queue, bool discrete, WaitMode mode, bool nap) {
  if (mode == WaitMode::automatic) mode = nap ? WaitMode::poll : WaitMode::block;
  if (discrete && mode != WaitMode::block) {
    // The marker completes once every command before it has (an in-order queue): no clFinish
    // after it (some 5 us per queue on the H100 machine).
    cl::Event marker;
    queue.enqueueMarkerWithWaitList(nullptr, &marker);
    queue.flush();
    wait_for(marker, mode, nap);
    return;
  }
  queue.finish();
}

bool ended(const cl::Event& event) {
  const cl_int status = event.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
  return status == CL_COMPLETE || status < 0;
}

CallbackEnds::CallbackEnds(std::chrono::steady_clock::time_point origin) : state_(std::make_shared<State>()) {
  state_->origin = origin;
}

std::optional<std::size_t> CallbackEnds::watch(const cl::Event& event) {
  struct Watch {
    std::shared_ptr<State> state;
    std::size_t index;
  };
  std::size_t index;
  {
    std::lock_guard lock(state_->mutex);
    index = state_->ms.size();
    state_->ms.push_back(-1);
    ++state_->running;
  }
  auto* watch = new Watch{state_, index};
  auto done = [](cl_event, cl_int, void* p) {
    std::unique_ptr<Watch> w(static_cast<Watch*>(p));
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w->state->origin).count();
    std::lock_guard lock(w->state->mutex);
    w->state->ms[w->index] = ms;
    if (--w->state->running == 0) w->state->none_running.notify_all();
  };
  if (clSetEventCallback(event(), CL_COMPLETE, done, watch) != CL_SUCCESS) {
    delete watch;
    std::lock_guard lock(state_->mutex);
    --state_->running;  // not watched: its end cuts no nap short (the caller waits in the driver)
    return std::nullopt;
  }
  return index;
}

std::optional<double> CallbackEnds::ms(std::size_t i) const {
  std::lock_guard lock(state_->mutex);
  if (i >= state_->ms.size() || state_->ms[i] < 0) return std::nullopt;
  return state_->ms[i];
}

bool CallbackEnds::running() const {
  std::lock_guard lock(state_->mutex);
  return state_->running > 0;
}

void CallbackEnds::nap(std::chrono::microseconds pause) const {
  std::unique_lock lock(state_->mutex);
  state_->none_running.wait_for(lock, pause, [&] { return state_->running == 0; });
}

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
