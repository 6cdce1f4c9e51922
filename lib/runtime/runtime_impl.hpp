// runtime/runtime_impl.hpp — the Runtime's state: its devices and the environment the executor
// borrows (programs, queues, buffers, threads), its knowledge base and planner (opened on first
// use), its store of learned state (schedule/learned.hpp), its prepared trees, and the request
// pipeline (runtime/request.hpp) that runs every request. A Cluster's rank runs its part through
// execute() with an exchanger, and keeps its rank shares in this runtime's store and knowledge base.
#pragma once

#include "exec/environment.hpp"
#include "exec/exchanger.hpp"
#include "runtime/prepared_trees.hpp"
#include "runtime/request.hpp"
#include "schedule/learned.hpp"
#include "schedule/planner.hpp"

#include <sinew/kb.hpp>
#include <sinew/runtime.hpp>

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

class RuntimeImpl {
 public:
  explicit RuntimeImpl(RuntimeOptions options);

  const RuntimeOptions& options() const { return options_; }
  const std::vector<DeviceInfo>& devices() const { return env_.infos; }
  Device* device(std::size_t index) { return env_.devices.at(index); }
  // The first GPU, else the first device.
  std::size_t default_device() const;

  std::future<Report> run(const Node& tree, std::vector<Binding> bindings, RunOptions options);
  // With an `exchanger`, one process's part of a larger run (exec/exchanger.hpp): `options` must
  // give the plan (config, plan or device), since a planned run might train.
  Report execute(const Node& tree, std::vector<Binding> bindings, RunOptions options, Exchanger* exchanger = nullptr);

  std::shared_ptr<PinnedBlock> allocate_pinned(std::size_t bytes);  // Runtime::pinned
  // Runtime::array: a resident array of this runtime.
  std::shared_ptr<ArrayState> make_array(std::size_t bytes, ElementType type, ArrayOptions options);
  // Every array it made still alive brought home and detached (sinew/array.hpp), after the
  // requests that use them.
  ~RuntimeImpl();

  // The knowledge base (RuntimeOptions::kb_path) and its planner, opened on first use.
  KnowledgeBase& knowledge_base();
  Planner& planner();
  LearnedStore& learned() { return learned_; }
  // A training or balancing line, unless quiet.
  void info(const std::string& line) const;

 private:
  void select_devices();
  void share_contexts();
  void configure_environment();
  bool is_pinned(const void* p, std::size_t bytes);
  void register_pinned(const std::shared_ptr<PinnedBlock>& block);
  // Validates the request now (errors before any device work), its arrays' turns taken.
  std::shared_ptr<Request> request(const Node& tree, std::vector<Binding> bindings, RunOptions options,
                                   Exchanger* exchanger);
  // Runs an admitted request in its arrays' turns; `tail`: a pool job that ends with it.
  Report run_request(Request& r, bool tail = false);

  RuntimeOptions options_;
  bool progress_ = true;  // training and balancing lines (not RuntimeOptions::quiet)
  ProgramCache programs_;
  std::vector<std::unique_ptr<Device>> all_;
  QueuePool queues_;
  BufferPool buffers_;
  FftPlans fft_;
  Environment env_;
  std::optional<Config> default_config_;
  LearnedStore learned_;  // before the planner, which holds its plan cache
  std::mutex planner_mutex_;
  std::unique_ptr<KnowledgeBase> kb_;
  std::unique_ptr<Planner> planner_;
  std::unique_ptr<PreparedTrees> prepared_;
  std::unique_ptr<RequestPipeline> pipeline_;
  std::mutex pinned_mutex_;
  std::vector<std::weak_ptr<PinnedBlock>> pinned_;
  std::mutex arrays_mutex_;
  std::vector<std::weak_ptr<ArrayState>> arrays_;
  ThreadPool threads_;  // last: its destructor finishes the requests still running
};

}  // namespace sinew::detail
