// exec/values.hpp — results passed to kernels as arguments (sinew::value): where the partitions
// meet for them, and how each kernel gets its value.
//
// A kernel that takes a map_reduce's result needs every partition's value of it combined. Before
// such a kernel, where the value was produced since its kernels last met, the workers meet at a
// barrier: the last to arrive combines the partitions' values (and, split over processes, every
// process's, through the Exchanger), keeps the combined value for by-value parameters and writes
// it into each partition's result buffer on its device for pointer parameters. A run of one
// partition in one process does not meet for a pointer parameter: the reduction's own result
// buffer holds the combined value, and the kernel follows the reduction on the same in-order
// queue, so nothing waits for the host.
//
// Thread safety: meet_for_values runs on every worker's thread (each walks the same tree, so all
// meet at the same leaves); the combined values are written by the one thread that completes the
// barrier and read after it.
#pragma once

#include "exec/nodes/node_context.hpp"

namespace sinew::detail {

// Before leaf `n` runs on `w`: its values produced since they were last met are combined (every
// worker meets here); nothing happens for a leaf that takes none.
void meet_for_values(NodeContext& ctx, Worker& w, const NodeImpl& n);
// Whether `producer`'s value stays on the devices while the run goes: a run of one partition in
// one process, and only kernels read it, through pointers (Analysis::values_only_on_devices). Its
// map_reduce then reads it back once, when the run is over, and a loop's predicate barrier
// leaves it for then.
bool value_stays_on_devices(NodeContext& ctx, const NodeImpl& producer);
// Sets argument `i` of kernel `k` (a value of leaf `n`) for partition `ps`, once its values
// are met: the combined bytes for a by-value parameter, the partition's result buffer for a pointer.
void set_value_argument(NodeContext& ctx, PartState& ps, cl::Kernel& k, cl_uint i, const NodeImpl& n);

}  // namespace sinew::detail
