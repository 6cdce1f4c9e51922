// exec/replicas.hpp — the vectors a tree reads whole: one replica per place (ReplicaPlace: an
// OpenCL context, or a device of a context several discrete devices share), filled from the host
// before the first leaf, and re-synchronised when leaves wrote slices of the vector since
// (gathered into every replica: device-side copies within a context, through the host between
// contexts).
//
// A replica need not be a buffer of its own: a vector whose run has one partition holding every
// unit reads its slice (nothing to re-replicate, nothing held twice), and in the one context of zero-copy
// devices a written bound vector's replica may be the user's memory itself, which holds that
// context's slices already. A run split over processes (exec/spanning.hpp) re-synchronises
// through the host with every process's slices, and takes neither shortcut.
//
// Thread safety: sync() runs on the one thread that completes a barrier, every queue idle;
// upload() on each worker's thread before the first barrier; the rest before the run.
#pragma once

#include "exec/worker.hpp"

#include <map>
#include <set>
#include <utility>
#include <vector>

namespace sinew::detail {

class RunState;

// Where a run keeps one replica of each vector read whole: an OpenCL context, and within a
// context that several discrete devices share, each of those devices (each has memory of its own,
// and a buffer written by two devices at once has no defined contents: docs/decisions/174).
// Zero-copy devices' queues and a fission set's sub-devices share their context's host memory
// (device null).
using ReplicaPlace = std::pair<cl_context, cl_device_id>;
inline ReplicaPlace replica_place(const Worker& w) {
  return {w.context(), w.info().discrete ? w.cl_device() : nullptr};
}

class Replicas {
 public:
  explicit Replicas(RunState& run) : run_(run) {}
  virtual ~Replicas() = default;
  Replicas(const Replicas&) = delete;
  Replicas& operator=(const Replicas&) = delete;

  // Before any buffer: which replicas are a slice or the user's memory (once the run's
  // partitions and contexts are known).
  void plan();
  // One replica per place of every vector read whole (after the partitions' slices).
  void allocate();
  // Some vector is read whole: the workers meet after the replicas' upload.
  bool any() const { return any_; }
  // The first worker of each place that has partitions fills the place's replicas.
  void upload(Worker& w);
  // Gathers the slices of `v` written since its last synchronisation into every replica. Runs on
  // the last worker thread to arrive at a barrier, while the others wait with idle queues.
  virtual void sync(const VectorState* v);
  // The replica of `v` a kernel of `ps` reads whole: its place's, or the slice that holds it all.
  const cl::Buffer& of(const PartState& ps, const VectorState* v) const;
  // Writing a slice of `v` dirties its replicas (none where the replica is the slice itself).
  bool tracks_writes(const VectorState* v) const { return !in_slice_.count(v); }
  bool in_slice(const VectorState* v) const { return in_slice_.count(v) > 0; }
  // In `context`, the replica of `v` is the user's memory itself (the one context of zero-copy
  // devices, a written bound vector).
  bool in_user_memory(cl_context context, const VectorState* v) const {
    return context && context == host_context_ && in_user_.count(v);
  }
  bool any_in_user_memory() const { return !in_user_.empty(); }

 protected:
  // Whether a replica may be a slice or the user's memory: only in a run of one process (the
  // others' slices come in through the exchanger, into a replica of its own).
  virtual bool may_share_memory() const { return true; }
  RunState& run_;
  std::map<ReplicaPlace, std::map<const VectorState*, cl::Buffer>> whole_;  // per place
  std::map<const VectorState*, std::vector<unsigned char>> staging_;      // through the host

 private:
  void sync_through_user(const VectorUse& u);
  // Vectors read whole whose replica is the slice of the run's one partition (it holds every
  // unit): kernels read the slice itself, so nothing re-replicates them.
  std::set<const VectorState*> in_slice_;
  // Written bound vectors read whole whose replica in the one context of zero-copy devices (one
  // worker there) is the user's memory itself: the other contexts' slices are read straight into
  // it and written to their replicas from it.
  std::set<const VectorState*> in_user_;
  ReplicaPlace host_place_{nullptr, nullptr};  // that context's place
  cl_context host_context_ = nullptr;          // that context
  bool any_ = false;
};

}  // namespace sinew::detail
