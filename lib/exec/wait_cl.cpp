// exec/wait_cl.cpp — OpenCL events, queues and callbacks under the wait policy.
#include "exec/wait_cl.hpp"

namespace sinew::detail {

bool EventCompletion::ended() { return detail::ended(event_); }

void wait_for(const cl::Event& event, WaitMode mode, bool nap) {
  EventCompletion c(event);
  wait_for(c, mode, nap);
}

void drain(cl::CommandQueue& queue, bool discrete, WaitMode mode, bool nap) {
  mode = resolve(mode, nap);
  if (discrete && mode != WaitMode::block) {
    // The marker completes once every command before it has (an in-order queue): no clFinish
    // after it, which costs each queue a driver call more (docs/decisions/034).
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

}  // namespace sinew::detail
