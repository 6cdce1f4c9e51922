// exec/environment.cpp — queue pool, kernel objects per queue, buffer pool, clFFT plan cache.
#include "exec/environment.hpp"

#include "platform/error.hpp"

#include <algorithm>

namespace sinew::detail {

cl::Kernel& QueueSlot::kernel(const cl::Program& program, const std::string& entry) {
  auto key = std::make_pair(program(), entry);
  auto it = kernels.find(key);
  if (it == kernels.end()) it = kernels.emplace(key, cl::Kernel(program, entry.c_str())).first;
  return it->second;
}

unsigned char* QueueSlot::host_value(const cl::Context& context, std::size_t bytes) {
  constexpr std::size_t kChunk = 4096, kAlign = 64;
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  while (host_chunk_ < host_values_.size() && host_offset_ + bytes > host_values_[host_chunk_].bytes) {
    ++host_chunk_;
    host_offset_ = 0;
  }
  if (host_chunk_ == host_values_.size()) {
    HostValues c;
    c.bytes = std::max(kChunk, bytes);
    c.buffer = cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, c.bytes);
    c.data = static_cast<unsigned char*>(queue.enqueueMapBuffer(c.buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, c.bytes));
    host_values_.push_back(c);
    host_offset_ = 0;
  }
  unsigned char* p = host_values_[host_chunk_].data + host_offset_;
  host_offset_ += bytes;
  return p;
}

QueueSlot::~QueueSlot() {
  try {
    for (auto& c : host_values_) queue.enqueueUnmapMemObject(c.buffer, c.data);
    // Its launches end before its build number can go to another queue (QueueBuild).
    if (queue()) queue.finish();
  } catch (...) {
  }
}

std::unique_ptr<QueueSlot> QueuePool::acquire(const cl::Context& context, const cl::Device& device, bool profile) {
  {
    std::lock_guard lock(mutex_);
    auto& list = free_[{device(), profile}];
    if (!list.empty()) {
      auto slot = std::move(list.back());
      list.pop_back();
      slot->reset_host_values();
      if (slot->build) slot->build->take();
      return slot;
    }
  }
  auto slot = std::make_unique<QueueSlot>();
  slot->build = std::make_unique<QueueBuild>(device);
  slot->queue = Device::make_queue(context, device, profile);
  slot->profiled = profile;
  return slot;
}

void QueuePool::release(const cl::Device& device, std::unique_ptr<QueueSlot> slot) {
  if (!slot) return;
  if (slot->build && slot->build->numbered()) {
    // Its build number goes to the free ones while it waits: its launches end first (QueueBuild).
    try {
      slot->queue.finish();
    } catch (...) {
      return;  // a queue that cannot finish is not pooled
    }
    slot->build->give_back();
  }
  std::lock_guard lock(mutex_);
  free_[{device(), slot->profiled}].push_back(std::move(slot));
}

cl::Buffer BufferPool::acquire(const cl::Context& context, std::size_t bytes, const DeviceInfo& device) {
  {
    std::lock_guard lock(mutex_);
    Held& held = held_[device.index];
    held.in_use += bytes;
    auto it = free_.find({device.index, context(), bytes});
    if (it != free_.end() && !it->second.empty()) {
      cl::Buffer b = std::move(it->second.back());
      it->second.pop_back();
      held.pooled -= bytes;
      return b;
    }
    // The device's pooled buffers (of each context the largest first) go until the new one fits
    // beside what is in use.
    const auto first = free_.lower_bound({device.index, nullptr, 0});
    for (auto at = free_.lower_bound({device.index + 1, nullptr, 0});
         at != first && held.in_use + held.pooled > device.memory();) {
      auto& [key, buffers] = *--at;
      for (; !buffers.empty() && held.in_use + held.pooled > device.memory(); buffers.pop_back())
        held.pooled -= std::get<2>(key);  // dropped: the OpenCL object frees it
    }
  }
  try {
    return cl::Buffer(context, CL_MEM_READ_WRITE, bytes);
  } catch (...) {
    std::lock_guard lock(mutex_);
    held_[device.index].in_use -= bytes;
    throw;
  }
}

void BufferPool::release(const cl::Context& context, std::size_t bytes, cl::Buffer buffer, const DeviceInfo& device) {
  std::lock_guard lock(mutex_);
  Held& held = held_[device.index];
  held.in_use -= bytes;
  if (held.pooled + bytes > device.memory() / 2) return;  // dropped: the OpenCL object frees it
  held.pooled += bytes;
  free_[{device.index, context(), bytes}].push_back(std::move(buffer));
}

namespace {
// Guards clFFT's global state and every clFFT call (see FftPlans::enqueue_mutex).
std::mutex g_fft_mutex;
int g_fft_users = 0;

void fft_check(clfftStatus st, const char* call) {
  if (st != CLFFT_SUCCESS)
    throw_error(errc::library, std::string("clFFT call failed with status ") + std::to_string(st), {.api_call = call});
}
}  // namespace

std::mutex& FftPlans::enqueue_mutex() { return g_fft_mutex; }

FftPlans::FftPlans() {
  std::lock_guard lock(g_fft_mutex);
  if (g_fft_users++ == 0) {
    clfftSetupData setup;
    clfftInitSetupData(&setup);
    fft_check(clfftSetup(&setup), "clfftSetup");
  }
}

FftPlans::~FftPlans() {
  std::lock_guard lock(g_fft_mutex);
  for (auto& [k, plan] : plans_) clfftDestroyPlan(&plan.handle);
  if (--g_fft_users == 0) clfftTeardown();
}

clfftPlanHandle FftPlans::get(const cl::Context& context, cl::CommandQueue& queue, std::size_t length,
                              std::size_t batch) {
  std::lock_guard lock(mutex_);
  auto key = std::make_tuple(queue(), length, batch);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.handle;
  std::lock_guard fft_lock(g_fft_mutex);
  clfftPlanHandle plan;
  std::size_t lengths[1] = {length};
  fft_check(clfftCreateDefaultPlan(&plan, context(), CLFFT_1D, lengths), "clfftCreateDefaultPlan");
  try {
    fft_check(clfftSetPlanPrecision(plan, CLFFT_SINGLE), "clfftSetPlanPrecision");
    fft_check(clfftSetLayout(plan, CLFFT_COMPLEX_INTERLEAVED, CLFFT_COMPLEX_INTERLEAVED), "clfftSetLayout");
    fft_check(clfftSetResultLocation(plan, CLFFT_INPLACE), "clfftSetResultLocation");
    fft_check(clfftSetPlanBatchSize(plan, batch), "clfftSetPlanBatchSize");
    fft_check(clfftSetPlanDistance(plan, length, length), "clfftSetPlanDistance");
    cl_command_queue q = queue();
    fft_check(clfftBakePlan(plan, 1, &q, nullptr, nullptr), "clfftBakePlan");
  } catch (...) {
    clfftDestroyPlan(&plan);  // a failed bake is not kept (nor leaked)
    throw;
  }
  plans_.emplace(key, Plan{queue, plan});
  return plan;
}

}  // namespace sinew::detail
